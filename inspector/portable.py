"""The portable session format (`.mcpsession`), the part that must load fast: its name and version, a
frame as one JSON line, and masking secrets on the way out. `recording.files` writes and reads whole
files with it; the tap (`inspector.tap`) writes a file line by line as a host talks to its server, and
imports nothing heavier than this.

A file is gzip'd JSON Lines: a header object (`format`, `version`, `servers`, …), one object per frame
(`server`, `dir`, `wall`, `mono`, `data` or `data_b64`, and `malformed`, `meta` when there are), and an
end line (`{"end": true, "frames": N}`).
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from .secrets import MASK, is_secret_name, mask_mapping

FORMAT = "mcpsession"
VERSION = 1
SUFFIX = ".mcpsession"

# keys of a JSON-RPC body whose values are secrets: narrower than the env-var rule, which would also
# take `author` or `keywords` out of a tool's result
_BODY_SECRET = re.compile(r"(^|[_\-.])(password|passwd|passphrase|secret|api[_\-]?key|apikey|token|access[_\-]?token|"
                          r"refresh[_\-]?token|id[_\-]?token|client[_\-]?secret|authorization|cookie|credentials?)$",
                          re.IGNORECASE)


def frame_line(server: str, direction: str, data: bytes, wall: float, mono: float, malformed: str | None = None,
               meta: dict[str, Any] | None = None) -> str:
    """One frame as the line a `.mcpsession` holds (text when the bytes are UTF-8, base64 otherwise)."""
    line: dict[str, Any] = {"server": server, "dir": direction, "wall": wall, "mono": mono}
    try:
        line["data"] = data.decode("utf-8")
    except UnicodeDecodeError:
        line["data_b64"] = base64.b64encode(data).decode("ascii")
    if malformed is not None:
        line["malformed"] = malformed
    if meta:
        line["meta"] = meta
    return json.dumps(line, ensure_ascii=False, default=str) + "\n"


def mask_body(value: Any) -> tuple[Any, bool]:
    """A JSON value with the values of secret-named keys masked; whether anything was."""
    if isinstance(value, dict):
        changed = False
        out: dict[str, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and _BODY_SECRET.search(key) and isinstance(item, str) and item != MASK:
                out[key] = MASK
                changed = True
            else:
                out[key], sub = mask_body(item)
                changed = changed or sub
        return out, changed
    if isinstance(value, list):
        items = [mask_body(item) for item in value]
        return [i for i, _ in items], any(c for _, c in items)
    return value, False


def mask_definition(definition: dict[str, Any]) -> dict[str, Any]:
    """A server definition with its env values, headers and OAuth secret masked."""
    out = dict(definition)
    for key in ("env", "headers"):
        if isinstance(out.get(key), dict):
            out[key] = mask_mapping({str(k): str(v) for k, v in out[key].items()})
    if isinstance(out.get("oauth"), dict):
        out["oauth"] = {k: (MASK if is_secret_name(k) else v) for k, v in out["oauth"].items()}
    return out


def mask_frame(direction: str, data: bytes) -> bytes:
    """A frame's bytes with secrets masked: header values of an HTTP exchange, secret-named values of a
    JSON body. A frame with nothing to mask (or no JSON: a stderr line, a malformed frame) is kept as is."""
    if direction == "err":
        return data
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return data
    if direction == "http" and isinstance(value, dict):
        changed = False
        for key in ("request_headers", "response_headers"):
            if isinstance(value.get(key), dict):
                masked = mask_mapping({str(k): str(v) for k, v in value[key].items()})
                changed = changed or masked != value[key]
                value[key] = masked
        headers = {k: value.pop(k) for k in ("request_headers", "response_headers") if k in value}
        masked_value, sub = mask_body(value)
        masked_value.update(headers)  # masked by the header rule already (which keeps the scheme)
        return json.dumps(masked_value, ensure_ascii=False).encode() if changed or sub else data
    masked_value, changed = mask_body(value)
    return json.dumps(masked_value, ensure_ascii=False, separators=(",", ":")).encode() if changed else data
