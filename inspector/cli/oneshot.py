"""`spyglass --cli`: one request against one server, for scripts and CI. Never imports Qt.

A drop-in for the official inspector's `--cli` (2.12): its flags, methods, output formats and exit codes
(inspector.cli.official). Prints the method's result on stdout; on failure prints `{"error": {...}}` on
stdout, and on stderr one human line then the same envelope as one JSON line (the official CLI's place for
it), and exits with the official code of the failure (docs/cli.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from .. import errors as E
from ..preload import preload
from ..protocol import apps
from ..protocol.mode import Mode
from ..protocol.versions import LOG_LEVELS
from ..transport.factory import open_transport, start_process
from ..transport.process import stop
from . import appinfo, authflags, official, servers
from .answers import FlagAnswers, root
from .common import (
    UsageParser,
    add_server_arguments,
    json_object,
    pairs,
    parse_with_command,
    protocol_of,
    recorders,
    server_spec,
    terminate_as_interrupt,
    transport_options,
    visible,
)
from .load import add_load_arguments, check_load_arguments, run_load
from .output import RAW_METHODS, first_text, print_result, progress_done, progress_to_stderr, task_to_stderr
from .skills import METHODS as SKILLS_METHODS
from .skills import add_skills_arguments, check_skills_arguments
from .skills import perform as skills_perform

if TYPE_CHECKING:
    import subprocess

    from ..config import ServerSpec

METHODS = ("initialize", "tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read",
           "prompts/list", "prompts/get", "completion/complete", "logging/setLevel", "ping", "server/discover",
           "resources/subscribe", "resources/unsubscribe", "logging/tail", "subscriptions/listen",
           "tasks/list", "tasks/get", "tasks/result", "tasks/cancel", "skills/list", "skills/get",
           "resources/directory/read", "servers/list", "servers/show", "servers/add", "servers/edit",
           "servers/remove")
EXIT_INTERNAL = 70
FORMATS = ("text", "json", "human")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    p = UsageParser(prog="spyglass --cli", add_help=True,
                    description="Run one MCP request against a server and print the result. Accepts every flag and "
                                "method of the official inspector's --cli (2.12), with the same meaning.",
                    epilog="Server: -- COMMAND [ARGS...] (stdio), URL (HTTP), or --config FILE --server NAME; the "
                           "official order TARGET... -- OPTIONS... works too. Exit codes (the official CLI's): 0 ok, "
                           "1 usage, invalid arguments, a JSON-RPC error or any other failure, 2 --app-info found no "
                           "app, 3 authorization required, 4 server unreachable, 5 tool returned isError or not found, "
                           "6 --strict found a schema portability error, 7 / 8 / 9 --verify: a skill failed / left "
                           "unchecked / without digests, 130 interrupted. The error envelope is the last stderr line.")
    p.add_argument("--cli", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("-V", "--version", action="version", version=f"spyglass {__version__}")
    p.add_argument("--method", choices=METHODS, help="the MCP method (default: tools/list, or tools/call with "
                   "--tool-name, resources/read with --uri, prompts/get with --prompt-name)")
    p.add_argument("--tool-name", help="tool to call")
    p.add_argument("--tool-arg", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="tool arguments, coerced by the tool's inputSchema (repeatable, several after one flag)")
    p.add_argument("--tool-args-json", metavar="JSON", help="all tool arguments as one JSON object")
    task = p.add_mutually_exclusive_group()
    task.add_argument("--task", dest="task", action="store_const", const=True, default=None,
                      help="run the tool as a task (protocol 2025-11-25): follow it with tasks/get, print each "
                           "status on stderr, fetch the result with tasks/result (default: only for tools "
                           "whose execution.taskSupport is \"required\")")
    task.add_argument("--no-task", dest="task", action="store_const", const=False,
                      help="call the tool plainly even when it says it must run as a task")
    p.add_argument("--task-id", metavar="ID", help="the task of tasks/get, tasks/result and tasks/cancel")
    p.add_argument("--uri", help="resource URI for resources/read, resources/subscribe and resources/unsubscribe "
                   "(with subscriptions/listen: a resource to follow too)")
    p.add_argument("--cursor", help="the page of resources/directory/read to read (a nextCursor it gave)")
    p.add_argument("--prompt-name", help="prompt for prompts/get")
    p.add_argument("--prompt-args", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="prompt arguments (repeatable, several after one flag)")
    p.add_argument("--ref", metavar="prompt:NAME|resource:URI", help="what completion/complete completes")
    p.add_argument("--argument", metavar="NAME=VALUE", help="the argument being completed")
    p.add_argument("--context", action="append", default=[], metavar="KEY=VALUE",
                   help="already-filled arguments sent as completion context (repeatable)")
    p.add_argument("--metadata", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="_meta entries sent with every request (repeatable, several after one flag)")
    p.add_argument("--tool-metadata", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="_meta entries sent with tools/call only (over --metadata)")
    p.add_argument("--elicit-accept", metavar="JSON",
                   help="answer every elicitation by accepting with this content (a JSON object)")
    p.add_argument("--elicit-decline", action="store_true", help="answer every elicitation by declining")
    p.add_argument("--sampling-reply", metavar="TEXT", help="answer every sampling request with this text")
    p.add_argument("--root", action="append", default=[], metavar="PATH",
                   help="a root folder offered to the server (repeatable)")
    p.add_argument("--log-level", choices=LOG_LEVELS, help="log level (logging/setLevel and logging/tail, or _meta "
                   "in 2026-07-28)")
    add_server_arguments(p, variadic=True)
    p.add_argument("--server-url", metavar="URL", help="the server's URL (the same as giving the URL as the target)")
    p.add_argument("--rename", metavar="NAME", help="servers/edit: the entry's new name")
    p.add_argument("--catalog", metavar="FILE", help="an mcpServers file to take --server from, created (empty) when "
                   "missing; the official inspector's writable catalog")
    p.add_argument("--use-stored-auth", action="store_true", help="send the OAuth access token the official "
                   "inspector stored for this URL (exit 3 when there is none)")
    p.add_argument("--stored-auth-only", action="store_true", help="never sign in interactively: a stored token "
                   "or --auth-token, else exit 3 when the server asks for authorization")
    p.add_argument("--list-stored-auth", action="store_true", help="print the official inspector's OAuth state "
                   "file and the server URLs it holds tokens for, then exit (no connection)")
    authflags.add_arguments(p)
    p.add_argument("--format", choices=FORMATS, default="text", help="text (default): the result as indented "
                   "JSON; json: one line {\"result\": ...}; human: the result for people")
    p.add_argument("-q", "--quiet", action="store_true", help="nothing on stderr but the error envelope")
    p.add_argument("--output", metavar="FILE", help="write the result to FILE instead of stdout")
    p.add_argument("--output-format", choices=("json", "raw"), help="--output as json (default) or raw: the "
                   "result's text, or the bytes of its one image, audio or blob (tools/call, resources/read)")
    p.add_argument("--strict", action="store_true", help="with tools/list: report every tool-schema portability "
                   "problem (path, issue, fix) on stderr, and exit 6 when one is an error")
    p.add_argument("--app-info", action="store_true", help="with tools/call: the tool's MCP App (its ui:// resource "
                   "and the resource's CSP, permissions, domain) without calling it, exit 2 when it has none; with "
                   "tools/list: one line per tool")
    p.add_argument("--advertise-apps", action="store_true", help="declare the MCP Apps extension (Spyglass always "
                   "does: accepted for the official CLI's scripts)")
    p.add_argument("--completion", choices=("bash", "zsh", "fish"), help="print a shell completion script for "
                   "spyglass and exit (no connection)")
    p.add_argument("--no-validate", action="store_true", help="send tool arguments without checking them")
    p.add_argument("--trace", metavar="FILE", help="write every frame to FILE as JSON Lines")
    p.add_argument("--session", metavar="FILE", help="write the whole session to FILE as a .mcpsession (secrets "
                   "masked), to open in the window, replay or diff")
    add_skills_arguments(p)
    add_load_arguments(p)
    p.add_argument("target", nargs="*", help=argparse.SUPPRESS)
    return p


VARIADIC = ("tool_arg", "prompt_args", "metadata", "tool_metadata")


def _untangle_target(args: argparse.Namespace) -> None:
    """`--tool-arg a=1 b=2` takes several pairs, as the official CLI's flags do; a URL written after them
    (Spyglass's `[options] URL` order) is the target, not a pair."""
    if args.command:
        return
    for dest in (*VARIADIC, "header"):
        items = getattr(args, dest)
        if items and items[-1].startswith(("http://", "https://")):
            args.command = [items.pop()]
            return


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    args = parse_with_command(build_parser(), official.official_order(list(argv)))
    _untangle_target(args)
    if args.timeout <= 0:
        raise E.UsageError("--timeout must be positive")
    try:
        args.mode = Mode.parse(protocol_of(args))
    except ValueError as exc:
        raise E.UsageError(str(exc)) from None
    if args.method is None:
        args.method = ("tools/call" if args.tool_name else "resources/read" if args.uri else
                       "prompts/get" if args.prompt_name else "tools/list")
    if args.server_url:
        if args.command:
            raise E.UsageError("give either --server-url or a server command, not both")
        args.command = [args.server_url]
    authflags.check(args)
    if args.rename is not None and args.method != "servers/edit":
        raise E.UsageError("--rename is only valid with --method servers/edit")
    if args.catalog:
        if args.config:
            raise E.UsageError("--catalog and --config are mutually exclusive")
        if args.method not in servers.WRITES:
            official.seed_catalog(args.catalog)
            args.config = args.catalog
    if args.output_format and not args.output:
        raise E.UsageError("--output-format requires --output FILE")
    if args.output_format == "raw" and args.method not in RAW_METHODS:
        raise E.UsageError("--output-format raw requires --method tools/call or resources/read")
    if args.strict and args.method != "tools/list":
        raise E.UsageError("--strict requires --method tools/list")
    if args.app_info and args.method not in ("tools/call", "tools/list"):
        raise E.UsageError("--app-info requires --method tools/call or tools/list")
    if args.app_info and (args.strict or args.output):
        raise E.UsageError("--app-info cannot be combined with --strict or --output")
    check_skills_arguments(args)
    check_load_arguments(args)
    return args


async def run(args: argparse.Namespace, out: TextIO, spec: ServerSpec | None = None,
              started: subprocess.Popen[bytes] | None = None) -> int:
    """The request `args` name, against `spec` (from the flags when not given), whose process may be
    `started` already (`transport.factory.start_process`)."""
    spec = spec or server_spec(args)
    if args.relogin:
        if spec.url is None:
            raise E.UsageError("--relogin requires an HTTP/SSE server URL (no OAuth store entry for stdio)")
        authflags.relogin(spec.url, args)
    if args.wait_for_auth is not None:
        if spec.url is None:
            raise E.UsageError("--wait-for-auth requires --server-url")
        args.auth_token = await authflags.wait_for_token(spec.url, args.wait_for_auth)
    elif args.use_stored_auth:
        if spec.url is None:
            raise E.UsageError("--use-stored-auth needs a server URL")
        args.auth_token = official.stored_token(spec.url)
    answers = FlagAnswers(args)
    roots = [root(path) for path in args.root] or None  # declared only when given
    trace, writers = recorders(args, spec)
    options = transport_options(spec, args, trace)
    opened = open_transport(spec, options, started=started)
    # Attach to the server before the session layer is imported: its readers first run at the next
    # await, when the client has attached to it.
    await opened.transport.open()
    if args.method == "tools/call" and not args.no_validate:
        preload("jsonschema")
    from ..session import ServerSession, SessionOptions

    session = ServerSession(spec, options=SessionOptions(
        mode=args.protocol, timeout=args.timeout, transport=options, load_lists=False, listen=False,
        heartbeat_s=None, log_level=args.log_level if args.method != "logging/setLevel" else None),
        answerer=answers, traffic=trace)
    session.roots = roots
    from . import streams  # (asyncio's modules are loaded by now: see main)

    stream = streams.Stream(session, args, out) if args.method in streams.STREAMS else None
    try:
        await session.open(opened)
        if args.protocol_era == "modern" and session.hello is not None and session.hello.result is None:
            raise E.VersionError("the server did not offer protocol 2026-07-28 through server/discover "
                                 f"({'; '.join(session.hello.warnings) or 'no discover result'}); --protocol-era "
                                 "modern does not fall back (--protocol modern goes on without it)")
        _metadata(session, args)
        if stream is not None:
            return await stream.run()
        if args.app_info:
            return await _app_info(session, args, out)
        if args.method in SKILLS_METHODS:
            return await skills_perform(session, args, out)
        if args.load:
            return await run_load(session, args, await _tool_arguments(session.need_client(), args), out)
        result = await perform(session, args)
        extra, unportable = _portability(result, args)
        if args.method == "tools/call" and args.format == "json":
            tool = session.need_client().tools.get(args.tool_name)
            if tool is not None and apps.has_app(tool):
                extra = {**(extra or {}), "appInfo": await appinfo.probe(session.need_client(), tool)}
        print_result(result, args, out, extra)
        if args.method == "tools/call" and isinstance(result, dict) and result.get("isError") is True:
            raise official.ToolIsError(f"tool {args.tool_name!r} returned isError: {first_text(result)}")
        if unportable:
            raise official.SchemaUnportable(f"{unportable} tool schema portability error"
                                            f"{'' if unportable == 1 else 's'} found (--strict)")
        return E.EXIT_OK
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
    from . import streams

    client = session.need_client()
    m = args.method
    if m == "initialize":
        hello = session.hello
        return {"serverInfo": hello.server_info, "protocolVersion": hello.protocol_version,
                "capabilities": hello.capabilities, "instructions": hello.instructions}
    if m in streams.TASKS:
        return await streams.task_method(session, args)
    if m == "resources/unsubscribe":
        return await streams.unsubscribe(session, args)
    if m == "resources/directory/read":
        if not args.uri:
            raise E.UsageError("resources/directory/read needs --uri")
        return await client.request(m, {"uri": args.uri, **({"cursor": args.cursor} if args.cursor else {})})
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

    arguments: dict[str, Any] = {}
    if args.tool_args_json:
        arguments = json_object(args.tool_args_json, "--tool-args-json", E.InvalidArguments)
    # as the official CLI does, a tool the server does not list is not called (exit 5, tool_not_found)
    tools = (await client.list_tools()).get("tools", [])
    tool = next((t for t in tools if isinstance(t, dict) and t.get("name") == args.tool_name), None)
    if tool is None:
        raise official.ToolNotFound(f"Tool '{args.tool_name}' not found on server.", tool=args.tool_name)
    schema = tool.get("inputSchema")
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


async def _app_info(session: Any, args: argparse.Namespace, out: TextIO) -> int:
    """--app-info: tools/list, one line per tool; tools/call, the one tool's app without calling it."""
    client = session.need_client()
    tools: list[dict[str, Any]] = [t for t in (await client.list_tools()).get("tools", []) if isinstance(t, dict)]
    if args.method == "tools/list":
        for each in tools:
            out.write(json.dumps(await appinfo.probe(client, each), ensure_ascii=False, separators=(",", ":")) + "\n")
        return E.EXIT_OK
    if not args.tool_name:
        raise E.UsageError("tools/call needs --tool-name")
    tool: dict[str, Any] | None = next((t for t in tools if t.get("name") == args.tool_name), None)
    if tool is None:
        raise official.ToolNotFound(f"Tool '{args.tool_name}' not found on server.", tool=args.tool_name)
    info = await appinfo.probe(client, tool)
    out.write(json.dumps({"appInfo": info} if args.format == "json" else info, ensure_ascii=False,
                         separators=(",", ":")) + "\n")
    if not info["hasApp"]:
        raise appinfo.NoApp(f"tool {args.tool_name!r} has no MCP App UI resource (_meta.ui.resourceUri)")
    return E.EXIT_OK


def _metadata(session: Any, args: argparse.Namespace) -> None:
    """`--metadata` on every request's `_meta`, `--tool-metadata` on tools/call's (over it)."""
    wire = session.need_client().session
    wire.user_meta = {k: _meta_value(v) for k, v in pairs(args.metadata, "--metadata")}
    wire.tool_meta = {k: _meta_value(v) for k, v in pairs(args.tool_metadata, "--tool-metadata")}


def _meta_value(text: str) -> Any:
    """A `_meta` value as the official CLI sends it: JSON when it parses, else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _portability(result: Any, args: argparse.Namespace) -> tuple[dict[str, Any] | None, int]:
    """tools/list: the schema portability problems (inspector.checks.portability). Without --strict a count
    on stderr; with it the full report on stderr (and `schemaFindings` in `--format json`), and the number of
    error-severity problems, which make the exit code 6."""
    if args.method != "tools/list" or not isinstance(result, dict):
        return None, 0
    from ..checks import portability

    reviewed = portability.review(result.get("tools") or [])
    if not reviewed:
        return None, 0
    if not args.strict:
        if not args.quiet:
            print(f"spyglass: schema portability: {portability.summary(reviewed)}; --strict for details",
                  file=sys.stderr)
        return None, 0
    print(visible(portability.report(reviewed)), file=sys.stderr)
    return {"schemaFindings": portability.as_json(reviewed)}, portability.counts(reviewed)[0]


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    with terminate_as_interrupt():  # SIGTERM as Ctrl+C: the server's group is ended, never left running
        return _main(argv, out)


def _main(argv: Sequence[str], out: TextIO | None) -> int:
    out = out or sys.stdout
    err = sys.stderr
    begun = time.monotonic()
    started = None
    options = official.official_order(list(argv))
    options = options[: options.index("--")] if "--" in options else options
    quiet = "-q" in options or "--quiet" in options
    try:
        if quiet:
            sys.stderr = _Silent()  # -q: only the error envelope reaches stderr
        args = parse_args(argv)
        if args.completion:
            from .completion import script

            out.write(script(args.completion, build_parser()))
            return E.EXIT_OK
        if args.load_compare:
            from .load_compare import run_compare

            return run_compare(args, out)
        if args.list_stored_auth:
            out.write(json.dumps(official.stored_urls(), ensure_ascii=False) + "\n")
            return E.EXIT_OK
        if args.print_handoff:
            if not args.server_url:  # as in the official CLI: a URL target is not enough
                raise E.UsageError("--print-handoff requires --server-url")
            block = authflags.handoff(args.server_url, args.transport)
            out.write(json.dumps(block, ensure_ascii=False, separators=(",", ":")) + "\n")
            return E.EXIT_OK
        if args.method in servers.METHODS:  # the servers of a file, no connection
            print_result(servers.run(args), args, out)
            return E.EXIT_OK
        authflags.apply_client_config(args)
        args.callback = authflags.callback(args)
        spec = server_spec(args)
        # A stdio server boots while the rest of Spyglass (asyncio first) imports: it takes longer
        # to start than anything here, so a one-shot call ends sooner.
        started = start_process(spec)
        import asyncio

        return asyncio.run(run(args, out, spec, started))
    except E.SpyglassError as exc:
        code, body = official.failure(exc)
        if exc.kind not in ("tool_error", "schema_unportable", "no_app"):  # those printed their result
            out.write(json.dumps({"error": body}, ensure_ascii=False) + "\n")
        print(f"spyglass: {visible(exc.message)}", file=sys.stderr)
        err.write(official.envelope_line(body))
        return code
    except KeyboardInterrupt:
        print("spyglass: interrupted", file=sys.stderr)
        return official.EXIT_INTERRUPTED
    except Exception as exc:  # pragma: no cover - only a bug of ours: still one line and a defined exit code
        body = {"code": "error", "kind": "internal", "message": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps({"error": body}) + "\n")
        print(f"spyglass: internal error: {type(exc).__name__}: {exc} (after {time.monotonic() - begun:.1f} s)",
              file=sys.stderr)
        err.write(official.envelope_line(body))
        return EXIT_INTERNAL
    finally:
        sys.stderr = err
        if started is not None:
            stop(started)  # interrupted before the transport took it over: no server is left behind


class _Silent:
    """stderr under -q: everything written is dropped."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
