"""Text hygiene for everything a server sends: visible bidi controls, masked secrets.

Server text is untrusted: widgets show it as plain text, and names
and titles go through `visible()` first so a right-to-left override cannot make
one tool look like another.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from ...secrets import MASK, is_secret_name, mask_env_value

__all__ = ["MASK", "is_secret_name", "masked", "plain_tooltip", "pretty_json", "visible", "visible_block"]


# Bidi embeddings/overrides/isolates, marks, and other invisible format characters.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2069\u061c\ufeff\u180e]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def visible(text: Any, limit: int = 500) -> str:
    """One line, control and bidi characters shown as ⟨U+XXXX⟩, cut at `limit`."""
    s = text if isinstance(text, str) else ("" if text is None else str(text))
    s = _INVISIBLE.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", s)
    s = _CONTROL.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩" if m.group() not in "\t" else " ", s)
    s = s.replace("\n", " ").replace("\r", " ")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def visible_block(text: Any, limit: int = 20000) -> str:
    """Multi-line text (descriptions, instructions) with bidi controls made visible."""
    s = text if isinstance(text, str) else ("" if text is None else str(text))
    s = _INVISIBLE.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", s)
    s = _CONTROL.sub(lambda m: "" if m.group() == "\r" else f"⟨U+{ord(m.group()):04X}⟩", s)
    return s if len(s) <= limit else s[: limit - 1] + "…"


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
