"""No process is left behind: the CLI ends the server's whole process
group on success, on timeout and on Ctrl+C. Checked with psutil."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid

import psutil
import pytest
from support import HOSTILE, PY, ROOT, SLOWDOWN


def tagged_server(*cases: str) -> tuple[list[str], str]:
    """A server that starts a child of its own (a sleeping grandchild); both carry
    a tag in their environment so psutil can find them."""
    tag = f"spyglass-orphan-{uuid.uuid4().hex[:8]}"
    script = f"{PY} -c 'import time; time.sleep(300)' & exec {PY} {HOSTILE} {' '.join(cases)}"
    return ["env", f"SPYGLASS_ORPHAN_TAG={tag}", "sh", "-c", script], tag


def survivors(tag: str) -> list[str]:
    found = []
    for proc in psutil.process_iter(["pid", "name", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if proc.environ().get("SPYGLASS_ORPHAN_TAG") == tag:
                found.append(f"{proc.info['pid']}: {proc.info['name']}")
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return found


def wait_gone(tag: str, seconds: float = 5.0) -> list[str]:
    deadline = time.monotonic() + seconds
    left = survivors(tag)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = survivors(tag)
    return left


def cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen([PY, "-m", "inspector", "--cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=str(ROOT), text=True)


@pytest.mark.parametrize("case, args, code", [
    ((), ("--tool-name", "echo", "--tool-arg", "message=x"), 0),
    (("no-reply",), ("--timeout", "1", "--tool-name", "echo", "--tool-arg", "message=x"), 1),  # a timeout
    (("exit-during-call",), ("--tool-name", "echo", "--tool-arg", "message=x"), 1),  # the server exited
])
def test_cli_leaves_no_process(case, args, code):
    command, tag = tagged_server(*case)
    proc = cli(*args, "--", *command)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert not wait_gone(tag), "processes outlived the CLI"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_and_sigterm_end_the_server_group(sig, tmp_path):
    """Either ends --cli with 130, the server's group first; SIGTERM also when another handler was there first
    (coverage's, in CI, killed the process on the spot and left the server running)."""
    command, tag = tagged_server("no-reply")
    seen = tmp_path / "seen.txt"  # what the server was sent (tests/hostile/server.py writes it)
    proc = subprocess.Popen([PY, "-m", "inspector", "--cli", "--tool-name", "echo", "--tool-arg", "message=x", "--",
                             *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT), text=True,
                            env=dict(os.environ, HOSTILE_SEEN=str(seen)))
    deadline = time.monotonic() + 20
    while not (seen.exists() and "tools/call" in seen.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)  # the call is in flight: the server has it and will never answer
    assert survivors(tag) and "tools/call" in seen.read_text()
    sent = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 5 * SLOWDOWN
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert not wait_gone(tag), f"processes outlived the CLI after {sig.name}"
