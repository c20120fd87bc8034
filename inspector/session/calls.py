"""Tool calls of one server, in flight and done: a `CallRecord` per call, kept in the server's `CallBook`.

A call runs as an asyncio task (whoever started it never waits); several run at once. Each carries a
progress token (progress feeds the record and resets the request's timeout, in the client); cancelling
the task makes the client tell the server (`notifications/cancelled`, closing the stream on modern HTTP,
`tasks/cancel` for a task) and the call ends as "cancelled". The questions the server asks during a call
(sampling, elicitation, roots, in either era) are `Round`s of the call they belong to, which the client
knows (see `RequestContext`), so they read as one conversation.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import EllipsisType
from typing import TYPE_CHECKING, Any

from .. import errors as E
from ..protocol import tasks as T
from .hooks import Hook

if TYPE_CHECKING:
    from ..client import Client

log = logging.getLogger("spyglass.session.calls")

HISTORY_LIMIT = 200

# outcomes
RUNNING, OK, TOOL_ERROR, REJECTED, CANCELLED, TIMEOUT, FAILED = (
    "running", "ok", "tool error", "rejected", "cancelled", "timeout", "failed")


@dataclass
class Round:
    """One question the server asked (a legacy server request, or an MRTR input request), and its answer."""

    method: str
    params: Any
    response: Any = None
    error: str | None = None
    answered: bool = False
    known_by: str = "unknown"  # how it is known to belong to its call (RequestContext.known_by)


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
    job: asyncio.Future[Any] | None = None  # the asyncio task running the call
    request_id: Any = None  # the tools/call's id (logical: MRTR retries keep it)
    as_task: bool | None = None  # run as an MCP task: True, False, or None (when the tool requires it)
    task_id: str | None = None  # the server's task, once it answered with one
    task_status: str | None = None
    task_message: str | None = None
    task_trail: list[tuple[float, str, str | None]] = field(default_factory=list)  # (seconds in, status, message)
    pinned: bool = False  # run again after each restart of a watched server (when it re-runs pinned calls)
    again_of: int | None = None  # the id of the call this one ran again (after a restart)
    caller: str | None = None  # who made it when not this window's user: "agent", "agent: Claude Code", "you"

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


class CallBook:
    """Starts, tracks and cancels one server's calls; keeps its history (newest last)."""

    def __init__(self, server_id: str, client: Callable[[], Client | None], name: Callable[[], str]) -> None:
        self.server_id = server_id
        self._client = client
        self._name = name
        self.history: list[CallRecord] = []
        self.started: Hook[[CallRecord]] = Hook("call started")
        self.updated: Hook[[CallRecord]] = Hook("call updated")  # progress, a round, a task state
        self.finished: Hook[[CallRecord]] = Hook("call finished")
        self._ids = itertools.count(1)

    # ------------------------------------------------------------------ queries
    def running(self, tool: str | None = None) -> list[CallRecord]:
        return [r for r in self.history if r.running and (tool is None or r.tool == tool)]

    def last(self, tool: str | None = None) -> CallRecord | None:
        for r in reversed(self.history):
            if tool is None or r.tool == tool:
                return r
        return None

    def records(self) -> list[CallRecord]:
        return list(self.history)

    def pinned(self) -> list[CallRecord]:
        """The pinned calls, oldest first (one per tool and arguments: the newest of each)."""
        seen: dict[tuple[str, str], CallRecord] = {}
        for r in self.history:
            if r.pinned:
                seen[(r.tool, _key(r.arguments))] = r
        return sorted(seen.values(), key=lambda r: r.id)

    def pin(self, rec: CallRecord, on: bool = True) -> None:
        if rec.pinned != on:
            rec.pinned = on
            self.updated.emit(rec)

    # ------------------------------------------------------------------ calling
    def call(self, tool: str, arguments: Any, tool_def: dict[str, Any] | None = None, *,
             anyway: bool = False, as_task: bool | None = None, again_of: int | None = None,
             timeout: float | None | EllipsisType = ...) -> CallRecord:
        """Start a call in the background and return its record at once. `timeout`: seconds the request
        may wait for its answer (default: the session's timeout)."""
        rec = CallRecord(next(self._ids), self.server_id, tool, arguments, tool_def, validated_anyway=anyway,
                         as_task=as_task, again_of=again_of)
        self.history.append(rec)
        while len(self.history) > HISTORY_LIMIT:
            old = next((r for r in self.history if not r.running and not r.pinned), None)
            if old is None:
                break
            self.history.remove(old)
        rec.job = asyncio.ensure_future(self._run(rec, timeout))
        rec.job.add_done_callback(lambda t: t.cancelled() or t.exception())
        self.started.emit(rec)
        return rec

    def cancel(self, rec: CallRecord) -> None:
        if rec.job is not None and not rec.job.done():
            rec.job.cancel()

    def cancel_all(self) -> None:
        for rec in self.running():
            self.cancel(rec)

    async def _run(self, rec: CallRecord, timeout: float | None | EllipsisType = ...) -> None:
        client = self._client()

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

        def sent(request_id: Any) -> None:
            rec.request_id = request_id

        try:
            if client is None:
                raise E.ConnectError(f"{self._name()} is not connected")
            result = await client.call_tool(rec.tool, rec.arguments if rec.arguments is not None else {},
                                            on_progress=progress, task=rec.as_task, on_task=task_state,
                                            owner=rec, on_id=sent, timeout=timeout)
        except asyncio.CancelledError:
            told = "the server was told to stop"
            if rec.task_id is not None and rec.task_status not in T.TERMINAL:
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
    def add_round(self, rec: CallRecord, method: str, params: Any, known_by: str) -> Round:
        r = Round(method, params, known_by=known_by)
        rec.rounds.append(r)
        self.updated.emit(rec)
        return r

    def answer_round(self, rec: CallRecord, r: Round, response: Any = None, error: str | None = None) -> None:
        r.response, r.error, r.answered = response, error, error is None
        self.updated.emit(rec)


def _key(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)
