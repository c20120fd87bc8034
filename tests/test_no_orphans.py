"""No process is left behind: the CLI ends the server's whole process
group on success, on timeout and on Ctrl+C. Checked with psutil."""

from __future__ import annotations

import signal
import subprocess
import time
import uuid

import psutil
import pytest
from support import HOSTILE, PY, ROOT


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


def test_ctrl_c_ends_the_server_group():
    command, tag = tagged_server("no-reply")
    proc = cli("--tool-name", "echo", "--tool-arg", "message=x", "--", *command)
    deadline = time.monotonic() + 20
    while not survivors(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the call is in flight
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert not wait_gone(tag), "processes outlived the CLI after Ctrl+C"
