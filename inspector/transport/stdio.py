"""The stdio transport: spawn a server, newline-delimited JSON on its pipes.

The server runs in its own process group (so its children go with it), stdout
is framed by hand (no 64 KiB line limit), stderr is a separate line stream, and
`close()` escalates: close stdin → wait → SIGTERM the group → wait → SIGKILL.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ConnectError, TransportClosed
from ..protocol.framing import DEFAULT_MAX_MESSAGE, LineFramer, Oversize
from .base import Closed, Transport

log = logging.getLogger("spyglass.stdio")

READ_CHUNK = 64 * 1024  # frames of one read are handled in one go: this bounds that turn of the loop
STDERR_LINE_MAX = 64 * 1024


class StdioTransport(Transport):
    def __init__(self, command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                 max_message: int = DEFAULT_MAX_MESSAGE, grace: float = 2.0, inherit_env: bool = True) -> None:
        if not command:
            raise ConnectError("no server command given")
        self.command = list(command)
        self.env = dict(env or {})
        self.cwd = cwd
        self.max_message = max_message
        self.grace = grace
        self.inherit_env = inherit_env
        self._proc: asyncio.subprocess.Process | None = None
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
            return  # already started (the command line starts it early)
        env = dict(os.environ) if self.inherit_env else {}
        env.update(self.env)
        program = self.command[0]
        if self.cwd is not None and not os.path.isdir(self.cwd):
            raise ConnectError(f"working directory does not exist: {self.cwd}", command=self.describe())
        resolved = shutil.which(program, path=env.get("PATH")) if os.sep not in program else program
        if resolved is None:
            raise ConnectError(f"command not found: {program} (not on PATH)", command=self.describe())
        try:
            self._proc = await asyncio.create_subprocess_exec(
                resolved, *self.command[1:],
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env=env, cwd=self.cwd, start_new_session=(sys.platform != "win32"),
            )
        except FileNotFoundError:
            raise ConnectError(f"command not found: {program}", command=self.describe()) from None
        except PermissionError:
            raise ConnectError(f"permission denied running {program}", command=self.describe()) from None
        except OSError as exc:
            raise ConnectError(f"could not start {program}: {exc.strerror or exc}", command=self.describe()) from None
        log.debug("started %s as pid %s", self.describe(), self._proc.pid)
        self._tasks = [asyncio.create_task(self._read_stdout(), name="stdio-stdout"),
                       asyncio.create_task(self._read_stderr(), name="stdio-stderr")]
        self._tasks.append(asyncio.create_task(self._watch_exit(), name="stdio-exit"))

    async def send(self, data: bytes) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or self._closing or proc.stdin.is_closing():
            raise TransportClosed("the server's stdin is closed")
        async with self._write_lock:
            try:
                proc.stdin.write(data + b"\n")
                if self.on_sent is not None:
                    self.on_sent(data, time.monotonic())
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
                raise TransportClosed(f"the server stopped reading its stdin ({type(exc).__name__})") from None

    async def _read_stdout(self) -> None:
        assert self._proc and self._proc.stdout
        reader = self._proc.stdout
        framer = LineFramer(self.max_message)
        try:
            while True:
                chunk = await reader.read(READ_CHUNK)
                if not chunk:
                    break
                now = time.monotonic()
                for frame in framer.feed(chunk):
                    self._deliver(frame, now)
        except (ConnectionResetError, BrokenPipeError):  # pragma: no cover - POSIX pipes end with EOF instead
            pass
        for frame in framer.eof():
            self._deliver(frame, time.monotonic(), {"eof": True})
        # stdout is closed. If the process lives on, no answer can ever arrive.
        proc = self._proc
        if not self._closing and proc.returncode is None:
            try:
                await asyncio.wait_for(_exited(proc), 1.0)
            except TimeoutError:
                self._report_closed(None, "the server closed its standard output but is still running; "
                                          "no answer can arrive")

    def _deliver(self, frame: bytes | Oversize, now: float, meta: dict[str, Any] | None = None) -> None:
        try:
            if meta is None:
                self.on_frame(frame, now)
            else:
                self.on_frame(frame, now, meta)
        except Exception:  # a bug in a consumer must not stop the reader
            log.exception("frame consumer failed")

    async def _read_stderr(self) -> None:
        assert self._proc and self._proc.stderr
        reader = self._proc.stderr
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
        assert self._proc
        code = await _exited(self._proc)
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

    def _end_group(self, proc: asyncio.subprocess.Process) -> None:
        """The server is gone; end whatever it left running in its process group:
        SIGTERM now, SIGKILL a second later for whatever ignored it."""
        if sys.platform == "win32" or not _group_alive(proc.pid):
            return
        self._signal(proc, signal.SIGTERM, group_only=True)
        asyncio.get_running_loop().call_later(1.0, self._signal, proc, signal.SIGKILL, True)

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
        proc = self._proc
        if proc is None or self._closing:
            await self._join()
            return
        self._closing = True
        if proc.returncode is None:
            try:
                if proc.stdin and not proc.stdin.is_closing():
                    proc.stdin.close()
            except Exception:  # pragma: no cover - closing asyncio's pipe transport does not raise
                pass
            if not await self._wait(proc, self.grace):
                self._signal(proc, signal.SIGTERM)
                if not await self._wait(proc, self.grace):
                    self._signal(proc, signal.SIGKILL)
                    await self._wait(proc, 5.0)
        # The server may have left children in its group: end them too.
        self._signal(proc, signal.SIGKILL, group_only=True)
        await self._join()

    async def _join(self) -> None:
        tasks = [t for t in self._tasks if not t.done()]
        if tasks:
            done, still = await asyncio.wait(tasks, timeout=3.0)
            for t in still:
                t.cancel()
        if self._proc and self._proc.stdin:
            try:
                self._proc.stdin.close()
            except Exception:  # pragma: no cover - closing asyncio's pipe transport does not raise
                pass

    @staticmethod
    async def _wait(proc: asyncio.subprocess.Process, seconds: float) -> bool:
        try:
            await asyncio.wait_for(_exited(proc), seconds)
            return True
        except TimeoutError:
            return False

    @staticmethod
    def _signal(proc: asyncio.subprocess.Process, sig: int, group_only: bool = False) -> None:
        if sys.platform == "win32":  # pragma: no cover
            if not group_only and proc.returncode is None:
                proc.kill()
            return
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):  # pragma: no cover - a group gone with its leader, or not ours
            if not group_only and proc.returncode is None:
                try:
                    proc.send_signal(sig)
                except ProcessLookupError:
                    pass


async def _exited(proc: asyncio.subprocess.Process) -> int:
    """The process's exit code, as soon as it exits. (`Process.wait()` on Python
    3.11 also waits until every pipe is closed, which a child the server left
    running can delay forever.)"""
    while proc.returncode is None:
        await asyncio.sleep(0.02)
    return proc.returncode


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
