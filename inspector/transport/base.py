"""The transport interface the client drives (asyncio, no Qt)."""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..protocol.framing import DEFAULT_MAX_MESSAGE

if TYPE_CHECKING:  # asyncio stays unloaded until the session needs it: --cli starts the server first
    import asyncio

FrameCallback = Callable[..., None]
"""`on_frame(frame, mono, meta=None)`: a frame exactly as received (or an oversize
marker), its monotonic time, and transport details (e.g. SSE event id, stream)."""
FramesCallback = Callable[[list[Any], float], None]
"""`on_frames(frames, mono)`: several frames read at once, in order (a consumer that can take a read's worth in one
call sets it; a transport that reads many frames at a time uses it when set, `on_frame` otherwise)."""
LogCallback = Callable[[bytes, float], None]
"""One stderr line (without newline) or other transport-level log text."""


@dataclass(frozen=True)
class Closed:
    """Why the transport ended: `exit_code` for processes, `reason` always."""

    reason: str
    exit_code: int | None = None
    expected: bool = False  # we asked for it


CloseCallback = Callable[[Closed], None]


@dataclass(frozen=True)
class RawSent:
    """A hand-made frame written (`send_raw`): the bytes that went out, the HTTP POST that carries it, and
    (HTTP) a task that ends with the POST: (status, why no answer can come, or None)."""

    data: bytes
    stream: str | None = None
    ended: asyncio.Future[tuple[int | None, str | None]] | None = None


class Transport(abc.ABC):
    """Frames in, frames out. Callbacks are set by the client before `open()`."""

    on_frame: FrameCallback
    on_frames: FramesCallback | None = None
    on_log: LogCallback
    on_close: CloseCallback
    on_sent: Callable[..., None] | None = None  # (data, monotonic time[, meta: which stream carried it])
    # A request that will get no JSON-RPC answer because of the transport
    # (HTTP status, wrong content type, connection refused): (wire id, error).
    on_request_error: Callable[[Any, Exception], None] | None = None
    # The answer stream of a request broke and cannot be resumed (wire id).
    on_stream_lost: Callable[[Any], None] | None = None
    # One HTTP exchange for the traffic record (method, url, status, headers…).
    on_exchange: Callable[[dict[str, Any], float], None] | None = None

    #: True when closing a request's stream is how it is cancelled (modern HTTP).
    cancels_by_closing = False
    #: The largest message this transport takes (a hand-made frame over it is refused).
    max_message: int = DEFAULT_MAX_MESSAGE

    @property
    def mirrors_tool_headers(self) -> bool:
        """Tools' `x-mcp-header` parameters are mirrored as HTTP headers (modern HTTP)."""
        return False

    @property
    def authorizing(self) -> bool:
        """An authorization flow is under way (the user may be signing in): not the server's delay."""
        return False

    @property
    def authorized_at(self) -> float | None:
        """When the last authorization flow ended (monotonic time), or None: the server's clock for an
        answer starts again then."""
        return None

    @abc.abstractmethod
    async def open(self) -> None:
        """Start the process or connection; raise ConnectError on failure."""

    @abc.abstractmethod
    async def send(self, data: bytes) -> None:
        """Write one message (no trailing newline); raise TransportClosed if gone."""

    @abc.abstractmethod
    async def close(self) -> None:
        """End it, releasing every process and socket. Idempotent."""

    @abc.abstractmethod
    def describe(self) -> str:
        """One line for messages, e.g. the command line or URL."""

    @property
    def pid(self) -> int | None:
        return None

    def negotiated(self, era: Any, version: str) -> None:  # noqa: B027 - by default nothing to do
        """The handshake settled on `version` (HTTP transports add headers from it)."""

    async def settle(self) -> None:  # noqa: B027 - by default nothing to wait for
        """After the handshake: wait (briefly) until side channels such as the
        legacy HTTP GET stream are open, so no server message is missed."""

    def set_tool_headers(self, tools: dict[str, Any]) -> None:  # noqa: B027 - by default no headers
        """Tool name → its `x-mcp-header` parameters (modern HTTP only)."""

    def headers_for(self, data: bytes) -> dict[str, str] | None:
        """The headers a hand-made frame would be sent with, secrets masked (a masked value stands for the
        session's own when sent); None when the transport has no headers (stdio)."""
        return None

    async def send_raw(self, data: bytes, *, headers: Mapping[str, str] | None = None,
                       meta: dict[str, Any] | None = None) -> RawSent:
        """Write a hand-made frame as it is (stdio: on one line), with `headers` (HTTP; None: the session's);
        `meta` joins what `on_sent` is told of it. Raises TransportClosed if gone."""
        raise NotImplementedError

    def abort(self, wire_id: Any) -> bool:
        """Cancel one request by closing its stream; False if not applicable."""
        return False
