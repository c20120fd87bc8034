"""Tool-schema portability: the JSON Schema features that model providers' tool calling rejects or silently
ignores, found in each tool's `inputSchema` and `outputSchema`. The same findings, in the same words, for
`spyglass check` (rule `schema-unportable`) and `spyglass --cli --method tools/list --strict`.

The features are those the official inspector's `--strict` reports (2.12), so a server judged by either
tool gets the same list:

- `boolean-schema` (error): a bare `true` / `false` where a schema object is expected (outside the keywords
  whose value may be a boolean: `additionalProperties`, `unevaluatedProperties`, `additionalItems`,
  `unevaluatedItems`). Function-calling dialects read schema objects only.
- `type-union` (warning): `type` as an array of type names; single-`type` dialects (the OpenAPI subset of
  Gemini's function declarations) reject it or drop the constraint.
- `remote-ref` (warning): a `$ref` outside the document (no `$id` declared in it); clients fetch nothing.
- `untyped-schema` (warning): a schema object with no validation keyword: it accepts anything.

Paths are written as the official CLI writes them: `inputSchema.properties.city`, `items[0]`, `["a b"]`.
Pure: no IO, no Qt.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

ERROR, WARNING = "error", "warning"
MAX_DEPTH = 64

BOOLEAN_VALUED = frozenset(("additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"))
ONE_SCHEMA = ("items", "contains", "not", "propertyNames", "if", "then", "else", "additionalProperties",
              "unevaluatedProperties", "additionalItems", "unevaluatedItems", "contentSchema")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions")
CONSTRAINING = frozenset((
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "format", "contentMediaType", "contentEncoding", "contentSchema",
    "maxItems", "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties",
    "required", "dependentRequired", "allOf", "anyOf", "oneOf", "not", "items", "prefixItems", "contains",
    "additionalItems", "unevaluatedItems", "properties", "patternProperties", "additionalProperties",
    "unevaluatedProperties", "propertyNames", "dependentSchemas", "dependencies", "$ref", "$dynamicRef",
    "$recursiveRef"))
TYPES = frozenset(("null", "boolean", "object", "array", "number", "string", "integer"))
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")

FREE_FORM = ('declare what the value is, e.g. {"type": "object", "additionalProperties": true} for any object '
             "(a change of contract: as written it accepts every JSON value)")


@dataclass(frozen=True)
class Problem:
    rule: str  # boolean-schema, type-union, remote-ref, untyped-schema
    severity: str
    schema: str  # inputSchema or outputSchema
    path: str  # inside that schema, "" for its root
    issue: str
    suggestion: str

    @property
    def where(self) -> str:
        return f"{self.schema}.{self.path}" if self.path else self.schema

    def as_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "severity": self.severity, "schema": self.schema, "path": self.path,
                "issue": self.issue, "suggestion": self.suggestion}


def _child(path: str, key: str) -> str:
    if _IDENT.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def _subschemas(node: dict[str, Any], path: str) -> list[tuple[Any, str, str]]:
    out: list[tuple[Any, str, str]] = []
    for key in SCHEMA_MAPS:
        value = node.get(key)
        if isinstance(value, dict):
            out.extend((sub, _child(_child(path, key), str(name)), key) for name, sub in value.items())
    for key in SCHEMA_LISTS:
        value = node.get(key)
        if isinstance(value, list):
            out.extend((sub, f"{_child(path, key)}[{i}]", key) for i, sub in enumerate(value))
    for key in ONE_SCHEMA:
        if key not in node:
            continue
        value = node[key]
        if key == "items" and isinstance(value, list):
            out.extend((sub, f"{_child(path, key)}[{i}]", key) for i, sub in enumerate(value))
        else:
            out.append((value, _child(path, key), key))
    return out


def _declares_id(node: Any, depth: int = 0) -> bool:
    if depth > MAX_DEPTH or not isinstance(node, dict):
        return False
    if isinstance(node.get("$id"), str) and node["$id"]:
        return True
    return any(_declares_id(sub, depth + 1) for sub, _p, _k in _subschemas(node, ""))


def _constrains(node: dict[str, Any]) -> bool:
    return any(key in CONSTRAINING for key in node) or ("if" in node and ("then" in node or "else" in node))


class _Walk:
    def __init__(self, schema: str, has_ids: bool) -> None:
        self.schema = schema
        self.has_ids = has_ids
        self.found: list[Problem] = []

    def add(self, rule: str, severity: str, path: str, issue: str, suggestion: str) -> None:
        self.found.append(Problem(rule, severity, self.schema, path, issue, suggestion))

    def visit(self, node: Any, path: str, keyword: str | None, depth: int) -> None:
        if depth > MAX_DEPTH:
            return
        if isinstance(node, bool):
            if keyword is None or keyword not in BOOLEAN_VALUED:
                self._boolean(node, path, keyword)
            return
        if not isinstance(node, dict):
            return
        self._node(node, path, keyword)
        for sub, sub_path, sub_keyword in _subschemas(node, path):
            self.visit(sub, sub_path, sub_keyword, depth + 1)

    def _boolean(self, value: bool, path: str, keyword: str | None) -> None:
        if value:
            fix = ("use {}, the always-true schema as an object (under `not` it means exactly the same)"
                   if keyword == "not" else FREE_FORM)
        else:
            fix = ('use {"not": {}}, the always-false schema as an object (removing the entry would allow the '
                   "value instead of forbidding it)")
        self.add("boolean-schema", ERROR, path,
                 f"a bare `{str(value).lower()}` stands where a schema object is expected; tool-calling dialects "
                 "read schema objects only", fix)

    def _node(self, node: dict[str, Any], path: str, keyword: str | None) -> None:
        kind = node.get("type")
        if (isinstance(kind, list) and kind and all(isinstance(t, str) and t in TYPES for t in kind)
                and len(set(kind)) == len(kind)):
            branches = ", ".join(f'{{"type": "{t}"}}' for t in kind)
            caveat = (" (a dialect without a null type, such as OpenAPI 3.0, spells nullability `nullable: true`; "
                      "no one spelling suits both)") if "null" in kind else ""
            self.add("type-union", WARNING, path,
                     f"`type` is a list ({json.dumps(kind)}): valid JSON Schema, but a client that maps tool schemas "
                     "onto a single-type dialect (the OpenAPI subset of Gemini function declarations) may reject "
                     "the tool or drop the constraint",
                     f'use anyOf with one type per branch: {{"anyOf": [{branches}]}} (an optional property is not '
                     f"the same contract as a null one){caveat}")
        ref = node.get("$ref")
        if isinstance(ref, str) and ref and not ref.startswith("#") and not self.has_ids:
            self.add("remote-ref", WARNING, path,
                     f"`$ref` points outside this schema ({ref}); clients do not fetch remote schemas, so the "
                     "constraint is dropped or the tool refused",
                     "inline the schema it points to, or put it under $defs and refer to #/$defs/NAME")
        if keyword != "not" and not _constrains(node):
            self.add("untyped-schema", WARNING, path,
                     "this schema has no validation keyword at all, so it accepts any value (a bare `true` in "
                     "object form)", FREE_FORM)


def tool_problems(tool: Any) -> list[Problem]:
    """The portability problems of one tool's `inputSchema` and `outputSchema`."""
    if not isinstance(tool, dict):
        return []
    found: list[Problem] = []
    for key in ("inputSchema", "outputSchema"):
        if key in tool:
            walk = _Walk(key, _declares_id(tool[key]))
            walk.visit(tool[key], "", None, 0)
            found.extend(walk.found)
    return found


def review(tools: list[Any]) -> list[tuple[str, list[Problem]]]:
    """Each tool with problems, by name, in list order."""
    out = []
    for tool in tools:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            problems = tool_problems(tool)
            if problems:
                out.append((tool["name"], problems))
    return out


def counts(reviewed: list[tuple[str, list[Problem]]]) -> tuple[int, int]:
    errors = sum(1 for _n, ps in reviewed for p in ps if p.severity == ERROR)
    return errors, sum(len(ps) for _n, ps in reviewed) - errors


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary(reviewed: list[tuple[str, list[Problem]]]) -> str:
    errors, warnings = counts(reviewed)
    return f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')} across {_plural(len(reviewed), 'tool')}"


def report(reviewed: list[tuple[str, list[Problem]]]) -> str:
    """The `--strict` report: per problem the tool, path, issue and suggested fix; then the counts."""
    lines: list[str] = []
    for name, problems in reviewed:
        for p in problems:
            lines += [f"{'Error' if p.severity == ERROR else 'Warning'}: tool {json.dumps(name)}",
                      f"  Path: {p.where}", f"  Issue: {p.issue}", f"  Suggestion: {p.suggestion}", ""]
    lines.append(f"{summary(reviewed)}.")
    return "\n".join(lines)


def as_json(reviewed: list[tuple[str, list[Problem]]]) -> list[dict[str, Any]]:
    """`schemaFindings` of `--format json`: per tool its name and findings."""
    return [{"toolName": name, "findings": [p.as_json() for p in problems]} for name, problems in reviewed]
