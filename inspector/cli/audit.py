"""`spyglass audit`: every MCP server the user's hosts are configured to run (Claude Desktop, Claude Code,
Cursor, VS Code, Windsurf, or the files given), each connected and checked with the rules of `spyglass
check`, plus what the trust rules find across them (a tool name two servers share, a name that reads like
another server's tool, a description naming another server's tool: `checks.trust.across`), in one report
(docs/security.md#audit).

A server that cannot start, needs a sign-in or an answer the config leaves open is reported, never fatal.
Exit codes: 0 no error finding, 9 at least one (as `check`), 1 usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .. import errors as E
from ..checks.rules import SEVERITIES, Finding, worst_first
from ..terminal import one_line
from .check import writable
from .common import UsageParser, run_command
from .common import visible as _visible

if TYPE_CHECKING:
    from ..checks.report import Settings
    from ..checks.run import Report
    from ..config import ServerSpec

DEFAULT_JOBS = 4
DEFAULT_SERVER_TIMEOUT = 30.0


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog="spyglass audit", description="Audit the MCP servers your hosts run: read their "
                    "configurations, connect to each server, check it with spyglass check's rules and report "
                    "tool names that two servers share.",
                    epilog="Without --config, the default locations of Claude Desktop, Claude Code, Cursor, VS Code "
                           "and Windsurf are read (under --home, else your home folder, and the current folder). "
                           "Exit codes: 0 no error finding, 9 error findings, 1 usage.")
    p.add_argument("--config", action="append", default=[], metavar="FILE",
                   help="a host's configuration file to read (repeatable; any format the window imports)")
    p.add_argument("--home", metavar="DIR", help="look for the hosts' user configurations under DIR instead of "
                   "your home folder")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format (default text)")
    p.add_argument("--jobs", type=int, default=DEFAULT_JOBS, metavar="N",
                   help=f"servers checked at once (default {DEFAULT_JOBS})")
    p.add_argument("--server-timeout", type=float, default=DEFAULT_SERVER_TIMEOUT, metavar="SECONDS",
                   help=f"the most one server's check may take, start included (default {DEFAULT_SERVER_TIMEOUT:g})")
    p.add_argument("--sandbox", action="store_true", help="run every command server confined: no network, home "
                   "folder hidden, writes only to a temporary folder (docs/security.md#sandbox)")
    p.add_argument("--ignore", action="append", default=[], metavar="RULE[:TARGET]",
                   help="leave out a rule's findings, or only those about TARGET (repeatable)")
    return p


@dataclass
class Source:
    file: str
    host: str  # the host's label: "Claude Desktop (claude_desktop_config.json)"
    entry: str  # the server's name in that file

    def as_json(self) -> dict[str, str]:
        return {"file": self.file, "host": self.host, "entry": self.entry}


@dataclass
class Audited:
    name: str
    spec: ServerSpec | None
    sources: list[Source]
    status: str = "pending"  # checked | failed | skipped
    problem: str | None = None  # why it failed or was skipped
    report: Report | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)  # the definitions listed

    def findings(self) -> list[Finding]:
        return self.report.findings if self.report is not None else []

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "sources": [s.as_json() for s in self.sources],
                               "status": self.status}
        if self.problem:
            out["problem"] = self.problem
        if self.report is not None:
            out["report"] = self.report.as_json()
        return out


@dataclass
class Audit:
    servers: list[Audited]
    findings: list[Finding]  # across servers
    notes: list[str]  # files read, files that could not be

    def all_findings(self) -> list[Finding]:
        return [f for s in self.servers for f in s.findings()] + self.findings

    def summary(self) -> dict[str, int]:
        found = self.all_findings()
        return {sev: sum(1 for f in found if f.severity == sev) for sev in SEVERITIES}

    def as_json(self) -> dict[str, Any]:
        return {"servers": [s.as_json() for s in self.servers], "findings": [f.as_json() for f in self.findings],
                "notes": self.notes, "summary": self.summary()}


# --- reading the hosts' configurations -------------------------------------------------------------

def default_configs(home: str | None = None) -> list[tuple[str, Path]]:
    """(host label, path) of every host configuration Spyglass knows to look for, those that exist."""
    from ..tap.install import hosts

    home_dir = Path(home) if home else Path.home()
    found = [(h.label, h.path) for h in hosts(home=home_dir)]
    found += [("Claude Code (user ~/.claude.json)", home_dir / ".claude.json"),
              ("Cursor (this folder's .cursor/mcp.json)", Path.cwd() / ".cursor" / "mcp.json"),
              ("Windsurf", home_dir / ".codeium" / "windsurf" / "mcp_config.json")]
    return [(label, path) for label, path in found if path.is_file()]


def gather(files: list[tuple[str | None, Path]], notes: list[str], *, given: bool = False) -> list[Audited]:
    """The servers the files define, one `Audited` per distinct definition (the same server in two hosts
    is checked once, naming both). A file the user `given` that cannot be read is a usage error; one found
    in a default location is a note."""
    from ..catalog import same_definition
    from ..importers import ImportFileError, preview_file

    servers: list[Audited] = []
    for label, path in files:
        try:
            preview = preview_file(path)
        except ImportFileError as exc:
            if given:
                raise E.UsageError(f"--config {path}: {exc.message}") from None
            notes.append(f"{path}: not read: {exc.message}")
            continue
        host = label or preview.format_label
        notes.append(f"{path}: {host}, {len(preview.entries)} server{'s' * (len(preview.entries) != 1)}")
        for entry in preview.entries:
            source = Source(str(path), host, entry.entry)
            spec = entry.spec
            twin = next((s for s in servers if s.spec is not None and spec is not None
                         and same_definition(s.spec, spec)), None)
            if twin is not None:
                twin.sources.append(source)
                continue
            name = entry.name
            if any(s.name == name for s in servers):
                name = f"{name} ({host})"
            audited = Audited(name, spec, [source])
            if entry.error or spec is None:
                audited.status, audited.problem = "skipped", entry.error or "cannot be read"
            elif entry.placeholders:
                asks = ", ".join(p.label + (f" ({p.description})" if p.description else "") for p in entry.placeholders)
                audited.status = "skipped"
                audited.problem = f"its configuration leaves values for the host to ask: {asks}"
            servers.append(audited)
    return servers


# --- checking --------------------------------------------------------------------------------------

async def check_one(server: Audited, *, timeout: float, budget: float, sandbox: bool, protocol: str) -> None:
    """Connect and run the check on one server within `budget` seconds; what goes wrong is its status."""
    from ..checks.run import Check
    from ..session import ServerSession, SessionOptions
    from ..transport.factory import TransportOptions, open_transport

    assert server.spec is not None
    spec = server.spec
    if sandbox and spec.url is None:
        spec.sandbox = True
    options = TransportOptions(connect_timeout=min(budget, 15.0))  # no sign-in: an audit never opens a browser
    session = ServerSession(spec, options=SessionOptions(mode=protocol, timeout=min(timeout, budget),
                                                         transport=options, load_lists=False, listen=False,
                                                         heartbeat_s=None))
    session.roots = []  # offered, none shared, as check and the window do: the tools the window would see
    check = Check(session)
    try:
        async with asyncio.timeout(budget):
            try:
                await session.open(open_transport(spec, options))
                server.report = await check.run(timeout=min(timeout, budget))
            finally:
                await session.close()
    except TimeoutError:
        server.status, server.problem = "failed", f"no result within {budget:g} s"
        return
    except E.SpyglassError as exc:
        tail = "; ".join(session.stderr_tail[-3:]) if session.stderr_tail else ""
        server.status, server.problem = "failed", exc.message + (f" (stderr: {tail})" if tail else "")
        return
    server.status = "checked"
    server.tools = [check.judge.tools[name] for name in sorted(check.judge.tools)]


async def check_all(servers: list[Audited], *, jobs: int, timeout: float, budget: float, sandbox: bool,
                    protocol: str = "auto") -> None:
    gate = asyncio.Semaphore(max(1, jobs))

    async def one(server: Audited) -> None:
        async with gate:
            await check_one(server, timeout=timeout, budget=budget, sandbox=sandbox, protocol=protocol)

    await asyncio.gather(*(one(s) for s in servers if s.status == "pending"))


def shadowing(servers: list[Audited]) -> list[Finding]:
    """The trust rules across the checked servers (`checks.trust.across`: a shared tool name, a look-alike
    name, a description naming another server's tool), each finding's target prefixed with its server."""
    from ..checks.trust import across

    found = across({s.name: s.tools for s in servers if s.status == "checked"})
    return [Finding(f.rule, f.severity, f"{name}/{f.target}", f.message, f.spec)
            for name, findings in found.items() for f in findings]


# --- the report ------------------------------------------------------------------------------------

def text(audit: Audit) -> str:

    lines: list[str] = []
    for server in audit.servers:
        where = "; ".join(f"{s.host}: {s.entry}" for s in server.sources)
        lines.append(f"== {server.name}  [{where}]")
        if server.report is None:
            lines.append(f"   {server.status}: {one_line(server.problem or '')}")
        else:
            info = server.report.server
            ident = " ".join(str(info[k]) for k in ("name", "version") if isinstance(info.get(k), (str, int)))
            counts = server.report.summary()
            lines.append(f"   checked: {ident} (protocol {info.get('protocolVersion')}), {len(server.tools)} tools, "
                         + ", ".join(f"{counts[s]} {s}" for s in SEVERITIES))
            for f in server.report.findings:
                lines.append(f"   {f.severity:<7}  {f.rule}  {one_line(f.target)}")
                lines.append(f"            {one_line(f.message)}")
        lines.append("")
    if audit.findings:
        lines.append("== Across servers")
        for f in audit.findings:
            lines.append(f"   {f.severity:<7}  {f.rule}  {one_line(f.target)}")
            lines.append(f"            {one_line(f.message)}")
        lines.append("")
    for note in audit.notes:
        lines.append(f"Read: {one_line(note)}")
    checked = sum(1 for s in audit.servers if s.status == "checked")
    counts = audit.summary()
    lines.append(f"{len(audit.servers)} servers, {checked} checked, {len(audit.servers) - checked} not; "
                 + ", ".join(f"{counts[s]} {s}" for s in SEVERITIES))
    return "\n".join(lines) + "\n"


async def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..checks.report import project_settings, validated_ignores

    if args.jobs < 1:
        raise E.UsageError("--jobs must be at least 1")
    if args.server_timeout <= 0:
        raise E.UsageError("--server-timeout must be more than 0 seconds")
    if args.home is not None and not Path(args.home).is_dir():
        raise E.UsageError(f"--home {args.home}: not a folder")
    settings: Settings = project_settings(Path.cwd())
    settings.ignore += validated_ignores(list(args.ignore), "--ignore")
    notes: list[str] = []
    if args.config:
        for name in args.config:
            if Path(name).is_dir():
                raise E.UsageError(f"--config {name} is a folder: give a host's configuration file")
            if not Path(name).is_file():
                raise E.UsageError(f"--config {name}: no such file")
        files: list[tuple[str | None, Path]] = [(None, Path(name)) for name in args.config]
    else:
        files = [(label, path) for label, path in default_configs(args.home)]
        if not files:
            notes.append("no host configuration found in the default locations (give one with --config)")
    servers = gather(files, notes, given=bool(args.config))
    await check_all(servers, jobs=args.jobs, timeout=args.server_timeout, budget=args.server_timeout,
                    sandbox=args.sandbox)
    for server in servers:
        if server.report is not None:
            server.report = server.report.ignoring(settings.ignored)
    audit = Audit(servers, worst_first([f for f in shadowing(servers) if not settings.ignored(f)]), notes)
    if args.format == "json":
        out.write(writable(json.dumps(audit.as_json(), indent=2, ensure_ascii=False)) + "\n")
    else:
        out.write(writable(_visible(text(audit))))
    bar = SEVERITIES.index(settings.fail_on)
    return E.EXIT_FINDINGS if any(SEVERITIES.index(f.severity) <= bar for f in audit.all_findings()) else E.EXIT_OK


def main(argv: Sequence[str], out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    argv = list(argv)
    if argv[:1] == ["audit"]:
        argv = argv[1:]

    def body() -> int:
        args = build_parser().parse_args(argv)
        return asyncio.run(run(args, stream))

    return run_command("spyglass audit", body)
