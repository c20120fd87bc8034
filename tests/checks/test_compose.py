"""A hand-made frame judged as typed (checks/compose.py): each problem with its line, column and pointer, the
revision's own definitions, and templates that every revision's schema accepts."""

from __future__ import annotations

import json

import pytest
from support import spec_validator

from inspector.checks import compose
from inspector.protocol import ClientSession
from inspector.protocol.schemas import REVISIONS

CALL = """{
  "jsonrpc": "2.0",
  "id": 3,
  "method": "tools/call",
  "params": {"name": 7, "arguments": {}}
}"""


def texts(text, revision):
    return [str(p) for p in compose.problems(text, revision)]


def test_a_schema_problem_is_named_at_its_line_and_column():
    found = compose.problems(CALL, "2025-11-25")
    assert found[0] == compose.Problem(5, 22, "/params/name", found[0].message)
    assert found[0].message.startswith('7 is not of type "string"') and "CallToolRequest" in found[0].message
    assert str(found[0]).startswith("line 5, column 22 · /params/name: ")
    # the modern revision wants the per-request _meta as well
    assert any("_meta" in t for t in texts(CALL, "2026-07-28"))


def test_text_that_is_not_json_is_named_where_it_stops_being_json():
    assert texts('{\n  "a": ', "2025-06-18") == ["line 2, column 8 · (top level): not JSON: Expecting value"]
    assert compose.problems("[" * 100_000, None)[0].message.startswith("JSON nested too deeply") or \
        compose.problems("[" * 100_000, None)[0].message.startswith("not JSON")


def test_what_json_rpc_and_the_revision_say_of_a_message():
    assert texts('{"id": 1, "method": "ping"}', "2025-06-18")[0].endswith('not a JSON-RPC message: missing "jsonrpc" '
                                                                          "member")
    server_only = texts('{"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {}}', "2025-06-18")
    assert "a request the server sends in 2025-06-18, not a client" in server_only[0]
    unknown = texts('{"jsonrpc": "2.0", "id": 1, "method": "ping"}', "2026-07-28")
    assert "2026-07-28 defines no request 'ping': expect -32601" in unknown[0]
    assert "defines no notification" in texts('{"jsonrpc": "2.0", "method": "notifications/x"}', "2025-11-25")[0]
    assert texts('{"jsonrpc": "2.0", "id": 1, "result": 5}', "2025-11-25")[0].startswith(
        "line 1, column 39 · /result: 5 is not of type")
    assert "JSONRPCError" in texts('{"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}', "2024-11-05")[-1]
    assert compose.problems('{"jsonrpc": "2.0", "id": 1, "method": "ping"}', "2025-06-18") == []
    assert compose.problems('{"jsonrpc": "2.0", "method": "anything"}', None) == []  # no revision: JSON-RPC only
    big = json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"pad": "a" * (compose.TEXT_MAX + 1)}})
    assert compose.problems(big, "2025-11-25") == []  # too long to judge at each keystroke


def test_a_batch_is_judged_item_by_item():
    batch = '[{"jsonrpc": "2.0", "id": 1, "method": "ping"},\n 3]'
    found = texts(batch, "2025-06-18")
    assert found[0].startswith("line 1, column 1 · (top level): a batch array: JSON-RPC batches are not part of MCP")
    assert found[1] == "line 2, column 2 · /1: not a JSON-RPC message: not a JSON object (a int)"
    assert texts("[]", "2025-03-26") == ["line 1, column 1 · (top level): an empty batch"]  # it had batches


def test_locate_finds_every_value_also_in_odd_texts():
    text = '{"a\\"b": [1, {"c": null}], "d": "e", "deep": ' + "[" * 70 + "]" * 70 + "}"
    places = compose.locate(text)
    assert places[("a\"b", 1, "c")] == text.index("null") and places[("d",)] == text.index('"e"')
    assert ("deep", *([0] * 63)) in places and ("deep", *([0] * 64)) not in places
    assert compose.locate("{") == {(): 0}  # broken text: what could be read


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_template_is_a_valid_message_of_its_revision(revision):
    meta = ClientSession().request_meta() if revision == "2026-07-28" else None
    tools = [{"name": "echo", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}},
                                              "required": ["message"]}}]
    methods = compose.methods(revision)
    assert "tools/call" in methods and methods[-2:] == [compose.RESPONSE, compose.ERROR_RESPONSE]
    for method in methods:
        message = compose.template(revision, method, request_id=9, meta=meta, tools=tools)
        assert compose.problems(json.dumps(message, indent=2), revision) == [], method
        if method not in (compose.RESPONSE, compose.ERROR_RESPONSE):
            kind = "JSONRPCRequest" if "id" in message else "JSONRPCNotification"
            spec_validator(revision, kind).validate(message)
    call = compose.template(revision, "tools/call", request_id=9, meta=meta, tools=tools)
    assert call["params"]["name"] == "echo" and call["params"]["arguments"] == {"message": "x"}


def test_no_revision_still_gives_a_skeleton():
    assert compose.methods(None) == [compose.RESPONSE, compose.ERROR_RESPONSE]
    assert compose.template(None, "tools/list", request_id=1) == {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
