"""A server started sandboxed (`ServerSpec.sandbox`, `--sandbox`) cannot reach a listener on the host's loopback,
cannot read a file in the home folder and cannot write outside its own temporary folder; the same server
unsandboxed can, so the test can fail. Linux with bwrap or unshare (CI has unshare): no skip there."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest
from support import PY, ROOT, SLOWDOWN

from inspector.config import ServerSpec
from inspector.session import ServerSession, SessionOptions
from inspector.transport.sandbox import SandboxUnavailable, confine, tool

TRUST = [PY, str(ROOT / "tests" / "trust_server.py")]
CAN_SANDBOX = tool() is not None
needs_sandbox = pytest.mark.skipif(not CAN_SANDBOX and not sys.platform.startswith("linux"),
                                   reason="the sandbox is tested on Linux (bwrap or unshare)")


async def tried(sandbox: bool, port: int, secret: str, written: str) -> dict[str, str]:
    session = ServerSession(ServerSpec(name="trust", command=TRUST, sandbox=sandbox),
                            options=SessionOptions(timeout=30 * SLOWDOWN, load_lists=False, listen=False,
                                                   heartbeat_s=None))
    out = {}
    try:
        await session.open()
        client = session.need_client()
        for name, args in (("connect", {"port": port}), ("read_file", {"path": secret}),
                           ("write_file", {"path": written, "text": "x"})):
            result = await client.call_tool(name, args, task=False)
            out[name] = result["content"][0]["text"]
        out["stderr"] = "\n".join(e.text for e in session.log if e.level == "stderr")
    finally:
        await session.close()
    return out


@needs_sandbox
async def test_a_sandboxed_server_reaches_no_socket_no_home_file_and_writes_nowhere_lasting(tmp_path, monkeypatch):
    assert CAN_SANDBOX, "Linux CI has util-linux unshare: the sandbox must be tested here"
    home = tmp_path / "home"
    home.mkdir()
    secret = home / "secret.txt"
    secret.write_text("the secret", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    accepted = asyncio.Event()

    def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set()
        writer.close()

    listener = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        free = await tried(False, port, str(secret), str(tmp_path / "free.txt"))
        assert free["connect"] == "connected" and accepted.is_set()
        assert free["read_file"] == "the secret" and (tmp_path / "free.txt").read_text() == "x"
        accepted.clear()
        boxed = await tried(True, port, str(secret), str(tmp_path / "boxed.txt"))
    finally:
        listener.close()
        await listener.wait_closed()
    assert boxed["connect"].startswith("cannot connect:") and not accepted.is_set(), boxed
    assert boxed["read_file"].startswith("cannot read:") and "the secret" not in boxed["read_file"], boxed
    assert not (tmp_path / "boxed.txt").exists()  # written to the sandbox's own /tmp, gone with it
    assert "spyglass sandbox" in boxed["stderr"] and "no network" in boxed["stderr"]


def test_what_cannot_be_sandboxed_is_said_plainly(tmp_path, monkeypatch):
    with pytest.raises(SandboxUnavailable, match="on this system \\(win32\\)"):
        confine(TRUST, platform="win32")
    if CAN_SANDBOX:
        monkeypatch.setenv("HOME", str(tmp_path))
        inside = tmp_path / "server"
        inside.write_text("#!/bin/sh\n", encoding="utf-8")
        with pytest.raises(SandboxUnavailable, match="inside the home folder"):
            confine([str(inside)])
        monkeypatch.setenv("HOME", str(ROOT))
        with pytest.raises(SandboxUnavailable, match="inside /tmp, which the sandbox replaces"):
            confine(["/tmp/spyglass-sandboxed-server"])  # (a venv made in /tmp: it was "exec: not found", 127)
    proc = subprocess.run([PY, "-m", "inspector", "--cli", "--sandbox", "http://127.0.0.1:9/mcp", "--method",
                           "tools/list"], capture_output=True, text=True, timeout=60 * SLOWDOWN,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode != 0 and "not a URL" in proc.stderr and "Traceback" not in proc.stderr


@needs_sandbox
def test_a_sandboxed_server_cannot_reach_the_local_sockets_of_the_runtime_folder(tmp_path, monkeypatch):
    # A read-only file system does not stop connect() on a Unix socket: the session bus, the keyring's and
    # ssh-agent's sockets, Docker's, and Spyglass's own tap socket live in /run and $XDG_RUNTIME_DIR, and a
    # sandboxed server reached them (the test's listener accepted it before /run and the runtime folder were hidden).
    import socket
    import threading

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    runtime = ROOT / "test-artifacts" / f"rt-{os.getpid()}"  # outside /tmp and the home folder, as /run/user/N is
    runtime.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    path = runtime / "bus"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(4)
    accepted: list[bytes] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(conn.recv(16))
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    code = ("import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1]); s.sendall(b'in')\n"
            " print('connected')\nexcept OSError as e:\n print('refused', e)")
    try:
        free = subprocess.run([PY, "-c", code, str(path)], capture_output=True, text=True, timeout=30 * SLOWDOWN)
        assert free.stdout.startswith("connected")  # the listener is reachable: the test can fail
        confined = confine([PY, "-c", code, str(path)])
        boxed = subprocess.run(confined.command, env={**os.environ, **confined.env}, cwd=confined.cwd,
                               capture_output=True, text=True, timeout=30 * SLOWDOWN)
        assert boxed.stdout.startswith("refused"), (boxed.stdout, boxed.stderr)
        assert "spyglass sandbox" in boxed.stderr and "/run" in boxed.stderr
    finally:
        listener.close()
        path.unlink()
        runtime.rmdir()
    assert accepted == [b"in"]  # only the unconfined run got through


@needs_sandbox
def test_a_sandboxed_server_sees_and_signals_no_process_of_yours(tmp_path, monkeypatch):
    # (it could: the same user, the same process ids; a server could stop or kill the window, or any of your
    # programs, by their process ids; bwrap had a PID namespace of its own, unshare did not)
    monkeypatch.setenv("HOME", str(tmp_path))
    code = ("import os,sys\ntry:\n os.kill(int(sys.argv[1]), 0); print('reached')\n"
            "except ProcessLookupError:\n print('no such process')")
    confined = confine([PY, "-c", code, str(os.getpid())])
    boxed = subprocess.run(confined.command, env={**os.environ, **confined.env}, cwd=confined.cwd,
                           capture_output=True, text=True, timeout=30 * SLOWDOWN)
    assert boxed.stdout.strip() == "no such process", (boxed.stdout, boxed.stderr)
