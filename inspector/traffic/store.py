"""The traffic store: an append-only record of every frame of every server.

One store per app session. Every frame the client reports (and every stderr
line) becomes a numbered record (0, 1, 2, ... dense), classified on arrival:
kind, method, JSON-RPC id, request/response pairing, latency.

Memory. The live index is columnar (`columns.py`: `array`/`bytearray`, a few
dozen bytes a row, no Python object per row). The raw bytes of each frame are
kept in one contiguous buffer, up to `HEAD_MAX` bytes per frame (the whole
frame for all but huge ones), so free-text search runs at C speed over it.
Larger frames keep their full bytes in SQLite only (and in memory until
committed), with a small LRU cache for `raw(n)`.

Persistence. The store writes to SQLite in WAL mode from the first frame.
Flush policy:

* `add()` only appends to the in-memory index; it never touches the disk.
* `flush()` hands the rows added since the last flush, as one batch of column
  slices, to the session writer: a small child process (`_sink.py`, stdlib
  only) that owns the SQLite connection and commits each batch in ONE
  transaction (as one `chunks` row at once, expanded into one `frames` row
  per frame when the writer is idle; see `_sink.py`). The app pays about
  3 ms per 10,000 rows to hand a batch over and shares no GIL with SQLite.
  (A frozen app, or one that cannot start a process, writes from a thread.)
* The UI calls `flush()` on a 100 ms timer (`TrafficPane` does); `add()` also
  flushes by itself when the oldest unflushed row is 100 ms old, so a store
  without a UI is written too while frames keep coming. Rows therefore reach
  the writer at most ~100 ms after they arrive.
* `flush(wait=True)` returns once everything added so far is committed;
  `close()` does that and stops the writer.
* WAL with `synchronous=NORMAL`: a committed transaction survives a crash or
  SIGKILL of the app. When the app dies, the writer still commits every batch
  it was handed, then exits (end of input), so a crash loses at most the rows
  added since the last flush. (Only an OS crash or power cut can lose recent
  commits.)

The store is not thread-safe: call it from one thread (the UI/asyncio thread).
No Qt here.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import sqlite3
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..protocol import jsonrpc as rpc
from . import sessions
from ._sink import connect, frame_data, pending_rows
from ._writer import Writer, make_writer
from .columns import (
    BACKGROUND,
    D_ERR,
    D_FROM_MODEL,
    D_FROM_VIEW,
    D_HTTP,
    D_IN,
    D_OUT,
    D_TO_MODEL,
    D_TO_VIEW,
    DIR_CODE,
    DIRECTIONS,
    HANDMADE,
    HANDMADE_ANSWER,
    HEAD_MAX,
    K_APP,
    K_ERROR,
    K_HTTP,
    K_MALFORMED,
    K_MODEL,
    K_NOTIFICATION,
    K_REQUEST,
    K_RESPONSE,
    K_STDERR,
    KINDS,
    WIDE,
    Columns,
)
from .filter import FilteredView, TrafficFilter
from .frame import Frame, Hook, plain_notification
from .jsonl import export_jsonl, meta_json, meta_of
from .summary import summarise

FLUSH_INTERVAL = 0.1  # seconds
SUMMARY_CACHE = 4096
RAW_CACHE = 16

Listener = Callable[[int], None]


def _shutdown(ref: weakref.ref[TrafficStore], writer: Writer) -> None:
    """At interpreter exit (or when a store is dropped unclosed): write what is left."""
    store = ref()
    if store is not None:
        store.close()
    else:
        writer.close()


@dataclass(frozen=True, slots=True)
class Record:
    """One traffic record, built on demand by `TrafficStore.record(n)`."""

    n: int
    server_id: str
    direction: str  # out | in | err | http (an HTTP exchange) | to-view | from-view (an app) | to-model | from-model
    kind: str  # request | response | notification | error | malformed | stderr | http | app | model
    method: str | None
    id: rpc.RequestId | None
    mono: float
    wall: float
    size: int
    malformed: str | None
    latency: float | None  # responses and errors: seconds since the matching request
    pair: int | None  # record number of the matching request / response
    meta: dict[str, Any] | None = None  # transport details (HTTP stream, SSE event id...)


class ReadOnlyError(RuntimeError):
    pass


class TrafficStore:
    def __init__(self, path: str | Path | None = None, *, meta: dict[str, str] | None = None) -> None:
        """`path=None`: a new session file in the user data dir; ":memory:": no file.
        `meta`: extra key/values for the session's `meta` table."""
        self.readonly = False
        self.memory = path == ":memory:"
        self.path: Path | None = None
        if not self.memory:
            self.path = Path(path) if path is not None else sessions.new_session_path()
        self.columns = Columns()  # read by the filter and the writer; only the store appends
        # (server, requester dir, id) -> request row; an app's bridge adds its view: (server, dir, id, view)
        self._open: dict[tuple[Any, ...], int] = {}
        self._summaries: OrderedDict[int, str] = OrderedDict()
        self._raw_cache: OrderedDict[int, bytes] = OrderedDict()
        self._listeners: list[Listener] = []
        self._once: list[Listener] = []
        self._reader: sqlite3.Connection | None = None
        # Expert flags: record number -> the worst severity found in it (0 error, 1 warning, 2 info), set
        # by whoever judges the frames (inspector.checks, in the window), in the order they were set.
        self.flags: dict[int, int] = {}
        self.flag_order: list[int] = []
        self.t0: float | None = None  # monotonic time of the first record
        self.started = time.time()
        self._flushed = 0  # records handed to the writer
        self._pending_since = 0.0
        self._writer: Writer | None = None
        self.last_read: tuple[int, list[tuple[str, Frame]]] = (0, [])  # `append_read`'s last frames, parsed
        # the session's `meta` table: what the file says of itself (format, start, the servers' definitions)
        self.meta_items: dict[str, str] = {"started": repr(self.started), **(meta or {})}
        if self.path is not None:
            self._writer = make_writer(self.path, self.meta_items)
            self._finalizer = weakref.finalize(self, _shutdown, weakref.ref(self), self._writer)

    # ------------------------------------------------------------------ appending
    def add(self, server_id: str, frame: Frame) -> int:
        """Record one frame; returns its record number."""
        if self.readonly:
            raise ReadOnlyError("this session was reopened read-only")
        return self._append(server_id, frame, True)

    def add_many(self, server_id: str, frames: list[Frame]) -> int:
        """Record frames in order, as `add` would one by one; returns the record number of the first. A run of
        notifications as a flood brings them (parsed, in, nothing unusual about them) is appended column by
        column, in a fraction of the time."""
        if self.readonly:
            raise ReadOnlyError("this session was reopened read-only")
        first = len(self.columns.dir)
        if not frames or not all(map(plain_notification, frames)):
            for frame in frames:
                self._append(server_id, frame, True)
            return first
        return self._notifications(server_id, frames, True)

    def _notifications(self, server_id: str, frames: list[Frame], persist: bool) -> int:
        """`add_many` of a run of plain notifications (`plain_notification`), column by column."""
        first = len(self.columns.dir)
        c = self.columns
        k = len(frames)
        code = self._server_code(server_id)
        names = [f.message.method for f in frames]  # (Notifications: above; a flood's read has one)
        codes: Iterable[int] = itertools.repeat(self._method_code(name) if name else 0, k) \
            if names.count(name := names[0]) == k else [self._method_code(m) if m else 0 for m in names]
        sizes = list(map(len, datas := [f.data for f in frames]))
        if code < WIDE:
            c.srv.extend(itertools.repeat(code, k))
        else:
            c.srv.extend(itertools.repeat(WIDE, k))
            c.wide.update(dict.fromkeys(range(first, first + k), code))
        c.dir.extend(itertools.repeat(D_IN, k))
        c.kind.extend(itertools.repeat(K_NOTIFICATION, k))
        c.method.extend(codes)
        c.mono.extend([f.mono for f in frames])
        c.wall.extend([f.wall for f in frames])
        c.size.extend(sizes)
        c.pair.extend(itertools.repeat(-1, k))
        end = len(c.buf)
        c.buf += b"".join(datas)
        c.off.extend(itertools.islice(itertools.accumulate(sizes, initial=end), 1, None))
        if self.t0 is None:
            self.t0 = frames[0].mono
        self._appended(first, first + k, persist)
        return first

    def hook(self, server_id: str) -> Callable[[Frame], None]:
        """A traffic hook for `Client(traffic=store.hook(server_id))`; its `many` takes a read's worth."""
        return Hook(self, server_id)

    def _append(self, server_id: str, frame: Frame, persist: bool) -> int:
        c = self.columns
        n = len(c.dir)
        data = frame.data
        d = DIR_CODE.get(frame.direction, D_ERR)
        reason = frame.malformed
        method = None
        rid: rpc.RequestId | None = None
        pair = -1
        # --- classify: "in" frames come parsed; "out" frames are ours (few); "err" are stderr
        app_key: Any = None
        if d == D_ERR or d == D_HTTP:
            kind = K_STDERR if d == D_ERR else K_HTTP
        elif d == D_TO_VIEW or d == D_FROM_VIEW:
            # An app's bridge: its own kind, paired within its view (each view numbers its requests from 0).
            kind, method, rid, reason, app_key = self._app_frame(frame, reason)
        elif d == D_TO_MODEL or d == D_FROM_MODEL:
            # An exchange with a model endpoint: its own kind, the request and its answer paired by number.
            kind, said = K_MODEL, frame.meta or {}
            method, rid = str(said.get("path") or "model"), said.get("exchange")
            app_key = ("model", "?" if d == D_TO_MODEL else "!", rid) if isinstance(rid, int) else None
        else:
            msg = frame.message if d == D_IN and frame.message is not None else rpc.parse(data)
            if isinstance(msg, rpc.Malformed):
                kind = K_MALFORMED
                reason = reason or msg.reason
            elif isinstance(msg, rpc.Notification):
                kind = K_NOTIFICATION
                method = msg.method
            elif isinstance(msg, rpc.Request):
                kind = K_REQUEST
                method = msg.method
                rid = msg.id
            else:  # Response or ErrorResponse
                kind = K_RESPONSE if isinstance(msg, rpc.Response) else K_ERROR
                rid = msg.id
        code = self._server_code(server_id)
        if app_key is not None:
            pair = self._pair_app(code, d, app_key, n)
            if pair >= 0:
                method = c.methods[c.method[pair]]
        elif kind == K_REQUEST and reason is None and rid is not None:
            self._open[(code, d, rid)] = n
        elif (kind == K_RESPONSE or kind == K_ERROR) and rid is not None and reason is None:
            # the request came the other way: an "in" response answers one of ours
            req = self._open.pop((code, D_OUT if d == D_IN else D_IN, rid), -1)
            if req >= 0:
                pair = req
                c.pair[req] = n
                method = c.methods[c.method[req]]
        if reason is not None:
            if kind != K_APP and kind != K_MODEL:
                kind = K_MALFORMED
            c.reasons[n] = reason
        if rid is not None:
            c.ids[n] = rid
        meta = frame.meta
        if meta:
            c.meta[n] = meta
            if meta.get(BACKGROUND):
                c.background.add(n)
            if HANDMADE in meta or HANDMADE_ANSWER in meta:
                c.handmade.add(n)
        mcode = self._method_code(method) if method else 0
        size = len(data)
        if code < WIDE:
            c.srv.append(code)
        else:
            c.srv.append(WIDE)
            c.wide[n] = code
        c.dir.append(d)
        c.kind.append(kind)
        c.method.append(mcode)
        c.mono.append(frame.mono)
        c.wall.append(frame.wall)
        c.size.append(size)
        c.pair.append(pair)
        if size > HEAD_MAX:
            c.buf += data[:HEAD_MAX]
            c.big[n] = data
        else:
            c.buf += data
        c.off.append(len(c.buf))
        if self.t0 is None:
            self.t0 = frame.mono
        if persist and self._writer is not None and (rid is not None or reason is not None or meta):
            c.sparse.append((n, rid, reason, meta_json(meta)))
        self._appended(n, n + 1, persist)
        return n

    def _server_code(self, server_id: str) -> int:
        c = self.columns
        code = c.server_code.get(server_id)
        if code is None:
            code = c.server_code[server_id] = len(c.servers)
            c.servers.append(server_id)
        return code

    def _method_code(self, method: str) -> int:
        c = self.columns
        code = c.method_code.get(method)
        if code is None:
            code = c.method_code[method] = len(c.methods)
            c.methods.append(method)
        return code

    def _appended(self, first: int, end: int, persist: bool = True) -> None:
        """Records `first`..`end - 1` were appended: hand them to the writer when it is time, tell the listeners."""
        if persist and self._writer is not None:
            if first == self._flushed:
                self._pending_since = time.monotonic()
            elif time.monotonic() - self._pending_since >= FLUSH_INTERVAL:
                self.flush()
        if self._once:
            once, self._once = self._once, []
            for fn in once:
                fn(first)
        for fn in self._listeners:
            for n in range(first, end):
                fn(n)

    @staticmethod
    def _app_frame(frame: Frame, reason: str | None) -> tuple[int, str | None, rpc.RequestId | None, str | None, Any]:
        """(kind, method, id, malformed reason, pairing key) of a bridge message; the key is (view, "?" or
        "!", id): a request of one side opens it, the other side's answer closes it."""
        msg = rpc.parse(frame.data)
        view = (frame.meta or {}).get("view")
        if isinstance(msg, rpc.Malformed):
            return K_APP, None, None, reason or msg.reason, None
        if isinstance(msg, rpc.Notification):
            return K_APP, msg.method, None, reason, None
        if isinstance(msg, rpc.Request):
            return K_APP, msg.method, msg.id, reason, (view, "?", msg.id)
        return K_APP, None, msg.id, reason, (view, "!", msg.id)

    def _pair_app(self, code: int, d: int, key: tuple[Any, str, rpc.RequestId], n: int) -> int:
        view, what, rid = key
        if what == "?":
            self._open[(code, d, rid, view)] = n
            return -1
        other = {D_TO_VIEW: D_FROM_VIEW, D_FROM_VIEW: D_TO_VIEW, D_TO_MODEL: D_FROM_MODEL, D_FROM_MODEL: D_TO_MODEL}
        req = self._open.pop((code, other[d], rid, view), -1)
        if req >= 0:
            self.columns.pair[req] = n
        return req

    def set_meta(self, key: str, value: str) -> None:
        """Say something of the session in its file's `meta` table (e.g. `server:<id>`: a server's
        definition, secrets masked); written with the next batches."""
        if self.readonly:
            raise ReadOnlyError("this session was reopened read-only")
        if self.meta_items.get(key) == value:
            return
        self.meta_items[key] = value
        if self._writer is not None:
            self._writer.set_meta({key: value})

    # ------------------------------------------------------------------ listeners
    def flag(self, n: int, severity: int) -> None:
        """Mark record `n` with a finding of `severity` (0 error, 1 warning, 2 info; the worst one stays)."""
        if not 0 <= n < len(self.columns.dir):
            return
        old = self.flags.get(n)
        if old is None:
            self.flag_order.append(n)
        if old is None or severity < old:
            self.flags[n] = severity

    def add_listener(self, fn: Listener) -> None:
        """Call `fn(n)` after every appended record (keep it cheap)."""
        self._listeners.append(fn)

    def remove_listener(self, fn: Listener) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    def notify_next(self, fn: Listener) -> None:
        """Call `fn(n)` once, when the next record is appended: lets a view
        sleep while nothing happens and batch what arrives."""
        self._once.append(fn)

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self.columns.dir)

    def servers(self) -> list[str]:
        """Server ids in order of first appearance."""
        return list(self.columns.servers)

    def methods(self) -> list[str]:
        return self.columns.methods[1:]

    def server_id(self, n: int) -> str:
        return self.columns.servers[self.columns.server_of(n)]

    def direction(self, n: int) -> str:
        return DIRECTIONS[self.columns.dir[n]]

    def kind(self, n: int) -> str:
        return KINDS[self.columns.kind[n]]

    def kind_code(self, n: int) -> int:
        """`KINDS.index(kind(n))`, without the string."""
        return self.columns.kind[n]

    def method(self, n: int) -> str | None:
        return self.columns.methods[self.columns.method[n]] or None

    def request_id(self, n: int) -> rpc.RequestId | None:
        return self.columns.ids.get(n)

    def mono(self, n: int) -> float:
        return self.columns.mono[n]

    def wall(self, n: int) -> float:
        return self.columns.wall[n]

    def size(self, n: int) -> int:
        return self.columns.size[n]

    def malformed(self, n: int) -> str | None:
        return self.columns.reasons.get(n)

    def meta(self, n: int) -> dict[str, Any] | None:
        return self.columns.meta.get(n)

    def pair(self, n: int) -> int | None:
        p = self.columns.pair[n]
        return p if p >= 0 else None

    def latency(self, n: int) -> float | None:
        """Seconds from the request to this response (responses and errors only)."""
        c = self.columns
        p = c.pair[n]
        if p < 0 or p > n:
            return None
        return c.mono[n] - c.mono[p]

    def record(self, n: int) -> Record:
        if not 0 <= n < len(self.columns.dir):
            raise IndexError(n)
        c = self.columns
        return Record(n, self.server_id(n), self.direction(n), self.kind(n), self.method(n), c.ids.get(n), c.mono[n],
                      c.wall[n], c.size[n], c.reasons.get(n), self.latency(n), self.pair(n), c.meta.get(n))

    def head(self, n: int) -> bytes:
        """The in-memory bytes of frame n: all of it unless it is over HEAD_MAX."""
        return self.columns.head(n)

    def raw(self, n: int) -> bytes:
        """Frame n exactly as on the wire."""
        c = self.columns
        if not 0 <= n < len(c.dir):
            raise IndexError(n)
        if c.size[n] <= HEAD_MAX:
            return c.head(n)
        data = c.big.get(n) or self._raw_cache.get(n)
        if data is not None:
            return data
        data = self._read_blob(n)
        self._raw_cache[n] = data
        while len(self._raw_cache) > RAW_CACHE:
            self._raw_cache.popitem(last=False)
        return data

    def text(self, n: int) -> str:
        return self.raw(n).decode("utf-8", errors="replace")

    def _read_blob(self, n: int) -> bytes:
        if self._reader is None:
            assert self.path is not None
            self._reader = connect(self.path, readonly=True)
        data = frame_data(self._reader, n)
        return self.head(n) if data is None else data  # None: cannot happen (in _big until committed)

    def summary(self, n: int) -> str:
        """A one-line summary of record n (built on first use, then cached)."""
        s = self._summaries.get(n)
        if s is None:
            c = self.columns
            kind = c.kind[n]
            raw = c.head(n) if kind in (K_STDERR, K_MALFORMED) or c.size[n] > HEAD_MAX else self.raw(n)
            s = summarise(KINDS[kind], c.methods[c.method[n]], raw, c.size[n], c.reasons.get(n))
            self._summaries[n] = s
            if len(self._summaries) > SUMMARY_CACHE:
                self._summaries.popitem(last=False)
        return s

    # ------------------------------------------------------------------ filtering
    def filter(self, flt: TrafficFilter | None = None, **criteria: Any) -> FilteredView:
        """A filtered index over this store, e.g. `store.filter(text="tools", kinds={"request"})`.
        Call `view.update()` to take in rows appended since (it is incremental)."""
        view = FilteredView(self, flt if flt is not None else TrafficFilter.make(**criteria))
        view.update()
        return view

    # ------------------------------------------------------------------ persistence
    def flush(self, wait: bool = False) -> None:
        """Hand the rows added since the last flush to the writer (one
        transaction); `wait=True` returns only once they are committed."""
        writer = self._writer
        if writer is None:
            return
        total = len(self.columns.dir)
        if total > self._flushed:
            writer.submit(self.columns, self._flushed, total)
            self._flushed = total
        if wait:
            writer.sync()
        big = self.columns.big
        if big:  # huge frames: once in the file, read them from there
            for n in [k for k in big if k < writer.committed]:
                del big[n]

    @property
    def write_error(self) -> str | None:
        return self._writer.error if self._writer else None

    @property
    def unflushed(self) -> int:
        """Records not yet handed to the writer."""
        return len(self.columns.dir) - self._flushed if self._writer else 0

    @property
    def committed(self) -> int:
        """Records known to be in the session file."""
        return self._writer.committed if self._writer else 0

    def close(self, expand: bool = True) -> None:
        """Write everything, then stop the writer. The writer first commits
        batches as chunks and turns them into one row per frame when idle;
        `expand=False` skips what is left of that (a fast exit after a flood;
        `open_session` reads chunks just as well)."""
        if self._writer is not None:
            self.flush(wait=True)
            self._writer.close(expand)
            self._finalizer.detach()
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> TrafficStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def open_session(cls, path: str | Path, problems: list[str] | None = None) -> TrafficStore:
        """Reopen a saved session file, read-only (no connection needed). With `problems`, a damaged
        file (truncated, a broken page, rows of a newer format) opens with what could be read and each
        thing that could not is said there; without it the first such error is raised."""
        store, steps = cls.reading(path, problems)
        collections.deque(steps, maxlen=0)
        return store

    @classmethod
    def reading(cls, path: str | Path, problems: list[str] | None = None,
                batch: int = 2000) -> tuple[TrafficStore, Iterator[int]]:
        """`open_session` a slice at a time: the store at once (its meta, no frames yet), and an iterator that
        appends up to `batch` frames a step and yields the store's length (the file is closed at its end)."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(path)
        store = cls(":memory:")
        store.memory = False
        store.path = path
        store.readonly = True
        conn = connect(path, readonly=True)
        try:
            conn.execute("BEGIN")  # one snapshot of frames and chunks: the writer may be expanding right now
            store._read_meta(conn, problems)
        except BaseException as exc:
            conn.close()
            if problems is None or not isinstance(exc, sqlite3.DatabaseError):
                raise
            problems.append(f"{path.name}: {exc}; 0 frames could be read")
            return store, iter(())
        return store, store._read_file(conn, path, problems, batch)

    def _read_meta(self, conn: sqlite3.Connection, problems: list[str] | None) -> None:
        try:
            self.meta_items = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
        except sqlite3.DatabaseError as exc:
            if problems is None:
                raise
            problems.append(f"the session's own description (its meta table) cannot be read: {exc}")
        try:
            self.started = float(self.meta_items.get("started", self.started))
        except ValueError:
            if problems is not None:
                problems.append(f"the session's start time is not a number: {self.meta_items['started']!r}")
        version = self.meta_items.get("format", "1")
        if version != "1" and problems is not None:
            problems.append(f"written in session format {version} (a newer Spyglass?); this version reads "
                            "format 1 and shows what it knows of the file")

    def _read_file(self, conn: sqlite3.Connection, path: Path, problems: list[str] | None,
                   batch: int) -> Iterator[int]:
        with contextlib.closing(conn):
            yield from self._read_rows(conn, path, problems, batch)

    def _read_rows(self, conn: sqlite3.Connection, path: Path, problems: list[str] | None,
                   batch: int) -> Iterator[int]:
        got: list[tuple[str, Frame]] = []
        try:
            rows = conn.execute("SELECT server, dir, mono, wall, malformed, meta, data FROM frames ORDER BY n")
            for server, direction, mono, wall, reason, meta, data in rows:  # (row by row: a damaged page keeps
                got.append((str(server), Frame(str(direction), bytes(data), float(mono), float(wall), reason,
                                               None, meta_of(meta))))  # the rows before it)
                if len(got) == batch:
                    self.append_read(got)
                    self.columns.big.clear()  # a huge frame: its head stays in memory, the reader fetches the rest
                    got = []
                    yield len(self)
        except (sqlite3.DatabaseError, TypeError, ValueError) as exc:
            self.append_read(got)
            self.columns.big.clear()
            if problems is None:
                raise
            problems.append(f"{path.name} is damaged after frame {len(self)}: {exc}")
            return
        self.append_read(got)
        self.columns.big.clear()
        # batches the writer had committed but not yet expanded into frames
        try:
            for row in pending_rows(conn):
                _n, server, direction, _kind, _method, _rid, _pair, mono, wall, _size, reason, data, meta = row
                frame = Frame(direction, bytes(data), mono, wall, reason, None, meta_of(meta))
                n = self._append(server, frame, False)
                if n != _n:
                    raise ValueError(f"{path}: record {_n} found where {n} was expected")
                # a huge frame stays whole in memory here: `frames` does not have it
        except (sqlite3.DatabaseError, TypeError, ValueError, EOFError, IndexError, KeyError) as exc:
            if problems is None:
                raise
            problems.append(f"the last frames the writer had not yet filed cannot be read ({exc}); "
                            f"{len(self)} frames could be read")
        yield len(self)

    def append_read(self, frames: Iterable[tuple[str, Frame]]) -> None:
        """Frames read from a file into this read-only store, in order: the server's frames parsed in one call,
        a run of one server's plain notifications appended column by column (`add_many`)."""
        got = frames if isinstance(frames, list) else list(frames)
        self.last_read = (len(self.columns.dir), got)  # (what rebuilds the servers as they are read uses them)
        ins = [f for _, f in got if f.direction == "in" and f.message is None]
        for frame, message in zip(ins, rpc.parse_many([f.data for f in ins]), strict=True):
            frame.message = message
        i, end = 0, len(got)
        while i < end:
            server, frame = got[i]
            j = i + 1
            if plain_notification(frame):
                while j < end and got[j][0] == server and plain_notification(got[j][1]):
                    j += 1
                self._notifications(server, [f for _, f in got[i:j]], False)
            else:
                self._append(server, frame, False)
            i = j

    @classmethod
    def from_frames(cls, frames: Iterable[tuple[str, Frame]], meta: dict[str, str] | None = None) -> TrafficStore:
        """A read-only store of frames read from elsewhere (a `.mcpsession` file): no file behind it."""
        store = cls(":memory:")
        if meta:
            store.meta_items.update(meta)
            try:
                store.started = float(store.meta_items.get("started", store.started))
            except ValueError:
                pass
        store.append_read(frames)
        store.readonly = True
        return store

    list_sessions = staticmethod(sessions.list_sessions)

    # ------------------------------------------------------------------ export
    def export_jsonl(self, path: str | Path, rows: Iterable[int] | None = None) -> int:
        """Write records as JSON Lines in the format of `spyglass --cli --trace` (`jsonl.py`)."""
        return export_jsonl(self, path, rows)
