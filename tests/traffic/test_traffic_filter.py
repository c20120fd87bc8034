"""Filtered views: every criterion, incremental updates, checked against a plain reference."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from traffic_helpers import filled_store

from inspector.protocol import jsonrpc as rpc
from inspector.traffic import FilteredView, Frame, TrafficFilter, TrafficStore
from inspector.traffic.filter import CHUNK


def reference(store: TrafficStore, flt: TrafficFilter) -> list[int]:
    """What the filter means, one row at a time."""
    text = flt.text
    fold = text == text.lower()
    out = []
    for n in range(flt.start, len(store)):
        if flt.directions is not None and store.direction(n) not in flt.directions:
            continue
        if flt.kinds is not None and store.kind(n) not in flt.kinds:
            continue
        if flt.servers is not None and store.server_id(n) not in flt.servers:
            continue
        if text:
            hay = [store.method(n) or "", store.malformed(n) or "", store.head(n).decode("utf-8", "replace")]
            if fold:
                hay = [h.lower() for h in hay]
            if not any(text in h for h in hay):
                continue
        out.append(n)
    return out


def test_real_traffic_filters():
    store = filled_store()
    cases = [
        TrafficFilter(),
        TrafficFilter.make(text="tools/call"),
        TrafficFilter.make(text="TOOLS"),  # a capital: case-sensitive, matches nothing
        TrafficFilter.make(text="hello traffic"),
        TrafficFilter.make(text="utf-8"),  # in a malformed reason only
        TrafficFilter.make(text="panic"),  # a stderr line
        TrafficFilter.make(directions="in"),
        TrafficFilter.make(directions={"out", "err"}),
        TrafficFilter.make(kinds={"error", "malformed"}),
        TrafficFilter.make(kinds="response", text="tools/list"),
        TrafficFilter.make(servers="hostile"),
        TrafficFilter.make(servers="hostile", kinds="request", directions="in"),
        TrafficFilter.make(servers=set()),
        TrafficFilter.make(start=30, kinds="response"),
    ]
    for flt in cases:
        assert store.filter(flt).rows.tolist() == reference(store, flt), flt
    # a response matches its request's method although its own text does not name it
    rows = store.filter(text="tools/list", kinds="response").rows.tolist()
    assert len(rows) == 1 and b"tools/list" not in store.raw(rows[0])
    assert store.filter(text="utf-8").rows.tolist() == [n for n in range(len(store))
                                                       if (store.malformed(n) or "").startswith("not UTF-8")]
    assert store.filter(text="TOOLS").rows.tolist() == []


def test_a_match_across_two_frames_is_not_a_match():
    store = TrafficStore(":memory:")
    store.add("s", Frame("err", b"abc", 0, 0))
    store.add("s", Frame("err", b"def", 0, 0))
    assert store.filter(text="cd").rows.tolist() == []
    assert store.filter(text="de").rows.tolist() == [1]


def test_views_are_incremental_and_can_be_spread_over_ticks():
    store = TrafficStore(":memory:")
    view = store.filter(text="even")
    for i in range(CHUNK + 500):
        store.add("s", Frame("err", f"{'even' if i % 2 == 0 else 'odd'} {i}".encode(), i, i))
    assert not view.complete
    assert view.update(limit=1000) == 500 and not view.complete
    assert view.update() > 0 and view.complete
    assert view.rows.tolist() == list(range(0, CHUNK + 500, 2))
    assert view.row_of(10) == 5 and view.row_of(11) is None
    assert view.update() == 0


methods = st.sampled_from(["tools/call", "tools/list", "ping", "notifications/message", "Odd/Case"])
ids = st.one_of(st.integers(0, 5), st.sampled_from(["1", "a", "p1"]))
words = st.text(alphabet="abcXYZ é/", max_size=6)


@st.composite
def frames(draw):
    kind = draw(st.sampled_from(["req", "res", "err_res", "note", "junk", "stderr"]))
    direction = draw(st.sampled_from(["in", "out"]))
    word = draw(words)
    if kind == "req":
        obj = {"jsonrpc": "2.0", "id": draw(ids), "method": draw(methods), "params": {"w": word}}
    elif kind == "res":
        obj = {"jsonrpc": "2.0", "id": draw(ids), "result": {"w": word}}
    elif kind == "err_res":
        obj = {"jsonrpc": "2.0", "id": draw(ids), "error": {"code": -1, "message": word}}
    elif kind == "note":
        obj = {"jsonrpc": "2.0", "method": draw(methods), "params": {"w": word}}
    if kind == "stderr":
        return draw(st.sampled_from(["a", "b"])), Frame("err", word.encode(), 0, 0)
    data = word.encode() if kind == "junk" else json.dumps(obj, ensure_ascii=False).encode()
    malformed = draw(st.sampled_from([None, None, None, "Odd reason xyz"]))
    msg = rpc.parse(data) if direction == "in" else None
    return draw(st.sampled_from(["a", "b"])), Frame(direction, data, 0, 0, malformed, msg)


@settings(max_examples=150)
@given(st.lists(frames(), max_size=40), st.lists(frames(), max_size=20), words,
       st.none() | st.sets(st.sampled_from(["in", "out", "err"])),
       st.none() | st.sets(st.sampled_from(["request", "response", "notification", "error", "malformed", "stderr"])),
       st.none() | st.sets(st.sampled_from(["a", "b"])), st.integers(0, 10))
def test_filter_agrees_with_the_reference(first, later, text, directions, kinds, servers, start):
    store = TrafficStore(":memory:")
    for server, f in first:
        store.add(server, f)
    flt = TrafficFilter.make(text=text, directions=directions, kinds=kinds, servers=servers, start=start)
    view = store.filter(flt)
    for server, f in later:
        store.add(server, f)
    view.update(limit=7)
    view.update()
    assert view.rows.tolist() == reference(store, flt)


def test_a_time_budget_stops_after_a_slice():
    from inspector.traffic.filter import STEP

    store = TrafficStore(":memory:")
    for i in range(3 * STEP):
        store.add("s", Frame("err", b"line %d" % i, i, i))
    view = store.filter(TrafficFilter.make(text="line"))  # store.filter takes everything in at once
    assert len(view) == 3 * STEP
    view = FilteredView(store, TrafficFilter.make(text="line"))
    assert view.update(seconds=0) == STEP and not view.complete
    assert view.update(seconds=10) == 2 * STEP and view.complete
