"""The sans-IO MCP client session for both protocol eras.

Feed it frames with `receive_frame(raw)` and it returns events; ask it for
requests with `send_request(...)` and it returns the bytes to write. It does no
IO, keeps no clock, and nothing a peer sends can make it raise.

Handshake:
- legacy (or a pinned legacy version): `initialize` → result →
  `notifications/initialized`;
- modern: `server/discover` (requests carry `_meta` from then on);
- auto: probe with `server/discover`; a discover result naming our modern
  revision, or a modern error code, means modern; anything else (or
  `probe_timed_out()`) means a legacy `initialize`.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from . import events as ev
from . import jsonrpc as rpc
from .framing import Oversize
from .mode import Mode
from .shapes import check_result
from .tasks import related_task
from .tracecontext import TraceBook
from .versions import (
    LEGACY_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MODERN_VERSION,
    SUPPORTED_VERSIONS,
    Era,
    best_common,
    era_of,
)

DEFAULT_CLIENT_INFO = {"name": "spyglass", "title": "Spyglass", "version": "0.1.0"}
MAX_INPUT_ROUNDS = 8
_LATE_MEMORY = 1024  # how many cancelled/abandoned ids we still recognise
# The notifications the session itself reads (into events of their own); any other notification from the server
# becomes a NotificationReceived of its method and params, whatever the session's state: `plain_notification`
# lets a client take a flood of those without asking the session about each.
SESSION_NOTIFICATIONS = frozenset({"notifications/progress"})


def plain_notification(msg: object) -> bool:
    """True when `receive_parsed(msg)` would be exactly `[NotificationReceived(msg.method, msg.params)]`."""
    return type(msg) is rpc.Notification and msg.method not in SESSION_NOTIFICATIONS


class State(str, Enum):
    IDLE = "idle"
    PROBING = "probing"
    INITIALIZING = "initializing"
    READY = "ready"
    FAILED = "failed"
    CLOSED = "closed"


class LocalProtocolError(RuntimeError):
    """We (the caller) used the session wrongly; never raised by peer input."""


@dataclass
class _Pending:
    method: str
    params: dict[str, Any] | None
    logical_id: rpc.RequestId
    progress_token: Any = None
    rounds: int = 0
    internal: bool = False  # handshake request, answered inside the session


@dataclass
class ClientSession:
    mode: Mode = field(default_factory=lambda: Mode("auto"))
    client_info: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_CLIENT_INFO))
    capabilities: dict[str, Any] = field(default_factory=dict)
    log_level: str | None = None  # modern era: sent in every request's _meta
    max_input_rounds: int = MAX_INPUT_ROUNDS
    trace_context: bool = False  # a W3C traceparent in every request's _meta (and our answers' results)
    user_meta: dict[str, Any] = field(default_factory=dict)  # the user's _meta entries for every request
    tool_meta: dict[str, Any] = field(default_factory=dict)  # ... and for tools/call (over user_meta)

    def __post_init__(self) -> None:
        self.state = State.IDLE
        self.traces: TraceBook | None = TraceBook() if self.trace_context else None
        self.era: Era | None = None
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] | None = None
        self.server_capabilities: dict[str, Any] | None = None
        self.instructions: str | None = None
        self._next_id = 1
        self._pending: dict[rpc.RequestId, _Pending] = {}
        self._by_logical: dict[rpc.RequestId, rpc.RequestId] = {}  # logical id -> current wire id
        self._by_token: dict[Any, rpc.RequestId] = {}
        self._late: OrderedDict[rpc.RequestId, str] = OrderedDict()
        self._probe_asked_again = False  # a second probe (the first was answered late) has no short window
        self._probe_id: rpc.RequestId | None = None
        self._discover_retried = False
        # MRTR: logical id -> (the request as first sent, rounds so far, requestState)
        self._awaiting_input: dict[rpc.RequestId, tuple[_Pending, int, str | None]] = {}
        # ids of hand-made requests (the raw composer) whose answer may still come: never ours to settle
        self._handmade: OrderedDict[rpc.RequestId, None] = OrderedDict()

    # ------------------------------------------------------------------ handshake
    def start(self) -> list[ev.Event]:
        """Begin the handshake; returns the first frame(s) to send."""
        if self.state is not State.IDLE:
            raise LocalProtocolError(f"start() in state {self.state.value}")
        if self.mode.kind in ("auto", "modern"):
            self.state = State.PROBING
            self.protocol_version = MODERN_VERSION  # what the probe's _meta claims
            send = self._request("server/discover", {}, internal=True, modern=True)
            self._probe_id = send.request_id
            return [send]
        return [self._send_initialize(self.mode.legacy_version)]

    def probe_timed_out(self) -> list[ev.Event]:
        """The `server/discover` probe got no answer in time (auto mode)."""
        if self.state is not State.PROBING or self._probe_id is None or self._probe_asked_again:
            return []
        self._abandon(self._probe_id)
        if self.mode.kind == "modern":
            return self._fail("invalid", "the server did not answer server/discover; it may not speak 2026-07-28")
        return [self._send_initialize(self.mode.legacy_version)]

    def _send_initialize(self, version: str) -> ev.Send:
        self.state = State.INITIALIZING
        self.protocol_version = version
        params = {"protocolVersion": version, "capabilities": copy.deepcopy(self.capabilities),
                  "clientInfo": self.client_info}
        return self._request("initialize", params, internal=True, modern=False)

    def _handshake_answer(self, pending: _Pending, msg: rpc.Response | rpc.ErrorResponse) -> list[ev.Event]:
        if pending.method == "server/discover":
            return self._discover_answer(msg)
        return self._initialize_answer(msg)

    def _discover_answer(self, msg: rpc.Response | rpc.ErrorResponse) -> list[ev.Event]:
        self._probe_id = None
        auto = self.mode.kind == "auto"
        if isinstance(msg, rpc.ErrorResponse):
            err = msg.error
            if err.code == rpc.UNSUPPORTED_PROTOCOL_VERSION:
                data = err.data if isinstance(err.data, dict) else {}
                best = best_common(data.get("supported"))
                if best is None:
                    return self._fail("version", "the server supports none of our protocol revisions "
                                      f"(it offers {_list(data.get('supported'))}; "
                                      f"we speak {', '.join(SUPPORTED_VERSIONS)})", err)
                if era_of(best) is Era.LEGACY:
                    if not auto:
                        return self._fail(
                            "version",
                            f"the server does not speak {MODERN_VERSION} (it offers "
                            f"{_list(data.get('supported'))}); use --protocol legacy",
                            err,
                        )
                    return [self._send_initialize(best)]
                if not self._discover_retried:  # it supports our revision after all: ask once more
                    self._discover_retried = True
                    send = self._request("server/discover", {}, internal=True, modern=True)
                    self._probe_id = send.request_id
                    return [send]
                return self._ready_modern(None, (f"server/discover failed: {err.message}",))
            if err.code in rpc.MODERN_ERROR_CODES:
                return self._ready_modern(None, (f"server/discover failed: {err.code} {err.message}",))
            if auto:
                return [self._send_initialize(self.mode.legacy_version)]
            return self._ready_modern(
                None, (f"server/discover failed ({err.code} {err.message}); the server may only speak the legacy era",)
            )
        result = msg.result
        if not isinstance(result, dict):
            if auto:
                return [self._send_initialize(self.mode.legacy_version)]
            return self._fail("invalid", f"server/discover returned {_kind(result)}, not an object")
        supported = result.get("supportedVersions")
        if isinstance(supported, list) and MODERN_VERSION not in supported:
            best = best_common(supported)
            if auto and best is not None and era_of(best) is Era.LEGACY:
                return [self._send_initialize(best)]
            if best is None or era_of(best) is Era.LEGACY:
                return self._fail(
                    "version", f"the server does not speak {MODERN_VERSION} (it offers {_list(supported)})"
                )
        return self._ready_modern(result, ())

    def _ready_modern(self, result: dict[str, Any] | None, warnings: tuple[str, ...]) -> list[ev.Event]:
        self.state = State.READY
        self.era = Era.MODERN
        self.protocol_version = MODERN_VERSION
        if result is not None:
            meta = result["_meta"] if isinstance(result.get("_meta"), dict) else {}
            info = meta.get(META_SERVER_INFO, result.get("serverInfo"))
            self.server_info = info if isinstance(info, dict) else None
            caps = result.get("capabilities")
            self.server_capabilities = caps if isinstance(caps, dict) else None
            instr = result.get("instructions")
            self.instructions = instr if isinstance(instr, str) else None
        return [self._complete(result, warnings)]

    def _initialize_answer(self, msg: rpc.Response | rpc.ErrorResponse) -> list[ev.Event]:
        if isinstance(msg, rpc.ErrorResponse):
            data = msg.error.data if isinstance(msg.error.data, dict) else {}
            supported = data.get("supported")
            if (self.mode.kind == "auto" and msg.error.code == rpc.UNSUPPORTED_PROTOCOL_VERSION
                    and isinstance(supported, list) and MODERN_VERSION in supported):
                # The probe's answer came after we gave up on it, and the server now serves this connection
                # in 2026-07-28 (a slow start, a busy machine): ask it again, and wait for the answer.
                self.state, self.protocol_version, self._probe_asked_again = State.PROBING, MODERN_VERSION, True
                send = self._request("server/discover", {}, internal=True, modern=True)
                self._probe_id = send.request_id
                return [send]
            return self._fail(
                "error", f"the server refused initialize: {msg.error.code} {msg.error.message}".rstrip(), msg.error
            )
        result = msg.result
        if not isinstance(result, dict):
            return self._fail("invalid", f"initialize returned {_kind(result)}, not an object")
        version = result.get("protocolVersion")
        if not isinstance(version, str) or version not in LEGACY_VERSIONS:
            return self._fail(
                "version",
                f"the server chose protocol version {_show(version)}, which Spyglass does "
                f"not speak (we speak {', '.join(SUPPORTED_VERSIONS)})",
            )
        self.state = State.READY
        self.era = Era.LEGACY
        self.protocol_version = version
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else None
        caps = result.get("capabilities")
        self.server_capabilities = caps if isinstance(caps, dict) else None
        instr = result.get("instructions")
        self.instructions = instr if isinstance(instr, str) else None
        warnings = []
        if self.server_info is None:
            warnings.append("initialize result has no serverInfo object")
        if self.server_capabilities is None:
            warnings.append("initialize result has no capabilities object")
        done = self._notification("notifications/initialized", None)
        return [done, self._complete(result, tuple(warnings))]

    def _complete(self, result: dict[str, Any] | None, warnings: tuple[str, ...]) -> ev.HandshakeComplete:
        assert self.era is not None and self.protocol_version is not None
        return ev.HandshakeComplete(
            self.era,
            self.protocol_version,
            self.server_info,
            self.server_capabilities,
            self.instructions,
            result,
            warnings,
        )

    def _fail(self, kind: str, reason: str, error: rpc.RpcError | None = None) -> list[ev.Event]:
        self.state = State.FAILED
        return [ev.HandshakeFailed(kind, reason, error)]

    # ------------------------------------------------------------------ sending
    def send_request(self, method: str, params: dict[str, Any] | None = None, *, progress_token: Any = None) -> ev.Send:
        """A request to the server; the returned Send's frame carries a fresh id, and `request_id` is the
        id its answer (or failure) will be reported under."""
        if self.state is not State.READY:
            raise LocalProtocolError(f"cannot send {method} in state {self.state.value}")
        return self._request(method, params, progress_token=progress_token, modern=self.era is Era.MODERN)

    def _request(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        internal: bool = False,
        modern: bool,
        progress_token: Any = None,
        logical_id: rpc.RequestId | None = None,
        rounds: int = 0,
    ) -> ev.Send:
        wire_id = self.reserve_id()
        logical = wire_id if logical_id is None else logical_id
        params = dict(params) if params else {}
        meta = dict(params.get("_meta") or {})
        if not internal and (self.user_meta or self.tool_meta):  # the protocol's own entries go over them
            meta = {**self.user_meta, **(self.tool_meta if method == "tools/call" else {}), **meta}
        if progress_token is not None:
            meta["progressToken"] = progress_token
            self._by_token[progress_token] = logical
        if modern:
            meta.update(self.request_meta())
        if self.traces is not None:
            self.traces.stamp(meta, logical, method, logical_id is None, params)
        if meta:
            params["_meta"] = meta
        else:
            params.pop("_meta", None)
        sent_params = params or None
        self._pending[wire_id] = _Pending(method, sent_params, logical, progress_token, rounds, internal)
        self._by_logical[logical] = wire_id
        return ev.Send(rpc.serialize(rpc.Request(wire_id, method, sent_params)), method, logical)

    def request_meta(self) -> dict[str, Any]:
        """What every request of the modern era carries in its `_meta`: revision, capabilities, client info
        and the log level asked for."""
        meta: dict[str, Any] = {META_PROTOCOL_VERSION: MODERN_VERSION,
                                META_CLIENT_CAPABILITIES: {k: copy.deepcopy(v) for k, v in self.capabilities.items()
                                                           if k != "tasks"},  # (2026-07-28 has no tasks)
                                META_CLIENT_INFO: self.client_info}
        if self.log_level:
            meta[META_LOG_LEVEL] = self.log_level
        return meta

    def reserve_id(self) -> int:
        """A fresh id, never used by this session (a hand-made request may take it): ours skip it from now."""
        while self._next_id in self._handmade:
            self._next_id += 1
        self._next_id += 1
        return self._next_id - 1

    def in_flight(self, wire_id: rpc.RequestId) -> str | None:
        """The method of our request, or "a hand-made request", still waiting for an answer under this id."""
        if wire_id in self._handmade:
            return "a hand-made request"
        pending = self._pending.get(wire_id)
        return pending.method if pending is not None else None

    def expect_handmade(self, wire_id: rpc.RequestId) -> None:
        """A hand-made request went out with this id: its answer is reported as `HandmadeAnswer`, never settles
        one of ours, and our ids skip it while it may come."""
        self._handmade[wire_id] = None
        while len(self._handmade) > _LATE_MEMORY:
            self._handmade.popitem(last=False)

    def release_handmade(self, wire_id: rpc.RequestId) -> None:
        """No answer can come for this hand-made id any more (the HTTP POST that carried it is over)."""
        self._handmade.pop(wire_id, None)

    def _notification(self, method: str, params: dict[str, Any] | None) -> ev.Send:
        return ev.Send(rpc.serialize(rpc.Notification(method, params)), method)

    def send_notification(self, method: str, params: dict[str, Any] | None = None) -> ev.Send:
        return self._notification(method, params)

    def respond(self, request_id: rpc.RequestId, result: Any) -> ev.Send:
        if self.traces is not None:
            result = self.traces.answer(request_id, result)
        return ev.Send(rpc.serialize(rpc.Response(request_id, result)))

    def respond_error(self, request_id: rpc.RequestId | None, code: int, message: str, data: Any = None) -> ev.Send:
        if self.traces is not None:
            self.traces.forget_answer(request_id)
        return ev.Send(rpc.serialize(rpc.ErrorResponse(request_id, rpc.RpcError(code, message, data))))

    def cancel(self, request_id: rpc.RequestId, reason: str = "cancelled by the user") -> ev.Send | None:
        """Forget a request and tell the server; None if it is not in flight."""
        if self._awaiting_input.pop(request_id, None) is not None:
            self._by_logical.pop(request_id, None)
            return None  # nothing on the wire: the server keeps no state between rounds
        wire_id = self._by_logical.get(request_id)
        if wire_id is None or wire_id not in self._pending:
            return None
        self._abandon(wire_id)
        return self._notification("notifications/cancelled", {"requestId": wire_id, "reason": reason})

    def forget(self, request_id: rpc.RequestId) -> None:
        """Stop waiting for a request without telling the server."""
        wire_id = self._by_logical.get(request_id)
        if wire_id is not None and wire_id in self._pending:
            self._abandon(wire_id)

    def wire_id_of(self, request_id: rpc.RequestId) -> rpc.RequestId | None:
        """The id on the wire of a request in flight (MRTR retries get new ones)."""
        wire_id = self._by_logical.get(request_id)
        return wire_id if wire_id in self._pending else None

    def logical_of(self, wire_id: rpc.RequestId) -> rpc.RequestId | None:
        pending = self._pending.get(wire_id)
        return pending.logical_id if pending else None

    def fail_locally(self, wire_id: rpc.RequestId) -> tuple[rpc.RequestId, str, bool] | None:
        """The transport lost a request (HTTP error, refused connection): forget
        it. Returns (request id, method, is the handshake's own request)."""
        pending = self._pending.get(wire_id)
        if pending is None:
            return None
        if not (pending.internal and wire_id == self._probe_id):  # the probe: probe_timed_out() follows
            del self._pending[wire_id]
            self._drop_logical(pending)
        return pending.logical_id, pending.method, pending.internal

    def reissue(self, request_id: rpc.RequestId) -> ev.Send | None:
        """Send a request in flight again under a new id (its stream broke
        before the answer came, modern era). None if it is not in flight."""
        wire_id = self._by_logical.get(request_id)
        if wire_id is None or wire_id not in self._pending:
            return None
        pending = self._pending.pop(wire_id)
        self._late[wire_id] = pending.method
        return self._request(
            pending.method,
            pending.params,
            internal=pending.internal,
            modern=self.era is Era.MODERN or pending.method == "server/discover",
            progress_token=pending.progress_token,
            logical_id=pending.logical_id,
            rounds=pending.rounds,
        )

    def handshake_failed(self, reason: str) -> list[ev.Event]:
        """The handshake cannot complete for a reason outside the protocol."""
        return self._fail("transport", reason)

    def pending_methods(self) -> dict[rpc.RequestId, str]:
        return {p.logical_id: p.method for p in self._pending.values()}

    def _abandon(self, wire_id: rpc.RequestId) -> None:
        pending = self._pending.pop(wire_id, None)
        if pending is None:
            return
        self._drop_logical(pending)
        self._late[wire_id] = pending.method
        while len(self._late) > _LATE_MEMORY:
            self._late.popitem(last=False)

    def _drop_logical(self, pending: _Pending) -> None:
        self._by_logical.pop(pending.logical_id, None)
        if self.traces is not None:
            self.traces.drop(pending.logical_id)
        if pending.progress_token is not None:
            self._by_token.pop(pending.progress_token, None)
        self._awaiting_input.pop(pending.logical_id, None)

    # ------------------------------------------------------------------ receiving
    def receive_frame(self, raw: bytes | Oversize, *, stream_of: rpc.RequestId | None = None) -> list[ev.Event]:
        """One frame as it came off the wire (a line, an SSE data field, a body). `stream_of`: the wire id
        of the request whose answer stream carried it (HTTP), when it came on one."""
        return self.receive_parsed(rpc.parse(raw), raw, stream_of=stream_of)

    def receive_parsed(
        self, msg: rpc.Message | rpc.Malformed, raw: bytes | Oversize, *, stream_of: rpc.RequestId | None = None
    ) -> list[ev.Event]:
        """Like `receive_frame`, for a caller that already ran `jsonrpc.parse(raw)`."""
        if isinstance(msg, rpc.Malformed):
            return self._malformed_with_hint(msg)
        try:
            return self._receive(msg, raw if isinstance(raw, bytes) else raw.head, stream_of)
        except Exception as exc:  # pragma: no cover - the core must never raise on peer input
            return [
                ev.MalformedFrame(
                    raw if isinstance(raw, bytes) else raw.head,
                    f"internal error handling this message: {type(exc).__name__}: {exc}",
                )
            ]

    def _malformed_with_hint(self, msg: rpc.Malformed) -> list[ev.Event]:
        """A malformed frame; if it was plainly meant as the answer to one of our
        requests (its id matches), fail that request now instead of timing out."""
        out: list[ev.Event] = [ev.MalformedFrame(msg.raw, msg.reason, msg.obj)]
        obj = msg.obj
        rid: Any = None
        if isinstance(obj, dict) and ("result" in obj or "error" in obj) and "method" not in obj:
            rid = obj.get("id")
        elif msg.refused:  # too deep or too big to parse: the id may still lead the frame
            rid = rpc.leading_response_id(msg.raw)
        if isinstance(rid, (int, str)) and not isinstance(rid, bool) and rid in self._handmade:
            del self._handmade[rid]
            out.append(ev.HandmadeAnswer(rid))
        elif rid is not None:
            if isinstance(rid, (int, str)) and not isinstance(rid, bool) and rid in self._pending:
                pending = self._pending.pop(rid)
                self._drop_logical(pending)
                out.extend(
                    self._internal_failure(pending, f"the server's answer to request {rid} is malformed: {msg.reason}")
                )
        return out

    def _internal_failure(self, pending: _Pending, reason: str) -> list[ev.Event]:
        if pending.internal:
            return self._fail("invalid", f"{pending.method}: {reason}")
        return [ev.RequestFailed(pending.logical_id, pending.method, reason)]

    def _receive(self, msg: rpc.Message, raw: bytes, stream_of: rpc.RequestId | None) -> list[ev.Event]:
        if isinstance(msg, (rpc.Response, rpc.ErrorResponse)):
            return self._receive_answer(msg, raw)
        if isinstance(msg, rpc.Request):
            return self._receive_request(msg, stream_of)
        return self._receive_notification(msg)

    def _receive_answer(self, msg: rpc.Response | rpc.ErrorResponse, raw: bytes) -> list[ev.Event]:
        rid = msg.id
        if rid is None:
            # An error with a null id: the server could not read something we sent.
            assert isinstance(msg, rpc.ErrorResponse)
            return [ev.MalformedFrame(raw, f"error response with a null id: {msg.error.code} {msg.error.message}")]
        if rid in self._handmade:
            del self._handmade[rid]
            return [ev.HandmadeAnswer(rid)]
        pending = self._pending.pop(rid, None)
        if pending is None:
            return self._stray_answer(rid, raw)
        result = msg.result if isinstance(msg, rpc.Response) else None
        if isinstance(result, dict) and result.get("resultType") == "input_required" and not pending.internal:
            return self._input_required(pending, result)
        if self.traces is not None:
            self.traces.answered(pending.logical_id, result)
        self._drop_logical(pending)
        if pending.internal:
            return self._handshake_answer(pending, msg)
        if isinstance(msg, rpc.ErrorResponse):
            return [ev.ErrorReceived(pending.logical_id, pending.method, msg.error)]
        problem = check_result(pending.method, result)
        if problem:
            return [
                ev.RequestFailed(
                    pending.logical_id,
                    pending.method,
                    f"the server's {pending.method} result is invalid: {problem}",
                    result,
                )
            ]
        return [ev.ResponseReceived(pending.logical_id, pending.method, result)]

    def _stray_answer(self, rid: rpc.RequestId, raw: bytes) -> list[ev.Event]:
        if rid in self._late:
            return [ev.LateResponse(rid, self._late[rid])]
        if isinstance(rid, str):
            if rid.isascii() and rid.isdigit() and int(rid) in self._pending:
                reason = f"response id {rid!r} is a string, but we sent the number {rid}"
                pending = self._pending.pop(int(rid))
                self._drop_logical(pending)
                return [
                    ev.MalformedFrame(raw, reason),
                    *self._internal_failure(pending, f"the server's answer to request {rid} is malformed: {reason}"),
                ]
            return [ev.MalformedFrame(raw, f"response to id {rid!r}, an id of a type we never sent (ours are numbers)")]
        if isinstance(rid, int) and 1 <= rid < self._next_id:
            return [ev.MalformedFrame(raw, f"duplicate response: request {rid} was already answered")]
        return [ev.MalformedFrame(raw, f"response to unknown id {rid} (we never sent it)")]

    # MRTR ---------------------------------------------------------------
    def _input_required(self, pending: _Pending, result: dict[str, Any]) -> list[ev.Event]:
        requests = result.get("inputRequests")
        state = result.get("requestState")
        logical = pending.logical_id
        if requests is not None and not isinstance(requests, dict):
            self._drop_logical(pending)
            return [ev.RequestFailed(logical, pending.method, '"inputRequests" is not an object', result)]
        if state is not None and not isinstance(state, str):
            self._drop_logical(pending)
            return [ev.RequestFailed(logical, pending.method, '"requestState" is not a string', result)]
        if not requests and state is None:
            self._drop_logical(pending)
            return [
                ev.RequestFailed(
                    logical, pending.method, "input_required result with neither inputRequests nor requestState", result
                )
            ]
        rounds = pending.rounds + 1
        if rounds > self.max_input_rounds:
            self._drop_logical(pending)
            return [
                ev.RequestFailed(
                    logical,
                    pending.method,
                    f"the server asked for input {rounds} times; giving up after {self.max_input_rounds}",
                    result,
                )
            ]
        self._awaiting_input[logical] = (pending, rounds, state)
        if not requests:  # state only: re-send at once
            return [self.provide_input(logical, {})]
        return [ev.InputRequired(logical, pending.method, requests, rounds)]

    def provide_input(self, logical: rpc.RequestId, responses: dict[str, Any]) -> ev.Send:
        """Answer an `InputRequired`: the original request again, with a new id,
        `inputResponses` and the server's `requestState` exactly as received."""
        entry = self._awaiting_input.pop(logical, None)
        if entry is None:
            raise LocalProtocolError(f"request {logical!r} is not waiting for input")
        pending, rounds, state = entry
        params = {k: v for k, v in (pending.params or {}).items() if k not in ("inputResponses", "requestState")}
        meta = dict(params.get("_meta") or {})
        meta.pop("progressToken", None)
        params["_meta"] = meta
        if responses:
            params["inputResponses"] = responses
        if state is not None:
            params["requestState"] = state
        return self._request(
            pending.method,
            params,
            modern=self.era is Era.MODERN,
            progress_token=pending.progress_token,
            logical_id=logical,
            rounds=rounds,
        )

    # server → client ------------------------------------------------------
    _HANDLED_REQUESTS = {
        "roots/list": "roots",
        "sampling/createMessage": "sampling",
        "elicitation/create": "elicitation",
        "tasks/get": "tasks",
        "tasks/result": "tasks",
        "tasks/list": "tasks",
        "tasks/cancel": "tasks",
    }

    def _receive_request(self, msg: rpc.Request, stream_of: rpc.RequestId | None) -> list[ev.Event]:
        if msg.method == "ping":
            return [self.respond(msg.id, {})]
        capability = self._HANDLED_REQUESTS.get(msg.method)
        if capability is None:
            return [self.respond_error(msg.id, rpc.METHOD_NOT_FOUND, f"Method not found: {msg.method}")]
        if capability not in self.capabilities:
            return [
                self.respond_error(
                    msg.id,
                    rpc.METHOD_NOT_FOUND,
                    f"{msg.method}: the client did not declare the {capability} capability",
                )
            ]
        related = self._pending.get(stream_of) if stream_of is not None else None
        if self.traces is not None:
            self.traces.server_request(msg.id, self._caused_by(msg.params, related))
        return [
            ev.ServerRequest(
                msg.id,
                msg.method,
                msg.params,
                related.logical_id if related is not None else None,
                related.method if related is not None else None,
                related_task(msg.params),
            )
        ]

    def _caused_by(self, params: Any, related: _Pending | None) -> rpc.RequestId | None:
        """Which of our requests a server request belongs to, for the trace of our answer: the one whose
        stream carried it, the one whose progress token it names, or the only one in flight."""
        if related is not None:
            return related.logical_id
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(token, (str, int)) and token in self._by_token:
            return self._by_token[token]
        live = {p.logical_id for p in self._pending.values() if not p.internal and p.method != "subscriptions/listen"}
        return live.pop() if len(live) == 1 else None

    def _receive_notification(self, msg: rpc.Notification) -> list[ev.Event]:
        params = msg.params
        if msg.method in SESSION_NOTIFICATIONS and isinstance(params, dict):
            token = params.get("progressToken")
            try:
                logical = self._by_token.get(token)
            except TypeError:  # an unhashable token
                logical = None
            message = params.get("message")
            return [
                ev.ProgressReceived(
                    logical,
                    token,
                    params.get("progress"),
                    params.get("total"),
                    message if isinstance(message, str) else None,
                )
            ]
        return [ev.NotificationReceived(msg.method, params)]


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else _kind(value)


def _list(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value[:10]) or "nothing"
    return "nothing"
