"""What a tool says about itself, read as a person would: its name to show, the annotations it declares
(hints, with the spec's defaults applied where it says nothing), the problems of its definition, and
its icon's data. Annotations are hints from the server, not guarantees. No Qt here.
"""

from __future__ import annotations

import base64
import binascii
import urllib.parse
from typing import Any

from ..protocol import apps
from .listing import REJECTED

HINTS_NOTE = "Annotations are hints from the server, not guarantees."
UNDECLARED = "may change things (not declared)"
UNDECLARED_NOTE = ("may change things (not declared): the server does not say whether this tool is read-only or "
                   "destructive. The specification's default is to assume it may destroy something, so calling it "
                   "asks first, as for a tool marked destructive.")
# (badge, annotation key, spec default)
HINTS = (("read-only", "readOnlyHint", False), ("destructive", "destructiveHint", True),
         ("idempotent", "idempotentHint", False), ("open-world", "openWorldHint", True))
ICON_DATA_LIMIT = 512 * 1024


def display_name(tool: dict[str, Any]) -> str:
    title = tool.get("title")
    if isinstance(title, str) and title.strip():
        return title
    ann = tool.get("annotations")
    title = ann.get("title") if isinstance(ann, dict) else None
    if isinstance(title, str) and title.strip():
        return title
    name = tool.get("name")
    return name if isinstance(name, str) and name else "(no name)"


def hints(tool: dict[str, Any]) -> dict[str, tuple[bool, bool]]:
    """annotation key -> (value with the spec's default applied, whether the server said so)."""
    ann = tool.get("annotations")
    ann = ann if isinstance(ann, dict) else {}
    out = {}
    for _badge, key, default in HINTS:
        value = ann.get(key)
        out[key] = (value, True) if isinstance(value, bool) else (default, False)
    return out


def may_destroy(tool: dict[str, Any]) -> bool:
    """Not read-only, and destructive as the server says or by the spec's default (it said nothing):
    the tools the default confirmation policy asks about, and the ones badged so."""
    h = hints(tool)
    return not h["readOnlyHint"][0] and h["destructiveHint"][0]


def lists(listing: Any, name: Any) -> bool:
    """Whether a server's tool listing has the tool `name` (still offered, or removed but still shown)."""
    return any(isinstance(t, dict) and t.get("name") == name for t in (*listing.items, *listing.vanished))


def badges(tool: dict[str, Any]) -> list[str]:
    """Annotation badges, the spec's defaults applied. A tool that may destroy says whether the server said
    so ("destructive") or said nothing ("may change things (not declared)"): both ask before a call."""
    h = hints(tool)
    read_only = h["readOnlyHint"][0]
    out = []
    if read_only:
        out.append("read-only")
    elif h["destructiveHint"][0]:  # only meaningful when not read-only
        out.append("destructive" if h["destructiveHint"][1] else UNDECLARED)
    if h["idempotentHint"][0]:
        out.append("idempotent")
    if h["openWorldHint"][0]:
        out.append("open-world")
    return out


def app_badges(tool: Any) -> list[str]:
    """"app" for a tool with an interactive view (MCP Apps), "app-only" for one a model never sees."""
    out = []
    if apps.has_app(tool):
        out.append("app")
    if apps.app_only(tool):
        out.append("app-only")
    return out


def app_summary(tool: Any) -> str | None:
    """One line on the tool's app, for its header (None: it has none)."""
    ui = apps.tool_ui(tool)
    if ui is None:
        return None
    parts = []
    if ui.resource_uri is not None:
        parts.append(f"App: {ui.resource_uri} (shown above the result when called)")
    if ui.visibility_declared and "model" not in ui.visibility:
        parts.append("app-only: a host's model never sees it; its app may call it")
    elif ui.visibility_declared and "app" not in ui.visibility:
        parts.append("apps may not call it")
    return " · ".join(parts) or None


def hints_tooltip(tool: dict[str, Any]) -> str:
    lines = [HINTS_NOTE]
    for badge, key, _default in HINTS:
        value, said = hints(tool)[key]
        lines.append(
            f"{badge}: {'yes' if value else 'no'}" + ("" if said else " (spec default, not set by the server)")
        )
    shown = badges(tool)
    if UNDECLARED in shown:
        lines.append(UNDECLARED_NOTE[0].upper() + UNDECLARED_NOTE[1:])
    elif not hints(tool)["readOnlyHint"][0] and "destructive" not in shown:
        lines.append("Not read-only: it may change things.")
    return "\n".join(lines)


def schema_problem(tool: dict[str, Any]) -> str | None:
    if "inputSchema" not in tool:
        return "no inputSchema"
    schema = tool["inputSchema"]
    if not isinstance(schema, dict):
        return "invalid inputSchema (not an object)"
    if schema.get("type") != "object":
        return 'invalid inputSchema (type is not "object")'
    return None


def flags(tool: Any, duplicates: set[str]) -> list[str]:
    """What is wrong with a tool's definition, in words (raw server text: make it visible before showing)."""
    if not isinstance(tool, dict):
        return ["not a tool object"]
    out = []
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        out.append("missing name")
    elif name in duplicates:
        out.append("duplicate name")
    if REJECTED in tool:  # set aside by the client (e.g. broken x-mcp-header annotations)
        out.append(f"not callable: {tool[REJECTED]}")
        return out
    problem = schema_problem(tool)
    if problem:
        out.append(problem)
    ui = apps.tool_ui(tool)
    if ui is not None:
        out.extend(ui.problems)
    return out


def decode_data_uri(src: str) -> tuple[bytes, str] | None:
    """(bytes, mime type) of a data: URI, or None if it is not one (or is too big or broken)."""
    if not isinstance(src, str) or not src.startswith("data:") or "," not in src:
        return None
    head, payload = src[5:].split(",", 1)
    if len(payload) > ICON_DATA_LIMIT * 4 // 3 + 16:
        return None
    parts = head.split(";")
    mime = parts[0] or "text/plain"
    try:
        if "base64" in parts[1:]:
            data = base64.b64decode(payload, validate=False)
        else:
            data = urllib.parse.unquote_to_bytes(payload)
    except (binascii.Error, ValueError):
        return None
    return data, mime
