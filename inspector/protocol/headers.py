"""HTTP request metadata headers of the 2026-07-28 Streamable HTTP transport (sans-IO).

- `Mcp-Method` on every request, `Mcp-Name` on tools/call, resources/read and
  prompts/get, `MCP-Protocol-Version` always;
- tool parameters marked `x-mcp-header` mirrored as `Mcp-Param-<Name>`;
- values that are not plain visible ASCII sent as `=?base64?…?=`.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any

_TCHAR = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_SAFE = re.compile(r"^[\x20-\x7e]*$")  # a tab anywhere is sent encoded too
MAX_SAFE_INT = 2**53 - 1
NAME_HEADER_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class HeaderAnnotationError(ValueError):
    """A tool's `x-mcp-header` annotations break the spec's rules."""


@dataclass(frozen=True)
class HeaderParam:
    path: tuple[str, ...]  # property chain from the arguments root
    name: str  # header name suffix: Mcp-Param-<name>


def encode_value(text: str) -> str:
    """A header value, base64-wrapped when it is not plain visible ASCII."""
    if (not _SAFE.match(text) or text != text.strip(" ")
            or (text.startswith("=?base64?") and text.endswith("?="))):
        return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="
    return text


def header_params(input_schema: Any) -> list[HeaderParam]:
    """The `x-mcp-header` parameters of a tool; raises HeaderAnnotationError."""
    found: list[HeaderParam] = []
    if isinstance(input_schema, dict):
        _walk(input_schema, (), found, reachable=True)
    seen: dict[str, tuple[str, ...]] = {}
    for p in found:
        key = p.name.lower()
        if key in seen:
            raise HeaderAnnotationError(f'x-mcp-header "{p.name}" is used twice (case-insensitively), '
                                        f"at {_ptr(seen[key])} and {_ptr(p.path)}")
        seen[key] = p.path
    return found


_NESTED_SCHEMA_KEYS = ("items", "prefixItems", "additionalItems", "contains", "additionalProperties",
                       "patternProperties", "oneOf", "anyOf", "allOf", "not", "if", "then", "else",
                       "$defs", "definitions", "dependentSchemas", "unevaluatedItems", "unevaluatedProperties",
                       "propertyNames")


def _walk(schema: dict[str, Any], path: tuple[str, ...], out: list[HeaderParam], reachable: bool,
          depth: int = 0) -> None:
    if depth > 64:
        return
    if "x-mcp-header" in schema and path:
        name = schema["x-mcp-header"]
        where = _ptr(path)
        if not reachable:
            raise HeaderAnnotationError(f"x-mcp-header at {where} is not reachable through properties alone")
        if not isinstance(name, str) or not name:
            raise HeaderAnnotationError(f"x-mcp-header at {where} is empty or not a string")
        if not _TCHAR.match(name):
            raise HeaderAnnotationError(f"x-mcp-header {name!r} at {where} is not a valid HTTP header name")
        types = schema.get("type")
        types = [types] if isinstance(types, str) else types
        if not isinstance(types, list) or not types or any(t not in ("string", "integer", "boolean", "null")
                                                           for t in types) or types == ["null"]:
            raise HeaderAnnotationError(f"x-mcp-header {name!r} at {where} is on a parameter of type "
                                        f"{schema.get('type')!r}; only string, integer and boolean are allowed")
        out.append(HeaderParam(path, name))
    elif "x-mcp-header" in schema and not path:
        raise HeaderAnnotationError("x-mcp-header on the inputSchema root")
    props = schema.get("properties")
    if isinstance(props, dict):
        for key, sub in props.items():
            if isinstance(sub, dict):
                _walk(sub, path + (key,), out, reachable and "$ref" not in sub, depth + 1)
    for key in _NESTED_SCHEMA_KEYS:
        value = schema.get(key)
        subs = value if isinstance(value, list) else list(value.values()) if (
            isinstance(value, dict) and key in ("$defs", "definitions", "patternProperties", "dependentSchemas")
        ) else [value]
        for sub in subs:
            if isinstance(sub, dict):
                _walk(sub, path + (f"<{key}>",), out, False, depth + 1)


def _ptr(path: tuple[str, ...]) -> str:
    return "/" + "/".join(path)


def param_headers(params: list[HeaderParam], arguments: Any) -> dict[str, str]:
    """`Mcp-Param-*` headers for one call's arguments (absent or null values omitted)."""
    headers: dict[str, str] = {}
    for p in params:
        value: Any = arguments
        for key in p.path:
            if not isinstance(value, dict) or key not in value:
                value = None
                break
            value = value[key]
        if value is None:
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            if abs(value) > MAX_SAFE_INT:
                continue  # outside the interoperable range: the server validates the body
            text = str(value)
        elif isinstance(value, float) and value.is_integer():
            text = str(int(value))
        elif isinstance(value, str):
            text = value
        else:
            continue
        headers[f"Mcp-Param-{p.name}"] = encode_value(text)
    return headers


def standard_headers(message: Any) -> dict[str, str]:
    """`Mcp-Method` and, where it applies, `Mcp-Name` for a request object."""
    headers: dict[str, str] = {}
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return headers
    method = message["method"]
    headers["Mcp-Method"] = method
    field = NAME_HEADER_METHODS.get(method)
    params = message.get("params")
    if field and isinstance(params, dict) and isinstance(params.get(field), str):
        headers["Mcp-Name"] = encode_value(params[field])
    return headers
