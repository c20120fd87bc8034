"""The timeline model (Qt-free): spans and their outcomes, ticks, per-method latency, level of detail, and
incremental updates that equal a build from scratch. Checked against brute force over the store's public API."""

from __future__ import annotations

import json
import math
import random

import pytest
from traffic_helpers import filled_store

from inspector.traffic import Frame, TrafficStore
from inspector.traffic import timeline as tlm
from inspector.traffic.timeline import Timeline


class Wire:
    """Builds a store frame by frame, the way the client reports them (times in seconds from 100)."""

    def __init__(self) -> None:
        self.store = TrafficStore(":memory:")
        self.t = 100.0
        self.next_id = 1

    def at(self, dt: float) -> Wire:
        self.t += dt
        return self

    def add(self, server: str, direction: str, msg: dict, meta: dict | None = None) -> int:
        msg = {"jsonrpc": "2.0", **msg}
        return self.store.add(server, Frame(direction, json.dumps(msg).encode(), self.t, 1.7e9 + self.t, meta=meta))

    def request(self, server: str, method: str, params: dict | None = None, *, direction: str = "out",
                rid: int | str | None = None, meta: dict | None = None) -> tuple[int, int | str]:
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        msg = {"id": rid, "method": method, **({"params": params} if params is not None else {})}
        return self.add(server, direction, msg, meta), rid

    def call(self, server: str, tool: str, **kw) -> tuple[int, int | str]:
        return self.request(server, "tools/call", {"name": tool, "arguments": {}}, **kw)

    def answer(self, server: str, rid: int | str, result: dict | None = None, *, direction: str = "in",
               meta: dict | None = None) -> int:
        return self.add(server, direction, {"id": rid, "result": result if result is not None else {}}, meta)

    def fail(self, server: str, rid: int | str, *, direction: str = "in") -> int:
        return self.add(server, direction, {"id": rid, "error": {"code": -32602, "message": "nope"}})

    def notify(self, server: str, method: str, params: dict | None = None, *, direction: str = "in") -> int:
        return self.add(server, direction, {"method": method, **({"params": params} if params is not None else {})})

    def cancel(self, server: str, rid: int | str, *, direction: str = "out") -> int:
        return self.notify(server, "notifications/cancelled", {"requestId": rid, "reason": "user"},
                           direction=direction)


TOOL_ERROR = {"content": [{"type": "text", "text": "cannot divide by zero"}], "isError": True}


def built(store: TrafficStore) -> Timeline:
    tl = Timeline(store)
    tl.update()
    return tl


def spans_by_row(tl: Timeline) -> dict[int, tlm.Span]:
    return {tl.span_row[i]: tl.span(i) for i in range(len(tl))}


# ---------------------------------------------------------------------- outcomes
def test_every_outcome_of_a_request():
    w = Wire()
    ok, rid = w.request("a", "tools/list")
    w.at(0.010).answer("a", rid)
    err, rid = w.at(0.001).call("a", "nope")
    w.at(0.002).fail("a", rid)
    tool, rid = w.at(0.001).call("a", "divide")
    w.at(0.003).answer("a", rid, TOOL_ERROR)
    quiet, rid = w.at(0.001).call("a", "echo")  # isError false: ok
    w.at(0.001).answer("a", rid, {"content": [], "isError": False})
    cancelled, rid = w.at(0.001).call("a", "long_task")
    cancel_row = w.at(0.050).cancel("a", rid)
    late, rid2 = w.at(0.001).call("a", "slow")
    late_answer = w.at(0.010).answer("a", rid2)
    w.at(0.001).cancel("a", rid2)  # after its answer: too late to count
    waiting, _ = w.at(0.001).call("a", "forever")
    w.at(0.200).notify("a", "notifications/message", {"level": "info", "data": "still here"})
    tl = built(w.store)
    spans = spans_by_row(tl)
    assert len(spans) == 7
    assert spans[ok].outcome == "ok" and spans[ok].latency == pytest.approx(0.010)
    assert spans[err].outcome == "error" and spans[err].latency == pytest.approx(0.002)
    assert spans[tool].outcome == "tool error" and spans[tool].name == "divide"
    assert spans[quiet].outcome == "ok"
    c = spans[cancelled]
    assert c.outcome == "cancelled" and c.cancel == cancel_row and c.response is None
    assert c.end == pytest.approx(c.start + 0.050)  # drawn until the cancel went out
    assert spans[late].outcome == "ok" and spans[late].response == late_answer and spans[late].cancel is None
    u = spans[waiting]
    assert u.outcome == "unanswered" and u.end is None and u.latency is None
    assert tl.span_until(tl.span_of(waiting)) == pytest.approx(tl.end)  # drawn to the last frame
    assert tl.span_of(cancel_row) == tl.span_of(cancelled)
    assert tl.span_of(late_answer) == tl.span_of(late)


def test_a_cancelled_request_answered_after_all_stays_cancelled_and_ends_at_its_answer():
    w = Wire()
    row, rid = w.call("a", "long_task")
    w.at(0.020).cancel("a", rid)
    answer = w.at(0.030).answer("a", rid)
    tl = built(w.store)
    s = tl.span(tl.span_of(row))
    assert s.outcome == "cancelled" and s.response == answer
    assert s.end - s.start == pytest.approx(0.050)
    stats = tl.method_stats()[0]
    assert (stats.count, stats.cancelled, stats.unanswered, stats.p50_ms) == (1, 1, 0, None)
    assert tl.spans_in(tl.track(0), s.start + 0.045, s.start + 0.046) == [s.index]  # its duration class moved


def test_the_servers_requests_are_spans_of_their_own_track_and_ticks():
    w = Wire()
    call, rid = w.call("a", "ask_user")
    ask, ask_id = w.at(0.001).request("a", "elicitation/create", {"message": "name?"}, direction="in", rid=0)
    ours = w.at(0.004).answer("a", ask_id, {"action": "accept"}, direction="out")
    w.at(0.001).answer("a", rid)
    tl = built(w.store)
    s = tl.span(tl.span_of(ask))
    assert (s.direction, s.method, s.outcome, s.response) == ("in", "elicitation/create", "ok", ours)
    assert s.latency == pytest.approx(0.004)
    assert len(tl.track(0).marks) == 1
    assert len(tl.track(0, inward=True).marks) == 1
    lane, pos = tl.tick_at(ask)
    assert tl.tick(lane, pos).kind == "server request"
    stats = {(m.direction, m.method): m for m in tl.method_stats()}
    assert stats[("in", "elicitation/create")].count == 1


def test_ids_are_per_server_and_per_direction():
    w = Wire()
    a, _ = w.request("a", "ping", rid=7)
    b, _ = w.request("b", "ping", rid=7)
    theirs, _ = w.request("a", "ping", rid=7, direction="in")
    w.at(0.001).answer("b", 7)
    w.at(0.001).cancel("a", 7)  # ours on a, not b's and not the server's
    w.at(0.001).answer("a", 7, direction="out")  # answers the server's ping
    tl = built(w.store)
    spans = spans_by_row(tl)
    assert spans[a].outcome == "cancelled"
    assert spans[b].outcome == "ok" and spans[b].server == "b"
    assert spans[theirs].outcome == "ok" and spans[theirs].direction == "in"
    assert [lane.server for lane in tl.lanes] == ["a", "b"]


def test_names_notifications_malformed_and_background():
    w = Wire()
    p, _ = w.request("a", "prompts/get", {"name": "greeting", "arguments": {}})
    r, _ = w.request("a", "resources/read", {"uri": "demo://clock"})
    beat, beat_id = w.request("a", "ping", meta={"background": "heartbeat"})
    w.at(0.001).answer("a", beat_id, meta={"background": "heartbeat"})
    note = w.notify("a", "notifications/progress", {"progressToken": 1, "progress": 1})
    mine = w.notify("a", "notifications/initialized", direction="out")
    bad = w.store.add("a", Frame("in", b"{not json", w.t, w.t))
    w.store.add("a", Frame("err", b"a stderr line", w.t, w.t))
    tl = built(w.store)
    spans = spans_by_row(tl)
    assert spans[p].name == "greeting" and spans[r].name == "demo://clock"
    assert spans[beat].background and not spans[p].background
    kinds = {tl.tick(*tl.tick_at(n)).kind for n in (note, mine, bad)}
    assert kinds == {"notification", "our notification", "malformed"}
    assert tl.tick(*tl.tick_at(bad)).kind == "malformed"
    assert len(tl.lanes[0].ticks) == 3  # stderr is not a tick
    lines = tl.describe_span(tl.span_of(beat))
    assert "background traffic (the heartbeat)" in lines
    assert tl.describe_tick(bad)[1].startswith("malformed")


# ---------------------------------------------------------------------- brute force, random sessions
def random_session(seed: int, n: int = 1500, servers: tuple[str, ...] = ("a", "b", "c")) -> Wire:
    rng = random.Random(seed)
    w = Wire()
    pending: list[tuple[str, int, str, str]] = []  # server, id, method, requester direction
    tools = ("echo", "divide", "long_task", "search")
    methods = ("tools/call", "tools/call", "tools/list", "resources/read", "ping")
    for _ in range(n):
        w.at(rng.expovariate(1 / 0.004))
        if rng.random() < 0.01:  # a frame of another server a hair in the past
            w.t -= 0.0005
        roll = rng.random()
        server = rng.choice(servers)
        if roll < 0.35 or not pending:
            method = rng.choice(methods)
            params = ({"name": rng.choice(tools), "arguments": {}} if method == "tools/call"
                      else {"uri": "demo://x"} if method == "resources/read" else None)
            meta = {"background": "heartbeat"} if method == "ping" and rng.random() < 0.5 else None
            _row, rid = w.request(server, method, params, meta=meta)
            pending.append((server, rid, method, "out"))
        elif roll < 0.42:
            _row, rid = w.request(server, rng.choice(("ping", "sampling/createMessage")), {}, direction="in")
            pending.append((server, rid, "?", "in"))
        elif roll < 0.75:
            server, rid, method, d = pending.pop(rng.randrange(len(pending)))
            back = "in" if d == "out" else "out"
            pick = rng.random()
            if pick < 0.1:
                w.fail(server, rid, direction=back)
            elif pick < 0.25 and method == "tools/call":
                w.answer(server, rid, TOOL_ERROR, direction=back)
            else:
                w.answer(server, rid, {"content": [{"type": "text", "text": "ok"}]}, direction=back)
        elif roll < 0.8:
            server, rid, _method, d = rng.choice(pending)
            w.cancel(server, rid, direction=d)
            if rng.random() < 0.7:
                pending.remove((server, rid, _method, d))
        else:
            w.notify(server, rng.choice(("notifications/message", "notifications/progress")), {"x": 1})
    return w


def brute_spans(store: TrafficStore) -> dict[int, tuple[str, str, str | None, float | None]]:
    """request row -> (direction, outcome, tool, latency), from the store's public API only."""
    out = {}
    for n in range(len(store)):
        if store.kind(n) != "request":
            continue
        rid, server, d = store.request_id(n), store.server_id(n), store.direction(n)
        resp = store.pair(n)
        body = json.loads(store.raw(n))
        tool = body["params"]["name"] if store.method(n) == "tools/call" else None
        cancel = next((c for c in range(n + 1, len(store) if resp is None else resp)
                       if store.kind(c) == "notification" and store.method(c) == "notifications/cancelled"
                       and store.server_id(c) == server and store.direction(c) == d
                       and json.loads(store.raw(c))["params"]["requestId"] == rid), None)
        if cancel is not None:
            outcome = "cancelled"
        elif resp is None:
            outcome = "unanswered"
        elif store.kind(resp) == "error":
            outcome = "error"
        elif tool is not None and json.loads(store.raw(resp))["result"].get("isError") is True:
            outcome = "tool error"
        else:
            outcome = "ok"
        latency = store.mono(resp) - store.mono(n) if resp is not None and outcome != "cancelled" else None
        out[n] = (d, outcome, tool, latency)
    return out


def brute_stats(store: TrafficStore) -> dict[tuple[str, str, str | None], tuple]:
    groups: dict[tuple[str, str, str | None], list] = {}
    for n, (d, outcome, tool, latency) in brute_spans(store).items():
        groups.setdefault((d, store.method(n), tool), []).append((outcome, latency))
    out = {}
    for key, items in groups.items():
        lat = sorted(x for _o, x in items if x is not None)

        def rank(q: float) -> float | None:
            return lat[max(0, math.ceil(q * len(lat)) - 1)] * 1000 if lat else None

        outcomes = [o for o, _x in items]
        out[key] = (len(items), outcomes.count("error") + outcomes.count("tool error"), outcomes.count("tool error"),
                    outcomes.count("cancelled"), outcomes.count("unanswered"), rank(0.5), rank(0.95),
                    lat[-1] * 1000 if lat else None)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_spans_and_method_stats_match_brute_force(seed):
    w = random_session(seed)
    tl = built(w.store)
    expected = brute_spans(w.store)
    got = {tl.span_row[i]: tl.span(i) for i in range(len(tl))}
    assert set(got) == set(expected)
    for row, (d, outcome, tool, latency) in expected.items():
        s = got[row]
        assert (s.direction, s.outcome) == (d, outcome), row
        if tool is not None:
            assert s.name == tool
        if latency is not None:
            assert s.latency == pytest.approx(latency)
    stats = {(m.direction, m.method, m.name): (m.count, m.errors, m.tool_errors, m.cancelled, m.unanswered,
                                                m.p50_ms, m.p95_ms, m.max_ms) for m in tl.method_stats()}
    brute = brute_stats(w.store)
    assert set(stats) == set(brute)
    for key, want in brute.items():
        assert stats[key][:5] == want[:5], key
        assert stats[key][5:] == pytest.approx(want[5:]), key
    slow = {(m.direction, m.method, m.name): m.slowest for m in tl.method_stats()}
    for key, row in slow.items():
        if row is not None:
            assert brute_spans(w.store)[row][3] * 1000 == pytest.approx(brute[key][7])


def snapshot(tl: Timeline):
    def marks(m: tlm.Marks):
        return list(m.times), list(m.ids), bytes(m.codes)

    lanes = [(lane.server, marks(lane.ticks), marks(lane.out.marks), marks(lane.inward.marks),
              sorted((k, marks(v)) for k, v in lane.out.classes.items() if len(v)),
              sorted(lane.out.open), sorted(lane.inward.open)) for lane in tl.lanes]
    spans = [tl.span(i) for i in range(len(tl))]
    return lanes, spans, list(tl.span_level), tl.method_stats(), tl.end


@pytest.mark.parametrize("seed", [4, 5])
def test_incremental_updates_equal_a_build_from_scratch(seed):
    w = random_session(seed, n=2500)
    frames = [(w.store.server_id(n), Frame(w.store.direction(n), w.store.raw(n), w.store.mono(n), w.store.wall(n),
                                           meta=w.store.meta(n))) for n in range(len(w.store))]
    rng = random.Random(seed)
    live = TrafficStore(":memory:")
    tl = Timeline(live)
    i = 0
    while i < len(frames):
        for server, frame in frames[i:i + rng.randint(1, 300)]:
            live.add(server, frame)
        i = len(live)
        tl.update(limit=rng.choice((None, 50, 700)))
        if rng.random() < 0.3:  # a view asks in between: prefix counts are built, then must follow changes
            for lane in tl.lanes:
                tl.summary(lane.out.marks, 0, tl.end, 97)
                tl.summary(lane.ticks, 0, tl.end, 97, ticks=True)
    while not tl.complete:
        tl.update(limit=100)
    assert snapshot(tl) == snapshot(built(live))
    fresh = built(live)
    for lane, again in zip(tl.lanes, fresh.lanes):
        for buckets in (5, 50, 300):  # few buckets: the prefix counts answer (many: the marks are walked)
            assert tl.summary(lane.out.marks, 0, tl.end, buckets) == fresh.summary(again.out.marks, 0, tl.end, buckets)
            assert (tl.summary(lane.ticks, 0, tl.end, buckets, ticks=True)
                    == fresh.summary(again.ticks, 0, tl.end, buckets, ticks=True))


def test_update_with_a_time_budget_goes_on_where_it_stopped():
    w = random_session(6, n=20000)
    tl = Timeline(w.store)
    turns = 0
    while not tl.complete:
        tl.update(seconds=0.0)  # one slice a turn
        turns += 1
    assert turns == math.ceil(len(w.store) / tlm.STEP)
    assert snapshot(tl) == snapshot(built(w.store))


# ---------------------------------------------------------------------- what a view asks
def brute_overlap(tl: Timeline, track: tlm.Track, t0: float, t1: float, min_duration: float = 0.0) -> list[int]:
    ids = set(track.marks.ids)
    return sorted((i for i in ids if tl.span_start[i] <= t1 and tl.span_until(i) >= t0
                   and (tl.span_end[i] != tl.span_end[i] or tl.span_until(i) - tl.span_start[i] >= min_duration)),
                  key=lambda i: (tl.span_start[i], i))


def test_spans_in_a_window_match_brute_force():
    w = random_session(7, n=3000)
    row, rid = w.call("a", "marathon")  # a long one, started early, answered late: found from before the window
    w.t += 30
    w.answer("a", rid)
    tl = built(w.store)
    rng = random.Random(7)
    track = tl.track(0)
    for _ in range(60):
        t0 = rng.uniform(-0.1, tl.end)
        t1 = t0 + rng.choice((0.0005, 0.01, 0.3, 5.0))
        minimum = rng.choice((0.0, 0.0, 0.002, 0.05))
        got = tl.spans_in(track, t0, t1, minimum)
        assert sorted(got, key=lambda i: (tl.span_start[i], i)) == brute_overlap(tl, track, t0, t1, minimum)
    marathon = tl.span_of(row)
    assert marathon in tl.spans_in(track, tl.end - 1, tl.end - 0.5)


@pytest.mark.parametrize("buckets", [7, 300, 5000])
def test_level_of_detail_buckets_match_brute_force(buckets):
    w = random_session(8, n=4000)
    tl = built(w.store)
    for lane in tl.lanes:
        for marks, order, ticks in ((lane.out.marks, tlm.SPAN_ORDER, False), (lane.ticks, tlm.TICK_ORDER, True)):
            t0, t1 = tl.end * 0.2, tl.end * 0.7
            step = (t1 - t0) / buckets
            want: dict[int, list[int]] = {}
            for t, code in zip(marks.times, marks.codes):
                if t0 <= t < t1:
                    want.setdefault(min(buckets - 1, int((t - t0) / step)), []).append(code)
            expected = [(b, len(codes), min(codes, key=order.index)) for b, codes in sorted(want.items())]
            assert tl.summary(marks, t0, t1, buckets, ticks=ticks) == expected
    assert sum(n for _b, n, _c in tl.summary(tl.track(0).marks, -1, tl.end + 1, 50)) == len(tl.track(0).marks)


def test_a_background_bucket_is_dim_only_when_all_of_it_is():
    w = Wire()
    beat, rid = w.request("a", "ping", meta={"background": "heartbeat"})
    w.at(0.001).answer("a", rid)
    tl = built(w.store)
    assert tl.summary(tl.track(0).marks, -1, 1, 1) == [(0, 1, tlm.OK + tlm.DIM)]
    w.at(0.001).request("a", "tools/list")  # unanswered, in the foreground
    tl = built(w.store)
    assert tl.summary(tl.track(0).marks, -1, 1, 1) == [(0, 2, tlm.UNANSWERED)]


def test_requests_in_flight_at_once_take_levels_one_above_the_other():
    w = Wire()
    a, rid_a = w.call("a", "one")
    b, rid_b = w.at(0.001).call("a", "two")  # while one is in flight
    w.at(0.001).answer("a", rid_a)
    c, rid_c = w.at(0.001).call("a", "three")  # level 0 is free again
    w.at(0.001).answer("a", rid_b)
    w.at(0.001).answer("a", rid_c)
    hung, _ = w.at(0.001).call("a", "hangs")  # never answered
    later, rid = w.at(tlm.HOLD + 1).call("a", "later")  # the hung one holds its level for HOLD seconds only
    w.at(0.001).answer("a", rid)
    theirs, _ = w.request("a", "ping", direction="in")  # the server's requests have levels of their own
    tl = built(w.store)
    level = {row: tl.span_level[tl.span_of(row)] for row in (a, b, c, hung, later, theirs)}
    assert level == {a: 0, b: 1, c: 0, hung: 0, later: 0, theirs: 0}


def test_frames_a_hair_out_of_order_stay_sorted():
    w = Wire()
    a, rid_a = w.call("a", "echo")
    w.t -= 0.002  # b's clock reading was taken first, reported second
    b, rid_b = w.call("b", "echo")
    w.at(0.010).answer("b", rid_b)
    w.answer("a", rid_a)
    tl = built(w.store)
    for lane in tl.lanes:
        assert list(lane.out.marks.times) == sorted(lane.out.marks.times)
    assert tl.span(tl.span_of(b)).start < tl.span(tl.span_of(a)).start


def test_real_traffic_from_the_demo_and_the_hostile_server():
    store = filled_store()
    tl = built(store)
    assert [lane.server for lane in tl.lanes] == ["demo", "hostile"]
    spans = [tl.span(i) for i in range(len(tl))]
    by = {(s.server, s.method, s.name): s for s in spans}
    assert by[("demo", "tools/call", "nope")].outcome == "error"  # an unknown tool: a JSON-RPC error
    assert by[("demo", "tools/call", "echo")].outcome == "ok"
    assert by[("demo", "elicitation/create", None)].direction == "in"
    assert by[("demo", "tools/call", "long_task")].latency > 0.025  # three steps of 10 ms
    pings = [s for s in spans if s.server == "hostile" and s.direction == "in"]
    assert len(pings) == 2 and all(s.method == "ping" and s.outcome == "ok" for s in pings)
    assert spans[-1].method == "tools/call" and spans[-1].outcome == "unanswered"  # the server exited mid-call
    kinds = [tl.tick(1, i).kind for i in range(len(tl.lanes[1].ticks))]
    assert "malformed" in kinds and kinds.count("server request") == 2
    demo_notes = [tl.tick(0, i) for i in range(len(tl.lanes[0].ticks))]
    assert any(t.method == "notifications/progress" for t in demo_notes)
    total = sum(m.count for m in tl.method_stats())
    assert total == len(tl) == sum(1 for n in range(len(store)) if store.kind(n) == "request")
    store.close()


def test_labels_for_the_axis():
    assert tlm.nice_step(0.0013) == pytest.approx(0.002)
    assert tlm.nice_step(3.0) == 5.0 and tlm.nice_step(7.0) == 10.0 and tlm.nice_step(0.1) == pytest.approx(0.1)
    assert tlm.format_time(0.25, 0.05, 0.4) == "250 ms"
    assert tlm.format_time(0.0125, 0.0005, 0.02) == "12.5 ms"
    assert tlm.format_time(12.5, 0.5, 20) == "12.5 s"
    assert tlm.format_time(90, 30, 900) == "1:30"
    assert tlm.format_time(0.0, 1, 5) == "0"
    assert tlm.format_duration(0.0123) == "12.3 ms" and tlm.format_duration(12.345) == "12.35 s"
    assert tlm.duration_class(0.0005) == 0 and tlm.duration_class(0.001) == 1 and tlm.duration_class(0.0019) == 1
    assert tlm.duration_class(0.002) == 2 and tlm.class_bound(2) == pytest.approx(0.004)


def test_a_flood_taken_in_a_slice_at_a_time_gives_the_ticks_one_by_one_would(monkeypatch):
    """A slice of one server's notifications is taken in one step: the ticks are the same as a frame at a time,
    with runs broken by another server, a cancel, a background frame, a request and times a hair out of order."""
    from inspector.traffic.columns import BACKGROUND

    w, rng = Wire(), random.Random(7)
    for i in range(6000):
        roll = rng.random() if i % 1500 > 1200 else 0.5  # long runs of the flood alone, then a mixed stretch
        w.at(-0.0005 if roll < 0.02 else (0.0 if roll < 0.6 else 0.0001))
        if roll < 0.9:
            w.notify("flood", "notifications/message", {"level": "info", "data": f"line {i}"})
        elif roll < 0.94:
            w.notify("other", "notifications/progress", {"progressToken": 1, "progress": i})
        elif roll < 0.97:
            w.add("flood", "in", {"method": "notifications/message"}, meta={BACKGROUND: "heartbeat"})
        elif roll < 0.985:
            w.cancel("flood", 1)
        else:
            w.request("flood", "ping", direction="in")
    runs = []
    extend = tlm.Marks.extend
    monkeypatch.setattr(tlm.Marks, "extend", lambda marks, *args: (runs.append(args[1]), extend(marks, *args)))
    tl = Timeline(w.store)
    while not tl.complete:
        tl.update(seconds=0.0)
    assert runs  # some slices were a run of one server's notifications
    store, c = w.store, w.store.columns
    for lane in tl.lanes:
        want = []
        for n in range(len(store)):
            kind, d = store.kind(n), store.direction(n)
            if store.server_id(n) != lane.server or kind not in ("notification", "request") or (
                    kind == "request" and d != "in"):
                continue
            code = (tlm.SERVER_REQUEST if kind == "request" else tlm.NOTE_IN if d == "in" else tlm.NOTE_OUT)
            want.append((store.mono(n) - tl.t0, n, code + (tlm.DIM if n in c.background else 0)))
        want.sort(key=lambda m: m[0])  # stable: marks at one time keep their order of arrival
        assert list(zip(lane.ticks.times, lane.ticks.ids, lane.ticks.codes)) == want
