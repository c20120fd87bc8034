"""`spyglass pin`: connect to a server, list every tool, prompt, resource and resource template (every page),
and write a lock file of their definitions and hashes, so that `spyglass check --pinned FILE` (and the
window) can tell when one of them changes later (docs/security.md#pinning).

Exit codes: 0 written, 1 usage (or a file that cannot be written), 3 authorization, 4 connection, 7 timeout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from .. import errors as E
from ..private import write_private
from .common import (
    UsageParser,
    add_server_arguments,
    parse_with_command,
    protocol_of,
    run_command,
    server_spec,
    transport_options,
)
from .common import visible as _visible

DEFAULT_OUTPUT = "spyglass.pin.json"

_WORDS = {"tools": "tool", "resources": "resource", "resourceTemplates": "resource template", "prompts": "prompt"}


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog="spyglass pin", description="Pin an MCP server: write every tool, prompt, resource and "
                    "resource template it lists, with a sha256 of each, to a lock file that spyglass check "
                    "--pinned compares the server with later.",
                    epilog="Server: -- COMMAND [ARGS...] (stdio), URL (HTTP), or --config FILE --server NAME. "
                           "Exit codes: 0 written, 1 usage, 3 authorization required, 4 cannot connect, "
                           "7 timeout.")
    p.add_argument("--output", "-o", metavar="FILE", default=DEFAULT_OUTPUT,
                   help=f"the lock file to write (default {DEFAULT_OUTPUT}; written readable by you only)")
    add_server_arguments(p)
    p.add_argument("target", nargs="*", help=argparse.SUPPRESS)
    return p


async def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..checks.pin import collect, dumps, make_lock
    from ..checks.run import Decline
    from ..session import ServerSession, SessionOptions
    from ..transport.factory import open_transport

    spec = server_spec(args)
    options = transport_options(spec, args)
    session = ServerSession(spec, options=SessionOptions(
        mode=protocol_of(args), timeout=args.timeout, transport=options, load_lists=False, listen=False,
        heartbeat_s=None), answerer=Decline())
    session.roots = []  # the client check and the window are (sampling, elicitation, roots): some servers list
    try:                # tools only to a client that declares it can answer them
        await session.open(open_transport(spec, options))
        hello = session.hello
        assert hello is not None
        listings = await collect(session.need_client(), hello.capabilities)
    finally:
        await session.close()
    lock = make_lock(hello.server_info, listings, protocol=hello.protocol_version)
    try:
        write_private(args.output, dumps(lock))
    except OSError as exc:
        raise E.UsageError(f"--output {args.output}: {exc.strerror or exc}") from None
    counts = ", ".join(f"{len(items)} {_WORDS.get(section, section)}{'s' * (len(items) != 1)}"
                       for section, items in lock["definitions"].items())
    name = " ".join(str(lock["server"][k]) for k in ("name", "version") if k in lock["server"]) or spec.name
    out.write(_visible(f"pinned {name}: {counts or 'nothing listed'} -> {args.output}") + "\n")
    return E.EXIT_OK


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    argv = list(argv)
    if argv[:1] == ["pin"]:
        argv = argv[1:]

    def body() -> int:
        args = parse_with_command(build_parser(), argv)
        import asyncio

        return asyncio.run(run(args, stream))

    return run_command("spyglass pin", body)
