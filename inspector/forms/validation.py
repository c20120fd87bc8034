"""Validation of instances against a tool's JSON Schema, in the schema's own dialect.

2020-12 unless `$schema` names another draft. Errors come back as
`(json_pointer, message)` pairs. No Qt here.

`validate()`, `coerce()` and `SchemaProblem` serve the command line; `Checker` compiles a schema
once for the live form (formats jsonschema checks only with optional packages included).
"""

from __future__ import annotations

import datetime
import json
import re as _re
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Self

from .. import schemarefs

if TYPE_CHECKING:
    from jsonschema import FormatChecker
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator


class SchemaProblem(ValueError):
    """The schema itself is unusable (invalid, or its references do not resolve)."""


def pointer(path: Iterable[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def validate(schema: Any, instance: Any) -> list[tuple[str, str]]:
    """Errors of `instance` against `schema`, sorted by location; [] when valid.

    Raises SchemaProblem when the schema cannot be used at all (a `$ref` that leaves it among them: never
    followed)."""
    import jsonschema

    if schema is True or schema == {}:
        return []
    if not isinstance(schema, (dict, bool)):
        raise SchemaProblem(f"the schema is {type(schema).__name__}, not an object")
    try:
        with _deep():  # legal schemas nest deeper than the default limit allows: only a cycle is endless
            if isinstance(schema, dict):  # a boolean schema has no `$schema`: it is 2020-12, and valid there
                schemarefs.check_schema(schema)
            away = schemarefs.outside(schema)
            if away is not None:
                raise SchemaProblem(f"the schema cannot be used: {away}")
            validator = schemarefs.python_validator(schema)  # formats are annotations: `format_warnings` tells
            errors = list(validator.iter_errors(instance))
    except SchemaProblem:
        raise
    except jsonschema.SchemaError as exc:
        raise SchemaProblem(f"the schema is invalid: {exc.message}") from None
    except RecursionError:
        raise SchemaProblem("the schema's references form a cycle that never ends") from None
    except Exception as exc:  # unresolvable $ref and the like
        raise SchemaProblem(_unusable(exc)) from None
    out = [(pointer(e.absolute_path), e.message) for e in errors]
    return sorted(out)


def format_warnings(schema: Any, instance: Any) -> list[tuple[str, str]]:
    """`(json_pointer, message)` of the values of `instance` that do not match their `format`."""
    return [(p[0], p[1]) for p in Checker(schema).warnings(instance)]


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
        return {json_type(v) for v in prop["enum"]}
    if "const" in prop:
        return {json_type(prop["const"])}
    return set()


def coerce(schema: Any, key: str, text: str) -> Any:
    """A `key=value` command-line argument as the tool's schema wants it.

    A string property keeps the text as it is; a number property parses it;
    otherwise JSON when it parses, else the text."""
    types = property_types(schema, key)
    parsed, ok = _loads(text)
    fits = ok and (json_type(parsed) in types or ("number" in types and json_type(parsed) == "integer"))
    if types == {"string"} or (types and "string" in types and not fits):
        return text
    if ok and (not types or fits):
        return parsed
    return parsed if ok and not types else text


def _loads(text: str) -> tuple[Any, bool]:
    try:
        return json.loads(text), True
    except (ValueError, RecursionError):
        return None, False


def json_type(value: Any) -> str:
    """The JSON Schema type name of a Python value from json.loads."""
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
    if isinstance(value, dict):
        return "object"
    return "unknown"


# ---------------------------------------------------------------------------------------------
# Compiled checking for live forms: the schema is checked and compiled once, then instances
# many times. `validate()` above keeps its behaviour for the command line.

_DATE_TIME = _re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_TIME = _re.compile(r"^\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$")
_URI = _re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$")
_HOSTNAME = _re.compile(r"^(?=.{1,253}\.?$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)"
                        r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$")
_DURATION = _re.compile(r"^P(?!$)(\d+(\.\d+)?Y)?(\d+(\.\d+)?M)?(\d+(\.\d+)?W)?(\d+(\.\d+)?D)?"
                        r"(T(?=\d)(\d+(\.\d+)?H)?(\d+(\.\d+)?M)?(\d+(\.\d+)?S)?)?$")


_CHECKERS: dict[str, FormatChecker] = {}


def _unusable(exc: BaseException) -> str:
    """Why a schema could not check an instance, in words: a refused reference says so plainly."""
    return f"the schema cannot be used: {schemarefs.refused(exc) or f'{type(exc).__name__}: {exc}'}"


def _format_checker(schema: Any) -> FormatChecker:
    """The dialect's format checker, plus the formats jsonschema checks only with optional packages."""
    name = schemarefs.dialect(schema)
    if name not in _CHECKERS:
        _CHECKERS[name] = _make_format_checker(schema)
    return _CHECKERS[name]


def _make_format_checker(schema: Any) -> FormatChecker:
    checker = schemarefs.format_checker(schema)

    def _date_time(value: object) -> bool:
        if not isinstance(value, str):
            return True
        if not _DATE_TIME.match(value):
            return False
        try:
            datetime.datetime.fromisoformat(value.replace("z", "Z").replace("t", "T").replace("Z", "+00:00"))
        except ValueError:
            return False
        return True

    def _time(value: object) -> bool:
        if not isinstance(value, str):
            return True
        if not _TIME.match(value):
            return False
        h, m, s = int(value[0:2]), int(value[3:5]), int(value[6:8])
        return h < 24 and m < 60 and s < 61

    extra: dict[str, Callable[[object], bool]] = {
        "date-time": _date_time, "time": _time,
        "uri": lambda v: not isinstance(v, str) or bool(_URI.match(v)),
        "hostname": lambda v: not isinstance(v, str) or bool(_HOSTNAME.match(v)),
        "duration": lambda v: not isinstance(v, str) or bool(_DURATION.match(v)),
    }
    for name, func in extra.items():
        if name not in checker.checkers:
            checker.checks(name)(func)
    return checker


class Problem(tuple[str, str]):
    """`(json_pointer, message)`, with the failing keyword and (for `required`) the missing key."""

    keyword: str = ""
    missing: str | None = None

    def __new__(cls, where: str, message: str, keyword: str = "", missing: str | None = None) -> Self:
        self = super().__new__(cls, (where, message))
        self.keyword, self.missing = keyword, missing
        return self


CHECK_SCHEMA_MAX_NODES = 500    # larger schemas skip the (slow) meta-schema check
DEEP_RECURSION = 12000          # recursion limit while checking (schemas nested hundreds deep)


class _deep:
    """Raise the recursion limit for a while: jsonschema recurses a few frames per level."""

    def __enter__(self) -> None:
        self.old = sys.getrecursionlimit()
        if self.old < DEEP_RECURSION:
            sys.setrecursionlimit(DEEP_RECURSION)

    def __exit__(self, *exc: object) -> None:
        sys.setrecursionlimit(self.old)


def _count_nodes(schema: Any, limit: int) -> int:
    n, stack = 0, [schema]
    while stack and n <= limit:
        node = stack.pop()
        if isinstance(node, dict):
            n += 1
            stack.extend(v for k, v in node.items() if isinstance(v, (dict, list)) and k not in ("enum", "const"))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))
    return n


class Checker:
    """A schema compiled once, in its own dialect, for checking many instances.

    Never raises: an unusable schema shows up as one problem at the root. Schemas with more than
    `CHECK_SCHEMA_MAX_NODES` subschemas are not checked against the meta-schema (it takes seconds);
    their mistakes surface when an instance reaches them."""

    def __init__(self, schema: Any, *, fast: bool = False):
        """`fast`: also compile the schema with jsonschema-rs, whose yes to a valid instance is taken without
        asking python-jsonschema (tens of times faster: an agent's call is checked twice); the problems of an
        invalid one still come from python-jsonschema, in its words."""
        import jsonschema

        self.schema = schema
        self._fast: Any = None
        self.problem: str | None = None
        self._validator: Validator | None = None  # formats not asserted (they are annotations)
        self._formats: Validator | None = None  # formats checked, for `warnings()` and `formats=True`
        if schema is True or schema == {}:
            return
        if not isinstance(schema, (dict, bool)):
            self.problem = f"the schema is {type(schema).__name__}, not an object"
            return
        try:
            with _deep():
                if isinstance(schema, dict) and _count_nodes(schema, CHECK_SCHEMA_MAX_NODES) <= CHECK_SCHEMA_MAX_NODES:
                    schemarefs.check_schema(schema)
                away = schemarefs.outside(schema)  # said at once, not when an instance first reaches it
            if away is not None:
                self.problem = f"the schema cannot be used: {away}"
                return
            self._formats = schemarefs.python_validator(schema, format_checker=_format_checker(schema))
            self._validator = schemarefs.python_validator(schema)
            if fast:
                self._fast = schemarefs.rust_checker(schema)
        except jsonschema.SchemaError as exc:
            self.problem = f"the schema is invalid: {exc.message}"
        except RecursionError:
            self.problem = "the schema nests too deeply to check"
        except Exception as exc:
            self.problem = _unusable(exc)

    def problems(self, instance: Any, limit: int = 500, *, formats: bool = False) -> list[Problem]:
        """Problems of `instance`, sorted by location; [] when valid. A value that does not match its
        `format` is not a problem (JSON Schema makes `format` an annotation unless a dialect asserts
        it): `formats=True` includes those too, `warnings()` gives only them."""
        if self.problem:
            return [Problem("", self.problem, "schema")]
        validator = self._formats if formats else self._validator
        if validator is None:
            return []
        if self._fast is not None and not formats:
            try:
                if self._fast.is_valid(instance):
                    return []
            except Exception:  # a value jsonschema-rs cannot read: python-jsonschema decides
                pass
        out: list[Problem] = []
        try:
            with _deep():
                errors = _first_errors(validator, instance, limit)
        except RecursionError:
            return [Problem("", "the schema's references form a cycle that never ends", "schema")]
        except Exception as exc:
            return [Problem("", _unusable(exc), "schema")]
        for e in errors:
            missing = None
            if e.validator == "required" and isinstance(e.message, str):
                m = _re.match(r"^'(.*)' is a required property$", e.message, _re.S)
                missing = m.group(1) if m else None
            out.append(Problem(pointer(e.absolute_path), _clip(e.message), str(e.validator), missing))
        return sorted(out)

    def warnings(self, instance: Any, limit: int = 50) -> list[Problem]:
        """Values that do not match their `format` (uuid, email, date-time...): worth a word, not a refusal.
        Also those inside an `anyOf` / `oneOf` (a pydantic `UUID | None`), where the format is what fails."""
        if self._formats is None:
            return []
        out: set[Problem] = set()
        try:
            with _deep():
                stack = _first_errors(self._formats, instance, limit)
                while stack and len(out) < limit:
                    e = stack.pop()
                    if e.validator == "format":
                        out.add(Problem(pointer(e.absolute_path), _clip(e.message), "format"))
                    stack.extend(e.context or ())
        except Exception:  # a schema that cannot check an instance: `problems()` says so
            return []
        return sorted(out)

    def errors(self, instance: Any) -> list[tuple[str, str]]:
        return [(p[0], p[1]) for p in self.problems(instance)]

    def matches(self, subschema: Any, instance: Any) -> bool:
        """Whether `instance` is valid against `subschema`, resolving references in the root schema."""
        if self._validator is None:
            if self.problem:
                return False
            return True
        try:
            with _deep():
                return self._validator.evolve(schema=subschema).is_valid(instance)
        except (RecursionError, Exception):
            return False


def _first_errors(validator: Validator, instance: Any, limit: int) -> list[ValidationError]:
    out = []
    for e in validator.iter_errors(instance):
        out.append(e)
        if len(out) >= limit:
            break
    return out


def _clip(message: str, limit: int = 1000) -> str:
    """jsonschema quotes whole enums in its messages: keep them readable."""
    return message if len(message) <= limit else message[: limit - 1] + "…"


def still_accepted(schema: Any, value: Any) -> tuple[Any, list[str]]:
    """The part of a form's `value` a changed `schema` still accepts, and the names of what it drops: a
    top-level argument stays when the schema still has it (or takes any other) and its value is valid
    there. A value that is not an object is kept whole when valid, else dropped ("" named)."""
    if not isinstance(value, dict):
        try:
            return (value, []) if not validate(schema, value) else (None, [""])
        except SchemaProblem:
            return None, [""]
    if not isinstance(schema, dict):
        return dict(value), []
    props: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    extra_ok = schema.get("additionalProperties", True) is not False
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    # one argument at a time (the others may be missing), against a schema compiled once: checking the schema
    # itself for each argument took 20-60 ms when a tool was selected again with its values remembered
    checker = Checker({**schema, "required": []})
    for key, item in value.items():
        if key not in props and not extra_ok:
            dropped.append(key)
            continue
        here = pointer([key])
        wrong = [] if checker.problem else [p for p, _m in checker.errors({key: item})
                                            if p == here or p.startswith(here + "/")]
        if wrong:
            dropped.append(key)
        else:
            kept[key] = item
    return kept, dropped
