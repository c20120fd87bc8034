"""Tool-schema portability (inspector.checks.portability): each feature the official `--strict` reports,
where it is reported and where it is not, with the path written as the official CLI writes it."""

from __future__ import annotations

from inspector.checks import portability as P
from inspector.checks.definitions import review_tools


def found(schema, key="inputSchema"):
    return [(p.rule, p.severity, p.path) for p in P.tool_problems({"name": "t", key: schema})]


def test_a_clean_schema_has_no_problem():
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "tags": {"type": "array", "items":
              {"type": "string"}}, "extra": {"type": "object", "additionalProperties": True}},
              "additionalProperties": False, "$defs": {"unit": {"enum": ["C", "F"]}}}
    assert found(schema) == []


def test_a_bare_boolean_is_an_error_but_where_booleans_belong():
    assert found({"type": "object", "properties": {"a": True}}) == [("boolean-schema", "error", "properties.a")]
    assert found({"type": "array", "items": False}) == [("boolean-schema", "error", "items")]
    assert found({"type": "array", "items": [{"type": "string"}, True]}) == [("boolean-schema", "error", "items[1]")]
    assert found({"type": "object", "properties": {"a": {"not": True}}}) == [("boolean-schema", "error",
                                                                             "properties.a.not")]
    for keyword in P.BOOLEAN_VALUED:
        assert found({"type": "object", keyword: False}) == []


def test_the_fix_keeps_the_contract():
    [forbidden] = P.tool_problems({"name": "t", "inputSchema": {"type": "object", "properties": {"a": False}}})
    assert '{"not": {}}' in forbidden.suggestion
    [under_not] = P.tool_problems({"name": "t", "inputSchema": {"not": True}})
    assert under_not.suggestion.startswith("use {}")


def test_type_lists_remote_refs_and_untyped_schemas_are_warnings():
    assert found({"type": "object", "properties": {"n": {"type": ["string", "null"]}}}) == [
        ("type-union", "warning", "properties.n")]
    assert found({"type": ["string", "string"]}) == []  # not a portable union to begin with: no advice
    assert found({"type": "object", "properties": {"r": {"$ref": "https://example.com/s.json"}}}) == [
        ("remote-ref", "warning", "properties.r")]
    assert found({"type": "object", "properties": {"r": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "string"}}}) \
        == []
    assert found({"$id": "https://example.com/root", "type": "object", "properties": {"r": {"$ref": "other.json"}}}) \
        == []  # the document names itself: a relative reference may resolve inside it
    assert found({"type": "object", "properties": {"free": {"description": "anything"}}}) == [
        ("untyped-schema", "warning", "properties.free")]
    assert found({"not": {}}) == []  # {} under not is the always-false schema, said on purpose
    assert found({"if": {"type": "string"}, "then": {"minLength": 1}}) == []


def test_paths_name_odd_keys_and_both_schemas():
    problems = P.tool_problems({"name": "t", "inputSchema": {"type": "object", "properties": {"two words": True}},
                                "outputSchema": {"type": "object", "properties": {"x": {}}}})
    assert [p.where for p in problems] == ['inputSchema.properties["two words"]', "outputSchema.properties.x"]


def test_deep_schemas_stop_and_do_not_recurse_forever():
    deep: dict = {"type": "string"}
    for _ in range(3000):  # past the interpreter's recursion limit: only the depth bound keeps it finite
        deep = {"type": "array", "items": deep}
    assert found(deep) == []


def test_report_summary_and_json_for_the_cli():
    reviewed = P.review([{"name": "a", "inputSchema": {"type": "object", "properties": {"x": True, "y": {}}}},
                         {"name": "b", "inputSchema": {"type": "object"}}, "not a tool"])
    assert P.counts(reviewed) == (1, 1)
    assert P.summary(reviewed) == "1 error, 1 warning across 1 tool"
    text = P.report(reviewed)
    assert text.splitlines()[:2] == ['Error: tool "a"', "  Path: inputSchema.properties.x"]
    assert "  Suggestion: " in text and text.endswith("1 error, 1 warning across 1 tool.")
    assert P.as_json(reviewed)[0]["findings"][0] == {**P.as_json(reviewed)[0]["findings"][0], "rule": "boolean-schema",
                                                     "schema": "inputSchema", "path": "properties.x"}


def test_check_reports_the_same_problems_as_findings_of_schema_unportable():
    findings = [f for f in review_tools([{"name": "t", "description": "Returns the time in a city as text.",
                                          "inputSchema": {"type": "object", "properties": {
                                              "city": {"type": ["string", "null"], "description": "The city"}}}}])
                if f.rule == "schema-unportable"]
    assert [(f.target, f.severity) for f in findings] == [("tool:t", "warning")]
    assert findings[0].message.startswith("inputSchema.properties.city: `type` is a list") and "Fix: " in \
        findings[0].message
