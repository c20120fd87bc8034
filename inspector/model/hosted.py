"""The tools as a host would offer them to its model, for the playground and Tool choice: each tool
renamed, its description cut and its schema rewritten as the host's profile says (inspector.checks.hosts),
the tools the host would not offer left out, and a cap on how many it offers applied — so a request is
tried with what that host's model would really be shown. The server's own name stays on each spec
(`ToolSpec.tool`): a call still reaches the tool the server listed."""

from __future__ import annotations

from typing import Any

from ..checks.hosts.profile import Profile
from ..checks.hosts.seen import see
from ..protocol.apps import app_only
from .types import ToolSpec, offered_name, tool_specs


def host_tool_specs(servers: dict[str, tuple[str, list[dict[str, Any]]]], profile: Profile | None,
                    overrides: dict[str, str] | None = None) -> tuple[list[ToolSpec], list[str]]:
    """`servers` maps a server's id to its name as the host is configured with it and its tools. Without a
    profile, the tools as listed (`tool_specs`). Returns the specs and what was changed or left out, in
    words."""
    if profile is None:
        return tool_specs({sid: tools for sid, (_name, tools) in servers.items()}, overrides), []
    out: list[ToolSpec] = []
    notes: list[str] = []
    taken: set[str] = set()
    cap = profile.get("limits.tools")
    for sid, (server, tools) in servers.items():
        for tool in tools:
            name = tool.get("name")
            if not isinstance(name, str) or not name or app_only(tool):
                continue
            description = (overrides or {}).get(name)
            seen = see({**tool, "description": description} if description is not None else tool, profile, server)
            if seen.name is None:
                notes.append(f"{name}: not offered by {profile.name}")
                continue
            if isinstance(cap, int) and len(out) >= cap:
                notes.append(f"{name}: past {profile.name}'s {cap} tools")
                continue
            offered = offered_name(seen.name, sid, taken)
            taken.add(offered)
            schema = seen.schema if isinstance(seen.schema, dict) else {"type": "object"}
            out.append(ToolSpec(offered, seen.description, schema, name, sid, tool))
            notes += [f"{name}: {change}" for change in seen.changes if not change.startswith("name:")]
    return out, notes
