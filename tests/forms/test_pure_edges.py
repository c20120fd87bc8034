"""The pure half of the forms at its edges: schemas that are broken, odd or merely unusual, as real tool
schemas are (the spec's, the corpus servers', pydantic's). No Qt; every answer is a value or a message."""

from __future__ import annotations

import datetime
import json

import pytest
from corpus_tools import CORPUS

from inspector.forms import validation
from inspector.forms.memory import MAX_BYTES, MAX_ENTRIES, ArgumentMemory, strip_secrets
from inspector.forms.schema import SchemaTree, SchemaTrouble, merge
from inspector.forms.validation import Checker, SchemaProblem, coerce, json_type, property_types, validate
from inspector.forms.widget_choice import choose_widget, constraints_text, placeholder


def corpus_tool(server: str, name: str) -> dict:
    tools = json.loads((CORPUS / f"{server}.json").read_text())["tools"]
    return next(t["inputSchema"] for t in tools if t["name"] == name)


# `edit_file` of @modelcontextprotocol/server-filesystem: draft-07, an array of objects
EDIT_FILE = corpus_tool("filesystem", "edit_file")
# `adopt_pet` of the SDK's pydantic server: $defs, a discriminated oneOf, nullable anyOf
ADOPT_PET = corpus_tool("sdk_pydantic", "adopt_pet")
CYCLE = {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}


def nots(levels: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"not": schema}
    return schema


# --- validate(), the command line's check --------------------------------------------------------

@pytest.mark.parametrize("schema", [True, {}])
def test_a_schema_that_allows_anything_has_no_errors(schema):
    assert validate(schema, {"anything": [1, None]}) == []


@pytest.mark.parametrize("schema, words", [
    ([{"type": "object"}], "the schema is list, not an object"),
    ("object", "the schema is str, not an object"),
    ({"type": "object", "properties": {"n": {"type": "count"}}}, "the schema is invalid: 'count' is not valid under"),
    ({"type": "object", "properties": {"id": {"type": "string", "pattern": "["}}},
     "the schema is invalid: '[' is not a 'regex'"),
    (CYCLE, "the schema's references form a cycle that never ends"),
    ({"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}},
     "the schema cannot be used: _WrappedReferencingError: PointerToNowhere: '/$defs/missing' does not exist"),
    ({"properties": {"x": {"$ref": "https://example.com/schemas/x.json"}}},
     "the schema cannot be used: a $ref refers to https://example.com/schemas/x.json outside this schema; "
     "Spyglass never fetches schema references"),
])
def test_an_unusable_schema_is_a_schema_problem_that_says_why(schema, words):
    with pytest.raises(SchemaProblem) as info:
        validate(schema, {"x": 1})
    assert str(info.value).startswith(words)


def test_a_deep_but_finite_schema_is_checked_not_called_a_cycle():
    """200 nested `not`s is legal: the CLI said "references form a cycle" and skipped validation."""
    assert validate(nots(200), "text") == [] and validate(nots(201), 5) == []
    assert validate(nots(200), 5)[0][1].startswith("5 should not be valid under {'not': {'not':")


def test_validate_follows_the_schemas_dialect():
    assert validate(EDIT_FILE, {"path": "/tmp/a", "edits": [{"oldText": "a"}]}) == [
        ("/edits/0", "'newText' is a required property")]
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "number", "maximum": 5,
              "exclusiveMaximum": True}
    assert validate(draft4, 5) == [("", "5 is greater than or equal to the maximum of 5")]


# --- coerce(), command-line KEY=VALUE ------------------------------------------------------------

SEARCH = {"type": "object", "properties": {
    "query": {"type": "string"}, "limit": {"type": ["integer", "null"]}, "scope": {"enum": ["all", 7, None]},
    "exact": {"const": True}, "when": {"type": ["string", "number"]}, "tags": {"type": "array"},
    "weird": {"type": [5, "boolean"]}, "free": {"description": "anything"}, "bad": "not a schema"}}


@pytest.mark.parametrize("key, text, value", [
    ("query", "42", "42"),           # a string property keeps digits as text
    ("limit", "42", 42),
    ("limit", "null", None),
    ("limit", "many", "many"),       # not JSON: the text, for the schema check to refuse
    ("scope", "7", 7),               # enum values' types
    ("scope", "all", "all"),
    ("scope", "null", None),
    ("exact", "true", True),          # const's type
    ("when", "20.5", 20.5),           # a number is one of its types,
    ("when", "2030", 2030),           # and an integer is a number (it used to stay the text "2030")
    ("when", "soon", "soon"),
    ("when", "[1]", "[1]"),           # JSON, but not one of its types: the text (it allows strings)
    ("tags", '["a", "b"]', ["a", "b"]),
    ("weird", "true", True),          # non-string type names are ignored
    ("free", '{"a": 1}', {"a": 1}),  # no type: JSON when it parses
    ("free", "plain words", "plain words"),
    ("bad", "3", 3),                 # a property that is not a schema: as if undeclared
    ("undeclared", "[1, 2]", [1, 2]),
])
def test_coerce_reads_a_flag_value_as_the_property_wants_it(key, text, value):
    assert coerce(SEARCH, key, text) == value and type(coerce(SEARCH, key, text)) is type(value)


def test_property_types_of_schemas_that_say_little():
    assert property_types(None, "a") == set() and property_types({"properties": None}, "a") == set()
    assert property_types(SEARCH, "scope") == {"string", "integer", "null"}
    assert property_types(SEARCH, "free") == set() and property_types(SEARCH, "bad") == set()
    assert property_types({"properties": {"a": {"enum": "abc"}}}, "a") == set()


@pytest.mark.parametrize("value, name", [(None, "null"), (True, "boolean"), (3, "integer"), (2.5, "number"),
                                         ("x", "string"), ([], "array"), ({}, "object"),
                                         (datetime.date(2030, 1, 1), "unknown")])
def test_json_type_names(value, name):
    assert json_type(value) == name


# --- Checker, the live form's check --------------------------------------------------------------

@pytest.mark.parametrize("schema", [True, {}])
def test_a_checker_of_anything_accepts_everything(schema):
    c = Checker(schema)
    assert c.problem is None and c.problems({"x": [1]}) == [] and c.matches({"type": "string"}, 5)


@pytest.mark.parametrize("schema, words", [
    (5, "the schema is int, not an object"),
    ({"type": "object", "properties": 5}, "the schema is invalid: 5 is not of type 'object'"),
    # too big for the meta-schema check (more than 500 subschemas), and an `$id` that is not a string
    ({"$id": 5, "type": "object", "properties": {f"field_{i}": {"type": "string"} for i in range(600)}},
     "the schema cannot be used: AttributeError"),
])
def test_an_unusable_schema_is_one_problem_at_the_root(schema, words):
    c = Checker(schema)
    assert c.problem is not None and c.problem.startswith(words)
    (problem,) = c.problems({"field_1": "x"})
    assert problem == ("", c.problem) and problem.keyword == "schema"
    assert c.errors({}) == [("", c.problem)]
    assert c.matches(True, 1) is False  # nothing is known to match a schema that cannot be used


def test_checker_problems_of_references_that_do_not_resolve():
    (problem,) = Checker(CYCLE).problems(1)
    assert problem == ("", "the schema's references form a cycle that never ends")
    (problem,) = Checker({"properties": {"x": {"$ref": "#/$defs/missing"}}}).problems({"x": 1})
    assert problem[1].startswith("the schema cannot be used: _WrappedReferencingError: PointerToNowhere")
    assert Checker(ADOPT_PET).matches({"$ref": "#/$defs/Parrot"}, {"kind": "parrot"}) is False
    assert Checker(ADOPT_PET).matches({"$ref": "#/$defs/Cat"}, {"kind": "cat"}) is True


def test_checker_stops_at_the_limit_and_names_missing_keys():
    schema = {"type": "object", "properties": {f"n{i}": {"type": "integer"} for i in range(20)},
              "required": ["id"]}
    everything_wrong = {f"n{i}": "x" for i in range(20)}
    assert len(Checker(schema).problems(everything_wrong)) == 21
    few = Checker(schema).problems(everything_wrong, limit=3)
    assert len(few) == 3
    missing = [p for p in Checker(ADOPT_PET).problems({"pet": {"kind": "cat"}}) if p.keyword == "required"]
    assert [(p[0], p.missing) for p in missing] == [("", "owner")]


def test_checker_handles_deep_nesting():
    deep = Checker(nots(300))
    assert deep.problem is None and deep.problems("text") == [] and deep.errors(5)[0][0] == ""


@pytest.mark.parametrize("fmt, good, bad", [
    ("date-time", ["2030-01-31T09:30:00Z", "2030-01-31t09:30:00+02:00", "2030-01-31 09:30:00.5z"],
     ["yesterday", "2030-02-30T09:00:00Z", "2030-01-31T25:00:00Z", "2030-01-31"]),
    ("time", ["09:30:00", "23:59:60Z", "12:00:00.25+01:00"], ["9:30", "24:00:00", "12:60:00", "noon"]),
    ("uri", ["https://example.com/a?b=c", "urn:isbn:0451450523", "mailto:ada@example.org"],
     ["example.com", "not a uri", "/relative/path"]),
    ("hostname", ["example.com", "localhost", "a-b.example.org."], ["exa_mple.com", "-bad.example", "a..b"]),
    ("duration", ["P1DT2H", "PT0.5S", "P3W"], ["P", "PT", "1 day", "P1H"]),
])
def test_formats_checked_without_optional_packages(fmt, good, bad):
    c = Checker({"type": ["string", "integer"], "format": fmt})
    for value in good:
        assert c.warnings(value) == [], (fmt, value)
    for value in bad:
        assert [(p[0], p[1]) for p in c.warnings(value)] == [("", f"{value!r} is not a {fmt!r}")], (fmt, value)
        assert c.errors(value) == []  # a format is an annotation: a warning, never an error
    assert c.warnings(5) == []  # formats apply to strings only


def test_long_enum_messages_are_clipped():
    c = Checker({"enum": [f"choice-{i:04d}" for i in range(300)]})
    ((where, message),) = c.errors("none of them")
    assert where == "" and len(message) == 1000 and message.endswith("…")


# --- SchemaTree: references ----------------------------------------------------------------------

ROOT = {"$defs": {"any": True, "none": False, "empty": {}, "Name": {"type": "string", "minLength": 1},
                  "Base": {"allOf": [{"type": "string"}]}},
        "properties": {"email": {"anyOf": [{"type": "string", "format": "email"}, {"type": "null"}],
                                 "description": "Where to send it"}}}


@pytest.mark.parametrize("schema, kind, widget, reason", [
    ({"$ref": 5}, "raw", "", "$ref is not a string"),
    ({"$ref": "#/properties/email/anyOf/0"}, "scalar", "email", ""),  # a JSON pointer through a list
    ({"$ref": "#/properties/email/anyOf/2"}, "raw", "", "$ref '#/properties/email/anyOf/2' does not resolve"),
    ({"$ref": "#/properties/email/anyOf/first"}, "raw", "", "does not resolve"),
    ({"$ref": "#nowhere"}, "raw", "", "$ref '#nowhere' does not resolve"),
    ({"$ref": "#/$defs/any", "type": "integer"}, "scalar", "integer", ""),  # siblings of `true` are the schema
    ({"$ref": "#/$defs/empty", "type": "boolean", "title": "On"}, "scalar", "checkbox", ""),
    ({"$ref": "#/$defs/none", "title": "Unused"}, "never", "", "the schema allows no value here"),
    ({"$ref": "#/properties/email/description", "title": "x"}, "raw", "",
     "$ref '#/properties/email/description' points to a str, not a schema"),
    ({"$ref": "#/$defs/Base", "allOf": [{"maxLength": 10}]}, "scalar", "text", ""),  # both allOf lists count
])
def test_references_and_their_siblings(schema, kind, widget, reason):
    s = SchemaTree(ROOT).shape(schema)
    assert (s.kind, s.widget) == (kind, widget) and reason in s.reason


def test_siblings_of_a_reference_with_allof_are_merged_with_its_target():
    s = SchemaTree(ROOT).shape({"$ref": "#/$defs/Base", "allOf": [{"maxLength": 10}]})
    assert s.schema["type"] == "string" and s.schema["maxLength"] == 10


# --- SchemaTree: shapes that fall back, and why --------------------------------------------------

@pytest.mark.parametrize("schema, reason", [
    (5, "the schema is a int, not an object"),
    ({"oneOf": [{"type": "string"}], "anyOf": [{"type": "null"}]}, "both oneOf and anyOf on one schema"),
    ({"oneOf": []}, "oneOf is not a non-empty list"),
    ({"anyOf": {"type": "string"}}, "anyOf is not a non-empty list"),
    ({"type": "object", "patternProperties": ["^x-"]}, "patternProperties is not an object"),
    ({"type": "array", "prefixItems": {"type": "string"}}, "prefixItems is not a list"),
    ({"allOf": {"type": "string"}}, "allOf is not a list"),
    ({"allOf": [{"type": "string"}, False]}, "allOf contains false: no value is valid"),
    ({"allOf": [{"type": "string"}, "string"]}, "allOf member is not a schema"),
    ({"allOf": [{"enum": ["a", "b"]}, {"enum": ["c"]}]}, "allOf combines enums with no value in common"),
    ({"allOf": [{"const": "a"}, {"const": "b"}]}, "allOf has two different 'const' that cannot be merged"),
])
def test_trouble_becomes_raw_json_with_a_reason(schema, reason):
    s = SchemaTree({}).shape(schema)
    assert s.kind == "raw" and s.reason == reason


def test_depth_limits():
    tree = SchemaTree({})
    assert tree.shape({"type": "string"}, depth=61).reason == "nested more than 60 levels deep"
    assert tree.shape({"type": "string"}, depth=60).kind == "scalar"
    deep: dict = {"type": "string"}
    for _ in range(3000):
        deep = {"allOf": [deep]}
    assert tree.shape(deep).reason == "the schema nests too deeply to render"


@pytest.mark.parametrize("hint", ["raw", "json"])
def test_x_hint_raw_edits_as_json(hint):
    assert SchemaTree({}).shape({"type": "object", "properties": {"a": {}}, "x-hint": hint}).kind == "free"


@pytest.mark.parametrize("schema, kind, types", [
    ({"minItems": 1}, "array", ("array",)),                 # kinds inferred from keywords alone
    ({"uniqueItems": True, "items": {"type": "integer"}}, "array", ("array",)),
    ({"pattern": "^[a-z]+$"}, "scalar", ("string",)),
    ({"contentMediaType": "text/markdown"}, "scalar", ("string",)),
])
def test_kinds_inferred_without_a_type(schema, kind, types):
    s = SchemaTree({}).shape(schema)
    assert (s.kind, s.types) == (kind, types)


# --- allOf and merge ------------------------------------------------------------------------------

def test_all_of_merges_nested_parts_and_keeps_the_tightest_bounds():
    s = SchemaTree({}).shape({"allOf": [True, {"allOf": [{"type": "integer", "minimum": 0}, {"minimum": 3}]},
                                        {"maximum": 9}, {"maximum": 5}, {"enum": [1, 3, 4, 5]}, {"enum": [3, 5, 7]}]})
    assert s.kind == "enum" and s.schema["minimum"] == 3 and s.schema["maximum"] == 5
    assert [v for _, v in s.options] == [3, 5]


def test_merge_keeps_validation_only_keywords_of_the_first_and_combines_the_rest():
    a = {"type": "object", "if": {"required": ["a"]}, "$defs": {"x": {}}, "items": {"type": "string"},
         "allOf": [{"minProperties": 1}], "additionalProperties": {"type": "string"}}
    b = {"if": {"required": ["b"]}, "$defs": {"y": {}}, "items": {"maxLength": 3}, "allOf": [{"maxProperties": 4}],
         "additionalProperties": False}
    out = merge(a, b)
    assert out["if"] == {"required": ["a"]} and out["$defs"] == {"x": {}}
    assert out["items"] == {"allOf": [{"type": "string"}, {"maxLength": 3}]}
    assert out["allOf"] == [{"minProperties": 1}, {"maxProperties": 4}]
    assert out["additionalProperties"] is False
    with pytest.raises(SchemaTrouble, match="allOf has two different 'minimum' that cannot be merged"):
        merge({"minimum": "0"}, {"minimum": 1})


# --- children of shapes ---------------------------------------------------------------------------

def test_value_schema_of_extra_keys():
    tree = SchemaTree({})
    headers = tree.shape({"type": "object", "patternProperties": {"^X-": {"type": "string"}},
                          "additionalProperties": {"type": "integer"}})
    assert headers.kind == "map"
    assert tree.value_schema(headers, "X-Trace") == {"type": "string"}
    assert tree.value_schema(headers, "count") == {"type": "integer"}
    assert tree.value_schema(tree.shape({"type": "object", "properties": {"a": {}}}), "b") is None
    broken = tree.shape({"type": "object", "patternProperties": {"[": {"type": "string"}}})
    assert broken.kind == "raw" and tree.value_schema(broken, "k") is None  # never raises on a bad pattern


def test_discriminator_from_consts_skips_properties_that_do_not_resolve():
    tree = SchemaTree({})
    s = tree.shape({"oneOf": [
        {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"$ref": "#/$defs/missing"}}},
        {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}}}]})
    assert s.kind == "choice" and tree.discriminator(s) == "kind"
    assert [label for label, _ in tree.variants(s)] == ["circle", "square"]
    mixed = tree.shape({"oneOf": [{"type": "object", "properties": {"kind": {"const": "a"}}}, {"type": "string"}]})
    assert tree.discriminator(mixed) is None
    broken = tree.shape({"oneOf": [{"$ref": "#/$defs/missing"}, {"type": "string"}]})
    assert broken.kind == "choice" and [label for label, _ in tree.variants(broken)] == ["option 1", "string"]
    pet = SchemaTree(ADOPT_PET)
    assert pet.discriminator(pet.shape(ADOPT_PET["properties"]["pet"])) == "kind"


# --- widget choice --------------------------------------------------------------------------------

@pytest.mark.parametrize("schema, json_type, widget", [
    ({"x-hint": "radio"}, "enum", "select"),
    ({"x-hint": "textarea"}, "enum", "select"),        # an enum is a drop-down whatever the hint says
    ({"x-hint": "number"}, "integer", "number"),
    ({"x-hint": "password"}, "number", "number"),      # a hint that does not fit is ignored
    ({"x-hint": "text"}, "boolean", "checkbox"),
    ({"x-hint": "CHECKBOX"}, "boolean", "checkbox"),
    ({"x-hint": "text"}, "null", "null"),
    ({"x-hint": 5}, "string", "text"),
    ({"format": "iri-reference"}, "string", "uri"),
    ({"format": "email"}, "enum", "select"),
    ({"contentMediaType": "application/json"}, "string", "textarea"),
    ({"contentMediaType": "image/png"}, "string", "text"),
    ({"maxLength": True}, "string", "text"),
    ({}, "object", "text"),
])
def test_choose_widget(schema, json_type, widget):
    assert choose_widget(schema, json_type) == widget


@pytest.mark.parametrize("schema, widget, text", [
    ({"examples": [{"path": "/tmp", "recursive": True}]}, "text", 'e.g. {"path": "/tmp", "recursive": true}'),
    ({"examples": [3]}, "integer", "e.g. 3"),
    ({"examples": [list(range(40))]}, "text", "e.g. [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, …"),
    ({"examples": []}, "uuid", "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"),
    ({"examples": "Paris"}, "hostname", "example.com"),
    (None, "ipv4", "192.0.2.1"),
    ({}, "checkbox", ""),
])
def test_placeholder(schema, widget, text):
    assert placeholder(schema, widget) == text


@pytest.mark.parametrize("schema, json_type, text", [
    ({"minimum": 0, "exclusiveMinimum": True, "maximum": 10, "exclusiveMaximum": True}, "number", "> 0, < 10"),
    ({"minimum": 0, "exclusiveMinimum": True}, "integer", "whole number, > 0"),  # draft-04 booleans
    ({"maximum": 10}, "integer", "whole number, ≤ 10"),
    ({"exclusiveMaximum": 1.5}, "number", "< 1.5"),
    ({"minimum": True}, "number", ""),
    ({}, "integer", ""),
    ({"minLength": 1}, "string", "at least 1 character"),
    ({"minLength": 3}, "string", "at least 3 characters"),
    ({"minLength": 0}, "string", ""),
    ({"minLength": 2, "maxLength": 8}, "string", "2–8 characters"),
    ({"maxLength": 10, "pattern": "^[a-z]+$", "format": "hostname"}, "string",
     "at most 10 characters, matches ^[a-z]+$, hostname"),
    ({"minimum": 1}, "boolean", ""),
])
def test_constraints_text(schema, json_type, text):
    assert constraints_text(schema, json_type) == text


# --- argument memory ------------------------------------------------------------------------------

def test_secrets_are_found_through_references():
    schema = {"type": "object", "$defs": {"Login": {"type": "object", "properties": {
        "user": {"type": "string"}, "pin": {"type": "string", "writeOnly": True}}}},
        "properties": {"login": {"$ref": "#/$defs/Login"}}}
    args = {"login": {"user": "ada", "pin": "1234"}, "AccessToken": "t", "Api-Key": "k", "note": "kept"}
    assert strip_secrets(schema, args) == {"login": {"user": "ada"}, "note": "kept"}
    assert strip_secrets(schema, "not an object") == "not an object"


def test_arguments_that_are_not_json_are_not_remembered(tmp_path):
    mem = ArgumentMemory(tmp_path / "args.json")
    mem.remember("srv", "schedule", {"when": datetime.date(2030, 1, 31)})  # a host passing Python values
    assert mem.recall("srv", "schedule") is None and not (tmp_path / "args.json").exists()
    assert strip_secrets({"type": "object"}, {1: "a key that is not a string"}) == {}


def test_big_arguments_are_not_remembered_and_old_entries_make_room(tmp_path):
    path = tmp_path / "args.json"
    mem = ArgumentMemory(path)
    mem.remember("srv", "write_file", {"content": "x" * (MAX_BYTES + 1)})
    assert mem.recall("srv", "write_file") is None
    full = {json.dumps(["srv", f"tool-{i}"]): {"args": {"i": i}} for i in range(MAX_ENTRIES)}
    path.write_text(json.dumps(full))  # a full file, oldest first
    mem = ArgumentMemory(path)
    mem.remember("srv", "tool-new", {"i": "new"})
    mem.remember("srv", "tool-newer", {"i": "newer"})
    again = ArgumentMemory(path)
    assert again.recall("srv", "tool-newer") == {"i": "newer"}
    assert again.recall("srv", "tool-0") is None and again.recall("srv", "tool-1") is None
    assert again.recall("srv", "tool-2") == {"i": 2} and len(json.loads(path.read_text())) == MAX_ENTRIES
    again.forget("srv", "tool-2")
    assert again.recall("srv", "tool-2") is None and again.recall("srv", "tool-3") == {"i": 3}


def test_memory_without_a_file_and_with_one_that_cannot_be_written(tmp_path):
    only_now = ArgumentMemory()
    only_now.remember("srv", "echo", {"message": "hi"})
    assert only_now.recall("srv", "echo") == {"message": "hi"}
    (tmp_path / "a-file").write_text("in the way")
    blocked = ArgumentMemory(tmp_path / "a-file" / "args.json")
    blocked.remember("srv", "echo", {"message": "hi"})  # the folder cannot be made: kept in memory, no error
    assert blocked.recall("srv", "echo") == {"message": "hi"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_a_file_of_the_wrong_shape_keeps_only_what_fits(tmp_path):
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    assert ArgumentMemory(listed).recall("s", "t") is None
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps({json.dumps(["s", "t"]): {"args": {"q": 1}}, "junk": 5}))
    assert ArgumentMemory(mixed).recall("s", "t") == {"q": 1}


def test_validation_module_reexports_for_the_cli():
    assert validation.SchemaProblem is SchemaProblem and issubclass(SchemaProblem, ValueError)
