"""Arguments for a tool call, made up from its input schema: the smallest instance that is valid.

Required properties only; a `default`, `const`, first `enum` value or first example where the schema
gives one; otherwise a plain value of the type within its bounds (a string of `minLength`, a number
inside its minimum and maximum, `minItems` items). `sample(schema)` returns None when what it made
does not validate (the tool is then not called: a check never sends arguments it knows are wrong).
"""

from __future__ import annotations

import copy
from typing import Any

from .. import schemarefs

MAX_DEPTH = 12
MAX_ITEMS = 50  # a longer minItems makes no arguments (a check sends small calls, never huge ones)
MAX_LENGTH = 10_000  # the same for a longer minLength
MAX_STEPS = 2_000  # schema nodes looked at for one tool: a recursive anyOf branches, this ends it
FORMATS = {
    "date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01", "time": "00:00:00Z", "email": "user@example.com",
    "uri": "https://example.com/", "url": "https://example.com/", "uri-reference": "https://example.com/",
    "hostname": "example.com", "ipv4": "192.0.2.1", "ipv6": "2001:db8::1",
    "uuid": "00000000-0000-4000-8000-000000000000", "duration": "PT1S",
}
_MISSING = object()


def sample(schema: Any) -> dict[str, Any] | None:
    """Arguments valid against `schema`, or None when none could be made."""
    if not isinstance(schema, dict):
        return None
    try:
        value = _make(schema, schema, 0, [0])
    except (_Budget, TypeError, ValueError, OverflowError, RecursionError):
        return None  # too big, too deep, or numbers no JSON can carry: the tool is not called
    if not isinstance(value, dict):
        value = {}
    return value if is_valid(schema, value) else None


class _Budget(Exception):
    pass


def is_valid(schema: Any, value: Any) -> bool:
    """Valid against `schema` (jsonschema-rs: patterns in linear time, remote references never fetched)."""
    try:
        return bool(schemarefs.rust_validator(schema).is_valid(value))
    except Exception:  # a schema that cannot be compiled, a value it cannot take
        return False


def _resolve(root: dict[str, Any], ref: str) -> Any:
    if not ref.startswith("#"):
        return {}
    node: Any = root
    for part in ref[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return {}
        node = node[part]
    return node


def _make(schema: Any, root: dict[str, Any], depth: int, steps: list[int]) -> Any:
    steps[0] += 1
    if steps[0] > MAX_STEPS:
        raise _Budget
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    if isinstance(schema.get("$ref"), str):
        target = _resolve(root, schema["$ref"])
        target = target if isinstance(target, dict) else {}
        return _make({**target, **{k: v for k, v in schema.items() if k != "$ref"}}, root, depth + 1, steps)
    for key in ("default", "const"):
        if key in schema:
            return copy.deepcopy(schema[key])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return copy.deepcopy(schema["enum"][0])
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return copy.deepcopy(schema["examples"][0])
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            rest = {k: v for k, v in schema.items() if k != key}
            return _first_valid(options, rest, root, depth, steps)
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            if isinstance(part, dict):
                merged = _merge(merged, part)
        return _make(merged, root, depth + 1, steps)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    return _of_type(kind, schema, root, depth, steps)


def _first_valid(options: list[Any], rest: dict[str, Any], root: dict[str, Any], depth: int,
                 steps: list[int]) -> Any:
    defs = {k: root[k] for k in ("$defs", "definitions") if k in root}  # the options' references resolve
    for option in options:
        candidate = _make(_merge(dict(rest), option) if isinstance(option, dict) else option, root, depth + 1, steps)
        if isinstance(option, dict) and is_valid({**defs, **option}, candidate):
            return candidate
    return None


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if key == "properties" and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        elif key == "required" and isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = list(dict.fromkeys([*out[key], *value]))
        else:
            out[key] = value
    return out


def _of_type(kind: Any, schema: dict[str, Any], root: dict[str, Any], depth: int, steps: list[int]) -> Any:
    if kind == "object":
        props = _dict(schema.get("properties"))
        required = [r for r in schema.get("required") or [] if isinstance(r, str)]
        return {key: _make(props.get(key, {}), root, depth + 1, steps) for key in required}
    if kind == "array":
        count = _int(schema.get("minItems"))
        if count > MAX_ITEMS:
            raise _Budget
        items = _dict(schema.get("items"))
        made = [_make(items, root, depth + 1, steps) for _ in range(count)]
        if schema.get("uniqueItems") and count > 1 and all(isinstance(v, str) for v in made):
            made = [f"{v}{i}" for i, v in enumerate(made)]
        return made
    if kind in ("integer", "number"):
        return _number(schema, kind == "integer")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    text = FORMATS.get(schema.get("format", ""), "x")
    low = _int(schema.get("minLength"))
    if low > MAX_LENGTH:
        raise _Budget
    if len(text) < low:
        text = text + "x" * (low - len(text))
    high = schema.get("maxLength")
    if isinstance(high, int) and len(text) > high:
        text = text[:high]
    return text


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _number(schema: dict[str, Any], integer: bool) -> int | float:
    low = schema.get("minimum")
    if isinstance(schema.get("exclusiveMinimum"), (int, float)) and not isinstance(schema["exclusiveMinimum"], bool):
        low = schema["exclusiveMinimum"] + (1 if integer else 0.5)
    high = schema.get("maximum")
    value: float = low if isinstance(low, (int, float)) else 0
    if isinstance(high, (int, float)) and value > high:
        value = high
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0 and value % step:
        value = (value // step + 1) * step
    return int(value) if integer else value
