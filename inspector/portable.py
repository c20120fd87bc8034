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

from .secrets import MASK, NAME, Tally, is_secret_name, mask_args, mask_env, mask_mapping, mask_text, mask_url

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


def mask_body(value: Any, counts: Tally | None = None) -> tuple[Any, bool]:
    """A JSON value with the values of secret-named keys masked, and every secret shape in its strings
    (URL userinfo and query keys, connection strings, token formats: `secrets.mask_text`) and the secrets
    `counts` has met already (a server's env value that a tool echoes); whether anything was."""
    if isinstance(value, dict):
        changed = False
        out: dict[str, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and _BODY_SECRET.search(key) and isinstance(item, str) and item != MASK:
                out[key] = MASK
                if counts is not None:
                    counts.add(NAME, item)
                changed = True
            else:
                out[key], sub = mask_body(item, counts)
                changed = changed or sub
        return out, changed
    if isinstance(value, list):
        items = [mask_body(item, counts) for item in value]
        return [i for i, _ in items], any(c for _, c in items)
    if isinstance(value, str):
        masked = mask_text(value, counts)
        return masked, masked != value
    return value, False


def mask_definition(definition: dict[str, Any], counts: Tally | None = None) -> dict[str, Any]:
    """A server definition with its secrets masked: env values (by name, shape and entropy), headers, the
    command line, the URL, and the OAuth secret."""
    out = dict(definition)
    if isinstance(out.get("env"), dict):
        out["env"] = mask_env({str(k): str(v) for k, v in out["env"].items()}, counts)
    if isinstance(out.get("headers"), dict):
        out["headers"] = mask_mapping({str(k): str(v) for k, v in out["headers"].items()}, counts)
    for key in ("command", "args"):
        if isinstance(out.get(key), list):
            out[key] = mask_args([str(a) for a in out[key]], counts)
        elif isinstance(out.get(key), str):
            out[key] = mask_text(out[key], counts)
    if isinstance(out.get("url"), str):
        out["url"] = mask_url(out["url"], counts)
    if isinstance(out.get("oauth"), dict):
        oauth = {}
        for k, v in out["oauth"].items():
            if is_secret_name(k) and v and v != MASK:
                oauth[k] = MASK
                if counts is not None:
                    counts.add(NAME, str(v))
            else:
                oauth[k] = v
        out["oauth"] = oauth
    return out


def mask_meta(meta: dict[str, Any] | None, counts: Tally | None = None) -> dict[str, Any] | None:
    """A frame's meta with its secrets masked: an HTTP exchange's URL and headers, secret shapes elsewhere."""
    if not meta:
        return meta
    masked, _ = _mask_exchange(dict(meta), counts)
    return masked


def _mask_exchange(value: dict[str, Any], counts: Tally | None) -> tuple[dict[str, Any], bool]:
    changed = False
    headers: dict[str, Any] = {}
    for key in ("request_headers", "response_headers"):
        if isinstance(value.get(key), dict):
            masked = mask_mapping({str(k): str(v) for k, v in value[key].items()}, counts)
            changed = changed or masked != value[key]
            headers[key] = masked
        elif key in value:
            headers[key] = value[key]
        value.pop(key, None)
    masked_value, sub = mask_body(value, counts)
    masked_value.update(headers)  # masked by the header rule already (which keeps the scheme)
    return masked_value, changed or sub


def mask_frame(direction: str, data: bytes, counts: Tally | None = None) -> bytes:
    """A frame's bytes with secrets masked: the URL and header values of an HTTP exchange, secret-named
    values and secret shapes in the strings of a JSON body, secret shapes in a stderr line. A frame with
    nothing to mask (or a malformed one) is kept as is."""
    if direction == "err":  # a stderr line: a server that logs its connection string logs its password
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data
        masked = mask_text(text, counts)
        return data if masked == text else masked.encode("utf-8")
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return data
    if direction == "http" and isinstance(value, dict):
        masked_value, changed = _mask_exchange(value, counts)
        return json.dumps(masked_value, ensure_ascii=False).encode() if changed else data
    masked_value, changed = mask_body(value, counts)
    return json.dumps(masked_value, ensure_ascii=False, separators=(",", ":")).encode() if changed else data
