"""The session writer: SQLite schema, batch decoding, and the sink process.

Standard library only, and runnable as a script (`python -I -S _sink.py PATH`):
the traffic store runs it as a child process and streams batches of rows to
its stdin, so inserting rows into SQLite costs the app's event loop nothing (no
GIL shared). The sink commits each batch in one transaction and answers with
the number of rows committed so far (8 bytes, little-endian) on its stdout. At
end of input (the app closed the store, or died) it commits what it has and
exits, so even a SIGKILLed app loses nothing it had handed over.

Two steps keep a flood cheap: a batch is first committed as ONE row of the
`chunks` table (the marshalled batch itself: durable at once, nearly free),
and once no batch has come for `IDLE` seconds the sink (at a lower CPU
priority than the app) expands the oldest chunk into one row per frame in
`frames` and deletes it, in one transaction, chunk after chunk. Readers take
`frames`, then whatever `chunks` remain.

A batch is a marshalled tuple of column slices straight from the store's
in-memory index (`columns.py`; see `encode` in `_writer.py` and `rows` below).
"""

from __future__ import annotations

import marshal
import os
import queue
import signal
import sqlite3
import struct
import sys
import threading
import time
from array import array
from collections.abc import Iterator
from typing import Any, BinaryIO

FORMAT_VERSION = "1"
# The names of the codes in a batch: a copy of those in `columns.py`, as this script imports nothing of the package.
KINDS = ("request", "response", "notification", "error", "malformed", "stderr", "http", "app", "model")
DIRECTIONS = ("out", "in", "err", "http", "to-view", "from-view", "to-model", "from-model")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS frames (
    n         INTEGER PRIMARY KEY,  -- record number, 0-based and dense
    server    TEXT NOT NULL,        -- server id
    dir       TEXT NOT NULL,        -- out | in | err | http | to-view | from-view (an app) | to-model | from-model
    kind      TEXT NOT NULL,        -- request | response | notification | error | malformed | stderr | http | app
                                    -- | model
    method    TEXT,                 -- for responses: the method of the matching request
    rid,                            -- JSON-RPC id, integer or text (no affinity: 1 and '1' stay apart)
    pair      INTEGER,              -- on responses: record number of the request
    mono      REAL NOT NULL,        -- monotonic clock, seconds
    wall      REAL NOT NULL,        -- Unix time, seconds
    size      INTEGER NOT NULL,     -- bytes on the wire (without the newline)
    malformed TEXT,                 -- why the frame is not a usable message
    data      BLOB NOT NULL,        -- the frame exactly as on the wire
    meta      TEXT                  -- JSON: transport details (HTTP stream, SSE event id...)
);
-- batches not yet expanded into frames (see the module docstring)
CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY, first INTEGER NOT NULL, count INTEGER NOT NULL,
                                   batch BLOB NOT NULL);
-- the numbering of server and method names used by chunks
CREATE TABLE IF NOT EXISTS names (kind TEXT NOT NULL, idx INTEGER NOT NULL, name TEXT NOT NULL,
                                  PRIMARY KEY (kind, idx));
"""
INSERT = "INSERT OR REPLACE INTO frames VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
HEADER = struct.Struct("<Q")
NICE = 5  # below the app, not so low that a busy machine starves the commits
IDLE = 0.25  # seconds without a batch before chunks are expanded


def connect(path: str | os.PathLike[str], *, readonly: bool = False) -> sqlite3.Connection:
    if readonly:
        from pathlib import Path  # only readers (the app) need it: the sink process starts without

        return sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False,
                               isolation_level=None)
    conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    # WAL + NORMAL: a commit is in the OS before COMMIT returns, so a crash of
    # the app or of this process loses nothing committed; only a power cut may.
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(SCHEMA)
    return conn


def storable(value: Any) -> Any:
    """What SQLite can bind: text with lone surrogates (a peer can send them) is
    kept with backslash escapes, integers beyond 64 bits become text."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    elif isinstance(value, int) and not -(1 << 63) <= value < (1 << 63):
        return str(value)
    return value


class Tables:
    """Server and method names, numbered as in the store; batches carry new ones."""

    def __init__(self) -> None:
        self.servers: list[str] = []
        self.methods: list[str] = [""]

    def learn(self, batch: tuple[Any, ...]) -> list[tuple[str, int, str]]:
        """Take in a batch's new names; returns them as rows of `names`."""
        servers = [storable(name) for name in batch[3]]
        methods = [storable(name) for name in batch[4]]
        new = [("server", len(self.servers) + i, name) for i, name in enumerate(servers)]
        new += [("method", len(self.methods) + i, name) for i, name in enumerate(methods)]
        self.servers.extend(servers)
        self.methods.extend(methods)
        return new

    @classmethod
    def load(cls, conn: sqlite3.Connection) -> Tables:
        tables = cls()
        for kind, _idx, name in conn.execute("SELECT kind, idx, name FROM names ORDER BY kind, idx"):
            (tables.servers if kind == "server" else tables.methods).append(name)
        return tables


def rows(batch: tuple[Any, ...], tables: Tables) -> Iterator[tuple[Any, ...]]:
    """The frames of a batch as rows of `frames` (names must be learnt already)."""
    (_tag, n0, count, _new_servers, _new_methods, srv, dirs, kinds, methods_b, pair_b, mono_b, wall_b, size_b, off_b,
     buf, sparse, big, overflow) = batch
    methods = array("I")
    methods.frombytes(methods_b)
    pair = array("i")
    pair.frombytes(pair_b)
    mono = array("d")
    mono.frombytes(mono_b)
    wall = array("d")
    wall.frombytes(wall_b)
    size = array("I")
    size.frombytes(size_b)
    off = array("Q")
    off.frombytes(off_b)
    extra = {n: (storable(rid), storable(reason), storable(meta)) for n, rid, reason, meta in sparse}
    whole = dict(big)
    wide = dict(overflow)
    names, method_names = tables.servers, tables.methods
    base = off[0]
    for i in range(count):
        n = n0 + i
        rid, reason, meta = extra.get(n, (None, None, None))
        data = whole.get(n)
        if data is None:
            data = buf[off[i] - base:off[i + 1] - base]
        code = srv[i]
        p = pair[i]
        yield (n, names[wide.get(n, code) if code == 255 else code], DIRECTIONS[dirs[i]], KINDS[kinds[i]],
               method_names[methods[i]] or None, rid, p if p >= 0 else None, mono[i], wall[i], size[i], reason,
               data, meta)


BIG = 16  # the place in a batch of its frames over HEAD_MAX, as (record number, bytes) pairs


def without_blobs(batch: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[bytes]]:
    """A batch to send, its big frames named by their sizes, and their bytes to send after it: marshalling
    them into the batch, then joining it to its header, copied a 24 MB reply twice on the app's loop."""
    big = batch[BIG]
    return (*batch[:BIG], [(n, len(data)) for n, data in big], *batch[BIG + 1:]), [data for _n, data in big]


def with_blobs(batch: tuple[Any, ...], blobs: list[bytes]) -> tuple[Any, ...]:
    """`without_blobs` undone: the batch with its big frames' bytes in place, as it is stored and read."""
    return (*batch[:BIG], [(n, blob) for (n, _size), blob in zip(batch[BIG], blobs, strict=True)],
            *batch[BIG + 1:])


def received(payload: bytes) -> tuple[tuple[Any, ...], bytes]:
    """A message as it came from the app, and the bytes to store for it. A batch's big frames follow its
    marshalled tuple (`marshal.loads` ignores what follows): they are put back in it here, in this process,
    so that the app's loop never copies them."""
    message = marshal.loads(payload)
    if message[0] != "rows" or not message[BIG] or not isinstance(message[BIG][0][1], int):
        return message, payload  # no big frames, or sent inside the batch
    at = len(payload) - sum(size for _n, size in message[BIG])
    blobs = []
    for _n, size in message[BIG]:
        blobs.append(payload[at:at + size])
        at += size
    message = with_blobs(message, blobs)
    return message, marshal.dumps(message)


def rollback(conn: sqlite3.Connection) -> None:
    """Undo the open transaction, unless SQLite did already: it does on a full disk (SQLITE_FULL), and a
    second ROLLBACK would raise "no transaction is active" in place of the error that says what happened."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def write_meta(conn: sqlite3.Connection, items: list[tuple[str, str]]) -> None:
    conn.execute("BEGIN")
    conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [("format", FORMAT_VERSION), *items])
    conn.execute("COMMIT")


def write_batch(conn: sqlite3.Connection, batch: tuple[Any, ...], tables: Tables) -> int:
    """One transaction: the batch's frames, one row each."""
    conn.execute("BEGIN")
    try:
        conn.executemany("INSERT OR REPLACE INTO names VALUES (?, ?, ?)", tables.learn(batch))
        conn.executemany(INSERT, rows(batch, tables))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    done: int = batch[1] + batch[2]
    return done


def write_chunk(conn: sqlite3.Connection, payload: bytes, batch: tuple[Any, ...], tables: Tables) -> int:
    """One transaction: the whole batch as one row of `chunks`."""
    conn.execute("BEGIN")
    try:
        conn.executemany("INSERT OR REPLACE INTO names VALUES (?, ?, ?)", tables.learn(batch))
        conn.execute("INSERT INTO chunks (first, count, batch) VALUES (?, ?, ?)", (batch[1], batch[2], payload))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    done: int = batch[1] + batch[2]
    return done


def expand_one(conn: sqlite3.Connection, tables: Tables) -> bool:
    """Turn the oldest chunk into rows of `frames`; False when none is left."""
    row = conn.execute("SELECT id, batch FROM chunks ORDER BY id LIMIT 1").fetchone()
    if row is None:
        return False
    conn.execute("BEGIN")
    try:
        conn.executemany(INSERT, rows(marshal.loads(row[1]), tables))
        conn.execute("DELETE FROM chunks WHERE id = ?", (row[0],))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return True


def frame_data(conn: sqlite3.Connection, n: int) -> bytes | None:
    """The bytes of frame n, from `frames` or from the chunk that holds it."""
    conn.execute("BEGIN")  # one snapshot: the chunk may be expanded meanwhile
    try:
        row = conn.execute("SELECT data FROM frames WHERE n = ?", (n,)).fetchone()
        if row is not None:
            return bytes(row[0])
        row = conn.execute("SELECT batch FROM chunks WHERE first <= ? AND ? < first + count", (n, n)).fetchone()
    finally:
        conn.execute("COMMIT")
    if row is None:
        return None
    batch = marshal.loads(row[0])
    big: dict[int, bytes] = dict(batch[BIG])
    if n in big:
        return big[n]
    off = array("Q")
    off.frombytes(batch[13])
    i = n - batch[1]
    buf: bytes = batch[14]
    return buf[off[i] - off[0]:off[i + 1] - off[0]]


def pending_rows(conn: sqlite3.Connection) -> Iterator[tuple[Any, ...]]:
    """Rows of the chunks not expanded yet, in order (for readers)."""
    tables = Tables.load(conn)
    for (payload,) in conn.execute("SELECT batch FROM chunks ORDER BY id").fetchall():
        yield from rows(marshal.loads(payload), tables)


def _read_exact(stream: BinaryIO, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _drain(stdin: BinaryIO, inbox: queue.SimpleQueue[bytes | None]) -> None:
    """Read every message as soon as it arrives, so the app never waits on a
    full pipe and what it handed over is here even if it dies right after."""
    try:
        while True:
            head = _read_exact(stdin, HEADER.size)
            if head is None:
                break
            payload = _read_exact(stdin, HEADER.unpack(head)[0])
            if payload is None:
                break
            inbox.put(payload)
    finally:
        inbox.put(None)


def main(argv: list[str]) -> int:
    # Ctrl+C, a closing terminal, or SIGTERM sent to the whole process group (a logout, `timeout`,
    # a service manager) are for the app: it shuts down and closes our input; we finish writing what
    # came, then stop at end of input (also when the app itself was killed).
    for name in ("SIGINT", "SIGHUP", "SIGTERM"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    try:
        os.nice(NICE)  # the app's event loop comes first; SQLite catches up when the CPU is free
    except (AttributeError, OSError):  # pragma: no cover - Windows
        pass
    path = argv[1]
    conn = connect(path)
    tables = Tables()
    stdout = sys.stdout.buffer
    stdout.write(HEADER.pack(0))  # ready: the schema exists
    stdout.flush()
    inbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    threading.Thread(target=_drain, args=(sys.stdin.buffer, inbox), daemon=True).start()
    backlog = False  # chunks waiting to be expanded
    last = time.monotonic()  # when the last batch came
    while True:
        try:
            if not backlog:
                payload = inbox.get()
            else:
                wait = IDLE - (time.monotonic() - last)
                payload = inbox.get(timeout=wait) if wait > 0 else inbox.get_nowait()
        except queue.Empty:  # quiet for IDLE seconds: expand one chunk, then look again
            backlog = expand_one(conn, tables)
            continue
        if payload is None:
            break
        last = time.monotonic()
        message, payload = received(payload)
        if message[0] == "quit":  # the app is closing in a hurry: leave the chunks as they are
            conn.close()
            return 0
        if message[0] == "meta":
            write_meta(conn, message[1])
            continue
        done = write_chunk(conn, payload, message, tables)
        backlog = True
        try:
            stdout.write(HEADER.pack(done))
            stdout.flush()
        except (BrokenPipeError, OSError):
            # The app is gone: keep committing what it sent, and send the acks nowhere from now on, or
            # the interpreter's last flush of stdout fails too (exit code 120 and a message on stderr).
            os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
    while expand_one(conn, tables):
        pass
    conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
