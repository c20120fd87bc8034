"""W3C trace context in `_meta` (the per-server setting): the sans-IO session puts a traceparent in every
request, a trace per tools/call, and keeps the trace across MRTR rounds, re-sent requests, a call's task
requests and our answers to the server requests the call caused (no IO)."""

import json
import re

import pytest
from support import spec_validator

from inspector.protocol import ClientSession, InputRequired, Mode, Send, ServerRequest
from inspector.protocol import tracecontext as tc

TRACEPARENT = re.compile(r"^00-[0-9a-f]{32}-[0-9a-f]{16}-01$")


def wire(obj) -> bytes:
    return json.dumps(obj).encode()


def sent(events) -> list[dict]:
    return [json.loads(e.data) for e in events if isinstance(e, Send)]


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def parts(message: dict) -> tuple[str, str]:
    value = message["params"]["_meta"]["traceparent"]
    assert TRACEPARENT.match(value), value
    _v, trace, span, _f = value.split("-")
    return trace, span


def legacy(trace: bool = True, capabilities=None) -> tuple[ClientSession, dict]:
    s = ClientSession(mode=Mode.parse("legacy"), capabilities=capabilities or {}, trace_context=trace)
    init = sent(s.start())[0]
    done = s.receive_frame(wire({"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "srv", "version": "1"}}}))
    assert sent(done)[0]["method"] == "notifications/initialized"
    return s, init


def modern(trace: bool = True, capabilities=None) -> ClientSession:
    s = ClientSession(mode=Mode.parse("modern"), capabilities=capabilities or {}, trace_context=trace)
    probe = sent(s.start())[0]
    s.receive_frame(wire({"jsonrpc": "2.0", "id": probe["id"], "result": {
        "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}}))
    return s


@pytest.mark.parametrize("value, ok", [
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", True),
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", True),
    ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", True),  # later versions: first 4 fields
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", False),  # version 00 has exactly four
    ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", False),
    ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", False),
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", False),
    ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", False),  # upper case is invalid
    ("00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", False),
    ("", False), (None, False), (7, False), (["00"], False), ("0" * 5000, False),
])
def test_traceparent_is_read_by_the_w3c_rules(value, ok):
    assert (tc.parse(value) is not None) is ok


def test_off_by_default_nothing_changes_on_the_wire():
    s, init = legacy(trace=False)
    assert "_meta" not in init["params"]
    call = sent([s.send_request("tools/call", {"name": "echo", "arguments": {}})])[0]
    assert "_meta" not in call["params"]
    assert s.traces is None


def test_every_request_has_one_and_each_tools_call_starts_a_trace():
    s, init = legacy()
    session_trace, _ = parts(init)
    listed = sent([s.send_request("tools/list")])[0]
    first = sent([s.send_request("tools/call", {"name": "echo", "arguments": {}}, progress_token="t1")])[0]
    second = sent([s.send_request("tools/call", {"name": "echo", "arguments": {}})])[0]
    assert parts(listed)[0] == session_trace  # everything but a call is in the session's trace
    assert parts(first)[0] != session_trace and parts(second)[0] not in (session_trace, parts(first)[0])
    spans = {parts(m)[1] for m in (init, listed, first, second)}
    assert len(spans) == 4  # a span of its own each
    assert first["params"]["_meta"]["progressToken"] == "t1"  # what else _meta held is kept
    for message in (listed, first):
        spec_validator("2025-11-25", "JSONRPCRequest").validate(message)


def test_a_traceparent_the_caller_chose_is_kept():
    s, _ = legacy()
    chosen = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    call = sent([s.send_request("tools/call", {"name": "echo", "_meta": {"traceparent": chosen}})])[0]
    assert call["params"]["_meta"]["traceparent"] == chosen


def test_answers_to_the_calls_server_requests_share_its_trace():
    s, _ = legacy(capabilities={"sampling": {}, "elicitation": {}, "roots": {}})
    send = s.send_request("tools/call", {"name": "ask", "arguments": {}}, progress_token="tok")
    call = sent([send])[0]
    trace, call_span = parts(call)
    other = sent([s.send_request("tools/list")])[0]
    # two requests in flight: the server request names the call's progress token
    request = of(s.receive_frame(wire({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage",
                                       "params": {"messages": [], "maxTokens": 5, "_meta": {"progressToken": "tok"}}})),
                 ServerRequest)[0]
    answer = json.loads(s.respond(request.id, {"role": "assistant", "content": {"type": "text", "text": "hi"},
                                              "model": "m"}).data)
    value = answer["result"]["_meta"]["traceparent"]
    assert value.split("-")[1] == trace and value.split("-")[2] != call_span
    # on the call's stream (HTTP): the call's trace, though the list is also in flight
    of(s.receive_frame(wire({"jsonrpc": "2.0", "id": "s2", "method": "roots/list"}), stream_of=call["id"]),
       ServerRequest)
    assert json.loads(s.respond("s2", {"roots": []}).data)["result"]["_meta"]["traceparent"].split("-")[1] == trace
    # nothing tells which request it belongs to: the session's trace
    s.receive_frame(wire({"jsonrpc": "2.0", "id": "s3", "method": "roots/list"}))
    session_trace = parts(other)[0]
    assert json.loads(s.respond("s3", {"roots": []}).data)["result"]["_meta"]["traceparent"].split("-")[1] \
        == session_trace
    # an error answer carries none (errors have no _meta), and forgets the request
    s.receive_frame(wire({"jsonrpc": "2.0", "id": "s4", "method": "roots/list"}))
    assert "_meta" not in json.dumps(json.loads(s.respond_error("s4", -1, "no").data))
    # the list answered: the call alone is in flight, so an unmarked request is the call's
    s.receive_frame(wire({"jsonrpc": "2.0", "id": other["id"], "result": {"tools": []}}))
    s.receive_frame(wire({"jsonrpc": "2.0", "id": "s5", "method": "elicitation/create",
                          "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}}))
    result = json.loads(s.respond("s5", {"action": "cancel", "_meta": {"kept": 1}}).data)["result"]
    assert result["_meta"]["kept"] == 1 and result["_meta"]["traceparent"].split("-")[1] == trace
    # ping is answered inside the session, untouched
    pong = sent(s.receive_frame(wire({"jsonrpc": "2.0", "id": "p", "method": "ping"})))[0]
    assert pong["result"] == {}


def test_mrtr_rounds_and_reissues_stay_in_the_first_rounds_trace():
    s = modern(capabilities={"elicitation": {}})
    first = sent([s.send_request("tools/call", {"name": "ask", "arguments": {}})])[0]
    trace, span1 = parts(first)
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": first["id"], "result": {
        "resultType": "input_required", "inputRequests": {"q": {"method": "elicitation/create", "params": {}}},
        "requestState": "st"}}))
    need = of(events, InputRequired)[0]
    again = sent([s.provide_input(need.request_id, {"q": {"action": "accept", "content": {}}})])[0]
    assert again["params"]["inputResponses"] and parts(again)[0] == trace and parts(again)[1] != span1
    reissued = sent([s.reissue(need.request_id)])[0]
    assert reissued["id"] != again["id"] and parts(reissued)[0] == trace
    spec_validator("2026-07-28", "JSONRPCRequest").validate(again)


def test_a_calls_task_requests_join_its_trace():
    s, _ = legacy()
    call = sent([s.send_request("tools/call", {"name": "slow", "arguments": {}, "task": {"ttl": 1000}})])[0]
    trace, _ = parts(call)
    s.receive_frame(wire({"jsonrpc": "2.0", "id": call["id"], "result": {
        "task": {"taskId": "T1", "status": "working", "createdAt": "2025-01-01T00:00:00Z", "ttl": 1000}}}))
    poll = sent([s.send_request("tasks/get", {"taskId": "T1"})])[0]
    other = sent([s.send_request("tasks/get", {"taskId": "T2"})])[0]
    assert parts(poll)[0] == trace and parts(other)[0] != trace


def test_the_book_survives_odd_ids_and_forgets_old_answers():
    book = tc.TraceBook()
    book.server_request(["unhashable"], None)
    assert book.answer(["unhashable"], {"x": 1}) == {"x": 1}
    book.forget_answer(["unhashable"])
    for i in range(2000):
        book.server_request(i, None)
    assert book.answer(0, {}) == {}  # forgotten: only the latest are kept
    assert "traceparent" in book.answer(1999, {})["_meta"]
    book.server_request("x", None)
    assert book.answer("x", {"_meta": "not an object"}) == {"_meta": "not an object"}
    assert book.answer("y", [1]) == [1]
