"""The development loop of one server: restart on save, reconnect when it comes back, re-run and compare.

`DevLoop` watches a stdio server's source (`watch.Watcher`) and restarts the server in place after each
burst of changes: the old listings stay shown until the new ones arrive, and what changed is marked (see
`ServerSession.open(keep_listings=True)`); the traffic gets a marker; a server that fails to start shows
its stderr and exit code, and the next change tries again. Restarts closer together than `LOOP_GAP_S`,
`LOOP_AFTER` times running, are a loop (a server that writes its own source, a formatter on save): the
next waits, doubling up to `BACKOFF_MAX_S`, and says so; `stop()` ends the watching.

A URL server is probed (`PROBE_S`, marked as heartbeat so the traffic pane keeps it out of sight) and,
once it is unreachable, connected to again with backoff until it answers.

After each restart or reconnection the loop re-runs the last call, or the pinned ones (`WatchSettings.rerun`),
and compares each answer with the previous one with the same structural diff as a replay.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import errors as E
from ..recording.compare import Change, diff_values
from ..session import ServerSession, Status
from ..session.calls import OK, TOOL_ERROR, CallRecord
from ..session.hooks import Hook
from .watch import Burst, Plan, Watcher, WatchSettings, plan, short_list

log = logging.getLogger("spyglass.devloop")

LOOP_GAP_S = 1.0  # a burst this soon after the previous restart ended counts towards a loop
LOOP_AFTER = 3  # this many in a row are a loop
BACKOFF_MAX_S = 30.0
PROBE_S = 2.0  # how often a URL server is asked whether it is there
RECONNECT_S = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)  # waits between tries to reach a URL server again
RERUN_TIMEOUT_S = 120.0


@dataclass
class Rerun:
    """A call run again after a restart, beside the call it repeats."""

    before: CallRecord
    after: CallRecord | None = None  # None: not run (the tool is gone, or the server did not come back)
    changes: list[Change] = field(default_factory=list)
    note: str = ""

    @property
    def same(self) -> bool:
        return self.after is not None and not self.changes

    def describe(self) -> str:
        if self.after is None:
            return f"{self.before.tool}: {self.note}"
        if self.after.running:
            return f"{self.before.tool}: running again…"
        if not self.changes:
            return f"{self.before.tool}: same answer as before"
        n = len(self.changes)
        return f"{self.before.tool}: {n} difference{'s' if n != 1 else ''}"


def answer_of(rec: CallRecord) -> Any:
    """What a call came back with, as one value to compare: its result, or its outcome and error."""
    if rec.outcome in (OK, TOOL_ERROR) and rec.result is not None:
        return rec.result
    return {"outcome": rec.outcome, "error": rec.error_text}


def compare(before: CallRecord, after: CallRecord) -> list[Change]:
    return diff_values(answer_of(before), answer_of(after))


class DevLoop:
    """One server's watch, restarts and re-runs. `changed` says "state" and "rerun"."""

    def __init__(self, session: ServerSession, settings: WatchSettings | None = None, *,
                 watcher: Callable[[Plan], Watcher] = Watcher, probe_s: float = PROBE_S,
                 reconnect_s: tuple[float, ...] = RECONNECT_S) -> None:
        self.session = session
        self.settings = settings or WatchSettings()
        self.url = session.spec.url is not None
        self.plan: Plan | None = None if self.url else plan(session.spec, self.settings)
        self.changed: Hook[[str]] = Hook("devloop")
        self.state = "off"
        self.reruns: list[Rerun] = []
        self.restarts = 0
        self.last_files: tuple[str, ...] = ()
        self.backoff_s = 0.0
        self.saved_at: float | None = None  # when the burst behind the last restart ended (monotonic)
        self.rerun_at: float | None = None  # when the last re-run ended
        self._make_watcher = watcher
        self._watcher: Watcher | None = None
        self._probe_s = probe_s
        self._reconnect_s = reconnect_s
        self._pending: set[str] = set()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Future[Any]] = []
        self._streak = 0
        self._last_end = -1e9

    @property
    def running(self) -> bool:
        return any(not t.done() for t in self._tasks)

    def describe(self) -> str:
        if self.url:
            return f"reconnects to {self.session.spec.url} when it comes back"
        assert self.plan is not None
        return f"watching {self.plan.describe()}"

    # ------------------------------------------------------------------ lifetime
    def start(self) -> None:
        if self.running:
            return
        self._set_state("watching")
        if self.url:
            self._tasks = [asyncio.ensure_future(self._keep_reachable())]
        else:
            assert self.plan is not None
            self._watcher = self._make_watcher(self.plan)
            self._tasks = [asyncio.ensure_future(self._watch(self._watcher)),
                           asyncio.ensure_future(self._restarts())]
        for task in self._tasks:
            task.add_done_callback(self._ended)
        self.session.log.note(f"development loop: {self.describe()}")

    async def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        self.session.set_activity(None)
        self._set_state("off")

    def _ended(self, task: asyncio.Future[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("the development loop of %s stopped", self.session.name, exc_info=task.exception())
            self.session.log.note(f"development loop stopped: {task.exception()}", level="error")
            self.session.set_activity(None)
            self._set_state("off")

    def _set_state(self, state: str) -> None:
        self.state = state
        self.changed.emit("state")

    # ------------------------------------------------------------------ stdio: restart on save
    async def _watch(self, watcher: Watcher) -> None:
        async for burst in watcher.bursts():
            if burst.missing:
                gone = ", ".join(burst.missing)
                self.session.log.note(f"the watched folder {gone} is gone: watching again when it is back",
                                      level="warning")
                self.session.set_activity(f"watched folder gone: {gone}")
            elif burst.back:
                self.session.log.note(f"the watched folder {', '.join(burst.back)} is back")
                self.session.set_activity(None)
            if burst.files:
                self._pending.update(burst.files)
                self.saved_at = time.monotonic()
                self._wake.set()

    async def _restarts(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self.session.status in (Status.IDLE, Status.DISCONNECTED):
                # not connected, or disconnected by the user: a save does not connect it
                n = len(self._pending)
                self._pending = set()
                self.session.log.note(f"{n} file{'s' if n != 1 else ''} changed; not restarted: the server is "
                                      f"{self.session.status.value}")
                continue
            wait = self._loop_wait()
            if wait > 0:
                self.backoff_s = wait
                n = len(self._pending)
                self.session.set_activity(f"restarting in a loop: next restart in {wait:g} s "
                                          f"({n} file{'s' if n != 1 else ''} changed)")
                self._set_state("backing off")
                self.session.log.note(f"{self.session.name} restarted {self._streak} times in a row less than "
                                      f"{LOOP_GAP_S:g} s apart: waiting {wait:g} s", level="warning")
                await asyncio.sleep(wait)
            files, self._pending = tuple(sorted(self._pending)), set()
            await self.restart_now(Burst(files=files))

    def _loop_wait(self) -> float:
        if time.monotonic() - self._last_end < LOOP_GAP_S:
            self._streak += 1
        else:
            self._streak = 0
        if self._streak < LOOP_AFTER:
            return 0.0
        return min(BACKOFF_MAX_S, 2.0 ** (self._streak - LOOP_AFTER))

    async def restart_now(self, burst: Burst) -> None:
        """Restart the server in place for `burst`, then re-run what the settings say."""
        assert self.plan is not None
        self.restarts += 1
        self.last_files = burst.files
        what = burst.describe()
        self.session.set_activity(f"restarting ({what})")
        self._set_state("restarting")
        names = short_list(burst.files, self.plan.folders)
        self.session.mark(f"restart: {names} changed", marker="restart", files=list(burst.files[:200]),
                          count=len(burst.files))
        self.session.log.note(f"restarting: {what} ({names})")
        previous = self._to_rerun()
        await self.session.restart(keep_listings=True)
        self._last_end = time.monotonic()
        if self.session.status is Status.CONNECTED:
            self.session.set_activity(None)
            self._set_state("watching")
            await self.rerun(previous)
        else:
            code = f" (exit code {self.session.exit_code})" if self.session.exit_code is not None else ""
            self.session.set_activity(f"failed after {what}{code}; the next save tries again")
            self._set_state("failed")

    # ------------------------------------------------------------------ URL: reconnect when it is back
    async def _keep_reachable(self) -> None:
        tries = 0
        while True:
            if self.session.status is Status.CONNECTED:
                tries = 0
                await asyncio.sleep(self._probe_s)
                if self.session.status is not Status.CONNECTED or self.session.busy:
                    continue
                try:
                    await asyncio.wait_for(self.session.health.ping(heartbeat=True), max(self._probe_s, 5.0))
                    continue
                except E.RemoteError:
                    continue  # it answered, if only to refuse
                except (E.SpyglassError, TimeoutError) as exc:
                    message = exc.message if isinstance(exc, E.SpyglassError) else "no answer"
                    self.session.log.note(f"{self.session.name} went away ({message})", level="warning")
                    self.session.mark("the server went away", marker="gone")
            elif self.session.status is Status.CONNECTING:
                await asyncio.sleep(0.2)
                continue
            wait = self._reconnect_s[min(tries, len(self._reconnect_s) - 1)]
            tries += 1
            self.session.set_activity(f"waiting for it to come back: try {tries} in {wait:g} s")
            self._set_state("reconnecting")
            await asyncio.sleep(wait)
            previous = self._to_rerun()
            await self.session.restart(keep_listings=True)
            if self.session.status is Status.CONNECTED:
                self.session.set_activity(None)
                self.session.mark("the server is back", marker="restart")
                self._set_state("watching")
                self.restarts += 1
                await self.rerun(previous)

    # ------------------------------------------------------------------ re-run and compare
    def _to_rerun(self) -> list[CallRecord]:
        book = self.session.calls
        if self.settings.rerun == "pinned":
            return [r for r in book.pinned() if not r.running]
        if self.settings.rerun == "last":
            last = next((r for r in reversed(book.history) if not r.running), None)
            return [last] if last is not None else []
        return []

    async def rerun(self, previous: list[CallRecord]) -> list[Rerun]:
        """Run each of `previous` again and compare; `reruns` holds the outcome (announced as "rerun")."""
        if not previous:
            return []
        tools = {t.get("name"): t for t in self.session.tools.items}
        self.reruns = []
        for before in previous:
            tool = tools.get(before.tool)
            if tool is None:
                self.reruns.append(Rerun(before, note="not run again: the server no longer lists this tool"))
                continue
            after = self.session.calls.call(before.tool, before.arguments, tool, as_task=before.as_task,
                                            again_of=before.id)
            self.reruns.append(Rerun(before, after))
        self.changed.emit("rerun")
        for item in self.reruns:
            if item.after is None or item.after.job is None:
                continue
            try:
                await asyncio.wait_for(asyncio.shield(item.after.job), RERUN_TIMEOUT_S)
            except (asyncio.CancelledError, TimeoutError, Exception):
                if asyncio.current_task() is not None and asyncio.current_task().cancelling():  # type: ignore[union-attr]
                    raise
            if not item.after.running:
                item.changes = compare(item.before, item.after)
        self.rerun_at = time.monotonic()
        self.changed.emit("rerun")
        return self.reruns


def watchable(session: ServerSession) -> bool:
    """Whether a server can be watched: a command to restart, or a URL to reconnect to."""
    return bool(session.spec.command) or session.spec.url is not None
