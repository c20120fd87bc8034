"""`spyglass check`: is this server right? Connects, lists everything twice, probes a tool that cannot
exist, optionally calls the read-only tools, judges every frame, and reports (docs/check.md).

Exit codes: 0 no finding at or above the failure bar (errors, or `--fail-on`), 9 at least one, and the
usual codes when the check could not run (1 usage, 3 authorization, 4 connection, 7 timeout...).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .. import errors as E
from ..private import write_private
from .common import (
    TraceWriter,
    UsageParser,
    add_server_arguments,
    parse_with_command,
    protocol_of,
    run_command,
    server_spec,
    transport_options,
)
from .common import visible as _visible

if TYPE_CHECKING:
    from ..checks.hosts.observe import Observer
    from ..checks.hosts.verdict import Server as HostServer
    from ..checks.run import Check
    from ..config import ServerSpec
    from ..session import ServerSession
    from ..traffic.frame import Frame


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog="spyglass check", description="Check an MCP server: every frame against its revision's "
                    "schema, tool definitions as a model reads them, and how it answers calls.",
                    epilog="Server: -- COMMAND [ARGS...] (stdio), URL (HTTP), or --config FILE --server NAME. "
                           "Exit codes: 0 nothing at or above the failure bar, 9 findings that fail the check, "
                           "1 usage, 3 authorization required, 4 cannot connect, 7 timeout.")
    p.add_argument("--call", choices=("none", "read-only"), default="none",
                   help="call tools too: read-only calls only tools whose readOnlyHint is true (never one "
                        "marked destructive), with arguments made up valid against their schema (default: none)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format (default text)")
    p.add_argument("--junit", metavar="FILE", help="also write the report as JUnit XML (one test case per rule "
                   "and target)")
    p.add_argument("--fail-on", choices=("error", "warning", "info"), default=None,
                   help="the lowest severity that fails the check (default error)")
    p.add_argument("--ignore", action="append", default=[], metavar="RULE[:TARGET]",
                   help="leave out a rule's findings, or only those about TARGET (wildcards allowed; repeatable)")
    p.add_argument("--list-rules", action="store_true", help="print every rule and exit")
    p.add_argument("--host", metavar="NAME[,NAME...]|all", help="also give a verdict per host (claude-desktop, "
                   "claude-code, chatgpt, cursor, vscode, windsurf, gemini-cli, codex, zed, inspector, or a "
                   "profile in .spyglass/hosts): works, degraded or blocked, with the reasons (docs/hosts.md); "
                   "a blocked host fails the check")
    p.add_argument("--show-tools", action="store_true", help="with --host: each tool as each host's model sees "
                   "it (final name, description as cut, schema as rewritten), the differences marked")
    p.add_argument("--configured-as", metavar="NAME", help="with --host: the server's name in the host's "
                   "configuration, which hosts put in tool names (default: the --config entry's name, else the "
                   "name the server reports)")
    p.add_argument("--list-hosts", action="store_true", help="print every host profile and exit")
    p.add_argument("--trace", metavar="FILE", help="write every frame to FILE as JSON Lines")
    p.add_argument("--pinned", metavar="FILE", help="a lock file written by spyglass pin: any tool, prompt or "
                   "resource added, removed or changed since is an error finding (pin-changed)")
    add_server_arguments(p)
    p.add_argument("target", nargs="*", help=argparse.SUPPRESS)
    return p


def list_hosts(out: TextIO) -> None:
    from ..checks.hosts.profile import load

    profiles = load(Path.cwd())
    width = max(len(p) for p in profiles)
    for profile in profiles.values():
        origin = "" if len(profile.files) == 1 and profile.files[0].startswith("inspector/") else \
            f"  ({', '.join(profile.files)})"
        out.write(f"{profile.id.ljust(width)}  {profile.version}  {profile.name}{origin}\n")


def host_server(args: argparse.Namespace, spec: ServerSpec, session: ServerSession, check: Check,
                observer: Observer) -> HostServer:
    """The server as the host verdicts judge it, from a finished check."""
    from ..checks.hosts.verdict import Server

    hello = session.hello
    info = hello.server_info if hello and isinstance(hello.server_info, dict) else {}
    name = args.configured_as or (args.server if args.config else None) or str(info.get("name") or spec.name)
    lists = check.lists
    transport = "stdio" if spec.url is None else ("sse" if spec.transport == "sse" else "http")
    return Server(name=name, transport=transport, protocol=hello.protocol_version if hello else None,
                  tools=[t for t in lists.get("tools", []) if isinstance(t, dict)],
                  resources=len(lists.get("resources", [])), templates=len(lists.get("templates", [])),
                  prompts=len(lists.get("prompts", [])), instructions=bool(hello and hello.instructions),
                  observed=observer.seen)


def list_rules(out: TextIO) -> None:
    from ..checks.rules import RULES

    width = max(len(r) for r in RULES)
    for rule in RULES.values():
        out.write(f"{rule.id.ljust(width)}  {rule.severity.ljust(7)}  {rule.title}\n")


async def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..checks.hosts import profile as host_profiles
    from ..checks.hosts import report as host_report
    from ..checks.hosts.observe import Observer
    from ..checks.hosts.verdict import judge_all
    from ..checks.pin import PIN_RULES, collect, compare, pin_findings, read_lock
    from ..checks.report import fail_on, junit, project_settings, text, validated_ignores
    from ..checks.rules import worst_first
    from ..checks.run import Check
    from ..session import ServerSession, SessionOptions
    from ..transport.factory import open_transport

    settings = project_settings(Path.cwd())
    pinned_rule = [i for i in args.ignore if i.partition(":")[0] in PIN_RULES]
    settings.ignore += validated_ignores([i for i in args.ignore if i not in pinned_rule], "--ignore") + pinned_rule
    if args.fail_on:
        settings.fail_on = fail_on(args.fail_on, "--fail-on")
    pin = read_lock(args.pinned) if args.pinned else None
    if (args.show_tools or args.configured_as) and args.host is None:
        raise E.UsageError("--show-tools and --configured-as go with --host")
    hosts = host_profiles.choose(args.host, host_profiles.load(Path.cwd())) if args.host is not None else []
    spec = server_spec(args)
    trace = TraceWriter(args.trace, spec) if args.trace else None
    options = transport_options(spec, args, trace)
    session = ServerSession(spec, options=SessionOptions(
        mode=protocol_of(args), timeout=args.timeout, transport=options, load_lists=False, listen=False,
        heartbeat_s=None))
    session.roots = []  # offered, as the window offers them (none shared): a server lists what the window sees
    observer = Observer()

    def traffic(frame: Frame) -> None:
        observer.frame(frame)
        if trace:
            trace(frame)

    check = Check(session, traffic=traffic)
    verdicts = []
    try:
        await session.open(open_transport(spec, options))
        report = await check.run(calls=args.call, timeout=args.timeout)
        if pin is not None:
            hello = session.hello
            listings = await collect(session.need_client(), hello.capabilities if hello else None)
            report.findings = worst_first(report.findings + pin_findings(compare(pin, listings), pin))
        report = report.ignoring(settings.ignored)
        if hosts:
            verdicts = judge_all(host_server(args, spec, session, check, observer), hosts)
    finally:
        await session.close()
        if trace:
            trace.close()
    if args.junit:
        try:
            write_private(args.junit, junit(report, settings, verdicts))
        except OSError as exc:
            raise E.UsageError(f"--junit {args.junit}: {exc.strerror or exc}") from None
    if args.format == "json":
        data = report.as_json()
        if hosts:
            data["hosts"] = host_report.as_json(verdicts, args.show_tools)
            data["observed"] = observer.seen.as_json()
        out.write(writable(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")
    else:
        out.write(writable(_visible(text(report))))
        if hosts:
            out.write(writable(_visible("\n" + host_report.text(verdicts, args.show_tools))))
    blocked = any(v.verdict == "blocked" for v in verdicts)
    return E.EXIT_FINDINGS if settings.fails(report) or blocked else E.EXIT_OK


def writable(text: str) -> str:
    """Text every encoder can write: a lone surrogate a server sent (valid JSON, not valid UTF-8) is shown
    as its escape (`\\ud800`) instead of failing to encode."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    argv = list(argv)
    if argv[:1] == ["check"]:
        argv = argv[1:]

    def body() -> int:
        args = parse_with_command(build_parser(), argv)
        if args.list_rules:
            list_rules(stream)
            return E.EXIT_OK
        if args.list_hosts:
            list_hosts(stream)
            return E.EXIT_OK
        import asyncio

        return asyncio.run(run(args, stream))

    return run_command("spyglass check", body)
