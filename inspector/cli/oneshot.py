"""`spyglass --cli`: one request against one server, for scripts and CI. Never imports Qt.

Prints the method's result as JSON on stdout; on failure prints `{"error": {...}}` on stdout and one
human line on stderr, and exits with the code of the failure (inspector.errors; docs/cli.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from .. import errors as E
from ..protocol.mode import Mode
from ..protocol.versions import LOG_LEVELS
from ..transport.factory import open_transport, start_process
from ..transport.process import stop
from .answers import FlagAnswers, root
from .common import (
    UsageParser,
    add_server_arguments,
    json_object,
    pairs,
    parse_with_command,
    recorders,
    server_spec,
    transport_options,
    visible,
)
from .load import add_load_arguments, check_load_arguments, run_load
from .output import first_text, print_result, progress_done, progress_to_stderr, task_to_stderr
from .skills import METHODS as SKILLS_METHODS
from .skills import add_skills_arguments, check_skills_arguments
from .skills import perform as skills_perform

if TYPE_CHECKING:
    import subprocess

    from ..config import ServerSpec

METHODS = ("tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read",
           "prompts/list", "prompts/get", "completion/complete", "logging/setLevel", "ping", "server/discover",
           "skills/list", "skills/get")
EXIT_INTERNAL = 70


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog="spyglass --cli", add_help=True,
                    description="Run one MCP request against a server and print the result as JSON.",
                    epilog="Server: -- COMMAND [ARGS...] (stdio), URL (HTTP), or --config FILE --server NAME. "
                           "Exit codes: 0 ok, 1 usage/invalid arguments, 3 authorization required, "
                           "4 cannot connect / server exited / unsupported protocol, 5 tool returned isError, "
                           "6 JSON-RPC error, 7 timeout, 8 invalid answer from the server, 130 interrupted.")
    p.add_argument("--cli", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--method", choices=METHODS, help="the MCP method (default: tools/list, or tools/call with "
                   "--tool-name, resources/read with --uri, prompts/get with --prompt-name)")
    p.add_argument("--tool-name", help="tool to call")
    p.add_argument("--tool-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="a tool argument, coerced by the tool's inputSchema (repeatable)")
    p.add_argument("--tool-args-json", metavar="JSON", help="all tool arguments as one JSON object")
    task = p.add_mutually_exclusive_group()
    task.add_argument("--task", dest="task", action="store_const", const=True, default=None,
                      help="run the tool as a task (protocol 2025-11-25): follow it with tasks/get, print each "
                           "status on stderr, fetch the result with tasks/result (default: only for tools "
                           "whose execution.taskSupport is \"required\")")
    task.add_argument("--no-task", dest="task", action="store_const", const=False,
                      help="call the tool plainly even when it says it must run as a task")
    p.add_argument("--uri", help="resource URI for resources/read")
    p.add_argument("--prompt-name", help="prompt for prompts/get")
    p.add_argument("--prompt-args", action="append", default=[], metavar="KEY=VALUE",
                   help="a prompt argument (repeatable)")
    p.add_argument("--ref", metavar="prompt:NAME|resource:URI", help="what completion/complete completes")
    p.add_argument("--argument", metavar="NAME=VALUE", help="the argument being completed")
    p.add_argument("--context", action="append", default=[], metavar="KEY=VALUE",
                   help="already-filled arguments sent as completion context (repeatable)")
    p.add_argument("--elicit-accept", metavar="JSON",
                   help="answer every elicitation by accepting with this content (a JSON object)")
    p.add_argument("--elicit-decline", action="store_true", help="answer every elicitation by declining")
    p.add_argument("--sampling-reply", metavar="TEXT", help="answer every sampling request with this text")
    p.add_argument("--root", action="append", default=[], metavar="PATH",
                   help="a root folder offered to the server (repeatable)")
    p.add_argument("--log-level", choices=LOG_LEVELS, help="log level (logging/setLevel, or _meta in 2026-07-28)")
    add_server_arguments(p)
    p.add_argument("--format", choices=("json", "text"), default="json", help="output format")
    p.add_argument("--no-validate", action="store_true", help="send tool arguments without checking them")
    p.add_argument("--trace", metavar="FILE", help="write every frame to FILE as JSON Lines")
    p.add_argument("--session", metavar="FILE", help="write the whole session to FILE as a .mcpsession (secrets "
                   "masked), to open in the window, replay or diff")
    add_skills_arguments(p)
    add_load_arguments(p)
    p.add_argument("target", nargs="*", help=argparse.SUPPRESS)
    return p


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    args = parse_with_command(build_parser(), argv)
    if args.timeout <= 0:
        raise E.UsageError("--timeout must be positive")
    try:
        args.mode = Mode.parse(args.protocol)
    except ValueError as exc:
        raise E.UsageError(str(exc)) from None
    if args.method is None:
        args.method = ("tools/call" if args.tool_name else "resources/read" if args.uri else
                       "prompts/get" if args.prompt_name else "tools/list")
    check_skills_arguments(args)
    check_load_arguments(args)
    return args


async def run(args: argparse.Namespace, out: TextIO, spec: ServerSpec | None = None,
              started: subprocess.Popen[bytes] | None = None) -> int:
    """The request `args` name, against `spec` (from the flags when not given), whose process may be
    `started` already (`transport.factory.start_process`)."""
    spec = spec or server_spec(args)
    answers = FlagAnswers(args)
    roots = [root(path) for path in args.root] or None  # declared only when given
    trace, writers = recorders(args, spec)
    options = transport_options(spec, args, trace)
    opened = open_transport(spec, options, started=started)
    # Attach to the server before the session layer is imported: its readers first run at the next
    # await, when the client has attached to it.
    await opened.transport.open()
    if args.method == "tools/call" and not args.no_validate:
        _preload("jsonschema")
    from ..session import ServerSession, SessionOptions

    session = ServerSession(spec, options=SessionOptions(
        mode=args.protocol, timeout=args.timeout, transport=options, load_lists=False, listen=False,
        heartbeat_s=None, log_level=args.log_level if args.method != "logging/setLevel" else None),
        answerer=answers, traffic=trace)
    session.roots = roots
    try:
        await session.open(opened)
        if args.method in SKILLS_METHODS:
            return await skills_perform(session, args, out)
        if args.load:
            return await run_load(session, args, await _tool_arguments(session.need_client(), args), out)
        result = await perform(session, args)
        exit_code = E.EXIT_TOOL_ERROR if (args.method == "tools/call" and isinstance(result, dict)
                                          and result.get("isError") is True) else E.EXIT_OK
        print_result(result, args, out)
        if exit_code == E.EXIT_TOOL_ERROR:
            print(f"spyglass: tool {args.tool_name!r} returned isError: {visible(first_text(result))}",
                  file=sys.stderr)
        return exit_code
    finally:
        await session.close()
        if session.client is None and opened.transport is not None:
            await opened.transport.close()  # a failed start leaves no process behind either
        auth = getattr(getattr(opened.transport, "settings", None), "auth", None)
        if auth is not None and hasattr(auth, "aclose"):
            await auth.aclose()
        for writer in writers:
            writer.close()


async def perform(session: Any, args: argparse.Namespace) -> Any:
    client = session.need_client()
    m = args.method
    if m == "tools/list":
        result = await client.list_tools()
        for name, why in client.rejected_tools:
            print(f"spyglass: warning: tool {name!r} left out: {why}", file=sys.stderr)
        return result
    if m == "tools/call":
        return await call_tool(session, args)
    if m == "resources/list":
        return await client.list_resources()
    if m == "resources/templates/list":
        return await client.list_resource_templates()
    if m == "resources/read":
        if not args.uri:
            raise E.UsageError("resources/read needs --uri")
        return await session.library.read(args.uri)
    if m == "prompts/list":
        return await client.list_prompts()
    if m == "prompts/get":
        if not args.prompt_name:
            raise E.UsageError("prompts/get needs --prompt-name")
        return await session.library.get_prompt(args.prompt_name, dict(pairs(args.prompt_args, "--prompt-args")))
    if m == "completion/complete":
        result = await client.complete(*_completion(args))
        values = result["completion"]["values"]
        if len(values) > 100:
            print(f"spyglass: warning: the server sent {len(values)} completion values; "
                  "the protocol allows at most 100", file=sys.stderr)
        return result
    if m == "logging/setLevel":
        if not args.log_level:
            raise E.UsageError("logging/setLevel needs --log-level")
        return await client.set_log_level(args.log_level)
    if m == "ping":
        return {"roundTripMs": round(await session.health.ping() * 1000, 3)}
    if m == "server/discover":
        return await client.discover()
    raise E.UsageError(f"unknown method {m}")  # pragma: no cover - argparse allows only METHODS


async def call_tool(session: Any, args: argparse.Namespace) -> Any:
    """tools/call through the session's call book: progress and each task state go to stderr."""
    if not args.tool_name:
        raise E.UsageError("tools/call needs --tool-name")
    client = session.need_client()
    arguments = await _tool_arguments(client, args)
    if (args.task is None or args.task) and not client.tools and client.tasks_exist:
        await client.list_tools()  # to know whether the tool must (or can) run as a task
    if args.task and client.tasks_exist:
        from ..protocol.tasks import task_support

        if not client.runs_tool_tasks:
            print("spyglass: warning: the server does not declare tasks.requests.tools.call; asking for a "
                  "task anyway", file=sys.stderr)
        elif args.tool_name in client.tools and task_support(client.tools[args.tool_name]) == "forbidden":
            print(f"spyglass: warning: tool {args.tool_name!r} does not declare task support "
                  "(execution.taskSupport); asking for a task anyway", file=sys.stderr)
    states_shown = 0
    last_progress: tuple[Any, Any, Any] | None = None

    def updated(rec: Any) -> None:
        nonlocal states_shown, last_progress
        for _at, status, message in rec.task_trail[states_shown:]:
            task_to_stderr({"taskId": rec.task_id, "status": status, "statusMessage": message})
        states_shown = len(rec.task_trail)
        progress = (rec.progress, rec.total, rec.message)
        if rec.progress is not None and progress != last_progress:
            last_progress = progress
            progress_to_stderr(*progress)
    session.calls.updated.connect(updated)
    rec = session.calls.call(args.tool_name, arguments, client.tools.get(args.tool_name), as_task=args.task)
    assert rec.job is not None
    try:
        await rec.job
    finally:
        if last_progress is not None:
            progress_done()
    if rec.error is not None:
        raise rec.error
    if rec.outcome == "failed":  # pragma: no cover - only a bug of ours fails a call without an error (logged)
        raise E.SpyglassError(rec.error_text)
    return rec.result


def _completion(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    if not args.ref or not args.argument:
        raise E.UsageError("completion/complete needs --ref prompt:NAME|resource:URI and --argument NAME=VALUE")
    kind, _, what = args.ref.partition(":")
    if kind == "prompt" and what:
        ref = {"type": "ref/prompt", "name": what}
    elif kind == "resource" and what:
        ref = {"type": "ref/resource", "uri": what}
    else:
        raise E.UsageError(f"--ref must be prompt:NAME or resource:URI, got {args.ref!r}")
    (name, value), = pairs([args.argument], "--argument")
    return ref, {"name": name, "value": value}, dict(pairs(args.context, "--context"))


async def _tool_arguments(client: Any, args: argparse.Namespace) -> dict[str, Any]:
    from ..forms import validation

    schema: Any = None
    if args.tool_arg or not args.no_validate:
        tools = (await client.list_tools()).get("tools", [])
        tool = next((t for t in tools if isinstance(t, dict) and t.get("name") == args.tool_name), None)
        schema = tool.get("inputSchema") if tool else None
    arguments: dict[str, Any] = {}
    if args.tool_args_json:
        arguments = json_object(args.tool_args_json, "--tool-args-json", E.InvalidArguments)
    for key, value in pairs(args.tool_arg, "--tool-arg"):
        arguments[key] = validation.coerce(schema, key, value)
    if args.no_validate or schema is None:
        return arguments
    try:
        problems = validation.validate(schema, arguments)
    except validation.SchemaProblem as exc:
        print(f"spyglass: warning: not validating arguments: tool {args.tool_name!r}: {exc}", file=sys.stderr)
        return arguments
    if problems:
        detail = "; ".join(f"{ptr or '(arguments)'}: {msg}" for ptr, msg in problems)
        raise E.InvalidArguments(f"invalid arguments for tool {args.tool_name!r}: {detail} "
                                 "(--no-validate sends them anyway)",
                                 errors=[{"path": p, "message": m} for p, m in problems])
    for ptr, msg in validation.format_warnings(schema, arguments):
        print(f"spyglass: warning: {ptr or '(arguments)'}: {visible(msg)} (a format is a hint: sent as it is)",
              file=sys.stderr)
    return arguments


def _preload(module: str) -> None:
    import importlib
    import threading

    def load() -> None:
        try:
            importlib.import_module(module)
        except Exception:  # pragma: no cover - a broken install: the real import later reports the problem
            pass

    threading.Thread(target=load, name=f"preload-{module}", daemon=True).start()


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    out = out or sys.stdout
    begun = time.monotonic()
    started = None
    try:
        args = parse_args(argv)
        spec = server_spec(args)
        # A stdio server boots while the rest of Spyglass (asyncio first) imports: it takes longer
        # to start than anything here, so a one-shot call ends sooner.
        started = start_process(spec)
        import asyncio

        return asyncio.run(run(args, out, spec, started))
    except E.SpyglassError as exc:
        out.write(json.dumps({"error": exc.as_json()}, ensure_ascii=False) + "\n")
        print(f"spyglass: {visible(exc.message)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("spyglass: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # pragma: no cover - only a bug of ours: still one line and a defined exit code
        out.write(json.dumps({"error": {"kind": "internal", "message": f"{type(exc).__name__}: {exc}"}}) + "\n")
        print(f"spyglass: internal error: {type(exc).__name__}: {exc} (after {time.monotonic() - begun:.1f} s)",
              file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        if started is not None:
            stop(started)  # interrupted before the transport took it over: no server is left behind
