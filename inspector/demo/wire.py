"""Protocol constants and small wire helpers shared by the demo server's modules.

Holds the version tables, error codes, log-level ordering, the one function
that down-levels results for older protocol revisions, the sealed MRTR
``requestState`` tokens and the opaque pagination cursors.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import hmac
import json
import secrets
from typing import Any, TypeVar

# The JSON-RPC error codes come from the protocol core; the demo modules import them from here.
from inspector.protocol.jsonrpc import INTERNAL_ERROR as INTERNAL_ERROR
from inspector.protocol.jsonrpc import INVALID_PARAMS as INVALID_PARAMS
from inspector.protocol.jsonrpc import INVALID_REQUEST as INVALID_REQUEST
from inspector.protocol.jsonrpc import METHOD_NOT_FOUND as METHOD_NOT_FOUND
from inspector.protocol.jsonrpc import PARSE_ERROR as PARSE_ERROR
from inspector.protocol.jsonrpc import UNSUPPORTED_PROTOCOL_VERSION

JsonObject = dict[str, Any]  # a JSON object as it travels: its values are whatever the peer sent

MODERN_VERSION = "2026-07-28"
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_LEGACY = "2025-11-25"
SUPPORTED_VERSIONS = [MODERN_VERSION, *reversed(LEGACY_VERSIONS)]

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

UNSUPPORTED_VERSION = UNSUPPORTED_PROTOCOL_VERSION
RESOURCE_NOT_FOUND = -32002

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class RpcError(Exception):
    """A JSON-RPC error to send back instead of a result."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> JsonObject:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def level_enabled(level: str, threshold: str | None) -> bool:
    """True if a message at ``level`` passes a ``threshold`` (None: send nothing)."""
    if threshold not in LOG_LEVELS or level not in LOG_LEVELS:
        return False
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)


# --------------------------------------------------------------------------
# Down-levelling for legacy clients
# --------------------------------------------------------------------------

def downlevel(result: JsonObject, version: str) -> JsonObject:
    """Strip or replace what ``version`` lacks (titles, icons, audio, links...)."""
    if version >= "2025-11-25":
        return result
    r = copy.deepcopy(result)
    pre_0326, pre_0618 = version < "2025-03-26", version < "2025-06-18"
    gone = {"icons", "execution"}
    if pre_0618:
        gone |= {"title", "outputSchema", "_meta"}
    if pre_0326:
        gone |= {"annotations"}  # only tool annotations are listed below
    for item in r.get("tools", []):
        for key in gone & item.keys():
            del item[key]
    for key in ("resources", "resourceTemplates", "prompts"):
        for item in r.get(key, []):
            item.pop("icons", None)
            if pre_0618:
                item.pop("title", None)
                for arg in item.get("arguments", []):
                    arg.pop("title", None)
    if pre_0618:
        r.pop("structuredContent", None)
        r.get("serverInfo", {}).pop("title", None)
    if pre_0326:
        r.get("capabilities", {}).pop("completions", None)
    if "content" in r:
        r["content"] = [_downlevel_block(b, version) for b in r["content"]]
    for message in r.get("messages", []):
        message["content"] = _downlevel_block(message["content"], version)
    return r


def _downlevel_block(block: JsonObject, version: str) -> JsonObject:
    kind = block.get("type")
    if kind == "audio" and version < "2025-03-26":
        size = len(base64.b64decode(block.get("data", "")))
        return {"type": "text", "text": f"[Audio clip ({block.get('mimeType')}, {size} bytes) "
                                        f"omitted: audio content needs protocol 2025-03-26 or later.]"}
    if kind == "resource_link" and version < "2025-06-18":
        label = block.get("title") or block.get("name")
        return {"type": "text", "text": f"Resource link: {label} <{block['uri']}>"
                                        f" ({block.get('mimeType', 'unknown type')})"}
    if kind == "resource_link":
        block.pop("icons", None)
    return block


# --------------------------------------------------------------------------
# Sealed MRTR request state
# --------------------------------------------------------------------------

_STATE_KEY = secrets.token_bytes(32)
_MAC_SIZE = hashlib.sha256().digest_size


def seal_state(method: str, target: str, state: JsonObject) -> str:
    """Encode ``state`` as an opaque, HMAC-signed base64url token."""
    body = json.dumps({"m": method, "t": target, "s": state},
                      separators=(",", ":"), sort_keys=True).encode()
    mac = hmac.new(_STATE_KEY, body, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac + body).decode("ascii")


def open_state(token: Any, method: str, target: str) -> JsonObject:
    """Verify a token from :func:`seal_state`; raise -32602 if it was altered."""
    bad = RpcError(INVALID_PARAMS, "Invalid requestState: it was modified or was not issued by this server")
    if not isinstance(token, str):
        raise bad
    try:
        raw = base64.urlsafe_b64decode(token.encode("ascii"))
    except (binascii.Error, ValueError):
        raise bad from None
    mac, body = raw[:_MAC_SIZE], raw[_MAC_SIZE:]
    if not hmac.compare_digest(mac, hmac.new(_STATE_KEY, body, hashlib.sha256).digest()):
        raise bad
    payload = json.loads(body)
    if payload.get("m") != method or payload.get("t") != target:
        raise RpcError(INVALID_PARAMS, f"requestState belongs to a different request ({payload.get('t')})")
    state: JsonObject = payload["s"]  # sealed by seal_state, so an object
    return state


# --------------------------------------------------------------------------
# Pagination
# --------------------------------------------------------------------------

T = TypeVar("T")


def paginate(items: list[T], cursor: Any, page_size: int | None) -> tuple[list[T], str | None]:
    """Slice ``items`` at an opaque ``cursor``; return the page and the next cursor."""
    start = 0
    if cursor is not None:
        try:
            start = int(json.loads(base64.urlsafe_b64decode(str(cursor).encode("ascii")))["offset"])
        except (ValueError, KeyError, TypeError, binascii.Error):
            raise RpcError(INVALID_PARAMS, "Invalid cursor") from None
        if not 0 <= start <= len(items):
            raise RpcError(INVALID_PARAMS, "Invalid cursor")
    if not page_size:
        return items[start:], None
    end = start + page_size
    if end >= len(items):
        return items[start:end], None
    token = base64.urlsafe_b64encode(json.dumps({"offset": end}).encode()).decode("ascii")
    return items[start:end], token
