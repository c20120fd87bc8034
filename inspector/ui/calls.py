"""Tool calls in flight and done: one `CallRecord` per call, a `CallManager` per window.

A call is an asyncio task on the qasync loop (the window never waits); several run at once, on one
server or many. Each carries a progress token (progress drives the bar and resets the server's
timeout, in the client); cancelling the task makes the client send `notifications/cancelled` (or
close the stream on modern HTTP) and the call ends as "cancelled". Server requests that arrive
during a call (sampling, elicitation, roots, in either era) are added to its `rounds`, so the
result panel can show them as one conversation.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from .. import errors as E

log = logging.getLogger("spyglass.ui.calls")

HISTORY_LIMIT = 200

RPC_CODE_NAMES = {
    -32700: "Parse error", -32600: "Invalid Request", -32601: "Method not found", -32602: "Invalid params",
    -32603: "Internal error", -32002: "Resource not found", -32042: "URL elicitation required",
    -32020: "Header mismatch", -32021: "Missing client capability", -32022: "Unsupported protocol version",
    -32800: "Request cancelled", -32001: "Request timeout",
}


def code_name(code: Any) -> str:
    if not isinstance(code, int) or isinstance(code, bool):
        return "not an integer code"
    if code in RPC_CODE_NAMES:
        return RPC_CODE_NAMES[code]
    if -32099 <= code <= -32000:
        return "Server error"
    if -32768 <= code <= -32000:
        return "Reserved error code"
    return "Application error"


# outcomes
RUNNING, OK, TOOL_ERROR, REJECTED, CANCELLED, TIMEOUT, FAILED = (
    "running", "ok", "tool error", "rejected", "cancelled", "timeout", "failed")


@dataclass
class Round:
    """One server request answered during a call (legacy request or MRTR input request)."""

    method: str
    params: Any
    response: Any = None
    error: str | None = None
    answered: bool = False


@dataclass
class CallRecord:
    id: int
    server_id: str
    tool: str
    arguments: Any
    tool_def: dict[str, Any] | None = None
    wall: float = field(default_factory=time.time)
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    outcome: str = RUNNING
    result: Any = None
    error: E.SpyglassError | None = None
    error_text: str = ""
    progress: float | None = None
    total: float | None = None
    message: str | None = None
    rounds: list[Round] = field(default_factory=list)
    validated_anyway: bool = False
    task: asyncio.Task[Any] | None = None
    as_task: bool | None = None       # run as an MCP task: True, False, or None (when the tool requires it)
    task_id: str | None = None        # the server's task, once it answered with one
    task_status: str | None = None
    task_message: str | None = None
    task_trail: list[tuple[float, str, str | None]] = field(default_factory=list)  # (seconds in, status, message)

    @property
    def running(self) -> bool:
        return self.outcome == RUNNING

    @property
    def elapsed(self) -> float:
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    def summary(self) -> str:
        secs = f"{self.elapsed:.2f} s" if self.elapsed < 10 else f"{self.elapsed:.1f} s"
        if self.outcome == RUNNING:
            return f"running · {secs}"
        return f"{self.outcome} · {secs}"


class CallManager(QObject):
    """Starts, tracks and cancels calls; keeps each server's history (newest last)."""

    started = Signal(object)    # CallRecord
    updated = Signal(object)    # CallRecord (progress, a round)
    finished = Signal(object)   # CallRecord

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.history: dict[str, list[CallRecord]] = {}
        self._ids = itertools.count(1)

    # ------------------------------------------------------------------ queries
    def running(self, server_id: str | None = None, tool: str | None = None) -> list[CallRecord]:
        return [r for recs in self.history.values() for r in recs if r.running
                and (server_id is None or r.server_id == server_id) and (tool is None or r.tool == tool)]

    def last(self, server_id: str, tool: str | None = None) -> CallRecord | None:
        for r in reversed(self.history.get(server_id, [])):
            if tool is None or r.tool == tool:
                return r
        return None

    def records(self, server_id: str) -> list[CallRecord]:
        return list(self.history.get(server_id, []))

    def active_for(self, server_id: str) -> CallRecord | None:
        """The call a server request belongs to: the latest call still running on that server."""
        run = self.running(server_id)
        return run[-1] if run else None

    # ------------------------------------------------------------------ calling
    def call(self, conn: Any, tool: str, arguments: Any, tool_def: dict[str, Any] | None = None, *,
             anyway: bool = False, as_task: bool | None = None) -> CallRecord:
        rec = CallRecord(next(self._ids), conn.server_id, tool, arguments, tool_def, validated_anyway=anyway,
                         as_task=as_task)
        recs = self.history.setdefault(conn.server_id, [])
        recs.append(rec)
        while len(recs) > HISTORY_LIMIT:
            old = next((r for r in recs if not r.running), None)
            if old is None:
                break
            recs.remove(old)
        rec.task = asyncio.ensure_future(self._run(conn, rec))
        rec.task.add_done_callback(lambda t: t.cancelled() or t.exception())
        self.started.emit(rec)
        return rec

    def cancel(self, rec: CallRecord) -> None:
        if rec.task is not None and not rec.task.done():
            rec.task.cancel()

    def cancel_all(self) -> None:
        for rec in self.running():
            self.cancel(rec)

    async def _run(self, conn: Any, rec: CallRecord) -> None:
        client = conn.client

        def progress(value: Any, total: Any, message: str | None) -> None:
            rec.progress = value if isinstance(value, (int, float)) else None
            rec.total = total if isinstance(total, (int, float)) else None
            rec.message = message if isinstance(message, str) else None
            self.updated.emit(rec)

        def task_state(task: dict[str, Any]) -> None:
            rec.task_id = task.get("taskId")
            rec.task_status = task.get("status")
            rec.task_message = task.get("statusMessage") if isinstance(task.get("statusMessage"), str) else None
            rec.task_trail.append((time.monotonic() - rec.started, str(rec.task_status), rec.task_message))
            self.updated.emit(rec)

        try:
            if client is None:
                raise E.ConnectError(f"{conn.name} is not connected")
            result = await client.call_tool(rec.tool, rec.arguments if rec.arguments is not None else {},
                                            on_progress=progress, task=rec.as_task, on_task=task_state)
        except asyncio.CancelledError:
            told = "the server was told to stop"
            if rec.task_id is not None and rec.task_status not in ("completed", "failed", "cancelled"):
                told = ("tasks/cancel was sent" if client is not None and client.server_can("cancel")
                        else "the server offers no tasks/cancel, so its task may run on")
            self._end(rec, CANCELLED, error_text=f"cancelled by you; {told}")
            raise
        except E.RemoteError as exc:
            self._end(rec, REJECTED, error=exc, error_text=exc.rpc_message)
        except E.RequestTimeout as exc:
            self._end(rec, TIMEOUT, error=exc, error_text=exc.message)
        except E.SpyglassError as exc:
            self._end(rec, FAILED, error=exc, error_text=exc.message)
        except Exception as exc:  # a bug of ours: still an outcome, logged
            log.exception("calling %s", rec.tool)
            self._end(rec, FAILED, error_text=f"{type(exc).__name__}: {exc}")
        else:
            rec.result = result
            is_error = isinstance(result, dict) and result.get("isError") is True
            self._end(rec, TOOL_ERROR if is_error else OK)

    def _end(self, rec: CallRecord, outcome: str, *, error: E.SpyglassError | None = None,
             error_text: str = "") -> None:
        rec.ended = time.monotonic()
        rec.outcome = outcome
        rec.error = error
        rec.error_text = error_text
        for r in rec.rounds:
            if not r.answered and r.error is None:
                r.error = "not answered: the call ended first"
        self.finished.emit(rec)

    # ------------------------------------------------------------------ rounds
    def add_round(self, server_id: str, method: str, params: Any) -> Round | None:
        rec = self.active_for(server_id)
        if rec is None:
            return None
        r = Round(method, params)
        rec.rounds.append(r)
        self.updated.emit(rec)
        return r

    def answer_round(self, server_id: str, r: Round | None, response: Any = None, error: str | None = None) -> None:
        if r is None:
            return
        r.response, r.error, r.answered = response, error, error is None
        for rec in self.running(server_id):
            if r in rec.rounds:
                self.updated.emit(rec)
