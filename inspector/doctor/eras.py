"""The two handshakes the doctor tries, one message each, and what their answers say: `server/discover`
(2026-07-28) and `initialize` (2025-11-25), read the way the client's auto probe reads them
(inspector.protocol.session): a discover result, or a modern error code, means 2026-07-28; a refusal means
the server speaks the legacy era only. Pure."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..protocol import jsonrpc as rpc
from ..protocol.session import DEFAULT_CLIENT_INFO
from ..protocol.versions import (
    LATEST_LEGACY,
    LEGACY_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    MODERN_VERSION,
)

DISCOVER_ID = "spyglass-doctor-discover"
INITIALIZE_ID = "spyglass-doctor-initialize"


def discover_message() -> dict[str, Any]:
    meta = {META_PROTOCOL_VERSION: MODERN_VERSION, META_CLIENT_CAPABILITIES: {}, META_CLIENT_INFO: DEFAULT_CLIENT_INFO}
    return {"jsonrpc": "2.0", "id": DISCOVER_ID, "method": "server/discover", "params": {"_meta": meta}}


def initialize_message(version: str = LATEST_LEGACY) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": DEFAULT_CLIENT_INFO}
    return {"jsonrpc": "2.0", "id": INITIALIZE_ID, "method": "initialize", "params": params}


INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()


def encoded(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Answer:
    """What one handshake's answer says: `speaks` the revision it settles on (None: not this era)."""

    speaks: str | None
    text: str


def _server(result: dict[str, Any]) -> str:
    info = result.get("serverInfo")
    meta = result.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get("io.modelcontextprotocol/serverInfo"), dict):
        info = meta["io.modelcontextprotocol/serverInfo"]
    if isinstance(info, dict) and isinstance(info.get("name"), str):
        version = info.get("version")
        return f" from {info['name']}" + (f" {version}" if isinstance(version, str) else "")
    return ""


def read_discover(msg: rpc.Message | rpc.Malformed | None) -> Answer:
    if msg is None:
        return Answer(None, "2026-07-28 (server/discover): no answer")
    if isinstance(msg, rpc.ErrorResponse):
        err = msg.error
        if err.code == rpc.UNSUPPORTED_PROTOCOL_VERSION:
            data = err.data if isinstance(err.data, dict) else {}
            offered = data.get("supported")
            shown = ", ".join(str(v) for v in offered) if isinstance(offered, list) else "nothing named"
            speaks = MODERN_VERSION if isinstance(offered, list) and MODERN_VERSION in offered else None
            return Answer(speaks, f"2026-07-28 (server/discover): unsupported protocol version; it offers {shown}")
        if err.code in rpc.MODERN_ERROR_CODES:
            return Answer(MODERN_VERSION, f"2026-07-28 (server/discover): error {err.code} {err.message} "
                                          "(a 2026-07-28 error code: it speaks this era)")
        return Answer(None, f"2026-07-28 (server/discover): refused, error {err.code} {err.message}")
    if isinstance(msg, rpc.Response):
        result = msg.result
        if not isinstance(result, dict):
            return Answer(None, "2026-07-28 (server/discover): the result is not an object")
        supported = result.get("supportedVersions")
        if isinstance(supported, list) and MODERN_VERSION not in supported:
            return Answer(None, "2026-07-28 (server/discover): answered, but it supports only "
                                + ", ".join(str(v) for v in supported))
        extra = f" (supportedVersions: {', '.join(str(v) for v in supported)})" if isinstance(supported, list) else ""
        return Answer(MODERN_VERSION, f"2026-07-28 (server/discover): answered{_server(result)}{extra}")
    return Answer(None, f"2026-07-28 (server/discover): not an answer: {_what(msg)}")


def read_initialize(msg: rpc.Message | rpc.Malformed | None) -> Answer:
    if msg is None:
        return Answer(None, f"{LATEST_LEGACY} (initialize): no answer")
    if isinstance(msg, rpc.ErrorResponse):
        return Answer(None, f"{LATEST_LEGACY} (initialize): refused, error {msg.error.code} {msg.error.message}")
    if isinstance(msg, rpc.Response):
        result = msg.result
        if not isinstance(result, dict):
            return Answer(None, f"{LATEST_LEGACY} (initialize): the result is not an object")
        version = result.get("protocolVersion")
        if not isinstance(version, str) or version not in LEGACY_VERSIONS:
            return Answer(None, f"{LATEST_LEGACY} (initialize): it chose protocol version {version!r}, which "
                                "Spyglass does not speak")
        chose = "" if version == LATEST_LEGACY else f"; it chose {version}"
        return Answer(version, f"{LATEST_LEGACY} (initialize): answered{_server(result)}{chose}")
    return Answer(None, f"{LATEST_LEGACY} (initialize): not an answer: {_what(msg)}")


def _what(msg: rpc.Message | rpc.Malformed) -> str:
    if isinstance(msg, rpc.Malformed):
        return msg.reason
    return type(msg).__name__


def answer_to(msg: rpc.Message | rpc.Malformed, request_id: str) -> bool:
    return isinstance(msg, (rpc.Response, rpc.ErrorResponse)) and msg.id == request_id
