"""Text hygiene for everything a server sends: hidden characters made visible, masked secrets.

Server text is untrusted: widgets show it as plain text, and names, titles, descriptions, instructions,
prompt and result texts go through `visible()` or `visible_block()` first, so that a right-to-left override
cannot make one tool look like another and the person sees the text the model reads: every invisible or
direction-changing character (`inspector.invisible`: tag characters, variation selectors, zero-width and
bidi controls, fillers, C0 / C1 controls, U+2028 / U+2029) as a mark such as `⟨U+200B⟩`, a run of tag
characters with the hidden text it spells; `hidden_tooltip()` says the same in words for a hover.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from ... import invisible
from ...secrets import MASK, is_secret_name, mask_env_value

__all__ = ["MASK", "hidden_tooltip", "is_secret_name", "masked", "plain_tooltip", "pretty_json", "visible",
           "visible_block"]

# Blank lines that push what follows out of sight are shown as one line that says how many.
BLANK_LINES_SHOWN = 3
_BLANKS = re.compile(rf"\n(?:[^\S\n]*\n){{{BLANK_LINES_SHOWN + 1},}}")  # white space of any kind, no-break too
# ... and a long run of spaces (of any kind: a no-break one does not wrap) as one mark that says how many
SPACES_SHOWN = 100  # (indentation of code and JSON in a result stays as it is)
_SPACES = re.compile(rf"[^\S\n]{{{SPACES_SHOWN},}}")


def visible(text: Any, limit: int = 500) -> str:
    """One line, every hidden character shown as a mark (⟨U+XXXX⟩), cut at `limit`."""
    s = text if isinstance(text, str) else ("" if text is None else str(text))
    s = invisible.marked(s)
    s = s.replace("\n", " ").replace("\r", " ").replace("\t", " ")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def visible_block(text: Any, limit: int = 20000) -> str:
    """Multi-line text (descriptions, instructions, results) with every hidden character shown as a mark,
    and a long run of blank lines shown as one line that says how many there were."""
    s = text if isinstance(text, str) else ("" if text is None else str(text))
    s = invisible.marked(s).replace("\r", "")
    if "\n" in s:
        s = _BLANKS.sub(_blanks, s)
    if "  " in s or not s.isascii():
        s = _SPACES.sub(lambda m: f"⟨{len(m.group())} spaces⟩", s)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _blanks(match: re.Match[str]) -> str:
    return f"\n\n⟨{match.group().count(chr(10)) - 1} blank lines⟩\n\n"


def hidden_tooltip(text: Any) -> str:
    """A tooltip (rich text, escaped) naming the hidden characters in `text` with their code points and the
    text they spell; "" when there are none."""
    return plain_tooltip(invisible.hover(text)) if isinstance(text, str) else ""


def plain_tooltip(text: str) -> str:
    """A tooltip that shows `text` literally: Qt renders tooltips that look like HTML as rich text,
    so untrusted text is escaped inside an explicit rich-text wrapper."""
    if not text:
        return ""
    return "<qt><p style='white-space:pre-wrap'>" + html.escape(text, quote=False) + "</p></qt>"


def masked(name: str, value: str) -> str:
    """A name's value as the window shows it: by name, by shape and by entropy (`inspector.secrets`)."""
    return mask_env_value(name, value)


def pretty_json(value: Any, limit: int = 400_000) -> str:
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "\n… (cut)"
