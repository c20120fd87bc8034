"""Session files written by earlier versions still open, record for record.

`data/session-format-1.sqlite` was written by the store of format "1": its first
rows were expanded into `frames`, the rest are still one batch in `chunks` (as
after a crash or a hurried close). It holds every kind of record, ids of every
type, malformed reasons, transport meta and more than 255 servers.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from inspector.protocol import jsonrpc as rpc
from inspector.traffic import Frame, TrafficStore

FIXTURE = Path(__file__).resolve().parent / "data" / "session-format-1.sqlite"
EXPANDED = 300  # rows of the fixture in `frames`; the others are in one chunk


def _frame(direction: str, obj: object, t: float, malformed: str | None = None,
           meta: dict[str, object] | None = None) -> Frame:
    data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return Frame(direction, data, t, 1_700_000_000 + t, malformed, rpc.parse(data) if direction == "in" else None,
                 meta)


def format_frames() -> list[tuple[str, Frame]]:
    """The frames of the fixture, in order."""
    frames: list[tuple[str, Frame]] = []
    t = 0.0

    def add(server: str, direction: str, obj: object, malformed: str | None = None,
            meta: dict[str, object] | None = None) -> None:
        nonlocal t
        t += 0.125
        frames.append((server, _frame(direction, obj, t, malformed, meta)))

    for i, rid in enumerate((1, "two", 10 ** 30, 7)):
        add("alpha", "out", {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": f"t{i}"}})
        if i % 2:
            add("alpha", "in", {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "nope"}})
        else:
            add("alpha", "in", {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "ok"}]}})
    add("alpha", "in", {"jsonrpc": "2.0", "id": 99, "method": "ping"})
    add("alpha", "out", {"jsonrpc": "2.0", "id": 99, "result": {}})
    add("alpha", "in", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "hi"}},
        meta={"stream": "get", "event_id": "e1"})
    add("alpha", "in", b"not json at all")
    add("alpha", "in", {"jsonrpc": "2.0", "id": 1, "result": {}}, malformed="answers nothing we asked")
    add("alpha", "err", b"a line on stderr")
    add("beta", "http", {"method": "POST", "url": "http://127.0.0.1/mcp", "status": 200}, meta={"status": 200})
    for k in range(300):  # more servers than the one-byte server column numbers
        add(f"srv{k}", "err", f"stderr of server {k}".encode())
        if k % 50 == 0:
            add(f"srv{k}", "in", {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": k}},
                meta={"stream": "post"})
    add("alpha", "out", {"jsonrpc": "2.0", "id": 8, "method": "resources/read", "params": {"uri": "file:///x"}})
    add("srv299", "in", {"jsonrpc": "2.0", "id": 8, "result": {"contents": []}})
    add("alpha", "in", {"jsonrpc": "2.0", "id": 8, "result": {}})
    return frames


FIELDS = ("n", "server_id", "direction", "kind", "method", "id", "mono", "wall", "size", "malformed", "latency",
          "pair", "meta")


def records(store: TrafficStore) -> list[tuple[object, ...]]:
    return [tuple(getattr(store.record(n), f) for f in FIELDS) for n in range(len(store))]


def test_a_format_1_session_file_opens_record_for_record(tmp_path):
    path = tmp_path / FIXTURE.name
    shutil.copyfile(FIXTURE, path)  # opening read-only still needs a writable folder for the WAL index
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() == ("1",)
    assert conn.execute("SELECT count(*) FROM frames").fetchone() == (EXPANDED,)
    assert conn.execute("SELECT count(*) FROM chunks").fetchone() == (1,)
    conn.close()
    live = TrafficStore(":memory:")
    for server, frame in format_frames():
        live.add(server, frame)
    again = TrafficStore.open_session(path)
    try:
        assert again.readonly and again.started == 1_700_000_000.0
        assert records(again) == records(live)
        assert [again.raw(n) for n in range(len(again))] == [live.raw(n) for n in range(len(live))]
        assert again.servers() == live.servers()
    finally:
        again.close()
