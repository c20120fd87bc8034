"""What every headless command shares: the server on the command line, how to reach it, the trace file,
and text that is safe to print to a terminal. Never imports Qt.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

from .. import errors as E
from ..config import ServerSpec, pick_server, url_problem
from ..portable import mask_frame
from ..private import open_private
from ..secrets import Tally, mask_url, secrets_of
from ..terminal import visible as visible  # re-exported: the commands print server text with it
from .official import duration_ms

if TYPE_CHECKING:
    from ..traffic.frame import Frame
    from ..transport.factory import TransportOptions

DEFAULT_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 15.0  # seconds (the official CLI's 15000 ms)


class UsageParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]  # usage errors exit 1, not argparse's 2
        raise E.UsageError(message)


def pairs(items: list[str], flag: str) -> list[tuple[str, str]]:
    """`KEY=VALUE` items of a repeatable flag."""
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise E.UsageError(f"{flag} expects KEY=VALUE, got {item!r}")
        out.append((key, value))
    return out


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


def add_target_arguments(p: argparse.ArgumentParser, *, variadic: bool = False) -> None:
    """Which server, and how it is started or reached: the same flags for the window and every headless
    command (what the window's *Copy as spyglass command* writes, both accept)."""
    p.add_argument("-e", dest="env", action="append", default=[], metavar="KEY=VALUE",
                   help="environment variable for the server (repeatable)")
    p.add_argument("--cwd", help="working directory for the server")
    p.add_argument("--transport", choices=("stdio", "http", "sse"),
                   help="force a transport (default: stdio for a command; for a URL, HTTP+SSE when it ends "
                        "in /sse, else Streamable HTTP with a fallback to HTTP+SSE)")
    if variadic:  # `--cli`: several after one flag, as the official CLI takes them
        p.add_argument("--header", action="extend", nargs="+", default=[], metavar='"NAME: VALUE"',
                       help="HTTP headers sent with every request (repeatable, several after one flag)")
    else:
        p.add_argument("--header", action="append", default=[], metavar='"NAME: VALUE"',
                       help="an HTTP header sent with every request (repeatable)")
    p.add_argument("--config", help="an mcpServers JSON file (Claude Desktop, Cursor, the official inspector)")
    p.add_argument("--server", help="the server's name in --config")
    p.add_argument("--sandbox", action="store_true",
                   help="run the server command confined: no network, your home folder hidden, writes only to "
                        "an empty temporary folder (Linux: bwrap or unshare; macOS: sandbox-exec)")


def add_server_arguments(p: argparse.ArgumentParser, *, variadic: bool = False) -> None:
    """How to name a server and reach it, for every headless command (`variadic`: `--header` takes several)."""
    add_target_arguments(p, variadic=variadic)
    p.add_argument("--auth-token", metavar="TOKEN", help="sent as Authorization: Bearer TOKEN")
    add_auth_arguments(p)
    p.add_argument("--connect-timeout", type=_connect_timeout, default=DEFAULT_CONNECT_TIMEOUT, metavar="MS",
                   help="HTTP connect timeout in milliseconds, as the official CLI has it, or with a unit: 10s, "
                        "500ms (default 15000; 0: none)")
    p.add_argument("--insecure", action="store_true",
                   help="do not verify TLS certificates (self-signed development servers only)")
    p.add_argument("--protocol", default="auto", metavar="auto|legacy|modern|VERSION",
                   help="protocol era, or an exact revision to ask for (default: auto)")
    p.add_argument("--protocol-era", choices=("legacy", "auto", "modern"),
                   help="the era, as the official CLI means it: like --protocol, but modern fails (exit 1) when "
                        "server/discover does not offer 2026-07-28")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help="per-request timeout; progress notifications reset it (default 60)")
    p.add_argument("--trace-context", action="store_true",
                   help="put a W3C traceparent in every request's _meta (a new trace per tools/call), so a "
                        "server that traces itself joins the traces `spyglass export` writes")


def _connect_timeout(text: str) -> float:
    try:
        seconds = duration_ms(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return NO_CONNECT_TIMEOUT if seconds is None else seconds


NO_CONNECT_TIMEOUT = 86400.0  # `--connect-timeout 0`: a day stands for none


def protocol_of(args: argparse.Namespace) -> str:
    """--protocol, or --protocol-era (which wins when both are given)."""
    era = getattr(args, "protocol_era", None)
    if era is not None:
        args.protocol = era
    return str(args.protocol)


def add_auth_arguments(p: argparse.ArgumentParser) -> None:
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


def json_object(text: str, flag: str, error: type[E.SpyglassError] = E.UsageError) -> dict[str, Any]:
    """A flag whose value is a JSON object (`--tool-args-json`, `--elicit-accept`); else `error` naming it."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise error(f"{flag} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise error(f"{flag} must be a JSON object")
    return value


_URL_SHAPED = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")  # ftp://…, http://[::1 : an address, not a command


def server_spec(args: argparse.Namespace) -> ServerSpec:
    """The server the flags name: a command, a URL, or an entry of --config."""
    if args.config:
        if args.command:
            raise E.UsageError("give either --config or a server command, not both")
        spec = pick_server(args.config, args.server)
    elif args.command:
        target = args.command
        if len(target) == 1 and _URL_SHAPED.match(target[0]) and (problem := url_problem(target[0])):
            raise E.UsageError(f"{mask_url(target[0])}: {problem}")
        if len(target) == 1 and target[0].startswith(("http://", "https://")):
            spec = ServerSpec(name=mask_url(target[0]), url=target[0])  # the name is shown and written
        elif target[0].startswith(("http://", "https://")):
            raise E.UsageError(f"a URL takes no further arguments: {' '.join(target[1:])}")
        else:
            spec = ServerSpec(name=os.path.basename(target[0]), command=list(target))
    else:
        raise E.UsageError("no server given: use a URL, -- COMMAND [ARGS...], or --config FILE --server NAME")
    spec.env.update(dict(pairs(args.env, "-e")))
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
    if getattr(args, "trace_context", False):
        spec.trace_context = True
    if getattr(args, "sandbox", False):
        if spec.url is not None:
            raise E.UsageError("--sandbox confines a server Spyglass starts (a command), not a URL")
        spec.sandbox = True
    return spec


def transport_options(spec: ServerSpec, args: argparse.Namespace, traffic: Any = None) -> TransportOptions:
    """How the flags say to reach `spec`: TLS, timeouts, token, and the OAuth flow when it applies."""
    from ..transport.factory import TransportOptions

    insecure = bool(getattr(args, "insecure", False))
    if insecure and spec.url is not None:
        print("spyglass: WARNING: --insecure: TLS certificates are NOT verified; anyone on the network path "
              "can read and change this traffic", file=sys.stderr)
    url = spec.url

    def auth() -> Any:
        from .auth import make_auth

        return make_auth(url, args, traffic) if url is not None else None

    interactive = not getattr(args, "stored_auth_only", False)  # else a 401 ends in exit 3, no sign-in
    return TransportOptions(connect_timeout=getattr(args, "connect_timeout", DEFAULT_CONNECT_TIMEOUT),
                            insecure=insecure, auth_token=getattr(args, "auth_token", None),
                            auth=auth if interactive else None)


class TraceWriter:
    """`--trace FILE`: one JSON object per frame, flushed as it comes, secrets masked as in a session file
    (also the server's own secrets, given `spec`, wherever a frame repeats them)."""

    META_KEYS = ("stream", "event_id", "status")

    def __init__(self, path: str, spec: ServerSpec | None = None) -> None:
        self.masked = Tally()
        if spec is not None:
            self.masked.learn(secrets_of(spec))
        try:
            self.fh: TextIO = open_private(path, "w", encoding="utf-8")
        except OSError as exc:
            raise E.UsageError(f"cannot write trace file {path}: {exc.strerror or exc}") from None

    def __call__(self, frame: Frame) -> None:
        text = mask_frame(frame.direction, frame.data, self.masked).decode("utf-8", errors="replace")
        record: dict[str, Any] = {"ts": round(frame.wall, 6), "dir": frame.direction, "text": text}
        if frame.meta:
            for key in self.META_KEYS:
                if frame.meta.get(key) is not None and frame.direction != "http":
                    record[key] = frame.meta[key]
        if frame.malformed:
            record["malformed"] = frame.malformed
        self.fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.fh.flush()

    def close(self) -> None:
        self.fh.close()


class SessionWriter:
    """`--session FILE`: every frame kept in memory, written as a `.mcpsession` when the command ends
    (what the window's *Export session…* writes), so a CI run leaves a session someone can open."""

    def __init__(self, path: str, spec: ServerSpec) -> None:
        from ..recording.files import definition_of
        from ..traffic import TrafficStore

        self.path = path
        self.store = TrafficStore(":memory:")
        self.server = spec.name
        self.known = secrets_of(spec)
        self.store.set_meta(f"server:{spec.name}", json.dumps(definition_of(spec), ensure_ascii=False))
        self.also: Callable[[Frame], None] | None = None  # --trace, when both are asked for

    def __call__(self, frame: Frame) -> None:
        self.store.add(self.server, frame)
        if self.also is not None:
            self.also(frame)

    def close(self) -> None:
        from ..recording.files import export_session

        export_session(self.store, self.path, known=self.known)


def recorders(args: argparse.Namespace, spec: ServerSpec) -> tuple[Any, list[Any]]:
    """The traffic hook of `--trace FILE` and `--session FILE` (either, both or none) and what to close."""
    trace = TraceWriter(args.trace, spec) if getattr(args, "trace", None) else None
    session = SessionWriter(args.session, spec) if getattr(args, "session", None) else None
    if session is not None:
        session.also = trace
        return session, [w for w in (trace, session) if w is not None]
    return trace, [trace] if trace is not None else []


EXIT_INTERNAL = 70
# the headless subcommands (`spyglass check …`): each a module of this package with `main(argv, out)`
SUBCOMMANDS = ("check", "replay", "diff", "export", "test", "tap", "pin", "audit", "doctor", "mock", "mcp", "do")


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM ends a headless command as Ctrl+C does (130, the server's process group ended first), rather
    than killing Spyglass on the spot and leaving its server running: whatever handles SIGINT at that moment
    (asyncio's, which cancels the run, or Python's, which raises KeyboardInterrupt) handles it."""
    if sys.platform == "win32":
        yield
        return

    def as_interrupt(signum: int, frame: Any) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    # Installed whatever was there (coverage's handler saves its data and kills the process on the spot, which
    # left the server running in CI); the previous handler is put back when the command is done.
    try:
        previous = signal.signal(signal.SIGTERM, as_interrupt)
    except ValueError:  # not the main thread: signals are not ours to choose
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def run_command(prog: str, body: Callable[[], int]) -> int:
    """Run a headless command: a SpyglassError ends in one line on stderr and its exit code, Ctrl+C (or
    SIGTERM) in 130, and a bug of ours in one line and EXIT_INTERNAL, never a traceback."""
    begun = time.monotonic()
    try:
        with terminate_as_interrupt():
            return body()
    except E.SpyglassError as exc:
        print(f"{prog}: {visible(exc.message)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # pragma: no cover - only a bug of ours: still one line and a defined exit code
        print(f"{prog}: internal error: {type(exc).__name__}: {exc} (after {time.monotonic() - begun:.1f} s)",
              file=sys.stderr)
        return EXIT_INTERNAL

