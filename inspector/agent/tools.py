"""Spyglass's own MCP tools: each one's definition (description, inputSchema, outputSchema, annotations) and
how a call of it runs on `Ops`. The definitions are plain JSON, so `spyglass mcp` (the SDK's server), the
`spyglass do` background process and the tests read the same table. Arguments are checked against the
inputSchema here first, each problem named. No Qt, no SDK here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .errors import AgentError
from .ops import Ops, checker_of

S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
B = {"type": "boolean"}
O = {"type": "object"}  # noqa: E741
SERVER = {"type": "string", "description": "the name given to spyglass_connect"}
STR_MAP = {"type": "object", "additionalProperties": {"type": "string"}}


def _d(schema: dict[str, Any], text: str) -> dict[str, Any]:
    return {**schema, "description": text}


def _in(props: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required), "additionalProperties": False}


def _out(props: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required)}


def _hints(read_only: bool, destructive: bool = False, idempotent: bool = False,
           open_world: bool = False) -> dict[str, bool]:
    out = {"readOnlyHint": read_only, "openWorldHint": open_world}
    if not read_only:
        out["destructiveHint"] = destructive
        out["idempotentHint"] = idempotent
    return out


N = {"type": "null"}
SERVER_OUT = _out({"name": S, "status": S, "protocolVersion": {"anyOf": [S, N]}, "tools": {"anyOf": [I, N]}}, "name",
                  "status")
CALL_OUT = _out({"server": S, "tool": S, "outcome": S, "elapsedMs": {"type": "number"}, "result": O, "error": S,
                 "callId": I}, "outcome")

# name -> (description, inputSchema, outputSchema, annotations)
TOOLS: dict[str, tuple[str, dict[str, Any], dict[str, Any], dict[str, bool]]] = {
    "spyglass_connect": (
        "Start or reach an MCP server and keep the connection open under `name` for later calls. Give one of "
        "command (stdio: list of words), url (Streamable HTTP or SSE), or catalog (a saved server's name, or "
        "'demo'). Failing servers stay listed with their reason and stderr: fix and spyglass_restart.",
        _in({"name": _d(S, "your name for it, used by the other tools"),
             "command": _d({"type": "array", "items": S}, "program and arguments"), "url": _d(S, "http(s) URL"),
             "catalog": _d(S, "saved server name, or demo"),
             "era": _d(S, "auto (default), legacy, modern, or a protocol version"),
             "env": _d(STR_MAP, "environment variables"), "headers": _d(STR_MAP, "HTTP headers"),
             "cwd": _d(S, "working folder")}, "name"),
        SERVER_OUT, _hints(False, True, open_world=True)),  # a command is any program: it may do anything
    "spyglass_disconnect": (
        "Close a connection (a stdio server is stopped with its process group).",
        _in({"server": SERVER}, "server"), _out({"name": S, "closed": B}, "closed"), _hints(False, True, True)),
    "spyglass_restart": (
        "Restart a server (after editing its code) and reconnect; says which tools were added, removed or "
        "redefined. Its state is lost.",
        _in({"server": SERVER}, "server"), SERVER_OUT, _hints(False, True, open_world=True)),
    "spyglass_servers": (
        "The open connections: status, protocol version, pid, tool count, findings, and why one failed.",
        _in({}), _out({"servers": {"type": "array"}}, "servers"), _hints(True)),
    "spyglass_list": (
        "List a server's tools (annotations with the spec's defaults: mayChangeThings), resources, templates "
        "or prompts; every page followed.",
        _in({"server": SERVER, "kind": _d({"enum": ["tools", "resources", "templates", "prompts"]}, "default tools")},
            "server"),
        _out({"count": I, "items": {"type": "array"}}, "count", "items"), _hints(True, open_world=True)),
    "spyglass_call": (
        "Call a tool of a server. Arguments are checked against its inputSchema first (validate=false sends them "
        "unchecked). A tool that may change things needs a person's approval in the window, or --allow-writes.",
        _in({"server": SERVER, "tool": _d(S, "tool name"), "arguments": _d(O, "the tool's arguments"),
             "validate": _d(B, "check them first (default true)"),
             "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 86400,
                         "description": "seconds, default 300"}}, "server", "tool"),
        CALL_OUT, _hints(False, True, open_world=True)),
    "spyglass_read": (
        "Read a resource of a server by URI.",
        _in({"server": SERVER, "uri": _d(S, "resource URI")}, "server", "uri"), _out({"result": O}, "result"),
        _hints(True, open_world=True)),
    "spyglass_prompt": (
        "Get a prompt of a server with its arguments.",
        _in({"server": SERVER, "name": _d(S, "prompt name"), "arguments": _d(STR_MAP, "its arguments")}, "server",
            "name"), _out({"result": O}, "result"),
        _hints(True, open_world=True)),
    "spyglass_complete": (
        "Ask a server to complete an argument: ref is prompt:NAME or resource:URI-TEMPLATE.",
        _in({"server": SERVER, "ref": _d(S, "prompt:NAME or resource:TEMPLATE"),
             "argument": _d(S, "argument to complete"), "value": _d(S, "what is typed so far"),
             "context": _d(STR_MAP, "arguments already filled")}, "server", "ref", "argument"),
        _out({"values": {"type": "array", "items": S}}, "values"), _hints(True, open_world=True)),
    "spyglass_traffic": (
        "Frames sent and received (all servers, or one), oldest first, with direction, time, latency, pairing "
        "and findings. filter: plain text or a display filter, e.g. kind == error || severity >= warning, "
        "method == \"tools/call\" && latency > 500ms, tool == x. Page on with cursor = nextCursor. frame = a "
        "frame's n reads that one whole, in pages: offset = nextOffset.",
        _in({"server": _d(S, "one server (default all)"), "filter": _d(S, "text or display filter"),
             "cursor": _d(I, "nextCursor of the last page"),
             "limit": _d({"type": "integer", "minimum": 1, "maximum": 500}, "frames per page (default 50)"),
             "bodies": {"type": "boolean", "description": "include each frame's text (cut to 2000 chars)"},
             "frame": _d({"type": "integer", "minimum": 0}, "one frame's n: its whole text"),
             "offset": _d({"type": "integer", "minimum": 0}, "with frame: nextOffset of the last page")}),
        _out({"matched": I, "frames": {"type": "array"}, "nextCursor": I, "nextOffset": I}, "matched", "frames"),
        _hints(True)),
    "spyglass_check": (
        "Check a server against the MCP specification and Spyglass's rules: findings with rule, severity, "
        "message. calls=read-only also calls its read-only tools with made-up arguments.",
        _in({"server": SERVER, "calls": _d({"enum": ["none", "read-only"]}, "default none")}, "server"),
        _out({"findings": {"type": "array"}, "summary": O}, "findings"), _hints(True, open_world=True)),
    "spyglass_log": (
        "The last lines of a server's stderr, its log messages and Spyglass's notes about it.",
        _in({"server": SERVER, "lines": _d({"type": "integer", "minimum": 1, "maximum": 1000}, "default 100"),
             "level": {"type": "string", "description": "only this level: stderr, error, info, spyglass…"}},
            "server"),
        _out({"status": S, "entries": {"type": "array"}}, "entries"), _hints(True)),
    "spyglass_rerun": (
        "Call again the server's last call (or callId), e.g. after spyglass_restart, and compare the answers.",
        _in({"server": SERVER, "callId": _d(I, "default the last call")}, "server"),
        _out({"same": B, "changes": {"type": "array"}}, "same"),
        _hints(False, True, open_world=True)),
    "spyglass_diff": (
        "Compare two open servers: tools only in one, tools redefined; with tool, the same call on both.",
        _in({"a": SERVER, "b": SERVER, "tool": _d(S, "a tool to call on both"),
             "arguments": _d(O, "its arguments")}, "a", "b"), _out({"tools": O}, "tools"),
        _hints(False, True, open_world=True)),
    "spyglass_save": (
        "Write the traffic (one server's, or all) as a .mcpsession file that the Spyglass window opens and "
        "`spyglass replay` replays. Replaces the file.",
        _in({"path": _d(S, "file ending in .mcpsession"), "server": _d(S, "one server (default all)")},
            "path"), _out({"path": S, "frames": I}, "path"),
        _hints(False, True, True)),
}


def definitions() -> list[dict[str, Any]]:
    return [{"name": name, "description": d, "inputSchema": i, "outputSchema": o, "annotations": a}
            for name, (d, i, o, a) in TOOLS.items()]


def read_only(name: str) -> bool:
    entry = TOOLS.get(name)
    return bool(entry and entry[3]["readOnlyHint"])


def _runner(ops: Ops, name: str, pairs: dict[str, str] | None
            ) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    async def connect(a: dict[str, Any]) -> dict[str, Any]:
        return await ops.connect(a["name"], command=a.get("command"), url=a.get("url"), catalog=a.get("catalog"),
                                 era=a.get("era", "auto"), env=a.get("env"), headers=a.get("headers"),
                                 cwd=a.get("cwd"))

    async def plain(a: dict[str, Any]) -> dict[str, Any]:
        match name:
            case "spyglass_disconnect":
                return await ops.disconnect(a["server"])
            case "spyglass_restart":
                return await ops.restart(a["server"])
            case "spyglass_servers":
                return ops.servers()
            case "spyglass_list":
                return await ops.listing(a["server"], a.get("kind", "tools"))
            case "spyglass_call":
                return await ops.call(a["server"], a["tool"], a.get("arguments"), validate=a.get("validate", True),
                                      timeout=a.get("timeout"), pairs=pairs)
            case "spyglass_read":
                return await ops.read(a["server"], a["uri"])
            case "spyglass_prompt":
                return await ops.prompt(a["server"], a["name"], a.get("arguments"))
            case "spyglass_complete":
                return await ops.complete(a["server"], a["ref"], a["argument"], a.get("value", ""), a.get("context"))
            case "spyglass_traffic":
                return ops.traffic(a.get("server"), a.get("filter", ""), cursor=a.get("cursor"),
                                   limit=a.get("limit", 50), bodies=a.get("bodies", True), frame=a.get("frame"),
                                   offset=a.get("offset", 0))
            case "spyglass_check":
                return await ops.check(a["server"], a.get("calls", "none"))
            case "spyglass_log":
                return ops.log(a["server"], lines=a.get("lines", 100), level=a.get("level"))
            case "spyglass_rerun":
                return await ops.rerun(a["server"], a.get("callId"))
            case "spyglass_diff":
                return await ops.diff(a["a"], a["b"], a.get("tool"), a.get("arguments"))
            case "spyglass_save":
                return ops.save(a["path"], a.get("server"))
        raise AgentError(f"no tool named {name!r}", "tool_not_found")

    return connect if name == "spyglass_connect" else plain


async def run(ops: Ops, name: str, arguments: Any, *, pairs: dict[str, str] | None = None) -> dict[str, Any]:
    """Run tool `name` with `arguments` (checked against its inputSchema); raises `AgentError`. `pairs`: the
    `key=value` words of `spyglass do NAME call`, read by the called tool's own inputSchema."""
    entry = TOOLS.get(name)
    if entry is None:
        raise AgentError(f"Spyglass has no tool named {name!r}; its tools: {', '.join(TOOLS)}", "tool_not_found")
    args = {} if arguments is None else arguments
    if not isinstance(args, dict):
        raise AgentError("arguments must be a JSON object", "invalid_arguments")
    problems = [(p[0], p[1]) for p in checker_of(entry[1]).problems(args)]
    if problems:
        detail = "; ".join(f"{p or '(arguments)'}: {m}" for p, m in problems)
        raise AgentError(f"arguments for {name} do not fit its inputSchema: {detail}", "invalid_arguments",
                         errors=[{"path": p, "message": m} for p, m in problems])
    return await _runner(ops, name, pairs)(args)
