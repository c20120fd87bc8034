"""Following a task (MCP 2025-11-25) until its result comes: a state machine, no I/O, no clock of its own.

A task-augmented `tools/call` is answered at once with a task. The client then asks `tasks/result`
(the server holds that answer until the task ends, and delivers the task's own requests, such as an
elicitation, meanwhile) and polls `tasks/get` at the server's `pollInterval` so that the user sees each
state. The driver asks `next_step(now)` what to do, does it, and feeds back what happened:

- `FetchResult`: send `tasks/result`; feed its answer to `result_answered` or `result_failed`;
- `PollStatus`: send `tasks/get`; feed its answer to `status`, or its failure to `status_failed`;
- `Wait(seconds)`: wait that long, or less if a status notification (`status`) or the `tasks/result`
  answer comes first;
- `Deliver(result)`: the tool's result is in;
- `GiveUp(reason)`: stop; raise `error` (an answer's own failure, kept as it came) or a timeout.

Rules the machine keeps: a state older than one already seen is ignored (a `tasks/get` answer overtaken
by a later status notification); a server that answers `tasks/result` with an error before the task ends
(instead of holding it open) is polled until the end and asked once more; a server whose `tasks/get`
fails is no longer polled and its result is awaited for `timeout` at most; a task that ended without its
result coming within `timeout` times out with that said.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .tasks import MAX_POLL_S, TERMINAL, is_older, poll_seconds


@dataclass(frozen=True)
class FetchResult:
    """Send `tasks/result` now."""


@dataclass(frozen=True)
class PollStatus:
    """Send `tasks/get` now."""


@dataclass(frozen=True)
class Wait:
    seconds: float


@dataclass(frozen=True)
class Deliver:
    result: Any


@dataclass(frozen=True)
class GiveUp:
    """`error` is the failure to raise as it came (an error answer); else `reason` describes a timeout."""

    reason: str
    error: Any = None
    timed_out: bool = False


Step = FetchResult | PollStatus | Wait | Deliver | GiveUp

_NOTHING = object()


class TaskFollower:
    def __init__(self, task: dict[str, Any], *, timeout: float | None, now: float) -> None:
        self.task_id: str = task["taskId"]
        self.latest = task
        self.timeout = timeout
        self._result: Any = _NOTHING
        self._error: Any = _NOTHING
        self._fetching = False
        self._fetched_once = False
        self._asked_again = False
        self._polling = True
        self._waited_from = now  # since when a result is due: the task's end, or polling's end
        self._poll_at: float | None = None

    @property
    def ended(self) -> bool:
        return self.latest.get("status") in TERMINAL

    # ------------------------------------------------------------------ what happened
    def status(self, task: dict[str, Any]) -> bool:
        """A state of the task (a `tasks/get` answer or a status notification). True when it is news for
        the user (a new status or message); False when it is old or the same as the one shown."""
        if is_older(task, self.latest):
            return False
        news = (task.get("status"), task.get("statusMessage")) != (self.latest.get("status"),
                                                                  self.latest.get("statusMessage"))
        self.latest = task
        self._poll_at = None
        return news

    def status_failed(self, error: Any, now: float) -> None:
        """`tasks/get` failed: without a `tasks/result` under way that is the end; with one, polling stops
        and the result is awaited alone."""
        if not self._fetching:
            self._error = error
            return
        self._polling = False
        self._waited_from = now

    def result_answered(self, result: Any) -> None:
        self._fetching = False
        self._result = result

    def result_failed(self, error: Any, *, remote: bool) -> None:
        """`tasks/result` failed. A JSON-RPC error while the task still runs is an early answer: poll until
        the end, then ask once more. Anything else is final."""
        self._fetching = False
        if self.ended or self._asked_again or not self._polling or not remote:
            self._error = error

    @property
    def still_running(self) -> bool:
        """Whether a caller that gives up should tell the server to stop the task (`tasks/cancel`)."""
        return not self.ended

    # ------------------------------------------------------------------ what to do
    def next_step(self, now: float) -> Step:
        if self._result is not _NOTHING:
            return Deliver(self._result)
        if self._error is not _NOTHING:
            return GiveUp("the task's result could not be had", error=self._error)
        if not self._fetching and (not self._fetched_once or self.ended):
            self._asked_again = self._fetched_once
            self._fetched_once = self._fetching = True
            return FetchResult()
        due = self.ended or not self._polling
        if not due:
            self._waited_from = now
            if self._poll_at is None:
                self._poll_at = now + poll_seconds(self.latest)
            if now >= self._poll_at:
                self._poll_at = None
                return PollStatus()
            return Wait(self._poll_at - now)
        if self.timeout is not None and now - self._waited_from > self.timeout:
            how = (f"ended ({self.latest.get('status')})" if self.ended
                   else "gives no status (tasks/get failed)")
            return GiveUp(f"tasks/result: task {self.task_id} {how} and its result did not come within "
                          f"{self.timeout:g} s", timed_out=True)
        return Wait(min(MAX_POLL_S, self.timeout or MAX_POLL_S))
