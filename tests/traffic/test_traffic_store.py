"""The traffic store: classification, pairing, latency, persistence, crash safety."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from traffic_helpers import ROOT, filled_store, real_frames

from inspector.cli import TraceWriter
from inspector.protocol import jsonrpc as rpc
from inspector.traffic import Frame, ReadOnlyError, TrafficStore, list_sessions, new_session_path
from inspector.traffic.columns import HEAD_MAX


def frame(direction: str, obj_or_bytes, mono: float = 0.0, malformed: str | None = None) -> Frame:
    data = obj_or_bytes if isinstance(obj_or_bytes, bytes) else json.dumps(obj_or_bytes).encode()
    msg = rpc.parse(data) if direction == "in" else None
    return Frame(direction, data, mono, 1_700_000_000 + mono, malformed, msg)


def req(i, method="tools/call", **params):
    return {"jsonrpc": "2.0", "id": i, "method": method, **({"params": params} if params else {})}


def res(i, result=None):
    return {"jsonrpc": "2.0", "id": i, "result": result if result is not None else {}}


FIELDS = ("n", "server_id", "direction", "kind", "method", "id", "mono", "wall", "size", "malformed", "latency",
          "pair", "meta")


def records(store: TrafficStore) -> list[tuple]:
    return [tuple(getattr(store.record(n), f) for f in FIELDS) for n in range(len(store))]


# ---------------------------------------------------------------------- real traffic
def test_real_session_is_classified_and_paired():
    store = filled_store()
    assert len(store) == len(real_frames())
    kinds = {store.kind(n) for n in range(len(store))}
    assert {"request", "response", "notification", "error", "malformed", "stderr"} <= kinds
    for n in range(len(store)):
        rec = store.record(n)
        assert rec.n == n
        assert rec.size == len(real_frames()[n][1].data) == len(store.raw(n))
        assert store.raw(n) == real_frames()[n][1].data
        if rec.kind in ("response", "error") and rec.pair is not None:
            request = store.record(rec.pair)
            assert request.kind == "request" and request.pair == n
            assert request.id == rec.id and request.server_id == rec.server_id
            assert request.direction != rec.direction  # a response travels the other way
            assert rec.method == request.method
            assert rec.latency == pytest.approx(rec.mono - request.mono) and rec.latency >= 0
        else:
            assert rec.latency is None
        if rec.kind == "stderr":
            assert rec.direction == "err" and rec.method is None and rec.id is None
        if rec.kind == "malformed":
            assert rec.malformed and rec.pair is None
    # every request we sent that got an answer is paired, including the server's own requests
    answered = [n for n in range(len(store)) if store.kind(n) == "request" and store.pair(n) is not None]
    assert {store.method(n) for n in answered} >= {"initialize", "tools/list", "tools/call", "ping",
                                                   "elicitation/create", "logging/setLevel"}
    server_requests = [n for n in answered if store.direction(n) == "in"]
    assert {store.method(n) for n in server_requests} == {"ping", "elicitation/create"}
    for n in server_requests:
        assert store.direction(store.pair(n)) == "out"
    # the JSON-RPC error is a paired "error" whose method is the request's
    errors = [n for n in range(len(store)) if store.kind(n) == "error"]
    assert errors and store.method(errors[0]) == "tools/call" and store.pair(errors[0]) is not None
    # the call that made the server exit has no answer
    last_call = max(n for n in range(len(store)) if store.method(n) == "tools/call" and store.kind(n) == "request")
    assert store.pair(last_call) is None
    assert "panic: boom" in store.summary(len(store) - 1)
    reasons = {store.malformed(n) for n in range(len(store)) if store.kind(n) == "malformed"}
    assert "blank line" in reasons and any(r.startswith("not UTF-8") for r in reasons)
    assert any("batch" in r for r in reasons)


def test_summaries_are_one_line_and_informative():
    store = filled_store()
    for n in range(len(store)):
        s = store.summary(n)
        assert "\n" not in s and len(s) <= 240
    text = [store.summary(n) for n in range(len(store))]
    assert any(s.startswith("tools/list → 15 tools: echo") for s in text)
    assert any("tools/call echo" in s and "hello traffic" in s for s in text)
    assert any(s.startswith("error -32602") for s in text)
    assert any(s.startswith("not UTF-8") and "\\xff" in s for s in text)


# ---------------------------------------------------------------------- pairing rules
def test_ids_of_the_two_directions_are_separate_spaces():
    store = TrafficStore(":memory:")
    a = store.add("s", frame("out", req(1, "tools/call", name="echo"), 1.0))  # our request 1
    b = store.add("s", frame("in", req(1, "ping"), 1.5))  # the server's request 1
    c = store.add("s", frame("out", res(1), 2.0))  # our answer to its ping
    d = store.add("s", frame("in", res(1, {"content": []}), 4.0))  # its answer to our call
    assert (store.pair(a), store.pair(b), store.pair(c), store.pair(d)) == (d, c, b, a)
    assert store.method(c) == "ping" and store.method(d) == "tools/call"
    assert store.latency(c) == pytest.approx(0.5) and store.latency(d) == pytest.approx(3.0)
    assert store.latency(a) is None and store.latency(b) is None


def test_pairing_is_per_server_and_string_ids_are_not_numbers():
    store = TrafficStore(":memory:")
    a1 = store.add("a", frame("out", req(1, "tools/list")))
    b1 = store.add("b", frame("out", req(1, "prompts/list")))
    s1 = store.add("a", frame("out", req("1", "resources/list")))
    rb = store.add("b", frame("in", res(1)))
    ra = store.add("a", frame("in", res(1)))
    rs = store.add("a", frame("in", res("1")))
    assert store.pair(rb) == b1 and store.method(rb) == "prompts/list"
    assert store.pair(ra) == a1 and store.method(ra) == "tools/list"
    assert store.pair(rs) == s1 and store.request_id(rs) == "1"


def test_malformed_responses_do_not_steal_the_pair():
    store = TrafficStore(":memory:")
    q = store.add("s", frame("out", req(7)))
    bad = store.add("s", frame("in", res(7), malformed="response to id '7', an id of a type we never sent"))
    good = store.add("s", frame("in", res(7)))
    dup = store.add("s", frame("in", res(7), malformed="duplicate response: request 7 was already answered"))
    unknown = store.add("s", frame("in", res(99999), malformed="response to unknown id 99999 (we never sent it)"))
    assert store.pair(q) == good and store.pair(good) == q
    for n in (bad, dup, unknown):
        assert store.kind(n) == "malformed" and store.pair(n) is None and store.malformed(n)
    assert store.request_id(unknown) == 99999  # the id is still shown


def test_out_frames_are_parsed_and_err_frames_are_stderr():
    store = TrafficStore(":memory:")
    n = store.add("s", Frame("out", b'{"jsonrpc":"2.0","method":"notifications/initialized"}', 0, 0))
    e = store.add("s", Frame("err", b"Traceback (most recent call last):", 0, 0))
    assert store.kind(n) == "notification" and store.method(n) == "notifications/initialized"
    assert store.kind(e) == "stderr" and store.direction(e) == "err"
    assert store.summary(e) == "Traceback (most recent call last):"
    err = store.add("s", frame("in", {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}},
                               malformed="error response with a null id: -32700 x"))
    assert store.kind(err) == "malformed"
    with pytest.raises(IndexError):
        store.record(len(store))
    with pytest.raises(IndexError):
        store.raw(-1)


def test_listeners():
    store = TrafficStore(":memory:")
    seen, once = [], []
    store.add_listener(seen.append)
    store.notify_next(once.append)
    for i in range(3):
        store.add("s", frame("out", req(i)))
    assert seen == [0, 1, 2] and once == [0]


# ---------------------------------------------------------------------- persistence
def test_flushed_frames_are_all_in_the_file(tmp_path):
    path = tmp_path / "session.sqlite"
    store = filled_store(str(path))
    store.flush(wait=True)
    assert store.unflushed == 0 and store.write_error is None
    # reopened while the live store is still open (a second window, or a crash right now)
    again = TrafficStore.open_session(path)
    assert again.readonly and len(again) == len(store)
    assert records(again) == records(store)
    assert [again.raw(n) for n in range(len(again))] == [store.raw(n) for n in range(len(store))]
    assert [again.summary(n) for n in range(len(again))] == [store.summary(n) for n in range(len(store))]
    with pytest.raises(ReadOnlyError):
        again.add("s", frame("out", req(1)))
    again.close()
    store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = conn.execute("SELECT n, dir, kind, method, rid, pair FROM frames ORDER BY n").fetchall()
    conn.close()
    assert [r[0] for r in rows] == list(range(len(store)))
    assert [(r[1], r[2], r[3], r[4]) for r in rows] == [
        (store.direction(n), store.kind(n), store.method(n), store.request_id(n)) for n in range(len(store))]


def test_big_frames_live_in_sqlite_and_come_back_whole(tmp_path):
    path = tmp_path / "big.sqlite"
    store = TrafficStore(path)
    big = json.dumps(res(1, {"content": [{"type": "text", "text": "x" * (3 * HEAD_MAX)}]})).encode()
    q = store.add("s", frame("out", req(1)))
    n = store.add("s", frame("in", big, 0.25))
    assert store.raw(n) == big and store.size(n) == len(big)  # before the flush
    store.flush(wait=True)
    assert store.raw(n) == big  # from SQLite now
    assert store.pair(n) == q and "KiB" in store.summary(n)
    store.close()
    again = TrafficStore.open_session(path)
    assert again.size(n) == len(big) and again.raw(n) == big and again.pair(n) == q
    assert again.filter(text="xxxx").rows.tolist() == [n]
    again.close()


def test_rows_are_written_without_an_explicit_flush(tmp_path):
    """A store without a UI still writes: add() hands the buffer over after 100 ms."""
    path = tmp_path / "auto.sqlite"
    store = TrafficStore(path)
    store.add("s", frame("out", req(1)))
    time.sleep(0.15)
    store.add("s", frame("out", req(2)))
    deadline = time.monotonic() + 5
    count = 0
    while time.monotonic() < deadline:
        conn = sqlite3.connect(path)
        count = conn.execute("SELECT count(*) FROM frames").fetchone()[0]
        conn.close()
        if count == 2:
            break
        time.sleep(0.02)
    assert count == 2
    store.close()


CHILD = r'''
import sys
from inspector.traffic import Frame, TrafficStore
store = TrafficStore(sys.argv[1])
i = 0
while True:
    data = ('{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"frame %d"}}' % i).encode()
    store.add("flood", Frame("in" if i % 3 else "out", data, i * 0.001, 1e9 + i))
    i += 1
    if i % 500 == 0:
        store.flush(wait=True)
        print(i, flush=True)
'''


def test_sigkill_loses_nothing_before_the_last_flush(tmp_path):
    path = tmp_path / "killed.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True,
                            cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        flushed = 0
        while flushed < 20_000:
            line = proc.stdout.readline()
            assert line, "the child died on its own"
            flushed = int(line)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        # everything it printed before dying was committed; read whatever else arrived
        for line in proc.stdout:
            flushed = int(line)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    store = TrafficStore.open_session(path)
    assert len(store) >= flushed
    for n in (0, 1, flushed // 2, flushed - 1):
        wanted = '{"jsonrpc":"2.0","method":"notifications/message","params":' + f'{{"data":"frame {n}"}}}}'
        assert store.raw(n) == wanted.encode()
        assert store.direction(n) == ("in" if n % 3 else "out")
    assert [store.mono(n) for n in range(flushed)] == pytest.approx([n * 0.001 for n in range(flushed)])
    store.close()


def test_session_files_are_named_by_utc_time_and_listed(tmp_path):
    import datetime as dt

    when = dt.datetime(2026, 11, 30, 8, 5, 9, tzinfo=dt.UTC)
    first = new_session_path(tmp_path, when)
    assert first.name == "2026-11-30T08-05-09Z.sqlite"
    TrafficStore(first).close()
    second = new_session_path(tmp_path, when)
    assert second != first and second.name.startswith("2026-11-30T08-05-09Z")
    TrafficStore(second).close()
    later = new_session_path(tmp_path, when + dt.timedelta(hours=1))
    TrafficStore(later).close()
    listed = list_sessions(tmp_path)
    assert [s.path for s in listed][0] == later
    assert {s.path for s in listed} == {first, second, later}
    assert listed[-1].started == when
    assert TrafficStore.list_sessions(tmp_path) == listed
    assert list_sessions(tmp_path / "nowhere") == []


def test_default_location_is_the_user_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    store = TrafficStore()
    try:
        assert store.path.parent == tmp_path / "spyglass" / "sessions"
        assert store.path.suffix == ".sqlite" and store.path.exists()
    finally:
        store.close()


# ---------------------------------------------------------------------- export
def test_export_matches_the_cli_trace_format(tmp_path):
    store = filled_store()
    http = [("web", Frame("in", b'{"jsonrpc":"2.0","method":"notifications/message"}', 5.0, 5.0, None, None,
                          {"stream": "get", "event_id": "e7", "status": 200})),
            ("web", Frame("http", b'{"method":"POST","url":"http://127.0.0.1/mcp","status":200}', 5.1, 5.1,
                          None, None, {"status": 200}))]
    for server, f in http:
        store.add(server, f)
    frames = [*real_frames(), *http]
    trace = TraceWriter(str(tmp_path / "cli.jsonl"))
    for _server, f in frames:
        trace(f)
    trace.close()
    count = store.export_jsonl(tmp_path / "store.jsonl")
    assert count == len(store) == len(frames)
    ours = [json.loads(line) for line in (tmp_path / "store.jsonl").read_text(encoding="utf-8").splitlines()]
    cli = [json.loads(line) for line in (tmp_path / "cli.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [o.pop("server") for o in ours] == [s for s, _f in frames]
    assert ours == cli
    assert [list(o) for o in ours] == [list(c) for c in cli]  # same key order too
    assert ours[-2]["event_id"] == "e7" and store.kind(len(store) - 1) == "http"
    some = [n for n in range(len(store)) if store.kind(n) == "malformed"]
    store.export_jsonl(tmp_path / "some.jsonl", some)
    lines = [json.loads(line) for line in (tmp_path / "some.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(some) and all(line["malformed"] for line in lines)


def test_batches_not_yet_expanded_are_read_from_their_chunks(tmp_path):
    """The writer commits each batch as one chunk first; a reader (or a reopen
    after a crash) must see those frames exactly like expanded ones."""
    import marshal

    from inspector.traffic import _sink
    from inspector.traffic._writer import encode

    live = filled_store()
    big = json.dumps(res(1, {"content": [{"type": "text", "text": "y" * (2 * HEAD_MAX)}]})).encode()
    live.add("demo", frame("in", big, 99.0))
    path = tmp_path / "chunks.sqlite"
    conn = _sink.connect(str(path))
    tables = _sink.Tables()
    sent = {"servers": 0, "methods": 1}
    half = len(live) // 2
    first = encode(live.columns, 0, half, sent)
    _sink.write_chunk(conn, marshal.dumps(first), first, tables)
    _sink.expand_one(conn, tables)  # the first half becomes frames
    second = encode(live.columns, half, len(live), sent)
    _sink.write_chunk(conn, marshal.dumps(second), second, tables)  # the second half stays a chunk
    assert conn.execute("SELECT count(*) FROM frames").fetchone()[0] == half
    assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == 1
    again = TrafficStore.open_session(path)
    assert records(again) == records(live)
    assert [again.raw(n) for n in range(len(again))] == [live.raw(n) for n in range(len(live))]
    reader = _sink.connect(str(path), readonly=True)
    assert _sink.frame_data(reader, len(live) - 1) == big
    assert _sink.frame_data(reader, 0) == live.raw(0)
    assert _sink.frame_data(reader, len(live)) is None
    reader.close()
    while _sink.expand_one(conn, tables):
        pass
    conn.close()
    assert records(TrafficStore.open_session(path)) == records(live)


def test_a_hurried_close_leaves_chunks_that_reopen_fine(tmp_path):
    path = tmp_path / "hurried.sqlite"
    store = TrafficStore(path)
    for i in range(5000):
        store.add("s", frame("in", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"i": i}}, i))
    store.close(expand=False)
    again = TrafficStore.open_session(path)
    assert len(again) == 5000 and json.loads(again.raw(4999))["params"]["i"] == 4999
    again.close()


def test_hostile_values_are_persisted(tmp_path):
    """Lone surrogates and ids beyond 64 bits cannot stop the session writer."""
    path = tmp_path / "hostile.sqlite"
    store = TrafficStore(path)
    huge = 10 ** 30
    q = store.add("s\udcff", frame("out", req(huge, "tools/\ud800call")))
    r = store.add("s\udcff", frame("in", res(huge)))
    bad = store.add("s\udcff", frame("in", b'{"jsonrpc":"2.0","id":1,"result":{}}', malformed="bad \udc80 reason"))
    store.flush(wait=True)
    assert store.write_error is None and store.committed == 3
    assert store.pair(r) == q and store.method(r) == "tools/\ud800call"
    store.close()
    again = TrafficStore.open_session(path)
    assert len(again) == 3 and again.raw(r) == store.raw(r)
    assert again.server_id(q) == "s\\udcff" and again.malformed(bad) == "bad \\udc80 reason"
    assert again.request_id(q) == huge and again.pair(r) == q  # the raw JSON is reparsed
    again.close()


def test_a_dead_writer_is_reported_and_the_store_goes_on(tmp_path, expect_log):
    expect_log("spyglass.traffic", "rows not written")
    store = TrafficStore(tmp_path / "dead.sqlite")
    store.add("s", frame("out", req(1)))
    store.flush(wait=True)
    store._writer.proc.kill()
    store._writer.proc.wait()
    for i in range(2, 50):
        store.add("s", frame("out", req(i)))
    store.flush(wait=True)
    assert store.write_error and "writer" in store.write_error
    assert len(store) == 49 and store.method(48) == "tools/call"
    store.close()


def test_a_frozen_app_writes_the_same_session_from_a_thread(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # no child process in a bundle
    path = tmp_path / "thread.sqlite"
    live = TrafficStore(path)
    assert live._writer is not None and not hasattr(live._writer, "proc")
    for server, f in real_frames():
        live.add(server, f)
    big = json.dumps(res(1, {"content": [{"type": "text", "text": "z" * (2 * HEAD_MAX)}]})).encode()
    n = live.add("demo", frame("in", big, 99.0))
    live.flush(wait=True)
    assert live.write_error is None and live.committed == len(live) and live.raw(n) == big
    live.close()
    again = TrafficStore.open_session(path)
    assert records(again) == records(live) and again.raw(n) == big
    again.close()


def test_an_apps_bridge_messages_are_their_own_kind_paired_within_their_view(tmp_path):
    """Each view numbers its requests from 0, like the server's: pairs never cross views or the server."""
    store = TrafficStore(tmp_path / "s.sqlite")

    def app(direction, obj, view, mono):
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        return Frame(direction, data, mono, 1_700_000_000 + mono, meta={"view": view, "app": "ui://a"})

    store.add("s", frame("out", req(0, "tools/list"), 0.0))
    store.add("s", app("from-view", req(0, "ui/initialize"), "v1", 1.0))
    store.add("s", app("from-view", req(0, "ui/initialize"), "v2", 1.5))
    store.add("s", app("to-view", res(0, {"protocolVersion": "2026-01-26"}), "v1", 1.25))
    store.add("s", frame("in", res(0, {"tools": []}), 2.0))
    store.add("s", app("to-view", {"jsonrpc": "2.0", "method": "ui/notifications/tool-result",
                                   "params": {"content": []}}, "v1", 2.5))
    store.add("s", app("from-view", b"{nope", "v1", 3.0))
    got = records(store)
    assert [(r[2], r[3], r[4]) for r in got] == [
        ("out", "request", "tools/list"), ("from-view", "app", "ui/initialize"), ("from-view", "app", "ui/initialize"),
        ("to-view", "app", "ui/initialize"), ("in", "response", "tools/list"),
        ("to-view", "app", "ui/notifications/tool-result"), ("from-view", "app", None)]
    assert got[3][11] == 1 and got[3][10] == pytest.approx(0.25)  # v1's answer pairs with v1's request
    assert got[2][11] is None and got[4][11] == 0  # v2's request is open; the server's pair is its own
    assert got[6][9] and store.summary(6).startswith(got[6][9])  # said malformed, kept as an app frame
    assert "tools/list" not in store.summary(3) and list(store.filter(kinds={"app"})) == [1, 2, 3, 5, 6]
    store.close()
    again = TrafficStore.open_session(tmp_path / "s.sqlite")  # a session reopened reads them the same
    assert records(again) == got
    again.close()


def test_an_apps_bridge_survives_a_portable_session(tmp_path):
    from inspector.recording.files import export_session, open_session

    store = TrafficStore(":memory:")
    meta = {"view": "v1", "app": "ui://a"}
    store.add("s", Frame("from-view", json.dumps(req(0, "ui/initialize")).encode(), 1.0, 1_700_000_001.0, meta=meta))
    store.add("s", Frame("to-view", json.dumps(res(0)).encode(), 1.5, 1_700_000_001.5, meta=meta))
    assert export_session(store, tmp_path / "a.mcpsession") == 2
    again = open_session(tmp_path / "a.mcpsession").store
    assert [(again.direction(n), again.kind(n), again.method(n)) for n in range(len(again))] == [
        ("from-view", "app", "ui/initialize"), ("to-view", "app", "ui/initialize")]
    assert again.pair(0) == 1 and again.latency(1) == pytest.approx(0.5)


# ---------------------------------------------------------------------- a read's worth at once
def note(i: int, method: str = "notifications/message", big: bool = False) -> Frame:
    data = "x" * (HEAD_MAX + 10) if big else f"line {i}"
    return frame("in", {"jsonrpc": "2.0", "method": method, "params": {"level": "info", "data": data}}, i / 10)


def columns(store: TrafficStore) -> dict:
    c = store.columns
    out = {}
    for name in type(c).__slots__:
        value = getattr(c, name)
        out[name] = bytes(value) if isinstance(value, bytearray) else (
            list(value) if hasattr(value, "tolist") or isinstance(value, list) else value)
    return out


@pytest.mark.parametrize("wide", [False, True])
def test_frames_added_many_at_a_time_are_recorded_as_one_by_one(tmp_path, wide):
    batches = [[note(i) for i in range(50)],
               [note(50), note(51, "notifications/tools/list_changed"), note(52, "notifications/spyglass/x")],
               [note(60, big=True), note(61)],  # a head too long: the slow way, same records
               [frame("out", req(1)), frame("in", res(1)), note(70)],
               [frame("in", b"{not json", 80, malformed="bad JSON")],
               [Frame("in", note(90).data, 9.0, 9.0, None, note(90).message, {"stream": "GET"}), note(91)],
               [],
               [note(i) for i in range(100, 400)]]
    one, many = TrafficStore(tmp_path / "one.sqlite"), TrafficStore(tmp_path / "many.sqlite")
    try:
        if wide:  # server codes past the narrow column
            from inspector.traffic.columns import WIDE
            for store in (one, many):
                for k in range(WIDE + 1):
                    store.add(f"other{k}", frame("err", b"-"))
        seen_one, seen_many, once = [], [], []
        one.add_listener(seen_one.append)
        many.add_listener(seen_many.append)
        many.notify_next(once.append)
        firsts = []
        for batch in batches:
            for f in batch:
                one.add("s", f)
            firsts.append(many.add_many("s", batch))
        # the writer's queue (`sparse`) is taken by a batch whenever one is due: drained alike, the records compare
        many.flush()
        one.flush()
        assert columns(many) == columns(one)
        assert seen_many == seen_one and once == [seen_one[0]]
        assert firsts[1] - firsts[0] == 50 and firsts[-1] == len(many) - 300
        many.flush(wait=True)
        one.flush(wait=True)
        assert records(TrafficStore.open_session(many.path)) == records(TrafficStore.open_session(one.path)) \
            == records(one)
    finally:  # a failed comparison must not leave the writers running
        one.close()
        many.close()


def test_a_hook_takes_a_reads_worth_and_a_reopened_session_none():
    store = TrafficStore(":memory:")
    hook = store.hook("s")
    hook(note(0))
    hook.many([note(1), note(2)])
    assert [store.raw(n) for n in range(len(store))] == [note(n).data for n in range(3)]
    store.readonly = True
    with pytest.raises(ReadOnlyError):
        store.add_many("s", [note(3)])
