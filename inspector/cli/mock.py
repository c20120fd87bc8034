"""`spyglass mock SESSION [--server NAME] [--http PORT] [--strict] [--timing off|recorded|xN]`: a recorded
server answering again, over stdio (a host launches it as a command) or Streamable HTTP on loopback, in the
era it was recorded in (docs/mock.md).

Exit codes: 0 done (stdin closed, or Ctrl+C over HTTP), 9 with `--strict` when a request had no recorded
answer or differed from the recorded one (the report on stderr), 1 usage, a session that cannot be read or
has no server, 4 a port that cannot be had.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from .. import errors as E
from .common import UsageParser, run_command, visible

if TYPE_CHECKING:
    from ..mock.server import MockServer

PROG = "spyglass mock"


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog=PROG, description="Serve a recorded session's server as a mock: every request answered "
                    "as it was recorded.",
                    epilog="Exit codes: 0 done, 9 (--strict) unmatched or different requests, 1 usage or a "
                           "session that cannot be served, 4 the port cannot be had.")
    p.add_argument("session", metavar="SESSION|COLLECTION",
                   help="a session file (.sqlite from the window, or .mcpsession), or a collection (.yaml) whose "
                        "stored snapshots are served")
    p.add_argument("--server", metavar="NAME", help="which server of the session (needed when it has several)")
    p.add_argument("--http", type=int, metavar="PORT",
                   help="serve Streamable HTTP on 127.0.0.1:PORT (0: any free port) instead of stdio")
    p.add_argument("--strict", action="store_true",
                   help="at the end, report every unmatched or different request and exit 9 if there was one")
    p.add_argument("--timing", default="off", metavar="off|recorded|xN",
                   help="answer at once (off, the default), with the recorded delays, or N times as fast")
    p.add_argument("--era", choices=("recorded", "legacy", "modern"), default="recorded",
                   help="serve the recording in the other protocol era (default: the era it was recorded in)")
    p.add_argument("--stubs", metavar="FILE",
                   help="a YAML file of answers that come before the recording's (docs/mock.md#stubs)")
    return p


def timing_of(text: str) -> float | None:
    if text == "off":
        return None
    if text == "recorded":
        return 1.0
    if text[:1] in ("x", "×"):
        try:
            factor = float(text[1:])
        except ValueError:
            factor = 0.0
        if factor > 0:
            return factor
    raise E.UsageError(f"--timing {text!r}: use off, recorded, or xN (x2: twice as fast, x0.5: half as fast)")


def say(line: str) -> None:
    print(f"{PROG}: {visible(line)}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..mock.load import load
    from ..mock.server import MockServer

    timing = timing_of(args.timing)
    if args.http is not None and not 0 <= args.http <= 65535:
        raise E.UsageError(f"--http {args.http}: a port is 0 to 65535")
    stubs = []
    if args.stubs:
        from ..mock.stubs import load_stubs

        stubs = load_stubs(args.stubs)
    book, problems = load(args.session, args.server)
    for problem in problems:
        say(f"{args.session}: {problem}")
    mock = MockServer(book, timing=timing, say=say, stubs=stubs,
                      era=None if args.era == "recorded" else args.era)
    if args.http is None:
        from ..mock.stdio import serve_stdio

        serve_stdio(mock)
    else:
        asyncio.run(_http(mock, args.http))
    if args.strict:
        sys.stderr.write(visible(mock.report()))
        return E.EXIT_FINDINGS if mock.problems else E.EXIT_OK
    return E.EXIT_OK


async def _http(mock: MockServer, port: int) -> None:
    from ..mock.http import serve_http

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    surface = mock.book.surface

    def ready(bound: int) -> None:
        say(f"serving {surface.name} ({surface.revision or 'unknown revision'}) at http://127.0.0.1:{bound}/mcp")

    try:
        await serve_http(mock, port, ready, stop)
    except OSError as exc:
        # asyncio's strerror repeats the address ("error while attempting to bind on address (...): ..."): the
        # system's words for the errno are the reason
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise E.ConnectError(f"cannot listen on 127.0.0.1:{port}: {reason}") from None
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    argv = list(argv)
    if argv[:1] == ["mock"]:
        argv = argv[1:]
    return run_command(PROG, lambda: run(build_parser().parse_args(argv), stream))
