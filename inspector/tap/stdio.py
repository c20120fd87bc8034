"""The stdio tap: a host launches `spyglass tap -- COMMAND…` instead of its server, and the tap passes
every byte through both ways while the recorder keeps a copy.

One thread per direction, each an `os.read` / `os.write` loop on the raw file descriptors: nothing is
buffered, parsed or re-encoded on the way, and a server that writes while it reads (or a host that
does) can never deadlock through the tap, because no direction ever waits on another. What a pump read
is handed to the recorder (a deque append) just before it is written on: a request is then always
queued before the answer it causes, which the other pump can only read after the write.

The server runs in a process group of its own (`transport.process.start`). SIGTERM, SIGINT and SIGHUP
sent to the tap go to that group; a server still running `GRACE_S` later is killed. Its exit status
becomes the tap's (a signal N as 128+N), and when the tap ends, whatever is left of the group ends with
it. On Linux the server also dies with the tap when the tap is killed outright (SIGKILL cannot be
caught: the kernel's parent-death signal does it); elsewhere such a server sees its stdin close.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..transport import process

if TYPE_CHECKING:
    from .intercept import WindowPort

READ_SIZE = 65536
DRAIN_S = 1.0  # after the server exits, how long a child of it may hold its stdout and stderr open
GRACE_S = 5.0  # after a signal is passed on, how long the server has to exit before its group is killed
FORWARDED = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))
PR_SET_PDEATHSIG = 1
# The recorder's thread parses, masks and compresses while it holds the GIL, and a pump that has just
# read or written waits for it up to the interpreter's switch interval. At the default 5 ms a flood of
# 100,000 notifications took five times as long through the tap (bench/tap_stdio.py) and a ping's p99
# grew by several ms; at 0.2 ms, about 1.1x and 1-2 ms. Shorter made the flood slower again.
SWITCH_INTERVAL_S = 0.0002


class Recorder(Protocol):
    def chunk(self, direction: str, data: bytes) -> None: ...

    def frame(self, direction: str, data: bytes, meta: dict[str, Any] | None = None) -> None: ...


def exit_status(returncode: int) -> int:
    """A child's return code as a shell reports it: killed by signal N is 128+N."""
    return 128 - returncode if returncode < 0 else returncode


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:  # a descriptor someone else made non-blocking: wait until it takes more
            select.select([], [fd], [])
            continue
        view = view[written:]


def _close_keeping_fd(fd: int) -> None:
    """Close what `fd` writes to (the host reads the end of it), leaving /dev/null in its place: the
    number stays taken, so nothing opened later lands on the tap's stdout."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


class StdioTap:
    """One server started for a host, its three pipes pumped to the tap's own stdin, stdout and stderr.

    `StdioTap(command)` starts the server at once (ConnectError when it cannot), so the caller can
    get its recorder ready while the server boots; `run(recorder)` pumps until the server is gone and
    returns the exit status to end with."""

    def __init__(self, command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                 stdin: int = 0, stdout: int = 1, stderr: int = 2) -> None:
        self.proc: subprocess.Popen[bytes] = process.start(command, env=env, cwd=cwd,
                                                           preexec_fn=process.die_with_parent())
        self._host = (stdin, stdout, stderr)
        self._done = threading.Event()
        self._timer: threading.Timer | None = None
        self.port: WindowPort | None = None  # intercept's end of the window's socket (`window_port`)
        self._previous = self._forward_signals()  # from now on: the server boots while the caller gets ready

    def window_port(self, server_id: str) -> WindowPort:
        """What a window may ask of this tap (intercept), for its recorder; loaded now that the server has
        started. The filter code it uses loads only when a window turns intercept on."""
        from .intercept import WindowPort

        self.port = WindowPort(server_id)
        return self.port

    def run(self, recorder: Recorder) -> int:
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        host_in, host_out, host_err = self._host
        server_in = proc.stdin
        port = self.port
        slots = port.slots if port is not None else None
        if port is not None:
            port.attach(recorder, {"out": server_in.fileno(), "in": host_out})
        pumps = [
            threading.Thread(target=self._pump, args=(host_in, server_in.fileno(), "out", recorder, server_in.close,
                                                      slots, 0), name="spyglass-tap-out", daemon=True),
            threading.Thread(target=self._pump, args=(proc.stdout.fileno(), host_out, "in", recorder,
                                                      lambda: _close_keeping_fd(host_out), slots, 1),
                             name="spyglass-tap-in", daemon=True),
            threading.Thread(target=self._pump, args=(proc.stderr.fileno(), host_err, "err", recorder, None, None, 0),
                             name="spyglass-tap-err", daemon=True),
        ]
        interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        try:
            for pump in pumps:
                pump.start()
            code = proc.wait()
            # what the server wrote before it ended is still in the pipes: let it through
            deadline = time.monotonic() + DRAIN_S
            for pump in pumps[1:]:
                pump.join(max(0.0, deadline - time.monotonic()))
            if port is not None:  # what intercept still holds goes on unchanged before the tap ends
                port.close("the server exited", DRAIN_S)
            return exit_status(code)
        finally:
            self._done.set()
            sys.setswitchinterval(interval)
            if self._timer is not None:
                self._timer.cancel()
            self.stop()
            for pump in pumps[1:]:
                if pump.is_alive():
                    pump.join(0.5)  # the group is gone: its pipes have closed

    def stop(self) -> None:
        """End the server and whatever is left of its process group (its children, a pipe's holder)."""
        if threading.current_thread() is threading.main_thread():
            for signum, handler in self._previous.items():
                signal.signal(signum, handler)
            self._previous = {}
        process.stop(self.proc)
        if sys.platform != "win32":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    # ------------------------------------------------------------------ the pumps (one thread each)
    @staticmethod
    def _pump(src: int, dst: int, direction: str, recorder: Recorder, at_end: Callable[[], None] | None,
              slots: list[Any] | None, slot: int) -> None:
        """`slots[slot]`: intercept's gate for this direction, when a window turned it on (None: the bytes
        go straight on, as they always do with intercept off)."""
        broken = False  # the reader went away: keep reading, so the writer is never stuck on a full pipe
        previous = b""
        while True:
            try:
                data = os.read(src, READ_SIZE)
            except BlockingIOError:
                select.select([src], [], [])
                continue
            except OSError:
                break
            if not data:
                break
            if slots is not None:
                gate = slots[slot]
                if gate is not None:
                    passed = gate.take(data, previous)
                    previous = data
                    if passed is None:
                        continue  # the gate records it and passes it on, in order
                    data = passed
                previous = data
            recorder.chunk(direction, data)
            if not broken:
                try:
                    _write_all(dst, data)
                except OSError:
                    broken = True
        if slots is not None:
            gate = slots[slot]
            if gate is not None and gate.finish(at_end or (lambda: None)):
                return  # the end goes on after what the gate still holds
        if at_end is not None:
            with contextlib.suppress(OSError):
                at_end()

    # ------------------------------------------------------------------ signals
    def _forward_signals(self) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}
        previous: dict[int, Any] = {}
        for signum in FORWARDED:
            previous[signum] = signal.signal(signum, self._on_signal)
        return previous

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.forward(signum)

    def forward(self, signum: int) -> None:
        """Pass `signum` on to the server's process group; kill the group if it is still there GRACE_S later."""
        if self.proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if sys.platform == "win32":  # pragma: no cover
                self.proc.send_signal(signum)
            else:
                os.killpg(self.proc.pid, signum)
        if self._timer is None:
            self._timer = threading.Timer(GRACE_S, self._too_late)
            self._timer.daemon = True
            self._timer.start()

    def _too_late(self) -> None:
        if not self._done.is_set() and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
