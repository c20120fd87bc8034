"""Events the client session hands back; all frozen, all plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .jsonrpc import RequestId, RpcError
from .versions import Era


@dataclass(frozen=True)
class Event:
    pass


@dataclass(frozen=True)
class Send(Event):
    """Bytes (one message, no newline) the transport must write. For a request, `request_id` is its
    logical id: the one its answer is reported under (MRTR rounds and re-issues keep it)."""

    data: bytes
    method: str | None = None
    request_id: RequestId | None = None


@dataclass(frozen=True)
class HandshakeComplete(Event):
    era: Era
    protocol_version: str
    server_info: dict[str, Any] | None
    capabilities: dict[str, Any] | None
    instructions: str | None
    result: dict[str, Any] | None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class HandshakeFailed(Event):
    """`kind` is "version" (no revision in common), "error" (the server
    answered the handshake with an error) or "invalid" (unusable answer)."""

    kind: str
    reason: str
    error: RpcError | None = None


@dataclass(frozen=True)
class ResponseReceived(Event):
    request_id: RequestId
    method: str
    result: Any


@dataclass(frozen=True)
class ErrorReceived(Event):
    request_id: RequestId
    method: str
    error: RpcError


@dataclass(frozen=True)
class RequestFailed(Event):
    """The request cannot complete: its answer is unusable, or MRTR ran over."""

    request_id: RequestId
    method: str
    reason: str
    result: Any = None


@dataclass(frozen=True)
class InputRequired(Event):
    """MRTR: the server needs answers (`inputRequests`, keyed) before it can
    complete `request_id`; reply with `ClientSession.provide_input`."""

    request_id: RequestId
    method: str
    input_requests: dict[str, Any]
    round: int


@dataclass(frozen=True)
class ServerRequest(Event):
    """A legacy-era server-to-client request the user or a handler must answer.

    `related_id` is the logical id of our request it belongs to, when the wire says so (it came on that
    request's stream); `task_id` the task it belongs to (`io.modelcontextprotocol/related-task`)."""

    id: RequestId
    method: str
    params: dict[str, Any] | None
    related_id: RequestId | None = None
    related_method: str | None = None
    task_id: str | None = None


@dataclass(frozen=True)
class NotificationReceived(Event):
    method: str
    params: dict[str, Any] | None


@dataclass(frozen=True)
class ProgressReceived(Event):
    request_id: RequestId | None
    token: Any
    progress: Any
    total: Any = None
    message: str | None = None


@dataclass(frozen=True)
class MalformedFrame(Event):
    raw: bytes
    reason: str
    obj: Any = field(default=None, compare=False)


@dataclass(frozen=True)
class LateResponse(Event):
    """An answer to a request we had cancelled or abandoned; harmless."""

    id: RequestId
    method: str


@dataclass(frozen=True)
class HandmadeAnswer(Event):
    """An answer to a hand-made request (the raw composer's): it is the composer's, not the session's."""

    request_id: RequestId
