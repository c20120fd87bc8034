"""The edges of the session writer and of what the store makes of them: the sink process spoken to over
its own pipes (acks, idle expansion, a hurried quit, an app that dies mid-message or stops reading acks),
a full disk (SQLite's own page limit), paths that are no session file, damaged session files, stores
dropped unclosed, and the summaries, filters and listings over unusual records."""

from __future__ import annotations

import gc
import json
import marshal
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import inspector.traffic as traffic
from inspector.protocol import jsonrpc as rpc
from inspector.traffic import Frame, TrafficStore, _sink, list_sessions
from inspector.traffic._writer import _grow_pipe, encode
from inspector.traffic.columns import BACKGROUND, HEAD_MAX
from inspector.traffic.store import RAW_CACHE, SUMMARY_CACHE

# The store starts the sink with `-I -S`; without -S the site hook that measures subprocesses under
# coverage runs too, which is the only difference.
SINK = [sys.executable, "-I", _sink.__file__]
FIELDS = ("n", "server_id", "direction", "kind", "method", "id", "mono", "wall", "size", "malformed", "latency",
          "pair", "meta")


def frame(direction: str, obj: object, t: float = 0.0, malformed: str | None = None,
          meta: dict[str, object] | None = None) -> Frame:
    data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return Frame(direction, data, t, 1_700_000_000 + t, malformed, rpc.parse(data) if direction == "in" else None,
                 meta)


def req(i: object, method: str = "tools/call", **params: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": i, "method": method, **({"params": params} if params else {})}


def res(i: object, result: object = None) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": i, "result": result if result is not None else {}}


def records(store: TrafficStore) -> list[tuple[object, ...]]:
    return [tuple(getattr(store.record(n), f) for f in FIELDS) for n in range(len(store))]


def exchange(store: TrafficStore | None = None) -> TrafficStore:
    """A short session of one weather server: every kind of record, a huge frame, transport meta."""
    store = store if store is not None else TrafficStore(":memory:")
    t = iter(x * 0.25 for x in range(1, 100))
    store.add("weather", frame("out", req(1, "initialize", protocolVersion="2025-06-18"), next(t)))
    store.add("weather", frame("in", res(1, {"protocolVersion": "2025-06-18", "serverInfo": {"name": "w"}}), next(t)))
    store.add("weather", frame("out", {"jsonrpc": "2.0", "method": "notifications/initialized"}, next(t)))
    store.add("weather", frame("out", req("a-2", city="Oslo"), next(t), meta={"stream": "post"}))
    store.add("weather", frame("in", {"jsonrpc": "2.0", "method": "notifications/progress",
                                      "params": {"progressToken": 7, "progress": 1, "total": 2}}, next(t),
                               meta={"stream": "post", "event_id": "e1"}))
    store.add("weather", frame("in", res("a-2", {"content": [{"type": "text", "text": "rain " * 20_000}]}), next(t)))
    store.add("weather", frame("err", b"weather: cache warm", next(t)))
    store.add("weather", frame("in", b"{not json", next(t)))
    store.add("weather", frame("out", req(3, "tools/list"), next(t)))
    store.add("weather", frame("in", {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "no"}}, next(t)))
    return store


def hostile(store: TrafficStore) -> None:
    """Values SQLite cannot bind as they are: lone surrogates, an id beyond 64 bits."""
    store.add("s\udcff", frame("out", req(10 ** 30, "tools/\ud800call"), 50.0))
    store.add("s\udcff", frame("in", res(10 ** 30), 50.5))


def encoded(store: TrafficStore, first: int, last: int, sent: dict[str, int]) -> tuple[object, ...]:
    """Records [first, last) as the store hands them to its writer. An in-memory store queues no sparse
    columns (it has no writer), so they are queued here as a persisted store would."""
    c = store.columns
    c.sparse = [(n, c.ids.get(n), c.reasons.get(n), json.dumps(c.meta[n]) if n in c.meta else None)
                for n in range(first, last) if n in c.ids or n in c.reasons or n in c.meta]
    return encode(c, first, last, sent)


def batch(store: TrafficStore, first: int, last: int, sent: dict[str, int]) -> bytes:
    return marshal.dumps(encoded(store, first, last, sent))


def message(payload: bytes) -> bytes:
    return _sink.HEADER.pack(len(payload)) + payload


def counts(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    try:
        return (conn.execute("SELECT count(*) FROM frames").fetchone()[0],
                conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    finally:
        conn.close()


class Sink:
    """The sink process of one session file, spoken to as the store's writer does."""

    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen([*SINK, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.stdin, self.stdout, self.stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr

    def send(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def ack(self) -> int:
        head = self.stdout.read(_sink.HEADER.size)
        assert len(head) == _sink.HEADER.size, "the sink stopped answering"
        value: int = _sink.HEADER.unpack(head)[0]
        return value

    def finish(self) -> tuple[int, bytes]:
        """End of input, as when the app closes the store; the exit code and what went to stderr."""
        self.stdin.close()
        code = self.proc.wait(20)
        err = self.stderr.read()
        for stream in (self.stdout, self.stderr):
            if not stream.closed:
                stream.close()
        return code, err

    def __enter__(self) -> Sink:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.stdin, self.stdout, self.stderr):
            if not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass


# ---------------------------------------------------------------------- the sink process
def test_the_sink_acknowledges_every_batch_and_expands_them_once_idle(tmp_path):
    live = exchange()
    path = tmp_path / "acks.sqlite"
    sent = {"servers": 0, "methods": 1}
    with Sink(path) as sink:
        assert sink.ack() == 0  # ready: the schema exists
        sink.send(message(marshal.dumps(("meta", [("started", "1700000000.5"), ("title", "weather")]))))
        sink.send(message(batch(live, 0, 4, sent)))
        assert sink.ack() == 4
        sink.send(message(batch(live, 4, len(live), sent)))
        assert sink.ack() == len(live)
        deadline = time.monotonic() + 10
        while counts(path) != (len(live), 0) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert counts(path) == (len(live), 0)  # both chunks became frames while the sink waited for more
        assert sink.proc.poll() is None
        assert sink.finish() == (0, b"")
    again = TrafficStore.open_session(path)
    try:
        assert again.started == 1_700_000_000.5
        assert records(again) == records(live)
        assert [again.raw(n) for n in range(len(again))] == [live.raw(n) for n in range(len(live))]
    finally:
        again.close()
    conn = sqlite3.connect(path)
    assert dict(conn.execute("SELECT key, value FROM meta")) == {"format": "1", "started": "1700000000.5",
                                                                 "title": "weather"}
    conn.close()


def test_the_sink_stores_values_sqlite_cannot_bind_as_they_are(tmp_path):
    live = TrafficStore(":memory:")
    hostile(live)
    path = tmp_path / "hostile.sqlite"
    with Sink(path) as sink:
        assert sink.ack() == 0
        sink.send(message(batch(live, 0, len(live), {"servers": 0, "methods": 1})))
        assert sink.ack() == 2
        assert sink.finish() == (0, b"")
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT server, method, rid, pair FROM frames ORDER BY n").fetchall()
    conn.close()
    huge = str(10 ** 30)
    assert rows == [("s\\udcff", "tools/\\ud800call", huge, 1), ("s\\udcff", "tools/\\ud800call", huge, 0)]


def test_a_hurried_quit_leaves_the_batch_as_a_chunk_that_reads_back(tmp_path):
    live = exchange()
    path = tmp_path / "quit.sqlite"
    with Sink(path) as sink:
        assert sink.ack() == 0
        sink.send(message(batch(live, 0, len(live), {"servers": 0, "methods": 1})) + message(marshal.dumps(("quit",))))
        assert sink.ack() == len(live)
        assert sink.finish() == (0, b"")
    assert counts(path) == (0, 1)
    reader = _sink.connect(path, readonly=True)
    try:
        small = [n for n in range(len(live)) if live.size(n) <= HEAD_MAX]
        assert len(small) == len(live) - 1
        assert [_sink.frame_data(reader, n) for n in small] == [live.raw(n) for n in small]
        assert _sink.frame_data(reader, len(live)) is None
    finally:
        reader.close()
    again = TrafficStore.open_session(path)
    try:
        assert records(again) == records(live)
    finally:
        again.close()


@pytest.mark.parametrize("cut", [3, _sink.HEADER.size + 10], ids=["inside-the-header", "inside-the-batch"])
def test_an_app_that_dies_mid_message_loses_only_that_message(tmp_path, cut):
    live = exchange()
    path = tmp_path / "cut.sqlite"
    sent = {"servers": 0, "methods": 1}
    with Sink(path) as sink:
        assert sink.ack() == 0
        sink.send(message(batch(live, 0, 6, sent)))
        assert sink.ack() == 6
        sink.send(message(batch(live, 6, len(live), sent))[:cut])
        assert sink.finish() == (0, b"")
    assert counts(path) == (6, 0)  # what came whole is committed and expanded
    again = TrafficStore.open_session(path)
    try:
        assert records(again) == records(live)[:6]
    finally:
        again.close()


def test_the_sink_keeps_committing_when_nobody_reads_its_acks(tmp_path):
    live = exchange()
    hostile(live)
    path = tmp_path / "orphan.sqlite"
    sent = {"servers": 0, "methods": 1}
    with Sink(path) as sink:
        assert sink.ack() == 0
        sink.stdout.close()  # the app died: the read end of the acks is gone
        for first, last in ((0, 3), (3, 7), (7, len(live))):
            sink.send(message(batch(live, first, last, sent)))
        code, err = sink.finish()
    assert (code, err) == (0, b"")  # no exit code 120, no "Exception ignored ... BrokenPipeError"
    assert counts(path) == (len(live), 0)
    again = TrafficStore.open_session(path)
    try:
        assert len(again) == len(live) and again.raw(5) == live.raw(5)
        assert again.request_id(len(live) - 2) == 10 ** 30
    finally:
        again.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes can be set on Linux only")
def test_the_writer_grows_its_pipe_and_leaves_other_streams_alone(tmp_path):
    import fcntl

    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "rb") as r, os.fdopen(write_fd, "wb") as w:
        _grow_pipe(w)
        assert fcntl.fcntl(w.fileno(), getattr(fcntl, "F_GETPIPE_SZ", 1032)) == 1 << 20
        w.write(b"x" * 200_000)  # more than a default pipe holds, without a reader
        w.flush()
        assert len(r.read(200_000)) == 200_000
    with open(tmp_path / "plain.bin", "wb") as fh:
        _grow_pipe(fh)  # a file is no pipe: nothing to grow, nothing raised
        fh.write(b"still writable")
    assert (tmp_path / "plain.bin").read_bytes() == b"still writable"


# ---------------------------------------------------------------------- a full disk, damaged files
def full(conn: sqlite3.Connection) -> None:
    """The database may not grow by one page from now on: SQLite answers SQLITE_FULL, as on a full disk."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    assert conn.execute(f"PRAGMA max_page_count = {pages}").fetchone()[0] == pages


def room(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA max_page_count = 1073741823")


def test_a_full_disk_rolls_each_write_back_whole_and_loses_nothing_committed(tmp_path):
    live = TrafficStore(":memory:")
    for i in range(8):  # rows of 12 KB: every write needs new pages
        live.add("files", frame("out", req(i, "resources/read", uri=f"file:///{i}")))
        live.add("files", frame("in", res(i, {"contents": [{"uri": f"file:///{i}", "text": f"{i}" * 12_000}]})))
    path = tmp_path / "full.sqlite"
    conn = _sink.connect(path)
    sent = {"servers": 0, "methods": 1}
    first = encoded(live, 0, 8, sent)
    second = encoded(live, 8, len(live), sent)
    _sink.write_chunk(conn, marshal.dumps(first), first, _sink.Tables())
    assert conn.execute("SELECT kind, idx, name FROM names").fetchall() == [("server", 0, "files"),
                                                                             ("method", 1, "resources/read")]
    full(conn)
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
        _sink.write_chunk(conn, marshal.dumps(second), second, _sink.Tables.load(conn))
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
        _sink.expand_one(conn, _sink.Tables.load(conn))
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
        _sink.write_batch(conn, second, _sink.Tables.load(conn))
    # every failed transaction was rolled back whole: still the one chunk, no frame, no new name
    assert counts(path) == (0, 1) and not conn.in_transaction
    assert conn.execute("SELECT count(*) FROM names").fetchone()[0] == 2

    room(conn)
    assert _sink.expand_one(conn, _sink.Tables.load(conn)) is True
    assert _sink.write_batch(conn, second, _sink.Tables.load(conn)) == len(live)
    assert _sink.expand_one(conn, _sink.Tables.load(conn)) is False
    conn.close()
    assert counts(path) == (len(live), 0)
    again = TrafficStore.open_session(path)
    try:
        assert records(again) == records(live)
    finally:
        again.close()


def test_a_session_file_with_lost_rows_is_refused_naming_the_record(tmp_path):
    live = exchange()
    path = tmp_path / "damaged.sqlite"
    conn = _sink.connect(path)
    tables = _sink.Tables()
    sent = {"servers": 0, "methods": 1}
    head = encoded(live, 0, 5, sent)
    _sink.write_chunk(conn, marshal.dumps(head), head, tables)
    assert _sink.expand_one(conn, tables)
    tail = encoded(live, 5, len(live), sent)
    _sink.write_chunk(conn, marshal.dumps(tail), tail, tables)
    conn.execute("DELETE FROM frames WHERE n = 2")
    conn.close()
    with pytest.raises(ValueError, match=re.escape(f"{path}: record 5 found where 4 was expected")):
        TrafficStore.open_session(path)
    with pytest.raises(FileNotFoundError):
        TrafficStore.open_session(tmp_path / "never-written.sqlite")


def test_another_programs_database_as_the_session_file_is_reported_by_the_thread_writer(tmp_path, monkeypatch,
                                                                                        expect_log):
    expect_log("spyglass.traffic", "cannot write the traffic session")
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # a bundle writes from a thread
    path = tmp_path / "history.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE frames (id INTEGER PRIMARY KEY, image BLOB)")  # some other program's table
    conn.commit()
    conn.close()
    store = TrafficStore(path)
    try:
        exchange(store)
        store.flush(wait=True)
        assert store.write_error == (f"cannot write the traffic session {path}: "
                                     "table frames has 2 columns but 13 values were supplied")
        assert store.committed == 0 and len(store) == 10 and store.kind(9) == "error"  # the store goes on
        store.add("weather", frame("out", req(4, "ping"), 30.0))
        store.flush(wait=True)
        assert store.committed == 0 and store.method(10) == "ping"
    finally:
        store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM frames").fetchone()[0] == 0  # nothing half-written into it
    assert conn.execute("SELECT count(*) FROM names").fetchone()[0] == 0
    conn.close()


def test_a_session_path_that_is_a_folder_is_refused_naming_it(tmp_path, expect_log):
    expect_log("spyglass.traffic", "no session writer process")  # the sink cannot open it either
    folder = tmp_path / "sessions.sqlite"
    folder.mkdir()
    with pytest.raises(OSError, match=re.escape(f"cannot open the traffic session {folder}: unable to open database")):
        TrafficStore(folder)
    assert list(folder.iterdir()) == []


def test_a_file_that_is_not_a_database_is_refused_and_left_as_it_was(tmp_path, expect_log):
    expect_log("spyglass.traffic", "no session writer process")
    notes = tmp_path / "notes.txt"
    text = "Shopping: bread, tea. " * 500
    notes.write_text(text)
    with pytest.raises(OSError, match=re.escape(f"cannot open the traffic session {notes}: file is not a database")):
        TrafficStore(notes)
    assert notes.read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_file_where_the_sessions_folder_should_be_is_named(tmp_path):
    blocker = tmp_path / "sessions"
    blocker.write_text("not a folder")
    with pytest.raises(FileExistsError) as info:
        TrafficStore(blocker / "s.sqlite")
    assert str(blocker) in str(info.value)


# ---------------------------------------------------------------------- closing, or not
def test_a_store_dropped_unclosed_still_writes_what_it_handed_over(tmp_path):
    path = tmp_path / "dropped.sqlite"
    store = exchange(TrafficStore(path))
    expected = records(store)
    store.flush()
    writer = store._writer
    assert writer is not None
    del store
    gc.collect()
    assert writer.proc.poll() is not None  # the writer was closed with the store
    again = TrafficStore.open_session(path)
    try:
        assert records(again) == expected
    finally:
        again.close()


EXIT_WITHOUT_CLOSE = r'''
import sys
from inspector.traffic import Frame, TrafficStore
store = TrafficStore(sys.argv[1])
def add(i):
    data = ('{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"line %d"}}' % i).encode()
    store.add("w", Frame("in", data, i * 0.001, 1e9 + i))
for i in range(200):
    add(i)
if not store.unflushed:  # the last add() flushed by itself: the next one cannot
    add(200)
print(len(store), store.unflushed, flush=True)
'''


def test_a_store_left_open_at_exit_writes_everything(tmp_path):
    path = tmp_path / "exit.sqlite"
    done = subprocess.run([sys.executable, "-c", EXIT_WITHOUT_CLOSE, str(path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    added, unflushed = map(int, done.stdout.split())
    assert unflushed > 0  # rows were still waiting for a flush when the program ended
    again = TrafficStore.open_session(path)
    try:
        assert len(again) == added and json.loads(again.raw(199))["params"]["data"] == "line 199"
    finally:
        again.close()


def test_closing_twice_and_adding_after_closing_write_nothing_more(tmp_path):
    path = tmp_path / "closed.sqlite"
    with TrafficStore(path) as store:
        exchange(store)
    assert store.committed == 10
    store.close()  # again: harmless
    store.add("weather", frame("out", req(99, "ping"), 40.0))
    store.flush(wait=True)
    assert len(store) == 11 and store.method(10) == "ping"  # kept in memory
    assert store.write_error is None and store.committed == 10
    assert counts(path) == (10, 0)


# ---------------------------------------------------------------------- the store's reading side
def test_the_hook_listeners_and_accessors_of_a_persisted_store(tmp_path):
    path = tmp_path / "meta.sqlite"
    seen: list[int] = []
    store = TrafficStore(path)
    try:
        store.add_listener(seen.append)
        record = store.hook("weather")
        record(frame("out", req(1, "tools/list"), 1.0, meta={"stream": "post", "status": 200}))
        record(frame("in", res(1, {"tools": []}), 1.5, meta={"stream": "post", "event_id": "e9", "status": 200}))
        store.remove_listener(seen.append)
        store.remove_listener(seen.append)  # not a listener any more: nothing to remove
        record(frame("out", req(2, "ping"), 2.0))
        assert seen == [0, 1]
        assert store.methods() == ["tools/list", "ping"]
        assert store.wall(1) == 1_700_000_001.5 and store.meta(1) == {"stream": "post", "event_id": "e9",
                                                                       "status": 200}
        assert store.latency(1) == 0.5 and store.meta(2) is None
    finally:
        store.close()
    again = TrafficStore.open_session(path)
    try:
        assert again.meta(0) == {"stream": "post", "status": 200}
        assert again.meta(1) == {"stream": "post", "event_id": "e9", "status": 200}
        assert again.servers() == ["weather"] and again.pair(1) == 0
    finally:
        again.close()


def test_huge_frames_read_back_from_the_file_keep_a_small_cache(tmp_path):
    path = tmp_path / "huge.sqlite"
    store = TrafficStore(path)
    try:
        bodies = []
        for i in range(RAW_CACHE + 4):
            body = json.dumps(res(i, {"content": [{"type": "text", "text": f"{i:03d}" * HEAD_MAX}]})).encode()
            bodies.append(body)
            store.add("big", frame("in", body, float(i)))
        store.flush(wait=True)
        assert store.columns.big == {}  # committed: no longer held in memory
        assert [store.raw(n) for n in range(len(bodies))] == bodies
        assert len(store._raw_cache) == RAW_CACHE
        assert store.raw(len(bodies) - 1) == bodies[-1]  # from the cache
        assert store.summary(0) == f"response ({len(bodies[0]) / 1024:.1f} KiB)"
    finally:
        store.close()


def test_summaries_of_unusual_frames():
    store = TrafficStore(":memory:")
    add = store.add
    n_uri = add("s", frame("out", req(1, "resources/read", uri="file:///notes/today.md")))
    n_prompt = add("s", frame("out", req(2, "prompts/get", name="greet", arguments={"who": "Ada"})))
    add("s", frame("out", req(3, "tools/call", name="snap")))
    n_image = add("s", frame("in", res(3, {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"},
                                                       {"type": "text", "text": "a cat"}]})))
    add("s", frame("out", req(4, "initialize", protocolVersion="2025-06-18")))
    odd_init = {"protocolVersion": "2025-06-18", "serverInfo": "acme 1.0"}  # serverInfo should be an object
    n_init = add("s", frame("in", res(4, odd_init)))
    n_http = add("s", frame("http", {"method": "POST", "url": "http://127.0.0.1:3001/mcp", "status": 202}))
    n_http_other = add("s", frame("http", {"note": "redirected"}))
    n_http_text = add("s", frame("http", b"HTTP/1.1 502 Bad Gateway"))
    add("s", frame("out", req(5, "resources/read", uri="file:///big.bin")))
    big = json.dumps(res(5, {"contents": [{"uri": "file:///big.bin", "blob": "Q" * (3 << 19)}]})).encode()
    n_big = add("s", frame("in", big))
    assert store.summary(n_uri) == "resources/read file:///notes/today.md"
    assert store.summary(n_prompt) == 'prompts/get greet {"who":"Ada"}'
    assert store.summary(n_image) == "tools/call → [image] | a cat"
    assert store.summary(n_init) == json.dumps(res(4, odd_init), separators=(",", ":"))  # shown whole, not failed
    assert store.summary(n_http) == "POST http://127.0.0.1:3001/mcp 202"
    assert store.summary(n_http_other) == '{"note":"redirected"}'
    assert store.summary(n_http_text) == "HTTP/1.1 502 Bad Gateway"
    assert store.summary(n_big) == "resources/read (1.5 MiB)"


def test_the_summary_cache_stays_bounded():
    store = TrafficStore(":memory:")
    for i in range(SUMMARY_CACHE + 10):
        store.add("s", frame("in", {"jsonrpc": "2.0", "method": "notifications/message",
                                    "params": {"level": "info", "data": f"tick {i}"}}, float(i)))
    last = len(store) - 1
    assert [store.summary(n) for n in (0, last)] == ["notifications/message [info] tick 0",
                                                     f"notifications/message [info] tick {last}"]
    for n in range(len(store)):
        store.summary(n)
    assert len(store._summaries) == SUMMARY_CACHE
    assert store.summary(0) == "notifications/message [info] tick 0"  # built again after being dropped


# ---------------------------------------------------------------------- filters and listings
def test_background_frames_are_hidden_unless_asked_for():
    store = TrafficStore(":memory:")
    store.add("s", frame("out", req(1, "tools/list")))
    store.add("s", frame("out", req(2, "ping"), 1.0, meta={BACKGROUND: True}))
    store.add("s", frame("in", res(2), 1.1, meta={BACKGROUND: True}))
    store.add("s", frame("in", res(1, {"tools": []}), 1.2))
    shown = store.filter()
    assert list(shown) == [0, 3] and shown[1] == 3 and len(shown) == 2
    assert shown.filter.is_all
    assert list(store.filter(background=True)) == [0, 1, 2, 3]
    assert list(store.filter(kinds={"response"})) == [3]
    assert list(store.filter(kinds={"response"}, background=True)) == [2, 3]
    assert not store.filter(kinds={"response"}).filter.is_all


def test_a_server_filter_past_255_servers_checks_the_wide_rows():
    store = TrafficStore(":memory:")
    for k in range(300):
        store.add(f"srv{k}", frame("err", f"stderr of {k}".encode(), float(k)))
    store.add("srv260", frame("err", b"again 260", 400.0))
    store.add("srv254", frame("err", b"again 254", 401.0))
    assert list(store.filter(servers={"srv260"})) == [260, 300]
    assert list(store.filter(servers={"srv254", "srv299"})) == [254, 299, 301]
    assert list(store.filter(servers={"srv3", "srv256"}, text="again")) == []
    assert list(store.filter(servers="srv255")) == [255]


def test_sessions_without_a_time_stamp_and_dangling_links(tmp_path):
    TrafficStore(tmp_path / "2026-03-01T10-00-00Z.sqlite").close()
    TrafficStore(tmp_path / "my capture.sqlite").close()
    (tmp_path / "gone.sqlite").symlink_to(tmp_path / "deleted-target.sqlite")
    listed = list_sessions(tmp_path)
    assert [s.path.name for s in listed] == ["2026-03-01T10-00-00Z.sqlite", "my capture.sqlite"]
    assert listed[0].started is not None and listed[0].started.year == 2026
    assert listed[1].started is None and listed[1].size > 0


def test_the_package_lists_what_it_exports():
    assert dir(traffic) == sorted(["DIRECTIONS", "FilteredView", "Frame", "KINDS", "ReadOnlyError", "Record",
                                   "SessionFile", "TrafficFilter", "TrafficStore", "list_sessions",
                                   "new_session_path", "sessions_dir"])
    with pytest.raises(AttributeError, match="module 'inspector.traffic' has no attribute 'Writer'"):
        _ = traffic.Writer


def test_big_frames_follow_their_batch_uncopied_and_read_back_whole(tmp_path):
    """A frame over HEAD_MAX is handed to the writer as the very bytes the store holds, after the batch that
    names it by size (marshalling it into the batch copied a 24 MB reply twice on the loop thread); the
    sink puts it back in the batch it stores, and every frame reads back byte for byte."""
    path = tmp_path / "big.sqlite"
    store = TrafficStore(path)
    writer = store._writer
    assert writer is not None and hasattr(writer, "proc")
    handed: list[tuple[bytes, list[bytes] | None]] = []
    put = writer._put

    def spy(payload: bytes, blobs: list[bytes] | None = None) -> None:
        handed.append((payload, blobs))
        put(payload, blobs)

    writer._put = spy  # type: ignore[method-assign]
    bodies: dict[int, bytes] = {}
    for i in range(6):
        text = str(i) * (HEAD_MAX * (i + 1)) if i % 2 else f"small {i}"
        body = json.dumps(res(i, {"content": [{"type": "text", "text": text}]})).encode()
        bodies[store.add("s", frame("in", body, float(i)))] = body
    held = dict(store.columns.big)
    assert sorted(held) == [1, 3, 5]
    store.flush(wait=True)
    payload, blobs = next((p, b) for p, b in handed if b)
    assert len(blobs) == 3 and all(blob is held[n] for n, blob in zip((1, 3, 5), blobs))
    sent = marshal.loads(payload)
    assert sent[_sink.BIG] == [(1, len(held[1])), (3, len(held[3])), (5, len(held[5]))]
    message, stored = _sink.received(payload + b"".join(blobs))  # as the sink reads it off its pipe
    assert message[_sink.BIG] == [(n, held[n]) for n in (1, 3, 5)] and marshal.loads(stored) == message
    inline = marshal.dumps(message)  # a batch with its big frames inside is taken as it is
    assert _sink.received(inline) == (message, inline)
    store.close()
    assert counts(path) == (6, 0)
    again = TrafficStore.open_session(path)
    try:
        assert [again.raw(n) for n in bodies] == list(bodies.values())
    finally:
        again.close()
