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

import asyncio
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..session.hooks import Hook
from ..session.server import Status
from ..traffic.frame import Frame
from .definitions import Cost, cost_steps, drive, review_steps
from .frames import Judge
from .hosts.observe import Observer
from .pin import PinWatch
from .rules import SEVERITIES, Finding, worst_first
from .run import Check, Report, collapse
from .trust import across

if TYPE_CHECKING:
    from ..session import ServerSession


class LiveCheck:
    def __init__(self, session: ServerSession) -> None:
        self.session = session
        self.judge = Judge()
        self.observer = Observer()  # what the calls needed, for the host verdicts (checks/hosts)
        self.definitions: list[Finding] = []
        self.cost: Cost | None = None
        self.report: Report | None = None  # the last full check of this connection
        self.changed: Hook[[]] = Hook("findings")
        self._new: list[tuple[int, Finding]] = []  # found since the last drain
        self._status = session.status
        self._reviewing = 0  # the generation of the tool list under review
        self._tasks: set[asyncio.Task[None]] = set()
        self.pin = PinWatch()  # the definitions compared with the pin file the server's definition names
        # the tool lists of the other servers connected beside this one (the window's), for the rules across
        # servers (tool-name-shadowing, look-alikes, foreign-tool-reference); None: this server alone
        self.others: Callable[[], Mapping[str, Sequence[Any]]] | None = None
        self._across: tuple[Any, list[Finding], list[Any]] = (None, [], [])
        session.changed.connect(self._session_changed)

    def release(self) -> None:
        self.session.changed.disconnect(self._session_changed)

    # ------------------------------------------------------------------ frames
    def frame(self, n: int, frame: Frame) -> None:
        """Judge frame `n` of the traffic store (its findings wait for `drain`)."""
        self.observer.frame(frame)
        for f in self.judge.frame(n, frame):
            self._new.append((n, f))

    def frames(self, first: int, frames: list[Frame]) -> None:
        """Judge frames `first`, `first + 1`… of the traffic store, in order."""
        self.observer.frames(frames)  # (frames are told to it before their findings are made, as `frame` does)
        self._new.extend(self.judge.frames(first, frames))

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
                self._reviewing += 1  # a review under way is of the last connection's list
                self.judge, self.report, self.definitions, self.cost = Judge(), None, [], None
                self.pin.reset()
                self.changed.emit()
            elif status is Status.CONNECTED and session.hello is not None and self.judge.capabilities is None:
                self.judge.ready(session.hello.protocol_version, session.hello.capabilities)
            self._status = status
        elif what == "tools":
            self.review(list(session.tools.items))
        if what in ("tools", "resources", "templates", "prompts") or (what == "status" and session.spec.pin):
            self._compare_pin()

    def _compare_pin(self) -> None:
        session = self.session
        caps = session.hello.capabilities if session.hello is not None else None
        if session.hello is not None and self.pin.update(session.spec.pin, caps, session.listings.lists):
            self.changed.emit()

    def review(self, tools: list[Any]) -> None:
        """The tool list is known (again): tell the judge the tools, review every definition. A list longer
        than `SYNC_TOOLS` is reviewed a slice at a time (2,000 definitions took a third of a second, one loop
        turn of the window's); the findings of the newest list win."""
        self.judge.tools = {t["name"]: t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}
        self.judge.listed = True
        self._reviewing += 1
        if len(tools) > SYNC_TOOLS:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                pass
            else:
                task = loop.create_task(self._review_later(tools, self._reviewing))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                return
        self._reviewed(*_review(tools))

    async def _review_later(self, tools: list[Any], generation: int) -> None:
        """The review a few milliseconds at a time, the loop turning in between: a worker thread took the
        interpreter by turns, and the window's painting (its delegates are Python) waited for it each time
        (listing 2,000 tools: turns of 60-330 ms)."""
        steps = _review_steps(tools)
        while True:
            until = time.monotonic() + REVIEW_SLICE_S
            try:
                while time.monotonic() < until:
                    next(steps)
            except StopIteration as done:
                if generation == self._reviewing:
                    self._reviewed(*done.value)
                return
            await asyncio.sleep(0)
            if generation != self._reviewing:
                return  # a newer list is under review

    def _reviewed(self, definitions: list[Finding], cost: Cost) -> None:
        self.definitions, self.cost = definitions, cost
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
        return worst_first(collapse(self.definitions + extra) + self.judge.reported() + self.across()
                           + self.pin.findings)

    def across(self) -> list[Finding]:
        """What this server's tools get beside the other servers' (`others`), worked out again only when a
        tool list changed."""
        others = self.others() if self.others is not None else {}
        mine = self.session.tools.items
        if not others or not mine:
            return []
        key = (id(mine), len(mine), tuple((name, id(tools), len(tools)) for name, tools in others.items()))
        if self._across[0] != key:
            me = self.session.name
            while me in others:
                me += " (this one)"
            # the lists are held with their ids, so that no other list can take an id while it is cached
            self._across = (key, across({**others, me: mine}).get(me, []), [mine, *others.values()])
        return self._across[1]

    def summary(self) -> dict[str, int]:
        found = self.findings()
        return {sev: sum(1 for f in found if f.severity == sev) for sev in SEVERITIES}


ACTIVE = ("list-order-unstable", "pagination-cursor-loop")  # found only by listing on purpose
SYNC_TOOLS = 200  # a longer tool list is reviewed a slice at a time
REVIEW_SLICE_S = 0.008  # how long a slice of that review may hold the loop


def _review(tools: list[Any]) -> tuple[list[Finding], Cost]:
    return drive(_review_steps(tools))


def _review_steps(tools: list[Any]) -> Generator[None, None, tuple[list[Finding], Cost]]:
    cost = yield from cost_steps(tools)
    found = yield from review_steps(tools, cost)
    return found, cost
