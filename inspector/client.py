"""The asyncio client: one connected MCP server, futures per request.

It drives the sans-IO `ClientSession` with a `Transport`, keeps one future per
request, applies per-request timeouts that progress notifications reset, answers
server requests through handlers, and reports every frame to a traffic hook.
No Qt here (DESIGN §1).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping

from . import errors as E
from .protocol import events as ev
from .protocol import jsonrpc as rpc
from .protocol.headers import HeaderAnnotationError, header_params
from .protocol.pagination import PaginationError, Paginator
from .client_tasks import ClientTaskStore
from .protocol.session import ClientSession, Mode, State
from .protocol import tasks as T
from .protocol.versions import Era, MODERN_VERSION
from .traffic.frame import Frame
from .transport.base import Closed, Transport

log = logging.getLogger("spyglass.client")

DEFAULT_TIMEOUT = 60.0
DEFAULT_PROBE_TIMEOUT = 5.0
STDERR_TAIL = 20
STOP_TASK_WAIT_S = 1.0  # how long a cancelled task call waits for the answer to its tasks/cancel
EARLY_STATUS_KEPT = 64  # status notifications of tasks nobody follows (yet) that are remembered

Handler = Callable[[dict[str, Any] | None], Awaitable[Any]]
"""Answers one server request (legacy) or one MRTR input request (modern)."""
ProgressCallback = Callable[[Any, Any, str | None], None]
TaskCallback = Callable[[dict[str, Any]], None]
"""Told every new state of a task (the CreateTaskResult's task, tasks/get results, status notifications)."""


@dataclass
class _Call:
    method: str
    future: asyncio.Future[Any]
    timeout: float | None
    on_progress: ProgressCallback | None = None
    timer: asyncio.TimerHandle | None = None
    started: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class ServerHello:
    """What the handshake told us about the server."""

    era: Era
    protocol_version: str
    server_info: dict[str, Any] | None
    capabilities: dict[str, Any] | None
    instructions: str | None
    result: dict[str, Any] | None
    warnings: tuple[str, ...]


class Client:
    def __init__(self, transport: Transport, *, mode: Mode | str = "auto",
                 client_info: dict[str, Any] | None = None, timeout: float | None = DEFAULT_TIMEOUT,
                 probe_timeout: float = DEFAULT_PROBE_TIMEOUT, log_level: str | None = None,
                 handlers: Mapping[str, Handler] | None = None,
                 traffic: Callable[[Frame], None] | None = None,
                 on_notification: Callable[[str, dict[str, Any] | None], None] | None = None,
                 on_stderr: Callable[[str], None] | None = None,
                 on_closed: Callable[[Closed], None] | None = None,
                 fallback: Callable[[], Transport] | None = None,
                 roots: list[dict[str, Any]] | None = None) -> None:
        self.transport = transport
        self.fallback = fallback  # auto transport choice: HTTP+SSE when Streamable HTTP is not there
        self.handlers: dict[str, Handler] = dict(handlers or {})
        self.roots: list[dict[str, Any]] | None = list(roots) if roots is not None else None
        if self.roots is not None and "roots/list" not in self.handlers:
            self.handlers["roots/list"] = self._answer_roots
        capabilities: dict[str, Any] = {}
        if "roots/list" in self.handlers:
            capabilities["roots"] = {"listChanged": True}
        if "sampling/createMessage" in self.handlers:
            capabilities["sampling"] = {}
        if "elicitation/create" in self.handlers:
            capabilities["elicitation"] = {}
        # requests the server may ask to run as tasks (2025-11-25): the same handlers, in the background
        self.task_store = ClientTaskStore(self.handlers, notify=self._notify_quietly)
        if (tasks_capability := self.task_store.capability()) is not None:
            capabilities["tasks"] = tasks_capability
        kwargs: dict[str, Any] = {"mode": Mode.parse(mode) if isinstance(mode, str) else mode,
                                  "capabilities": capabilities, "log_level": log_level}
        if client_info:
            kwargs["client_info"] = client_info
        self._session_kwargs = kwargs
        self.session = ClientSession(**kwargs)
        self.rejected_tools: list[tuple[str, str]] = []  # (tool name, why) dropped from tools/list
        self._cache: dict[str, tuple[float, dict[str, Any]]] = {}  # list method -> (expiry, result)
        self._subscriptions: dict[Any, Subscription] = {}
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.traffic = traffic
        self.on_notification = on_notification
        self.on_stderr = on_stderr
        self.on_closed = on_closed
        self.hello: ServerHello | None = None
        self.closed: Closed | None = None
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self.malformed_count = 0
        self._calls: dict[rpc.RequestId, _Call] = {}
        self.tools: dict[str, dict[str, Any]] = {}  # name -> tool, from the last tools/list
        self._task_watchers: dict[str, TaskCallback] = {}  # taskId -> followed by a call_tool
        self._task_progress: dict[Any, ProgressCallback] = {}  # progress token of a task's tools/call
        # the latest status notification of tasks not (yet) followed: one may come with the CreateTaskResult
        self._early_status: collections.OrderedDict[str, dict[str, Any]] = collections.OrderedDict()
        self._handshake: asyncio.Future[ServerHello] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._tokens = itertools.count(1)
        self._wall0 = time.time() - time.monotonic()
        self._closed_event = asyncio.Event()
        self._attach(transport)

    def _attach(self, transport: Transport) -> None:
        self.transport = transport
        transport.on_frame = self._on_frame
        transport.on_log = self._on_log
        transport.on_close = self._on_close
        transport.on_sent = self._on_sent
        transport.on_request_error = self._on_request_error
        transport.on_stream_lost = self._on_stream_lost
        transport.on_exchange = self._on_exchange

    # ------------------------------------------------------------------ lifecycle
    @property
    def era(self) -> Era | None:
        return self.session.era

    @property
    def protocol_version(self) -> str | None:
        return self.session.protocol_version

    async def connect(self) -> ServerHello:
        """Start the transport and complete the handshake of the chosen era."""
        try:
            return await self._connect_once()
        except E.HttpStatusError as exc:
            if self.fallback is None or not exc.means_no_endpoint:
                raise
            log.info("no Streamable HTTP endpoint (%s); trying HTTP+SSE", exc.message)
            first = exc
        self._attach(self.fallback())
        self.fallback = None
        self.session = ClientSession(**self._session_kwargs)
        self.closed = None
        self._closed_event = asyncio.Event()
        try:
            return await self._connect_once()
        except E.HttpStatusError as second:
            if not second.means_no_endpoint:
                raise
            raise E.ConnectError(f"no MCP endpoint at {self.transport.describe()}: Streamable HTTP answered "
                                 f"HTTP {first.status}, HTTP+SSE answered HTTP {second.status}",
                                 status=first.status) from None

    async def _connect_once(self) -> ServerHello:
        loop = asyncio.get_running_loop()
        self._handshake = loop.create_future()
        await self.transport.open()
        probe_timer = None
        try:
            await self._dispatch(self.session.start())
            if self.session.state is State.PROBING:
                probe = min(self.probe_timeout, self.timeout or self.probe_timeout)
                probe_timer = loop.call_later(probe, self._probe_expired)
            hello = await self._await(self._handshake, self.timeout, "the handshake")
            await self.transport.settle()
            return hello
        except BaseException:
            if self._handshake is not None and not self._handshake.done():
                self._handshake.cancel()  # nobody waits for it now (e.g. cancelled while the user signs in)
            await self._shutdown_after_failure()
            raise
        finally:
            if probe_timer is not None:
                probe_timer.cancel()

    def _probe_expired(self) -> None:
        if getattr(self.transport, "authorizing", False):
            # The user is signing in to answer the probe: wait for them.
            asyncio.get_running_loop().call_later(0.25, self._probe_expired)
            return
        self._spawn(self._dispatch(self.session.probe_timed_out()))

    async def _shutdown_after_failure(self) -> None:
        try:
            await self.transport.close()
        except Exception:
            log.exception("closing after a failed connect")

    async def close(self) -> None:
        self.task_store.close()
        for call in list(self._calls.values()):
            if not call.future.done():
                call.future.set_exception(E.TransportClosed("the connection was closed"))
        await self.transport.close()
        for task in list(self._tasks):
            task.cancel()
        self._calls.clear()

    async def __aenter__(self) -> "Client":
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ requests
    async def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = ...,
                      on_progress: ProgressCallback | None = None, progress_token: Any = None) -> Any:
        """Send a request and wait for its result; raises a SpyglassError."""
        self._check_open()
        token = progress_token if progress_token is not None else (
            f"spyglass-{next(self._tokens)}" if on_progress is not None else None)
        send = self.session.send_request(method, params, progress_token=token)
        rid = self.session.last_request_id
        call = _Call(method, asyncio.get_running_loop().create_future(),
                     self.timeout if timeout is ... else timeout, on_progress)
        self._calls[rid] = call
        self._arm(rid, call)
        try:
            await self._write(send)
            return await call.future
        finally:
            if call.timer:
                call.timer.cancel()
            self._calls.pop(rid, None)
            if not call.future.done() or call.future.cancelled():
                # The awaiting task was cancelled: tell the server.
                self._cancel_on_wire(rid, "cancelled by the user")

    def _arm(self, rid: rpc.RequestId, call: _Call) -> None:
        if call.timer:
            call.timer.cancel()
        if call.timeout is not None:
            call.timer = asyncio.get_running_loop().call_later(call.timeout, self._expire, rid)

    def _expire(self, rid: rpc.RequestId) -> None:
        call = self._calls.get(rid)
        if call is None or call.future.done():
            return
        how = self._cancel_on_wire(rid, f"timed out after {call.timeout:g} s")
        call.future.set_exception(E.RequestTimeout(
            f"{call.method}: no answer within {call.timeout:g} s ({how})",
            method=call.method, seconds=call.timeout))

    def _cancel_on_wire(self, rid: rpc.RequestId, reason: str) -> str:
        """Tell the server a request is abandoned, the way its transport wants."""
        if self.transport.cancels_by_closing:
            wire_id = self.session.wire_id_of(rid)
            self.session.forget(rid)
            if wire_id is not None and self.transport.abort(wire_id):
                return "closed its stream"
            return "abandoned"
        cancel = self.session.cancel(rid, reason)
        if cancel is not None and self.closed is None:
            self._spawn(self._write(cancel))
            return "sent notifications/cancelled"
        return "abandoned"

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._check_open()
        await self._write(self.session.send_notification(method, params))

    async def _notify_quietly(self, method: str, params: dict[str, Any]) -> None:
        """A notification that may find the connection gone (a client task ending as it closes)."""
        if self.closed is None and self.session.state is State.READY:
            try:
                await self.notify(method, params)
            except E.SpyglassError as exc:
                log.info("%s not sent: %s", method, exc.message)

    def _check_open(self) -> None:
        if self.closed is not None:
            raise self._closed_error()
        if self.session.state is not State.READY:
            raise E.ConnectError(f"not connected (state: {self.session.state.value})")

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
                raise E.InvalidResponse(f"{method}: {exc}", method=method) from None
        merged = dict(pager.last_result or {})
        merged.pop("nextCursor", None)
        merged[key] = pager.items
        ttl = merged.get("ttlMs")
        if not params and isinstance(ttl, (int, float)) and not isinstance(ttl, bool) and ttl > 0:
            self._cache[method] = (time.monotonic() + ttl / 1000, merged)
        return {**merged, key: list(pager.items)}

    _LIST_CHANGED = {"notifications/tools/list_changed": "tools/list",
                     "notifications/prompts/list_changed": "prompts/list",
                     "notifications/resources/list_changed": "resources/list"}

    async def list_tools(self, *, refresh: bool = False) -> dict[str, Any]:
        """Every tool. Over modern HTTP, tools whose `x-mcp-header` annotations
        break the spec's rules are dropped and listed in `rejected_tools`."""
        result = await self.list_all("tools/list", "tools", refresh=refresh)
        if getattr(self.transport, "mirrors_tool_headers", False):
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

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                        on_progress: ProgressCallback | None = None, timeout: float | None = ...,
                        task: bool | None = None, on_task: TaskCallback | None = None,
                        task_ttl_ms: int | None = None) -> dict[str, Any]:
        """Call a tool and return its CallToolResult. With `task` (None: when the tool requires one and the
        server runs tool tasks), on a 2025-11-25 connection, the call is task-augmented: the server's task
        is followed (`on_task` sees each state) until `tasks/result` brings the result. Cancelling the
        awaiting coroutine cancels the task."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        if task and not self.tasks_exist:
            raise E.UsageError(f"tools/call {name}: tasks exist only in protocol {T.TASKS_VERSION}; this connection "
                               f"uses {self.protocol_version or 'no protocol yet'}")
        if not (self.wants_task(name) if task is None else task):
            result = await self.request("tools/call", params, on_progress=on_progress, timeout=timeout)
            if isinstance(result, dict) and "content" not in result and isinstance(result.get("task"), dict):
                raise E.InvalidResponse(f"tools/call {name}: the server answered with a task "
                                        f"({result['task'].get('taskId')!r}) although the call did not ask for one",
                                        method="tools/call", result=result)
            return result
        params["task"] = T.task_params(task_ttl_ms)
        token = f"spyglass-{next(self._tokens)}" if on_progress is not None else None
        if token is not None:  # progress for a task goes on after the CreateTaskResult, until the task ends
            self._task_progress[token] = on_progress
        try:
            result = await self.request("tools/call", params, on_progress=on_progress, timeout=timeout,
                                        progress_token=token)
            try:
                created = T.created_task(result)
            except T.TaskShapeError as exc:
                raise E.InvalidResponse(f"tools/call: the server answered with a task, but {exc}",
                                        method="tools/call", result=result) from None
            if created is None:
                return result  # the server ran it at once, which it may
            return await self._follow_task(created, on_task=on_task, timeout=self.timeout if timeout is ... else timeout)
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

    async def get_task(self, task_id: str, *, timeout: float | None = ...) -> dict[str, Any]:
        result = await self.request("tasks/get", {"taskId": task_id}, timeout=timeout)
        try:
            return T.check_task(result)
        except T.TaskShapeError as exc:
            raise E.InvalidResponse(f"tasks/get: {exc}", method="tasks/get", result=result) from None

    async def cancel_task(self, task_id: str, *, timeout: float | None = ...) -> dict[str, Any]:
        return await self.request("tasks/cancel", {"taskId": task_id}, timeout=timeout)

    async def task_result(self, task_id: str, *, timeout: float | None = None) -> dict[str, Any]:
        """The result of a task; the server holds the answer until the task ends (so no timeout by default)."""
        return await self.request("tasks/result", {"taskId": task_id}, timeout=timeout)

    async def _follow_task(self, task: dict[str, Any], *, on_task: TaskCallback | None,
                           timeout: float | None) -> dict[str, Any]:
        """Wait for a task's result: `tasks/result` is asked at once (the server answers it when the task
        ends, and delivers the task's own requests, such as an elicitation, meanwhile); `tasks/get` polls
        the status at the server's `pollInterval` for the user to see. A server that answers
        `tasks/result` with an error before the end is polled until the end, then asked again; one whose
        `tasks/get` fails is no longer polled, and its result is awaited for `timeout` at most."""
        tid = task["taskId"]
        latest = task
        changed = asyncio.Event()

        def update(new: dict[str, Any]) -> None:
            nonlocal latest
            if new is not task and T.is_older(new, latest):
                return  # an answer overtaken by a later status notification
            seen = new is not task and (new.get("status"), new.get("statusMessage")) == (
                latest.get("status"), latest.get("statusMessage"))
            latest = new
            changed.set()
            if on_task is not None and not seen:
                try:
                    on_task(dict(new))
                except Exception:
                    log.exception("task callback failed")

        update(task)
        self._task_watchers[tid] = update
        early = self._early_status.pop(tid, None)  # a status notification that came with the task itself
        if early is not None:
            update(early)
        fetch: asyncio.Future[Any] | None = asyncio.ensure_future(self.task_result(tid))
        asked_again = False
        polling = True  # False once tasks/get failed: then only tasks/result is awaited
        waited_from = time.monotonic()  # since when a result is due: the task's end, or polling's end
        try:
            while True:
                if fetch is not None and fetch.done():
                    exc = fetch.exception()
                    if exc is None:
                        return fetch.result()
                    if (latest["status"] in T.TERMINAL or asked_again or not polling
                            or not isinstance(exc, E.RemoteError)):
                        raise exc
                    fetch = None  # answered early: poll until the end, then ask once more
                if fetch is None and latest["status"] in T.TERMINAL:
                    fetch, asked_again = asyncio.ensure_future(self.task_result(tid)), True
                    continue
                due = latest["status"] in T.TERMINAL or not polling
                if not due:
                    waited_from = time.monotonic()
                elif timeout is not None and time.monotonic() - waited_from > timeout:
                    how = (f"ended ({latest['status']})" if latest["status"] in T.TERMINAL
                           else "gives no status (tasks/get failed)")
                    raise E.RequestTimeout(f"tasks/result: task {tid} {how} and its result did not come within "
                                           f"{timeout:g} s", method="tasks/result", seconds=timeout)
                changed.clear()
                waits: set[asyncio.Future[Any]] = {asyncio.ensure_future(changed.wait())}
                if fetch is not None:
                    waits.add(fetch)
                wait_s = T.poll_seconds(latest) if not due else min(T.MAX_POLL_S, timeout or T.MAX_POLL_S)
                done, _ = await asyncio.wait(waits, timeout=wait_s, return_when=asyncio.FIRST_COMPLETED)
                for w in waits:
                    if w is not fetch:
                        w.cancel()
                if done or due:
                    continue  # a result, or a status notification (or nothing to poll): look again
                try:
                    update(await self.get_task(tid, timeout=timeout))
                except (E.RemoteError, E.InvalidResponse, E.RequestTimeout) as exc:
                    if fetch is None:
                        raise
                    polling = False  # no status to show, but tasks/result may still bring the result
                    waited_from = time.monotonic()
                    log.info("task %s: tasks/get failed (%s); waiting for tasks/result only", tid, exc.message)
        except BaseException as exc:
            # cancelled, or given up (a timeout, a broken answer): a task still running is told to stop.
            # Its answer is awaited briefly, so that a caller that closes the connection next (the CLI on
            # Ctrl+C) does not cut it off; it carries on in the background.
            if latest["status"] not in T.TERMINAL and self.closed is None and not isinstance(exc, E.TransportClosed):
                await asyncio.wait({self._spawn(self._stop_task(tid))}, timeout=STOP_TASK_WAIT_S)
            raise
        finally:
            self._task_watchers.pop(tid, None)
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

    async def list_resources(self, *, refresh: bool = False) -> dict[str, Any]:
        return await self.list_all("resources/list", "resources", refresh=refresh)

    async def list_resource_templates(self, *, refresh: bool = False) -> dict[str, Any]:
        return await self.list_all("resources/templates/list", "resourceTemplates", refresh=refresh)

    async def read_resource(self, uri: str) -> dict[str, Any]:
        return await self.request("resources/read", {"uri": uri})

    async def list_prompts(self, *, refresh: bool = False) -> dict[str, Any]:
        return await self.list_all("prompts/list", "prompts", refresh=refresh)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return await self.request("prompts/get", params)

    async def complete(self, ref: dict[str, Any], argument: dict[str, str],
                       context: dict[str, Any] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"ref": ref, "argument": argument}
        if context:
            params["context"] = {"arguments": context}
        return await self.request("completion/complete", params)

    async def set_log_level(self, level: str) -> dict[str, Any]:
        """Legacy: logging/setLevel. Modern: the level rides in every request's _meta."""
        if self.era is Era.MODERN:
            self.session.log_level = level
            return {}
        return await self.request("logging/setLevel", {"level": level})

    async def subscribe(self, uri: str) -> dict[str, Any]:
        """Legacy era: notifications/resources/updated for one resource."""
        return await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> dict[str, Any]:
        return await self.request("resources/unsubscribe", {"uri": uri})

    async def listen(self, notifications: dict[str, Any], *, ack_timeout: float | None = 10.0) -> "Subscription":
        """2026-07-28: open a `subscriptions/listen` stream with this filter
        (toolsListChanged, promptsListChanged, resourcesListChanged,
        resourceSubscriptions). Returns once the server acknowledged it; its
        notifications reach `on_notification`. `Subscription.close()` ends it."""
        self._check_open()
        sub = Subscription(self, notifications)
        sub.task = asyncio.ensure_future(self.request("subscriptions/listen", {"notifications": notifications},
                                                      timeout=None))
        await asyncio.sleep(0)  # let the request go out and get its id
        sub.id = self.session.last_request_id
        self._subscriptions[sub.id] = sub
        sub.task.add_done_callback(lambda _t: self._subscriptions.pop(sub.id, None))
        done, _ = await asyncio.wait({sub.task, sub.acknowledged}, timeout=ack_timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if sub.task in done and not sub.acknowledged.done():
            sub.task.result()  # raises the server's error, if that is what ended it
            raise E.InvalidResponse("subscriptions/listen ended before the server acknowledged it")
        if not done:
            await sub.close()
            raise E.RequestTimeout(f"the server did not acknowledge subscriptions/listen within {ack_timeout:g} s")
        return sub

    async def set_roots(self, roots: list[dict[str, Any]]) -> None:
        """Change the roots answered to roots/list; tells a legacy server they changed."""
        self.roots = list(roots)
        if self.era is Era.LEGACY and "roots" in self.session.capabilities and self.closed is None:
            await self.notify("notifications/roots/list_changed")

    async def _answer_roots(self, params: dict[str, Any] | None) -> dict[str, Any]:
        return {"roots": list(self.roots or [])}

    async def discover(self) -> dict[str, Any]:
        return await self.request("server/discover", {})

    async def ping(self) -> float:
        """Round-trip time in seconds (modern era: a server/discover)."""
        start = time.perf_counter()
        if self.era is Era.MODERN:
            await self.discover()
        else:
            await self.request("ping")
        return time.perf_counter() - start

    # ------------------------------------------------------------------ IO plumbing
    async def _write(self, send: ev.Send) -> None:
        try:
            await self.transport.send(send.data)
        except E.TransportClosed:
            # Prefer the real story (the process exited) when we are about to learn it.
            try:
                await asyncio.wait_for(self._closed_event.wait(), 2.0)
            except asyncio.TimeoutError:
                pass
            raise self._closed_error() if self.closed else E.TransportClosed(
                f"could not send {send.method or 'a message'}: the server is not reading") from None

    def _on_sent(self, data: bytes, mono: float) -> None:
        self._record(Frame("out", data, mono, self._wall0 + mono))

    def _record(self, frame: Frame) -> None:
        if self.traffic is not None:
            try:
                self.traffic(frame)
            except Exception:
                log.exception("traffic hook failed")

    def _on_frame(self, raw: Any, mono: float, meta: dict[str, Any] | None = None) -> None:
        msg = rpc.parse(raw)
        events = self.session.receive_parsed(msg, raw)
        data = raw if isinstance(raw, bytes) else raw.head
        malformed = None
        for event in events:
            if type(event) is ev.MalformedFrame:
                malformed = event.reason
                break
        if malformed:
            self.malformed_count += 1
            if meta and meta.get("eof"):
                malformed = f"the stream ended in the middle of this message ({malformed})"
        self._record(Frame("in", data, mono, self._wall0 + mono, malformed, msg, meta))
        self._handle_events(events)

    def _on_exchange(self, record: dict[str, Any], mono: float) -> None:
        data = json.dumps(record, ensure_ascii=False).encode("utf-8")
        self._record(Frame("http", data, mono, self._wall0 + mono, meta=record))

    def _on_request_error(self, wire_id: Any, error: Exception) -> None:
        info = self.session.fail_locally(wire_id)
        if info is None:
            return
        logical, method, internal = info
        if not isinstance(error, E.SpyglassError):
            error = E.TransportClosed(f"{method}: {error}")
        if internal:
            if (method == "server/discover" and self.session.state is State.PROBING
                    and self.session.mode.kind == "auto" and isinstance(error, E.HttpStatusError)):
                # Not a modern endpoint: fall back to the legacy handshake.
                self._spawn(self._dispatch(self.session.probe_timed_out()))
                return
            self.session.handshake_failed(error.message)
            if self._handshake and not self._handshake.done():
                self._handshake.set_exception(error)
            return
        self._settle(logical, error=error)

    def _on_stream_lost(self, wire_id: Any) -> None:
        logical = self.session.logical_of(wire_id)
        send = self.session.reissue(logical) if logical is not None else None
        if send is not None:
            log.info("answer stream of request %s broke; re-issued it with a new id", logical)
            self._spawn(self._write(send))

    def _on_log(self, line: bytes, mono: float) -> None:
        text = line.decode("utf-8", errors="replace")
        self.stderr_tail.append(text)
        self._record(Frame("err", line, mono, self._wall0 + mono))
        if self.on_stderr:
            self.on_stderr(text)

    def _on_close(self, closed: Closed) -> None:
        self.closed = closed
        self._closed_event.set()
        error = self._closed_error()
        if self._handshake and not self._handshake.done():
            self._handshake.set_exception(error)
        for call in list(self._calls.values()):
            if not call.future.done():
                call.future.set_exception(error)
        if self.on_closed:
            self.on_closed(closed)

    def _closed_error(self) -> E.SpyglassError:
        closed = self.closed
        tail = list(self.stderr_tail)[-5:]
        if closed is None:
            return E.TransportClosed("the connection is closed")
        if closed.expected:
            return E.TransportClosed("the connection was closed")
        message = closed.reason
        if tail:
            message += ": " + " | ".join(line.strip() for line in tail if line.strip())[-600:]
        return E.ServerExited(message, exit_code=closed.exit_code, stderr=tail or None)

    async def _dispatch(self, events: list[ev.Event]) -> None:
        for event in events:
            if isinstance(event, ev.Send):
                await self._write(event)
            else:
                self._handle_events([event])

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Future[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            if not isinstance(exc, E.SpyglassError):
                log.error("background task failed", exc_info=exc)

    def _handle_events(self, events: list[ev.Event]) -> None:
        for event in events:
            try:
                self._handle(event)
            except Exception:
                log.exception("handling %r failed", event)

    def _handle(self, event: ev.Event) -> None:
        if type(event) is ev.NotificationReceived:  # the common case in a flood: checked first
            self._notification(event)
        elif isinstance(event, ev.Send):
            self._spawn(self._write(event))
        elif isinstance(event, ev.ResponseReceived):
            self._settle(event.request_id, result=event.result)
        elif isinstance(event, ev.ErrorReceived):
            err = event.error
            self._settle(event.request_id, error=self._remote_error(event.method, err))
        elif isinstance(event, ev.RequestFailed):
            self._settle(event.request_id, error=E.InvalidResponse(f"{event.method}: {event.reason}",
                                                                   method=event.method, result=event.result))
        elif isinstance(event, ev.ProgressReceived):
            self._progress(event)
        elif isinstance(event, ev.InputRequired):
            self._spawn(self._answer_input(event))
        elif isinstance(event, ev.ServerRequest):
            self._spawn(self._answer_request(event))
        elif isinstance(event, ev.HandshakeComplete):
            self.hello = ServerHello(event.era, event.protocol_version, event.server_info, event.capabilities,
                                     event.instructions, event.result, event.warnings)
            self.transport.negotiated(event.era, event.protocol_version)
            if self._handshake and not self._handshake.done():
                self._handshake.set_result(self.hello)
        elif isinstance(event, ev.HandshakeFailed):
            if self._handshake and not self._handshake.done():
                self._handshake.set_exception(self._handshake_error(event))

    def _notification(self, event: ev.NotificationReceived) -> None:
        listing = self._LIST_CHANGED.get(event.method)
        if listing:
            self._cache.pop(listing, None)
        if event.method == "notifications/subscriptions/acknowledged":
            meta = (event.params or {}).get("_meta") if isinstance(event.params, dict) else None
            sub = self._subscriptions.get((meta or {}).get("io.modelcontextprotocol/subscriptionId"))
            if sub is not None and not sub.acknowledged.done():
                sub.acknowledged.set_result((event.params or {}).get("notifications") or {})
        if event.method == "notifications/tasks/status" and isinstance(event.params, dict):
            try:
                status = T.check_task({k: v for k, v in event.params.items() if k != "_meta"})
            except T.TaskShapeError as exc:
                log.warning("notifications/tasks/status ignored: %s", exc)
            else:
                watcher = self._task_watchers.get(status["taskId"])
                if watcher is not None:
                    watcher(status)
                else:
                    self._early_status[status["taskId"]] = status
                    while len(self._early_status) > EARLY_STATUS_KEPT:
                        self._early_status.popitem(last=False)
        if self.on_notification:
            self.on_notification(event.method, event.params)

    def _handshake_error(self, event: ev.HandshakeFailed) -> E.SpyglassError:
        if event.kind == "version":
            return E.VersionError(event.reason)
        if event.kind == "error" and event.error is not None:
            if event.error.code == rpc.UNSUPPORTED_PROTOCOL_VERSION:
                return E.VersionError(event.reason)
            return E.ConnectError(event.reason, code=event.error.code, data=event.error.data)
        return E.InvalidResponse(event.reason)

    @staticmethod
    def _remote_error(method: str, err: rpc.RpcError) -> E.SpyglassError:
        if err.code == rpc.UNSUPPORTED_PROTOCOL_VERSION:
            data = err.data if isinstance(err.data, dict) else {}
            return E.VersionError(f"{method}: the server does not support protocol {MODERN_VERSION} "
                                  f"(it supports {data.get('supported', 'unknown versions')})", code=err.code, data=err.data)
        return E.RemoteError(method, err.code, err.message, err.data)

    def _settle(self, rid: rpc.RequestId, *, result: Any = None, error: BaseException | None = None) -> None:
        call = self._calls.get(rid)
        if call is None or call.future.done():
            return
        if error is not None:
            call.future.set_exception(error)
        else:
            call.future.set_result(result)

    def _progress(self, event: ev.ProgressReceived) -> None:
        if event.request_id is None:
            try:
                follower = self._task_progress.get(event.token)
            except TypeError:  # an unhashable token
                follower = None
            if follower is not None:
                try:
                    follower(event.progress, event.total, event.message)
                except Exception:
                    log.exception("progress callback failed")
            return
        call = self._calls.get(event.request_id)
        if call is None:
            return
        self._arm(event.request_id, call)  # progress resets the timeout
        if call.on_progress:
            try:
                call.on_progress(event.progress, event.total, event.message)
            except Exception:
                log.exception("progress callback failed")

    async def _answer_request(self, event: ev.ServerRequest) -> None:
        handler = self.handlers.get(event.method)
        if self.task_store.wants(event.method, event.params):
            send = self.session.respond(event.id, self.task_store.start(event.method, event.params))
        elif event.method.startswith("tasks/"):
            try:
                send = self.session.respond(event.id, await self.task_store.answer(event.method, event.params))
            except E.RemoteError as exc:
                send = self.session.respond_error(event.id, exc.code, exc.rpc_message, exc.data)
        elif handler is None:
            send = self.session.respond_error(event.id, rpc.METHOD_NOT_FOUND, f"Method not found: {event.method}")
        else:
            try:
                send = self.session.respond(event.id, await handler(event.params))
            except E.RemoteError as exc:
                send = self.session.respond_error(event.id, exc.code, exc.rpc_message, exc.data)
            except Exception as exc:
                log.exception("handler for %s failed", event.method)
                send = self.session.respond_error(event.id, rpc.INTERNAL_ERROR, f"client handler failed: {exc}")
        if self.closed is None:
            await self._write(send)

    async def _answer_input(self, event: ev.InputRequired) -> None:
        """MRTR: answer every input request with its handler, then re-send."""
        call = self._calls.get(event.request_id)
        responses: dict[str, Any] = {}
        try:
            for key, request in event.input_requests.items():
                method = request.get("method") if isinstance(request, dict) else None
                handler = self.handlers.get(method) if isinstance(method, str) else None
                if handler is None:
                    raise E.InvalidResponse(f"{event.method}: the server asked for {method or 'an unknown input'} "
                                            "(input request " + repr(key) + "), which this client cannot provide")
                params = request.get("params")
                responses[key] = await handler(params if isinstance(params, dict) else None)
        except Exception as exc:
            self.session.cancel(event.request_id)
            error = exc if isinstance(exc, E.SpyglassError) else E.InvalidResponse(
                f"{event.method}: answering the server's input request failed: {exc}")
            self._settle(event.request_id, error=error)
            return
        if call is None or call.future.done():
            self.session.cancel(event.request_id)
            return
        self._arm(event.request_id, call)
        await self._write(self.session.provide_input(event.request_id, responses))

    async def _await(self, fut: asyncio.Future[Any], timeout: float | None, what: str) -> Any:
        if timeout is None:
            return await fut
        while True:
            try:
                return await asyncio.wait_for(asyncio.shield(fut), timeout)
            except asyncio.TimeoutError:
                if getattr(self.transport, "authorizing", False):
                    continue  # the user is signing in (or stepping through the flow): not the server's delay
                raise E.RequestTimeout(f"no answer to {what} within {timeout:g} s", seconds=timeout) from None


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
