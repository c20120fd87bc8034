"""Hand-made ids in the sans-IO session (no IO): their answers are the composer's, never the session's; the
session's own ids skip them; an id in use is named."""

from test_session import legacy_ready, modern_ready, of, sent, wire

from inspector.protocol import HandmadeAnswer, MalformedFrame, RequestFailed, ResponseReceived
from inspector.protocol import events as ev


def test_an_answer_to_a_handmade_id_is_the_composers_and_settles_nothing_of_the_session():
    s = legacy_ready()
    ours = s.send_request("tools/list")
    s.expect_handmade("5")  # the string twin of nothing in flight yet
    s.expect_handmade(ours.request_id + 100)
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": ours.request_id + 100, "result": {"tools": []}}))
    assert events == [ev.HandmadeAnswer(ours.request_id + 100)]
    assert s.in_flight(ours.request_id) == "tools/list"  # still waiting for its own answer
    # a second answer to the same hand-made id is no longer the composer's: a duplicate, as ever
    again = s.receive_frame(wire({"jsonrpc": "2.0", "id": ours.request_id + 100, "result": {}}))
    assert of(again, MalformedFrame)
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": ours.request_id, "result": {"tools": []}}))
    assert of(events, ResponseReceived)


def test_a_string_id_twin_of_a_request_in_flight_does_not_fail_it():
    s = legacy_ready()
    ours = s.send_request("tools/list")
    twin = str(ours.request_id)
    assert s.in_flight(twin) is None  # a different JSON-RPC id: allowed
    s.expect_handmade(twin)
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": twin, "result": {}}))
    assert events == [ev.HandmadeAnswer(twin)] and not of(events, RequestFailed)
    assert s.in_flight(ours.request_id) == "tools/list"


def test_the_sessions_ids_skip_reserved_and_handmade_ones():
    s = modern_ready()
    reserved = s.reserve_id()
    s.expect_handmade(reserved + 1)
    s.expect_handmade(reserved + 2)
    assert s.in_flight(reserved + 1) == "a hand-made request"
    request = s.send_request("tools/list")
    assert request.request_id == reserved + 3
    assert sent([request])[0]["params"]["_meta"] == s.request_meta()
    s.release_handmade(reserved + 1)
    assert s.in_flight(reserved + 1) is None


def test_a_malformed_answer_to_a_handmade_id_is_still_its_answer():
    s = legacy_ready()
    s.expect_handmade(77)
    events = s.receive_frame(wire({"jsonrpc": "2.0", "id": 77, "result": {}, "error": {"code": 1, "message": "x"}}))
    assert of(events, MalformedFrame) and of(events, HandmadeAnswer) == [HandmadeAnswer(77)]


def test_handmade_ids_are_remembered_up_to_a_bound():
    s = legacy_ready()
    for i in range(1100):
        s.expect_handmade(f"h{i}")
    assert s.in_flight("h0") is None and s.in_flight("h1099") == "a hand-made request"
