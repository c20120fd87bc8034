"""`spyglass doctor URL | -- COMMAND… | --server NAME`: why a server does not connect. The steps of a
connection run in order and stop at the first that fails, each with what was seen, how long it took and
the fix (docs/doctor.md). Text for a person, `--format json` for a script.

Exit codes: 0 connected; otherwise the failing step's: 1 a bad URL or usage, 3 authorization, 4 could not
start or connect, 7 no answer in time, 8 an answer that is not MCP (a log line on stdout, an HTML page).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from .. import errors as E
from ..config import ServerSpec
from ..terminal import dumps
from .common import UsageParser, add_target_arguments, parse_with_command, run_command, server_spec, visible

DEFAULT_TIMEOUT = 10.0


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog="spyglass doctor", description="Find where a connection to an MCP server breaks, "
                    "and what to do about it.",
                    epilog="Server: URL, -- COMMAND [ARGS...], --server NAME (the window's catalog), or "
                           "--config FILE --server NAME. Exit codes: 0 connected; else the failing step's: 1 "
                           "usage or a bad URL, 3 authorization, 4 cannot start or connect, 7 timeout, 8 an "
                           "answer that is not MCP.")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format (default text)")
    p.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help="the longest wait of any one step: a DNS answer, a connection, a handshake (default 10)")
    p.add_argument("--auth-token", metavar="TOKEN", help="sent as Authorization: Bearer TOKEN")
    p.add_argument("--client-id", metavar="ID", help="an OAuth client ID registered for this server")
    p.add_argument("--trust-certificate", action="store_true",
                   help="with --server NAME (the catalog): trust the certificate the server shows now, for this "
                        "server only, pinned by its SHA-256 fingerprint, then check again")
    add_target_arguments(p)
    p.add_argument("target", nargs="*", help=argparse.SUPPRESS)
    return p


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 600:
        raise argparse.ArgumentTypeError(f"{text} seconds: give more than 0, at most 600")
    return value


def doctor_spec(args: argparse.Namespace) -> tuple[ServerSpec, str | None]:
    """The server to examine, and its catalog id when it came from the catalog (`--server` alone)."""
    if args.server and not args.config and not args.command:
        from ..catalog import Catalog

        catalog = Catalog().load()
        entry = catalog.find(args.server)
        if entry is None:
            names = ", ".join(e.name for e in catalog) or "none"
            raise E.UsageError(f"no server named {args.server!r} in the catalog (servers: {names})")
        return entry.spec, entry.id
    return server_spec(args), None


def trust_certificate(server_id: str | None, spec: ServerSpec, timeout: float) -> str:
    """Pin the certificate `spec`'s server shows now in its catalog entry; the fingerprint pinned."""
    import asyncio

    from ..catalog import Catalog
    from ..doctor.pinning import current_fingerprint

    if server_id is None:
        raise E.UsageError("--trust-certificate needs --server NAME of the catalog: the pin is kept there, for "
                           "that server only")
    if spec.url is None or not spec.url.startswith("https://"):
        raise E.UsageError("--trust-certificate applies to an https:// server")
    pin = asyncio.run(current_fingerprint(spec.url, timeout))
    catalog = Catalog().load()
    entry = catalog.get(server_id)
    entry.spec.tls_pin = pin
    catalog.save()
    spec.tls_pin = pin
    return pin


def run(args: argparse.Namespace, out: TextIO) -> int:
    import asyncio

    from ..doctor import DoctorOptions, diagnose
    from ..doctor.tls import shown_fingerprint

    spec, server_id = doctor_spec(args)
    if args.trust_certificate:
        pin = trust_certificate(server_id, spec, args.timeout)
        print(f"spyglass doctor: trusting the certificate {shown_fingerprint(pin)} for {visible(spec.name)} only",
              file=sys.stderr)
    options = DoctorOptions(timeout=args.timeout, auth_token=args.auth_token, client_id=args.client_id)
    report = asyncio.run(diagnose(spec, options))
    if args.format == "json":
        out.write(dumps(report.as_json(), indent=2) + "\n")
    else:
        out.write(report.as_text())
    return report.exit_code


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    argv = list(argv)
    if argv[:1] == ["doctor"]:
        argv = argv[1:]
    return run_command("spyglass doctor", lambda: run(parse_with_command(build_parser(), argv), stream))
