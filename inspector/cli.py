"""`spyglass --cli`: one request against one server, for scripts and CI.

Never imports Qt. Prints the method's result as JSON on stdout; on failure
prints `{"error": {...}}` on stdout and one human line on stderr, and exits with
the code documented in the README (see inspector.errors).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any, Sequence, TextIO

from . import errors as E
from .config import ServerSpec, pick_server
from .protocol.mode import Mode
from .protocol.versions import LOG_LEVELS

if TYPE_CHECKING:
    from .traffic.frame import Frame

METHODS = ("tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read",
           "prompts/list", "prompts/get", "completion/complete", "logging/setLevel", "ping", "server/discover")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors exit 1, not argparse's 2
        raise E.UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="spyglass --cli", add_help=True,
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
    p.add_argument("-e", dest="env", action="append", default=[], metavar="KEY=VALUE",
                   help="environment variable for the server (repeatable)")
    p.add_argument("--cwd", help="working directory for the server")
    p.add_argument("--transport", choices=("stdio", "http", "sse"),
                   help="force a transport (default: stdio for a command; for a URL, HTTP+SSE when it ends "
                        "in /sse, else Streamable HTTP with a fallback to HTTP+SSE)")
    p.add_argument("--header", action="append", default=[], metavar='"NAME: VALUE"',
                   help="an HTTP header sent with every request (repeatable)")
    p.add_argument("--auth-token", metavar="TOKEN", help="sent as Authorization: Bearer TOKEN")
    _auth_arguments(p)
    p.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="HTTP connect timeout (default 10)")
    p.add_argument("--insecure", action="store_true",
                   help="do not verify TLS certificates (self-signed development servers only)")
    p.add_argument("--config", help="an mcpServers JSON file (Claude Desktop, Cursor, the official inspector)")
    p.add_argument("--server", help="the server's name in --config")
    p.add_argument("--protocol", default="auto", metavar="auto|legacy|modern|VERSION",
                   help="protocol era, or an exact revision to ask for (default: auto)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="per-request timeout; progress notifications reset it (default 60)")
    p.add_argument("--format", choices=("json", "text"), default="json", help="output format")
    p.add_argument("--no-validate", action="store_true", help="send tool arguments without checking them")
    p.add_argument("--trace", metavar="FILE", help="write every frame to FILE as JSON Lines")
    p.add_argument("target", nargs="*", help=argparse.SUPPRESS)
    return p


def _auth_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("authorization (OAuth 2.1, when the server answers 401)",
                             "Secrets may be given as @FILE to read them from a file. Exit code 3 names the "
                             "step that failed.")
    g.add_argument("--client-id", metavar="ID", help="a client ID registered for this server (else a Client ID "
                   "Metadata Document or dynamic registration is used)")
    g.add_argument("--client-secret", metavar="SECRET|@FILE", help="the client secret of --client-id "
                   "(also read from SPYGLASS_CLIENT_SECRET)")
    g.add_argument("--scope", metavar="SCOPES", help="space-separated scopes to ask for (default: the server's "
                   "challenge, else its scopes_supported, else none)")
    g.add_argument("--auth-headless", action="store_true",
                   help="automation: fetch the authorization URL directly and follow its redirect instead of "
                        "opening a browser (for test authorization servers that approve at once)")
    g.add_argument("--auth-timeout", type=float, default=300.0, metavar="SECONDS",
                   help="how long to wait for the browser sign-in (default 300)")
    g.add_argument("--client-metadata-url", metavar="URL",
                   help="Spyglass's Client ID Metadata Document URL, used where the server supports them")
    g.add_argument("--grant", choices=("auto", "authorization_code", "client_credentials", "jwt-bearer",
                                       "enterprise"), default="auto",
                   help="how to get a token (default auto: from the credentials given and the server's metadata)")
    g.add_argument("--private-key", metavar="PEM|@FILE", help="private key for private_key_jwt client "
                   "authentication (client credentials)")
    g.add_argument("--signing-alg", default="ES256", metavar="ALG", help="algorithm of --private-key (ES256)")
    g.add_argument("--assertion", metavar="JWT|@FILE", help="a workload identity JWT for the JWT bearer grant")
    g.add_argument("--idp-id-token", metavar="JWT|@FILE", help="enterprise-managed authorization: your "
                   "identity provider's ID token")
    g.add_argument("--idp-token-endpoint", metavar="URL", help="the identity provider's token endpoint")
    g.add_argument("--idp-issuer", metavar="URL", help="the identity provider's issuer (discovers its endpoint)")
    g.add_argument("--idp-client-id", metavar="ID", help="Spyglass's client ID at the identity provider")
    g.add_argument("--idp-client-secret", metavar="SECRET|@FILE", help="its secret, if it has one")
    g.add_argument("--no-dpop", action="store_true", help="never bind tokens with DPoP")
    g.add_argument("--token-store", choices=("keyring", "memory"), default="keyring",
                   help="keep tokens in the OS keyring (default) or only for this run")


def _secret(value: str | None, flag: str) -> str | None:
    if value is None or not value.startswith("@"):
        return value
    try:
        with open(value[1:], encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError as exc:
        raise E.UsageError(f"{flag}: cannot read {value[1:]}: {exc.strerror or exc}") from None


def make_auth(url: str, args: argparse.Namespace, traffic: Any = None) -> Any:
    """The OAuth provider for an HTTP server, from the authorization flags. Its
    HTTP exchanges (secrets masked) go to `traffic` as "http" frames."""
    from .auth import (AuthSettings, CallbackObserver, HeadlessAuthorizer, KeyringStore, LoopbackAuthorizer,
                       MemoryStore, OAuthProvider)

    get = lambda name, default=None: getattr(args, name, default)  # noqa: E731 - args from tests may lack flags
    settings = AuthSettings(
        client_id=get("client_id"),
        client_secret=_secret(get("client_secret"), "--client-secret") or os.environ.get("SPYGLASS_CLIENT_SECRET")
        if get("client_id") else None,
        scope=get("scope"), grant=get("grant") or "auto", client_metadata_url=get("client_metadata_url"),
        private_key_pem=_secret(get("private_key"), "--private-key"), signing_alg=get("signing_alg") or "ES256",
        assertion=_secret(get("assertion"), "--assertion"), idp_id_token=_secret(get("idp_id_token"),
                                                                                 "--idp-id-token"),
        idp_token_endpoint=get("idp_token_endpoint"), idp_issuer=get("idp_issuer"),
        idp_client_id=get("idp_client_id"), idp_client_secret=_secret(get("idp_client_secret"),
                                                                      "--idp-client-secret"),
        dpop=not get("no_dpop", False))
    authorizer = HeadlessAuthorizer() if get("auth_headless", False) else LoopbackAuthorizer(
        timeout=get("auth_timeout", 300.0) or 300.0, open_url=_open_browser)
    warn = lambda text: print(f"spyglass: warning: {text}", file=sys.stderr)  # noqa: E731
    store = MemoryStore() if get("token_store") == "memory" else KeyringStore(on_warning=warn)
    observer = CallbackObserver(changed=_auth_exchanges_to(traffic)) if traffic is not None else None
    return OAuthProvider(url, settings, authorizer=authorizer, store=store, observer=observer)


def _auth_exchanges_to(traffic: Any) -> Any:
    """A step observer that records each new exchange of the flow once."""
    import time as _time

    from .traffic.frame import Frame

    written: dict[int, int] = {}

    def changed(step: Any) -> None:
        done = written.get(id(step), 0)
        for exchange in step.exchanges[done:]:
            record = {"auth_step": step.kind, "method": exchange.method, "url": exchange.url,
                      "status": exchange.status, "request_headers": exchange.request_headers,
                      "response_headers": exchange.response_headers, "error": exchange.error}
            mono = _time.monotonic()
            traffic(Frame("http", json.dumps(record, ensure_ascii=False).encode(), mono, _time.time(),
                          meta=record))
        written[id(step)] = len(step.exchanges)

    return changed


async def _open_browser(url: str) -> bool:
    import webbrowser

    print(f"spyglass: opening the browser to authorize; if it does not open, visit:\n  {url}", file=sys.stderr)
    return await asyncio.to_thread(webbrowser.open, url)


def parse_with_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """Options, and the server command after `--` (or, the official inspector's
    way, among the options when its own arguments have no dash): `args.command`."""
    argv = list(argv)
    command: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    args = parser.parse_intermixed_args(argv)
    if command and args.target:
        raise E.UsageError(f"unexpected arguments before --: {' '.join(args.target)}")
    args.command = command or args.target
    return args


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
    return args


def _pairs(items: list[str], flag: str) -> list[tuple[str, str]]:
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise E.UsageError(f"{flag} expects KEY=VALUE, got {item!r}")
        out.append((key, value))
    return out


def server_spec(args: argparse.Namespace) -> ServerSpec:
    if args.config:
        if args.command:
            raise E.UsageError("give either --config or a server command, not both")
        spec = pick_server(args.config, args.server)
    elif args.command:
        target = args.command
        if len(target) == 1 and target[0].startswith(("http://", "https://")):
            spec = ServerSpec(name=target[0], url=target[0])
        elif target[0].startswith(("http://", "https://")):
            raise E.UsageError(f"a URL takes no further arguments: {' '.join(target[1:])}")
        else:
            spec = ServerSpec(name=os.path.basename(target[0]), command=list(target))
    else:
        raise E.UsageError("no server given: use -- COMMAND [ARGS...] or --config FILE --server NAME")
    spec.env.update(dict(_pairs(args.env, "-e")))
    if args.cwd:
        spec.cwd = args.cwd
    for item in args.header:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise E.UsageError(f'--header expects "NAME: VALUE", got {item!r}')
        spec.headers[name.strip()] = value.strip()
    if args.transport:
        spec.transport = args.transport
    if spec.url is None and spec.transport in ("http", "sse"):
        raise E.UsageError(f"--transport {spec.transport} needs a URL")
    if spec.url is not None and spec.transport == "stdio":
        raise E.UsageError("--transport stdio needs a command, not a URL")
    return spec


def make_transport(spec: ServerSpec, args: argparse.Namespace, traffic: Any = None):
    """The transport for a server, and the fallback to try when it has no endpoint."""
    if spec.url is None:
        from .transport.stdio import StdioTransport

        return StdioTransport(spec.command, env=spec.env, cwd=spec.cwd), None
    from .transport.http import HttpSettings, HttpTransport
    from .transport.sse import SseTransport

    auth_token = getattr(args, "auth_token", None)
    has_auth_header = any(k.lower() == "authorization" for k in spec.headers)
    settings = HttpSettings(headers=spec.headers, auth_token=auth_token,
                            insecure=getattr(args, "insecure", False),
                            connect_timeout=getattr(args, "connect_timeout", 10.0),
                            auth=None if auth_token or has_auth_header else make_auth(spec.url, args, traffic))
    if settings.insecure:
        print("spyglass: WARNING: --insecure: TLS certificates are NOT verified; anyone on the network path "
              "can read and change this traffic", file=sys.stderr)
    kind = spec.transport or ("sse" if spec.url.rstrip("/").endswith("/sse") else None)
    if kind == "sse":
        return SseTransport(spec.url, settings), None
    fallback = None if kind == "http" else (lambda: SseTransport(spec.url, settings))
    return HttpTransport(spec.url, settings), fallback


class TraceWriter:
    """`--trace FILE`: one JSON object per frame, flushed as it comes."""

    def __init__(self, path: str) -> None:
        try:
            self.fh: TextIO = open(path, "w", encoding="utf-8")
        except OSError as exc:
            raise E.UsageError(f"cannot write trace file {path}: {exc.strerror or exc}") from None

    def __call__(self, frame: Frame) -> None:
        record: dict[str, Any] = {"ts": round(frame.wall, 6), "dir": frame.direction, "text": frame.text()}
        if frame.meta:
            for key in ("stream", "event_id", "status"):
                if frame.meta.get(key) is not None and frame.direction != "http":
                    record[key] = frame.meta[key]
        if frame.malformed:
            record["malformed"] = frame.malformed
        self.fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.fh.flush()

    def close(self) -> None:
        self.fh.close()


async def run(args: argparse.Namespace, out: TextIO) -> int:
    spec = server_spec(args)
    trace = TraceWriter(args.trace) if args.trace else None
    transport, fallback = make_transport(spec, args, trace)
    # Start the server first, so that it boots while the rest of Spyglass
    # imports: its readers first run at the next await, when the client below
    # has attached to it.
    await transport.open()
    if args.method == "tools/call" and not args.no_validate:
        _preload("jsonschema")
    from .client import Client

    client = Client(transport, mode=args.mode, timeout=args.timeout, handlers=_answers(args),
                    roots=[_root(path) for path in args.root] or None,  # declared only when given
                    log_level=args.log_level if args.method != "logging/setLevel" else None,
                    traffic=trace, fallback=fallback)
    try:
        await client.connect()
        result = await _perform(client, args)
        exit_code = E.EXIT_TOOL_ERROR if (args.method == "tools/call" and isinstance(result, dict)
                                          and result.get("isError") is True) else E.EXIT_OK
        _print_result(result, args, out)
        if exit_code == E.EXIT_TOOL_ERROR:
            print(f"spyglass: tool {args.tool_name!r} returned isError: {_first_text(result)}", file=sys.stderr)
        return exit_code
    finally:
        await client.close()
        auth = getattr(getattr(transport, "settings", None), "auth", None)
        if auth is not None and hasattr(auth, "aclose"):
            await auth.aclose()
        if trace:
            trace.close()


async def _perform(client: Any, args: argparse.Namespace) -> Any:
    m = args.method
    if m == "tools/list":
        result = await client.list_tools()
        for name, why in client.rejected_tools:
            print(f"spyglass: warning: tool {name!r} left out: {why}", file=sys.stderr)
        return result
    if m == "tools/call":
        if not args.tool_name:
            raise E.UsageError("tools/call needs --tool-name")
        arguments = await _tool_arguments(client, args)
        if (args.task is None or args.task) and not client.tools and client.tasks_exist:
            await client.list_tools()  # to know whether the tool must (or can) run as a task
        if args.task and client.tasks_exist:
            from .protocol.tasks import task_support

            if not client.runs_tool_tasks:
                print("spyglass: warning: the server does not declare tasks.requests.tools.call; asking for a "
                      "task anyway", file=sys.stderr)
            elif args.tool_name in client.tools and task_support(client.tools[args.tool_name]) == "forbidden":
                print(f"spyglass: warning: tool {args.tool_name!r} does not declare task support "
                      "(execution.taskSupport); asking for a task anyway", file=sys.stderr)
        return await client.call_tool(args.tool_name, arguments, on_progress=_progress_to_stderr,
                                      task=args.task, on_task=_task_to_stderr)
    if m == "resources/list":
        return await client.list_resources()
    if m == "resources/templates/list":
        return await client.list_resource_templates()
    if m == "resources/read":
        if not args.uri:
            raise E.UsageError("resources/read needs --uri")
        return await client.read_resource(args.uri)
    if m == "prompts/list":
        return await client.list_prompts()
    if m == "prompts/get":
        if not args.prompt_name:
            raise E.UsageError("prompts/get needs --prompt-name")
        return await client.get_prompt(args.prompt_name, dict(_pairs(args.prompt_args, "--prompt-args")))
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
        return {"roundTripMs": round(await client.ping() * 1000, 3)}
    if m == "server/discover":
        return await client.discover()
    raise E.UsageError(f"unknown method {m}")  # pragma: no cover - argparse restricts choices


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
    (name, value), = _pairs([args.argument], "--argument")
    return ref, {"name": name, "value": value}, dict(_pairs(args.context, "--context"))


async def _tool_arguments(client: Any, args: argparse.Namespace) -> dict[str, Any]:
    from .forms import validation

    schema: Any = None
    if args.tool_arg or not args.no_validate:
        tools = (await client.list_tools()).get("tools", [])
        tool = next((t for t in tools if isinstance(t, dict) and t.get("name") == args.tool_name), None)
        schema = tool.get("inputSchema") if tool else None
    arguments: dict[str, Any] = {}
    if args.tool_args_json:
        try:
            arguments = json.loads(args.tool_args_json)
        except ValueError as exc:
            raise E.InvalidArguments(f"--tool-args-json is not valid JSON: {exc}") from None
        if not isinstance(arguments, dict):
            raise E.InvalidArguments("--tool-args-json must be a JSON object")
    for key, value in _pairs(args.tool_arg, "--tool-arg"):
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
    return arguments


def _answers(args: argparse.Namespace) -> dict[str, Any]:
    """How the CLI answers what the server asks during a call (no one to ask)."""
    accept = None
    if args.elicit_accept is not None:
        try:
            accept = json.loads(args.elicit_accept)
        except ValueError as exc:
            raise E.UsageError(f"--elicit-accept is not valid JSON: {exc}") from None
        if not isinstance(accept, dict):
            raise E.UsageError("--elicit-accept must be a JSON object")

    async def elicit(params: dict[str, Any] | None) -> dict[str, Any]:
        message = str((params or {}).get("message", ""))[:200]
        if accept is not None:
            print(f"spyglass: elicitation {message!r}: accepted with --elicit-accept", file=sys.stderr)
            return {"action": "accept", "content": accept}
        if not args.elicit_decline:
            print(f"spyglass: elicitation {_visible(message)!r} declined (answer with --elicit-accept JSON)",
                  file=sys.stderr)
        return {"action": "decline"}

    async def sample(params: dict[str, Any] | None) -> dict[str, Any]:
        if args.sampling_reply is None:
            print("spyglass: sampling request declined (answer with --sampling-reply TEXT)", file=sys.stderr)
            raise E.RemoteError("sampling/createMessage", -1, "User rejected sampling request")
        return {"role": "assistant", "content": {"type": "text", "text": args.sampling_reply},
                "model": "spyglass-cli", "stopReason": "endTurn"}

    return {"elicitation/create": elicit, "sampling/createMessage": sample}


def _root(path: str) -> dict[str, str]:
    from pathlib import Path

    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise E.UsageError(f"--root {path}: not a folder")
    return {"uri": folder.as_uri(), "name": folder.name or str(folder)}


def _preload(module: str) -> None:
    import importlib
    import threading

    def load() -> None:
        try:
            importlib.import_module(module)
        except Exception:  # the real import later reports any problem
            pass

    threading.Thread(target=load, name=f"preload-{module}", daemon=True).start()


def _task_to_stderr(task: dict[str, Any]) -> None:
    from .protocol.tasks import describe

    print(f"spyglass: task {task.get('taskId')}: {describe(task)}", file=sys.stderr, flush=True)


def _progress_to_stderr(progress: Any, total: Any, message: str | None) -> None:
    if sys.stderr.isatty():
        share = f"{progress}/{total}" if total is not None else f"{progress}"
        print(f"\rspyglass: progress {share} {message or ''}", end="", file=sys.stderr, flush=True)


def _first_text(result: Any) -> str:
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text":
            return str(block.get("text", ""))[:300].replace("\n", " ")
    return "(no text)"


def _print_result(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    if args.format == "text":
        out.write(_as_text(args.method, result))
    else:
        out.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")


_CONTROL = {c: f"\\x{c:02x}" for c in range(32) if c not in (9, 10)}
_CONTROL[0x7F] = "\\x7f"
_CONTROL.update({c: f"<U+{c:04X}>" for c in (0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
                                            0x2066, 0x2067, 0x2068, 0x2069)})


def _visible(text: str) -> str:
    """Server text for a terminal: escapes and bidirectional controls made visible,
    so nothing a server sends can drive the terminal or disguise a name."""
    return text.translate(_CONTROL)


def _as_text(method: str, result: Any) -> str:
    return _visible(_as_text_raw(method, result))


def _as_text_raw(method: str, result: Any) -> str:
    lines: list[str] = []
    if method == "tools/call" and isinstance(result, dict):
        for block in result.get("content") or []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                lines.append(str(block.get("text", "")))
            elif kind in ("image", "audio"):
                lines.append(f"[{kind} {block.get('mimeType', '?')}, {len(str(block.get('data', ''))) * 3 // 4} bytes]")
            elif kind == "resource":
                res = block.get("resource") or {}
                lines.append(res.get("text") if isinstance(res.get("text"), str) else f"[resource {res.get('uri')}]")
            elif kind == "resource_link":
                lines.append(f"[link {block.get('uri')}]")
            else:
                lines.append(f"[{kind} content]")
        if not lines and "structuredContent" in result:
            lines.append(json.dumps(result["structuredContent"], indent=2, ensure_ascii=False))
    elif method.endswith("/list") and isinstance(result, dict):
        key = next((k for k in ("tools", "resources", "resourceTemplates", "prompts") if k in result), None)
        for item in result.get(key, []) if key else []:
            name = item.get("name") or item.get("uri")
            title = item.get("title") or (item.get("annotations") or {}).get("title")
            if isinstance(title, str) and title and title != name:
                name = f"{name} ({title})"
            desc = (item.get("description") or "").strip().splitlines()
            lines.append(f"{name}\t{desc[0] if desc else ''}")
    elif method == "resources/read" and isinstance(result, dict):
        for item in result.get("contents") or []:
            lines.append(item.get("text") if isinstance(item.get("text"), str) else f"[blob {item.get('uri')}]")
    elif method == "prompts/get" and isinstance(result, dict):
        for msg in result.get("messages") or []:
            content = msg.get("content") or {}
            text = content.get("text") if isinstance(content, dict) else None
            lines.append(f"{msg.get('role')}: {text if text is not None else json.dumps(content)}")
    else:
        return json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    out = out or sys.stdout
    started = time.monotonic()
    try:
        args = parse_args(argv)
        return asyncio.run(run(args, out))
    except E.SpyglassError as exc:
        out.write(json.dumps({"error": exc.as_json()}, ensure_ascii=False) + "\n")
        print(f"spyglass: {_visible(exc.message)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("spyglass: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug of ours: still one line and a defined exit code
        out.write(json.dumps({"error": {"kind": "internal", "message": f"{type(exc).__name__}: {exc}"}}) + "\n")
        print(f"spyglass: internal error: {type(exc).__name__}: {exc} (after {time.monotonic() - started:.1f} s)",
              file=sys.stderr)
        return 70
