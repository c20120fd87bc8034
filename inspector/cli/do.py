"""`spyglass do`: named connections kept open between shell commands, in a per-user background process
(started on demand, gone after an idle time) shared with `spyglass mcp` (docs/agents.md).

    spyglass do open NAME -- COMMAND…        spyglass do open NAME URL        spyglass do open NAME --catalog X
    spyglass do ls                           spyglass do NAME tools [--kind K]
    spyglass do NAME call TOOL k=v…          spyglass do NAME read URI        spyglass do NAME traffic 'FILTER'
    spyglass do NAME restart | close | log | check | save FILE              spyglass do stop

JSON on stdout; a failure prints `--cli`'s error envelope (on stdout, and as the last line of stderr) and
exits with its exit code (1 usage and most failures, 5 a tool that is not there or returned isError).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from .. import errors as E
from . import official
from .common import UsageParser, pairs, visible

VERBS = ("tools", "call", "read", "traffic", "restart", "close", "log", "check", "prompt", "save")


class AgentFailure(E.SpyglassError):
    """An `AgentError` of the background process, as the command line reports failures."""

    def __init__(self, kind: str, message: str, **details: Any) -> None:
        super().__init__(message, **details)
        self.kind = kind


def build_parser() -> argparse.ArgumentParser:
    """Every option `spyglass do` takes, whatever the verb (shell completion reads it)."""
    p = _parser("")
    p.add_argument("words", nargs="*", help="open NAME …, ls, stop, or NAME " + "|".join(VERBS))
    p.add_argument("--catalog", help="open: a saved server, or demo")
    p.add_argument("--era", help="open: auto, legacy, modern or a protocol version")
    p.add_argument("-e", metavar="KEY=VALUE", help="open: an environment variable")
    p.add_argument("--header", help="open: an HTTP header")
    p.add_argument("--cwd", help="open: the working folder")
    p.add_argument("--kind", choices=("tools", "resources", "templates", "prompts"), help="tools: what to list")
    p.add_argument("--json", help="call: the arguments as one JSON object")
    p.add_argument("--allow-writes", action="store_true", help="call: you allow a tool that may change things")
    p.add_argument("--no-validate", action="store_true", help="call: send the arguments unchecked")
    p.add_argument("--limit", type=int, help="traffic: frames per page")
    p.add_argument("--cursor", type=int, help="traffic: the nextCursor of the last page")
    p.add_argument("--no-bodies", action="store_true", help="traffic: leave out the frames' text")
    p.add_argument("--frame", type=int, help="traffic: one frame's n, its whole text in pages")
    p.add_argument("--offset", type=int, help="traffic --frame: the nextOffset of the last page")
    p.add_argument("--lines", type=int, help="log: how many lines")
    p.add_argument("--call", choices=("none", "read-only"), help="check: call the read-only tools")
    return p


def _parser(prog: str) -> argparse.ArgumentParser:
    return UsageParser(prog=f"spyglass do {prog}".strip(), description="Named MCP connections kept open "
                       "between commands (docs/agents.md).")


def parse(words: list[str]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The request for the background process: (tool, arguments, options: allow_writes, pairs)."""
    if not words:
        raise E.UsageError("say what to do: open NAME …, ls, stop, or NAME tools|call|read|traffic|"
                           "restart|close|log|check|prompt|save")
    head = words[0]
    if head == "ls":
        return "spyglass_servers", {}, {}
    if head == "stop":
        return "stop", {}, {}
    if head == "open":
        return _open(words[1:])
    if len(words) < 2 or words[1] not in VERBS:
        raise E.UsageError(f"expected one of {', '.join(VERBS)} after the name {head!r} (or open, ls, stop)")
    name, verb, rest = head, words[1], words[2:]
    p = _parser(f"NAME {verb}")
    if verb == "tools":
        p.add_argument("--kind", choices=("tools", "resources", "templates", "prompts"), default="tools")
        a = p.parse_args(rest)
        return "spyglass_list", {"server": name, "kind": a.kind}, {}
    if verb == "call":
        p.add_argument("tool")
        p.add_argument("args", nargs="*", metavar="KEY=VALUE")
        p.add_argument("--json", metavar="OBJECT", help="all arguments as one JSON object (KEY=VALUE on top)")
        p.add_argument("--allow-writes", action="store_true", help="you allow a tool that may change things")
        p.add_argument("--no-validate", action="store_true", help="send the arguments unchecked")
        a = p.parse_args(rest)
        base: Any = {}
        if a.json:
            try:
                base = json.loads(a.json)
            except ValueError as exc:
                raise E.InvalidArguments(f"--json is not JSON: {exc}") from None
            if not isinstance(base, dict):
                raise E.InvalidArguments("--json must be a JSON object")
        arguments = {"server": name, "tool": a.tool, "arguments": base, "validate": not a.no_validate}
        return "spyglass_call", arguments, {"allow_writes": a.allow_writes, "pairs": dict(pairs(a.args, "KEY=VALUE"))}
    if verb == "read":
        p.add_argument("uri")
        return "spyglass_read", {"server": name, "uri": p.parse_args(rest).uri}, {}
    if verb == "prompt":
        p.add_argument("prompt")
        p.add_argument("args", nargs="*", metavar="KEY=VALUE")
        a = p.parse_args(rest)
        return "spyglass_prompt", {"server": name, "name": a.prompt, "arguments": dict(pairs(a.args, "KEY=VALUE"))}, {}
    if verb == "traffic":
        p.add_argument("filter", nargs="?", default="")
        p.add_argument("--limit", type=int, default=50)
        p.add_argument("--cursor", type=int)
        p.add_argument("--no-bodies", action="store_true")
        p.add_argument("--frame", type=int, help="one frame's n: its whole text, in pages")
        p.add_argument("--offset", type=int, help="with --frame: the nextOffset of the last page")
        a = p.parse_args(rest)
        out = {"server": name, "filter": a.filter, "limit": a.limit, "bodies": not a.no_bodies}
        for key in ("cursor", "frame", "offset"):
            if getattr(a, key) is not None:
                out[key] = getattr(a, key)
        return "spyglass_traffic", out, {}
    if verb == "log":
        p.add_argument("--lines", type=int, default=100)
        return "spyglass_log", {"server": name, "lines": p.parse_args(rest).lines}, {}
    if verb == "check":
        p.add_argument("--call", choices=("none", "read-only"), default="none")
        return "spyglass_check", {"server": name, "calls": p.parse_args(rest).call}, {}
    if verb == "save":
        p.add_argument("path")
        return "spyglass_save", {"server": name, "path": p.parse_args(rest).path}, {}
    p.parse_args(rest)
    return {"restart": "spyglass_restart", "close": "spyglass_disconnect"}[verb], {"server": name}, {}


def _open(words: list[str]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    command: list[str] = []
    if "--" in words:
        cut = words.index("--")
        words, command = words[:cut], words[cut + 1:]
    p = _parser("open")
    p.add_argument("name")
    p.add_argument("url", nargs="?")
    p.add_argument("--catalog", metavar="NAME", help="a saved server of the window's catalog, or demo")
    p.add_argument("--era", default="auto", help="auto, legacy, modern or a protocol version")
    p.add_argument("-e", dest="env", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--header", action="append", default=[], metavar="NAME: VALUE")
    p.add_argument("--cwd")
    a = p.parse_args(words)
    arguments: dict[str, Any] = {"name": a.name, "era": a.era}
    if command:
        arguments["command"] = command
    if a.url:
        arguments["url"] = a.url
    if a.catalog:
        arguments["catalog"] = a.catalog
    if a.env:
        arguments["env"] = dict(pairs(a.env, "-e"))
    if a.header:
        heads = {}
        for h in a.header:
            key, sep, value = h.partition(":")
            if not sep:
                raise E.UsageError(f"--header must be 'NAME: VALUE', not {h!r}")
            heads[key.strip()] = value.strip()
        arguments["headers"] = heads
    if a.cwd:
        arguments["cwd"] = a.cwd
    return "spyglass_connect", arguments, {}


async def request(tool: str, arguments: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    from ..agent.errors import AgentError
    from ..agent.remote import Remote

    remote = Remote()
    try:
        await remote.connect(start=tool != "stop")
        return await remote.request(tool, arguments, allow_writes=options.get("allow_writes", False),
                                    pairs=options.get("pairs"), client="spyglass do")
    except AgentError as exc:
        if tool == "stop" and exc.code == "not_running":
            return {"stopping": False, "note": "no background process was running"}
        raise AgentFailure(exc.code, in_shell_words(exc.message, arguments), **exc.details) from None
    finally:
        await remote.close()


# what the background process's sentences tell an MCP agent to do, as a shell does it
SHELL_WORDS = (("spyglass_connect", "`spyglass do open {name} …`"),
               ("spyglass_restart", "`spyglass do {name} restart`"),
               ("spyglass_disconnect", "`spyglass do {name} close`"), ("spyglass_log", "`spyglass do {name} log`"),
               ("spyglass_traffic", "`spyglass do {name} traffic`"), ("pass validate=false", "add --no-validate"),
               ("or when it was started with --allow-writes", "or when you add --allow-writes to the command"))


def in_shell_words(message: str, arguments: dict[str, Any]) -> str:
    name = arguments.get("server") or arguments.get("name")
    name = name if isinstance(name, str) and name else "NAME"
    for mcp_words, shell in SHELL_WORDS:
        message = message.replace(mcp_words, shell.format(name=name))
    return message


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    words = list(argv)[1:] if argv and argv[0] == "do" else list(argv)
    if words[:1] in (["-h"], ["--help"]):
        stream.write(build_parser().format_help() + "\n" + (__doc__ or "").split("\n\n", 1)[1])
        return E.EXIT_OK
    if words[:1] == ["--reap"]:  # the background process's watchdog (inspector/agent/reaper.py)
        from ..agent.reaper import watch

        return watch()
    if words[:1] == ["--serve"]:
        from ..agent.daemon import serve_forever

        return serve_forever()
    try:
        tool, arguments, options = parse(words)
        result = asyncio.run(request(tool, arguments, options))
    except E.SpyglassError as exc:
        code, body = official.failure(exc)
        stream.write(json.dumps({"error": body}, ensure_ascii=False) + "\n")
        print(f"spyglass do: {visible(exc.message)}", file=sys.stderr)
        sys.stderr.write(official.envelope_line(body))
        return code
    except KeyboardInterrupt:
        print("spyglass do: interrupted", file=sys.stderr)
        return official.EXIT_INTERRUPTED
    stream.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    if tool == "spyglass_call" and result.get("outcome") != "ok":
        failure = call_failure(result)
        code, body = official.failure(failure)
        print(f"spyglass do: {visible(failure.message)}", file=sys.stderr)
        sys.stderr.write(official.envelope_line(body))
        return code
    return E.EXIT_OK


# a call's outcome other than ok -> the kind of its failure (`tool error` is --cli's tool_is_error: exit 5)
OUTCOME_KINDS = {"tool error": "tool_error", "rejected": "rpc_error", "timeout": "timeout", "cancelled": "cancelled"}


def call_failure(result: dict[str, Any]) -> AgentFailure:
    """A call that did not end `ok`, as `--cli` reports it: `tool 'x' returned isError: <its first text>`, or
    the outcome and why."""
    tool, outcome = result.get("tool"), str(result.get("outcome"))
    if outcome == "tool error":
        from .output import first_text

        answer = result.get("result")
        said = first_text(answer) if isinstance(answer, dict) else "(no text)"
        return AgentFailure("tool_error", f"tool {tool!r} returned isError: {said}")
    why = result.get("error") or outcome
    return AgentFailure(OUTCOME_KINDS.get(outcome, "call_failed"), f"tool {tool!r}: {outcome}: {why}")
