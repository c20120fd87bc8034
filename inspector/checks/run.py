"""A check of one server: connect, list every kind twice, probe a tool that cannot exist, optionally call
the read-only tools, and judge every frame on the way. Qt-free: `spyglass check` and the window's
Check tab both run it.

`Check(session)` attaches to a `ServerSession` before it opens (its traffic hook feeds the judge);
`await check.run(calls=...)` does the rest and returns a `Report`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .. import errors as E
from ..session.listing import KINDS
from ..traffic.frame import Frame
from .definitions import Cost, list_cost, review_tools
from .frames import Judge
from .rules import SEVERITIES, Finding, finding, mistake, times, worst_first
from .sample import sample

if TYPE_CHECKING:
    from ..session import CallRecord, ServerSession

CALLS = ("none", "read-only")
PROBE = "spyglass-check-no-such-tool"  # a name no server lists (if one does, the probe is skipped)


@dataclass
class Report:
    server: dict[str, Any]
    findings: list[Finding]
    cost: Cost | None = None
    notes: list[str] = field(default_factory=list)  # what the check did not do, and why
    called: list[str] = field(default_factory=list)  # tools called with made-up arguments

    def summary(self) -> dict[str, int]:
        return {sev: sum(1 for f in self.findings if f.severity == sev) for sev in SEVERITIES}

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"server": self.server, "findings": [f.as_json() for f in self.findings],
                               "summary": self.summary()}
        if self.cost is not None:
            out["cost"] = self.cost.as_json()
        if self.called:
            out["called"] = self.called
        if self.notes:
            out["notes"] = self.notes
        return out

    def ignoring(self, ignored: Callable[[Finding], bool]) -> Report:
        return Report(self.server, [f for f in self.findings if not ignored(f)], self.cost, self.notes, self.called)


class Decline:
    """Answers every question a server asks during a check with no (a check never makes up answers)."""

    async def elicit(self, session: ServerSession, params: dict[str, Any], call: CallRecord | None,
                     ) -> dict[str, Any]:
        return {"action": "decline"}

    async def sample(self, session: ServerSession, params: dict[str, Any], call: CallRecord | None,
                     ) -> dict[str, Any] | None:
        return None

    async def share_roots(self, session: ServerSession, roots: list[dict[str, Any]], call: CallRecord | None,
                          ) -> bool:
        return False


class Check:
    """One check of `session`. Without `judge`, the check takes the session's traffic hook (handing each
    frame on to `traffic`) and judges every frame itself; with one (the window's live judge, which sees
    the frames already), it leaves the hook alone."""

    def __init__(self, session: ServerSession, *, traffic: Callable[[Frame], None] | None = None,
                 judge: Judge | None = None) -> None:
        self.session = session
        self.judge = judge or Judge()
        self.frames = 0
        self.lists: dict[str, list[Any]] = {}  # every listing as last read, by kind (tools, resources...)
        self._findings: list[Finding] = []
        self._forward = traffic
        if judge is None:
            session.traffic = self._frame
        if session.answerer is None:
            session.answerer = Decline()

    def _frame(self, frame: Frame) -> None:
        self.judge.frame(self.frames, frame)
        self.frames += 1
        if self._forward is not None:
            self._forward(frame)

    async def run(self, calls: str = "none", timeout: float | None = None) -> Report:
        """Connect when not connected, then check. Raises what connecting raises (SpyglassError)."""
        if calls not in CALLS:
            raise E.UsageError(f"--call must be one of {', '.join(CALLS)}, not {calls!r}")
        session = self.session
        if session.client is None:
            await session.open()
        client = session.need_client()
        hello = session.hello
        assert hello is not None
        self.judge.ready(hello.protocol_version, hello.capabilities)
        report = Report(server={**(hello.server_info or {}), "protocolVersion": hello.protocol_version}, findings=[])
        lists: dict[str, list[Any]] = {}
        for kind, spec in KINDS.items():
            caps = hello.capabilities
            if isinstance(caps, dict) and spec.capability not in caps:
                continue
            items = await self._list_twice(client, kind, report)
            if items is not None:
                lists[kind] = items
        self.lists = lists
        tools = [t for t in lists.get("tools", []) if isinstance(t, dict)]
        if "tools" in lists:
            self.judge.tools = {t["name"]: t for t in tools if isinstance(t.get("name"), str)}
            self.judge.listed = True
            self._findings += review_tools(lists["tools"])
            report.cost = list_cost(lists["tools"])
            await self._probe_unknown(client, timeout)
            if calls == "read-only":
                await self._call_read_only(client, tools, report, timeout)
        report.findings = worst_first(collapse(self._findings) + self.judge.reported())
        return report

    async def _list_twice(self, client: Any, kind: str, report: Report) -> list[Any] | None:
        spec = KINDS[kind]
        orders = []
        for _ in range(2):
            try:
                result = await client.list_all(spec.method, spec.key, refresh=True)
            except E.InvalidResponse as exc:
                if exc.details.get("pagination"):
                    self._findings.append(finding("pagination-cursor-loop", f"list:{kind}",
                                                  f"{exc.message}: a cursor is never handed out twice; end the "
                                                  "last page without nextCursor"))
                else:
                    report.notes.append(f"{spec.method} could not be read: {exc.message}")
                return None
            except E.RemoteError as exc:
                report.notes.append(f"{spec.method} failed: {exc.message}")
                return None
            items = result.get(spec.key)
            orders.append(items if isinstance(items, list) else [])
        first, second = orders
        keys = [[i.get(spec.ident) if isinstance(i, dict) else None for i in items] for items in orders]
        if keys[0] != keys[1] and sorted(map(str, keys[0])) == sorted(map(str, keys[1])):
            moved = next(k for a, k in zip(keys[0], keys[1], strict=True) if a != k)
            self._findings.append(finding("list-order-unstable", f"list:{kind}",
                                          f"two {spec.method} calls a moment apart returned the same {len(first)} "
                                          f"items in a different order (first difference: {moved!r}): return them "
                                          "in a fixed order, so that clients can cache the list and models reuse "
                                          "their prompt cache"))
        return second

    async def _probe_unknown(self, client: Any, timeout: float | None) -> None:
        name = PROBE
        if name in self.judge.tools:
            return
        try:
            await client.call_tool(name, {}, timeout=timeout, task=False)
        except (E.RemoteError, E.InvalidResponse):
            pass  # an error is the right answer (the judge tells -32602 from other codes and from a result)

    async def _call_read_only(self, client: Any, tools: list[dict[str, Any]], report: Report,
                              timeout: float | None) -> None:
        for tool in tools:
            name = tool.get("name")
            hints = _dict(tool.get("annotations"))
            read_only = hints.get("readOnlyHint") is True and hints.get("destructiveHint") is not True
            if not isinstance(name, str) or not read_only:
                continue
            execution = _dict(tool.get("execution"))
            if execution.get("taskSupport") == "required":
                report.notes.append(f"{name}: not called (it runs only as a task)")
                continue
            arguments = sample(tool.get("inputSchema"))
            if arguments is None:
                report.notes.append(f"{name}: not called (no valid arguments could be made from its inputSchema)")
                continue
            report.called.append(name)
            try:
                await client.call_tool(name, arguments, timeout=timeout, task=False)
            except (E.RemoteError, E.InvalidResponse):
                pass  # judged from the frames
            except E.RequestTimeout:
                report.notes.append(f"{name}: no answer within {timeout} s")
            except asyncio.CancelledError:
                raise


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def collapse(findings: list[Finding]) -> list[Finding]:
    """One finding for one mistake: the same message about several frames (the same list read twice, the
    same broken notification a hundred times) is kept once, at its first frame, naming how often."""
    out: dict[tuple[str, str], Finding] = {}
    seen: dict[tuple[str, str], int] = {}
    for f in findings:
        key = mistake(f)
        seen[key] = seen.get(key, 0) + 1
        out.setdefault(key, f)
    return [f if seen[key] == 1 else replace(f, message=f"{f.message} ({times(f, seen[key])})")
            for key, f in out.items()]
