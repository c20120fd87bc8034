"""The client session, wired back to back with scripted server answers (no IO)."""

import json

import pytest
from support import spec_validator

from inspector.protocol import (
    ClientSession,
    ErrorReceived,
    HandshakeComplete,
    HandshakeFailed,
    InputRequired,
    LateResponse,
    MalformedFrame,
    Mode,
    ProgressReceived,
    RequestFailed,
    ResponseReceived,
    Send,
    ServerRequest,
)
from inspector.protocol.versions import Era


def wire(obj) -> bytes:
    return json.dumps(obj).encode()


def sent(events) -> list[dict]:
    return [json.loads(e.data) for e in events if isinstance(e, Send)]


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def legacy_ready(version="2025-11-25", capabilities=None) -> ClientSession:
    s = ClientSession(mode=Mode.parse("legacy"), capabilities=capabilities or {})
    init = sent(s.start())[0]
    s.receive_frame(wire({"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "srv", "version": "1"}}}))
    return s


DISCOVER_RESULT = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                   "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "2"}},
                   "instructions": "hi", "ttlMs": 1000, "cacheScope": "public"}


def modern_ready(capabilities=None) -> ClientSession:
    s = ClientSession(mode=Mode.parse("auto"), capabilities=capabilities or {})
    probe = sent(s.start())[0]
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": probe["id"], "result": DISCOVER_RESULT}))
    assert of(events, HandshakeComplete)[0].era is Era.MODERN
    return s


# --- handshake -------------------------------------------------------------------------

def test_legacy_handshake_valid_against_the_spec():
    s = ClientSession(mode=Mode.parse("legacy"))
    init = sent(s.start())[0]
    spec_validator("2025-11-25", "InitializeRequest").validate(init)
    assert init["params"]["protocolVersion"] == "2025-11-25"
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "x", "version": "1"},
        "instructions": "be nice"}}))
    initialized = sent(events)
    assert initialized == [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
    spec_validator("2025-11-25", "InitializedNotification").validate(initialized[0])
    done = of(events, HandshakeComplete)[0]
    assert (done.era, done.protocol_version, done.instructions) == (Era.LEGACY, "2025-11-25", "be nice")


@pytest.mark.parametrize("older", ["2025-06-18", "2025-03-26", "2024-11-05"])
def test_legacy_accepts_a_downgrade_we_support(older):
    s = legacy_ready(older)
    assert s.protocol_version == older and s.era is Era.LEGACY


def test_legacy_refuses_an_unknown_version_clearly():
    s = ClientSession(mode=Mode.parse("legacy"))
    init = sent(s.start())[0]
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": "1999-01-01", "capabilities": {}, "serverInfo": {"name": "x", "version": "1"}}}))
    failed = of(events, HandshakeFailed)[0]
    assert failed.kind == "version" and "1999-01-01" in failed.reason
    assert sent(events) == []  # no notifications/initialized after a refusal


def test_initialize_error_fails_the_handshake_with_the_servers_words():
    s = ClientSession(mode=Mode.parse("legacy"))
    init = sent(s.start())[0]
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": init["id"],
                                   "error": {"code": -32603, "message": "database locked"}}))
    failed = of(events, HandshakeFailed)[0]
    assert failed.kind == "error" and "database locked" in failed.reason


def test_pinned_version_is_what_initialize_asks_for():
    s = ClientSession(mode=Mode.parse("2025-03-26"))
    init = sent(s.start())[0]
    assert init["method"] == "initialize" and init["params"]["protocolVersion"] == "2025-03-26"
    spec_validator("2025-03-26", "InitializeRequest").validate(init)


def test_auto_probes_with_discover_then_falls_back_to_initialize():
    s = ClientSession()
    probe = sent(s.start())[0]
    spec_validator("2026-07-28", "DiscoverRequest").validate(probe)
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": probe["id"],
                                   "error": {"code": -32601, "message": "Method not found"}}))
    assert [m["method"] for m in sent(events)] == ["initialize"]


def test_auto_falls_back_when_the_probe_times_out_and_ignores_the_late_answer():
    s = ClientSession()
    probe = sent(s.start())[0]
    init = sent(s.probe_timed_out())[0]
    assert init["method"] == "initialize"
    late = s.receive_frame(wire({"jsonrpc": "2.0", "id": probe["id"], "error": {"code": -32601, "message": "x"}}))
    assert of(late, LateResponse) and not of(late, MalformedFrame)


def test_a_probe_answered_after_the_fallback_is_asked_again_when_the_server_went_modern():
    """A slow server answers server/discover after the probe gave up, then refuses the initialize that followed
    (its connection now serves 2026-07-28): the session asks again and waits, and ends modern."""
    s = ClientSession()
    probe = sent(s.start())[0]
    init = sent(s.probe_timed_out())[0]
    late = s.receive_frame(wire({"jsonrpc": "2.0", "id": probe["id"], "result": DISCOVER_RESULT}))
    assert of(late, LateResponse) and not of(late, HandshakeComplete)
    refused = s.receive_frame(wire({"jsonrpc": "2.0", "id": init["id"], "error": {
        "code": -32022, "message": "connection is serving the 2026-07-28 protocol",
        "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}}))
    again = sent(refused)
    assert [m["method"] for m in again] == ["server/discover"] and not of(refused, HandshakeFailed)
    assert s.probe_timed_out() == []  # no second fallback: this time the answer is waited for
    done = s.receive_frame(wire({"jsonrpc": "2.0", "id": again[0]["id"], "result": DISCOVER_RESULT}))
    assert of(done, HandshakeComplete)[0].era is Era.MODERN and s.server_info == {"name": "modern", "version": "2"}
    # a legacy-only refusal is still a failure, and so is any refusal in legacy mode
    other = ClientSession()
    sent(other.start())
    init = sent(other.probe_timed_out())[0]
    failed = other.receive_frame(wire({"jsonrpc": "2.0", "id": init["id"], "error": {
        "code": -32022, "message": "no", "data": {"supported": ["2024-11-05"]}}}))
    assert of(failed, HandshakeFailed)


def test_auto_goes_modern_on_a_discover_result():
    s = modern_ready()
    assert s.server_info == {"name": "modern", "version": "2"} and s.instructions == "hi"


def test_auto_negotiates_down_on_unsupported_protocol_version():
    s = ClientSession()
    probe = sent(s.start())[0]
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": probe["id"], "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": ["2025-06-18"], "requested": "2026-07-28"}}}))
    init = sent(events)[0]
    assert init["params"]["protocolVersion"] == "2025-06-18"


def test_forced_modern_refuses_a_legacy_only_server():
    s = ClientSession(mode=Mode.parse("modern"))
    probe = sent(s.start())[0]
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": probe["id"], "error": {
        "code": -32022, "message": "Unsupported", "data": {"supported": ["2025-11-25"]}}}))
    assert of(events, HandshakeFailed)[0].kind == "version"


def test_discover_result_without_our_revision_falls_back_in_auto():
    s = ClientSession()
    probe = sent(s.start())[0]
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": probe["id"], "result": {
        "resultType": "complete", "supportedVersions": ["2025-11-25"], "capabilities": {}}}))
    assert sent(events)[0]["params"]["protocolVersion"] == "2025-11-25"


# --- modern requests -----------------------------------------------------------------------

MODERN_REQUESTS = [
    ("tools/list", {}, "ListToolsRequest"),
    ("tools/call", {"name": "get_weather", "arguments": {"city": "Oslo"}}, "CallToolRequest"),
    ("resources/list", {}, "ListResourcesRequest"),
    ("resources/templates/list", {}, "ListResourceTemplatesRequest"),
    ("resources/read", {"uri": "file:///a"}, "ReadResourceRequest"),
    ("prompts/list", {"cursor": "abc"}, "ListPromptsRequest"),
    ("prompts/get", {"name": "p", "arguments": {"a": "b"}}, "GetPromptRequest"),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "x"}},
     "CompleteRequest"),
    ("server/discover", {}, "DiscoverRequest"),
]


@pytest.mark.parametrize("method, params, type_name", MODERN_REQUESTS)
def test_every_modern_request_carries_meta_and_validates(method, params, type_name):
    s = modern_ready(capabilities={"elicitation": {}})
    s.log_level = "info"
    msg = json.loads(s.send_request(method, params, progress_token="tok").data)
    spec_validator("2026-07-28", type_name).validate(msg)
    meta = msg["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {"elicitation": {}}
    assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "spyglass"
    assert meta["io.modelcontextprotocol/logLevel"] == "info"
    assert meta["progressToken"] == "tok"


LEGACY_REQUESTS = [
    ("tools/list", None, "ListToolsRequest"),
    ("tools/call", {"name": "add", "arguments": {"a": 1}}, "CallToolRequest"),
    ("resources/read", {"uri": "file:///a"}, "ReadResourceRequest"),
    ("prompts/get", {"name": "p"}, "GetPromptRequest"),
    ("logging/setLevel", {"level": "debug"}, "SetLevelRequest"),
    ("ping", None, "PingRequest"),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "x"}},
     "CompleteRequest"),
]


@pytest.mark.parametrize("revision", ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
@pytest.mark.parametrize("method, params, type_name", LEGACY_REQUESTS)
def test_every_legacy_request_validates_in_each_revision(revision, method, params, type_name):
    s = legacy_ready(revision)
    msg = json.loads(s.send_request(method, params, progress_token=7).data)
    spec_validator(revision, type_name).validate(msg)
    assert "io.modelcontextprotocol/protocolVersion" not in json.dumps(msg)


# --- MRTR ------------------------------------------------------------------------------------

def test_mrtr_round_trip_resends_with_new_id_responses_and_identical_state():
    s = modern_ready(capabilities={"elicitation": {}})
    first = json.loads(s.send_request("tools/call", {"name": "deploy", "arguments": {"env": "prod"}}).data)
    state = "eyJ\u00e9t\u00e4t\u00e9\":\"x/+=\"}\\u00e9"
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": first["id"], "result": {
        "resultType": "input_required", "requestState": state,
        "inputRequests": {"who": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}}}}}))
    need = of(events, InputRequired)[0]
    assert need.request_id == first["id"] and need.round == 1 and "who" in need.input_requests
    retry = json.loads(s.provide_input(need.request_id, {"who": {"action": "accept", "content": {"n": "x"}}}).data)
    spec_validator("2026-07-28", "CallToolRequest").validate(retry)
    assert retry["id"] != first["id"]
    assert retry["params"]["name"] == "deploy" and retry["params"]["arguments"] == {"env": "prod"}
    assert retry["params"]["requestState"] == state
    assert retry["params"]["inputResponses"] == {"who": {"action": "accept", "content": {"n": "x"}}}
    done = s.receive_frame(wire({"jsonrpc": "2.0", "id": retry["id"], "result": {
        "resultType": "complete", "content": [{"type": "text", "text": "ok"}]}}))
    assert of(done, ResponseReceived)[0].request_id == first["id"]


def test_mrtr_state_only_is_resent_at_once():
    s = modern_ready()
    first = json.loads(s.send_request("tools/call", {"name": "t"}).data)
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": first["id"], "result": {
        "resultType": "input_required", "requestState": "abc"}}))
    again = sent(events)[0]
    assert again["params"]["requestState"] == "abc" and "inputResponses" not in again["params"]


def test_mrtr_rounds_are_bounded():
    s = modern_ready()
    s.max_input_rounds = 3
    msg = json.loads(s.send_request("tools/call", {"name": "t"}).data)
    for _ in range(3):
        events = s.receive_frame(wire({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "resultType": "input_required", "requestState": "s"}}))
        msg = sent(events)[0]
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": msg["id"], "result": {
        "resultType": "input_required", "requestState": "s"}}))
    failed = of(events, RequestFailed)[0]
    assert "giving up after 3" in failed.reason


# --- odd input ----------------------------------------------------------------------------------

def test_server_ping_is_answered_and_unsupported_requests_refused():
    s = legacy_ready()
    pong = sent(s.receive_frame(wire({"jsonrpc": "2.0", "id": "p1", "method": "ping"})))[0]
    assert pong == {"jsonrpc": "2.0", "id": "p1", "result": {}}
    refused = sent(s.receive_frame(wire({"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage",
                                         "params": {"messages": [], "maxTokens": 5}})))[0]
    assert refused["error"]["code"] == -32601 and "sampling" in refused["error"]["message"]
    spec_validator("2025-11-25", "JSONRPCErrorResponse").validate(refused)


def test_declared_capability_routes_the_request_to_a_handler():
    s = legacy_ready(capabilities={"roots": {"listChanged": True}})
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": 3, "method": "roots/list"}))
    assert of(events, ServerRequest)[0].method == "roots/list"


def test_stray_duplicate_and_wrong_type_answers_are_malformed():
    s = legacy_ready()
    rid = json.loads(s.send_request("tools/list").data)["id"]
    assert "unknown id 99999" in of(s.receive_frame(wire({"jsonrpc": "2.0", "id": 99999, "result": {}})),
                                    MalformedFrame)[0].reason
    ok = s.receive_frame(wire({"jsonrpc": "2.0", "id": rid, "result": {"tools": []}}))
    assert of(ok, ResponseReceived)
    dup = s.receive_frame(wire({"jsonrpc": "2.0", "id": rid, "result": {"tools": []}}))
    assert "already answered" in of(dup, MalformedFrame)[0].reason
    rid2 = json.loads(s.send_request("tools/list").data)["id"]
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": str(rid2), "result": {"tools": []}}))
    assert "is a string" in of(events, MalformedFrame)[0].reason
    assert of(events, RequestFailed)[0].request_id == rid2  # fails now, not after a timeout


def test_result_of_the_wrong_shape_fails_the_request():
    s = legacy_ready()
    rid = json.loads(s.send_request("tools/list").data)["id"]
    failed = of(s.receive_frame(wire({"jsonrpc": "2.0", "id": rid, "result": {"tools": "nope"}})), RequestFailed)[0]
    assert '"tools" is a string, not a list' in failed.reason


def test_cancel_sends_a_valid_notification_and_late_answer_is_harmless():
    s = legacy_ready()
    rid = json.loads(s.send_request("tools/call", {"name": "slow"}).data)["id"]
    note = json.loads(s.cancel(rid, "user").data)
    spec_validator("2025-11-25", "CancelledNotification").validate(note)
    assert note["params"]["requestId"] == rid
    assert of(s.receive_frame(wire({"jsonrpc": "2.0", "id": rid, "result": {"content": []}})), LateResponse)


def test_progress_is_tied_to_its_request():
    s = legacy_ready()
    rid = json.loads(s.send_request("tools/call", {"name": "x"}, progress_token="t-1").data)["id"]
    p = of(s.receive_frame(wire({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
        "progressToken": "t-1", "progress": 3, "total": 10, "message": "step 3"}})), ProgressReceived)[0]
    assert (p.request_id, p.progress, p.total, p.message) == (rid, 3, 10, "step 3")


def test_error_response_is_reported_with_code_and_message():
    s = legacy_ready()
    rid = json.loads(s.send_request("tools/call", {"name": "nope"}).data)["id"]
    err = of(s.receive_frame(wire({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "Unknown tool"}})),
             ErrorReceived)[0]
    assert err.error.code == -32602 and err.request_id == rid


def test_request_ids_are_unique():
    s = legacy_ready()
    ids = {json.loads(s.send_request("ping").data)["id"] for _ in range(1000)}
    assert len(ids) == 1000


def test_pagination_stops_on_a_repeated_cursor():
    from inspector.protocol.pagination import PaginationError, Paginator

    pager = Paginator("tools")
    pager.add({"tools": [{"name": "a"}], "nextCursor": "c1"})
    assert pager.params() == {"cursor": "c1"}
    pager.add({"tools": [{"name": "b"}], "nextCursor": "c2"})
    with pytest.raises(PaginationError, match="repeated cursor"):
        pager.add({"tools": [{"name": "c"}], "nextCursor": "c1"})
    done = Paginator("tools")
    done.add({"tools": [], "nextCursor": ""})
    assert done.done and done.params() is None
