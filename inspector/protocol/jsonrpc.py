"""JSON-RPC 2.0 messages: a total parser and a serialiser.

`parse(raw)` never raises: every input becomes a `Request`, `Notification`,
`Response`, `ErrorResponse` or a `Malformed` record that keeps the raw bytes and
says what is wrong with them.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .framing import Oversize

RequestId = int | str

# Standard JSON-RPC and MCP error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
URL_ELICITATION_REQUIRED = -32042
MODERN_ERROR_CODES = frozenset({HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION})
RESOURCE_NOT_FOUND = -32002
REQUEST_TIMEOUT = -32001
REQUEST_CANCELLED = -32800
USER_REJECTED = -1  # what the SDKs answer when the user declines a sampling request (or a roots/list)

CODE_NAMES = {
    PARSE_ERROR: "Parse error", INVALID_REQUEST: "Invalid Request", METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params", INTERNAL_ERROR: "Internal error", RESOURCE_NOT_FOUND: "Resource not found",
    URL_ELICITATION_REQUIRED: "URL elicitation required", HEADER_MISMATCH: "Header mismatch",
    MISSING_CLIENT_CAPABILITY: "Missing client capability",
    UNSUPPORTED_PROTOCOL_VERSION: "Unsupported protocol version", REQUEST_CANCELLED: "Request cancelled",
    REQUEST_TIMEOUT: "Request timeout",
}


def code_name(code: Any) -> str:
    """The name of a JSON-RPC error code, or the range it falls in."""
    if not isinstance(code, int) or isinstance(code, bool):
        return "not an integer code"
    if code in CODE_NAMES:
        return CODE_NAMES[code]
    if -32099 <= code <= -32000:
        return "Server error"
    if -32768 <= code <= -32000:
        return "Reserved error code"
    return "Application error"


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any] | None = None


@dataclass(frozen=True)
class Notification:
    method: str
    params: dict[str, Any] | None = None


@dataclass(frozen=True)
class Response:
    id: RequestId
    result: Any


@dataclass(frozen=True)
class RpcError:
    code: int
    message: str
    data: Any = None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            d["data"] = self.data
        return d


@dataclass(frozen=True)
class ErrorResponse:
    id: RequestId | None
    error: RpcError


@dataclass(frozen=True)
class Malformed:
    """A frame that is not a usable JSON-RPC message. `obj` is the parsed JSON
    when the frame was JSON at all, so a viewer can still show it."""

    raw: bytes
    reason: str
    obj: Any = field(default=None, compare=False)
    # A whole message we refused to parse (too big, too deep): its id may still
    # be read from its first bytes.
    refused: bool = False


Message = Request | Notification | Response | ErrorResponse


def _is_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


# A faster parser the layers above may hand in (`use_loads`: msgspec's, where installed). It is tried first; whatever
# it refuses (bad JSON, not UTF-8, NaN, numbers out of range, deep nesting, lone surrogates) goes on to the standard
# library below, which accepts or names the problem exactly as it always has. The parser handed in must read every
# number as the standard library does: msgspec keeps integers of any size whole (orjson, used before, read those
# beyond 64 bits as floats, so every frame had to be searched for long digit runs first: 47 ms of a 24 MB reply).
_fast_loads: Callable[[bytes], Any] | None = None
QUIET_GC_BYTES = 1024 * 1024  # a frame longer than this is parsed with the garbage collector paused


def use_loads(loads: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """Parse frames with `loads` first (None: the standard library alone); returns the one used until now."""
    global _fast_loads
    previous, _fast_loads = _fast_loads, loads
    return previous


def decode(raw: bytes, *, fast_first: bool = True) -> tuple[Any, str | None]:
    """JSON-decode a frame: (object, None) or (None, reason). `fast_first=False`: the faster parser
    already refused it."""
    fast = _fast_loads if fast_first else None
    if fast is not None:
        try:
            return fast(raw), None
        except Exception:
            pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
    if not text.strip():
        return None, "blank line"
    try:
        return json.loads(text), None
    except RecursionError:
        return None, "JSON nested too deeply to parse"
    except ValueError as exc:
        msg = getattr(exc, "msg", str(exc))
        pos = getattr(exc, "pos", None)
        where = f" at character {pos}" if pos is not None else ""
        return None, f"bad JSON: {msg}{where}"
    except Exception as exc:  # pragma: no cover - defensive: the core must not raise
        return None, f"undecodable JSON: {type(exc).__name__}"


def parse(raw: bytes | Oversize) -> Message | Malformed:
    if isinstance(raw, Oversize):
        return Malformed(raw.head, f"message of {raw.size} bytes exceeds the size limit", refused=True)
    if len(raw) > QUIET_GC_BYTES and gc.isenabled():
        # Parsing makes no reference cycles, and the garbage collector's passes over the millions of objects
        # a big answer becomes, while it is being made, took twice as long as the parsing itself (a 56 MB
        # structured result: 640 ms with them, 190 ms without)
        gc.disable()
        try:
            return _parse(raw)
        finally:
            gc.enable()
    return _parse(raw)


def parse_many(raws: list[bytes | Oversize]) -> list[Message | Malformed]:
    """`parse` of each, in one call: a read of a flood's notifications is parsed without three calls a frame."""
    fast = _fast_loads
    out: list[Message | Malformed] = []
    append = out.append
    for raw in raws:
        if fast is None or type(raw) is not bytes or len(raw) > QUIET_GC_BYTES:
            append(parse(raw))
            continue
        try:
            obj = fast(raw)
        except Exception:
            append(parse(raw))  # (the slow way says what is wrong)
            continue
        if (type(obj) is dict and "id" not in obj and obj.get("jsonrpc") == "2.0" and "result" not in obj
                and "error" not in obj and type(method := obj.get("method")) is str
                and ((params := obj.get("params")) is None or type(params) is dict)):
            append(Notification(method, params))  # as `_classify` makes it
        else:
            append(from_obj(obj, raw))
    return out


def _parse(raw: bytes) -> Message | Malformed:
    fast = _fast_loads
    if fast is not None:  # (decode's first step, inlined: a flood parses a hundred thousand frames)
        try:
            obj = fast(raw)
        except Exception:
            pass
        else:
            return from_obj(obj, raw)
    obj, problem = decode(raw, fast_first=False)
    if problem:
        return Malformed(raw, problem, refused=problem.startswith("JSON nested too deeply"))
    return from_obj(obj, raw)


def from_obj(obj: Any, raw: bytes = b"") -> Message | Malformed:
    """Classify an already-decoded JSON value."""
    try:
        return _classify(obj, raw)
    except Exception as exc:  # pragma: no cover - defensive
        return Malformed(raw, f"unclassifiable message ({type(exc).__name__})", obj)


def _classify(obj: Any, raw: bytes) -> Message | Malformed:
    if isinstance(obj, list):
        return Malformed(raw, "batch array (JSON-RPC batches are not part of MCP)", obj)
    if not isinstance(obj, dict):
        return Malformed(raw, f"not a JSON object (a {type(obj).__name__})", obj)
    if "jsonrpc" not in obj:
        return Malformed(raw, 'missing "jsonrpc" member', obj)
    if obj["jsonrpc"] != "2.0":
        return Malformed(raw, f'"jsonrpc" is {json.dumps(obj["jsonrpc"])[:40]}, not "2.0"', obj)
    has_id = "id" in obj
    if "method" in obj:
        method = obj["method"]
        if not isinstance(method, str):
            return Malformed(raw, '"method" is not a string', obj)
        params = obj.get("params")
        if params is not None and not isinstance(params, dict):
            return Malformed(raw, '"params" is not an object', obj)
        if "result" in obj or "error" in obj:
            return Malformed(raw, 'both "method" and "result"/"error"', obj)
        if not has_id:
            return Notification(method, params)
        if not _is_id(obj["id"]):
            return Malformed(raw, "request id is neither a string nor an integer", obj)
        return Request(obj["id"], method, params)
    if "result" in obj and "error" in obj:
        return Malformed(raw, 'response has both "result" and "error"', obj)
    if "result" in obj:
        if not has_id or not _is_id(obj["id"]):
            return Malformed(raw, "response id is missing or neither a string nor an integer", obj)
        return Response(obj["id"], obj["result"])
    if "error" in obj:
        err = obj["error"]
        if not isinstance(err, dict) or not isinstance(err.get("code"), int) or isinstance(err.get("code"), bool):
            return Malformed(raw, 'error response without an integer "error.code"', obj)
        message = err.get("message")
        if not isinstance(message, str):
            message = "" if message is None else json.dumps(message)[:200]
        rid = obj.get("id")
        if rid is not None and not _is_id(rid):
            return Malformed(raw, "error id is neither null, a string nor an integer", obj)
        return ErrorResponse(rid, RpcError(err["code"], message, err.get("data")))
    return Malformed(raw, 'neither a request, a notification nor a response (no "method", "result" or "error")', obj)


def to_obj(msg: Message) -> dict[str, Any]:
    d: dict[str, Any] = {"jsonrpc": "2.0"}
    if isinstance(msg, Request):
        d["id"] = msg.id
        d["method"] = msg.method
        if msg.params is not None:
            d["params"] = msg.params
    elif isinstance(msg, Notification):
        d["method"] = msg.method
        if msg.params is not None:
            d["params"] = msg.params
    elif isinstance(msg, Response):
        d["id"] = msg.id
        d["result"] = msg.result
    elif isinstance(msg, ErrorResponse):
        d["id"] = msg.id
        d["error"] = msg.error.as_dict()
    else:  # pragma: no cover
        raise TypeError(f"not a message: {msg!r}")
    return d


def serialize(msg: Message) -> bytes:
    """Compact UTF-8 JSON, without the newline (framing adds it)."""
    obj = to_obj(msg)
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from the peer: keep it as an escape
        return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii")


_LEADING_ID = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(\d{1,15})\s*,\s*"(?:result|error)"')


def leading_response_id(raw: bytes) -> int | None:
    """The id of a response whose body could not be parsed, when it leads the frame."""
    m = _LEADING_ID.match(raw[:256])
    return int(m.group(1)) if m else None
