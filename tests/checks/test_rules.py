"""The rules one at a time, without a server: tool definitions, frames fed to the judge in order, arguments
made up from schemas (the 65 real tool schemas of tests/forms/corpus among them), and the report."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from inspector.checks import definitions as D
from inspector.checks import frames as F
from inspector.checks.report import Settings, junit, text
from inspector.checks.rules import RULES, finding
from inspector.checks.run import Report, collapse
from inspector.checks.sample import sample
from inspector.forms.validation import Checker
from inspector.protocol import jsonrpc as rpc
from inspector.traffic.frame import Frame

CORPUS = Path(__file__).resolve().parent.parent / "forms" / "corpus"
PLANTED = Path(__file__).with_name("planted_server.py")


def tool(name: str = "get_weather", description: str | None = "Returns the weather for a city, today or tomorrow.",
         **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "inputSchema": {"type": "object"}}
    if description is not None:
        out["description"] = description
    out.update(extra)
    return out


def rules_of(tools: list[Any]) -> list[tuple[str, str]]:
    return [(f.rule, f.target) for f in D.review_tools(tools)]


# --- tool definitions ----------------------------------------------------------------------------------------


def test_a_well_made_tool_has_no_findings():
    assert D.review_tools([tool(inputSchema={"type": "object", "properties": {
        "city": {"type": "string", "description": "The city"}}, "required": ["city"]})]) == []


@pytest.mark.parametrize(("name", "why"), [
    ("", "is empty"), ("x" * 129, "is 129 characters long"), ("get weather", "contains a space"),
    ("héllo", "contains 'é'"), ("a,b", "contains ','"),
])
def test_tool_names_outside_the_naming_guidance(name, why):
    found = [f for f in D.review_tools([tool(name)]) if f.rule == "tool-name-invalid"]
    assert len(found) == 1 and why in found[0].message and found[0].severity == "error"


@pytest.mark.parametrize("name", ["getUser", "user-profile.update", "DATA_EXPORT_v2", "a" * 128])
def test_names_within_the_guidance_pass(name):
    assert "tool-name-invalid" not in {r for r, _ in rules_of([tool(name)])}


def test_duplicates_are_one_finding_per_name():
    assert rules_of([tool("a"), tool("a"), tool("b")]).count(("tool-name-duplicate", "tool:a")) == 1


@pytest.mark.parametrize(("description", "why"), [
    (None, None), ("   ", None),
    ("Get weather.", "only repeats the tool's name"),
    ("Looks it up.", "3 words long"),
    ("Weather data for cities around the world.", "not what it does"),
])
def test_missing_and_vague_descriptions(description, why):
    found = D.review_tools([tool(description=description)])
    if why is None:
        assert [f.rule for f in found] == ["description-missing"]
    else:
        assert [f.rule for f in found] == ["description-vague"] and why in found[0].message


@pytest.mark.parametrize("description", [
    "Repeats your message back as plain text.", "Fetches the forecast of a city for the next five days.",
    "Returns the weather of a city; use it when the user asks about rain.", "List the files of a folder, newest first.",
])
def test_descriptions_that_say_what_a_tool_does_pass(description):
    assert D.review_tools([tool(description=description)]) == []


def test_bare_parameters_are_named_a_few_at_a_time():
    props = {f"p{i}": {"type": "string"} for i in range(8)} | {"ok": {"type": "string", "description": "Fine"}}
    found = D.review_tools([tool(inputSchema={"type": "object", "properties": props})])
    assert [f.rule for f in found] == ["param-description-missing"]
    assert "p0, p1, p2, p3, p4, p5 and 2 more" in found[0].message


@pytest.mark.parametrize(("schema", "words"), [
    (None, "no inputSchema"),
    ([], "is list, not a JSON Schema object"),
    ({"type": "array"}, 'type is "array", not "object"'),
    ({"type": "object", "properties": {"a": {"type": "strin"}}}, "invalid at /properties/a/type"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/gone"}}}, "cannot be used"),
    ({"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "string", "description": "A"}}},
     "required but not declared in properties: b"),
    ({"$schema": "https://example.com/dialect", "type": "object"}, "not a JSON Schema dialect Spyglass knows"),
])
def test_input_schemas_that_cannot_serve(schema, words):
    t = tool()
    t["inputSchema"] = schema
    found = [f for f in D.review_tools([t]) if f.rule == "input-schema-invalid"]
    assert found and any(words in f.message for f in found), found


def test_a_remote_reference_is_never_fetched():
    started = time.monotonic()
    problem = D.schema_problem({"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/x.json"}}})
    assert problem and "refers to http://127.0.0.1:9/x.json outside this schema" in problem
    assert time.monotonic() - started < 5


def test_draft_07_schemas_are_checked_in_their_dialect():
    assert D.schema_problem({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                             "definitions": {"x": {"type": "string"}},
                             "properties": {"a": {"$ref": "#/definitions/x"}}}) is None


@pytest.mark.parametrize(("hints", "expected"), [
    ({"readOnlyHint": True, "destructiveHint": True}, 1),
    ({"readOnlyHint": True, "idempotentHint": False}, 1),
    ({"readOnlyHint": True, "destructiveHint": True, "idempotentHint": False}, 2),
    ({"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}, 0),  # agrees: left alone
    ({"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}, 0),
    ({"destructiveHint": True}, 0),
])
def test_annotations_that_contradict(hints, expected):
    assert rules_of([tool(annotations=hints)]).count(("annotations-contradict", "tool:get_weather")) == expected


def test_what_the_list_costs_is_measured_and_flagged():
    small = tool("small")
    big = tool("big", description="Returns a long answer. " + "word " * 1000)
    cost = D.list_cost([small, big])
    size = len(json.dumps(small, separators=(",", ":")).encode())
    assert cost.tools["small"] == (size, -(-size // 4)) and cost.count == 2
    assert cost.bytes == 2 + size + 1 + cost.tools["big"][0]
    found = {(f.rule, f.target, f.severity) for f in D.review_tools([small, big])}
    assert ("tool-list-cost", "tool:big", "warning") in found
    assert not any(t == "list:tools" for _r, t, _s in found)
    many = [tool(f"t{i}", description="Returns a long answer. " + "word " * 150) for i in range(60)]
    assert ("tool-list-cost", "list:tools", "info") in {(f.rule, f.target, f.severity) for f in D.review_tools(many)}


def test_what_is_not_a_tool_is_left_to_the_schema_check():
    assert rules_of(["nope", {"inputSchema": {"type": "object"}, "description": "Returns a thing for you."}]) == []


# --- frames, judged --------------------------------------------------------------------------------------------

CAPS = {"tools": {"listChanged": True}, "resources": {"subscribe": True, "listChanged": True}, "prompts": {},
        "logging": {}}


def out(rid: Any, method: str, params: dict[str, Any] | None = None) -> Frame:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return Frame("out", json.dumps(msg).encode(), 0.0, 0.0)


def inn(msg: dict[str, Any]) -> Frame:
    return Frame("in", json.dumps({"jsonrpc": "2.0", **msg}).encode(), 0.0, 0.0)


def judge(revision: str = "2025-11-25", caps: dict[str, Any] | None = None,
          tools: list[dict[str, Any]] | None = None) -> F.Judge:
    j = F.Judge()
    j.ready(revision, CAPS if caps is None else caps)
    j.tools = {t["name"]: t for t in tools or []}
    j.listed = tools is not None
    return j


def feed(j: F.Judge, *frames: Frame) -> list[tuple[str, str]]:
    for i, frame in enumerate(frames):
        j.frame(i, frame)
    return [(f.rule, f.target) for f in j.findings]


def test_a_response_is_judged_by_the_method_of_its_request():
    j = judge()
    assert feed(j, out(1, "tools/list"), inn({"id": 1, "result": {"tools": [{"name": "x"}]}})) == [
        ("schema-violation", "frame:1")]
    assert "ListToolsResult" in j.findings[0].message and "inputSchema" in j.findings[0].message
    ok = judge()
    assert feed(ok, out(1, "tools/list"), inn({"id": 1, "result": {"tools": [tool()]}})) == []


def test_a_task_or_input_required_in_place_of_a_result_is_no_violation():
    task = {"task": {"taskId": "t1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
                     "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 1000}}
    assert feed(judge(tools=[tool()]), out(1, "tools/call", {"name": "get_weather", "task": {}}),
                inn({"id": 1, "result": task})) == []
    input_required = {"resultType": "input_required", "requestState": "opaque"}
    assert F._problem("2026-07-28", "InputRequiredResult", input_required) is None
    assert F._problem("2026-07-28", "CallToolResult", input_required) is not None
    assert feed(judge("2026-07-28", tools=[tool()]), out(1, "tools/call", {"name": "get_weather"}),
                inn({"id": 1, "result": input_required})) == []


def test_the_initialize_result_tells_the_judge_the_revision_and_capabilities():
    j = F.Judge()
    result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}
    feed(j, out(0, "initialize", {}), inn({"id": 0, "result": result}),
         inn({"method": "notifications/tools/list_changed"}))
    assert j.revision == "2025-11-25" and [f.rule for f in j.findings] == ["capability-undeclared"]
    broken = F.Judge()
    feed(broken, out(0, "initialize", {}), inn({"id": 0, "result": {"protocolVersion": "2025-11-25"}}))
    assert [f.rule for f in broken.findings] == ["schema-violation"]


def test_notifications_and_server_requests_are_judged_by_their_method():
    found = feed(judge(), inn({"method": "notifications/message", "params": {"level": "loud", "data": "x"}}),
                 inn({"id": 7, "method": "sampling/createMessage", "params": {"messages": "nope"}}),
                 inn({"method": "notifications/spyglass/custom", "params": {"any": 1}}))
    assert found == [("schema-violation", "frame:0"), ("schema-violation", "frame:1")]


def test_error_responses_are_judged_as_they_came():
    j = judge()
    assert feed(j, out(1, "ping"), inn({"id": 1, "error": {"code": -32601}})) == [("schema-violation", "frame:1")]
    assert "error response" in j.findings[0].message and "message" in j.findings[0].message
    good = judge()
    assert feed(good, out(1, "ping"), inn({"id": 1, "error": {"code": -32601, "message": "no"}})) == []


def test_undeclared_capabilities_are_reported_once_each():
    j = judge(caps={"tools": {}, "resources": {}})
    found = feed(j, *[inn({"method": "notifications/tools/list_changed"})] * 3,
                 inn({"method": "notifications/resources/updated", "params": {"uri": "file:///a"}}),
                 inn({"method": "notifications/message", "params": {"level": "info", "data": "x"}}),
                 out(9, "logging/setLevel", {"level": "info"}), inn({"id": 9, "result": {}}))
    assert [r for r, _t in found] == ["capability-undeclared"] * 4
    assert {f.message.split(" without ")[0] for f in j.findings} >= {"the server sent notifications/tools/list_changed"}
    assert feed(judge(), inn({"method": "notifications/tools/list_changed"})) == []


def parsed(frame: Frame) -> Frame:
    """The frame as a client hands it over: its message already parsed (the judge's quick path)."""
    return Frame(frame.direction, frame.data, frame.mono, frame.wall, None, rpc.parse(frame.data))


NOTIFICATIONS = [inn({"method": "notifications/message", "params": {"level": "info", "data": "fine"}}),
                 inn({"method": "notifications/message", "params": {"level": "loud", "data": "x"}}),
                 inn({"method": "notifications/message", "params": {"level": "info", "data": {"n": 10 ** 40}}}),
                 inn({"method": "notifications/tools/list_changed"}),
                 inn({"method": "notifications/resources/updated", "params": {"uri": "file:///a"}}),
                 inn({"method": "notifications/progress", "params": {"progressToken": 1, "progress": "half"}}),
                 inn({"method": "notifications/spyglass/custom", "params": {"any": 1}})]


@pytest.mark.parametrize("caps", [CAPS, {}, {"tools": {}, "resources": {}}])
@pytest.mark.parametrize("revision", ["2024-11-05", "2025-11-25", "2026-07-28", "1999-01-01"])
def test_notifications_parsed_by_the_client_are_judged_as_those_read_from_the_wire(revision, caps):
    def found(frames: list[Frame]) -> list[tuple[str, str, str]]:
        j = F.Judge()
        j.ready(revision, caps)
        for i, frame in enumerate(frames * 2):
            j.frame(i, frame)
        return [(f.rule, f.target, f.message) for f in j.reported()]

    assert found([parsed(f) for f in NOTIFICATIONS]) == found(NOTIFICATIONS)


def test_the_quick_path_follows_the_revision_and_capabilities_it_is_told():
    j = judge(caps={"tools": {}})
    message = parsed(inn({"method": "notifications/message", "params": {"level": "info", "data": "x"}}))
    j.frame(0, message)
    assert [f.rule for f in j.findings] == ["capability-undeclared"]
    j = judge()
    j.frame(0, message)
    assert j.findings == []
    j.ready("2025-11-25", {})  # (a reconnection that no longer declares logging)
    j.frame(1, message)
    assert [(f.rule, f.target) for f in j.findings] == [("capability-undeclared", "frame:1")]


def test_what_nobody_asked_and_unknown_revisions_are_not_judged():
    assert feed(judge(), inn({"id": 5, "result": {"anything": True}})) == []
    unknown = F.Judge()
    unknown.ready("1999-01-01", {})
    assert unknown.revision is None
    assert feed(unknown, out(1, "tools/list"), inn({"id": 1, "result": {"tools": "no"}})) == []
    j = judge()
    j.frame(0, Frame("out", b"not json", 0.0, 0.0))
    j.frame(1, Frame("err", b"a stderr line", 0.0, 0.0))
    batch = json.dumps([{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}]).encode()
    j.frame(2, Frame("out", batch, 0.0, 0.0))
    j.frame(3, inn({"id": 3, "result": {"tools": [{"name": 1}]}}))
    assert [f.target for f in j.findings] == ["frame:3"]


OUTPUT = {"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]}
FORECAST = tool("forecast", outputSchema=OUTPUT, inputSchema={"type": "object", "properties": {
    "city": {"type": "string", "description": "The city"}}, "required": ["city"]})


def call(j: F.Judge, result: dict[str, Any] | None = None, error: dict[str, Any] | None = None,
         name: str = "forecast", arguments: Any = None) -> list[str]:
    args = {"city": "Lisbon"} if arguments is None else arguments
    answer = {"id": 1, "result": result} if error is None else {"id": 1, "error": error}
    feed(j, out(1, "tools/call", {"name": name, "arguments": args}), inn(answer))
    return [f.rule for f in j.findings]


def test_structured_content_against_the_output_schema():
    text = [{"type": "text", "text": json.dumps({"temp": 21.5})}]
    assert call(judge(tools=[FORECAST]), {"content": text, "structuredContent": {"temp": 21.5}}) == []
    assert call(judge(tools=[FORECAST]), {"content": text}) == ["structured-content-missing"]
    warm = [{"type": "text", "text": json.dumps({"temp": "warm"})}]
    assert call(judge(tools=[FORECAST]), {"content": warm, "structuredContent": {"temp": "warm"}}) == [
        "structured-content-mismatch"]
    assert call(judge(tools=[FORECAST]), {"content": [{"type": "text", "text": "warm"}],
                                          "structuredContent": {"temp": 21.5}}) == ["structured-text-missing"]
    assert call(judge(tools=[FORECAST]), {"content": [{"type": "text", "text": "failed"}], "isError": True}) == []


def test_an_unknown_tool_is_a_protocol_error_and_a_failed_run_is_a_result():
    assert call(judge(tools=[FORECAST]), {"content": [], "isError": True}, name="nope") == [
        "unknown-tool-not-protocol-error"]
    assert call(judge(), {"content": [], "isError": True}, name="nope") == []  # the list is not known
    assert call(judge(tools=[]), {"content": []}, name="nope") == ["unknown-tool-not-protocol-error"]  # listed, empty
    assert call(judge(tools=[FORECAST]), error={"code": -32602, "message": "Unknown tool"}, name="nope") == []
    assert call(judge(tools=[FORECAST]), error={"code": -32603, "message": "down"}) == [
        "tool-error-as-protocol-error"]
    assert call(judge(tools=[FORECAST]), error={"code": -32602, "message": "bad"}) == []
    assert call(judge(tools=[FORECAST]), error={"code": -32603, "message": "down"}, arguments={}) == []  # invalid


def test_a_schema_that_cannot_be_compiled_is_a_finding(monkeypatch):
    monkeypatch.setattr(F.schemas, "definition", lambda revision, name: {"type": 12})
    compiled = F._Compiled("2025-11-25", "Anything")
    assert compiled.validator is None
    assert compiled.first_problem({}).startswith("the schema cannot be compiled")


def test_integers_beyond_64_bits_are_judged_like_any_other():
    assert F._problem("2025-11-25", "ListToolsResult", {"tools": [], "_meta": {"n": 10 ** 40}}) is None
    problem = F._problem("2025-11-25", "ListToolsResult", {"tools": 10 ** 40})
    assert problem is not None and problem.startswith("at /tools:")


def test_judging_a_flood_is_cheap():
    j = judge()
    frame = inn({"method": "notifications/message", "params": {"level": "info", "data": "x"}})
    started = time.perf_counter()
    for i in range(5000):
        j.frame(i, frame)
    assert j.findings == [] and time.perf_counter() - started < 5  # a guard against a hang, not a speed target


# --- arguments made up from schemas ----------------------------------------------------------------------------


def corpus() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(CORPUS.glob("*.json")):
        for t in json.loads(path.read_text())["tools"]:
            out.append((f"{path.stem}:{t['name']}", t["inputSchema"]))
    return out


@pytest.mark.parametrize(("name", "schema"), corpus(), ids=[n for n, _ in corpus()])
def test_arguments_are_made_valid_for_every_real_schema(name, schema):
    made = sample(schema)
    assert made is not None and Checker(schema).problems(made) == []


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 3, "multipleOf": 5}},
     "required": ["n"]},
    {"type": "object", "properties": {"s": {"type": "string", "minLength": 40, "format": "email"}}, "required": ["s"]},
    {"type": "object", "properties": {"a": {"type": "array", "minItems": 3, "uniqueItems": True,
                                            "items": {"type": "string"}}}, "required": ["a"]},
    {"type": "object", "$defs": {"p": {"type": "object", "properties": {"x": {"const": 1}}, "required": ["x"]}},
     "properties": {"p": {"$ref": "#/$defs/p"}}, "required": ["p"]},
    {"type": "object", "properties": {"u": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 2}]}},
     "required": ["u"]},
    {"type": "object", "properties": {"o": {"oneOf": [{"type": "string", "maxLength": 0, "minLength": 1},
                                                      {"type": "boolean"}]}}, "required": ["o"]},
    {"type": "object", "allOf": [{"properties": {"a": {"type": "number", "maximum": -5}}, "required": ["a"]},
                                 {"properties": {"b": {"type": ["null", "string"]}}, "required": ["b"]}]},
    {"type": "object", "properties": {"t": {"type": "string", "format": "date-time"}, "e": {"enum": ["x", "y"]},
                                      "k": {"examples": ["sample"]}, "z": {"type": "null"}},
     "required": ["t", "e", "k", "z"]},
])
def test_arguments_for_the_harder_constructs(schema):
    made = sample(schema)
    assert made is not None and Checker(schema).problems(made) == []


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"s": {"type": "string", "minLength": 5, "maxLength": 2}}, "required": ["s"]},
    "not a schema",
    {"type": "object", "properties": {"r": {"$ref": "https://example.com/remote.json"}}, "required": ["r"]},
])
def test_no_arguments_when_none_can_be_valid(schema):
    assert sample(schema) is None


# --- the report ------------------------------------------------------------------------------------------------


def report(*findings: Any) -> Report:
    return Report(server={"name": "s", "version": "1", "protocolVersion": "2025-11-25"}, findings=list(findings))


def test_ignores_match_a_rule_or_a_rule_and_target_with_wildcards():
    a = finding("description-vague", "tool:legacy_one", "m")
    b = finding("description-vague", "tool:new", "m")
    settings = Settings(ignore=["description-vague:tool:legacy_*"])
    assert [f.target for f in report(a, b).ignoring(settings.ignored).findings] == ["tool:new"]
    assert report(a, b).ignoring(Settings(ignore=["description-vague"]).ignored).findings == []


def test_the_failure_bar():
    warn = report(finding("description-vague", "tool:x", "m"))
    assert not Settings().fails(warn) and Settings(fail_on="warning").fails(warn)
    assert Settings(fail_on="info").fails(report(finding("structured-text-missing", "tool:x", "m")))


def test_text_keeps_one_finding_to_its_lines():
    out = text(report(finding("tool-name-invalid", "tool:a\nb", "the name 'a\\nb'\nis bad")))
    assert "tool:a\\nb" in out and "is bad" in out and out.count("\n") == 7


def test_collapse_counts_the_frames_of_one_mistake():
    same = [finding("schema-violation", f"frame:{i}", "the same") for i in range(3)]
    other = finding("schema-violation", "frame:9", "another")
    out = collapse([*same, other])
    assert [(f.target, f.message) for f in out] == [("frame:0", "the same (in 3 frames)"), ("frame:9", "another")]


def test_junit_without_findings_passes_every_rule():
    xml = junit(report(), Settings()).decode()
    assert xml.count("<testcase") == len(RULES) and 'failures="0"' in xml


async def test_a_check_declines_every_question_a_server_asks():
    from inspector.checks.run import Decline

    d = Decline()
    assert await d.elicit(None, {}, None) == {"action": "decline"}  # type: ignore[arg-type]
    assert await d.sample(None, {}, None) is None  # type: ignore[arg-type]
    assert await d.share_roots(None, [], None) is False  # type: ignore[arg-type]


async def test_the_live_check_judges_each_frame_hands_findings_over_in_batches_and_starts_over():
    from inspector.checks import live as L
    from inspector.config import ServerSpec
    from inspector.session import ServerSession, SessionOptions

    session = ServerSession(ServerSpec(name="planted", command=[sys.executable, str(PLANTED)]),
                            options=SessionOptions(heartbeat_s=None))
    check = L.LiveCheck(session)
    frames: list[Frame] = []
    told: list[int] = []
    check.changed.connect(lambda: told.append(1))
    session.traffic = lambda f: (frames.append(f), check.frame(len(frames) - 1, f))
    try:
        await session.open()
        await session.listings.load_all()
        assert check.pending > 0  # found as the frames came, handed over at the next drain
        told.clear()  # (connecting and the tool list's review told already)
        handed = check.drain()
        assert {f.rule for _n, f in handed} >= {"capability-undeclared", "schema-violation"}
        assert all(0 <= n < len(frames) for n, _f in handed) and told == [1] and check.pending == 0
        assert check.drain() == [] and told == [1]  # nothing new: nobody is told
        assert {f.rule for f in check.findings()} >= {"capability-undeclared", "tool-name-invalid"}
        assert check.summary()["error"] >= 1 and check.cost is not None and check.cost.count == 16
        report = await check.run()
        assert {f.rule for f in check.findings()} >= {"list-order-unstable", "pagination-cursor-loop"}
        assert report.findings and check.report is report
        first = check.judge
        await session.restart()
        assert check.judge is not first and check.report is None and check.judge.revision == "2025-11-25"
    finally:
        check.release()
        await session.close()


# --- what a hostile server can put in front of a check (each found by a review, each once a crash or hang) ---


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {"type": "array", "minItems": 1_000_000_000}}, "required": ["a"]},
    {"type": "object", "properties": {"s": {"type": "string", "minLength": 300_000_000}}, "required": ["s"]},
    {"type": "object", "$defs": {"n": {"anyOf": [{"$ref": "#/$defs/n"}] * 3, "type": "string", "minLength": 3}},
     "properties": {"x": {"$ref": "#/$defs/n"}}, "required": ["x"]},
    {"type": "object", "$defs": {"t": {"type": "array", "minItems": 20, "items": {"$ref": "#/$defs/t"}}},
     "properties": {"x": {"$ref": "#/$defs/t"}}, "required": ["x"]},
    {"type": "object", "$defs": {"s": "a string"}, "properties": {"x": {"$ref": "#/$defs/s"}}, "required": ["x"]},
    {"type": "object", "properties": {"n": {"type": "number", "exclusiveMinimum": 10 ** 400}}, "required": ["n"]},
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": float("inf")}}, "required": ["n"]},
])
def test_no_arguments_for_schemas_too_big_recursive_or_impossible_and_quickly(schema):
    started = time.monotonic()
    assert sample(schema) is None
    assert time.monotonic() - started < 5  # a guard against the hang it was, not a speed target


def test_a_lone_surrogate_is_measured_not_a_crash():
    cost = D.list_cost([tool(description="Returns \ud800 bytes.")])
    assert cost.count == 1 and cost.bytes > 0


def test_deep_json_text_and_catastrophic_patterns_are_judged_quickly():
    deep = [{"type": "text", "text": "[" * 50_000}]
    assert call(judge(tools=[FORECAST]), {"content": deep, "structuredContent": {"temp": 1}}) == [
        "structured-text-missing"]
    evil = tool("match", outputSchema={"type": "object", "properties": {"s": {"type": "string",
                                                                               "pattern": "^(a+)+$"}}})
    started = time.monotonic()
    found = call(judge(tools=[evil]), {"content": [{"type": "text", "text": json.dumps({"s": "a" * 40 + "!"})}],
                                       "structuredContent": {"s": "a" * 40 + "!"}}, name="match", arguments={})
    assert found == ["structured-content-mismatch"] and time.monotonic() - started < 5


def test_what_is_not_json_rpc_on_a_servers_output_is_a_finding():
    j = judge()
    found = feed(j, Frame("in", b"hello from print()", 0.0, 0.0), Frame("in", b'{"jsonrpc":"1.0","id":1}', 0.0, 0.0))
    assert found == [("schema-violation", "frame:0"), ("schema-violation", "frame:1")]
    assert "not a JSON-RPC message" in j.findings[0].message and "stderr" in j.findings[0].message


def test_a_mistake_repeated_by_many_calls_is_one_finding():
    j = judge(tools=[FORECAST])
    for i in range(3):
        feed(j, out(i, "tools/call", {"name": "forecast", "arguments": {"city": "x"}}),
             inn({"id": i, "result": {"content": [{"type": "text", "text": "warm"}]}}))
    reported = [f for f in j.reported() if f.rule == "structured-content-missing"]
    assert len(reported) == 1 and reported[0].message.endswith("(3 times)")


def test_junit_carries_any_server_text_as_well_formed_xml():
    from xml.etree import ElementTree as ET

    xml = junit(Report(server={"name": "srv\x1b[31m\ud800"}, findings=[
        finding("tool-name-invalid", "tool:a\x00b", "the name 'a\x00b' \x07 is bad")]), Settings())
    suite = ET.fromstring(xml)
    assert suite.get("failures") == "1" and "\\x00" in xml.decode()


def test_the_check_writes_what_a_server_sent_even_when_it_is_not_valid_utf8():
    from inspector.cli.check import writable

    assert writable("srv\ud800") == "srv\\ud800" and writable("plain é") == "plain é"


async def test_a_long_tool_list_is_reviewed_beside_the_loop_and_the_newest_list_wins():
    import asyncio

    from inspector.checks import live as L
    from inspector.config import ServerSpec
    from inspector.session import ServerSession

    check = L.LiveCheck(ServerSession(ServerSpec(name="big", command=[sys.executable, "-c", "pass"])))
    told: list[int] = []
    check.changed.connect(lambda: told.append(1))
    many = [{"name": f"t{i}", "description": "Adds. " * 5, "inputSchema": {"type": "object"}}
            for i in range(L.SYNC_TOOLS + 1)]
    bad = [*many, {"name": "bad name!", "inputSchema": {"type": "object"}}]
    check.review(many)
    assert check.judge.listed and "t0" in check.judge.tools and check.cost is None  # the judge knows at once
    check.review(bad)  # a newer list before the first review ends: only its findings count
    deadline = time.monotonic() + 20
    while check.cost is None or check.cost.count != len(bad):
        assert time.monotonic() < deadline, "the review never ended"
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    assert check.cost.count == len(bad) and told == [1]
    assert any(f.rule == "tool-name-invalid" for f in check.definitions)
    check.review(many[:3])  # a short list: reviewed there and then
    assert check.cost.count == 3 and told == [1, 1]
    check.release()


def test_a_reads_worth_of_frames_is_judged_as_one_by_one():
    from inspector.checks import live as L
    from inspector.config import ServerSpec
    from inspector.session import ServerSession

    frames = [parsed(f) for f in NOTIFICATIONS] + [out(4, "tools/list"), inn({"id": 4, "result": {"tools": 1}})]
    found = []
    for feed in ("one", "many"):
        check = L.LiveCheck(ServerSession(ServerSpec(name="s", command=[sys.executable, "-c", "pass"])))
        check.judge.ready("2025-11-25", {})
        if feed == "one":
            for n, frame in enumerate(frames, 10):
                check.frame(n, frame)
        else:
            check.frames(10, frames[:3])
            check.frames(13, frames[3:])
        found.append([(n, f.rule, f.message) for n, f in check.drain()])
    assert found[0] == found[1] and {n for n, _r, _m in found[0]} == {10, 11, 13, 14, 15, 18}


def test_a_run_of_frames_is_judged_as_one_by_one():
    """`Judge.frames` (a flood's read at a time, its valid notifications checked without a call each) finds what
    `frame` finds, on the same frame numbers; the host observer's look at a run's bytes misses no call."""
    from inspector.checks.hosts.observe import Observer
    from inspector.protocol import jsonrpc as rpc

    def parsed(frame: Frame) -> Frame:
        return Frame(frame.direction, frame.data, 0.0, 0.0, None, rpc.parse(frame.data))

    note = {"method": "notifications/message", "params": {"level": "info", "data": "x"}}
    run = [out(1, "tools/call", {"name": "get_weather", "arguments": {}}), inn(note), inn(note),
           inn({"method": "notifications/message", "params": {"level": "loud", "data": "x"}}), inn(note),
           inn({"method": "notifications/message"}), inn({"method": "notifications/spyglass/custom"}),
           inn({"method": "notifications/tools/list_changed"}), inn(note),
           inn({"id": 1, "result": {"content": [{"type": "image", "data": "", "mimeType": "image/png"}]}})]
    run = [parsed(f) for f in run]
    for caps in (CAPS, {}):
        one, many = judge(caps=caps, tools=[tool()]), judge(caps=caps, tools=[tool()])
        found = [(n, f.rule) for n, frame in enumerate(run, 5) for f in one.frame(n, frame)]
        assert [(n, f.rule) for n, f in many.frames(5, run)] == found
        assert [f.target for f in many.findings] == [f.target for f in one.findings]
        assert ("schema-violation" in {rule for _, rule in found}) and (caps or len(found) > 1)
    by_one, by_run = Observer(), Observer()
    for frame in run:
        by_one.frame(frame)
    by_run.frames(run[:1])
    by_run.frames(run[1:])
    assert by_run.seen.kinds == by_one.seen.kinds == {"get_weather": {"image"}}


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"])
def test_a_read_of_one_methods_notifications_is_judged_in_one_call_as_one_by_one(revision):
    """A flood's read (notifications of one method) is checked against the schema of their params in one call
    where the method's schema asks nothing else of them (`_params_run`), and finds what one by one finds: a bad
    level, params missing, a number too big for the validator, each on its own frame, the others nothing."""
    from inspector.protocol import jsonrpc as rpc

    def parsed(frame: Frame) -> Frame:
        return Frame(frame.direction, frame.data, 0.0, 0.0, None, rpc.parse(frame.data))

    name = F._method_defs(revision, "Notification")["notifications/message"]
    assert F._params_run(revision, name) is not None
    assert F._params_run(revision, F._method_defs(revision, "Notification")["notifications/progress"]) is not None
    note = {"method": "notifications/message", "params": {"level": "info", "logger": "x", "data": "line"}}
    odd = [{"method": "notifications/message", "params": {"level": "loud", "data": "x"}},
           {"method": "notifications/message"},
           {"method": "notifications/message", "params": {"level": "info", "data": 10 ** 30}},
           {"method": "notifications/message", "params": {"level": "info"}}]
    runs = [[note] * 40, [{"method": "notifications/spyglass/custom", "params": {"a": 1}}] * 5]
    runs += [[note] * 7 + [bad] + [note] * 7 for bad in odd]
    for caps in (CAPS, {}):
        for run in runs:
            frames = [parsed(inn(m)) for m in run]
            one, many = judge(revision, caps), judge(revision, caps)
            found = [(n, f.rule, f.message) for n, frame in enumerate(frames, 3) for f in one.frame(n, frame)]
            assert [(n, f.rule, f.message) for n, f in many.frames(3, frames)] == found
            assert [f.target for f in many.findings] == [f.target for f in one.findings]
            if run is runs[0]:
                assert found == [] if caps else found
    assert F._params_run.cache_info().currsize >= 2


def _note(method: str, params: Any = ..., **envelope: Any) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, **envelope}
    if params is not ...:
        msg["params"] = params
    return json.dumps(msg).encode()


# what a server may send in a flood's read: notifications of a few methods, valid or broken in each way the
# schemas tell apart (params missing, null, of the wrong kind, a field too big for the validator), and a few
# lines that are no notification (an id, no jsonrpc, a result besides the method, not JSON)
FLOOD_LINES = {
    "notifications/message": [
        _note("notifications/message", {"level": "info", "data": "x"}),
        _note("notifications/message", {"level": "info", "logger": "l", "data": {"k": [1, 2]}}),
        _note("notifications/message", {"level": "loud", "data": "x"}),
        _note("notifications/message", {"level": "info"}),
        _note("notifications/message", {"level": "info", "logger": 5, "data": "x"}),
        _note("notifications/message", {"level": "info", "data": 10 ** 30}),
        _note("notifications/message", {"level": "info", "data": "x", "_meta": {"a": 1}}),
        _note("notifications/message", {"level": "info", "data": "x"}, extra=1),
        _note("notifications/message"), _note("notifications/message", None), _note("notifications/message", {}),
    ],
    "notifications/progress": [
        _note("notifications/progress", {"progressToken": 1, "progress": 0.5}),
        _note("notifications/progress", {"progressToken": "t", "progress": 1, "total": 2, "message": "m"}),
        _note("notifications/progress", {"progressToken": True, "progress": 1}),
        _note("notifications/progress", {"progressToken": 1}),
        _note("notifications/progress", {"progressToken": 1, "progress": "1"}),
        _note("notifications/progress"), _note("notifications/progress", None),
    ],
    "notifications/cancelled": [
        _note("notifications/cancelled", {"requestId": 1}), _note("notifications/cancelled", {"requestId": 1.5}),
        _note("notifications/cancelled", {"requestId": 1, "reason": 3}), _note("notifications/cancelled"),
    ],
    "notifications/tools/list_changed": [
        _note("notifications/tools/list_changed"), _note("notifications/tools/list_changed", {}),
        _note("notifications/tools/list_changed", {"_meta": 3}),
    ],
    "notifications/initialized": [_note("notifications/initialized"), _note("notifications/initialized", [])],
    "notifications/spyglass/custom": [_note("notifications/spyglass/custom", {"a": 1}),
                                      _note("notifications/spyglass/custom")],
    "other": [b'{"jsonrpc":"2.0","id":7,"method":"ping"}', b'{"method":"notifications/message","params":{}}',
              _note("notifications/message", {"level": "info", "data": "x"}, result={}),
              b'{"jsonrpc":"2.0","id":99,"result":{}}', b"Starting... not JSON"],
}


def test_a_flood_read_judged_in_one_call_finds_what_one_by_one_finds():
    """Property: whatever reads a server sends (one method's notifications, valid or broken, or a mix with other
    lines), in each of the four revisions, with or without the capabilities the rules look at, `Judge.frames`
    (the one-call run where `_params_run` allows it) finds what `frame` one by one finds: the same findings, on
    the same frame numbers, in the same order, and the judge keeps the same mistakes and counts."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    one_method = st.sampled_from(sorted(FLOOD_LINES)).flatmap(
        lambda m: st.lists(st.sampled_from(FLOOD_LINES[m]), min_size=1, max_size=12))
    mixed = st.lists(st.sampled_from([line for lines in FLOOD_LINES.values() for line in lines]), max_size=12)
    reads = st.lists(st.one_of(one_method, one_method.map(lambda r: r[:1] * 6 + r), mixed), min_size=1, max_size=4)

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(revision=st.sampled_from(["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"]),
           caps=st.sampled_from([CAPS, {}, {"logging": {}}]), reads=reads, handshake=st.integers(-1, 3))
    def same(revision: str, caps: dict[str, Any], reads: list[list[bytes]], handshake: int) -> None:
        # handshake >= 0: the judges start unready and learn the revision from an initialize answered in that read
        one, many = (judge(revision, caps), judge(revision, caps)) if handshake < 0 else (F.Judge(), F.Judge())
        n = 3
        for i, read in enumerate(reads):
            frames = [Frame("in", line, 0.0, 0.0, None, rpc.parse(line)) for line in read]
            if i == handshake or (i == len(reads) - 1 and handshake >= len(reads)):
                answer = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {
                    "protocolVersion": revision, "capabilities": caps, "serverInfo": {"name": "s", "version": "1"}}})
                frames[len(frames) // 2:len(frames) // 2] = [
                    out(1, "initialize", {"protocolVersion": revision}),
                    Frame("in", answer.encode(), 0.0, 0.0, None, rpc.parse(answer.encode()))]
            found = [(k, f.rule, f.target, f.message) for k, frame in enumerate(frames, n) for f in one.frame(k, frame)]
            assert [(k, f.rule, f.target, f.message) for k, f in many.frames(n, frames)] == found
            n += len(frames)
        assert many.findings == one.findings and many.repeats == one.repeats and many.trusted == one.trusted

    same()


def test_the_one_call_run_is_used_only_where_a_notification_schema_asks_nothing_but_params(monkeypatch):
    """`_params_run`'s structural check, on definitions a revision could have: a run is made only for an object
    schema whose other members are the jsonrpc "2.0" and method consts; a definition that asks more of the
    envelope (another jsonrpc, additionalProperties, allOf, a $ref, a method enum, another member) is judged one
    by one. Where a run is made it accepts a read exactly when each notification is valid against the whole."""
    from inspector.protocol import schemas
    from inspector.schemarefs import rust_validator

    params = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    method = {"const": "notifications/x", "type": "string"}
    plain = {"type": "object", "properties": {"jsonrpc": {"const": "2.0", "type": "string"}, "method": method,
                                              "params": params}, "required": ["jsonrpc", "method", "params"]}
    asks_more = {
        "jsonrpc 1.0": {**plain, "properties": {**plain["properties"], "jsonrpc": {"const": "1.0", "type": "string"}}},
        "closed": {**plain, "additionalProperties": False},
        "allOf": {"allOf": [plain, {"type": "object"}]},
        "ref": {"$ref": "#/definitions/Plain"},
        "method enum": {**plain, "properties": {**plain["properties"], "method": {"enum": ["notifications/x"]}}},
        "method pattern": {**plain, "properties": {**plain["properties"], "method": {**method, "pattern": "^n"}}},
        "id": {**plain, "properties": {**plain["properties"], "id": {"type": "integer"}}},
        "required id": {**plain, "required": ["id", "method"]},
        "no params": {**plain, "properties": {"method": method}},
    }
    fine = {"plain": plain, "params optional": {**plain, "required": ["method"]},
            "no jsonrpc": {**plain, "properties": {"method": method, "params": params}}}
    defs = {"Plain": plain, **{k.replace(" ", ""): v for k, v in {**asks_more, **fine}.items()}}
    doc = {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": defs}
    monkeypatch.setattr(schemas, "definition",
                        lambda revision, name: {"$ref": f"#/definitions/{name}", "definitions": defs, **doc})
    F._params_run.cache_clear()
    try:
        assert {k for k in asks_more if F._params_run("test", k.replace(" ", "")) is not None} == set()
        reads = [[{"n": 1}, {"n": 2}], [{"n": 1}, {"n": "2"}], [{}], [{"n": 1, "m": 2}]]
        for k in fine:
            run = F._params_run("test", k.replace(" ", ""))
            whole = rust_validator({**doc, "$ref": f"#/definitions/{k.replace(' ', '')}"})
            assert run is not None, k
            for read in reads:
                each = all(whole.is_valid({"jsonrpc": "2.0", "method": "notifications/x", "params": p}) for p in read)
                assert run.is_valid(read) == each, (k, read)
    finally:
        F._params_run.cache_clear()
