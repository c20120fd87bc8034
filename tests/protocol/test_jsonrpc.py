import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.protocol import ErrorResponse, Malformed, Notification, Request, Response, parse, serialize
from inspector.protocol import jsonrpc as rpc
from inspector.protocol.framing import Oversize


@pytest.mark.parametrize("raw, reason", [
    (b"INFO starting up", "bad JSON"),
    (b"\xff\xfe garbage", "not UTF-8"),
    (b"", "blank line"),
    (b"   ", "blank line"),
    (b"[1,2]", "batch array"),
    (b'"just a string"', "not a JSON object"),
    (b'{"id":1,"result":{}}', 'missing "jsonrpc"'),
    (b'{"jsonrpc":"1.0","id":1,"result":{}}', 'not "2.0"'),
    (b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}', "both"),
    (b'{"jsonrpc":"2.0","id":1.5,"result":{}}', "neither a string nor an integer"),
    (b'{"jsonrpc":"2.0","id":true,"method":"x"}', "neither a string nor an integer"),
    (b'{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}', "integer"),
    (b'{"jsonrpc":"2.0","id":1}', "neither a request"),
    (b'{"jsonrpc":"2.0","method":5}', "not a string"),
    (b'{"jsonrpc":"2.0","method":"x","params":[1]}', "not an object"),
])
def test_malformed_frames_keep_raw_bytes_and_say_why(raw, reason):
    msg = parse(raw)
    assert isinstance(msg, Malformed)
    assert msg.raw == raw
    assert reason in msg.reason


def test_deep_nesting_is_malformed_not_a_crash():
    raw = b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    msg = parse(raw)
    assert isinstance(msg, Malformed) and "nested too deeply" in msg.reason


def test_oversize_marker_becomes_malformed():
    msg = parse(Oversize(b"abc", 70_000_000))
    assert isinstance(msg, Malformed) and "70000000 bytes" in msg.reason


def test_valid_messages_classified():
    assert parse(b'{"jsonrpc":"2.0","id":1,"method":"ping"}') == Request(1, "ping")
    assert parse(b'{"jsonrpc":"2.0","method":"n","params":{"a":1}}') == Notification("n", {"a": 1})
    assert parse(b'{"jsonrpc":"2.0","id":"x","result":null}') == Response("x", None)
    err = parse(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
    assert isinstance(err, ErrorResponse) and err.id is None and err.error.code == -32700


def test_big_integers_survive_round_trip():
    big = 2**64 + 1
    msg = parse(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"n": big}}).encode())
    assert msg.result["n"] == big
    assert b"18446744073709551617" in serialize(Response(1, {"n": big}))


def test_lone_surrogate_from_peer_can_be_sent_back():
    msg = parse(b'{"jsonrpc":"2.0","id":1,"result":{"s":"\\ud800"}}')
    out = serialize(Response(1, msg.result))
    assert json.loads(out)["result"]["s"] == "\ud800"


@settings(max_examples=250)
@given(st.binary(max_size=500))
def test_arbitrary_bytes_never_raise(data):
    parse(data)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=250)
@given(st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]), json_values))
def test_arbitrary_json_objects_never_raise(obj):
    parse(json.dumps(obj).encode())


json_texts = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=2**62, max_value=2**70).map(lambda n: n * 3)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
).map(lambda v: json.dumps(v).encode())


@settings(max_examples=200)
@given(json_texts | st.binary(max_size=200) | st.sampled_from([b"\xef\xbb\xbf{}", b'{"a":1,"a":2}', b"[1e400]",
                                                                 b'"\\ud800"', b"  ", b"[" * 3000]))
def test_the_fast_parser_reads_every_frame_as_the_standard_library_does(data):
    """msgspec first, then the standard library: the same value (and type) or the same problem, for any bytes."""
    import msgspec

    from inspector.protocol import jsonrpc

    previous = jsonrpc.use_loads(None)
    try:
        plain = jsonrpc.decode(data)
        jsonrpc.use_loads(msgspec.json.Decoder().decode)
        fast = jsonrpc.decode(data)
    finally:
        jsonrpc.use_loads(previous)

    def same(a, b):
        if isinstance(a, float) and isinstance(b, float) and a != a:
            return b != b
        if type(a) is not type(b):
            return False
        if isinstance(a, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, dict):
            return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
        return a == b
    assert plain[1] == fast[1] and same(plain[0], fast[0]), (data[:80], plain, fast)


def test_a_big_frame_is_parsed_with_the_garbage_collector_paused_and_left_as_it_was(monkeypatch):
    import gc

    seen: list[bool] = []
    real = rpc._classify
    monkeypatch.setattr(rpc, "_classify", lambda obj, raw: (seen.append(gc.isenabled()), real(obj, raw))[1])
    big = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"rows": [{"n": i} for i in range(100_000)]}}).encode()
    assert len(big) > rpc.QUIET_GC_BYTES
    message = rpc.parse(big)
    assert isinstance(message, rpc.Response) and len(message.result["rows"]) == 100_000
    small = rpc.parse(b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}')
    assert isinstance(small, rpc.Notification)
    assert seen == [False, True] and gc.isenabled()
    broken = rpc.parse(big[:-1])  # refused by both parsers: still said why, the collector back on
    assert isinstance(broken, rpc.Malformed) and gc.isenabled()
    gc.disable()
    try:
        rpc.parse(big)
        assert not gc.isenabled()  # whoever turned it off keeps it off
    finally:
        gc.enable()


@settings(max_examples=250)
@given(st.lists(st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]),
                                json_values | st.just("2.0") | st.just("notifications/message")).map(
    lambda obj: json.dumps(obj).encode()) | st.binary(max_size=40) | st.just(b'{"jsonrpc":"2.0","method":"m"}'),
    max_size=8))
def test_a_read_parsed_at_once_is_parsed_as_frame_by_frame(raws):
    """`parse_many` (a flood's read, with a shorter way for a notification) gives what `parse` gives each frame."""
    import msgspec

    previous = rpc.use_loads(msgspec.json.Decoder().decode)
    try:
        raws = [*raws, Oversize(b"{", 10**9)]
        assert rpc.parse_many(raws) == [parse(raw) for raw in raws]
    finally:
        rpc.use_loads(previous)
