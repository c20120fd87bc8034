"""`spyglass export SESSION OUT`: a session file written as something to share or load elsewhere —
`.mcpsession` (portable, secrets masked), HAR 1.2 (the HTTP servers' exchanges, for browser dev tools and
HTTP tools), OTLP/JSON traces, or OTLP/HTTP straight to a collector (`--otlp-endpoint URL`). The format
follows OUT's suffix unless `--format` says (docs/sessions.md, docs/export.md).

Exit codes: 0 written, 1 usage or a session that cannot be read, 4 a collector that cannot be reached.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from .. import errors as E
from .common import UsageParser, run_command, visible

FORMATS = ("mcpsession", "har", "otlp", "jsonl")


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog="spyglass export", description="Write a session as .mcpsession, HAR, OTLP or JSON Lines.",
                    epilog="Exit codes: 0 written, 1 usage or an unreadable session, 4 collector unreachable.")
    p.add_argument("session", help="a session file (.sqlite from the window, or .mcpsession)")
    p.add_argument("out", nargs="?", help="the file to write (its suffix chooses the format: .mcpsession, .har, "
                   ".otlp.json or .json, .jsonl)")
    p.add_argument("--format", choices=FORMATS, help="the format, whatever OUT's suffix")
    p.add_argument("--otlp-endpoint", metavar="URL", help="send OTLP/HTTP traces to this collector "
                   "(e.g. http://127.0.0.1:4318/v1/traces) instead of writing a file")
    p.add_argument("--drop-stderr", action="store_true", help=".mcpsession: leave the servers' stderr out")
    p.add_argument("--drop-server", action="append", default=[], metavar="NAME",
                   help="leave a server out (repeatable)")
    p.add_argument("--keep-secrets", action="store_true",
                   help=".mcpsession: do not mask secrets in the frames' bodies (definitions stay masked)")
    return p


def format_of(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    name = (args.out or "").lower()
    if name.endswith(".mcpsession"):
        return "mcpsession"
    if name.endswith(".har"):
        return "har"
    if name.endswith((".otlp.json", ".json")):
        return "otlp"
    if name.endswith(".jsonl"):
        return "jsonl"
    raise E.UsageError(f"cannot tell the format from {args.out!r}: name it .mcpsession, .har, .otlp.json or "
                       ".jsonl, or give --format")


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..recording.files import export_session, open_session

    opened = open_session(args.session)
    for problem in opened.problems:
        print(f"spyglass export: {args.session}: {visible(problem)}", file=sys.stderr)
    store = opened.store
    keep = [sid for sid, s in opened.surfaces.items() if sid not in args.drop_server and s.name not in
            args.drop_server]
    if args.otlp_endpoint:
        from ..recording.otlp import send_otlp

        spans = send_otlp(store, args.otlp_endpoint, servers=keep)
        out.write(f"sent {spans} spans to {args.otlp_endpoint}\n")
        return E.EXIT_OK
    if not args.out:
        raise E.UsageError("give the file to write (or --otlp-endpoint URL)")
    kind = format_of(args)
    if kind == "mcpsession":
        count = export_session(store, args.out, drop_stderr=args.drop_stderr, drop_servers=args.drop_server,
                               mask=not args.keep_secrets)
        what = "frames"
    elif kind == "har":
        from ..recording.har import export_har

        count, what = export_har(store, args.out, servers=keep), "HTTP exchanges"
    elif kind == "otlp":
        from ..recording.otlp import export_otlp_json

        count, what = export_otlp_json(store, args.out, servers=keep), "spans"
    else:
        rows = [n for n in range(len(store)) if store.server_id(n) in keep and not (
            args.drop_stderr and store.direction(n) == "err")]
        try:
            count, what = store.export_jsonl(args.out, rows), "frames"
        except OSError as exc:
            raise E.UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    out.write(f"wrote {count} {what} to {args.out}\n")
    return E.EXIT_OK


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    argv = list(argv)
    if argv[:1] == ["export"]:
        argv = argv[1:]
    return run_command("spyglass export", lambda: run(build_parser().parse_args(argv), stream))
