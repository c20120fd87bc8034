"""The pure half of the forms: normalisation and widget choice, no Qt."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.forms.schema import SchemaTree, SchemaTrouble, merge
from inspector.forms.validation import Checker, coerce, validate
from inspector.forms.widget_choice import choose_widget, constraints_text, placeholder

ROOT = Path(__file__).resolve().parents[2]
PURE = ["__init__.py", "schema.py", "widget_choice.py", "validation.py", "memory.py"]


@pytest.mark.parametrize("name", PURE)
def test_pure_modules_do_not_import_qt(name):
    tree = ast.parse((ROOT / "inspector" / "forms" / name).read_text())
    mods = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            mods.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level and node.module:
            # inspector.private (0600 files) is stdlib only
            assert node.module.split(".")[0] in ("schema", "widget_choice", "validation", "memory",
                                                 "private"), node.module
    assert not mods & {"PySide6", "qasync", "shiboken6"}


def test_cli_path_never_loads_qt():
    code = ("import sys; import inspector.forms, inspector.forms.validation, inspector.forms.schema, "
            "inspector.forms.widget_choice; from inspector.forms.validation import validate, coerce, Checker; "
            "Checker({'type': 'object'}).errors({}); "
            "assert not [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))], 'Qt loaded'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


def test_schema_form_is_exposed_lazily():
    code = ("import sys, inspector.forms as f; assert 'PySide6' not in sys.modules; "
            "assert 'SchemaForm' in dir(f); from inspector.forms import SchemaForm, Registry; "
            "assert 'PySide6.QtWidgets' in sys.modules and SchemaForm.__name__ == 'SchemaForm'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


def shape(schema, sub=None):
    t = SchemaTree(schema)
    return t, t.shape(schema if sub is None else sub)


@pytest.mark.parametrize("schema,kind,widget", [
    ({"type": "string"}, "scalar", "text"),
    ({"type": "string", "format": "date-time"}, "scalar", "date-time"),
    ({"type": "string", "maxLength": 1000}, "scalar", "textarea"),
    ({"type": "string", "contentMediaType": "text/plain"}, "scalar", "textarea"),
    ({"type": "string", "writeOnly": True}, "scalar", "password"),
    ({"type": "string", "format": "email", "x-hint": "textarea"}, "scalar", "textarea"),  # x-hint > format
    ({"type": "string", "format": "email", "enum": ["a@b.c"]}, "enum", "select"),
    ({"type": "integer"}, "scalar", "integer"),
    ({"type": "boolean"}, "scalar", "checkbox"),
    ({"type": "null"}, "scalar", "null"),
    ({"enum": [1, "a", None]}, "enum", "select"),
    ({"const": {"a": 1}}, "const", ""),
    ({"oneOf": [{"const": 1, "title": "One"}, {"const": 2, "title": "Two"}]}, "enum", "select"),
    ({"type": ["string", "null"]}, "nullable", ""),
    ({"anyOf": [{"type": "string"}, {"type": "null"}]}, "nullable", ""),
    ({"type": ["string", "integer"]}, "choice", ""),
    ({"oneOf": [{"type": "object"}, {"type": "array"}]}, "choice", ""),
    ({"type": "object", "properties": {"a": {}}}, "object", ""),
    ({"type": "object", "properties": {}}, "object", ""),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, "map", ""),
    ({"type": "object", "patternProperties": {"^x": {}}}, "map", ""),
    ({"type": "object"}, "free", ""),
    ({}, "free", ""),
    (True, "free", ""),
    (False, "never", ""),
    ({"type": "array", "items": {"type": "string"}}, "array", ""),
    ({"type": "array", "prefixItems": [{"type": "string"}]}, "tuple", ""),
    ({"type": "array", "items": [{"type": "string"}]}, "tuple", ""),
    ({"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": True}, "multiselect", ""),
    ({"minimum": 3}, "scalar", "number"),
    ({"properties": {"a": {}}}, "object", ""),
    ({"type": "strange"}, "raw", ""),
    ({"$ref": "#/nowhere"}, "raw", ""),
])
def test_kinds_and_widgets(schema, kind, widget):
    _, s = shape(schema)
    assert s.kind == kind, s.reason
    if widget:
        assert s.widget == widget


def test_refs_defs_definitions_and_siblings():
    root = {"$defs": {"C": {"type": "string", "enum": ["r", "g"], "title": "Colour"}},
            "definitions": {"B": {"type": "boolean"}},
            "properties": {"c": {"$ref": "#/$defs/C", "default": "g", "title": "Mine"},
                           "b": {"$ref": "#/definitions/B"}, "a": {"$ref": "#anchor"}},
            "x": {"$anchor": "anchor", "type": "integer"}}
    t = SchemaTree(root)
    c = t.shape(root["properties"]["c"])
    assert c.kind == "enum" and c.default == "g" and c.title == "Mine"  # siblings win
    assert t.shape(root["properties"]["b"]).widget == "checkbox"
    assert t.shape(root["properties"]["a"]).widget == "integer"


def test_recursion_is_marked_not_followed():
    root = {"$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}},
            "$ref": "#/$defs/N"}
    t = SchemaTree(root)
    top = t.shape(root)
    assert top.kind == "object" and not top.recursive
    (_, sub, _), = t.properties(top)
    nxt = t.shape(sub, top.refs, 1)
    assert nxt.kind == "object" and nxt.recursive


def test_cyclic_and_broken_refs_become_raw_with_reasons():
    t = SchemaTree({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}})
    s = t.shape({"$ref": "#/$defs/a"})
    assert s.kind == "raw" and "cycle" in s.reason
    s = t.shape({"$ref": "other.json#/x"})
    assert s.kind == "raw" and "outside" in s.reason


def test_all_of_merges_properties_required_and_bounds():
    t = SchemaTree({})
    s = t.shape({"allOf": [{"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}},
                            "required": ["a"]},
                           {"properties": {"a": {"maximum": 9}, "b": {"type": "string"}}, "required": ["b"]}]})
    assert s.kind == "object"
    props = {k: (sub, req) for k, sub, req in t.properties(s)}
    assert set(props) == {"a", "b"} and props["a"][1] and props["b"][1]
    a = t.shape(props["a"][0])
    assert a.schema["minimum"] == 0 and a.schema["maximum"] == 9 and a.widget == "integer"
    assert merge({"type": ["number", "null"]}, {"type": "integer"})["type"] == "integer"
    with pytest.raises(SchemaTrouble):
        merge({"type": "string"}, {"type": "object"})


def test_nullable_inner_and_variants():
    t = SchemaTree({})
    s = t.shape({"anyOf": [{"type": "string", "format": "email"}, {"type": "null"}], "title": "E"})
    inner = t.shape(t.nullable_inner(s))
    assert inner.kind == "scalar" and inner.widget == "email"
    s = t.shape({"type": "object", "oneOf": [{"properties": {"id": {}}, "required": ["id"]},
                                             {"properties": {"name": {}}, "required": ["name"]}]})
    assert [label for label, _ in t.variants(s)] == ["with id", "with name"]
    s = t.shape({"oneOf": [{"type": "object", "properties": {"k": {"const": "a"}}},
                           {"type": "object", "properties": {"k": {"const": "b"}}}]})
    assert t.discriminator(s) == "k"


def test_enum_limits():
    t = SchemaTree({})
    assert t.shape({"enum": [str(i) for i in range(10_000)]}).widget == "completer"
    s = t.shape({"enum": [{"i": i} for i in range(10_000)]})
    assert s.kind == "raw" and "too large" in s.reason


def test_widget_choice_helpers():
    assert choose_widget({"x-hint": "password"}, "string") == "password"
    assert choose_widget({"x-hint": "checkbox"}, "string") == "text"  # a hint that does not fit is ignored
    assert placeholder({"examples": ["Paris"]}, "text") == "e.g. Paris"
    assert placeholder({}, "date") == "YYYY-MM-DD"
    assert constraints_text({"minimum": 5, "maximum": 480, "multipleOf": 5}, "integer") == \
        "whole number, 5 – 480, multiple of 5"
    assert constraints_text({"exclusiveMinimum": 0}, "number") == "> 0"


def test_checker_dialects_formats_and_problems():
    c = Checker({"type": "object", "properties": {"when": {"type": "string", "format": "date-time"},
                                                  "u": {"type": "string", "format": "uri"}},
                 "required": ["x"]})
    problems = c.problems({"when": "yesterday", "u": "not a uri"}, formats=True)
    assert [p[0] for p in problems] == ["", "/u", "/when"]
    assert problems[0].missing == "x"
    # formats are annotations: not problems unless asked for, each a warning
    assert [p[0] for p in c.problems({"when": "yesterday", "u": "not a uri"})] == [""]
    assert [(p[0], p.keyword) for p in c.warnings({"when": "yesterday", "u": "not a uri", "x": 1})] == [
        ("/u", "format"), ("/when", "format")]
    assert c.errors({"when": "2030-01-31T09:30:00Z", "u": "https://x.y", "x": 1}) == []
    d7 = Checker({"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
                  "items": [{"type": "integer"}], "additionalItems": False})
    assert d7.errors([1]) == [] and d7.errors([1, 2])
    assert Checker([1]).errors({}) and Checker({"$ref": "#/nope"}).errors({})
    assert Checker({"$defs": {"a": {"type": "integer"}}}).matches({"$ref": "#/$defs/a"}, 3)


def test_cli_functions_keep_their_behaviour():
    schema = {"type": "object", "properties": {"n": {"type": "number"}, "s": {"type": "string"}}}
    assert validate(schema, {"n": "x"}) == [("/n", "'x' is not of type 'number'")]
    assert coerce(schema, "n", "5") == 5 and coerce(schema, "s", "5") == "5"
