"""What ends a killed background process's servers and everything they started.

The kernel's parent-death signal (`transport.process.die_with_parent`) kills each server's first process
when the background process dies, even by SIGKILL; but a server started through a wrapper (`npx`, `uv run`,
`sh -c`, a launcher script) runs as that process's child, in the same process group, and lives on when it
ignores the end of its stdin (a tool still working, a server that never reads again). The tap's rule is no
orphan, ever: a small watchdog process holds the list of the servers' process groups and kills each one,
with SIGKILL, when the background process is gone.

The background process starts it (`spyglass do --reap`, in a session of its own) with a pipe on its stdin
and writes `+PGID START` when a server starts and `-PGID` when it is closed. When the pipe ends (the
background process exited or was killed: the kernel closes its end) the watchdog kills the groups still
listed and exits. A group is only killed while it is still the one listed: its leader is the process
that was started (the same start time in /proc), or the leader is gone and its children remain. Linux
only, as the parent-death signal is. Standard library only: it starts fast and holds nothing else.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from typing import IO

from .remote import spyglass_program

log = logging.getLogger("spyglass.agent.reaper")


def start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot: /proc/PID/stat field 22), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


class Reaper:
    """The background process's side: the watchdog started, told of each server's group."""

    def __init__(self) -> None:
        self._pipe: IO[bytes] | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        if not sys.platform.startswith("linux"):
            return
        try:
            self.proc = subprocess.Popen([*spyglass_program(), "do", "--reap"], stdin=subprocess.PIPE,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         start_new_session=True)
        except OSError as exc:
            log.warning("no watchdog for the servers' process groups: %s", exc)
            return
        self._pipe = self.proc.stdin

    def _say(self, line: str) -> None:
        if self._pipe is None:
            return
        try:
            self._pipe.write(line.encode("ascii") + b"\n")
            self._pipe.flush()
        except (OSError, ValueError):  # the watchdog is gone: the parent-death signal is what is left
            self._pipe = None

    def add(self, pid: int) -> None:
        """A server started as the leader of process group `pid`."""
        started = start_time(pid)
        if started is not None:
            self._say(f"+{pid} {started}")

    def remove(self, pid: int) -> None:
        """That server was closed: its group is ended (the transport's shutdown), nothing to watch."""
        self._say(f"-{pid}")

    def stop(self) -> None:
        """The background process ends normally, its servers closed: the watchdog ends with nothing to do."""
        if self._pipe is not None:
            with contextlib.suppress(OSError):
                self._pipe.close()
            self._pipe = None
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)


def watch(stream: IO[bytes] | None = None) -> int:
    """`spyglass do --reap`: the watchdog. Reads `+PGID START` / `-PGID` lines until its stdin ends, then kills
    the groups still listed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for the shell that started it all
    source = stream if stream is not None else sys.stdin.buffer
    groups: dict[int, str] = {}
    for raw in source:
        line = raw.decode("ascii", "replace").split()
        try:
            if line and line[0].startswith("+") and len(line) == 2:
                groups[int(line[0][1:])] = line[1]
            elif line and line[0].startswith("-"):
                groups.pop(int(line[0][1:]), None)
        except ValueError:
            continue
    for pgid, started in groups.items():
        leader = start_time(pgid)
        if leader is not None and leader != started:
            continue  # the number belongs to another process now: not ours to kill
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    return 0
