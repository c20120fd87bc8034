"""`spyglass diff A B`: what changed between two servers — each a session file, or a live server given
as `--a URL`, `--a "COMMAND ARGS"` or, for the last one, `--b -- COMMAND ARGS…` (docs/sessions.md).
Compares capabilities, protocol revision, instructions, tools, resources, templates and prompts.

Exit codes: 0 the same, 9 different, 1 usage or an unreadable session, 3/4/7 a live server that could not
be reached.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .. import errors as E
from ..config import ServerSpec
from ..secrets import mask_url
from .common import DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, UsageParser, run_command, transport_options, visible

if TYPE_CHECKING:
    from ..recording.surface import ServerSurface


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog="spyglass diff", description="Compare two MCP servers: session files or live servers.",
                    epilog="A and B: a session file (.sqlite or .mcpsession), a URL, or a command: --a 'python "
                           "old.py' --b -- python new.py. Exit codes: 0 the same, 9 different, 1 usage, "
                           "4 cannot connect, 7 timeout.")
    p.add_argument("sides", nargs="*", metavar="A B", help="session files or URLs")
    p.add_argument("--server", metavar="NAME", help="which server of a session file with several (both sides)")
    p.add_argument("--server-a", metavar="NAME", help="which server of A")
    p.add_argument("--server-b", metavar="NAME", help="which server of B")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format (default text)")
    p.add_argument("--protocol", default="auto", metavar="auto|legacy|modern|VERSION",
                   help="protocol era for live servers (default: auto)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS")
    p.add_argument("--connect-timeout", type=float, default=DEFAULT_CONNECT_TIMEOUT, metavar="SECONDS")
    p.add_argument("--auth-token", metavar="TOKEN", help="sent as Authorization: Bearer TOKEN to live HTTP servers")
    p.add_argument("--insecure", action="store_true", help="do not verify TLS certificates")
    return p


def split_sides(argv: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """`--a VALUE` / `--b VALUE`, and `--a -- COMMAND…` (the rest of the line): taken out of argv."""
    rest: list[str] = []
    sides: dict[str, list[str]] = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        if token in ("--a", "--b"):
            side = token[2:]
            if side in sides:
                raise E.UsageError(f"{token} given twice")
            if i + 1 >= len(argv):
                raise E.UsageError(f"{token} needs a session file, a URL or a command")
            if argv[i + 1] == "--":
                if len(argv) <= i + 2:
                    raise E.UsageError(f"{token} -- needs a command")
                sides[side] = argv[i + 2:]
                break
            value = argv[i + 1]
            sides[side] = [value] if _is_file_or_url(value) else shlex.split(value)
            i += 2
            continue
        rest.append(token)
        i += 1
    return rest, sides


def _is_file_or_url(value: str) -> bool:
    return value.startswith(("http://", "https://")) or Path(value).exists()


async def surface_of(side: list[str], args: argparse.Namespace, server: str | None, label: str,
                     ) -> tuple[ServerSurface, str]:
    """One side's surface, and how the report names it."""
    from ..recording.files import open_session
    from ..recording.live import record_surface
    from ..session import SessionOptions

    if len(side) == 1 and not side[0].startswith(("http://", "https://")):
        opened = open_session(side[0])
        for problem in opened.problems:
            print(f"spyglass diff: {side[0]}: {visible(problem)}", file=sys.stderr)
        surface = opened.surface(server)
        return surface, f"{surface.name} ({Path(side[0]).name})"
    if side[0].startswith(("http://", "https://")):
        if len(side) > 1:
            raise E.UsageError(f"{label}: a URL takes no further arguments")
        spec = ServerSpec(name=mask_url(side[0]), url=side[0])  # the name is shown and written
    else:
        name = shlex.join(side)
        spec = ServerSpec(name=name if len(name) <= 60 else name[:59] + "…", command=side)
    options = SessionOptions(mode=args.protocol, timeout=args.timeout, transport=transport_options(spec, args))
    surface, _store = await record_surface(spec, options)
    for problem in surface.problems:
        print(f"spyglass diff: {label}: {visible(problem)}", file=sys.stderr)
    return surface, spec.name


async def run(argv: list[str], out: TextIO) -> int:
    from ..recording.compare import diff_surfaces, diff_text

    rest, sides = split_sides(argv)
    args = build_parser().parse_intermixed_args(rest)
    positional = list(args.sides)
    for side in ("a", "b"):
        if side not in sides:
            if not positional:
                raise E.UsageError("give two servers: spyglass diff A B (session files, URLs, --a/--b COMMAND)")
            sides[side] = [positional.pop(0)]
    if positional:
        raise E.UsageError(f"unexpected arguments: {' '.join(positional)}")
    a, name_a = await surface_of(sides["a"], args, args.server_a or args.server, "A")
    b, name_b = await surface_of(sides["b"], args, args.server_b or args.server, "B")
    report: dict[str, Any] = diff_surfaces(a, b)
    report["a"], report["b"] = name_a, name_b
    if args.format == "json":
        out.write(json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        out.write(visible(diff_text(report)))
    return E.EXIT_OK if report["same"] else E.EXIT_FINDINGS


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    argv = list(argv)
    if argv[:1] == ["diff"]:
        argv = argv[1:]

    def body() -> int:
        import asyncio

        return asyncio.run(run(argv, stream))

    return run_command("spyglass diff", body)
