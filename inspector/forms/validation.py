"""Validation of instances against a tool's JSON Schema, in the schema's own dialect.

2020-12 unless `$schema` names another draft. Errors come back as
`(json_pointer, message)` pairs. No Qt here.
"""

from __future__ import annotations

import json
from typing import Any

_DIALECTS = {
    "draft-07": "Draft7Validator",
    "draft-06": "Draft6Validator",
    "draft-04": "Draft4Validator",
    "draft/2019-09": "Draft201909Validator",
    "draft/2020-12": "Draft202012Validator",
}


class SchemaProblem(ValueError):
    """The schema itself is unusable (invalid, or its references do not resolve)."""


def validator_class(schema: Any):
    import jsonschema

    uri = schema.get("$schema", "") if isinstance(schema, dict) else ""
    for marker, name in _DIALECTS.items():
        if isinstance(uri, str) and marker in uri:
            return getattr(jsonschema, name)
    return jsonschema.Draft202012Validator


def pointer(path: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def validate(schema: Any, instance: Any) -> list[tuple[str, str]]:
    """Errors of `instance` against `schema`, sorted by location; [] when valid.

    Raises SchemaProblem when the schema cannot be used at all."""
    import jsonschema

    if schema is True or schema == {}:
        return []
    if not isinstance(schema, (dict, bool)):
        raise SchemaProblem(f"the schema is {type(schema).__name__}, not an object")
    cls = validator_class(schema)
    try:
        cls.check_schema(schema)
        validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
        errors = list(validator.iter_errors(instance))
    except jsonschema.SchemaError as exc:
        raise SchemaProblem(f"the schema is invalid: {exc.message}") from None
    except RecursionError:
        raise SchemaProblem("the schema's references form a cycle that never ends") from None
    except Exception as exc:  # unresolvable $ref and the like
        raise SchemaProblem(f"the schema cannot be used: {type(exc).__name__}: {exc}") from None
    out = [(pointer(e.absolute_path), e.message) for e in errors]
    return sorted(out)


def property_types(schema: Any, key: str) -> set[str]:
    """The JSON types a top-level property allows (empty when unknown)."""
    if not isinstance(schema, dict):
        return set()
    prop = (schema.get("properties") or {}).get(key)
    if not isinstance(prop, dict):
        return set()
    types = prop.get("type")
    if isinstance(types, str):
        return {types}
    if isinstance(types, list):
        return {t for t in types if isinstance(t, str)}
    if "enum" in prop and isinstance(prop["enum"], list):
        return {_json_type(v) for v in prop["enum"]}
    if "const" in prop:
        return {_json_type(prop["const"])}
    return set()


def coerce(schema: Any, key: str, text: str) -> Any:
    """A `key=value` command-line argument as the tool's schema wants it.

    A string property keeps the text as it is; a number property parses it;
    otherwise JSON when it parses, else the text."""
    types = property_types(schema, key)
    parsed, ok = _loads(text)
    if types == {"string"} or (types and "string" in types and (not ok or _json_type(parsed) not in types)):
        return text
    if ok and (not types or _json_type(parsed) in types or ("number" in types and _json_type(parsed) == "integer")):
        return parsed
    return parsed if ok and not types else text


def _loads(text: str) -> tuple[Any, bool]:
    try:
        return json.loads(text), True
    except (ValueError, RecursionError):
        return None, False


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
