"""The sans-IO MCP protocol core: standard library only, no IO, never raises on peer input.

The names below are loaded on first use, so that importing one submodule (the
stdio framer, say) does not import them all: the command line starts faster.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "events": ("events", None),
    "ErrorReceived": ("events", "ErrorReceived"),
    "Event": ("events", "Event"),
    "HandmadeAnswer": ("events", "HandmadeAnswer"),
    "HandshakeComplete": ("events", "HandshakeComplete"),
    "HandshakeFailed": ("events", "HandshakeFailed"),
    "InputRequired": ("events", "InputRequired"),
    "LateResponse": ("events", "LateResponse"),
    "MalformedFrame": ("events", "MalformedFrame"),
    "NotificationReceived": ("events", "NotificationReceived"),
    "ProgressReceived": ("events", "ProgressReceived"),
    "RequestFailed": ("events", "RequestFailed"),
    "ResponseReceived": ("events", "ResponseReceived"),
    "Send": ("events", "Send"),
    "ServerRequest": ("events", "ServerRequest"),
    "DEFAULT_MAX_MESSAGE": ("framing", "DEFAULT_MAX_MESSAGE"),
    "LineFramer": ("framing", "LineFramer"),
    "Oversize": ("framing", "Oversize"),
    "ErrorResponse": ("jsonrpc", "ErrorResponse"),
    "Malformed": ("jsonrpc", "Malformed"),
    "Message": ("jsonrpc", "Message"),
    "Notification": ("jsonrpc", "Notification"),
    "Request": ("jsonrpc", "Request"),
    "RequestId": ("jsonrpc", "RequestId"),
    "Response": ("jsonrpc", "Response"),
    "RpcError": ("jsonrpc", "RpcError"),
    "parse": ("jsonrpc", "parse"),
    "serialize": ("jsonrpc", "serialize"),
    "Paginator": ("pagination", "Paginator"),
    "ClientSession": ("session", "ClientSession"),
    "LocalProtocolError": ("session", "LocalProtocolError"),
    "State": ("session", "State"),
    "Mode": ("mode", "Mode"),
    "LATEST_LEGACY": ("versions", "LATEST_LEGACY"),
    "LEGACY_VERSIONS": ("versions", "LEGACY_VERSIONS"),
    "MODERN_VERSION": ("versions", "MODERN_VERSION"),
    "SUPPORTED_VERSIONS": ("versions", "SUPPORTED_VERSIONS"),
    "Era": ("versions", "Era"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    mod = importlib.import_module(f"{__name__}.{module}")
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
