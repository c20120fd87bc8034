"""The stdio transport: spawn a server, newline-delimited JSON on its pipes.

The server runs in its own process group (so its children go with it), stdout
is framed by hand (no 64 KiB line limit), stderr is a separate line stream, and
`close()` escalates: close stdin → wait → SIGTERM the group → wait → SIGKILL.

The process is started with the standard library (transport/process.py), so a caller may start it
before it has an event loop and hand it over; its pipes join the loop in `open()`, and a thread waits
for its exit (the moment it exits, not when its pipes close, which children it left may delay).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from ..errors import ConnectError, TransportClosed
from ..protocol.framing import DEFAULT_MAX_MESSAGE, LineFramer, Oversize
from . import process
from .base import Closed, RawSent, Transport

log = logging.getLogger("spyglass.stdio")

READ_CHUNK = 64 * 1024  # frames of one read are handled in one go: this bounds that turn of the loop
TURN_S = 0.015  # the reader lets the loop turn after reads that kept it this long
BIG_FRAME = 1024 * 1024  # a frame this long is handed on in a turn of its own
# frames handed on at a time; between two such hand-offs the reader may let the loop turn. A read of a flood (64 KiB:
# about 600 log notifications, some 2 ms of work) goes in one: 64 at a time cost every step of the way (client,
# session, store, checks) 1,600 calls a flood of 100,000 instead of 170
TURN_FRAMES = 1024
QUIET_GC_FRAMES = 16  # frames handed on together with the garbage collector paused from this many on
STDERR_LINE_MAX = 64 * 1024
LINE_BREAKS = re.compile(rb"\r\n|\r|\n")


class StdioTransport(Transport):
    def __init__(self, command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                 max_message: int = DEFAULT_MAX_MESSAGE, grace: float = 2.0, inherit_env: bool = True,
                 started: subprocess.Popen[bytes] | None = None) -> None:
        if not command:
            raise ConnectError("no server command given")
        self.command = list(command)
        self.env = dict(env or {})
        self.cwd = cwd
        self.max_message = max_message
        self.grace = grace
        self.inherit_env = inherit_env
        self._started = started  # already running (`process.start`), handed over by the caller
        self._proc: subprocess.Popen[bytes] | None = None
        self._exit: asyncio.Future[int] | None = None
        self._stdin: asyncio.StreamWriter | None = None
        self._stdout: asyncio.StreamReader | None = None
        self._stderr: asyncio.StreamReader | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False
        self._closed_reported = False
        self._write_lock = asyncio.Lock()

    def describe(self) -> str:
        return shlex.join(self.command)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc else None

    async def open(self) -> None:
        if self._proc is not None:
            return
        proc = self._started or process.start(self.command, env=self.env, cwd=self.cwd,
                                                inherit_env=self.inherit_env)
        self._started = None
        self._proc = proc
        loop = asyncio.get_running_loop()
        self._exit = loop.create_future()
        try:
            assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
            if proc.stdin.closed or proc.stdout.closed or proc.stderr.closed:
                raise ValueError("a pipe is closed")  # before asyncio half-builds a transport around it
            self._stdout = await _reader(loop, proc.stdout)
            self._stderr = await _reader(loop, proc.stderr)
            self._stdin = await _writer(loop, proc.stdin)
        except (AssertionError, OSError, ValueError) as exc:  # a process handed over without its three pipes
            process.stop(proc)
            self._exit.set_result(proc.wait())
            raise ConnectError(f"cannot read and write the server's pipes ({type(exc).__name__})",
                               command=self.describe()) from None
        threading.Thread(target=_wait_for_exit, args=(proc, loop, self._exit), daemon=True,
                         name=f"stdio-wait-{proc.pid}").start()
        log.debug("started %s as pid %s", self.describe(), proc.pid)
        self._tasks = [asyncio.create_task(self._read_stdout(), name="stdio-stdout"),
                       asyncio.create_task(self._read_stderr(), name="stdio-stderr")]
        self._tasks.append(asyncio.create_task(self._watch_exit(), name="stdio-exit"))

    async def send(self, data: bytes) -> None:
        await self._send(data, None)

    async def send_raw(self, data: bytes, *, headers: Mapping[str, str] | None = None,
                       meta: dict[str, Any] | None = None) -> RawSent:
        """A message is a line: the line breaks of a hand-made frame go out as spaces (JSON whitespace)."""
        line = LINE_BREAKS.sub(b" ", data)
        await self._send(line, meta or {})
        return RawSent(line)

    async def _send(self, data: bytes, meta: dict[str, Any] | None) -> None:
        stdin = self._stdin
        if stdin is None or self._closing or stdin.is_closing():
            raise TransportClosed("the server's stdin is closed")
        async with self._write_lock:
            try:
                stdin.write(data + b"\n")
                if self.on_sent is not None:
                    if meta is None:
                        self.on_sent(data, time.monotonic())
                    else:
                        self.on_sent(data, time.monotonic(), meta)
                await stdin.drain()
            except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
                raise TransportClosed(f"the server stopped reading its stdin ({type(exc).__name__})") from None

    async def _read_stdout(self) -> None:
        assert self._stdout is not None
        reader = self._stdout
        framer = LineFramer(self.max_message)
        since = time.monotonic()  # the last time this reader let the loop turn
        try:
            while True:
                chunk = await reader.read(READ_CHUNK)
                if not chunk:
                    break
                now = time.monotonic()
                held = framer.pending
                frames = framer.feed(chunk)
                if held > BIG_FRAME and time.monotonic() - since > TURN_S:
                    # a big frame's last chunk: copying it out of the buffer and parsing it take a turn each
                    # (a 24 MB reply held the loop 50-90 ms in one)
                    await asyncio.sleep(0)
                    since = time.monotonic()
                for start in range(0, len(frames), TURN_FRAMES):
                    self._deliver_all(frames[start:start + TURN_FRAMES] if len(frames) > TURN_FRAMES else frames, now)
                    if time.monotonic() - since > TURN_S:
                        # a read returns at once while the pipe holds more: a flood kept one turn of the loop
                        # to itself (150 ms seen), the window frozen meanwhile; frames stay in order
                        await asyncio.sleep(0)
                        since = time.monotonic()
                if time.monotonic() - since > TURN_S:
                    await asyncio.sleep(0)
                    since = time.monotonic()
        except (ConnectionResetError, BrokenPipeError):  # pragma: no cover - POSIX pipes end with EOF instead
            pass
        for frame in framer.eof():
            self._deliver(frame, time.monotonic(), {"eof": True})
        # stdout is closed. If the process lives on, no answer can ever arrive.
        if not self._closing and not await self._wait(1.0):
            self._report_closed(None, "the server closed its standard output but is still running; "
                                      "no answer can arrive")

    def _deliver_all(self, frames: list[bytes | Oversize], now: float) -> None:
        """Frames of one read, in order: in one call where the consumer takes them so (a flood's frames go
        through the client, the traffic store and the checks a read's worth at a time), else one by one."""
        many = self.on_frames
        if many is None:
            for frame in frames:
                self._deliver(frame, now)
            return
        # A run of a flood's frames makes a few objects each (the parsed message, the record) that live until
        # the run is handed on, where reference counting frees them: the collector's passes over them found
        # nothing to free and cost a flood of 100,000 notifications 10-60 ms.
        quiet = len(frames) >= QUIET_GC_FRAMES and gc.isenabled()
        if quiet:
            gc.disable()
        try:
            many(frames, now)
        except Exception:  # a bug in a consumer must not stop the reader
            log.exception("frame consumer failed")
        finally:
            if quiet:
                gc.enable()

    def _deliver(self, frame: bytes | Oversize, now: float, meta: dict[str, Any] | None = None) -> None:
        try:
            if meta is None:
                self.on_frame(frame, now)
            else:
                self.on_frame(frame, now, meta)
        except Exception:  # a bug in a consumer must not stop the reader
            log.exception("frame consumer failed")

    async def _read_stderr(self) -> None:
        assert self._stderr is not None
        reader = self._stderr
        framer = LineFramer(STDERR_LINE_MAX)
        try:
            while True:
                chunk = await reader.read(READ_CHUNK)
                if not chunk:
                    break
                now = time.monotonic()
                for line in framer.feed(chunk):
                    self._log_line(line, now)
        except (ConnectionResetError, BrokenPipeError):  # pragma: no cover - POSIX pipes end with EOF instead
            pass
        for line in framer.eof():
            self._log_line(line, time.monotonic())

    def _log_line(self, line: bytes | Oversize, now: float) -> None:
        if isinstance(line, Oversize):
            line = line.head + f"… [{line.size} bytes in one line, cut]".encode()
        try:
            self.on_log(line, now)
        except Exception:
            log.exception("stderr consumer failed")

    async def _watch_exit(self) -> None:
        assert self._proc is not None and self._exit is not None
        code = await asyncio.shield(self._exit)
        # Let the readers drain what the process wrote before it died. Children
        # it left behind may hold the pipes open (no EOF while they live): end
        # them, then the readers finish.
        readers = [t for t in self._tasks if t.get_name() != "stdio-exit"]
        if readers:
            _, pending = await asyncio.wait(readers, timeout=0.2)
            if pending:
                self._end_group(self._proc)
                await asyncio.wait(pending, timeout=1.0)
        self._report_closed(code)
        if not self._closing:
            self._end_group(self._proc)

    def _end_group(self, proc: subprocess.Popen[bytes]) -> None:
        """The server is gone; end whatever it left running in its process group:
        SIGTERM now, SIGKILL a second later for whatever ignored it."""
        if sys.platform == "win32" or not _group_alive(proc.pid):
            return
        _signal(proc, signal.SIGTERM, group_only=True)
        asyncio.get_running_loop().call_later(1.0, _signal, proc, signal.SIGKILL, True)

    def _report_closed(self, code: int | None, reason: str | None = None) -> None:
        if self._closed_reported:
            return
        self._closed_reported = True
        if reason is not None:
            pass
        elif self._closing:
            reason = "stopped by Spyglass"
        elif code is not None and code < 0:
            reason = f"the server was killed by signal {_signame(-code)}"
        else:
            reason = f"the server exited with code {code}"
        try:
            self.on_close(Closed(reason, code, self._closing))
        except Exception:
            log.exception("close consumer failed")

    async def close(self) -> None:
        if self._started is not None:  # handed over but never opened: stop it all the same
            await self.open()
        proc = self._proc
        if proc is None or self._closing:
            await self._join()
            return
        self._closing = True
        if proc.returncode is None:
            if self._stdin is not None:
                self._stdin.close()
            if not await self._wait(self.grace):
                _signal(proc, signal.SIGTERM)
                if not await self._wait(self.grace):
                    _signal(proc, signal.SIGKILL)
                    await self._wait(5.0)
        # The server may have left children in its group: end them too.
        _signal(proc, signal.SIGKILL, group_only=True)
        await self._join()

    async def _join(self) -> None:
        tasks = [t for t in self._tasks if not t.done()]
        if tasks:
            done, still = await asyncio.wait(tasks, timeout=3.0)
            for t in still:
                t.cancel()
        if self._stdin is not None:
            self._stdin.close()

    async def _wait(self, seconds: float) -> bool:
        """Whether the process exits within `seconds`."""
        assert self._exit is not None
        try:
            await asyncio.wait_for(asyncio.shield(self._exit), seconds)
            return True
        except TimeoutError:
            return False


async def _reader(loop: asyncio.AbstractEventLoop, pipe: IO[bytes]) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=READ_CHUNK, loop=loop)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe)
    return reader


async def _writer(loop: asyncio.AbstractEventLoop, pipe: IO[bytes]) -> asyncio.StreamWriter:
    # StreamReaderProtocol brings the flow control that drain() waits on; nothing is read from it.
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop), pipe)
    return asyncio.StreamWriter(transport, protocol, None, loop)


def _wait_for_exit(proc: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop, done: asyncio.Future[int]) -> None:
    """A thread: the exit code, to the loop, as soon as the process exits."""
    code = proc.wait()
    try:
        loop.call_soon_threadsafe(_settle, done, code)
    except RuntimeError:  # the loop is closed: nobody is waiting any more
        pass


def _settle(done: asyncio.Future[int], code: int) -> None:
    if not done.done():
        done.set_result(code)


def _signal(proc: subprocess.Popen[bytes], sig: int, group_only: bool = False) -> None:
    if sys.platform == "win32":  # pragma: no cover
        if not group_only and proc.returncode is None:
            proc.kill()
        return
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):  # a group gone with its leader, not ours (sudo), or none
        if not group_only and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                proc.send_signal(sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _signame(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return str(num)
