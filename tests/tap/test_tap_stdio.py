"""`spyglass tap -- COMMAND…`, the stdio pass-through, between a raw host (bytes in, bytes out) and real
servers: the demo server, server-everything, the hostile server and `cat`. Each conversation runs once
straight to the server and once through the tap, with the same script; what the host reads must be the
same bytes, and the session file must hold every frame, in order, with its direction.

Every script waits for each answer before it sends the next request, and uses requests whose answers
do not vary from run to run, so the two byte streams can be compared whole. Only the demo server's
stderr is normalised (each of its log lines starts with the time).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from support import HOSTILE, PY, ROOT, demo_cmd, everything_cmd, hostile_cmd

from inspector.cli import tap as tap_cli
from inspector.recording.files import open_session
from inspector.secrets import MASK
from inspector.tap import stdio
from inspector.tap.record import TapRecorder

NO_ANSWER = object()  # a script step the server does not answer (a notification)
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw-host", "version": "1"}}}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def request(rid: int, method: str, params: dict[str, Any] | None = None) -> tuple[bytes, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return line(message), rid


HANDSHAKE = [(line(INIT), 1), (line({"jsonrpc": "2.0", "method": "notifications/initialized"}), NO_ANSWER)]


@pytest.fixture(autouse=True)
def no_window(tmp_path, monkeypatch):
    """No test reaches a real window or writes into the user's sessions folder. The socket's path is
    kept short: a Unix socket's is limited to about 100 bytes."""
    with tempfile.TemporaryDirectory(prefix="sg-tap-") as short:
        folder = Path(short) if len(str(tmp_path)) > 80 else tmp_path
        monkeypatch.setenv("SPYGLASS_TAP_SOCKET", str(folder / "window.sock"))
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
        yield folder / "window.sock"


def tapped(session: Path | None, *command: str, options: tuple[str, ...] = ()) -> list[str]:
    where = ("--session", str(session)) if session is not None else ()
    return [PY, "-m", "inspector", "tap", *where, *options, "--", *command]


class Host:
    """A host's end of a stdio conversation, in bytes: what it writes, and all that comes back, read by
    threads of its own so neither side ever waits on the other."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=str(ROOT), env=env, start_new_session=True)
        self.out = bytearray()
        self.err = bytearray()
        self.answers: list[dict[str, Any]] = []  # every response read so far, in order
        self.sent_at: list[int] = []  # len(self.out) when each step was sent
        self._parsed = 0
        self._cond = threading.Condition()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._readers = [threading.Thread(target=self._read, args=(self.proc.stdout.fileno(), self.out), daemon=True),
                         threading.Thread(target=self._read, args=(self.proc.stderr.fileno(), self.err), daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read(self, fd: int, into: bytearray) -> None:
        while data := os.read(fd, 65536):
            with self._cond:
                into += data
                if into is self.out:
                    self._parse()
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def _parse(self) -> None:
        end = self.out.rfind(b"\n")
        if end < self._parsed:
            return
        for text in bytes(self.out[self._parsed:end]).split(b"\n"):
            try:
                message = json.loads(text)
            except ValueError:
                continue
            if isinstance(message, dict) and ("result" in message or "error" in message):
                self.answers.append(message)
        self._parsed = end + 1

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self._cond:
            self.sent_at.append(len(self.out))
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def count(self, rid: Any) -> int:
        return sum(1 for a in self.answers if a.get("id") == rid)

    def ask(self, data: bytes, rid: Any, timeout: float = 20.0) -> None:
        """Send one step; unless it is NO_ANSWER, wait for one more answer with id `rid`."""
        with self._cond:
            before = self.count(rid)
        self.send(data)
        if rid is NO_ANSWER:
            return
        self.wait(lambda: self.count(rid) > before, timeout, f"no answer to id {rid!r}")

    def wait(self, condition: Any, timeout: float, what: str) -> None:
        with self._cond:
            if not self._cond.wait_for(condition, timeout):
                raise AssertionError(f"{what} within {timeout} s; stderr: {bytes(self.err[-2000:])!r}")

    def finish(self, timeout: float = 20.0) -> int:
        """Close stdin (what a host does when it is done), wait for the end, read what is left."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout)
        for reader in self._readers:
            reader.join(timeout)
        return code

    def end(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        for reader in self._readers:
            reader.join(5)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


@contextlib.contextmanager
def host(command: list[str], env: dict[str, str] | None = None) -> Iterator[Host]:
    h = Host(command, env)
    try:
        yield h
    finally:
        h.end()


def converse(command: list[str], script: list[tuple[bytes, Any]]) -> Host:
    with host(command) as h:
        for data, rid in script:
            h.ask(data, rid)
        h.code = h.finish()  # type: ignore[attr-defined]
    return h


def frames(path: Path) -> list[tuple[str, bytes]]:
    opened = open_session(path)
    assert opened.problems == [], opened.problems
    store = opened.store
    return [(store.direction(n), store.raw(n)) for n in range(len(store))]


def lines_of(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return parts


def expected_order(h: Host, script: list[tuple[bytes, Any]]) -> list[tuple[str, bytes]]:
    """The frames a sequential conversation makes, in order: each step's request, then what the server
    wrote before the host sent the next one."""
    out: list[tuple[str, bytes]] = []
    cuts = [*h.sent_at[1:], len(h.out)]
    start = 0
    for (data, _rid), cut in zip(script, cuts, strict=True):
        out += [("out", x) for x in lines_of(data)]
        out += [("in", x) for x in lines_of(bytes(h.out[start:cut]))]
        start = cut
    return out


def check_session(path: Path, h: Host, script: list[tuple[bytes, Any]]) -> list[tuple[str, bytes]]:
    got = frames(path)
    assert [f for f in got if f[0] != "err"] == expected_order(h, script)
    assert [data for d, data in got if d == "err"] == lines_of(bytes(h.err))
    return got


DEMO_SCRIPT = [*HANDSHAKE, request(2, "tools/list"), request(3, "tools/call", {"name": "echo", "arguments": {
    "message": "héllo \u202e wörld"}}), request(4, "prompts/list"), request(5, "resources/list"), request(6, "ping"),
    request(7, "no/such/method"), (b"this is not json\n", None), (b'{"jsonrpc":"2.0","id":8,"method":"ping"}\r\n', 8)]


def test_the_demo_server_answers_the_same_bytes_through_the_tap(tmp_path):
    direct = converse(demo_cmd(), DEMO_SCRIPT)
    session = tmp_path / "demo.mcpsession"
    through = converse(tapped(session, *demo_cmd()), DEMO_SCRIPT)
    assert through.out == direct.out and len(direct.answers) == 9
    stamp = re.compile(rb"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ", re.MULTILINE)
    assert stamp.sub(b"", through.err) == stamp.sub(b"", direct.err)
    assert b"ready on stdio" in through.err
    assert through.code == direct.code == 0
    got = check_session(session, through, DEMO_SCRIPT)
    assert ("out", b'{"jsonrpc":"2.0","id":8,"method":"ping"}\r') in got  # the line break kept as sent
    header = open_session(session).header
    assert header["servers"][0]["definition"] == {"name": os.path.basename(PY), "transport": "stdio",
                                                  "command": demo_cmd()}
    assert header["servers"][0]["tapped"] is True


def test_server_everything_answers_the_same_bytes_through_the_tap(tmp_path):
    script = [*HANDSHAKE, request(2, "tools/list"), request(3, "tools/call", {"name": "echo", "arguments": {
        "message": "through the tap"}}), request(4, "prompts/list"), request(5, "ping")]
    direct = converse(everything_cmd(), script)
    session = tmp_path / "everything.mcpsession"
    through = converse(tapped(session, *everything_cmd()), script)
    assert through.out == direct.out and len(direct.answers) == 5
    assert through.err == direct.err
    assert through.code == direct.code
    check_session(session, through, script)


def test_malformed_and_oversized_lines_pass_both_ways_unchanged(tmp_path):
    """The hostile server's junk (a line that is not UTF-8, a blank one, a batch, a 3 MB reply) and the
    host's (not JSON, not UTF-8, 2 MB without a line break until the end) go through as they are."""
    script = [*HANDSHAKE, (b"\xff\xfe not utf-8 \x00\n", None), (b"x" * (2 * 1024 * 1024) + b"\n", None),
              (b"[]\n", None), request(2, "tools/call", {"name": "echo", "arguments": {"message": "big"}})]
    cmd = hostile_cmd("noise", "big-reply=3")
    direct = converse(cmd, script)
    session = tmp_path / "hostile.mcpsession"
    through = converse(tapped(session, *cmd), script)
    assert len(direct.out) > 3 * 1024 * 1024 and b"\xff\xfe garbage\n" in direct.out
    assert through.out == direct.out
    got = check_session(session, through, script)
    assert ("in", b"\xff\xfe garbage") in got and ("in", b"") in got
    assert ("out", b"x" * (2 * 1024 * 1024)) in got
    store = open_session(session).store
    flagged = {store.raw(n) for n in range(len(store)) if store.malformed(n)}
    assert {b"\xff\xfe not utf-8 \x00", b"INFO starting up", b"\xff\xfe garbage"} <= flagged


def test_arbitrary_bytes_through_a_server_that_writes_while_it_reads(tmp_path):
    """`cat` writes each chunk back as it reads it: 2 MB sent in one go (far more than the pipes between
    hold) would deadlock a tap that pumped both directions from one thread."""
    data = os.urandom(1024 * 1024) + b"a\r\nb\n\n\x00\r" + bytes(range(256)) * 4096
    session = tmp_path / "cat.mcpsession"
    with host(tapped(session, "cat")) as h:
        h.send(data)
        h.wait(lambda: len(h.out) >= len(data), 60, "cat's echo")
        assert h.finish() == 0
    assert h.out == data
    got = frames(session)
    assert b"\n".join(d for direction, d in got if direction == "out") == data
    assert b"\n".join(d for direction, d in got if direction == "in") == data
    assert open_session(session).header["servers"][0]["name"] == "cat"


def test_secrets_are_masked_in_the_session_but_not_on_the_wire(tmp_path):
    sent = line({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"api_key": "sekrit-123", "note": "kept"}})
    session = tmp_path / "secret.mcpsession"
    with host(tapped(session, "cat")) as h:
        h.send(sent)
        h.wait(lambda: len(h.out) >= len(sent), 20, "cat's echo")
        assert h.finish() == 0
    assert h.out == sent
    got = frames(session)
    assert all(b"sekrit" not in d for _, d in got)
    assert [json.loads(d)["params"] for direction, d in got if direction in ("in", "out")] == [
        {"api_key": MASK, "note": "kept"}] * 2


def test_stderr_and_the_exit_status_pass_through(tmp_path):
    cmd = hostile_cmd("die-at-start")
    direct = subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL, timeout=30)
    session = tmp_path / "dies.mcpsession"
    through = subprocess.run(tapped(session, *cmd), capture_output=True, stdin=subprocess.DEVNULL, timeout=30,
                             cwd=str(ROOT))
    assert direct.returncode == through.returncode == 3
    assert through.stderr == direct.stderr and b"fatal: could not open database" in through.stderr
    assert through.stdout == b""
    assert [d for _, d in frames(session)] == lines_of(direct.stderr)


def test_a_server_killed_by_a_signal_ends_the_tap_with_128_plus_n(tmp_path):
    run = subprocess.run(tapped(tmp_path / "s.mcpsession", "sh", "-c", "kill -USR1 $$"), capture_output=True,
                         stdin=subprocess.DEVNULL, timeout=30, cwd=str(ROOT))
    assert run.returncode == 128 + signal.SIGUSR1, run.stderr


def test_a_command_that_cannot_start_is_one_line_and_exit_4(tmp_path):
    session = tmp_path / "none.mcpsession"
    run = subprocess.run(tapped(session, "no-such-server-anywhere", "--flag"), capture_output=True,
                         stdin=subprocess.DEVNULL, timeout=30, cwd=str(ROOT))
    assert run.returncode == 4
    assert run.stderr == b"spyglass tap: command not found: no-such-server-anywhere (not on PATH)\n"
    assert run.stdout == b""
    assert [d for _, d in frames(session)] == [b"spyglass tap: command not found: no-such-server-anywhere "
                                               b"(not on PATH)"]


def tagged(*command: str) -> tuple[list[str], str]:
    """`command` run by a shell that first starts a child of its own (a sleeper, the kind a server's
    wrapper leaves behind); both carry a tag in their environment for psutil to find."""
    tag = f"spyglass-tap-{uuid.uuid4().hex[:8]}"
    script = f"{PY} -c 'import time; time.sleep(300)' & exec {' '.join(command)}"
    return ["env", f"SPYGLASS_TAP_TAG={tag}", "sh", "-c", script], tag


def survivors(tag: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["status"]):
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            if proc.info["status"] != psutil.STATUS_ZOMBIE and proc.environ().get("SPYGLASS_TAP_TAG") == tag:
                found.append(proc)
    return found


def wait_gone(tag: str, seconds: float = 5.0) -> list[psutil.Process]:
    deadline = time.monotonic() + seconds
    while (left := survivors(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for proc in left:  # not left behind for the next test, whatever this one says
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    return left


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_to_the_tap_ends_the_servers_whole_group(tmp_path, signum):
    cmd, tag = tagged(PY, str(HOSTILE))
    session = tmp_path / "signal.mcpsession"
    with host(tapped(session, *cmd)) as h:
        h.ask(*HANDSHAKE[0])
        assert len(survivors(tag)) == 2
        h.proc.send_signal(signum)
        assert h.proc.wait(10) == 128 + signum
    assert wait_gone(tag) == []
    assert frames(session)[0][0] == "out"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_tap_killed_outright_takes_its_server_with_it(tmp_path):
    """SIGKILL cannot be caught: the kernel ends the server (here one that ignores its stdin closing)."""
    tag = f"spyglass-tap-{uuid.uuid4().hex[:8]}"
    cmd = ["env", f"SPYGLASS_TAP_TAG={tag}", PY, "-c", "import time; print('up', flush=True); time.sleep(300)"]
    with host(tapped(tmp_path / "k.mcpsession", *cmd)) as h:
        h.wait(lambda: b"up\n" in h.out, 20, "the server's first line")
        h.proc.kill()
        h.proc.wait(10)
    assert wait_gone(tag) == []


def test_closing_stdin_ends_the_server_and_the_tap(tmp_path):
    session = tmp_path / "eof.mcpsession"
    with host(tapped(session, *demo_cmd())) as h:
        h.ask(*HANDSHAKE[0])
        server = psutil.Process(h.proc.pid).children()
        assert len(server) == 1
        assert h.finish() == 0
    assert not server[0].is_running() or server[0].status() == psutil.STATUS_ZOMBIE
    opened = open_session(session)
    assert opened.problems == [] and opened.header["servers"][0]["host"] is None


def test_a_server_that_closes_stdout_is_waited_for(tmp_path):
    """The hostile server closes stdout after initialize and reads on: the tap stays until it exits,
    which it does when the host closes stdin."""
    with host(tapped(tmp_path / "c.mcpsession", *hostile_cmd("close-stdout"))) as h:
        h.ask(*HANDSHAKE[0])
        h.wait(lambda: not h._readers[0].is_alive(), 10, "stdout closed")
        time.sleep(0.3)
        assert h.proc.poll() is None
        assert h.finish() == 0


def test_a_host_that_stops_reading_does_not_stop_the_server(tmp_path):
    """The host closes its end of the tap's stdout: the tap keeps reading the server (which would block
    on a full pipe otherwise), keeps recording, and ends with it."""
    session = tmp_path / "gone.mcpsession"
    cmd = ["sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); done; echo done >&2"]
    proc = subprocess.Popen(tapped(session, *cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=str(ROOT))
    proc.stdout.close()
    try:
        err = proc.stderr.read()
        assert proc.wait(20) == 0
    finally:
        proc.stdin.close()
        proc.stderr.close()
    assert err == b"done\n"
    assert [d for direction, d in frames(session) if direction == "in"] == [b"line %d" % i for i in range(3000)]


def test_without_a_window_or_a_session_file_the_pipe_still_works(tmp_path):
    with host(tapped(None, *demo_cmd(), options=("--no-session", "--no-live"))) as h:
        h.ask(*HANDSHAKE[0])
        h.ask(*request(2, "ping"))
        assert h.finish() == 0
    assert not (tmp_path / "data").exists()


def test_the_default_session_goes_to_the_sessions_folder(tmp_path):
    with host(tapped(None, *demo_cmd(), options=("--name", "my demo/server"))) as h:
        h.ask(*HANDSHAKE[0])
        assert h.finish() == 0
    made = list((tmp_path / "data" / "Spyglass" / "sessions").glob("tap-my-demo-server-*.mcpsession"))
    assert len(made) == 1
    header = open_session(made[0]).header
    assert header["servers"][0]["id"] == header["servers"][0]["name"] == "my demo/server"


def test_env_and_cwd_given_to_the_tap_reach_the_server_and_the_session(tmp_path):
    session = tmp_path / "env.mcpsession"
    cmd = [PY, "-c", "import os; e = os.environ; print(e['T_API_KEY'], e['T_MODE'], os.getcwd(), end='')"]
    options = ("-e", "T_API_KEY=hush", "-e", "T_MODE=fast", "--cwd", str(tmp_path))
    run = subprocess.run(tapped(session, *cmd, options=options), capture_output=True, stdin=subprocess.DEVNULL,
                         timeout=30, cwd=str(ROOT))
    assert run.stdout == f"hush fast {tmp_path}".encode(), run.stderr
    definition = open_session(session).header["servers"][0]["definition"]
    assert definition["cwd"] == str(tmp_path) and definition["env"] == {"T_API_KEY": MASK, "T_MODE": "fast"}


def test_a_tapped_servers_env_secrets_are_masked_wherever_they_come_back(tmp_path):
    password, token = "Pg-Pa55word-7731", "Zq8Lr2Vx9Kp4Tn7Wb3Hs6Jd1Fm5Gc0Ya8Ue2Qi"
    session = tmp_path / "env.mcpsession"
    cmd = [PY, "-c", "import json, os, sys; e = os.environ; "
           "print(json.dumps({'jsonrpc': '2.0', 'method': 'x', 'params': {'env': [e['DATABASE_URL'], e['SESSION']]}}));"
           "print('connecting to', e['DATABASE_URL'], file=sys.stderr)"]
    options = ("-e", f"DATABASE_URL=postgres://admin:{password}@db/prod", "-e", f"SESSION={token}")
    run = subprocess.run(tapped(session, *cmd, options=options), capture_output=True, stdin=subprocess.DEVNULL,
                         timeout=30, cwd=str(ROOT))
    assert token.encode() in run.stdout and password.encode() in run.stderr  # the wire is the server's
    import gzip

    text = gzip.open(session, "rt").read()
    assert password not in text and token not in text
    opened = open_session(session)
    header = json.loads(text.splitlines()[0])
    assert header["masked"] is True and header["masked_values"] == {"entropy": 1, "url-userinfo": 1}
    end = json.loads(text.splitlines()[-1])
    assert end["masked_values"] == {"entropy": 1, "url-userinfo": 1}  # the same secrets came back: no more
    assert opened.header["masked_values"] == end["masked_values"]
    assert [d for direction, d in frames(session) if direction == "err"] == [
        f"connecting to postgres://admin:{MASK}@db/prod".encode()]


class FakeWindow:
    """A window's tap socket: accepts taps and, if `reads`, keeps every line each one sends."""

    def __init__(self, path: Path, reads: bool = True) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen()
        self.reads = reads
        self.data = bytearray()
        self.peers: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            conn, _ = self.sock.accept()
            self.peers.append(conn)
            if not self.reads:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                return
            while chunk := conn.recv(65536):
                self.data += chunk

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in lines_of(bytes(self.data))]

    def close(self) -> None:
        self.sock.close()
        for peer in self.peers:
            peer.close()
        self.thread.join(5)


def test_a_window_gets_the_hello_and_every_frame_live(tmp_path, no_window):
    window = FakeWindow(no_window)
    session = tmp_path / "live.mcpsession"
    script = [*HANDSHAKE, request(2, "tools/list"), request(3, "ping")]
    try:
        h = converse(tapped(session, *demo_cmd()), script)
        window.thread.join(10)
    finally:
        window.close()
    hello, *sent, end = window.lines()
    assert hello["tap"] == 1 and hello["session"] == str(session) and hello["server"] == os.path.basename(PY)
    assert hello["header"]["servers"][0]["tapped"] is True
    assert end == {"end": True, "frames": len(frames(session))}
    recorded = frames(session)
    live = [(x["dir"], x["data"].encode()) for x in sent]
    assert live == recorded[len(recorded) - len(live):]  # what came before the hello is in the file
    assert hello["frames"] + len(live) == len(recorded)
    assert [f for f in recorded if f[0] != "err"] == expected_order(h, script)


def test_a_window_that_never_reads_does_not_hold_up_the_pipe(tmp_path, no_window):
    """A flood of 50,000 notifications, a window that accepts the tap and reads nothing: the flood
    comes through whole, the file keeps every frame, and says the live feed skipped some."""
    window = FakeWindow(no_window, reads=False)
    session = tmp_path / "flood.mcpsession"
    script = [*HANDSHAKE, request(2, "tools/call", {"name": "echo", "arguments": {"message": "after"}})]
    try:
        h = converse(tapped(session, *hostile_cmd("flood=50000")), script)
    finally:
        window.close()
    assert h.code == 0 and h.out.count(b'"notifications/message"') == 50000
    got = frames(session)
    assert sum(1 for d, data in got if d == "in" and b"notifications/message" in data) == 50000
    said = [data for d, data in got
            if d == "err" and data.startswith(b"spyglass tap: the live feed to the window skipped")]
    assert len(said) == 1 and b"this file has every one" in said[0], said


# ---------------------------------------------------------------------------- in-process: StdioTap itself
def test_a_server_that_ignores_the_signal_is_killed_after_the_grace(tmp_path, monkeypatch):
    monkeypatch.setattr(stdio, "GRACE_S", 0.3)
    stdin_r, stdin_w = os.pipe()
    out_r, out_w = os.pipe()
    ignore = "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); " \
             "time.sleep(60)"
    tap = stdio.StdioTap([PY, "-c", ignore], stdin=stdin_r, stdout=out_w, stderr=out_w)
    recorder = TapRecorder(tmp_path / "grace.mcpsession", "ignorer", {"name": "ignorer"}, live=False)
    up = threading.Event()

    def host_side() -> None:
        seen = b""
        while not seen.endswith(b"\n"):
            seen += os.read(out_r, 100)
        up.set()
        tap.forward(signal.SIGTERM)

    thread = threading.Thread(target=host_side)
    thread.start()
    started = time.monotonic()
    try:
        assert tap.run(recorder) == 128 + signal.SIGKILL
    finally:
        recorder.close()
        thread.join(5)
        for fd in (stdin_w, stdin_r, out_w, out_r):  # the host's end first: the pump reading it sees the end
            os.close(fd)
    assert up.is_set() and time.monotonic() - started < 10
    assert [d for _, d in frames(tmp_path / "grace.mcpsession")] == [b"up"]


def test_exit_status_of_a_return_code():
    assert [stdio.exit_status(c) for c in (0, 3, 255, -9, -15)] == [0, 3, 255, 137, 143]


# ---------------------------------------------------------------------------- the command line
@pytest.mark.parametrize("argv, says", [
    ([], "no server given"),
    (["--session", "a", "--no-session", "--", "x"], "not both"),
    (["--", "http://example.com/mcp"], "--listen"),
    (["-e", "NOPE", "--", "x"], "KEY=VALUE"),
    (["word", "--", "x"], "unexpected arguments before --"),
    (["--allow-remote", "--", "x"], "goes with --listen"),
    (["--insecure", "--", "x"], "goes with --listen"),
    (["--listen", "127.0.0.1:8080"], "one URL"),
    (["--listen", "127.0.0.1:8080", "ftp://x"], "http:// or https://"),
    (["--listen", "127.0.0.1:8080", "http://x", "--", "cmd"], "no command"),
    (["--listen", "127.0.0.1:99999", "http://x"], "HOST:PORT"),
    (["--listen", ":8080", "http://x"], "expected HOST:PORT"),
    (["--listen", "0.0.0.0:8080", "http://x"], "--allow-remote"),
    (["--listen", "192.168.1.7:8080", "http://x"], "--allow-remote"),
    (["--listen", "127.0.0.1:8080", "-e", "A=1", "http://x"], "not a URL"),
    (["--bogus", "--", "x"], "unrecognized arguments"),
])
def test_usage_errors_are_one_line_and_exit_1(argv, says, capsys):
    assert tap_cli.main(["tap", *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("spyglass tap: ") and says in err and err.count("\n") == 1


@pytest.mark.parametrize("address, host, port", [
    ("127.0.0.1:0", "127.0.0.1", 0), ("localhost:8080", "localhost", 8080), ("[::1]:9", "::1", 9),
    ("127.8.9.10:65535", "127.8.9.10", 65535), ("8808", "127.0.0.1", 8808)])
def test_loopback_listen_addresses(address, host, port):
    args = tap_cli.parse(["--listen", address, "https://mcp.example.com/mcp"])
    assert (args.host, args.port, args.url) == (host, port, "https://mcp.example.com/mcp")
    assert tap_cli.default_name(args) == "mcp.example.com"
    assert tap_cli.definition(args, "x") == {"name": "x", "transport": "http", "url": "https://mcp.example.com/mcp"}


def test_a_remote_listen_address_with_allow_remote():
    args = tap_cli.parse(["--listen", "0.0.0.0:8080", "--allow-remote", "http://10.0.0.2/mcp"])
    assert (args.host, args.port) == ("0.0.0.0", 8080)


def test_listen_hands_the_remote_server_to_the_http_tap(tmp_path):
    """The command line's side of `--listen`: the proxy is started on the address given, says where it
    listens, forwards to the URL, records, and ends on SIGINT with 0."""
    answer = b'{"jsonrpc":"2.0","id":1,"result":{}}'

    class Remote(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    remote = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Remote)
    threading.Thread(target=remote.serve_forever, daemon=True).start()
    session = tmp_path / "remote.mcpsession"
    url = f"http://127.0.0.1:{remote.server_address[1]}/mcp"
    proc = subprocess.Popen([PY, "-m", "inspector", "tap", "--listen", "127.0.0.1:0", "--session", str(session), url],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(ROOT))
    try:
        said = proc.stderr.readline().decode()
        assert said.startswith("spyglass tap: listening on http://127.0.0.1:") and url in said, said
        port = int(said.split("127.0.0.1:")[1].split("/")[0])
        sent = line({"jsonrpc": "2.0", "id": 1, "method": "ping"}).strip()
        posted = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=sent, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        with urllib.request.urlopen(posted, timeout=20) as reply:
            assert reply.read() == answer
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stderr.close()
        remote.shutdown()
        remote.server_close()
    opened = open_session(session)
    assert opened.header["servers"][0]["definition"] == {"name": "127.0.0.1", "transport": "http", "url": url}
    assert any(opened.store.direction(n) == "out" and opened.store.raw(n) == sent for n in range(len(opened.store)))


def test_the_tap_never_loads_qt_asyncio_or_the_server_flags():
    code = ("import sys; from inspector.__main__ import main; "
            "code = main(['tap', '--no-session', '--no-live', '--', 'true']); "
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'asyncio', 'httpx', 'jsonschema') "
            "or m in ('inspector.cli.common', 'inspector.transport.base', 'dataclasses')); "
            "print(code, heavy, file=sys.stderr)")  # the tap has closed stdout: the server's ended
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}  # coverage loads its own
    run = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=30, cwd=str(ROOT),
                         stdin=subprocess.DEVNULL, env=env)
    assert run.stderr.strip().splitlines()[-1] == "0 []", run.stderr
