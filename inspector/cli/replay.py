"""`spyglass replay SESSION [--server NAME] [--ignore POINTER …] -- COMMAND… | URL`: send a recorded
session's requests to a server (a new build, say) and compare every answer with the recorded one
(docs/sessions.md).

Exit codes: 0 every answer matches, 9 at least one differs (or could not be had), and the usual codes
when the replay could not run (1 usage or an unreadable session, 3 authorization, 4 connection, 7 timeout).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from .. import errors as E
from .common import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_TIMEOUT,
    UsageParser,
    add_target_arguments,
    parse_with_command,
    run_command,
    server_spec,
    transport_options,
    visible,
)


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog="spyglass replay", description="Replay a recorded session's requests against a server "
                    "and compare every answer with the recorded one.",
                    epilog="Server: -- COMMAND [ARGS...] (stdio) or URL; none: the server as recorded. Exit codes: "
                           "0 every answer matches, 9 differences, 1 usage, 3 authorization, 4 cannot connect, "
                           "7 timeout.")
    p.add_argument("session", help="a session file (.sqlite from the window, or .mcpsession)")
    p.add_argument("--session-server", dest="recorded", metavar="NAME",
                   help="which server of the session to replay (needed when it has several)")
    p.add_argument("--ignore", action="append", default=[], metavar="POINTER",
                   help="a JSON pointer into each answer's result not to compare, e.g. /content/0/text "
                        "(repeatable; _meta, ids and timestamps are never compared)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format (default text)")
    add_target_arguments(p)
    p.add_argument("--auth-token", metavar="TOKEN", help="sent as Authorization: Bearer TOKEN")
    p.add_argument("--connect-timeout", type=float, default=DEFAULT_CONNECT_TIMEOUT, metavar="SECONDS")
    p.add_argument("--insecure", action="store_true", help="do not verify TLS certificates")
    p.add_argument("--protocol", default="auto", metavar="auto|legacy|modern|VERSION",
                   help="protocol era of the new server (default: auto)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help="per-request timeout (default 60)")
    p.add_argument("target", nargs="*", help=argparse.SUPPRESS)
    return p


def parse(argv: Sequence[str]) -> argparse.Namespace:
    argv = list(argv)
    # `--server NAME` picks the recorded server (the spelling) unless --config names a file
    if "--server" in argv and "--config" not in argv[: argv.index("--") if "--" in argv else len(argv)]:
        argv[argv.index("--server")] = "--session-server"
    args = parse_with_command(build_parser(), argv)
    from ..recording.compare import valid_pointer

    for pointer in args.ignore:
        if not valid_pointer(pointer):
            raise E.UsageError(f"--ignore {pointer!r} is not a JSON pointer (it starts with /, e.g. /content/0/text)")
    return args


async def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..recording.files import open_session, spec_of
    from ..recording.replay import RecordedAnswers, replay
    from ..session import ServerSession, SessionOptions
    from ..transport.factory import open_transport

    opened = open_session(args.session)
    for problem in opened.problems:
        print(f"spyglass replay: {args.session}: {visible(problem)}", file=sys.stderr)
    surface = opened.surface(args.recorded)
    if args.command or args.config:
        spec = server_spec(args)
    elif surface.definition and (surface.definition.get("command") or surface.definition.get("url")):
        spec = spec_of(surface.definition)
        print(f"spyglass replay: no server given: replaying against {surface.name} as recorded", file=sys.stderr)
    else:
        raise E.UsageError("no server given: use -- COMMAND [ARGS...] or URL (the session does not say how its "
                           "server was started)")
    options = transport_options(spec, args)
    answers = RecordedAnswers(surface)
    session = ServerSession(spec, options=SessionOptions(mode=args.protocol, timeout=args.timeout, transport=options,
                                                         load_lists=False, listen=False, heartbeat_s=None),
                            answerer=answers)
    session.roots = answers.roots
    try:
        await session.open(open_transport(spec, options))
        report = await replay(surface, session, ignore=args.ignore, timeout=args.timeout,
                              target=" ".join(spec.command) if spec.command else spec.url)
    finally:
        await session.close()
    for method in answers.declined:
        print(f"spyglass replay: the server asked {method}, which the recording has no answer for: declined",
              file=sys.stderr)
    if args.format == "json":
        out.write(json.dumps(report.as_json(), indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        out.write(visible(report.text()))
    return E.EXIT_FINDINGS if report.differs else E.EXIT_OK


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    argv = list(argv)
    if argv[:1] == ["replay"]:
        argv = argv[1:]

    def body() -> int:
        args = parse(argv)
        import asyncio

        return asyncio.run(run(args, stream))

    return run_command("spyglass replay", body)
