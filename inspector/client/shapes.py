"""What the client hands its callers and handlers: the context of a server request, the handshake's outcome,
and the shapes of the callbacks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..protocol import jsonrpc as rpc
from ..protocol.versions import Era

ProgressCallback = Callable[[Any, Any, str | None], None]


@dataclass(frozen=True)
class RequestContext:
    """What a server request (or an MRTR input request) belongs to, as far as the wire tells.

    `known_by` says how: "mrtr" (an input request is part of our request's answer), "stream" (it came
    on our request's answer stream), "task" (it names the task our request follows), "only request"
    (one request with an owner was in flight: the wire says nothing, but nothing else could have caused
    it), or "unknown"."""

    method: str
    related_id: rpc.RequestId | None = None
    related_method: str | None = None
    owner: Any = None  # what the caller attached to that request: `request(..., owner=...)`
    round: int | None = None  # MRTR: which round of input (1, 2, …)
    input_key: str | None = None  # MRTR: the key of this input request
    task_id: str | None = None
    known_by: str = "unknown"


Handler = Callable[[dict[str, Any] | None, RequestContext], Awaitable[Any]]
"""Answers one server request (legacy) or one MRTR input request (modern)."""


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
