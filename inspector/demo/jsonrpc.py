"""Newline-delimited JSON-RPC 2.0 over stdio, with concurrent request handling.

:class:`JsonRpcPeer` parses lines, runs every incoming request in its own
asyncio task (so a slow handler never blocks the others), matches responses
to the requests it sent, and writes each outgoing message as one flushed line
from the event-loop thread, which keeps output serialised. Subclasses supply
:meth:`handle_request` and :meth:`handle_notification`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Collection
from typing import Any, TypeVar

from .wire import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, JsonObject, RpcError

log = logging.getLogger("spyglass-demo")

T = TypeVar("T")


class RemoteError(Exception):
    """The other side answered one of our requests with an error."""


def valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def id_key(request_id: Any) -> str:
    return json.dumps(request_id)  # keeps 1 and "1" apart


def error_response(request_id: Any, exc: RpcError) -> JsonObject:
    return {"jsonrpc": "2.0", "id": request_id, "error": exc.to_json()}


class JsonRpcPeer:
    """One end of a JSON-RPC connection; override the ``handle_*`` hooks."""

    def __init__(self, write: Callable[[bytes], None]) -> None:
        self._write = write
        self._by_id: dict[str, asyncio.Task[JsonObject]] = {}
        self._running: set[asyncio.Task[Any]] = set()
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._out_ids = itertools.count(1)
        self.closing = False

    # ------------------------------------------------------------------ hooks

    async def handle_request(self, request_id: Any, method: str, params: JsonObject) -> JsonObject:
        raise RpcError(-32601, f"Method not found: {method}")

    def handle_notification(self, method: str, params: JsonObject) -> None:
        pass

    def request_abandoned(self, request_id: str) -> None:
        """Called when a caller stops waiting for one of our requests."""

    # ------------------------------------------------------------------ output

    def send(self, message: JsonObject | list[JsonObject]) -> bool:
        """Write one message; False when it was dropped (it cannot be encoded, or the output is closed)."""
        try:
            # UTF-8 cannot carry a lone surrogate ("\ud800" is valid JSON input): that fails here too
            data = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        except (TypeError, ValueError):
            log.exception("could not encode an outgoing message")
            if not isinstance(message, dict) or "id" not in message or "method" in message:
                return False
            failure = RpcError(INTERNAL_ERROR, "Result was not valid JSON")
            data = json.dumps(error_response(message["id"], failure)).encode("ascii")
        try:
            self._write(data + b"\n")
        except (OSError, ValueError):
            if not self.closing:
                log.warning("output is closed; dropping messages")
            self.closing = True
            return False
        return True

    def notify(self, method: str, params: JsonObject | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    async def request(self, method: str, params: JsonObject) -> Any:
        """Send a request with an id like ``srv-1`` and wait for its result."""
        request_id = f"srv-{next(self._out_ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            if not self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}):
                raise RemoteError(f"{method} could not be sent (see the log)")  # no answer would ever come
            return await future
        except asyncio.CancelledError:
            if not self.closing:
                self.request_abandoned(request_id)
            raise
        finally:
            self._pending.pop(request_id, None)

    # ------------------------------------------------------------------ input

    async def serve(self, lines: asyncio.Queue[bytes | None]) -> None:
        """Handle lines from ``lines`` until ``None`` (end of input), then shut down."""
        try:
            while (line := await lines.get()) is not None:
                self.on_line(line)
        finally:
            await self.shutdown()

    async def shutdown(self, grace: float = 0.5) -> None:
        """Give in-flight requests ``grace`` seconds to answer, then cancel the rest."""
        self.closing = True
        for future in self._pending.values():  # nobody can answer these any more
            future.cancel()
        running: Collection[asyncio.Task[Any]] = list(self._running)
        if running:
            _, running = await asyncio.wait(running, timeout=grace)
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=1)

    def cancel_request(self, request_id: Any) -> bool:
        """Stop handling an incoming request; it will get no response."""
        task = self._by_id.get(id_key(request_id)) if valid_id(request_id) else None
        return task.cancel() if task is not None else False

    def on_line(self, raw: bytes | str) -> None:
        if not raw.strip():
            return
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            self.send(error_response(None, RpcError(PARSE_ERROR, f"Parse error: {exc}")))
            return
        if isinstance(message, list):
            if not message:
                self.send(error_response(None, RpcError(INVALID_REQUEST, "Invalid Request: empty batch")))
                return
            self._track(asyncio.ensure_future(self._answer_batch([self._accept(m) for m in message])))
            return
        outcome = self._accept(message)
        if isinstance(outcome, dict):
            self.send(outcome)
        elif isinstance(outcome, asyncio.Task):
            outcome.add_done_callback(self._deliver)

    def _accept(self, message: Any) -> asyncio.Task[JsonObject] | JsonObject | None:
        """Route one message: a task for a request, an error to send, or None."""
        def invalid(reply_to: Any, why: str) -> JsonObject:
            return error_response(reply_to, RpcError(INVALID_REQUEST, f"Invalid Request: {why}"))

        if not isinstance(message, dict):
            return invalid(None, "expected a JSON object")
        request_id = message.get("id")
        reply_id = request_id if valid_id(request_id) else None
        if "method" in message:
            method = message["method"]
            if not isinstance(method, str):
                return invalid(reply_id, "method must be a string")
            if "id" not in message:
                params = message.get("params")
                self.handle_notification(method, params if isinstance(params, dict) else {})
                return None
            if reply_id is None:
                return invalid(None, "id must be a string or integer")
            key = id_key(request_id)
            if key in self._by_id:
                return invalid(request_id, f"request id {request_id!r} is already in use")
            task = asyncio.ensure_future(self._respond(request_id, method, message.get("params")))
            self._by_id[key] = task
            task.add_done_callback(lambda _task: self._by_id.pop(key, None))
            return self._track(task)
        if "id" in message and ("result" in message or "error" in message):
            self._on_response(message)
            return None
        return invalid(reply_id, "not a request, notification or response")

    async def answer(self, request_id: Any, method: str, params: Any) -> JsonObject:
        """The response to one request, its result or its error (for a transport that answers each request
        on its own, as HTTP does)."""
        return await self._respond(request_id, method, params)

    def _track(self, task: asyncio.Task[T]) -> asyncio.Task[T]:
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return task

    async def _respond(self, request_id: Any, method: str, params: Any) -> JsonObject:
        try:
            if params is None:
                params = {}
            if not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, "params must be an object")
            return {"jsonrpc": "2.0", "id": request_id,
                    "result": await self.handle_request(request_id, method, params)}
        except RpcError as exc:
            return error_response(request_id, exc)
        except asyncio.CancelledError:
            log.info("request %r (%s) stopped without a response", request_id, method)
            raise
        except Exception as exc:  # one bad request must never take the server down
            log.exception("request %r (%s) failed", request_id, method)
            return error_response(request_id, RpcError(INTERNAL_ERROR, f"Internal error: {exc}"))

    def _deliver(self, task: asyncio.Task[JsonObject]) -> None:
        if not task.cancelled() and task.exception() is None:
            self.send(task.result())

    async def _answer_batch(self, outcomes: list[asyncio.Task[JsonObject] | JsonObject | None]) -> None:
        tasks = [o for o in outcomes if isinstance(o, asyncio.Task)]
        if tasks:
            await asyncio.wait(tasks)
        replies = [o if isinstance(o, dict) else o.result() for o in outcomes
                   if isinstance(o, dict)
                   or (isinstance(o, asyncio.Task) and not o.cancelled() and o.exception() is None)]
        if replies:
            self.send(replies)

    def _on_response(self, message: JsonObject) -> None:
        future = self._pending.get(message["id"]) if isinstance(message["id"], str) else None
        if future is None or future.done():
            log.warning("response for unknown request %r ignored", message["id"])
        elif "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {}
            future.set_exception(RemoteError(f"{error.get('message', 'error')} (code {error.get('code')})"))
        else:
            future.set_result(message["result"])


def run_stdio(make_peer: Callable[[Callable[[bytes], None]], JsonRpcPeer]) -> int:
    """Serve one peer on stdin/stdout until stdin closes; return the exit status."""
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print() must never corrupt the protocol stream

    def write(data: bytes) -> None:
        try:
            out.write(data)
            out.flush()
        except OSError:  # the client went away: also silence the final flush at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
            raise

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[bytes | None] = asyncio.Queue()

        def pump() -> None:  # reading in a thread keeps stdin portable (Windows pipes too)
            try:
                # A reader of its own: this daemon thread, blocked in a read, holds its reader's lock, and
                # after Ctrl+C the interpreter closing sys.stdin at exit would wait for that lock and abort.
                with os.fdopen(os.dup(sys.stdin.fileno()), "rb") as stdin:
                    for line in iter(stdin.readline, b""):
                        loop.call_soon_threadsafe(lines.put_nowait, line)
            except (OSError, ValueError) as exc:
                log.warning("stdin failed: %s", exc)
            finally:
                try:
                    loop.call_soon_threadsafe(lines.put_nowait, None)
                except RuntimeError:
                    pass  # the loop has already gone

        threading.Thread(target=pump, name="stdin-reader", daemon=True).start()
        await make_peer(write).serve(lines)

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0
