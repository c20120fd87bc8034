"""`spyglass tap [--session FILE | --no-session] [--name NAME] [--no-live] [-e KEY=VALUE] [--cwd DIR] --
COMMAND…`: what a host (Claude Desktop, Cursor…) launches instead of its stdio server. Every byte goes
through unchanged both ways; the conversation is kept in a session file and shown live in a running
Spyglass window (docs/tap.md). `spyglass tap --listen HOST:PORT URL` does the same for a remote server,
as a local reverse proxy.

It starts before the server does, so it imports as little as it can: not `cli.common` (the server
flags and the transports it loads), not asyncio; the server is started before the recorder is even
imported, and boots while the rest loads.

Exit codes: the server's own (killed by a signal N: 128+N); 1 usage; 4 the server could not be started.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .. import errors as E

if TYPE_CHECKING:
    from ..tap.record import TapRecorder

PROG = "spyglass tap"
EXIT_INTERNAL = 70  # as cli.common's: a bug of ours, one line and this code
NO_HTTP_INTERCEPT = "intercept works with stdio taps only; this is an HTTP tap (--listen)"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]  # usage errors exit 1, not argparse's 2
        raise E.UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Pass a host's MCP server through Spyglass: every byte unchanged, the "
                                       "conversation recorded and shown live in the window.",
                epilog="Server: -- COMMAND [ARGS...] (stdio), or --listen HOST:PORT URL (a remote server). Exit "
                       "codes: the server's own (a signal N: 128+N), 1 usage, 4 the server could not be started.")
    p.add_argument("--session", metavar="FILE", help="record into this .mcpsession file (default: a new file in "
                                                     "Spyglass's sessions folder)")
    p.add_argument("--no-session", action="store_true", help="record nothing to disk (the window still sees it)")
    p.add_argument("--name", help="the server's name in the session and the window (default: the program's name, "
                                  "or the URL's host)")
    p.add_argument("--no-live", action="store_true", help="do not feed a running Spyglass window")
    p.add_argument("-e", dest="env", action="append", default=[], metavar="KEY=VALUE",
                   help="environment variable for the server (repeatable)")
    p.add_argument("--cwd", help="working directory for the server")
    g = p.add_argument_group("a remote server")
    g.add_argument("--listen", metavar="HOST:PORT", help="serve a reverse proxy to URL here (port 0: any free "
                                                         "port); the host then connects to http://HOST:PORT/")
    g.add_argument("--allow-remote", action="store_true", help="let --listen take an address other than loopback "
                                                               "(anyone who reaches it talks to the server as you)")
    g.add_argument("--insecure", action="store_true", help="with --listen: do not verify the remote server's TLS "
                                                           "certificate (self-signed development servers only)")
    h = p.add_argument_group("a host's configured server")
    h.add_argument("--install", metavar="HOST:NAME", help="rewrite HOST's config so its server NAME runs through the "
                   "tap (HOST: claude-desktop, cursor, vscode, claude-code); a backup is kept beside the file")
    h.add_argument("--uninstall", metavar="HOST:NAME", help="put HOST's server NAME back exactly as it was")
    h.add_argument("--config", metavar="FILE", help="with --install/--uninstall: this config file (HOST may then be "
                                                    "left out: --install :NAME)")
    h.add_argument("--port", type=int, metavar="PORT", help="with --install of a URL server: the local proxy's port "
                                                            "(0: pick a free one)")
    h.add_argument("--dry-run", action="store_true", help="with --install/--uninstall: print the change, write nothing")
    p.add_argument("target", nargs="*", help=argparse.SUPPRESS)
    return p


def parse(argv: Sequence[str]) -> argparse.Namespace:
    argv = list(argv)
    command: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    args = build_parser().parse_intermixed_args(argv)
    if args.session and args.no_session:
        raise E.UsageError("give --session FILE or --no-session, not both")
    if args.install or args.uninstall:
        if args.install and args.uninstall:
            raise E.UsageError("give --install or --uninstall, not both")
        if command or args.target or args.listen is not None:
            raise E.UsageError("--install/--uninstall change a host's config; they take no server (-- COMMAND, URL)")
        host, sep, name = (args.install or args.uninstall).rpartition(":")
        if not sep or not name or not (host or args.config):
            raise E.UsageError("--install and --uninstall take HOST:NAME (claude-desktop:filesystem), or :NAME "
                               "with --config FILE")
        args.host_kind, args.server_name = host, name
        return args
    if args.config or args.dry_run or args.port is not None:
        raise E.UsageError("--config, --port and --dry-run go with --install or --uninstall")
    if args.listen is not None:
        if command or len(args.target) != 1:
            raise E.UsageError("--listen HOST:PORT takes one URL (the remote server), and no command")
        url = args.target[0]
        if not url.startswith(("http://", "https://")):
            raise E.UsageError(f"--listen forwards to an http:// or https:// URL, not {url!r}")
        if args.env or args.cwd:
            raise E.UsageError("-e and --cwd are for a server the tap starts (-- COMMAND…), not a URL")
        args.host, args.port = listen_address(args.listen, args.allow_remote)
        args.url, args.command = url, []
        return args
    if args.allow_remote or args.insecure:
        raise E.UsageError(f"{'--allow-remote' if args.allow_remote else '--insecure'} goes with --listen")
    if args.target and command:
        raise E.UsageError(f"unexpected arguments before --: {' '.join(args.target)}")
    args.command = command or args.target
    if not args.command:
        raise E.UsageError("no server given: spyglass tap [OPTIONS] -- COMMAND [ARGS...]")
    if args.command[0].startswith(("http://", "https://")):
        raise E.UsageError("a URL is tapped with --listen HOST:PORT URL")
    args.env_pairs = {}
    for item in args.env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise E.UsageError(f"-e expects KEY=VALUE, got {item!r}")
        args.env_pairs[key] = value
    return args


def listen_address(text: str, allow_remote: bool) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:PORT` for IPv6; a bare PORT is on 127.0.0.1) checked by the HTTP tap's own rules:
    a port number, and loopback unless `allow_remote`."""
    from ..tap.http import check_listen, parse_listen

    host, port = parse_listen(text)
    check_listen(host, allow_remote)
    return host, port


def definition(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """What the session keeps of the server (as `recording.files.definition_of` writes it for a spec;
    the recorder masks the env values)."""
    if args.listen is not None:
        return {"name": name, "transport": "http", "url": args.url}
    out: dict[str, Any] = {"name": name, "transport": "stdio", "command": list(args.command)}
    if args.cwd:
        out["cwd"] = args.cwd
    if args.env_pairs:
        out["env"] = dict(args.env_pairs)
    return out


def default_name(args: argparse.Namespace) -> str:
    if args.name:
        return str(args.name)
    if args.listen is not None:
        from urllib.parse import urlsplit

        return str(urlsplit(args.url).hostname or args.url)
    return str(os.path.basename(args.command[0]) or args.command[0])


def recorder_for(args: argparse.Namespace, name: str, listener: Any = None,
                 hello: dict[str, Any] | None = None) -> TapRecorder:
    from ..tap.record import TapRecorder, default_session_path

    path = None if args.no_session else Path(args.session) if args.session else default_session_path(name)
    return TapRecorder(path, server_id=name, definition=definition(args, name), host=None, live=not args.no_live,
                       listener=listener, hello=hello)


class Unrecorded:
    """--no-session --no-live: nobody would read the record, so none is made (the recorder would still
    parse every frame)."""

    def chunk(self, direction: str, data: bytes) -> None:
        pass

    def frame(self, direction: str, data: bytes, meta: dict[str, Any] | None = None) -> None:
        pass

    def close(self) -> None:
        pass


def run_stdio(args: argparse.Namespace) -> int:
    from ..tap.stdio import StdioTap

    name = default_name(args)
    recorded = not (args.no_session and args.no_live)
    try:
        tap = StdioTap(args.command, env=args.env_pairs, cwd=args.cwd)
    except E.ConnectError as exc:
        if recorded:  # the window and the session say why the server is missing
            failed = recorder_for(args, name)
            failed.note(exc.message)
            failed.close()
        raise
    try:  # the server boots meanwhile
        port = tap.window_port(name) if not args.no_live else None  # intercept, when a window asks for it
        recorder = recorder_for(args, name, port) if recorded else Unrecorded()
    except BaseException:
        tap.stop()
        raise
    try:
        return tap.run(recorder)
    finally:
        recorder.close()


def run_listen(args: argparse.Namespace) -> int:
    from ..tap.http import run_proxy

    def ready(port: int) -> None:
        shown = f"[{args.host}]" if ":" in args.host else args.host
        print(f"{PROG}: listening on http://{shown}:{port}/ (forwarding to {args.url})", file=sys.stderr, flush=True)

    if args.insecure:
        print(f"{PROG}: WARNING: --insecure: the remote server's TLS certificate is NOT verified; anyone on the "
              "network path can read and change this traffic", file=sys.stderr)
    recorder = recorder_for(args, default_name(args), hello={"intercept": 0,
                                                             "intercept_unavailable": NO_HTTP_INTERCEPT})
    try:
        return int(run_proxy(args.host, args.port, args.url, recorder, ready=ready, allow_remote=args.allow_remote,
                             insecure=args.insecure))
    finally:
        recorder.close()


def tap_command() -> list[str]:
    """How a host starts this Spyglass: the bundle's own program, or this Python with the package."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    return [sys.executable, "-m", "inspector"]


def config_for(kind: str, name: str, path: str | None) -> Any:
    """The config the user means: FILE, or the host's own file(s) that name the server."""
    from ..tap import install

    if path:
        return install.read(path, kind or None)
    known = sorted({h.kind for h in install.hosts()})
    if kind not in known:
        raise E.UsageError(f"no host {kind!r}: one of {', '.join(known)} (or --config FILE)")
    found = []
    for h in install.hosts():
        if h.kind == kind and h.exists:
            config = install.read(h.path, kind)
            if name in config.names:
                found.append(config)
    if not found:
        where = ", ".join(str(h.path) for h in install.hosts() if h.kind == kind)
        raise E.UsageError(f"{install.KINDS.get(kind, kind)} has no server named {name!r} (looked in {where})")
    if len(found) > 1:
        raise E.UsageError(f"{name!r} is in {len(found)} configs of {kind}: "
                           + ", ".join(str(c.path) for c in found) + "; choose one with --config FILE")
    return found[0]


def run_install(args: argparse.Namespace) -> int:
    from ..tap import install

    config = config_for(args.host_kind, args.server_name, args.config)
    if args.install:
        change = install.plan_tap(config, args.server_name, tap_command=tap_command(), port=args.port)
    else:
        change = install.plan_untap(config, args.server_name)
    print(change.preview())
    for note in change.notes:
        print(f"note: {note}")
    if args.dry_run:
        print("(dry run: nothing written)")
        return E.EXIT_OK
    install.apply(change)
    done = "now runs through the tap" if args.install else "is back as it was"
    print(f"{args.server_name} {done} in {config.path}; restart {config.label} for it to take effect"
          + (f" (the original file is kept in {config.backup_path})" if args.install else ""))
    if change.proxy_command:
        import shlex

        print(f"while {config.label} uses it, run: {shlex.join(change.proxy_command)}")
    return E.EXIT_OK


def guarded(body: Callable[[], int]) -> int:
    """As `cli.common.run_command` (not imported: it is heavy): one line on stderr and the documented exit
    code, never a traceback."""
    try:
        return body()
    except E.SpyglassError as exc:
        print(f"{PROG}: {exc.message}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # pragma: no cover - only a bug of ours: still one line and a defined exit code
        print(f"{PROG}: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    """`out` is unused: the tap's stdout belongs to the host's protocol."""
    argv = list(argv)
    if argv[:1] == ["tap"]:
        argv = argv[1:]

    def body() -> int:
        args = parse(argv)
        if args.install or args.uninstall:
            return run_install(args)
        return run_listen(args) if args.listen is not None else run_stdio(args)

    return guarded(body)
