"""The findings of a live session, as it runs: what the window's Check tab, traffic pane, sidebar and tool
list show. Qt-free.

Each frame is judged as it is recorded (`frame(n, frame)`, a few microseconds with the message the client
already parsed); what it finds is handed over in batches (`drain()`, at the window's traffic flush), so
the views are told ten times a second at most. Each connection gets a judge of its own. Tool
definitions are reviewed again whenever the tool list changes. `run()` is the active part of
`spyglass check` on the live connection: every list twice, the unknown-tool probe, and with
`calls="read-only"` the read-only tools.

(Frames were first queued and judged later in time slices, "off the hot path"; the flood benchmark
showed that worse: 100,000 waiting frames kept their parsed messages alive, and the garbage collector's
passes over them stalled the window for 80-100 ms, against 27-36 ms judged inline. See docs/check.md.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..session.hooks import Hook
from ..session.server import Status
from ..traffic.frame import Frame
from .definitions import Cost, list_cost, review_tools
from .frames import Judge
from .rules import SEVERITIES, Finding, worst_first
from .run import Check, Report, collapse

if TYPE_CHECKING:
    from ..session import ServerSession


class LiveCheck:
    def __init__(self, session: ServerSession) -> None:
        self.session = session
        self.judge = Judge()
        self.definitions: list[Finding] = []
        self.cost: Cost | None = None
        self.report: Report | None = None  # the last full check of this connection
        self.changed: Hook[[]] = Hook("findings")
        self._new: list[tuple[int, Finding]] = []  # found since the last drain
        self._status = session.status
        session.changed.connect(self._session_changed)

    def release(self) -> None:
        self.session.changed.disconnect(self._session_changed)

    # ------------------------------------------------------------------ frames
    def frame(self, n: int, frame: Frame) -> None:
        """Judge frame `n` of the traffic store (its findings wait for `drain`)."""
        for f in self.judge.frame(n, frame):
            self._new.append((n, f))

    @property
    def pending(self) -> int:
        """Findings not handed over yet."""
        return len(self._new)

    def drain(self) -> list[tuple[int, Finding]]:
        """The findings since the last call, with the record number of their frame; tells `changed`."""
        found, self._new = self._new, []
        if found:
            self.changed.emit()
        return found

    # ------------------------------------------------------------------ the session
    def _session_changed(self, what: str) -> None:
        session = self.session
        if what == "status":
            status = session.status
            if status is not self._status and status is Status.CONNECTING:
                self._new = []
                self.judge, self.report, self.definitions, self.cost = Judge(), None, [], None
                self.changed.emit()
            elif status is Status.CONNECTED and session.hello is not None and self.judge.capabilities is None:
                self.judge.ready(session.hello.protocol_version, session.hello.capabilities)
            self._status = status
        elif what == "tools":
            self.review(list(session.tools.items))

    def review(self, tools: list[Any]) -> None:
        """The tool list is known (again): review every definition, tell the judge the tools."""
        self.judge.tools = {t["name"]: t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}
        self.judge.listed = True
        self.definitions = review_tools(tools)
        self.cost = list_cost(tools)
        self.changed.emit()

    async def run(self, calls: str = "none", timeout: float | None = None) -> Report:
        """The active check on this connection: lists twice, the unknown-tool probe, read-only calls."""
        self.drain()
        check = Check(self.session, judge=self.judge)
        self.report = await check.run(calls=calls, timeout=timeout)
        self.drain()
        self.changed.emit()
        return self.report

    # ------------------------------------------------------------------ reading
    def findings(self) -> list[Finding]:
        """Everything found on this connection, worst first, one finding per mistake."""
        extra = [f for f in self.report.findings if f.rule in ACTIVE] if self.report else []
        return worst_first(collapse(self.definitions + extra) + self.judge.reported())

    def summary(self) -> dict[str, int]:
        found = self.findings()
        return {sev: sum(1 for f in found if f.severity == sev) for sev in SEVERITIES}


ACTIVE = ("list-order-unstable", "pagination-cursor-loop")  # found only by listing on purpose
