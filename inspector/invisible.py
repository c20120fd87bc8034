"""Characters a model reads and a person does not see: the one place that finds them.

A description can carry a whole sentence no one sees: Unicode tag characters (U+E0000-U+E007F) spell
ASCII invisibly ("read ~/.ssh/id_rsa"), runs of variation selectors encode bytes, zero-width and bidi
controls hide or reorder words, fillers (U+00AD, U+3164, U+115F, U+1160, U+FFA0) take no room, and C0 / C1
controls and U+2028 / U+2029 reach terminals and line breaking. `find(text)` returns each run of them,
by kind, with what it spells when it spells something (`Run.decoded`); `marked(text)` is the text with
each run replaced by a visible mark (`⟨U+200B⟩`, `⟨U+E0072…U+E0073 ×115 hidden text: "read …"⟩`);
`hover(text)` is the words a tooltip shows for them.

Not everything invisible is hidden: emoji sequences use ZWJ and U+FE0F, flags of subdivisions use tag
characters, Persian and Indic scripts use ZWNJ / ZWJ between letters, right-to-left text uses RLM / LRM,
and CJK text uses one ideographic variation selector after an ideograph. Those are left alone, so that the
window shows an emoji as an emoji and `spyglass check` does not call it hidden text.

Standard library only (the terminal guard and the window both use it).
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

TAG, VARIATION, ZERO_WIDTH, BIDI, FILLER, CONTROL, SEPARATOR = (
    "tag", "variation", "zero-width", "bidi", "filler", "control", "separator")
KINDS = {
    TAG: "Unicode tag characters",
    VARIATION: "variation selectors",
    ZERO_WIDTH: "zero-width characters",
    BIDI: "bidirectional controls",
    FILLER: "invisible fillers",
    CONTROL: "control characters",
    SEPARATOR: "line or paragraph separators",
}
# what each code point is called, for the hover (the others by their Unicode name)
SHORT = {0x200B: "ZWSP", 0x200C: "ZWNJ", 0x200D: "ZWJ", 0x2060: "WJ", 0xFEFF: "BOM", 0x202A: "LRE",
         0x202B: "RLE", 0x202C: "PDF", 0x202D: "LRO", 0x202E: "RLO", 0x2066: "LRI", 0x2067: "RLI",
         0x2068: "FSI", 0x2069: "PDI", 0x200E: "LRM", 0x200F: "RLM", 0x061C: "ALM", 0x00AD: "SHY",
         0x2028: "LSEP", 0x2029: "PSEP"}

_ZERO_WIDTH = (0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF, 0x180E)
_BIDI = (0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C)
_FILLER = (0x00AD, 0x3164, 0x115F, 0x1160, 0xFFA0)

_CLASS = ("\U000e0000-\U000e007f\ufe00-\ufe0f\U000e0100-\U000e01ef"
          "\u200b-\u200f\u2060-\u2064\ufeff\u180e\u202a-\u202e\u2066-\u2069\u061c"
          "\u00ad\u3164\u115f\u1160\uffa0"
          "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029")
ANY = re.compile(f"[{_CLASS}]")  # a quick test: does the text hold any of them at all
_RUNS = re.compile(f"[{_CLASS}]+")
DECODED_MAX = 2000  # characters of hidden text spelled out in a mark


def kind_of(code: int) -> str | None:
    """The kind of hidden character `code` is, or None."""
    if 0xE0000 <= code <= 0xE007F:
        return TAG
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        return VARIATION
    if code in _ZERO_WIDTH:
        return ZERO_WIDTH
    if code in _BIDI:
        return BIDI
    if code in _FILLER:
        return FILLER
    if code in (0x2028, 0x2029):
        return SEPARATOR
    if (code < 0x20 and code not in (9, 10, 13)) or 0x7F <= code <= 0x9F:
        return CONTROL
    return None


class Run(NamedTuple):  # (not a dataclass: the tap, which imports this through the terminal guard, starts lean)
    """Consecutive hidden characters of one kind: `text[start:end]`."""

    start: int
    end: int
    kind: str
    chars: str

    @property
    def decoded(self) -> str:
        """What the run spells: tag characters as the ASCII they stand for, variation selectors as the
        bytes they encode when those are UTF-8 text; "" when it spells nothing."""
        if self.kind == TAG:
            return decode_tags(self.chars)
        if self.kind == VARIATION and len(self.chars) > 1:
            return decode_variation(self.chars)
        return ""

    def code_points(self) -> str:
        """`U+200B`, `U+E0072…U+E0073` for a longer run (first and last)."""
        first, last = ord(self.chars[0]), ord(self.chars[-1])
        return f"U+{first:04X}" if len(self.chars) == 1 else f"U+{first:04X}…U+{last:04X}"

    def mark(self, brackets: str = "⟨⟩") -> str:
        """The run as the window (and, with `brackets="<>"`, the terminal) shows it."""
        count = f" ×{len(self.chars)}" if len(self.chars) > 1 else ""
        decoded = self.decoded
        spelled = f' hidden text: "{_clip(decoded)}"' if decoded else ""
        return f"{brackets[0]}{self.code_points()}{count}{spelled}{brackets[1]}"

    def describe(self) -> str:
        """One line for a tooltip or a finding: how many, which, and what they spell."""
        n = len(self.chars)
        names = ", ".join(dict.fromkeys(_name(c) for c in self.chars[:8]))
        if len(set(self.chars)) > 8:
            names += ", …"
        what = KINDS[self.kind] if n > 1 else KINDS[self.kind][:-1]
        article = "an" if what[0] in "aeiou" else "a"
        if n > 1:
            out = f"{n} {what} ({self.code_points()}: {names})"
        elif names == self.code_points():
            out = f"{article} {what} ({names})"
        else:
            out = f"{article} {what} ({self.code_points()} {names})"
        decoded = self.decoded
        return f'{out} spelling "{_clip(decoded)}"' if decoded else out


def find(text: str) -> list[Run]:
    """Every run of hidden characters in `text`, in order; emoji, flag, joiner and RTL-mark uses left out."""
    if not ANY.search(text):
        return []
    out: list[Run] = []
    for match in _RUNS.finditer(text):
        start = match.start()
        chars = match.group()
        i = 0
        while i < len(chars):
            kind = kind_of(ord(chars[i]))
            j = i + 1
            while j < len(chars) and kind_of(ord(chars[j])) == kind:
                j += 1
            run = Run(start + i, start + j, kind or CONTROL, chars[i:j])
            if not _benign(text, run):
                out.append(run)
            i = j
    return out


def decode_tags(chars: str) -> str:
    """The ASCII that tag characters stand for (U+E0020-U+E007E); the language tag and cancel tag dropped."""
    return "".join(chr(ord(c) - 0xE0000) for c in chars if 0xE0020 <= ord(c) <= 0xE007E)


def decode_variation(chars: str) -> str:
    """Bytes encoded as variation selectors (VS1-VS16 are 0-15, VS17-VS256 16-255), read as UTF-8; "" when
    they are not printable text."""
    data = bytearray()
    for c in chars:
        code = ord(c)
        data.append(code - 0xFE00 if code <= 0xFE0F else code - 0xE0100 + 16)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return text if text.isprintable() else ""


def marked(text: str, runs: list[Run] | None = None, brackets: str = "⟨⟩") -> str:
    """`text` with each run of hidden characters replaced by its visible mark (everything else kept)."""
    runs = find(text) if runs is None else runs
    if not runs:
        return text
    parts: list[str] = []
    at = 0
    for run in runs:
        parts.append(text[at:run.start])
        parts.append(run.mark(brackets))
        at = run.end
    parts.append(text[at:])
    return "".join(parts)


def hover(text: str, limit: int = 12) -> str:
    """What a tooltip says of the hidden characters in `text` ("" when there are none)."""
    runs = find(text)
    if not runs:
        return ""
    lines = [f"Hidden from view, read by a model: {len(runs)} run{'s' if len(runs) > 1 else ''} of invisible "
             "characters"]
    lines += [f"• {run.describe()}" for run in runs[:limit]]
    if len(runs) > limit:
        lines.append(f"• … and {len(runs) - limit} more")
    return "\n".join(lines)


def _name(c: str) -> str:
    code = ord(c)
    if code in SHORT:
        return SHORT[code]
    if 0xE0020 <= code <= 0xE007E:
        return f"TAG {chr(code - 0xE0000)!r}"
    return unicodedata.name(c, f"U+{code:04X}")


def _clip(text: str) -> str:
    return text if len(text) <= DECODED_MAX else text[:DECODED_MAX - 1] + "…"


def _benign(text: str, run: Run) -> bool:
    """A use of invisible characters that writing systems and emoji need (the module's docstring)."""
    before = text[run.start - 1] if run.start else ""
    after = text[run.end] if run.end < len(text) else ""
    kind, n = run.kind, len(run.chars)
    if kind == TAG:  # a subdivision flag: U+1F3F4, tag letters, CANCEL TAG
        return before == "\U0001f3f4" and run.chars[-1] == "\U000e007f" and n <= 8
    if n != 1 or not before:
        return False
    code = ord(run.chars)
    if kind == VARIATION:
        if code in (0xFE0E, 0xFE0F):  # text or emoji presentation of a symbol, or a keycap
            return before in "#*0123456789" or (ord(before) >= 0xA9 and unicodedata.category(before)[0] not in "LZC")
        if code >= 0xE0100:  # an ideographic variant
            return unicodedata.category(before) == "Lo" and 0x3400 <= ord(before) <= 0x3134F
        return False
    if kind == ZERO_WIDTH and code in (0x200C, 0x200D) and after:
        if code == 0x200D and _emoji(before) and _emoji(after):
            return True
        return _script_letter(before) and _script_letter(after)
    if kind == BIDI and code in (0x200E, 0x200F, 0x061C):  # a mark beside right-to-left text
        return any(c and unicodedata.bidirectional(c) in ("R", "AL", "AN") for c in (before, after))
    return False


def _emoji(c: str) -> bool:
    return c == "\ufe0f" or (ord(c) >= 0x2000 and unicodedata.category(c) in ("So", "Sk"))


def _script_letter(c: str) -> bool:
    """A letter or mark of a script that joins (Hebrew onwards: Arabic, Persian, the Indic scripts…)."""
    return ord(c) >= 0x0590 and unicodedata.category(c)[0] in "LM"
