"""Text on its way to a terminal: the one place that decides which characters a server may put there.

A server's words reach stdout and stderr through every headless command: names, descriptions, results,
errors, log lines. A terminal obeys some of the characters in them: C0 controls (ESC starts a sequence
that clears the screen or retitles the window), C1 controls (U+0080-U+009F: in an 8-bit terminal U+009B
is the same CSI as ESC [), and U+2028 / U+2029 break a line where no newline is. None of them reaches
the terminal as itself:

- `visible(text)`: text for people — C0 (but tab and newline), DEL, C1, U+2028 / U+2029 as escapes
  (`\\x1b`, `\\x7f`, `\\u009b`, `\\u2028`), bidirectional controls as `<U+202E>` so a name cannot be
  disguised, and the other characters a model reads and a person does not see (tag characters, variation
  selectors, zero-width characters, fillers: `inspector.invisible`) as marks such as `<U+200B>` or
  `<U+E0072…U+E0061 ×18 hidden text: "read ~/.ssh/id_rsa">`; `one_line` escapes tab and newline too, for a
  value printed on a line of its own layout.
- `json_safe(text)`: a JSON document as the terminal may see it — what `json.dumps(..., ensure_ascii=False)`
  leaves raw (DEL, C1, U+2028 / U+2029, bidirectional controls) as `\\uXXXX`, which reads back the same.
- `xml_text(text)`: text an XML 1.0 document can hold (JUnit): the C0 controls XML forbids, lone surrogates,
  C1 and U+2028 / U+2029 as escapes.
- `guarded()`: stdout and stderr of a headless command wrapped so that whatever a writer forgot is still
  escaped on the way out (JSON-valid escapes, so a JSON document stays the same document). A carriage return
  of our own layout (a progress line) is written with `carriage_return`.

Standard library only: the tap loads it before its server starts.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from . import invisible

BIDI = (0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069)
SEPARATORS = (0x2028, 0x2029)

_TEXT: dict[int, str] = {c: f"\\x{c:02x}" for c in range(32) if c not in (9, 10)}
_TEXT[0x7F] = "\\x7f"
_TEXT.update({c: f"\\u{c:04x}" for c in (*range(0x80, 0xA0), *SEPARATORS)})
_TEXT.update({c: f"<U+{c:04X}>" for c in BIDI})
_LINE = {**_TEXT, 9: "\\t", 10: "\\n", 13: "\\r"}

_TEXT_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINE_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# what json.dumps(ensure_ascii=False) leaves raw that a terminal obeys; in the guard also any C0 left raw
# (never there in JSON, so escaping it as \\u001b keeps a JSON document valid)
_JSON_RE = re.compile("[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_GUARD_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_XML_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def _u(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


# the hidden characters the escapes above leave alone (those are marked instead of escaped)
_MARKED = (invisible.TAG, invisible.VARIATION, invisible.ZERO_WIDTH, invisible.FILLER)


def _marked(text: str) -> str:
    """Tag characters, variation selectors, zero-width characters and fillers as `<U+…>` marks."""
    if not invisible.ANY.search(text):
        return text
    runs = [run for run in invisible.find(text) if run.kind in _MARKED]
    return invisible.marked(text, runs, brackets="<>") if runs else text


def _escaped(text: str) -> str:
    """The same characters as `\\uXXXX` escapes (a pair of surrogates beyond U+FFFF), valid inside JSON."""
    if not invisible.ANY.search(text):
        return text
    runs = [run for run in invisible.find(text) if run.kind in _MARKED]
    if not runs:
        return text
    parts, at = [], 0
    for run in runs:
        parts.append(text[at:run.start])
        parts.append("".join(_json_escape(c) for c in run.chars))
        at = run.end
    parts.append(text[at:])
    return "".join(parts)


def _json_escape(c: str) -> str:
    code = ord(c)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def visible(text: str) -> str:
    """Server text for a terminal, tabs and newlines kept: every other control made a visible escape, and
    every other hidden character a visible mark."""
    text = _marked(text)
    return text.translate(_TEXT) if _TEXT_RE.search(text) else text


def one_line(text: str) -> str:
    """Server text on a line of our layout: tabs, newlines and carriage returns escaped as well."""
    text = _marked(text)
    return text.translate(_LINE) if _LINE_RE.search(text) else text


def json_safe(text: str) -> str:
    """A JSON document (from json.dumps) with the characters a terminal obeys, and the hidden characters
    a person would not see, as `\\uXXXX` escapes (it reads back the same)."""
    return _escaped(_JSON_RE.sub(_u, text))


def dumps(value: Any, **options: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, **options)` safe for a terminal."""
    import json

    return json_safe(json.dumps(value, ensure_ascii=False, **options))


def _x(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_text(text: str) -> str:
    """Text an XML 1.0 document can hold and a terminal can show (JUnit reports)."""
    return _XML_RE.sub(_x, text)


class Guard:
    """A text stream that escapes, on the way out, every control character but tab and newline (as
    `\\uXXXX`, valid inside a JSON string and visible in text). Everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(_escaped(_GUARD_RE.sub(_u, text) if _GUARD_RE.search(text) else text))
        return len(text)

    def layout(self, text: str) -> None:
        """Our own layout, written as it is (a carriage return that redraws a progress line)."""
        self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def carriage_return(stream: TextIO) -> None:
    """Write a carriage return of our own layout to `stream`, guarded or not."""
    if isinstance(stream, Guard):
        stream.layout("\r")
    else:
        stream.write("\r")


@contextmanager
def guarded(stdout: bool = True) -> Iterator[None]:
    """sys.stderr (and sys.stdout unless it is a protocol pipe, as the tap's is) guarded for the block."""
    saved = sys.stdout, sys.stderr
    if stdout and not isinstance(sys.stdout, Guard):
        sys.stdout = Guard(sys.stdout)
    if not isinstance(sys.stderr, Guard):
        sys.stderr = Guard(sys.stderr)
    try:
        yield
    finally:
        for mine in (sys.stdout, sys.stderr):
            if isinstance(mine, Guard):
                mine.flush()
        sys.stdout, sys.stderr = saved
