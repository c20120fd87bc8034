"""Tasks the *server* asks the client to run (MCP 2025-11-25, the receiver side).

A server may send `sampling/createMessage` or `elicitation/create` with `task: {ttl?}`
to a client that declared `tasks.requests.<kind>`: the client answers at once
with a task, does the work in the background (here: the same handler that
answers the plain request, e.g. the window's dialog), and answers the server's
`tasks/get`, `tasks/result` (held until the task ends), `tasks/list` and
`tasks/cancel` about it. No Qt here.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .. import errors as E
from ..protocol import jsonrpc as rpc
from ..protocol import tasks as T

if TYPE_CHECKING:
    from .shapes import Handler, RequestContext

log = logging.getLogger("spyglass.client.tasks")

Notify = Callable[[str, dict[str, Any]], Awaitable[None]]

# what Spyglass runs as a task when asked, and what each one's capability is called under tasks.requests
_REQUESTS = {"sampling/createMessage": ("sampling", "createMessage"), "elicitation/create": ("elicitation", "create")}
TASK_METHODS = tuple(_REQUESTS)
DEFAULT_TTL_MS = 10 * 60 * 1000
MAX_TTL_MS = 24 * 3600 * 1000
MAX_KEPT = 200  # ended tasks kept for tasks/get and tasks/result; the oldest go first
POLL_MS = 500   # the pollInterval suggested to the server


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ClientTask:
    def __init__(self, task_id: str, method: str, ttl: int) -> None:
        self.id = task_id
        self.method = method
        # "working" also while the user is asked: input_required would mean the *server* must provide input
        self.status = "working"
        self.message = "waiting for your answer" if method == "elicitation/create" else "waiting for a model reply"
        self.created = self.updated = _now()
        self.ttl = ttl
        self.result: Any = None
        self.error: E.RemoteError | None = None
        self.job: asyncio.Task[Any] | None = None
        self.ended = asyncio.Event()

    def as_json(self) -> dict[str, Any]:
        return {"taskId": self.id, "status": self.status, "statusMessage": self.message, "createdAt": self.created,
                "lastUpdatedAt": self.updated, "ttl": self.ttl, "pollInterval": POLL_MS}


class ClientTaskStore:
    """The tasks this client runs for its server, and the answers to the server's tasks/* requests."""

    def __init__(self, handlers: dict[str, Handler], notify: Notify | None = None) -> None:
        self.handlers = handlers
        self.notify = notify
        self.tasks: dict[str, ClientTask] = {}
        self._serial = itertools.count(1)

    def capability(self) -> dict[str, Any] | None:
        """`tasks` for the client's capabilities: the request kinds it has handlers for (None: none)."""
        requests: dict[str, Any] = {}
        for method in TASK_METHODS:
            if method in self.handlers:
                kind, verb = _REQUESTS[method]
                requests[kind] = {verb: {}}
        return {"list": {}, "cancel": {}, "requests": requests} if requests else None

    def wants(self, method: str, params: Any) -> bool:
        """A request the server asked to run as a task, of a kind this client runs so."""
        return method in TASK_METHODS and method in self.handlers and isinstance(params, dict) \
            and isinstance(params.get("task"), dict)

    # ------------------------------------------------------------------ starting
    def start(self, method: str, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
        """Create the task, start the work, and return the CreateTaskResult to answer with."""
        asked = params["task"].get("ttl")
        ttl = asked if isinstance(asked, int) and not isinstance(asked, bool) and asked > 0 else DEFAULT_TTL_MS
        task = ClientTask(f"spyglass-{next(self._serial)}-{secrets.token_hex(4)}", method, min(ttl, MAX_TTL_MS))
        self.tasks[task.id] = task
        self._forget_old()
        plain = {k: v for k, v in params.items() if k != "task"}
        task.job = asyncio.ensure_future(self._run(task, plain, context))
        return {"task": task.as_json()}

    async def _run(self, task: ClientTask, params: dict[str, Any], context: RequestContext) -> None:
        try:
            result = await self.handlers[task.method](params, context)
            if task.status in T.TERMINAL:  # cancelled meanwhile: an ended task does not change again
                return
            task.result = result
            self._end(task, "completed", "answered")
        except asyncio.CancelledError:
            if task.status not in T.TERMINAL:
                self._end(task, "cancelled", "cancelled by the server")
        except E.RemoteError as exc:
            if task.status not in T.TERMINAL:
                task.error = exc
                self._end(task, "failed", exc.rpc_message)
        except Exception as exc:  # the handler failed: the task failed, with the reason
            if task.status in T.TERMINAL:
                return
            log.exception("client task %s failed", task.id)
            task.error = E.RemoteError(task.method, rpc.INTERNAL_ERROR, f"client handler failed: {exc}")
            self._end(task, "failed", f"client handler failed: {exc}")

    def _end(self, task: ClientTask, status: str, message: str) -> None:
        task.status, task.message, task.updated = status, message, _now()
        task.ended.set()
        if self.notify is not None:
            job = asyncio.ensure_future(self.notify("notifications/tasks/status", task.as_json()))
            job.add_done_callback(lambda j: j.cancelled() or j.exception())

    def _forget_old(self) -> None:
        ended = [t for t in self.tasks.values() if t.status in T.TERMINAL]
        for task in ended[: max(0, len(self.tasks) - MAX_KEPT)]:
            self.tasks.pop(task.id, None)

    # ------------------------------------------------------------------ the server's questions
    def _task(self, params: Any) -> ClientTask:
        tid = params.get("taskId") if isinstance(params, dict) else None
        task = self.tasks.get(tid) if isinstance(tid, str) else None
        if task is None:
            raise E.RemoteError("tasks", rpc.INVALID_PARAMS, f"no task {tid!r} on this client")
        return task

    async def answer(self, method: str, params: Any) -> Any:
        """The result for one of the server's tasks/* requests (RemoteError for a JSON-RPC error)."""
        if method == "tasks/list":
            return {"tasks": [t.as_json() for t in self.tasks.values()]}
        task = self._task(params)
        if method == "tasks/get":
            return task.as_json()
        if method == "tasks/cancel":
            if task.status in T.TERMINAL:
                raise E.RemoteError(method, rpc.INVALID_PARAMS, f"task {task.id} has already ended ({task.status})")
            if task.job is not None:
                task.job.cancel()
            self._end(task, "cancelled", "cancelled by the server")
            return task.as_json()
        if method == "tasks/result":
            await task.ended.wait()
            if task.status == "cancelled":
                raise E.RemoteError(method, rpc.INVALID_PARAMS, f"task {task.id} was cancelled")
            if task.error is not None:
                raise task.error
            result = dict(task.result) if isinstance(task.result, dict) else {"result": task.result}
            result["_meta"] = {**(result.get("_meta") or {}), T.RELATED_TASK_META: {"taskId": task.id}}
            return result
        raise E.RemoteError(method, rpc.METHOD_NOT_FOUND, f"Method not found: {method}")

    def close(self) -> None:
        for task in self.tasks.values():
            if task.job is not None and not task.job.done():
                task.job.cancel()
