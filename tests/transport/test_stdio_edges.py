"""The stdio transport at its edges, with small Python servers written to tmp_path: commands that cannot
start, servers that die by a signal, stop reading, ignore SIGTERM or leave children holding the pipes, and
consumers that fail."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import textwrap
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from support import PY, SLOWDOWN

from inspector.errors import ConnectError, TransportClosed
from inspector.protocol.framing import OVERSIZE_KEEP
from inspector.transport.stdio import StdioTransport


def script(tmp_path: Path, source: str) -> list[str]:
    path = tmp_path / "server.py"
    path.write_text(textwrap.dedent(source))
    return [PY, str(path)]


class Wire:
    """A stdio transport's callbacks, recorded."""

    def __init__(self, transport: StdioTransport) -> None:
        self.frames: list[tuple[bytes, dict[str, Any] | None]] = []
        self.logs: list[bytes] = []
        self.closed: list[Any] = []
        transport.on_frame = lambda raw, mono, meta=None: self.frames.append((raw, meta))
        transport.on_log = lambda line, mono: self.logs.append(line)
        transport.on_close = self.closed.append


async def until(cond: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout * SLOWDOWN
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


def alive(pid: int) -> bool:
    """Running, that is: neither gone nor a zombie waiting for a parent to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


@contextlib.asynccontextmanager
async def started(t: StdioTransport) -> AsyncIterator[StdioTransport]:
    """Opens the transport and closes it however the block ends (no server outlives its test)."""
    try:
        await t.open()
        yield t
    finally:
        await t.close()


def readers() -> list[asyncio.Task[Any]]:
    """The transport's tasks (pipe readers, exit watcher) still running."""
    return [task for task in asyncio.all_tasks() if task.get_name().startswith("stdio-") and not task.done()]


# --- commands that cannot start ----------------------------------------------------------------------------


def test_an_empty_command_is_refused():
    with pytest.raises(ConnectError, match="^no server command given$"):
        StdioTransport([])


@pytest.mark.parametrize("case", ["no cwd", "not on PATH", "no such file", "not executable", "not a program"])
async def test_a_command_that_cannot_start_says_why(tmp_path, case):
    target = tmp_path / "server"
    cwd = None
    if case == "no cwd":
        command, cwd = [PY, "-c", "pass"], str(tmp_path / "gone")
        expected = f"working directory does not exist: {cwd}"
    elif case == "not on PATH":
        command = ["spyglass-test-no-such-program", "--stdio"]
        expected = "command not found: spyglass-test-no-such-program (not on PATH)"
    elif case == "no such file":
        command = [str(target)]
        expected = f"command not found: {target}"
    elif case == "not executable":
        target.write_text("#!/bin/sh\necho hi\n")
        target.chmod(0o644)
        command = [str(target)]
        expected = f"permission denied running {target}"
    else:  # executable, but neither a binary nor a script with a #! line
        target.write_bytes(b"\x00\x01\x02 no interpreter for this\n")
        target.chmod(0o755)
        command = [str(target)]
        expected = f"could not start {target}: Exec format error"
    t = StdioTransport(command, cwd=cwd)
    Wire(t)
    with pytest.raises(ConnectError) as caught:
        await t.open()
    assert caught.value.message == expected and caught.value.details["command"] == t.describe()
    assert t.pid is None and t.returncode is None
    with pytest.raises(TransportClosed):
        await t.send(b"{}")
    await t.close()  # nothing to stop


# --- how a server ends ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("signum, name", [(signal.SIGKILL, "SIGKILL"), (40, "40")])  # 40: a real-time signal
async def test_a_server_killed_by_a_signal_says_which(tmp_path, signum, name):
    t = StdioTransport(script(tmp_path, f"""
        import os
        os.kill(os.getpid(), {int(signum)})
    """))
    wire = Wire(t)
    async with started(t):
        await until(lambda: wire.closed)
    assert [(c.reason, c.exit_code, c.expected) for c in wire.closed] == [
        (f"the server was killed by signal {name}", -int(signum), False)]
    assert t.returncode == -int(signum)


async def test_a_server_that_ignores_eof_is_ended_by_sigterm_or_else_sigkill(tmp_path):
    """close(): stdin closed, `grace` seconds, SIGTERM, `grace` seconds, SIGKILL."""
    # grace: 1 s where the server must get to die of SIGTERM (coverage, if measuring it, saves its data first)
    for ignores_sigterm, code, grace in ((False, -signal.SIGTERM, 1.0), (True, -signal.SIGKILL, 0.3)):
        t = StdioTransport(script(tmp_path, f"""
            import signal, sys, time
            if {ignores_sigterm}:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            print("ready", file=sys.stderr, flush=True)
            sys.stdin.read()  # EOF: and yet it stays
            print("stdin closed, staying", file=sys.stderr, flush=True)
            time.sleep(60)
        """), grace=grace)
        wire = Wire(t)
        async with started(t):
            await until(lambda: wire.logs)
            start = time.monotonic()
            await t.close()
            took = time.monotonic() - start
        assert [(c.reason, c.exit_code, c.expected) for c in wire.closed] == [("stopped by Spyglass", code, True)]
        assert wire.logs == [b"ready", b"stdin closed, staying"]
        assert took >= (2 if ignores_sigterm else 1) * grace * 0.95


async def test_a_server_that_stops_reading_its_stdin_fails_the_send(tmp_path):
    t = StdioTransport(script(tmp_path, """
        import os, time
        os.read(0, 1000)  # the start of the message, then no more
        os.close(0)
        time.sleep(60)
    """), grace=0.2)
    wire = Wire(t)
    sent: list[bytes] = []
    t.on_sent = lambda data, mono: sent.append(data)
    big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"x": "y" * 1_000_000}}).encode()
    async with started(t):
        with pytest.raises(TransportClosed) as caught:
            await t.send(big)  # more than the pipe holds: the write waits for the server, which goes away
        assert re.fullmatch(r"the server stopped reading its stdin \((BrokenPipeError|ConnectionResetError)\)",
                            caught.value.message)
        with pytest.raises(TransportClosed, match="^the server's stdin is closed$"):
            await t.send(b"{}")
    assert sent == [big]
    assert [(c.reason, c.expected) for c in wire.closed] == [("stopped by Spyglass", True)]


async def test_children_left_holding_the_pipes_are_ended_when_the_server_exits(tmp_path):
    t = StdioTransport(script(tmp_path, """
        import subprocess, sys
        child = subprocess.Popen(["sleep", "60"])  # inherits stdout and stderr: no EOF while it lives
        print(child.pid, file=sys.stderr, flush=True)
        sys.exit(3)
    """))
    wire = Wire(t)
    child = None
    try:
        async with started(t):
            await until(lambda: wire.closed)
            child = int(wire.logs[0])
            assert [(c.reason, c.exit_code, c.expected) for c in wire.closed] == [
                ("the server exited with code 3", 3, False)]
            await until(lambda: not alive(child), timeout=5)  # ended with the server's group
            await until(lambda: not readers())  # and the readers saw EOF
    finally:
        if child is not None and alive(child):
            os.kill(child, signal.SIGKILL)


async def test_closing_does_not_wait_forever_for_a_child_outside_the_group(tmp_path):
    t = StdioTransport(script(tmp_path, """
        import subprocess, sys
        child = subprocess.Popen(["sleep", "60"], start_new_session=True)  # escapes the process group
        print(child.pid, file=sys.stderr, flush=True)
        sys.stdin.read()
    """), grace=5.0)  # it exits at EOF: the grace is never used up
    wire = Wire(t)
    child = None
    try:
        async with started(t):
            await until(lambda: wire.logs)
            child = int(wire.logs[0])
            start = time.monotonic()
            await t.close()  # the child still holds stdout and stderr open
            took = time.monotonic() - start
            assert alive(child)
    finally:
        if child is not None and alive(child):
            os.kill(child, signal.SIGKILL)
            await until(lambda: not alive(child))
            await asyncio.sleep(0.1)  # its end closes the pipes: let the loop see it before the test's loop closes
    assert 2.5 < took < 8 * SLOWDOWN  # the readers were given three seconds, then cancelled
    await until(lambda: not readers(), timeout=1)
    assert [(c.reason, c.exit_code, c.expected) for c in wire.closed] == [("stopped by Spyglass", 0, True)]


# --- what the server writes ---------------------------------------------------------------------------------


async def test_stderr_lines_long_unfinished_or_refused_by_their_consumer(tmp_path, expect_log):
    expect_log("spyglass.stdio", "stderr consumer failed")
    t = StdioTransport(script(tmp_path, """
        import sys
        sys.stderr.write("first\\n" + "E" * 100000 + "\\nlast words, no newline")
    """))
    wire = Wire(t)
    logs: list[bytes] = []

    def picky(line: bytes, mono: float) -> None:
        logs.append(line)
        if len(logs) == 1:
            raise ValueError("cannot take the first")

    t.on_log = picky
    async with started(t):
        await until(lambda: wire.closed and len(logs) == 3)
    assert logs == [b"first", b"E" * OVERSIZE_KEEP + "… [100000 bytes in one line, cut]".encode(),
                    b"last words, no newline"]


async def test_failing_frame_and_close_consumers_do_not_stop_the_transport(tmp_path, expect_log):
    expect_log("spyglass.stdio", "frame consumer failed")
    expect_log("spyglass.stdio", "close consumer failed")
    t = StdioTransport(script(tmp_path, """
        import sys
        sys.stdout.write('{"n": 1}\\n{"n": 2}\\n{"n": 3}')  # the last one unterminated at EOF
    """))
    assert not t.authorizing and t.authorized_at is None and not t.mirrors_tool_headers and not t.abort(1)
    frames: list[tuple[bytes, Any]] = []
    closed: list[Any] = []

    def picky(raw: bytes, mono: float, meta: Any = None) -> None:
        frames.append((raw, meta))
        if len(frames) == 1:
            raise ValueError("cannot take the first")

    def closing(c: Any) -> None:
        closed.append(c)
        raise RuntimeError("cannot take the end")

    t.on_frame, t.on_log, t.on_close = picky, lambda line, mono: None, closing
    async with started(t):
        await until(lambda: closed)
    assert frames == [(b'{"n": 1}', None), (b'{"n": 2}', None), (b'{"n": 3}', {"eof": True})]
    assert [(c.reason, c.exit_code) for c in closed] == [("the server exited with code 0", 0)]
    assert t.returncode == 0


# --- a process started before the event loop, handed over --------------------------------------------------


ECHO = """
    import sys
    for line in sys.stdin:
        sys.stdout.write(line)
        sys.stdout.flush()
"""


async def test_a_process_started_without_a_loop_is_taken_over_as_it_is(tmp_path):
    from inspector.config import ServerSpec
    from inspector.transport.factory import open_transport, start_process

    spec = ServerSpec(name="echo", command=script(tmp_path, ECHO))
    proc = start_process(spec)
    assert proc is not None and proc.poll() is None
    t = open_transport(spec, started=proc).transport
    assert isinstance(t, StdioTransport)
    wire = Wire(t)
    async with started(t):
        assert t.pid == proc.pid  # the same process: none was started twice
        await t.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
        await until(lambda: wire.frames)
    assert wire.frames[0][0] == b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert wire.closed and wire.closed[0].expected and proc.returncode is not None


async def test_a_handed_over_process_is_stopped_even_if_never_opened(tmp_path):
    from inspector.config import ServerSpec
    from inspector.transport.factory import open_transport, start_process

    spec = ServerSpec(name="echo", command=script(tmp_path, ECHO))
    proc = start_process(spec)
    assert proc is not None
    t = open_transport(spec, started=proc).transport
    Wire(t)
    await t.close()
    assert proc.returncode is not None and not alive(proc.pid)


def test_a_url_server_has_no_process_to_start_early():
    from inspector.config import ServerSpec
    from inspector.transport.factory import start_process

    assert start_process(ServerSpec(name="u", url="http://127.0.0.1:9/mcp")) is None


def test_a_started_process_nobody_took_over_is_ended_with_its_group(tmp_path):
    from inspector.transport import process

    proc = process.start(script(tmp_path, """
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print(child.pid, flush=True)
        time.sleep(60)
    """))
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    process.stop(proc)
    assert proc.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 5 * SLOWDOWN
    while alive(child):  # the orphan is reparented and reaped by init
        assert time.monotonic() < deadline, "the server's child outlived it"
        time.sleep(0.02)
    process.stop(proc)  # once it is gone, stopping it again does nothing
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        assert pipe is not None
        pipe.close()


def test_an_empty_command_cannot_be_started():
    from inspector.transport import process

    with pytest.raises(ConnectError, match="^no server command given$"):
        process.start([])


def _outside_a_group(tmp_path: Path) -> Any:
    """A server started by someone else, in Spyglass's own process group (no group to signal)."""
    import subprocess

    return subprocess.Popen(script(tmp_path, ECHO), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def test_a_process_without_a_group_of_its_own_is_still_stopped(tmp_path):
    from inspector.transport import process

    proc = _outside_a_group(tmp_path)
    process.stop(proc)
    assert proc.returncode == -signal.SIGKILL
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        assert pipe is not None
        pipe.close()


async def test_a_handed_over_process_whose_pipes_are_gone_is_a_connect_error(tmp_path):
    proc = _outside_a_group(tmp_path)
    assert proc.stdin is not None
    proc.stdin.close()
    t = StdioTransport(["server"], started=proc)
    Wire(t)
    with pytest.raises(ConnectError, match=r"cannot read and write the server's pipes \(ValueError\)"):
        await t.open()
    assert proc.returncode is not None
    await t.close()  # nothing left to do, and no error


async def test_a_handed_over_process_that_ignores_stdin_is_signalled_without_a_group(tmp_path):
    import subprocess

    proc = subprocess.Popen(script(tmp_path, """
        import signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.stdin.close()
        print("ignoring SIGTERM", file=sys.stderr, flush=True)
        time.sleep(60)
    """), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # handed over once it ignores SIGTERM: before that, a SIGTERM on a loaded machine ended it (-15)
    assert proc.stderr is not None and proc.stderr.readline() == b"ignoring SIGTERM\n"
    t = StdioTransport(["server"], started=proc, grace=0.3)
    Wire(t)
    async with started(t):
        pass
    assert proc.returncode == -signal.SIGKILL  # SIGTERM ignored, SIGKILL sent to the process itself


def test_an_exit_after_the_loop_closed_is_dropped_quietly():
    import subprocess

    from inspector.transport import stdio

    proc = subprocess.Popen([PY, "-c", "pass"])
    proc.wait()
    loop = asyncio.new_event_loop()
    done = loop.create_future()
    loop.close()
    stdio._wait_for_exit(proc, loop, done)  # no RuntimeError escapes the waiting thread
    assert not done.done()


async def test_a_read_of_a_flood_is_handed_on_whole_with_the_collector_paused(tmp_path):
    """A read's frames go to `on_frames` together (a flood's 64 KiB read, some 600 notifications, in one call:
    64 at a time cost each layer ten times the calls), with the garbage collector paused while they are handed
    on (their objects die by reference counting; its passes over them found nothing) and back on after."""
    import gc

    t = StdioTransport(script(tmp_path, """
        import os, sys
        os.write(1, b"".join(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d}}\\n' % i
                             for i in range(500)))
        sys.stdin.read()
    """))
    runs: list[tuple[int, bool]] = []
    t.on_frame = lambda raw, mono, meta=None: runs.append((1, gc.isenabled()))
    t.on_frames = lambda frames, mono: runs.append((len(frames), gc.isenabled()))
    t.on_log, t.on_close = (lambda line, mono: None), (lambda c: None)
    assert gc.isenabled()
    async with started(t):
        await until(lambda: sum(n for n, _ in runs) == 500)
    assert gc.isenabled()
    assert max(n for n, _ in runs) > 64
    assert all(not enabled for n, enabled in runs if n >= 16)
