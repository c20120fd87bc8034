"""Which leaf widget edits a value: `x-hint` > `format` > `enum` > `type`, and what
an empty editor and its help text say about the value (placeholder, constraints). No Qt.

The names returned here are keys of the widgets of `inspector.forms.registry.Registry`, which a
host can override per tool; this module stays Qt-free so that schema normalisation can name a
widget without loading one.
"""

from __future__ import annotations

import json
from typing import Any

# `x-hint` values understood here (anything else is ignored, and the usual rules apply).
HINTS = {
    "text": "text", "textarea": "textarea", "multiline": "textarea", "password": "password",
    "secret": "password", "date": "date", "date-time": "date-time", "datetime": "date-time",
    "time": "time", "email": "email", "uri": "uri", "url": "uri", "uuid": "uuid", "select": "select",
    "radio": "select", "checkbox": "checkbox", "number": "number", "integer": "integer",
}

# string formats with a fitting editor (placeholder, quick-fill button, checks)
FORMATS = {
    "date": "date", "date-time": "date-time", "time": "time", "email": "email", "idn-email": "email",
    "uri": "uri", "iri": "uri", "uri-reference": "uri", "iri-reference": "uri", "url": "uri",
    "uuid": "uuid", "ipv4": "ipv4", "ipv6": "ipv6", "hostname": "hostname", "idn-hostname": "hostname",
    "password": "password", "duration": "duration", "regex": "regex", "json-pointer": "json-pointer",
}

# placeholders shown in empty editors (examples take precedence)
PLACEHOLDERS = {
    "date": "YYYY-MM-DD", "date-time": "YYYY-MM-DDThh:mm:ssZ", "time": "hh:mm:ss", "email": "name@example.com",
    "uri": "https://…", "uuid": "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1", "hostname": "example.com", "duration": "P1DT2H (ISO 8601)", "regex": "regular expression",
    "json-pointer": "/path/to/value",
}

TEXTAREA_MIN_LENGTH = 256  # maxLength from which a string gets a multi-line editor


def choose_widget(schema: dict[str, Any], json_type: str) -> str:
    """The leaf widget for a scalar (or enum) schema of `json_type`."""
    hint = schema.get("x-hint")
    if isinstance(hint, str) and hint.lower() in HINTS:
        name = HINTS[hint.lower()]
        if _fits(name, json_type):
            return name
    if json_type == "string" or json_type == "enum":
        fmt = schema.get("format")
        if json_type == "string" and isinstance(fmt, str) and fmt in FORMATS:
            return FORMATS[fmt]
    if json_type == "enum":
        return "select"
    if json_type == "string":
        if schema.get("writeOnly") is True:
            return "password"
        media = schema.get("contentMediaType")
        if isinstance(media, str) and (media.startswith("text/") or media in (
                "application/json", "application/xml", "application/yaml", "application/javascript")):
            return "textarea"
        max_len = schema.get("maxLength")
        if isinstance(max_len, int) and not isinstance(max_len, bool) and max_len >= TEXTAREA_MIN_LENGTH:
            return "textarea"
        return "text"
    if json_type in ("number", "integer"):
        return json_type
    if json_type == "boolean":
        return "checkbox"
    if json_type == "null":
        return "null"
    return "text"


def _fits(widget: str, json_type: str) -> bool:
    if json_type == "enum":
        return widget == "select"
    if json_type == "string":
        return widget not in ("checkbox", "number", "integer", "select")
    if json_type in ("number", "integer"):
        return widget in ("number", "integer")
    if json_type == "boolean":
        return widget == "checkbox"
    return False


def placeholder(schema: Any, widget: str) -> str:
    """Placeholder text for an empty editor: the first example, else the format's pattern."""
    if isinstance(schema, dict):
        examples = schema.get("examples")
        if isinstance(examples, list) and examples:
            ex = examples[0]
            return f"e.g. {ex}" if isinstance(ex, str) else f"e.g. {_short(ex)}"
    return PLACEHOLDERS.get(widget, "")


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def constraints_text(schema: dict[str, Any], json_type: str) -> str:
    """A short human note of a scalar's constraints, e.g. '5 – 480, multiple of 5'."""
    parts: list[str] = []
    if json_type in ("number", "integer"):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        xlo, xhi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        if xlo is True and lo is not None:  # draft-04 booleans
            xlo, lo = lo, None
        if xhi is True and hi is not None:
            xhi, hi = hi, None
        low = f"≥ {lo}" if _n(lo) else f"> {xlo}" if _n(xlo) else ""
        high = f"≤ {hi}" if _n(hi) else f"< {xhi}" if _n(xhi) else ""
        if _n(lo) and _n(hi):
            parts.append(f"{lo} – {hi}")
        else:
            parts += [p for p in (low, high) if p]
        if _n(schema.get("multipleOf")):
            parts.append(f"multiple of {schema['multipleOf']}")
        if json_type == "integer" and parts:  # (the empty editor already says "whole number")
            parts.insert(0, "whole number")
    elif json_type == "string":
        lo, hi = schema.get("minLength"), schema.get("maxLength")
        if _n(lo) and _n(hi):
            parts.append(f"{lo}–{hi} characters")
        elif _n(lo) and lo:
            parts.append(f"at least {lo} character" + ("" if lo == 1 else "s"))
        elif _n(hi):
            parts.append(f"at most {hi} characters")
        if isinstance(schema.get("pattern"), str):
            parts.append(f"matches {schema['pattern']}")
        if isinstance(schema.get("format"), str):
            parts.append(schema["format"])
    return ", ".join(parts)


def _n(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
