"""Every JSON Schema validator of the package is built by `inspector.schemarefs`, which never follows a `$ref`
out of its document; elsewhere the validator libraries may lend their exception and type names, nothing else.

Read from the syntax tree of every module (aliases followed: `import jsonschema_rs as j; j.validator_for(…)`,
`from jsonschema import Draft7Validator as D`, `getattr(jsonschema, name)`, `importlib.import_module("…")`),
so a validator built another way fails here before it can fetch anything."""

from __future__ import annotations

import ast

import pytest
import refs_peers
from importgraph import PKG, modules

from inspector import schemarefs
from inspector.checks import definitions, frames, sample
from inspector.collection import expect
from inspector.forms import big_check, validation

ONE_PLACE = "inspector.schemarefs"
LIBRARIES = {"jsonschema", "jsonschema_rs", "referencing", "jsonschema_specifications", "fastjsonschema",
             "hypothesis_jsonschema", "openapi_schema_validator"}
# names that build nothing: exceptions, and the types annotations use
HARMLESS = {"exceptions", "protocols", "ValidationError", "SchemaError", "ReferencingError", "FormatChecker",
            "Validator", "Unresolvable", "ValidationErrorKind"}


def _library(module: str | None) -> bool:
    return bool(module) and module.split(".")[0] in LIBRARIES


def _chain(node: ast.AST) -> tuple[str | None, list[str]]:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return (node.id if isinstance(node, ast.Name) else None), parts[::-1]


def builders(source: str) -> list[str]:
    """Where `source` reaches a validator library for more than an exception or a type name."""
    tree = ast.parse(source)
    aliases: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _library(a.name):
                    aliases.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and _library(node.module):
            for a in node.names:
                if a.name not in HARMLESS:
                    found.append(f"line {node.lineno}: from {node.module} import {a.name}")
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:  # a chain once, at its outermost name
            root, parts = _chain(node)
            if root in aliases and any(p not in HARMLESS for p in parts):
                found.append(f"line {node.lineno}: {root}.{'.'.join(parts)}")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            first = node.args[0] if node.args else None
            if name == "getattr" and isinstance(first, ast.Name) and first.id in aliases:
                found.append(f"line {node.lineno}: getattr({first.id}, …)")
            if name in ("import_module", "__import__") and isinstance(first, ast.Constant) \
                    and isinstance(first.value, str) and _library(first.value):
                found.append(f"line {node.lineno}: {name}({first.value!r})")
    return sorted(set(found))


@pytest.mark.parametrize("source", [
    "import jsonschema_rs\njsonschema_rs.validator_for({})",
    "import jsonschema_rs as j\nj.Draft7Validator({})",
    "import jsonschema_rs as j\nj.meta.validate({})",
    "import jsonschema\njsonschema.validate(1, {})",
    "import jsonschema as js\nv = js.Draft202012Validator\nv({})",
    "from jsonschema import Draft7Validator as D\nD({})",
    "from jsonschema import validators\nvalidators.validator_for({})",
    "from jsonschema.validators import validator_for\n",
    "import jsonschema.validators\njsonschema.validators.validator_for({})",
    "from referencing import Registry as R\nR()",
    "import referencing\nreferencing.Registry()",
    "import jsonschema\ncls = getattr(jsonschema, 'Draft7Validator')",
    "import importlib\nimportlib.import_module('jsonschema_rs').validator_for({})",
    "def f():\n    import jsonschema_rs as rs\n    return rs.validator_for({})",
])
def test_the_scan_sees_a_validator_built_another_way(source):
    assert builders(source), source


@pytest.mark.parametrize("source", [
    "import jsonschema\ntry:\n    pass\nexcept jsonschema.SchemaError:\n    pass",
    "from jsonschema.exceptions import ValidationError\n",
    "from jsonschema import FormatChecker\n",
    "from inspector import schemarefs\nschemarefs.rust_validator({})",
])
def test_the_scan_lets_exceptions_and_types_through(source):
    assert builders(source) == []


@pytest.mark.parametrize("name", sorted(n for n in modules() if n != ONE_PLACE))
def test_validators_are_built_in_one_place(name):
    path = modules()[name].path
    found = builders(path.read_text())
    assert not found, f"{path.relative_to(PKG.parent)} builds a validator itself: {found}; use inspector.schemarefs"


# --------------------------------------------------------------------------------- what the one place does

@pytest.fixture
def listener():
    yield from refs_peers.listening()


@pytest.fixture
def token_file(tmp_path):
    return refs_peers.token_file(tmp_path)


def refs(listener, token_file):
    return {"remote": listener.url("schema.json"), "file": token_file.as_uri() + "#/token", "relative": "other.json",
            "urn": "urn:example:schema"}


@pytest.mark.parametrize("kind", ["remote", "file", "relative", "urn"])
def test_every_validator_refuses_a_ref_out_of_its_document(kind, listener, token_file):
    ref = refs(listener, token_file)[kind]
    schema = {"type": "object", "properties": {"p": {"$ref": ref}}}
    value = {"p": "FAKE"}
    said = [validation.Checker(schema, fast=fast).problems(value)[0][1] for fast in (False, True)]
    assert schemarefs.rust_checker(schema) is None
    with pytest.raises(validation.SchemaProblem) as raised:
        validation.validate(schema, value)
    said.append(str(raised.value))
    with pytest.raises(schemarefs.RefRefused) as refused:
        schemarefs.rust_validator(schema)
    said.append(str(refused.value))
    said.append(definitions.schema_problem(schema) or "")
    said.append(expect.schema_problem(schema, value) or "")
    assert sample.is_valid(schema, value) is False
    assert frames._arguments_valid(schema, value) is False
    steps = big_check.valid_in_steps(schema, value)
    with pytest.raises(StopIteration) as done:
        while True:
            next(steps)
    assert done.value.value is False
    shown = ref.split("#")[0]
    for words in said:
        assert f"refers to {shown} outside this schema; Spyglass never fetches schema references" in words, words
        assert refs_peers.TOKEN not in words
    assert listener.connections == 0


class _NotAsked:
    def iter_errors(self, instance):
        raise AssertionError("python-jsonschema was asked about a valid instance")


def test_a_fast_checker_takes_jsonschema_rs_yes_and_python_jsonschema_words():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}, "e": {"format": "email"},
                                               "r": {"$ref": "#/$defs/r"}},
              "$defs": {"r": {"type": "string"}}, "required": ["n"], "additionalProperties": False}
    checker = validation.Checker(schema, fast=True)
    words = checker._validator
    checker._validator = _NotAsked()
    assert checker.problems({"n": 2, "e": "not an email", "r": "x"}) == []  # formats are annotations in both
    checker._validator = words
    assert checker.problems({"n": 0, "r": 1, "x": 1}) == validation.Checker(schema).problems({"n": 0, "r": 1, "x": 1})
    assert [p.keyword for p in checker.problems({"n": 0, "r": 1, "x": 1})] == ["additionalProperties", "minimum",
                                                                                 "type"]
    from inspector.agent.ops import checker_of

    assert checker_of(schema)._fast is not None  # the agent's calls are checked the fast way


@pytest.mark.parametrize("dialect, fast", [("http://json-schema.org/draft-04/schema#", True),
                                           ("http://json-schema.org/draft-07/schema#", True),
                                           ("https://example.com/my-own-meta.json", False)])
def test_a_fast_checker_reads_the_schema_in_the_same_dialect(dialect, fast, listener):
    below = {"maximum": 5, "exclusiveMaximum": True} if "draft-04" in dialect else {"exclusiveMaximum": 5}
    schema = {"$schema": dialect, "type": "object", "properties": {"n": below}}
    if "example.com" in dialect:
        schema["$schema"] = listener.url("meta.json")
    checker = validation.Checker(schema, fast=True)
    assert (checker._fast is not None) is fast  # a dialect the two libraries might read apart: python alone
    assert checker.problems({"n": 5}) == validation.Checker(schema).problems({"n": 5})
    assert checker.problems({"n": 4}) == validation.Checker(schema).problems({"n": 4})
    assert listener.connections == 0


def test_references_inside_the_document_still_resolve():
    schema = {"$id": "https://example.com/root.json", "type": "object",
              "$defs": {"word": {"type": "string"}, "named": {"$anchor": "n", "type": "integer"},
                        "other": {"$id": "other.json", "type": "boolean"}},
              "properties": {"a": {"$ref": "#/$defs/word"}, "b": {"$ref": "#n"}, "c": {"$ref": "other.json"},
                             "d": {"$ref": "https://example.com/other.json"}}}
    good, bad = {"a": "x", "b": 1, "c": True, "d": False}, {"a": 1, "b": "x", "c": 1, "d": "x"}
    assert schemarefs.outside(schema) is None
    assert validation.validate(schema, good) == []
    assert [p for p, _m in validation.validate(schema, bad)] == ["/a", "/b", "/c", "/d"]
    assert schemarefs.rust_validator(schema).is_valid(good)
    assert not schemarefs.rust_validator(schema).is_valid(bad)


def test_a_dialect_meta_schema_is_read_from_the_library_not_fetched(listener):
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"type": "string"}},
              "properties": {"p": {"$ref": "#/definitions/a"}}}
    assert validation.validate(draft7, {"p": 1})[0][0] == "/p"
    assert definitions.schema_problem(draft7) is None
    with pytest.raises(Exception) as raised:
        schemarefs.rust_meta_validate({"$schema": listener.url("meta.json"), "type": "object"})
    assert schemarefs.refused(raised.value)
    assert listener.connections == 0


def test_a_schema_that_breaks_its_dialect_is_walked_without_raising():
    """Found by the forms' fuzz test: `"items": []` (a list where 2020-12 wants a schema) beside a remote `$ref`
    made the walk raise AttributeError instead of naming the reference."""
    from inspector import schemarefs

    schema = {"type": "object", "properties": {"b": {"type": "array", "items": []}, "k": {"$ref": "http://x/y"}}}
    assert "http://x/y" in (schemarefs.outside(schema) or "")
    assert schemarefs.outside({"type": "object", "properties": {"b": {"items": [1, "x", None]}}}) is None
