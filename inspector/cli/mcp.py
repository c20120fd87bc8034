"""`spyglass mcp`: Spyglass as an MCP server an agent drives (docs/agents.md).

stdio by default (the agent starts it); `--http PORT` serves Streamable HTTP on 127.0.0.1 only, with a bearer
token printed at start. Its tools (`inspector.agent.tools`) open servers and keep them open between calls,
call their tools, read the traffic and check them. A call on a tool that may change things is refused unless
`--allow-writes`. `--print-config HOST`, `--install HOST`, `--uninstall HOST` put it into an agent's
configuration; `--skill` prints the agent skill that teaches the debugging loop.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
from collections.abc import Awaitable, Sequence
from typing import Any, TextIO

from .. import errors as E
from .common import UsageParser, run_command

HOSTS = ("claude-code", "claude-desktop", "cursor", "vscode", "codex")


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog="spyglass mcp", description="Spyglass as an MCP server: an agent connects servers, "
                    "calls their tools, reads the traffic and checks them through it.",
                    epilog="docs/agents.md: setup for each agent, the tools, the approval flow, the skill.")
    p.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT (0: any "
                   "free port) with a bearer token printed on stderr, instead of stdio")
    p.add_argument("--allow-writes", action="store_true", help="call tools that may change things (not "
                   "readOnlyHint, or destructiveHint) without a person's approval")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS", help="per-request timeout towards "
                   "the servers, with --private (default 60; the shared background process uses 60; a call's own "
                   "timeout argument is how long it may take)")
    p.add_argument("--print-config", choices=HOSTS, metavar="HOST", help="print the entry that adds Spyglass to "
                   f"an agent's configuration: {', '.join(HOSTS)}")
    p.add_argument("--install", choices=HOSTS, metavar="HOST", help="add that entry to the host's configuration "
                   "(a backup first; --uninstall restores the file byte for byte)")
    p.add_argument("--uninstall", choices=HOSTS, metavar="HOST", help="undo --install")
    p.add_argument("--config-file", metavar="FILE", help="with --install/--uninstall: the host's configuration "
                   "file (default: where the host keeps it)")
    p.add_argument("--skill", action="store_true", help="print the agent skill (SKILL.md) and exit")
    p.add_argument("--window", action="store_true", help="also open Spyglass's window attached to the background "
                   "process: the agent's servers, traffic and calls shown, and calls that may change things held "
                   "until you allow them there")
    p.add_argument("--private", action="store_true", help="keep the connections in this process only, instead of "
                   "the background process that `spyglass do` shares")
    return p


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    words = list(argv)[1:] if argv and argv[0] == "mcp" else list(argv)
    return run_command("spyglass mcp", lambda: _run(build_parser().parse_args(words), stream))


def _run(args: argparse.Namespace, out: TextIO) -> int:
    from ..agent import setup

    if args.skill:
        out.write(setup.skill_text())
        return E.EXIT_OK
    if args.print_config:
        out.write(setup.print_config(args.print_config, allow_writes=args.allow_writes))
        return E.EXIT_OK
    if args.install or args.uninstall:
        host = args.install or args.uninstall
        message = (setup.install(host, args.config_file, allow_writes=args.allow_writes) if args.install
                   else setup.uninstall(host, args.config_file))
        print(f"spyglass mcp: {message}", file=sys.stderr)
        return E.EXIT_OK
    if args.window and args.private:
        raise E.UsageError("--window watches the shared background process: it cannot be used with --private")
    return asyncio.run(_serve(args))


async def _serve(args: argparse.Namespace) -> int:
    try:
        from ..agent import server as agent_server
    except ImportError as exc:  # an installation without the SDK (a bundle leaves it out)
        raise E.UsageError(f"spyglass mcp needs the official MCP Python SDK (the `mcp` package, 2.x), which this "
                           f"installation lacks ({exc}); install it with: pip install 'mcp>=2,<3'. `spyglass do` "
                           "works without it") from None
    from ..agent.hub import Hub
    from ..agent.ops import Ops, allow_all, refuse_writes
    from ..agent.remote import Remote, spyglass_program

    hub = Hub(timeout=args.timeout)
    remote = None if args.private else Remote()
    if args.window:
        import subprocess

        # the window, detached: it outlives this server and attaches to the background process itself
        subprocess.Popen([*spyglass_program(), "--watch-agents"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    if remote is None:
        runner = agent_server.runner_of(Ops(hub, allow_all if args.allow_writes else refuse_writes))
    else:
        def runner(name: str, arguments: Any, client: str | None) -> Awaitable[dict[str, Any]]:
            assert remote is not None
            return remote.ask(name, arguments, allow_writes=args.allow_writes, client=client)
    try:
        if args.http is None:
            await agent_server.serve_stdio(runner)
        else:
            sock = agent_server.bind_loopback(args.http)
            token = secrets.token_urlsafe(24)
            port = sock.getsockname()[1]

            def announce() -> None:
                print(f"spyglass mcp: serving http://127.0.0.1:{port}/mcp (loopback only)", file=sys.stderr)
                print(f"spyglass mcp: token: {token}  (send Authorization: Bearer TOKEN)", file=sys.stderr,
                      flush=True)

            await agent_server.serve_http(runner, sock, token, announce)
    finally:
        await hub.close_all()
        if remote is not None:
            await remote.close()
    return E.EXIT_OK
