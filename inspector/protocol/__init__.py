"""The sans-IO MCP protocol core: standard library only, no IO, never raises on peer input."""

from . import events
from .events import (
    ErrorReceived,
    Event,
    HandshakeComplete,
    HandshakeFailed,
    InputRequired,
    LateResponse,
    MalformedFrame,
    NotificationReceived,
    ProgressReceived,
    RequestFailed,
    ResponseReceived,
    Send,
    ServerRequest,
)
from .framing import DEFAULT_MAX_MESSAGE, LineFramer, Oversize
from .jsonrpc import (
    ErrorResponse,
    Malformed,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    RpcError,
    parse,
    serialize,
)
from .pagination import Paginator
from .session import ClientSession, LocalProtocolError, Mode, State
from .versions import LATEST_LEGACY, LEGACY_VERSIONS, MODERN_VERSION, SUPPORTED_VERSIONS, Era

__all__ = [name for name in dir() if not name.startswith("_")]
