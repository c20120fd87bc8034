"""`spyglass --cli` against a server whose tool schema refers outside itself (tests/hostile/server.py
`schema-refs`): the reference is not followed — no connection reaches the listener, the fake token of a
`file:` reference is never read into the output, a port that never answers holds nothing up — and the user is
told so; the call goes ahead unchecked, as the official CLI sends every call (docs/cli.md). And SIGTERM ends a
run as Ctrl+C does: the server's whole process group first."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
import refs_peers
from refs_peers import SENTENCE
from support import HOSTILE, PY, ROOT, SLOWDOWN


def run_cli(ref: str, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    proc = subprocess.Popen([PY, "-m", "inspector", "--cli", "--timeout", f"{5 * SLOWDOWN:g}", *args,
                             "--", PY, str(HOSTILE), "schema-refs"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=str(ROOT), env={**os.environ, "HOSTILE_REF": ref}, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=20 * SLOWDOWN)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # (before the fix: a fetch with no timeout, which --timeout never bounded)
        out, err = proc.communicate()
        pytest.fail(f"--cli still running after {20 * SLOWDOWN:g} s: {err[-500:]}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), time.monotonic() - started


@pytest.mark.parametrize("kind", ["remote", "file", "stall"])
def test_a_tool_call_never_follows_the_input_schemas_ref(kind, listener, staller, tmp_path):
    ref = refs_peers.hostile_refs(listener, staller, refs_peers.token_file(tmp_path))[kind]
    done, took = run_cli(ref, "--method", "tools/call", "--tool-name", "ref_input", "--tool-args-json",
                         '{"x": "FAKE"}')
    output = done.stdout + done.stderr
    assert listener.connections == 0 and staller.connections == 0
    assert refs_peers.TOKEN not in output
    assert f"refers to {ref.split('#')[0]} {SENTENCE}" in done.stderr, done.stderr
    assert "not validating arguments" in done.stderr
    assert done.returncode == 0, output[-1500:]  # sent unchecked, as the official CLI sends every call
    assert 'called ref_input with' in done.stdout
    assert "Traceback" not in done.stderr
    assert took < 10 * SLOWDOWN
