"""A verdict per host: works, degraded (what is lost) or blocked (what fails), each reason naming the tool,
listing or capability and the fix. From the server's listings (its tools as each host shows them:
`seen.see`) and what its calls were seen to need (`observe.Observed`). Pure: no IO.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .observe import Observed
from .profile import Profile
from .seen import BLOCKED, DEGRADED, VERDICTS, Reason, Seen, see, verdict

KIND_WORDS = {"image": "an image block", "audio": "an audio block", "resource_link": "a resource link",
              "resource": "an embedded resource", "structured": "structuredContent", "text": "a text block"}
ASK_WORDS = {"elicitation_form": "asked the user a question (form elicitation)",
             "elicitation_url": "sent the user to a URL (URL elicitation)",
             "sampling": "asked the host's model for a completion (sampling)",
             "roots": "asked for the user's folders (roots)"}
ASK_FIX = {"elicitation_form": "take the answer as an argument of the tool, and ask only when the client "
                               "declares the elicitation capability",
           "elicitation_url": "give the URL in the tool's text result when the client does not declare URL "
                              "elicitation",
           "sampling": "do the work in the server, or only sample when the client declares sampling",
           "roots": "take the folder as an argument or a setting when the client declares no roots"}
TOKENS_PER_BYTE = 0.25  # the check's rule of thumb (docs/check.md#the-rules)


@dataclass
class Server:
    """What is judged: one server as a check saw it."""

    name: str  # its name in the host's configuration
    transport: str  # stdio, http or sse
    protocol: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    resources: int = 0
    templates: int = 0
    prompts: int = 0
    instructions: bool = False
    observed: Observed = field(default_factory=Observed)


@dataclass
class HostVerdict:
    profile: Profile
    reasons: list[Reason]
    tools: dict[str, Seen]

    @property
    def verdict(self) -> str:
        return verdict(self.reasons)

    def tool_verdict(self, name: str) -> tuple[str, list[Reason]]:
        """A tool's own verdict: its reasons and those that fail the whole host."""
        mine = [r for r in self.reasons if r.target == f"tool:{name}" or r.host_wide]
        return verdict(mine), mine

    def as_json(self, show_tools: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.profile.name, "version": self.profile.version,
                               "verdict": self.verdict, "reasons": [r.as_json() for r in self.reasons],
                               "tools": {n: self.tool_verdict(n)[0] for n in self.tools}}
        if show_tools:
            out["seen"] = {n: s.as_json() for n, s in self.tools.items()}
        return out


def _level(reasons: list[Reason]) -> list[Reason]:
    order = {level: i for i, level in enumerate(VERDICTS)}
    return sorted(reasons, key=lambda r: (order[r.level], r.target))


def _server_reasons(server: Server, profile: Profile) -> list[Reason]:
    host = profile.name
    out: list[Reason] = []
    transports = profile.get("protocol.transports")
    if isinstance(transports, list) and server.transport not in transports:
        fix = ("serve it over Streamable HTTP as well (a URL the host can reach)" if server.transport == "stdio"
               else "offer it as a command the host can run (stdio), or through a local bridge")
        out.append(Reason(BLOCKED, "transport", f"the server is reached over {server.transport}; {host} connects "
                          f"only over {', '.join(transports)}", fix))
    cap = profile.get("limits.tools")
    if isinstance(cap, int) and len(server.tools) > cap:
        names = [str(t.get("name")) for t in server.tools[cap:]]
        if profile.get("limits.over_tools") == "reject-request":
            out.append(Reason(BLOCKED, "list:tools", f"the server lists {len(server.tools)} tools, over {host}'s "
                              f"{cap} for all servers together: requests fail", f"offer {cap} tools or fewer "
                              "(a smaller default set, the rest behind a setting)", host_wide=True))
        else:
            out.append(Reason(DEGRADED, "list:tools", f"the server lists {len(server.tools)} tools; {host} offers "
                              f"its model {cap} in all, so some ({', '.join(names[:5])}"
                              f"{'…' if len(names) > 5 else ''}) are left out", f"offer {cap} tools or fewer"))
    for count, key, what in ((server.resources, "features.resources", "resources"),
                             (server.prompts, "features.prompts", "prompts")):
        if count and profile.supports(key) is False:
            said = what[:-1] if count == 1 else what
            out.append(Reason(DEGRADED, f"capability:{what}", f"the server offers {count} {said}; {host} does not "
                              f"use {what}, so neither the user nor the model reaches them",
                              f"offer what matters in the {what} through a tool too"))
    if server.templates and (profile.supports("features.resource_templates") is False
                             or profile.supports("features.resources") is False):
        plural = "s" if server.templates != 1 else ""
        out.append(Reason(DEGRADED, "capability:resource_templates", f"the server offers {server.templates} "
                          f"resource template{plural}; {host} does not read them", "offer them through a tool too"))
    if server.instructions and profile.supports("features.instructions") is False:
        out.append(Reason(DEGRADED, "capability:instructions", f"{host} does not give the server's instructions "
                          "to its model", "say in the tool descriptions what the instructions say"))
    return out


def _observed_reasons(server: Server, profile: Profile) -> list[Reason]:
    host = profile.name
    out: list[Reason] = []
    for tool, kinds in sorted(server.observed.kinds.items()):
        for kind in sorted(kinds):
            if profile.supports(f"content.{kind}") is False:
                out.append(Reason(DEGRADED, f"tool:{tool}", f"a call answered with {KIND_WORDS[kind]}; {host} "
                                  f"shows its model no {kind.replace('_', ' ')} content",
                                  "say in a text block what it holds"))
    limit = profile.get("limits.result_tokens")
    if isinstance(limit, int):
        for tool, size in sorted(server.observed.largest.items()):
            if size * TOKENS_PER_BYTE > limit:
                out.append(Reason(DEGRADED, f"tool:{tool}", f"an answer of {size:,} bytes (about "
                                  f"{int(size * TOKENS_PER_BYTE):,} tokens) is over {host}'s {limit:,}-token "
                                  "limit for one tool result: it is cut", "page or summarise large results"))
    for tool, asks in sorted(server.observed.asked.items()):
        for ask in sorted(asks):
            supported = profile.supports(f"features.{ask}")
            if ask == "elicitation_url" and supported is None and profile.supports("features.elicitation_form") \
                    is False:
                supported = False
            if supported is False:
                level = DEGRADED if ask == "roots" else BLOCKED
                effect = ("the server goes without them" if ask == "roots" else "the call cannot finish")
                out.append(Reason(level, f"tool:{tool}" if tool else "server",
                                  f"{'a call' if tool else 'the server'} {ASK_WORDS[ask]}, which {host} cannot "
                                  f"answer: {effect}", ASK_FIX[ask]))
    return out


SeenCache = dict[tuple[str, str, str], tuple[dict[str, Any], Seen]]


def cached(tool: dict[str, Any], profile: Profile, server: str, cache: SeenCache) -> bool:
    kept = cache.get((profile.id, server, str(tool.get("name"))))
    return kept is not None and kept[0] is tool


def seen_of(tool: dict[str, Any], profile: Profile, server: str, cache: SeenCache | None = None) -> Seen:
    """`seen.see`, through `cache` when one is given."""
    key = (profile.id, server, str(tool.get("name")))
    kept = cache.get(key) if cache is not None else None
    if kept is not None and kept[0] is tool:
        return kept[1]
    seen = see(tool, profile, server)
    if cache is not None:
        cache[key] = (tool, seen)
    return seen


def judge(server: Server, profile: Profile, cache: SeenCache | None = None) -> HostVerdict:
    """The verdict of `profile`'s host on `server`. With `cache` (kept by the caller between calls), a tool
    whose definition is the same object as last time is not looked at again (the window judges again after
    every call, and a server may list thousands of tools)."""
    tools: dict[str, Seen] = {}
    reasons: list[Reason] = []
    for tool in server.tools:
        name = tool.get("name")
        if not isinstance(name, str) or name in tools:
            continue
        seen = seen_of(tool, profile, server.name, cache)
        tools[name] = seen
        reasons += seen.reasons
    reasons += _server_reasons(server, profile) + _observed_reasons(server, profile)
    unique = list(dict.fromkeys(reasons))
    return HostVerdict(profile, _level(unique), tools)


def judge_all(server: Server, profiles: list[Profile]) -> list[HostVerdict]:
    return [judge(server, p) for p in profiles]
