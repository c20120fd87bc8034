"""The connection half of the client: one transport, the sans-IO session, a future per request.

`ClientCore` drives the `ClientSession` with a `Transport`: it completes the handshake (falling back to
HTTP+SSE when Streamable HTTP finds no endpoint), keeps one future per request with a timeout that
progress notifications reset, cancels the way the transport wants, reports every frame to a traffic
hook, and answers the server's requests through handlers. Each handler is told which of our requests
the server's request belongs to (`RequestContext`), so that a question lands on the call that caused
it even with several calls running. No Qt here.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any, cast

from .. import errors as E
from ..protocol import apps, skills
from ..protocol import events as ev
from ..protocol import jsonrpc as rpc
from ..protocol.mode import Mode
from ..protocol.session import SESSION_NOTIFICATIONS, ClientSession, State, plain_notification
from ..protocol.versions import MODERN_VERSION, Era
from ..traffic.frame import Frame
from ..transport.base import Closed, Transport
from .handmade import BLIND_WINDOW, META_ANSWER, META_SENT, Handmade, HandmadeBook

try:  # frames are parsed with msgspec first (several times faster on a flood); the standard library reads the rest
    import msgspec
except ImportError:  # pragma: no cover - a declared dependency
    pass
else:
    rpc.use_loads(msgspec.json.Decoder().decode)
from .shapes import Handler, ProgressCallback, RequestContext, ServerHello
from .task_store import ClientTaskStore

log = logging.getLogger("spyglass.client")

DEFAULT_TIMEOUT = 60.0
DEFAULT_PROBE_TIMEOUT = 5.0
STDERR_TAIL = 20

# Extensions every client of Spyglass declares: it hosts MCP Apps (the window renders them; the command line
# shows their resources), so servers that check before offering UI tools offer them.
EXTENSIONS: dict[str, Any] = {apps.EXTENSION: apps.CAPABILITY, skills.EXTENSION: {}}

@dataclass
class _Call:
    method: str
    future: asyncio.Future[Any]
    timeout: float | None
    on_progress: ProgressCallback | None = None
    owner: Any = None
    timer: asyncio.TimerHandle | None = None
    started: float = field(default_factory=time.monotonic)


class ClientCore:
    def __init__(self, transport: Transport, *, mode: Mode | str = "auto",
                 client_info: dict[str, Any] | None = None, timeout: float | None = DEFAULT_TIMEOUT,
                 probe_timeout: float = DEFAULT_PROBE_TIMEOUT, log_level: str | None = None,
                 handlers: Mapping[str, Handler] | None = None,
                 traffic: Callable[[Frame], None] | None = None,
                 on_notification: Callable[[str, dict[str, Any] | None], None] | None = None,
                 on_stderr: Callable[[str], None] | None = None,
                 on_closed: Callable[[Closed], None] | None = None,
                 fallback: Callable[[], Transport] | None = None,
                 roots: list[dict[str, Any]] | None = None, trace_context: bool = False,
                 extensions: Mapping[str, Any] | None = None) -> None:
        self.transport = transport
        self.fallback = fallback  # automatic transport choice: HTTP+SSE when Streamable HTTP is not there
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
        declared = EXTENSIONS if extensions is None else extensions
        if declared:
            capabilities["extensions"] = {k: dict(v) if isinstance(v, dict) else v for k, v in declared.items()}
        kwargs: dict[str, Any] = {"mode": Mode.parse(mode) if isinstance(mode, str) else mode,
                                  "capabilities": capabilities, "log_level": log_level,
                                  "trace_context": trace_context}
        if client_info:
            kwargs["client_info"] = client_info
        self._session_kwargs = kwargs
        self.session = ClientSession(**kwargs)
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.traffic = traffic
        # where a read's worth of frames is recorded at once (None: `traffic`, one frame at a time)
        self.traffic_many: Callable[[list[Frame]], None] | None = None
        self.on_notification = on_notification
        self.on_stderr = on_stderr
        self.on_closed = on_closed
        self.hello: ServerHello | None = None
        self.closed: Closed | None = None
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self.malformed_count = 0
        self._calls: dict[rpc.RequestId, _Call] = {}
        self.handmade = HandmadeBook()  # the raw composer's frames on this connection
        self._task_owners: dict[str, tuple[rpc.RequestId | None, Any]] = {}  # task id -> (its call, owner)
        self._handshake: asyncio.Future[ServerHello] | None = None
        self._probe_window = probe_timeout
        self._tasks: set[asyncio.Future[Any]] = set()
        self._tokens = itertools.count(1)
        self._wall0 = time.time() - time.monotonic()
        self._closed_event = asyncio.Event()
        self._attach(transport)

    def _attach(self, transport: Transport) -> None:
        self.transport = transport
        transport.on_frame = self._on_frame
        transport.on_frames = self._on_frames
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
                # auto: a short probe, then the legacy handshake; modern: no fallback, so the request's timeout
                short = self.session.mode.kind == "auto"
                self._probe_window = (min(self.probe_timeout, self.timeout or self.probe_timeout) if short
                                      else self.timeout or self.probe_timeout)
                probe_timer = loop.call_later(self._probe_window, self._probe_expired)
            hello: ServerHello = await self._await(self._handshake, self.timeout, "the handshake")
            await self.transport.settle()
            return hello
        except BaseException as exc:
            failure = None
            if self._handshake is not None:
                if not self._handshake.done():
                    self._handshake.cancel()  # nobody waits for it now (e.g. cancelled while the user signs in)
                elif not self._handshake.cancelled():
                    failure = self._handshake.exception()  # retrieved: raised below, or superseded by `exc`
            await self._shutdown_after_failure()
            if isinstance(failure, E.ServerExited) and isinstance(exc, E.SpyglassError) and failure is not exc:
                # the server died before the first message could be written: its exit (code, stderr) says
                # more than the broken pipe that the write ran into
                raise failure from None
            raise
        finally:
            if probe_timer is not None:
                probe_timer.cancel()

    def _probe_expired(self) -> None:
        loop = asyncio.get_running_loop()
        if self.transport.authorizing:
            # The user is signing in to answer the probe: wait for them.
            loop.call_later(0.25, self._probe_expired)
            return
        ended = self.transport.authorized_at
        left = self._probe_window - (time.monotonic() - ended) if ended is not None else 0.0
        if left > 0:  # the probe, sent again once signed in, gets its whole window
            loop.call_later(left, self._probe_expired)
            return
        self._spawn(self._dispatch(self.session.probe_timed_out()))

    async def _shutdown_after_failure(self) -> None:
        try:
            await self.transport.close()
        except Exception:
            log.exception("closing after a failed connect")

    async def close(self) -> None:
        self.task_store.close()
        self.handmade.close("the connection was closed")
        for call in list(self._calls.values()):
            if not call.future.done():
                call.future.set_exception(E.TransportClosed("the connection was closed"))
                # looked at here: a waiter still gets it; a request whose waiter went away (cancelled by a
                # restart) is no error, which asyncio would otherwise report when the future is collected
                call.future.exception()
        await self.transport.close()
        for task in list(self._tasks):
            task.cancel()
        self._calls.clear()

    # ------------------------------------------------------------------ requests
    async def request(self, method: str, params: dict[str, Any] | None = None, *,
                      timeout: float | None | EllipsisType = ..., on_progress: ProgressCallback | None = None,
                      progress_token: Any = None, owner: Any = None,
                      on_id: Callable[[rpc.RequestId], None] | None = None) -> Any:
        """Send a request and wait for its result; raises a SpyglassError. `owner` is handed to the
        handlers of server requests that belong to this one; `on_id` learns its id before it is sent."""
        self._check_open()
        token = progress_token if progress_token is not None else (
            f"spyglass-{next(self._tokens)}" if on_progress is not None else None)
        send = self.session.send_request(method, params, progress_token=token)
        rid = send.request_id
        assert rid is not None
        call = _Call(method, asyncio.get_running_loop().create_future(),
                     self.timeout if timeout is ... else timeout, on_progress, owner)
        self._calls[rid] = call
        if on_id is not None:
            on_id(rid)
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

    async def send_handmade(self, data: bytes, headers: Mapping[str, str] | None = None, *,
                            timeout: float | None | EllipsisType = ...) -> Handmade:
        """Write a hand-made frame exactly as given (see client/handmade.py); returns it at once, its answers
        joining it as they come. Raises UsageError when it is refused, and what the transport raises."""
        self._check_open()
        handmade = self.handmade.open(data, self.session, self.transport.max_message)
        try:
            sent = await self.transport.send_raw(data, headers=headers, meta={META_SENT: handmade.number})
        except E.TransportClosed:
            handmade.give_up("it could not be written: the connection is closed")
            raise self._closed_error() if self.closed else E.TransportClosed("the server is not reading") from None
        self.handmade.written(handmade, sent.stream, sent.data)
        if sent.ended is not None:
            sent.ended.add_done_callback(
                lambda t: None if t.cancelled() else self.handmade.post_ended(handmade, self.session, *t.result()))
        wait = self.timeout if timeout is ... else timeout
        loop = asyncio.get_running_loop()
        if handmade.ids and wait is not None:
            loop.call_later(wait, lambda: handmade.give_up(f"no answer within {wait:g} s", timed_out=True))
        elif handmade.unreadable and sent.stream is None:
            loop.call_later(BLIND_WINDOW, handmade.give_up, f"no answer within {BLIND_WINDOW:g} s")
        return handmade

    def reserve_id(self) -> int:
        """An id for a hand-made request that this session will never use for its own."""
        return self.session.reserve_id()

    def new_token(self) -> str:
        return f"spyglass-{next(self._tokens)}"

    def _arm(self, rid: rpc.RequestId, call: _Call) -> None:
        if call.timer:
            call.timer.cancel()
        if call.timeout is not None:
            call.timer = asyncio.get_running_loop().call_later(call.timeout, self._expire, rid)

    def _expire(self, rid: rpc.RequestId) -> None:
        call = self._calls.get(rid)
        if call is None or call.future.done() or call.timeout is None:
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

    async def _answer_roots(self, params: dict[str, Any] | None, context: RequestContext) -> dict[str, Any]:
        return {"roots": list(self.roots or [])}

    # ------------------------------------------------------------------ IO plumbing
    async def _write(self, send: ev.Send) -> None:
        try:
            await self.transport.send(send.data)
        except E.TransportClosed:
            # Prefer the real story (the process exited) when we are about to learn it.
            try:
                await asyncio.wait_for(self._closed_event.wait(), 2.0)
            except TimeoutError:
                pass
            raise self._closed_error() if self.closed else E.TransportClosed(
                f"could not send {send.method or 'a message'}: the server is not reading") from None

    def _on_sent(self, data: bytes, mono: float, meta: dict[str, Any] | None = None) -> None:
        self._record(Frame("out", data, mono, self._wall0 + mono, meta=meta))

    def _record(self, frame: Frame) -> None:
        if self.traffic is not None:
            try:
                self.traffic(frame)
            except Exception:
                log.exception("traffic hook failed")

    def _on_frames(self, raws: list[Any], mono: float) -> None:
        """Frames of one read: a run of plain notifications recorded in one hand-off, then handed on (in order)."""
        run: list[Frame] = []
        wall, quick, msgs = self._wall0 + mono, not self.handmade.active, rpc.parse_many(raws)
        if quick and {*map(type, msgs)} == {rpc.Notification} and SESSION_NOTIFICATIONS.isdisjoint(
                m.method for m in msgs if type(m) is rpc.Notification):
            return self._plain_notifications([Frame("in", r, mono, wall, None, m)
                                              for r, m in zip(raws, msgs, strict=True)])
        for raw, msg in zip(raws, msgs, strict=True):  # (others go the way of `_on_frame`, after the run before)
            try:
                if quick and plain_notification(msg):
                    run.append(Frame("in", raw, mono, wall, None, msg))
                    continue
                if run:
                    self._plain_notifications(run)
                    run = []
                self._on_frame(raw, mono, parsed=msg)
            except Exception:  # a consumer's bug must not cost the frames after it
                log.exception("handling a frame failed")
        if run:
            self._plain_notifications(run)

    def _plain_notifications(self, frames: list[Frame]) -> None:
        """Recorded in one hand-off (`traffic_many`; else one by one), then handed on in order."""
        for frame in (frames if self.traffic_many is None else ()):
            self._record(frame)
        try:
            self.traffic_many and self.traffic_many(frames)
        except Exception:
            log.exception("traffic hook failed")
        self._notified_run(frames)

    def _notified_run(self, frames: list[Frame]) -> None:
        for frame in frames:  # (a subclass may hand them on together)
            msg = cast(rpc.Notification, frame.message)
            try:
                self._notified(msg.method, msg.params)
            except Exception:
                log.exception("handling %s failed", msg.method)

    def _on_frame(self, raw: Any, mono: float, meta: dict[str, Any] | None = None,
                  parsed: rpc.Message | rpc.Malformed | None = None) -> None:
        msg = parsed if parsed is not None else rpc.parse(raw)
        data = raw if isinstance(raw, bytes) else raw.head
        if self.handmade.active and (owner := self.handmade.null_error_owner(msg, meta)) is not None:
            # the server could not read a hand-made frame and said so: its answer, nothing of the session's
            frame = Frame("in", data, mono, self._wall0 + mono, None, msg, {**(meta or {}), META_ANSWER: owner.number})
            self._record(frame)
            owner.answer(frame, final=True)
            return
        events = self.session.receive_parsed(msg, raw, stream_of=meta.get("request") if meta else None)
        malformed = owner = None
        answered: tuple[rpc.RequestId, ...] = ()
        for event in events:
            if type(event) is ev.MalformedFrame and malformed is None:
                malformed = event.reason
            elif type(event) is ev.HandmadeAnswer:
                owner, answered = self.handmade.claim(event.request_id), (event.request_id,)
        if malformed:
            self.malformed_count += 1
            if meta and meta.get("eof"):
                malformed = f"the stream ended in the middle of this message ({malformed})"
            if self.handmade.active and owner is None:
                owner, answered = self.handmade.batch_owner(msg)
        if owner is not None:
            meta = {**(meta or {}), META_ANSWER: owner.number}
        frame = Frame("in", data, mono, self._wall0 + mono, malformed, msg, meta)
        self._record(frame)
        if owner is not None:
            owner.answer(frame, answered)
        self._handle_events(events)

    def _on_exchange(self, record: dict[str, Any], mono: float) -> None:
        data = json.dumps(record, ensure_ascii=False).encode("utf-8")
        self._record(Frame("http", data, mono, self._wall0 + mono, meta=record))

    def _on_request_error(self, wire_id: Any, error: Exception) -> None:
        info = self.session.fail_locally(wire_id)
        if info is None:
            return
        logical, method, internal = info
        failure = error if isinstance(error, E.SpyglassError) else E.TransportClosed(f"{method}: {error}")
        if internal:
            if (method == "server/discover" and self.session.state is State.PROBING
                    and self.session.mode.kind == "auto" and isinstance(failure, E.HttpStatusError)):
                # Not a modern endpoint: fall back to the legacy handshake.
                self._spawn(self._dispatch(self.session.probe_timed_out()))
                return
            self.session.handshake_failed(failure.message)
            if self._handshake and not self._handshake.done():
                self._handshake.set_exception(failure)
            return
        self._settle(logical, error=failure)

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
        self.handmade.close(closed.reason)
        error = self._closed_error()
        if self._handshake and not self._handshake.done():
            self._handshake.set_exception(error)
            self._handshake.exception()  # as in close(): a waiter gets it; no waiter is no error
        for call in list(self._calls.values()):
            if not call.future.done():
                call.future.set_exception(error)
                call.future.exception()
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

    def _task_done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            if not isinstance(exc, E.SpyglassError):
                log.error("background task failed", exc_info=exc)

    # ------------------------------------------------------------------ events
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
            self._settle(event.request_id, error=self._remote_error(event.method, event.error))
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
        self._notified(event.method, event.params)

    def _notified(self, method: str, params: dict[str, Any] | None) -> None:
        """A notification from the server. Subclasses look at it first (caches, subscriptions, tasks), then this."""
        if self.on_notification:
            self.on_notification(method, params)

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
                                  f"(it supports {data.get('supported', 'unknown versions')})", code=err.code,
                                  data=err.data)
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
            self._progress_without_request(event)
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

    def _progress_without_request(self, event: ev.ProgressReceived) -> None:
        """Progress whose request has been answered (a task's, after its CreateTaskResult)."""

    # ------------------------------------------------------------------ the server's requests
    def follow_task_owner(self, task_id: str, related_id: rpc.RequestId | None, owner: Any) -> None:
        """Requests that name this task (`related-task`) belong to `owner` until `forget_task_owner`."""
        self._task_owners[task_id] = (related_id, owner)

    def forget_task_owner(self, task_id: str) -> None:
        self._task_owners.pop(task_id, None)

    def _context(self, event: ev.ServerRequest) -> RequestContext:
        if event.related_id is not None:
            call = self._calls.get(event.related_id)
            return RequestContext(event.method, event.related_id, event.related_method,
                                  call.owner if call is not None else None, task_id=event.task_id,
                                  known_by="stream")
        if event.task_id is not None and event.task_id in self._task_owners:
            related, owner = self._task_owners[event.task_id]
            call = self._calls.get(related) if related is not None else None
            return RequestContext(event.method, related, call.method if call is not None else None, owner,
                                  task_id=event.task_id, known_by="task")
        owned = [(rid, call) for rid, call in self._calls.items() if call.owner is not None]
        if owned and all(call.owner is owned[0][1].owner for _rid, call in owned):
            rid, call = owned[-1]
            return RequestContext(event.method, rid, call.method, call.owner, task_id=event.task_id,
                                  known_by="only request")
        return RequestContext(event.method, task_id=event.task_id)

    async def _answer_request(self, event: ev.ServerRequest) -> None:
        context = self._context(event)
        handler = self.handlers.get(event.method)
        if self.task_store.wants(event.method, event.params):
            assert event.params is not None
            send = self.session.respond(event.id, self.task_store.start(event.method, event.params, context))
        elif event.method.startswith("tasks/"):
            try:
                send = self.session.respond(event.id, await self.task_store.answer(event.method, event.params))
            except E.RemoteError as exc:
                send = self.session.respond_error(event.id, exc.code, exc.rpc_message, exc.data)
        elif handler is None:
            send = self.session.respond_error(event.id, rpc.METHOD_NOT_FOUND, f"Method not found: {event.method}")
        else:
            try:
                send = self.session.respond(event.id, await handler(event.params, context))
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
                if handler is None or not isinstance(method, str):
                    raise E.InvalidResponse(f"{event.method}: the server asked for {method or 'an unknown input'} "
                                            "(input request " + repr(key) + "), which this client cannot provide")
                params = request.get("params")
                context = RequestContext(method, event.request_id, event.method,
                                         call.owner if call is not None else None, event.round, key,
                                         known_by="mrtr")
                responses[key] = await handler(params if isinstance(params, dict) else None, context)
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
            except TimeoutError:
                if self.transport.authorizing:
                    continue  # the user is signing in (or stepping through the flow): not the server's delay
                raise E.RequestTimeout(f"no answer to {what} within {timeout:g} s", seconds=timeout) from None
