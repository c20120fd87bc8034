"""Start HTTP peer servers on loopback, each on its own free port, and stop them."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from support import EVERYTHING, PY, ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {proc.stderr.read().decode()[-500:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listened on port {port} within {timeout} s")


def _wait_ready(proc: subprocess.Popen, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline().decode()
        if line.startswith("READY "):
            return line.split()[1]
        if not line and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
    raise RuntimeError("server never printed READY")


@contextlib.contextmanager
def _running(cmd: list[str], env: dict | None = None) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})}, cwd=str(ROOT), start_new_session=True)
    try:
        yield proc
    finally:
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
        proc.stderr.close()


def stop_group(proc: subprocess.Popen, sig: int = signal.SIGTERM, wait: float = 10) -> None:
    """End a process's group: `sig`, then SIGKILL if it does not go."""
    for s in (sig, signal.SIGKILL):
        try:
            os.killpg(proc.pid, s)
        except ProcessLookupError:
            break
        try:
            proc.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue


@contextlib.contextmanager
def demo_http(counts: Path, *flags: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """The demo server over HTTP on a free port (its URL), writing what it answered to `counts` when it stops."""
    proc = subprocess.Popen([PY, "-m", "inspector.demo", "--http", "--port", "0", *flags],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "SPYGLASS_DEMO_COUNTS": str(counts), "SPYGLASS_DEMO_LOG": "WARNING"},
                            cwd=str(ROOT), start_new_session=True)
    try:
        for line in iter(proc.stderr.readline, b""):
            found = re.match(r"spyglass-demo listening on (\S+)", line.decode())
            if found:
                break
        else:
            raise AssertionError(f"the demo over HTTP never listened (exit {proc.wait(5)})")
        yield found.group(1), proc
    finally:
        stop_group(proc)
        proc.stderr.close()



@contextlib.contextmanager
def everything(mode: str) -> Iterator[str]:
    """server-everything in `streamableHttp` or `sse` mode; yields its URL."""
    port = free_port()
    with _running(["node", str(EVERYTHING), mode], {"PORT": str(port)}) as proc:
        _wait_port(port, proc)
        yield f"http://127.0.0.1:{port}/{'sse' if mode == 'sse' else 'mcp'}"


@contextlib.contextmanager
def sdk(*flags: str) -> Iterator[str]:
    with _running([PY, str(ROOT / "tests/peers/sdk_server.py"), "--transport", "http", "--port", "0", *flags]) as p:
        yield _wait_ready(p)


@contextlib.contextmanager
def hostile(case: str) -> Iterator[str]:
    with _running([PY, str(ROOT / "tests/hostile/http_server.py"), case]) as p:
        yield _wait_ready(p)


@contextlib.contextmanager
def hostile_auth(case: str) -> Iterator[str]:
    """tests/hostile/auth_server.py: a server whose authorization metadata plants `case`'s address."""
    with _running([PY, str(ROOT / "tests/hostile/auth_server.py"), case]) as p:
        yield _wait_ready(p)


# each address tests/hostile/auth_server.py plants, as the URL policy's refusal names it
REFUSED = {
    "vscode": "a vscode: address",
    "file": "a file: address",
    "unc": "a file: address",
    "javascript": "a javascript: address",
    "custom": "a spyglass-evil: address",
    "http-remote": "an http: address on another machine (evil.example), unencrypted",
}
