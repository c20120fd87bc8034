"""Pinning a server's definitions: a lock file of every tool, prompt, resource and resource template a
server lists (each definition with the sha256 of its canonical JSON), and what differs from it later.

A definition swapped after a person approved it (a "rug pull") is invisible within one session's marks;
the lock file remembers across sessions. `spyglass pin` writes one, `spyglass check --pinned FILE` and the
window compare a server with it. Qt-free.

    lock = make_lock(server_info, await collect(client, capabilities))
    changes = compare(read_lock(path), listings)      # [] when nothing changed
    findings = pin_findings(changes, path)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config import ConfigError, read_text
from ..session.listing import KINDS
from .rules import ERROR, Finding, Rule

FORMAT = "spyglass-pin"
VERSION = 1
MAX_BYTES = 64 * 1024 * 1024
# the lock file's sections, named as the listings' result keys: tools, resources, resourceTemplates, prompts
SECTIONS: dict[str, str] = {spec.key: kind for kind, spec in KINDS.items()}
TARGET_OF = {"tools": "tool", "resources": "resource", "resourceTemplates": "template", "prompts": "prompt"}

PIN_RULE = Rule("pin-changed", ERROR, "the server's definitions are those of its pin (no tool, prompt or "
                "resource added, removed or changed since it was pinned)",
                "https://modelcontextprotocol.io/specification/2025-11-25/server/tools#security-considerations")
PIN_RULES = {PIN_RULE.id: PIN_RULE}
DETAIL = 160  # characters of a value shown before and after a change


class PinFileError(ConfigError):
    kind = "pin"


def canonical(value: Any) -> str:
    """The one JSON text of a value that its hash is taken over: keys sorted, no spaces, UTF-8 as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: Any) -> str:
    return hashlib.sha256(canonical(value).encode("utf-8", "surrogatepass")).hexdigest()


async def collect(client: Any, capabilities: Any) -> dict[str, list[Any]]:
    """Every definition the server lists (every page followed), by section, for what it declared."""
    out: dict[str, list[Any]] = {}
    for spec in KINDS.values():
        if isinstance(capabilities, dict) and spec.capability not in capabilities:
            continue
        result = await client.list_all(spec.method, spec.key, refresh=True)
        items = result.get(spec.key)
        out[spec.key] = items if isinstance(items, list) else []
    return out


def _ident(section: str, item: Any) -> str | None:
    key = KINDS[SECTIONS[section]].ident
    value = item.get(key) if isinstance(item, dict) else None
    return value if isinstance(value, str) else None


def keyed(listings: Mapping[str, list[Any]]) -> dict[str, dict[str, Any]]:
    """Each section's definitions by name (tools, prompts) or URI (resources, templates); the first of a
    duplicated name is kept (a duplicate is `check`'s tool-name-duplicate)."""
    out: dict[str, dict[str, Any]] = {}
    for section, items in listings.items():
        if section not in SECTIONS:
            continue
        by: dict[str, Any] = {}
        for item in items:
            ident = _ident(section, item)
            if ident is not None:
                by.setdefault(ident, item)
        out[section] = by
    return out


def make_lock(server_info: Mapping[str, Any] | None, listings: Mapping[str, list[Any]], *,
              protocol: str | None = None, now: dt.datetime | None = None) -> dict[str, Any]:
    """The lock file's contents (write it with `dumps`)."""
    info = dict(server_info or {})
    server = {k: info[k] for k in ("name", "version", "title") if isinstance(info.get(k), str)}
    if protocol:
        server["protocolVersion"] = protocol
    when = (now or dt.datetime.now(dt.UTC)).replace(microsecond=0)
    definitions = {section: {ident: {"sha256": digest(item), "definition": item} for ident, item in by.items()}
                   for section, by in keyed(listings).items()}
    return {"format": FORMAT, "version": VERSION, "pinned": when.isoformat().replace("+00:00", "Z"),
            "server": server, "definitions": definitions}


def dumps(lock: Mapping[str, Any]) -> str:
    """A lock file's text: stable key order, one item a line, so two pins compare well in a diff."""
    return json.dumps(lock, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Pin:
    path: str
    server: dict[str, Any]
    pinned: str
    definitions: dict[str, dict[str, Any]]  # section -> ident -> definition


def read_lock(path: str | os.PathLike[str]) -> Pin:
    """A lock file written by `spyglass pin`; PinFileError says what is wrong with it."""
    path = os.fspath(path)
    text = read_text(path, PinFileError, MAX_BYTES, kind="pin file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PinFileError(f"{path}: not a pin file (invalid JSON at line {exc.lineno}, column {exc.colno}: "
                           f"{exc.msg})", file=path) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PinFileError(f'{path}: not a pin file (no "format": "{FORMAT}"; write one with spyglass pin)',
                           file=path)
    if data.get("version") != VERSION:
        raise PinFileError(f"{path}: pin file version {data.get('version')!r} is not one this Spyglass reads "
                           f"({VERSION})", file=path)
    raw = data.get("definitions")
    if not isinstance(raw, dict):
        raise PinFileError(f'{path}: "definitions" must be an object', file=path)
    definitions: dict[str, dict[str, Any]] = {}
    for section, items in raw.items():
        if section not in SECTIONS:
            raise PinFileError(f"{path}: unknown section {section!r} (one of {', '.join(SECTIONS)})", file=path)
        if not isinstance(items, dict):
            raise PinFileError(f"{path}: {section} must be an object", file=path)
        by: dict[str, Any] = {}
        for ident, entry in items.items():
            if not isinstance(entry, dict) or "definition" not in entry or not isinstance(entry.get("sha256"), str):
                raise PinFileError(f'{path}: {section} {ident!r} needs "definition" and "sha256"', file=path)
            if digest(entry["definition"]) != entry["sha256"]:
                raise PinFileError(f"{path}: {section} {ident!r}: its sha256 does not match its definition (the "
                                   "file was edited by hand); pin the server again", file=path)
            by[str(ident)] = entry["definition"]
        definitions[section] = by
    server = data.get("server")
    return Pin(path, dict(server) if isinstance(server, dict) else {}, str(data.get("pinned") or ""), definitions)


# --- comparing ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FieldChange:
    path: str  # a JSON pointer into the definition, "/description", "/inputSchema/properties/to"
    before: Any
    after: Any
    missing_before: bool = False
    missing_after: bool = False

    def describe(self) -> str:
        if self.missing_before:
            return f"{self.path} added: {short(self.after)}"
        if self.missing_after:
            return f"{self.path} removed (was {short(self.before)})"
        if isinstance(self.before, str) and isinstance(self.after, str):
            return f"{self.path}: {word_diff(self.before, self.after)}"
        return f"{self.path}: {short(self.before)} → {short(self.after)}"


@dataclass(frozen=True)
class Change:
    section: str  # tools, resources, resourceTemplates, prompts
    ident: str
    what: str  # added | removed | changed
    fields: tuple[FieldChange, ...] = field(default=())

    @property
    def target(self) -> str:
        return f"{TARGET_OF[self.section]}:{self.ident}"

    def describe(self) -> str:
        noun = {"tools": "tool", "resources": "resource", "resourceTemplates": "resource template",
                "prompts": "prompt"}[self.section]
        if self.what != "changed":
            return f"{noun} {self.ident!r} {self.what} since the pin"
        return f"{noun} {self.ident!r} changed since the pin: " + "; ".join(f.describe() for f in self.fields)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"section": self.section, "name": self.ident, "change": self.what}
        if self.fields:
            out["fields"] = [{"path": f.path, **({} if f.missing_before else {"before": f.before}),
                              **({} if f.missing_after else {"after": f.after})} for f in self.fields]
        return out


MAX_FIELDS = 6  # field changes named per definition (the rest counted)


def compare(pin: Pin, listings: Mapping[str, list[Any]]) -> list[Change]:
    """What differs between the pin and the server's listings now: every section the pin holds or the
    server lists, in the pin's order, then what was added."""
    now = keyed(listings)
    changes: list[Change] = []
    for section in SECTIONS:
        before = pin.definitions.get(section, {})
        after = now.get(section, {})
        for ident, old in before.items():
            if ident not in after:
                changes.append(Change(section, ident, "removed"))
            elif digest(old) != digest(after[ident]):
                changes.append(Change(section, ident, "changed", tuple(field_changes(old, after[ident]))))
        changes += [Change(section, ident, "added") for ident in after if ident not in before]
    return changes


def field_changes(before: Any, after: Any, path: str = "") -> list[FieldChange]:
    """The leaves that differ between two JSON values, as JSON pointers (at most MAX_FIELDS, then one
    entry that counts the rest)."""
    out: list[FieldChange] = []
    _walk(before, after, path, out)
    if len(out) > MAX_FIELDS:
        rest = len(out) - MAX_FIELDS
        out = out[:MAX_FIELDS] + [FieldChange("…", f"{rest} more", f"{rest} more")]
    return out


def _walk(a: Any, b: Any, path: str, out: list[FieldChange]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            sub = f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"
            if key not in b:
                out.append(FieldChange(sub, a[key], None, missing_after=True))
            elif key not in a:
                out.append(FieldChange(sub, None, b[key], missing_before=True))
            elif canonical(a[key]) != canonical(b[key]):
                _walk(a[key], b[key], sub, out)
        return
    out.append(FieldChange(path or "/", a, b))


def short(value: Any, limit: int = DETAIL) -> str:
    text = value if isinstance(value, str) else canonical(value)
    text = repr(text) if isinstance(value, str) else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def word_diff(before: str, after: str, context: int = 30) -> str:
    """A one-line diff of two texts: what stayed around the change, `[-removed-]` and `{+added+}`."""
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    end = 0
    while end < min(len(before), len(after)) - start and before[-1 - end] == after[-1 - end]:
        end += 1
    removed = before[start: len(before) - end]
    added = after[start: len(after) - end]
    head = before[max(0, start - context): start]
    tail = before[len(before) - end: len(before) - end + context] if end else ""
    lead = "…" if start > context else ""
    trail = "…" if end > context else ""
    parts = [lead, head]
    if removed:
        parts.append(f"[-{_clip(removed)}-]")
    if added:
        parts.append(f"{{+{_clip(added)}+}}")
    parts += [tail, trail]
    return repr("".join(parts))


def _clip(text: str, limit: int = DETAIL) -> str:
    return text if len(text) <= limit else text[: limit // 2] + " … " + text[-limit // 2:]


def pin_findings(changes: list[Change], pin: Pin) -> list[Finding]:
    """One error finding per definition that differs from the pin."""
    when = f" (pinned {pin.pinned})" if pin.pinned else ""
    return [Finding(PIN_RULE.id, PIN_RULE.severity, c.target, c.describe() + when, PIN_RULE.spec) for c in changes]


# --- a live session against its pin (the window) ----------------------------------------------------

class PinWatch:
    """A connected session compared with the pin file its definition names (`ServerSpec.pin`), whenever a
    listing arrives: `findings` (pin-changed errors, or one warning when the file cannot be read) and
    `changes` for the sidebar's mark. Nothing until every listing the server offers has been read."""

    def __init__(self) -> None:
        self.changes: list[Change] = []
        self.findings: list[Finding] = []
        self.compared = False  # every listing read and compared with the pin
        self._pin: Pin | None = None
        self._path: str | None = None

    def reset(self) -> None:
        self.changes, self.findings, self._pin, self._path = [], [], None, None
        self.compared = False

    def update(self, path: str | None, capabilities: Any, listings: Mapping[str, Any]) -> bool:
        """Compare again; `listings` maps a kind ("tools", "templates"…) to its `session.listing.Listing`.
        Whether anything shown changed."""
        before = (self.changes, self.findings)
        if not path:
            self.reset()
            return before != ([], [])
        if path != self._path:
            self._path, self._pin = path, None
            try:
                self._pin = read_lock(os.path.expanduser(path))
            except PinFileError as exc:
                self.changes = []
                self.findings = [Finding(PIN_RULE.id, "warning", "server", f"the pin is not checked: {exc.message}",
                                         PIN_RULE.spec)]
                return before != (self.changes, self.findings)
        if self._pin is None:
            return False
        now: dict[str, list[Any]] = {}
        for kind, spec in KINDS.items():
            offered = not isinstance(capabilities, dict) or spec.capability in capabilities
            listing = listings.get(kind)
            if offered and (listing is None or not listing.loaded or listing.error):
                return False  # not read yet (or not readable): no verdict
            now[spec.key] = list(listing.items) if offered and listing is not None else []
        self.changes = compare(self._pin, now)
        self.findings = pin_findings(self.changes, self._pin)
        self.compared = True
        return before != (self.changes, self.findings)

    def tooltip(self, limit: int = 8) -> str:
        """The changes, a line each, for the sidebar's mark."""
        lines = [c.describe() for c in self.changes[:limit]]
        if len(self.changes) > limit:
            lines.append(f"… and {len(self.changes) - limit} more (the Check tab)")
        return "\n".join(lines)
