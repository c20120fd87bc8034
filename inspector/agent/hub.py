"""Named connections an agent keeps open between its commands: one `ServerSession` each, all recording into
one traffic store, every frame judged as it arrives (the window's live findings, without the window).

A `Hub` is what `spyglass mcp` and the `spyglass do` background process hold. Opening takes a command, a URL
or a catalog name (with era, env, headers, cwd); closing stops a stdio server's whole process group (the
transport's shutdown); restarting keeps the listings and marks what changed. Every failure is an
`AgentError` whose sentence says what to do next. No Qt here.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from .. import errors as E
from ..catalog import Catalog
from ..checks.frames import Judge
from ..checks.rules import Finding
from ..config import ServerSpec
from ..demo import launch_command
from ..protocol.versions import SUPPORTED_VERSIONS
from ..session import Answerer, ServerSession, SessionOptions, Status
from ..traffic.frame import Frame
from ..traffic.store import TrafficStore
from ..transport.factory import open_transport, start_process
from ..transport.process import die_with_parent
from .errors import AgentError
from .reaper import Reaper

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
ERAS = ("auto", "legacy", "modern")
SEVERITY = {"error": 0, "warning": 1, "info": 2}
CONNECT_WAIT = 30.0
FINDINGS_KEPT = 2000


@dataclass
class Connection:
    """One named server of the hub, and the findings of its frames (record number, finding)."""

    name: str
    session: ServerSession
    opened: float = field(default_factory=time.time)
    judge: Judge = field(default_factory=Judge)
    findings: list[tuple[int, Finding]] = field(default_factory=list)
    era: str = "auto"
    group: int | None = None  # the process group of its stdio server, while it runs

    def describe(self) -> dict[str, Any]:
        s = self.session
        hello = s.hello
        out: dict[str, Any] = {
            "name": self.name, "status": s.status.value, "target": s.describe(),
            "transport": "stdio" if not s.spec.url else "http",
            "protocolVersion": s.protocol_version, "era": s.era,
            "serverInfo": hello.server_info if hello else None,
            "pid": s.pid, "tools": len(s.tools.items) if s.tools.loaded else None,
            "calls": len(s.calls.history), "findings": len(self.findings),
        }
        if s.status in (Status.ERROR, Status.EXITED):
            out["reason"] = s.reason
            out["exitCode"] = s.exit_code
            out["stderrTail"] = list(s.stderr_tail)
        return out


def spec_of(name: str, *, command: list[str] | str | None = None, url: str | None = None,
            catalog: str | None = None, env: dict[str, str] | None = None, headers: dict[str, str] | None = None,
            cwd: str | None = None, catalog_path: str | None = None) -> tuple[ServerSpec, str | None]:
    """The server to open, and the mode its catalog entry names (None: none named)."""
    given = [w for w, v in (("command", command), ("url", url), ("catalog", catalog)) if v]
    if len(given) != 1:
        raise AgentError("give exactly one of command (a list of words, or one shell line), url, or catalog "
                         f"(a saved server's name or 'demo'); got {', '.join(given) or 'none'}", "usage")
    if command:
        words = shlex.split(command) if isinstance(command, str) else list(command)
        if not words or not all(isinstance(w, str) for w in words):
            raise AgentError("command must be a non-empty list of strings, e.g. [\"python\", \"server.py\"]", "usage")
        spec = ServerSpec(name=name, command=words, env=dict(env or {}), cwd=cwd, transport="stdio")
    elif url:
        if not url.startswith(("http://", "https://")):
            raise AgentError(f"url must start with http:// or https://, not {url[:40]!r}", "usage")
        spec = ServerSpec(name=name, url=url, headers=dict(headers or {}))
    else:
        assert catalog is not None
        if catalog == "demo":
            spec = ServerSpec(name=name, command=launch_command(), transport="stdio")
            return spec, None
        entries = Catalog(catalog_path).load()
        entry = entries.find(catalog)
        if entry is None:
            names = ", ".join(e.name for e in entries) or "none saved"
            raise AgentError(f"no saved server named {catalog!r} in the catalog ({names}); 'demo' is the built-in "
                             "demo server", "unknown_server")
        spec = ServerSpec(**{**entry.spec.__dict__, "name": name})
        spec.env.update(env or {})
        spec.headers.update(headers or {})
        if cwd:
            spec.cwd = cwd
        return spec, entry.mode
    if cwd is not None and command:
        import os

        if not os.path.isdir(cwd):
            raise AgentError(f"cwd {cwd!r} is not a folder", "usage")
    return spec, None


class Hub:
    """The named connections, their traffic (one store) and their findings."""

    def __init__(self, *, store: TrafficStore | None = None, answerer: Answerer | None = None,
                 timeout: float = 60.0, catalog_path: str | None = None, reaper: Reaper | None = None) -> None:
        self.store = store if store is not None else TrafficStore(":memory:")
        self.answerer = answerer
        self.timeout = timeout
        self.catalog_path = catalog_path
        self.reaper = reaper  # told of each server's process group (the background process's watchdog)
        self.connections: dict[str, Connection] = {}
        self.listeners: list[Callable[[str, str], None]] = []  # (event, connection name): opened, closed…
        self.frame_listeners: list[Callable[[str, int, Frame], None]] = []  # (connection name, record, frame)

    # ------------------------------------------------------------------ reading
    def get(self, name: Any) -> Connection:
        conn = self.connections.get(name) if isinstance(name, str) else None
        if conn is None:
            known = ", ".join(sorted(self.connections)) or "none open"
            raise AgentError(f"no server named {name!r} is open (open: {known}); open it first with "
                             "spyglass_connect", "unknown_server")
        return conn

    def connected(self, name: Any) -> ServerSession:
        """The session of `name`, which must be connected (else a sentence saying how to bring it back)."""
        conn = self.get(name)
        s = conn.session
        if s.status is not Status.CONNECTED or s.client is None:
            status = s.status_text()
            why = f": {s.reason}" if s.reason and s.reason not in status else ""
            tail = f" (stderr: {' | '.join(s.stderr_tail[-3:])})" if s.stderr_tail else ""
            raise AgentError(f"server {name!r} is not connected ({status}{why}){tail}; fix it and call "
                             "spyglass_restart", "not_connected")
        return s

    def describe(self) -> list[dict[str, Any]]:
        return [c.describe() for c in self.connections.values()]

    def _emit(self, event: str, name: str) -> None:
        for fn in list(self.listeners):
            fn(event, name)

    # ------------------------------------------------------------------ lifecycle
    async def open(self, name: str, *, command: list[str] | str | None = None, url: str | None = None,
                   catalog: str | None = None, era: str = "auto", env: dict[str, str] | None = None,
                   headers: dict[str, str] | None = None, cwd: str | None = None) -> Connection:
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise AgentError(f"name {name!r} must be 1-64 letters, digits, '.', '_' or '-', starting with a letter "
                             "or digit", "usage")
        if name in self.connections:
            raise AgentError(f"a server named {name!r} is already open; close it first or pick another name",
                             "name_taken")
        if era not in ERAS and era not in SUPPORTED_VERSIONS:
            raise AgentError(f"era must be one of {', '.join(ERAS)} or a protocol version "
                             "(" + ", ".join(SUPPORTED_VERSIONS) + f"), not {era!r}", "usage")
        spec, mode = spec_of(name, command=command, url=url, catalog=catalog, env=env, headers=headers, cwd=cwd,
                             catalog_path=self.catalog_path)
        options = SessionOptions(mode=era if era != "auto" or mode is None else mode, timeout=self.timeout)
        session = ServerSession(spec, name, options, answerer=self.answerer)
        conn = Connection(name, session, era=era)
        session.traffic = self._recorder(conn)
        session.changed.connect(partial(self._changed, conn))
        self.connections[name] = conn
        self._emit("opened", name)
        await self._connect(conn)
        return conn

    async def _connect(self, conn: Connection, *, keep_listings: bool = False) -> None:
        session = conn.session
        opened = None
        if not session.spec.url:
            # the server dies with this process, even when it is killed: no server is left behind
            try:
                started = start_process(session.spec, preexec_fn=die_with_parent())
                if started is not None and self.reaper is not None:
                    conn.group = started.pid  # its own session: the pid is the group's id
                    self.reaper.add(started.pid)
                opened = open_transport(session.spec, session.options.transport, started=started)
            except E.SpyglassError:
                opened = None  # connecting without it says the same failure, and records it as the status
        task = asyncio.ensure_future(_attempt(session, opened, keep_listings))
        try:
            failure = await asyncio.wait_for(asyncio.shield(task), CONNECT_WAIT)
        except TimeoutError:
            raise AgentError(f"server {conn.name!r} did not finish connecting within {CONNECT_WAIT:g} s; it stays "
                             "open: look at spyglass_log, then spyglass_restart or spyglass_disconnect",
                             "timeout") from None
        if session.status is not Status.CONNECTED:
            tail = f"; its stderr ends: {' | '.join(session.stderr_tail[-3:])}" if session.stderr_tail else ""
            # as --cli tells them apart: a server that could not be reached at all (its URL), or asks to sign in
            kind = failure.kind if failure is not None and failure.kind in ("auth_required", "auth") else "connect"
            details = {"url": failure.details["url"]} if (failure is not None and failure.kind == "connect"
                                                           and failure.details.get("url")) else {}
            raise AgentError(f"server {conn.name!r} did not connect: {session.reason or session.status_text()}"
                             f"{tail}. It stays in the list: fix it and call spyglass_restart, or "
                             "spyglass_disconnect", kind, **details)
        self._ready(conn)

    def _ready(self, conn: Connection) -> None:
        hello = conn.session.hello
        if hello is not None:
            conn.judge.ready(hello.protocol_version, hello.capabilities)
        self._tools_known(conn)

    def _tools_known(self, conn: Connection) -> None:
        listing = conn.session.tools
        if listing.loaded:
            conn.judge.tools = {t["name"]: t for t in listing.items if isinstance(t.get("name"), str)}
            conn.judge.listed = True

    def _changed(self, conn: Connection, what: str) -> None:
        if what == "tools":
            self._tools_known(conn)
        self._emit(f"changed:{what}", conn.name)

    def _recorder(self, conn: Connection) -> Callable[[Frame], None]:
        store, judge, findings = self.store, conn.judge, conn.findings

        def record(frame: Frame) -> None:
            n = store.add(conn.name, frame)
            for fn in self.frame_listeners:
                fn(conn.name, n, frame)
            try:
                found = judge.frame(n, frame)
            except Exception:  # a rule that breaks on a frame must not lose the frame
                found = []
            for f in found:
                worst = store.flags.get(n)
                rank = SEVERITY.get(f.severity, 2)
                if worst is None or rank < worst:
                    store.flag(n, rank)
                findings.append((n, f))
            if len(findings) > FINDINGS_KEPT:
                del findings[: len(findings) - FINDINGS_KEPT]

        return record

    async def close(self, name: str) -> dict[str, Any]:
        conn = self.get(name)
        await conn.session.disconnect()
        self._ended(conn)
        del self.connections[name]
        self._emit("closed", name)
        return {"name": name, "closed": True}

    async def restart(self, name: str) -> Connection:
        conn = self.get(name)
        await conn.session.disconnect()
        self._ended(conn)
        conn.session.mark("restarted by the agent", marker="restart")
        await self._connect(conn, keep_listings=True)
        self._emit("restarted", name)
        return conn

    def _ended(self, conn: Connection) -> None:
        """Its server was stopped with its whole group (the transport's shutdown): nothing left to watch."""
        if conn.group is not None and self.reaper is not None:
            self.reaper.remove(conn.group)
        conn.group = None

    async def close_all(self) -> None:
        for name in list(self.connections):
            try:
                await self.close(name)
            except Exception:  # closing one must not keep the others running
                self.connections.pop(name, None)


async def _attempt(session: ServerSession, opened: Any, keep_listings: bool) -> E.SpyglassError | None:
    """One connect attempt; its failure (also recorded as the session's status), or None."""
    try:
        await session.open(opened, keep_listings=keep_listings)
    except E.SpyglassError as exc:
        return exc
    return None


def error_of(exc: BaseException) -> AgentError:
    """Any failure below the hub as an `AgentError` (a SpyglassError keeps its words and kind)."""
    if isinstance(exc, AgentError):
        return exc
    if isinstance(exc, E.SpyglassError):
        return AgentError(exc.message, exc.kind)
    return AgentError(f"{type(exc).__name__}: {exc}", "internal")
