"""The MCP half of the client: lists, tools (and tool tasks), resources, prompts, completion, logging,
subscriptions, roots and ping, on top of `ClientCore`. No Qt here.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable
from types import EllipsisType
from typing import Any

from .. import errors as E
from ..protocol import events as ev
from ..protocol import jsonrpc as rpc
from ..protocol import task_follow as F
from ..protocol import tasks as T
from ..protocol.headers import HeaderAnnotationError, header_params
from ..protocol.pagination import PaginationError, Paginator
from ..protocol.versions import Era
from ..traffic.frame import Frame
from .core import ClientCore
from .shapes import ProgressCallback

log = logging.getLogger("spyglass.client")

STOP_TASK_WAIT_S = 1.0  # how long a cancelled task call waits for the answer to its tasks/cancel
EARLY_STATUS_KEPT = 64  # status notifications of tasks nobody follows (yet) that are remembered

TaskCallback = Callable[[dict[str, Any]], None]
"""Told every new state of a task (the CreateTaskResult's task, tasks/get results, status notifications)."""

LIST_CHANGED = {"notifications/tools/list_changed": "tools/list",
                "notifications/prompts/list_changed": "prompts/list",
                "notifications/resources/list_changed": "resources/list"}
# the notifications the client itself reads (caches, subscriptions, tasks); any other one goes straight on
_CLIENT_NOTIFICATIONS = frozenset({*LIST_CHANGED, "notifications/subscriptions/acknowledged",
                                   "notifications/tasks/status"})


class Client(ClientCore):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # where a read's run of plain notifications is handed on at once, as (method, params) pairs in order
        # (None: `on_notification`, one at a time); those this client looks at itself still go one at a time
        self.on_notifications: Callable[[list[tuple[str, Any]]], None] | None = None
        self.rejected_tools: list[tuple[str, str]] = []  # (tool name, why) dropped from tools/list
        self.tools: dict[str, dict[str, Any]] = {}  # name -> tool, from the last tools/list
        self._cache: dict[str, tuple[float, dict[str, Any]]] = {}  # list method -> (expiry, result)
        self._subscriptions: dict[Any, Subscription] = {}
        self._task_watchers: dict[str, TaskCallback] = {}  # taskId -> followed by a call_tool
        self._task_progress: dict[Any, ProgressCallback] = {}  # progress token of a task's tools/call
        # the latest status notification of tasks not (yet) followed: one may come with the CreateTaskResult
        self._early_status: collections.OrderedDict[str, dict[str, Any]] = collections.OrderedDict()

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ lists
    def cache_fresh(self, method: str) -> bool:
        """Whether `list_all(method)` would answer from the cache now (a cacheable result within its ttlMs)."""
        cached = self._cache.get(method)
        return bool(cached and cached[0] > time.monotonic())

    async def list_all(self, method: str, key: str, params: dict[str, Any] | None = None, *,
                       refresh: bool = False) -> dict[str, Any]:
        """Every page of a list method, merged into one result. A result the
        server marked cacheable (`ttlMs`, 2026-07-28) is reused until it expires,
        unless `refresh`; a list_changed notification drops it."""
        cached = self._cache.get(method)
        if cached and not refresh and not params and cached[0] > time.monotonic():
            return {**cached[1], key: list(cached[1][key])}
        pager = Paginator(key)
        while (page := pager.params()) is not None:
            result = await self.request(method, {**(params or {}), **page})
            try:
                pager.add(result)
            except PaginationError as exc:
                raise E.InvalidResponse(f"{method}: {exc}", method=method, pagination=str(exc)) from None
        merged = dict(pager.last_result or {})
        merged.pop("nextCursor", None)
        merged[key] = pager.items
        ttl = merged.get("ttlMs")
        if not params and isinstance(ttl, (int, float)) and not isinstance(ttl, bool) and ttl > 0:
            self._cache[method] = (time.monotonic() + ttl / 1000, merged)
        return {**merged, key: list(pager.items)}

    async def list_tools(self, *, refresh: bool = False) -> dict[str, Any]:
        """Every tool. Over modern HTTP, tools whose `x-mcp-header` annotations
        break the spec's rules are dropped and listed in `rejected_tools`."""
        result = await self.list_all("tools/list", "tools", refresh=refresh)
        if self.transport.mirrors_tool_headers:
            kept, headers, self.rejected_tools = [], {}, []
            for tool in result["tools"]:
                try:
                    params = header_params(tool.get("inputSchema"))
                except HeaderAnnotationError as exc:
                    self.rejected_tools.append((str(tool.get("name")), str(exc)))
                    log.warning("tool %r dropped: %s", tool.get("name"), exc)
                    continue
                kept.append(tool)
                if params:
                    headers[tool["name"]] = params
            self.transport.set_tool_headers(headers)
            result["tools"] = kept
        self.tools = {t["name"]: t for t in result["tools"] if isinstance(t, dict) and isinstance(t.get("name"), str)}
        return result

    async def list_resources(self, *, refresh: bool = False) -> dict[str, Any]:
        return await self.list_all("resources/list", "resources", refresh=refresh)

    async def list_resource_templates(self, *, refresh: bool = False) -> dict[str, Any]:
        return await self.list_all("resources/templates/list", "resourceTemplates", refresh=refresh)

    async def list_prompts(self, *, refresh: bool = False) -> dict[str, Any]:
        return await self.list_all("prompts/list", "prompts", refresh=refresh)

    # ------------------------------------------------------------------ tools
    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                        on_progress: ProgressCallback | None = None, timeout: float | None | EllipsisType = ...,
                        task: bool | None = None, on_task: TaskCallback | None = None,
                        task_ttl_ms: int | None = None, owner: Any = None,
                        on_id: Callable[[rpc.RequestId], None] | None = None) -> dict[str, Any]:
        """Call a tool and return its CallToolResult. With `task` (None: when the tool requires one and the
        server runs tool tasks), on a 2025-11-25 connection, the call is task-augmented: the server's task
        is followed (`on_task` sees each state) until `tasks/result` brings the result. Cancelling the
        awaiting coroutine cancels the task. `owner` goes to the handlers of the server's requests that
        belong to this call; `on_id` learns the request's id."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        if task and not self.tasks_exist:
            raise E.UsageError(f"tools/call {name}: tasks exist only in protocol {T.TASKS_VERSION}; this connection "
                               f"uses {self.protocol_version or 'no protocol yet'}")
        if not (self.wants_task(name) if task is None else task):
            result: dict[str, Any] = await self.request("tools/call", params, on_progress=on_progress,
                                                        timeout=timeout, owner=owner, on_id=on_id)
            if isinstance(result, dict) and "content" not in result and isinstance(result.get("task"), dict):
                raise E.InvalidResponse(f"tools/call {name}: the server answered with a task "
                                        f"({result['task'].get('taskId')!r}) although the call did not ask for one",
                                        method="tools/call", result=result)
            return result
        params["task"] = T.task_params(task_ttl_ms)
        token = None
        if on_progress is not None:  # progress for a task goes on after the CreateTaskResult, until the task ends
            token = self.new_token()
            self._task_progress[token] = on_progress
        rid: list[rpc.RequestId] = []

        def sent(request_id: rpc.RequestId) -> None:
            rid.append(request_id)
            if on_id is not None:
                on_id(request_id)
        try:
            result = await self.request("tools/call", params, on_progress=on_progress, timeout=timeout,
                                        progress_token=token, owner=owner, on_id=sent)
            try:
                created = T.created_task(result)
            except T.TaskShapeError as exc:
                raise E.InvalidResponse(f"tools/call: the server answered with a task, but {exc}",
                                        method="tools/call", result=result) from None
            if created is None:
                return result  # the server ran it at once, which it may
            return await self._follow_task(created, on_task=on_task, owner=owner, related=rid[0] if rid else None,
                                           timeout=self.timeout if timeout is ... else timeout)
        finally:
            if token is not None:
                self._task_progress.pop(token, None)

    # ------------------------------------------------------------------ tasks (2025-11-25)
    @property
    def tasks_exist(self) -> bool:
        """Whether this connection's protocol revision has tasks."""
        return self.era is Era.LEGACY and self.protocol_version == T.TASKS_VERSION

    @property
    def runs_tool_tasks(self) -> bool:
        """The server declared `tasks.requests.tools.call` (required before asking it for tool tasks)."""
        return self.tasks_exist and T.server_runs_tool_tasks(self.hello.capabilities if self.hello else None)

    def wants_task(self, tool: str) -> bool:
        """A tool that must run as a task (`execution.taskSupport` "required"), on a server that runs them."""
        return self.runs_tool_tasks and T.task_support(self.tools.get(tool)) == "required"

    def server_can(self, what: str) -> bool:
        """The server's `tasks.list` / `tasks.cancel` capability."""
        return T.server_can(self.hello.capabilities if self.hello else None, what)

    async def list_tasks(self) -> dict[str, Any]:
        result = await self.list_all("tasks/list", "tasks")
        for task in result["tasks"]:
            try:
                T.check_task(task)
            except T.TaskShapeError as exc:
                raise E.InvalidResponse(f"tasks/list: {exc}", method="tasks/list", result=result) from None
        return result

    async def get_task(self, task_id: str, *, timeout: float | None | EllipsisType = ...) -> dict[str, Any]:
        result = await self.request("tasks/get", {"taskId": task_id}, timeout=timeout)
        try:
            return T.check_task(result)
        except T.TaskShapeError as exc:
            raise E.InvalidResponse(f"tasks/get: {exc}", method="tasks/get", result=result) from None

    async def cancel_task(self, task_id: str, *, timeout: float | None | EllipsisType = ...) -> dict[str, Any]:
        result: dict[str, Any] = await self.request("tasks/cancel", {"taskId": task_id}, timeout=timeout)
        return result

    async def task_result(self, task_id: str, *, timeout: float | None = None, owner: Any = None) -> dict[str, Any]:
        """The result of a task; the server holds the answer until the task ends (so no timeout by default)."""
        result: dict[str, Any] = await self.request("tasks/result", {"taskId": task_id}, timeout=timeout,
                                                    owner=owner)
        return result

    async def _follow_task(self, task: dict[str, Any], *, on_task: TaskCallback | None, owner: Any,
                           related: rpc.RequestId | None, timeout: float | None) -> dict[str, Any]:
        """Drive a `TaskFollower` (inspector.protocol.task_follow) until the task's result comes."""
        tid = task["taskId"]
        follower = F.TaskFollower(task, timeout=timeout, now=time.monotonic())
        changed = asyncio.Event()
        fetch: asyncio.Future[Any] | None = None

        def tell(state: dict[str, Any]) -> None:
            if on_task is not None:
                try:
                    on_task(dict(state))
                except Exception:
                    log.exception("task callback failed")

        def update(new: dict[str, Any]) -> None:
            if follower.status(new):
                tell(new)
            changed.set()

        def fetched(job: asyncio.Future[Any]) -> None:
            if job.cancelled():
                return
            exc = job.exception()
            if exc is None:
                follower.result_answered(job.result())
            else:
                follower.result_failed(exc, remote=isinstance(exc, E.RemoteError))
            changed.set()

        tell(task)
        self._task_watchers[tid] = update
        self.follow_task_owner(tid, related, owner)
        early = self._early_status.pop(tid, None)  # a status notification that came with the task itself
        if early is not None:
            update(early)
        try:
            while True:
                step = follower.next_step(time.monotonic())
                if isinstance(step, F.Deliver):
                    result: dict[str, Any] = step.result
                    return result
                if isinstance(step, F.GiveUp):
                    if step.error is not None:
                        raise step.error
                    raise E.RequestTimeout(step.reason, method="tasks/result", seconds=timeout)
                if isinstance(step, F.FetchResult):
                    fetch = asyncio.ensure_future(self.task_result(tid, owner=owner))
                    fetch.add_done_callback(fetched)
                elif isinstance(step, F.PollStatus):
                    try:
                        update(await self.get_task(tid, timeout=timeout))
                    except (E.RemoteError, E.InvalidResponse, E.RequestTimeout) as exc:
                        follower.status_failed(exc, time.monotonic())
                        log.info("task %s: tasks/get failed (%s)", tid, exc.message)
                else:
                    changed.clear()
                    try:
                        await asyncio.wait_for(changed.wait(), step.seconds)
                    except TimeoutError:
                        pass
        except BaseException as exc:
            # cancelled, or given up (a timeout, a broken answer): a task still running is told to stop.
            # Its answer is awaited briefly, so that a caller that closes the connection next (the CLI on
            # Ctrl+C) does not cut it off; it carries on in the background.
            if follower.still_running and self.closed is None and not isinstance(exc, E.TransportClosed):
                await asyncio.wait({self._spawn(self._stop_task(tid))}, timeout=STOP_TASK_WAIT_S)
            raise
        finally:
            self._task_watchers.pop(tid, None)
            self.forget_task_owner(tid)
            if fetch is not None and not fetch.done():
                fetch.cancel()

    async def _stop_task(self, tid: str) -> None:
        if not self.server_can("cancel"):
            log.info("task %s: the server offers no tasks/cancel; it is left to run", tid)
            return
        try:
            await self.cancel_task(tid, timeout=min(self.timeout or 10.0, 10.0))
        except E.SpyglassError as exc:
            log.info("tasks/cancel %s: %s", tid, exc.message)

    def _progress_without_request(self, event: ev.ProgressReceived) -> None:
        try:
            follower = self._task_progress.get(event.token)
        except TypeError:  # an unhashable token
            return
        if follower is not None:
            try:
                follower(event.progress, event.total, event.message)
            except Exception:
                log.exception("progress callback failed")

    # ------------------------------------------------------------------ resources, prompts, completion
    async def read_resource(self, uri: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.request("resources/read", {"uri": uri})
        return result

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        result: dict[str, Any] = await self.request("prompts/get", params)
        return result

    async def complete(self, ref: dict[str, Any], argument: dict[str, str],
                       context: dict[str, Any] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"ref": ref, "argument": argument}
        if context:
            params["context"] = {"arguments": context}
        result: dict[str, Any] = await self.request("completion/complete", params)
        return result

    async def set_log_level(self, level: str) -> dict[str, Any]:
        """Legacy: logging/setLevel. Modern: the level rides in every request's _meta."""
        if self.era is Era.MODERN:
            self.session.log_level = level
            return {}
        result: dict[str, Any] = await self.request("logging/setLevel", {"level": level})
        return result

    # ------------------------------------------------------------------ subscriptions
    async def subscribe(self, uri: str) -> dict[str, Any]:
        """Legacy era: notifications/resources/updated for one resource."""
        result: dict[str, Any] = await self.request("resources/subscribe", {"uri": uri})
        return result

    async def unsubscribe(self, uri: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.request("resources/unsubscribe", {"uri": uri})
        return result

    async def listen(self, notifications: dict[str, Any], *, ack_timeout: float | None = 10.0) -> Subscription:
        """2026-07-28: open a `subscriptions/listen` stream with this filter
        (toolsListChanged, promptsListChanged, resourcesListChanged,
        resourceSubscriptions). Returns once the server acknowledged it; its
        notifications reach `on_notification`. `Subscription.close()` ends it."""
        self._check_open()
        sub = Subscription(self, notifications)

        def registered(request_id: rpc.RequestId) -> None:
            sub.id = request_id
            self._subscriptions[request_id] = sub
        task = asyncio.ensure_future(self.request("subscriptions/listen", {"notifications": notifications},
                                                  timeout=None, on_id=registered))
        sub.task = task
        task.add_done_callback(lambda _t: self._subscriptions.pop(sub.id, None))
        done, _ = await asyncio.wait({task, sub.acknowledged}, timeout=ack_timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if task in done and not sub.acknowledged.done():
            task.result()  # raises the server's error, if that is what ended it
            raise E.InvalidResponse("subscriptions/listen ended before the server acknowledged it")
        if not done:
            await sub.close()
            raise E.RequestTimeout(f"the server did not acknowledge subscriptions/listen within {ack_timeout:g} s")
        return sub

    def _notified_run(self, frames: list[Frame]) -> None:
        many = self.on_notifications
        if many is None:
            super()._notified_run(frames)
            return
        # a flood's notifications in one hand-off (four calls per notification cost a flood 0.2 s)
        run: list[tuple[str, Any]] = [(m.method, m.params) for f in frames if type(m := f.message) is rpc.Notification]
        if len(run) == len(frames) and _CLIENT_NOTIFICATIONS.isdisjoint([method for method, _ in run]):
            _hand_on(many, run)  # (a flood's read: none of them the client's own)
            return
        run = []
        for frame in frames:
            msg = frame.message
            assert isinstance(msg, rpc.Notification)
            if msg.method not in _CLIENT_NOTIFICATIONS:
                run.append((msg.method, msg.params))
                continue
            if run:
                _hand_on(many, run)
                run = []
            try:
                self._notified(msg.method, msg.params)
            except Exception:
                log.exception("handling %s failed", msg.method)
        if run:
            _hand_on(many, run)

    def _notified(self, method: str, params: dict[str, Any] | None) -> None:
        if method in _CLIENT_NOTIFICATIONS:
            listing = LIST_CHANGED.get(method)
            if listing:
                self._cache.pop(listing, None)
            if method == "notifications/subscriptions/acknowledged":
                meta = (params or {}).get("_meta") if isinstance(params, dict) else None
                sub = self._subscriptions.get((meta or {}).get("io.modelcontextprotocol/subscriptionId"))
                if sub is not None and not sub.acknowledged.done():
                    sub.acknowledged.set_result((params or {}).get("notifications") or {})
            if method == "notifications/tasks/status" and isinstance(params, dict):
                self._task_status(params)
        super()._notified(method, params)

    def _task_status(self, params: dict[str, Any]) -> None:
        try:
            status = T.check_task({k: v for k, v in params.items() if k != "_meta"})
        except T.TaskShapeError as exc:
            log.warning("notifications/tasks/status ignored: %s", exc)
            return
        watcher = self._task_watchers.get(status["taskId"])
        if watcher is not None:
            watcher(status)
            return
        self._early_status[status["taskId"]] = status
        while len(self._early_status) > EARLY_STATUS_KEPT:
            self._early_status.popitem(last=False)

    # ------------------------------------------------------------------ roots, ping
    async def set_roots(self, roots: list[dict[str, Any]]) -> None:
        """Change the roots answered to roots/list; tells a legacy server they changed."""
        self.roots = list(roots)
        if self.era is Era.LEGACY and "roots" in self.session.capabilities and self.closed is None:
            await self.notify("notifications/roots/list_changed")

    async def discover(self, *, on_id: Callable[[rpc.RequestId], None] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = await self.request("server/discover", {}, on_id=on_id)
        return result

    async def ping(self, *, on_id: Callable[[rpc.RequestId], None] | None = None) -> float:
        """Round-trip time in seconds (modern era: a server/discover)."""
        start = time.perf_counter()
        if self.era is Era.MODERN:
            await self.discover(on_id=on_id)
        else:
            await self.request("ping", on_id=on_id)
        return time.perf_counter() - start


class Subscription:
    """One `subscriptions/listen` stream (2026-07-28)."""

    def __init__(self, client: Client, requested: dict[str, Any]) -> None:
        self.client = client
        self.requested = requested
        self.id: Any = None
        self.task: asyncio.Future[Any] | None = None
        self.acknowledged: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    @property
    def granted(self) -> dict[str, Any] | None:
        """The filter the server agreed to honour (None until acknowledged)."""
        return self.acknowledged.result() if self.acknowledged.done() else None

    @property
    def refused(self) -> list[str]:
        """Requested notification types the server left out of its acknowledgement."""
        granted = self.granted or {}
        out = [k for k, v in self.requested.items() if v and k != "resourceSubscriptions" and not granted.get(k)]
        uris = set(granted.get("resourceSubscriptions") or [])
        out += [u for u in self.requested.get("resourceSubscriptions") or [] if u not in uris]
        return out

    async def close(self) -> None:
        """End the stream (cancel the request: notifications/cancelled or closing it)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            try:
                await self.task
            except (asyncio.CancelledError, E.SpyglassError):
                pass


def _hand_on(many: Callable[[list[tuple[str, Any]]], None], run: list[tuple[str, Any]]) -> None:
    try:
        many(run)
    except Exception:
        log.exception("handling %d notifications failed", len(run))
