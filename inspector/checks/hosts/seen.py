"""What a host's model is shown: each tool as the host offers it — its final name (prefix, characters
replaced, cut), its description as cut, its input schema after the host's rewriting — beside what the
server sent, every difference named, and the problems that makes (a reason: blocked or degraded).

Pure: no IO. A fact a profile does not hold is not applied (an unknown is not a problem).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from .profile import Profile

BLOCKED, DEGRADED, WORKS = "blocked", "degraded", "works"
VERDICTS = (BLOCKED, DEGRADED, WORKS)  # worst first
COMBINATORS = ("anyOf", "oneOf", "allOf")
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
ONE_SCHEMA = ("items", "contains", "not", "if", "then", "else", "additionalProperties", "propertyNames",
              "unevaluatedProperties", "unevaluatedItems", "additionalItems")
MAX_DEPTH = 64
MAX_PATHS = 5  # paths named in one reason
# keywords that only annotate: a host dropping them changes nothing the model must respect
ANNOTATIONS = frozenset(("$schema", "$id", "$comment", "title", "examples", "example", "deprecated", "readOnly",
                         "writeOnly", "default"))


@dataclass(frozen=True)
class Reason:
    level: str  # blocked or degraded
    target: str  # server, tool:NAME, capability:NAME, transport
    message: str
    fix: str
    host_wide: bool = False  # it fails every request of the host, not only this tool

    def as_json(self) -> dict[str, Any]:
        return {"level": self.level, "target": self.target, "message": self.message, "fix": self.fix,
                **({"hostWide": True} if self.host_wide else {})}


@dataclass
class Seen:
    """One tool as a host's model receives it."""

    tool: dict[str, Any]
    name: str | None  # None: the host does not offer the tool at all
    description: str
    schema: Any
    changes: list[str] = field(default_factory=list)
    reasons: list[Reason] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return verdict(self.reasons)

    def as_json(self) -> dict[str, Any]:
        return {"sent": {"name": self.tool.get("name"), "description": self.tool.get("description"),
                         "inputSchema": self.tool.get("inputSchema")},
                "seen": None if self.name is None else {"name": self.name, "description": self.description,
                                                        "inputSchema": self.schema},
                "changes": self.changes, "verdict": self.verdict}


def verdict(reasons: list[Reason]) -> str:
    levels = {r.level for r in reasons}
    return BLOCKED if BLOCKED in levels else DEGRADED if DEGRADED in levels else WORKS


def server_token(server: str) -> str:
    """The server's name as hosts put it in a prefix: characters outside A-Z a-z 0-9 _ - become _."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", server) or "server"


def _allowed(pattern: str, char: str) -> bool:
    return re.fullmatch(pattern, "a" + char) is not None or re.fullmatch(pattern, "a" + char + "a") is not None


def _name(seen: Seen, profile: Profile, server: str) -> None:
    tool = str(seen.tool.get("name"))
    target = f"tool:{tool}"
    prefix = str(profile.get("naming.prefix") or "").replace("{server}", server_token(server))
    final = prefix + tool
    host = profile.name
    budget = profile.get("naming.budget")
    if isinstance(budget, int) and len(server) + len(tool) > budget:
        room = max(budget - len(server), 1)
        _too_long(seen, profile, target,
                  f"the server's name and the tool's name together are {len(server) + len(tool)} characters, "
                  f"over {host}'s {budget}", f"shorten the tool name to {room} characters or fewer (the server "
                  f"is configured as {server!r}; a shorter server name in the host's settings also helps)")
        if seen.name is None:
            return
    maximum = profile.get("naming.max_length")
    if isinstance(maximum, int) and len(final) > maximum:
        action = profile.get("naming.too_long")
        room = max(maximum - len(prefix), 1)
        where = f" (with the prefix {prefix!r})" if prefix else ""
        _too_long(seen, profile, target, f"the name the model would get, {final!r}{where}, is {len(final)} "
                  f"characters, over {host}'s {maximum}", f"shorten the tool name to {room} characters or fewer")
        if seen.name is None:
            return
        if action == "truncate":
            final = final[:maximum]
        elif action == "elide":  # the start and the end kept around '...'
            half = max((maximum - 3) // 2, 1)
            final = final[:half] + "..." + final[-half:]
        elif action == "hash":
            digest = hashlib.sha1(final.encode()).hexdigest()[:12]  # Codex: '_' and 12 hex digits
            final = final[:maximum - 13] + "_" + digest
    pattern = profile.get("naming.pattern")
    if isinstance(pattern, str) and re.fullmatch(pattern, final) is None:
        bad = sorted({c for c in final if not _allowed(pattern, c)})
        action = profile.get("naming.invalid")
        said = ", ".join(repr(c) for c in bad) or "its first character"
        message = f"the name {final!r} has {said}, which {host}'s model API refuses (pattern {pattern})"
        fix = "use only A-Z, a-z, 0-9, '_' and '-' in tool names, starting with a letter"
        if action == "replace":
            fixed = "".join("_" if c in bad else c for c in final)
            if re.fullmatch(pattern, fixed) is None and not fixed[:1].isalpha():
                fixed = "_" + fixed
            seen.changes.append(f"name: {final!r} becomes {fixed!r} (characters replaced)")
            seen.reasons.append(Reason(DEGRADED, target, message + f"; the host renames it {fixed!r}", fix))
            final = fixed
        elif action in ("reject-request", "omit-tool"):
            _refuse(seen, profile, target, message, fix, action)
            return
    if final != tool and not any(c.startswith("name:") for c in seen.changes):
        seen.changes.append(f"name: {tool!r} becomes {final!r}")
        if len(final) != len(prefix + tool):
            seen.reasons.append(Reason(DEGRADED, target, f"{host} shortens the name to {final!r}",
                                       "shorten the tool name so that the host keeps it whole"))
    seen.name = final


def _too_long(seen: Seen, profile: Profile, target: str, message: str, fix: str) -> None:
    action = profile.get("naming.too_long")
    if action in ("reject-request", "omit-tool"):
        _refuse(seen, profile, target, message, fix, action)


def _refuse(seen: Seen, profile: Profile, target: str, message: str, fix: str, action: str) -> None:
    if action == "reject-request":
        seen.reasons.append(Reason(BLOCKED, target, message + f": {profile.name}'s model requests fail, for every "
                                   "tool of every server", fix, host_wide=True))
        seen.changes.append("name: refused by the model API")
    else:
        seen.reasons.append(Reason(BLOCKED, target, message + f": {profile.name} does not offer the tool", fix))
        seen.changes.append("omitted: the host does not offer this tool")
    seen.name = None


def _description(seen: Seen, profile: Profile) -> None:
    text = seen.description
    limit = profile.get("limits.description")
    if not isinstance(limit, int) or len(text) <= limit:
        return
    target = f"tool:{seen.tool.get('name')}"
    if profile.get("limits.over_description") == "reject-request":
        seen.reasons.append(Reason(BLOCKED, target, f"the description is {len(text):,} characters, over "
                                   f"{profile.name}'s {limit:,}: requests fail", f"shorten it to {limit:,} "
                                   "characters", host_wide=True))
        return
    lost = text[limit:]
    seen.description = text[:limit]
    seen.changes.append(f"description: cut at {limit:,} of {len(text):,} characters")
    seen.reasons.append(Reason(DEGRADED, target, f"the description is {len(text):,} characters; {profile.name} "
                               f"keeps the first {limit:,}, and the model never reads the rest "
                               f"(from {lost[:40]!r}…)", f"put what matters in the first {limit:,} characters"))


def _walk(node: Any, path: str, depth: int, visit: Any) -> None:
    if depth > MAX_DEPTH or not isinstance(node, dict):
        return
    visit(node, path)
    for key in SCHEMA_MAPS:
        value = node.get(key)
        if isinstance(value, dict):
            for name, sub in value.items():
                _walk(sub, f"{path}.{key}.{name}", depth + 1, visit)
    for key in SCHEMA_LISTS:
        value = node.get(key)
        if isinstance(value, list):
            for i, sub in enumerate(value):
                _walk(sub, f"{path}.{key}[{i}]", depth + 1, visit)
    for key in ONE_SCHEMA:
        value = node.get(key)
        if isinstance(value, list):
            for i, sub in enumerate(value):
                _walk(sub, f"{path}.{key}[{i}]", depth + 1, visit)
        elif isinstance(value, dict):
            _walk(value, f"{path}.{key}", depth + 1, visit)


def _named(paths: list[str]) -> str:
    shown = ", ".join(paths[:MAX_PATHS])
    return shown + (f" and {len(paths) - MAX_PATHS} more" if len(paths) > MAX_PATHS else "")


def _schema(seen: Seen, profile: Profile) -> None:
    schema = seen.schema
    if not isinstance(schema, dict):
        return
    target = f"tool:{seen.tool.get('name')}"
    host = profile.name
    roots = [k for k in COMBINATORS if k in schema]
    if roots and profile.get("schema.root_combinators") == "reject-request":
        seen.reasons.append(Reason(BLOCKED, target, f"inputSchema has {', '.join(roots)} at its top level, which "
                                   f"{host}'s model API refuses: requests fail", "make the top level one object "
                                   "schema (type: object with properties) and move the alternatives into a "
                                   "property", host_wide=True))
    strip = profile.get("schema.strip") or []
    keywords = profile.get("schema.keywords")
    other = profile.get("schema.other")
    allowed = set(keywords) | {"properties"} if isinstance(keywords, list) and other in ("drop", "reject-request") \
        else None
    stripped: list[str] = []
    dropped: list[str] = []
    constraining: list[str] = []

    def visit(node: dict[str, Any], path: str) -> None:
        for key in list(node):
            where = f"{path}.{key}"
            if any(where.startswith(p + ".") for p in stripped + dropped):
                continue  # inside what is already gone
            if key in strip:
                stripped.append(where)
                if not (key == "additionalProperties" and node[key] is not False) and key != "$schema":
                    constraining.append(where)
            elif allowed is not None and key not in allowed:
                dropped.append(where)

    _walk(schema, "inputSchema", 0, visit)
    if not stripped and not dropped:
        return
    if other == "reject-request" and dropped:
        seen.reasons.append(Reason(BLOCKED, target, f"{host}'s model API refuses the keyword(s) at {_named(dropped)}",
                                   "use only the keywords the host accepts (docs/hosts.md)", host_wide=True))
        return
    rewritten = copy.deepcopy(schema)
    gone = set(stripped) | set(dropped)

    def cut(node: dict[str, Any], path: str) -> None:
        for key in list(node):
            if f"{path}.{key}" in gone:
                del node[key]

    _walk(rewritten, "inputSchema", 0, cut)
    seen.schema = rewritten
    for where in stripped:
        seen.changes.append(f"{where}: removed by the host")
    for where in dropped:
        seen.changes.append(f"{where}: dropped (not a keyword {host}'s model API takes)")
    lost = constraining + [d for d in dropped if d.rpartition(".")[2] not in ANNOTATIONS]
    if lost:
        seen.reasons.append(Reason(DEGRADED, target, f"{host} drops constraints the model then never sees: "
                                   f"{_named(lost)}", "say the constraint in the property's description too, or "
                                   "use a keyword the host keeps (docs/hosts.md lists them)"))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _features(seen: Seen, profile: Profile) -> None:
    tool = seen.tool
    target = f"tool:{tool.get('name')}"
    execution = _dict(tool.get("execution"))
    if execution.get("taskSupport") == "required" and profile.supports("features.tasks") is False:
        seen.reasons.append(Reason(BLOCKED, target, f"the tool runs only as a task, and {profile.name} does not "
                                   "do tasks", "let it run without a task too (taskSupport: optional)"))
    meta = _dict(tool.get("_meta"))
    ui = _dict(meta.get("ui"))
    if (ui.get("resourceUri") or meta.get("ui/resourceUri")) and profile.supports("features.apps") is False:
        seen.reasons.append(Reason(DEGRADED, target, f"the tool has an MCP App (a UI resource); {profile.name} "
                                   "shows no apps, only the tool's content", "make the text content stand on "
                                   "its own"))


def see(tool: dict[str, Any], profile: Profile, server: str) -> Seen:
    """`tool` (as listed) as `profile`'s host offers it to its model, when configured as `server`."""
    description = tool.get("description")
    seen = Seen(tool=tool, name=str(tool.get("name")), description=description if isinstance(description, str)
                else "", schema=copy.deepcopy(tool.get("inputSchema")))
    _name(seen, profile, server)
    if seen.name is not None:
        _description(seen, profile)
        _schema(seen, profile)
    _features(seen, profile)
    return seen


def side_by_side(seen: Seen) -> str:
    """The tool as sent and as seen, for a terminal: one block, changes marked with `~`."""
    sent = seen.tool
    lines = [f"  {sent.get('name')}  ->  {seen.name if seen.name is not None else '(not offered)'}"]
    lines += [f"    ~ {change}" for change in seen.changes] or ["    (as sent)"]
    if seen.name is not None and seen.schema != sent.get("inputSchema"):
        lines.append("    schema seen: " + json.dumps(seen.schema, ensure_ascii=False, sort_keys=True)[:400])
    return "\n".join(lines)
