"""What a person pastes into the Add server dialog, read as a server: a command line as a shell splits it
(quotes, and leading `NAME=value` assignments that become the environment), a URL (an HTTP server), or a
server entry copied from a host's config — Claude Desktop or Cursor `{"command", "args", "env"}`, VS Code
`{"type": "stdio" | "http", ...}`, bare, under its `"name": {...}`, or inside `mcpServers` / `servers`. The
JSON is read by the importers' own parser (`preview_text`), never a second one."""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from ..config import ServerSpec
from ._model import ImportFileError
from ._preview import preview_text

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_URL = re.compile(r"https?://\S+", re.IGNORECASE)
_ENTRY_KEYS = {"command", "url", "serverUrl", "type"}
_UNNAMED = "server"  # the key a bare entry is read under; the server is then named by what it reports


class PasteError(ValueError):
    """Text that reads as no server; the message says why, for the dialog to show."""


@dataclass
class Pasted:
    spec: ServerSpec
    kind: str                 # "command", "url" or "json"
    named: bool = False       # the text gave the server a name (else: the name the server reports)
    mode: str | None = None   # a protocol mode the entry asks for
    secret_marks: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)  # what the reader noticed (placeholders, other servers)


def looks_pasted(text: str) -> bool:
    """Whether the Command field holds more than a command: words, quotes, a URL or JSON (a path that
    exists, spaces and all, is a command)."""
    t = text.strip()
    if not t or os.path.exists(t):
        return False
    return t.startswith(("{", "[", '"')) or bool(_URL.fullmatch(t)) or any(c.isspace() for c in t) \
        or bool(_ASSIGNMENT.match(t)) or "'" in t


def command_line(text: str) -> tuple[list[str], dict[str, str]]:
    """A command line split as a shell does: the words, and the `NAME=value` assignments before the command
    (an `env` in front of them is the shell's way to write the same)."""
    try:
        words = shlex.split(text, comments=False, posix=True)
    except ValueError as exc:
        raise PasteError(f"the command line is not quoted correctly: {exc}") from None
    if words[:1] == ["env"] and len(words) > 1 and _ASSIGNMENT.match(words[1]):
        words = words[1:]
    env: dict[str, str] = {}
    while words and _ASSIGNMENT.match(words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    if not words:
        raise PasteError("the command line sets variables but names no command")
    return words, env


def read_pasted(text: str) -> Pasted:
    """The server `text` describes; PasteError says why it describes none."""
    t = text.strip()
    if not t:
        raise PasteError("nothing was pasted")
    if t.startswith(("{", "[", '"')):
        return _from_json(t)
    if _URL.fullmatch(t):
        return Pasted(ServerSpec(name="", url=t), "url")
    words, env = command_line(t)
    return Pasted(ServerSpec(name="", command=words, env=env, transport="stdio"), "command")


def _from_json(text: str) -> Pasted:
    data: Any = None
    # as copied from a config file: an object, or one `"name": {...}` member of one (a trailing comma too)
    for candidate in (text, "{" + text.rstrip().rstrip(",") + "}"):
        try:
            data = json.loads(candidate)
            break
        except ValueError:
            continue
    else:
        raise PasteError("the pasted text is not JSON: paste a server's entry from a host's config, "
                         "a command line or a URL")
    if not isinstance(data, dict):
        raise PasteError("the pasted JSON is not an object with a server in it")
    wrapped, named = _wrap(data)
    try:
        preview = preview_text(json.dumps(wrapped), "<pasted text>")
    except ImportFileError as exc:
        raise PasteError(exc.message.removeprefix("<pasted text>: ")) from None
    entry = preview.entries[0]
    if not entry.importable or entry.spec is None:
        raise PasteError(entry.error or f"the server {entry.name!r} cannot be used")
    spec = entry.spec
    if not named:
        spec.name = ""
    notes = list(preview.warnings) + list(entry.warnings)
    if entry.placeholders:
        notes.append("it asks for " + ", ".join(p.token for p in entry.placeholders)
                     + ": fill them in (File → Import servers… asks for them)")
    if len(preview.entries) > 1:
        notes.append(f"the text holds {len(preview.entries)} servers: the first is filled in "
                     "(File → Import servers… takes them all)")
    return Pasted(spec, "json", named=named, mode=entry.mode, secret_marks=set(entry.secret_marks), notes=notes)


def _wrap(data: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The pasted object as a config file the importers read, and whether it named its server."""
    if any(k in data for k in ("mcpServers", "servers", "mcp")):
        return data, True
    if data.keys() & _ENTRY_KEYS:
        given = data.get("name")
        key = given.strip() if isinstance(given, str) else ""
        named = bool(key)
        key = key or _UNNAMED
        return ({"servers" if "type" in data else "mcpServers": {key: data}}, named)
    members = [(k, v) for k, v in data.items() if isinstance(v, dict) and v.keys() & _ENTRY_KEYS]
    if members:
        key, entry = members[0]
        return ({"servers" if "type" in entry else "mcpServers": {key: entry}}, True)
    raise PasteError('the pasted JSON holds no server: expected "command" or "url" (a server\'s entry), '
                     'or "mcpServers" / "servers" around one')
