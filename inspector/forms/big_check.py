"""Whether a big value is valid against a schema, judged a slice at a time.

A 50 MB structured result is judged by the Rust validator in about 40 ms, all of it spent reading the Python
value: one turn of the window's loop too many. Where the schema allows it, the value is judged in parts that
give exactly the same answer: the value with its biggest array set aside, then that array's items, thousands
at a time, each part a step of its own (`valid_in_steps`). The schema must be plain along the way down to the
array: objects described by `properties` (and `required`, `additionalProperties`), an array by `items` (and
`minItems`, `maxItems`), references only into the schema's own `$defs`/`definitions`, no identifiers of
its own. Any other schema, or a value found not valid, is left to the whole check, which also says why.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from .. import schemarefs

OBJECT_KEYS = frozenset({"type", "properties", "required", "additionalProperties", "title", "description",
                         "$schema", "$defs", "definitions", "$comment", "examples", "default"})
ARRAY_KEYS = frozenset({"type", "items", "title", "description", "minItems", "maxItems", "$comment", "examples",
                        "default"})
# keys that give a schema's parts a base or a name of their own: a part judged on its own could resolve differently
NAMING = frozenset({"$id", "id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor"})
SPLIT_MIN = 10_000  # an array shorter than this is judged with the rest
CHUNK = 20_000  # items judged in one step


NAMED = frozenset({"properties", "$defs", "definitions", "patternProperties", "dependentSchemas", "dependencies"})
SUBSCHEMAS = frozenset({"items", "additionalItems", "prefixItems", "contains", "additionalProperties",
                        "unevaluatedItems", "unevaluatedProperties", "propertyNames", "not", "if", "then", "else",
                        "allOf", "anyOf", "oneOf"})


def _plain_refs(schema: Any) -> bool:
    """No naming keywords anywhere in the schema, and every `$ref` points into its own `$defs` or
    `definitions` (values such as `const`, `enum` and `default` are data, not looked into)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for key, sub in node.items():
            if key in NAMING:
                return False
            if key == "$ref" and not (isinstance(sub, str) and sub.startswith(("#/$defs/", "#/definitions/"))):
                return False
            if key in NAMED and isinstance(sub, dict):
                stack.extend(sub.values())
            elif key in SUBSCHEMAS:
                stack.append(sub)
    return True


def _object_schema(schema: Any) -> bool:
    return (isinstance(schema, dict) and set(schema) <= OBJECT_KEYS and schema.get("type", "object") == "object"
            and isinstance(schema.get("properties", {}), dict))


def _array_schema(schema: Any) -> bool:
    return (isinstance(schema, dict) and set(schema) <= ARRAY_KEYS and schema.get("type") == "array"
            and isinstance(schema.get("items", True), (dict, bool)))


def _biggest_array(schema: dict[str, Any], value: dict[str, Any]) -> tuple[list[str], dict[str, Any]] | None:
    """The path to the longest array that can be set aside, and its schema (None: none can)."""
    best: tuple[int, list[str], dict[str, Any]] | None = None
    stack: list[tuple[dict[str, Any], dict[str, Any], list[str]]] = [(schema, value, [])]
    while stack:
        s, v, path = stack.pop()
        for key, sub in s.get("properties", {}).items():
            if key not in v:
                continue
            if isinstance(v[key], list) and _array_schema(sub):
                if best is None or len(v[key]) > best[0]:
                    best = (len(v[key]), [*path, key], sub)
            elif isinstance(v[key], dict) and _object_schema(sub):
                stack.append((sub, v[key], [*path, key]))
    return (best[1], best[2]) if best is not None and best[0] >= SPLIT_MIN else None


def _set_aside(node: Any, path: list[str], replacement: Any) -> Any:
    """A copy of `node` with the value at `path` replaced (only the dicts along the path are copied)."""
    if not path:
        return replacement
    return {**node, path[0]: _set_aside(node[path[0]], path[1:], replacement)}


def _properties_path(path: list[str]) -> list[str]:
    out: list[str] = []
    for key in path:
        out += ["properties", key]
    return out


def valid_in_steps(schema: Any, value: Any, chunk: int = CHUNK) -> Generator[None, None, bool]:
    """Judge `value` against `schema` (jsonschema-rs), yielding between steps: True when valid; False when it
    is not, or when it cannot be judged in parts and the one step judging it whole found it not valid (or could
    not judge it): the caller's whole check then says what is wrong."""
    try:
        split = (_biggest_array(schema, value) if _object_schema(schema) and isinstance(value, dict)
                 and _plain_refs(schema) else None)
        if split is None:
            yield
            return bool(schemarefs.rust_validator(schema).is_valid(value))
        path, array_schema = split
        items = value
        for key in path:
            items = items[key]
        rest = schemarefs.rust_validator(_set_aside(schema, _properties_path(path), True))
        if not rest.is_valid(_set_aside(value, path, [])):
            return False
        if not array_schema.get("minItems", 0) <= len(items) <= array_schema.get("maxItems", len(items)):
            return False
        document = {k: schema[k] for k in ("$schema", "$defs", "definitions") if k in schema}
        each = schemarefs.rust_validator({**document, "type": "array", "items": array_schema.get("items", True)})
        for start in range(0, len(items), chunk):
            yield
            if not each.is_valid(items[start:start + chunk]):
                return False
        return True
    except Exception:  # (a schema the validator cannot take, integers beyond 64 bits): the whole check says
        return False
