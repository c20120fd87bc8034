"""Writers of a traffic session: a sink process (default) or a thread (fallback).

The store calls `submit(columns, first, last)` with a range of new records;
the writer slices the store's columns for that range (cheap C-level copies),
marshals them and hands them to a thread that writes them to the sink
process's stdin. The sink (`_sink.py`) inserts them in one transaction per
batch and acknowledges; `committed` is the number of rows known to be in the
file; `sync()` waits for it to reach everything submitted.

When no child process can be started (a frozen app, a locked-down system) the
`ThreadWriter` does the same work in a thread of this process.
"""

from __future__ import annotations

import abc
import logging
import marshal
import queue
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from ..private import create_private
from . import _sink
from .columns import Columns

log = logging.getLogger("spyglass.traffic")


def encode(c: Columns, first: int, last: int, sent: dict[str, int]) -> tuple[Any, ...]:
    """Records [first, last) as one batch of column slices (see `_sink.rows`),
    with every sparse column queued so far: the store submits all its new rows
    at once."""
    servers = c.servers[sent["servers"]:]
    methods = c.methods[sent["methods"]:]
    sent["servers"] += len(servers)
    sent["methods"] += len(methods)
    off = c.off
    big = [(n, c.big[n]) for n in range(first, last) if n in c.big] if c.big else []
    wide = [(n, code) for n, code in c.wide.items() if first <= n < last] if c.wide else []
    return ("rows", first, last - first, servers, methods, bytes(c.srv[first:last]), bytes(c.dir[first:last]),
            bytes(c.kind[first:last]), c.method[first:last].tobytes(), c.pair[first:last].tobytes(),
            c.mono[first:last].tobytes(), c.wall[first:last].tobytes(), c.size[first:last].tobytes(),
            off[first:last + 1].tobytes(), bytes(c.buf[off[first]:off[last]]), c.take_sparse(), big, wide)


class Writer(abc.ABC):
    """What the store sees of its writer, whichever kind it is."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: str | None = None
        self.committed = 0  # rows known to be in the file
        self.submitted = 0
        self._sent = {"servers": 0, "methods": 1}  # method 0 is "none" on both sides
        self._cond = threading.Condition()
        self._closed = False

    def submit(self, columns: Columns, first: int, last: int) -> None:
        if last <= first or self._closed:
            return
        batch = encode(columns, first, last, self._sent)
        if batch[_sink.BIG]:  # frames over HEAD_MAX follow the batch as they are (`_sink.without_blobs`)
            sent, blobs = _sink.without_blobs(batch)
            self._put(marshal.dumps(sent), blobs)
        else:
            self._put(marshal.dumps(batch))
        self.submitted = last

    def sync(self, timeout: float | None = 30.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.committed >= self.submitted or self.error is not None, timeout)

    def _committed(self, upto: int) -> None:
        with self._cond:
            self.committed = max(self.committed, upto)
            self._cond.notify_all()

    def _failed(self, message: str) -> None:
        if self.error is None:
            self.error = message
            log.error("%s", message)
        with self._cond:
            self._cond.notify_all()

    def set_meta(self, items: dict[str, str]) -> None:
        """Key/values for the session's `meta` table, written in order with the batches around them."""
        if items and not self._closed:
            self._put(marshal.dumps(("meta", sorted(items.items()))))

    @abc.abstractmethod
    def _put(self, payload: bytes, blobs: list[bytes] | None = None) -> None:
        """Hand a marshalled message, and the big frames that follow it, to the writing side."""

    @abc.abstractmethod
    def close(self, expand: bool = True) -> None:
        """Commit what was submitted and stop; `expand=False` leaves batches as chunks."""


def _grow_pipe(stream: IO[bytes], size: int = 1 << 20) -> None:
    """A 1 MiB pipe (Linux): a batch goes over in a few writes, not dozens."""
    try:
        import fcntl

        fcntl.fcntl(stream.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), size)
    except (ImportError, OSError):
        pass


class SinkWriter(Writer):
    """Batches go to a child process that owns the SQLite connection."""

    def __init__(self, path: Path, meta: dict[str, str]) -> None:
        super().__init__(path)
        self._queue: queue.SimpleQueue[tuple[bytes, ...] | None] = queue.SimpleQueue()
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", _sink.__file__, str(path)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True)
        assert self.proc.stdin and self.proc.stdout
        _grow_pipe(self.proc.stdin)
        ready = self.proc.stdout.read(_sink.HEADER.size)
        if len(ready) != _sink.HEADER.size:
            self.proc.wait(5)
            raise OSError(f"the session writer did not start (exit code {self.proc.returncode})")
        self._pump = threading.Thread(target=self._send, name="spyglass-traffic-pump", daemon=True)
        self._acks = threading.Thread(target=self._read_acks, name="spyglass-traffic-acks", daemon=True)
        self._pump.start()
        self._acks.start()
        self.set_meta(meta)

    def _put(self, payload: bytes, blobs: list[bytes] | None = None) -> None:
        # header, batch and big frames are written one after the other: never joined into a copy here
        size = len(payload) + sum(map(len, blobs)) if blobs else len(payload)
        self._queue.put((_sink.HEADER.pack(size), payload, *(blobs or ())))

    def _send(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            while (item := self._queue.get()) is not None:
                for part in item:
                    stdin.write(part)
                stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            self._failed(f"the session writer for {self.path} stopped ({type(exc).__name__}; "
                         f"{self.submitted - self.committed} rows not written)")
        finally:
            try:
                stdin.close()
            except OSError:
                pass

    def _read_acks(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        size = _sink.HEADER.size
        while True:
            head = stdout.read(size)
            if len(head) < size:
                break
            self._committed(_sink.HEADER.unpack(head)[0])
        code = self.proc.wait()
        if self.committed < self.submitted or not self._closed:
            self._failed(f"the session writer for {self.path} exited with code {code} "
                         f"({self.submitted - self.committed} rows not written)")

    def close(self, expand: bool = True) -> None:
        if self._closed:
            return
        self._closed = True
        if not expand:
            self._put(marshal.dumps(("quit",)))
        self._queue.put(None)
        self._pump.join(60)
        self._acks.join(60)
        if self.proc.poll() is None:  # pragma: no cover - the sink exits at end of input
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


class ThreadWriter(Writer):
    """The same batches, written by a thread of this process."""

    def __init__(self, path: Path, meta: dict[str, str]) -> None:
        super().__init__(path)
        self._queue: queue.SimpleQueue[tuple[bytes, list[bytes] | None] | None] = queue.SimpleQueue()
        try:
            conn = _sink.connect(path)
        except sqlite3.Error as exc:  # a folder, a file that is not a database: say which one
            raise OSError(f"cannot open the traffic session {path}: {exc}") from None
        _sink.write_meta(conn, sorted(meta.items()))
        self._thread = threading.Thread(target=self._run, args=(conn,), name="spyglass-traffic-writer", daemon=True)
        self._thread.start()

    def _put(self, payload: bytes, blobs: list[bytes] | None = None) -> None:
        self._queue.put((payload, blobs))

    def _run(self, conn: sqlite3.Connection) -> None:
        tables = _sink.Tables()
        try:
            while (item := self._queue.get()) is not None:
                try:
                    message = marshal.loads(item[0])
                    if item[1]:
                        message = _sink.with_blobs(message, item[1])
                    if message[0] == "meta":
                        _sink.write_meta(conn, message[1])
                        continue
                    self._committed(_sink.write_batch(conn, message, tables))
                except Exception as exc:
                    self._failed(f"cannot write the traffic session {self.path}: {exc}")
        finally:
            conn.close()

    def close(self, expand: bool = True) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put(None)
            self._thread.join(60)


def make_writer(path: Path, meta: dict[str, str]) -> Writer:
    # made 0600 (its folder 0700) before SQLite opens it: its -wal and -shm files take the database's mode
    create_private(path)
    if not getattr(sys, "frozen", False):
        try:
            return SinkWriter(path, meta)
        except OSError as exc:
            log.warning("no session writer process (%s): writing from a thread", exc)
    return ThreadWriter(path, meta)
