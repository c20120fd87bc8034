"""Every hostile case through `spyglass --cli`: the documented outcome, promptly,
no traceback, every malformed frame recorded with its reason."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from support import HOSTILE, PY, ROOT, SLOWDOWN

sys.path.insert(0, str(HOSTILE.parent))
from expectations import EXPECTATIONS


@pytest.mark.parametrize("name", sorted(EXPECTATIONS))
def test_hostile_case(name, tmp_path):
    expect = EXPECTATIONS[name]
    trace = tmp_path / "trace.jsonl"
    started = time.monotonic()
    # (under coverage every process runs slower: the floods most of all)
    proc = subprocess.run([PY, "-m", "inspector", "--cli", "--timeout", f"{5 * SLOWDOWN:g}", "--trace", str(trace),
                           *expect.args,
                           "--", PY, str(HOSTILE), *expect.cases],
                          capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    elapsed = time.monotonic() - started
    output = proc.stdout + proc.stderr
    assert proc.returncode == expect.exit_code, output[-2000:]
    assert "Traceback" not in proc.stderr
    for words in expect.says:
        assert words in output, f"{words!r} not in output: {output[-1500:]}"
    if expect.exit_code not in (0, 5):
        *_, said, envelope = proc.stderr.strip().splitlines()
        assert said.startswith("spyglass: ") and json.loads(envelope)["error"]["code"] == "error"
        assert json.loads(proc.stdout.strip().splitlines()[-1])["error"]["kind"]
    reasons = " | ".join(json.loads(line).get("malformed", "") for line in trace.read_text().splitlines())
    for words in expect.malformed:
        assert words in reasons, f"{words!r} not among malformed reasons: {reasons[:1000]}"
    assert elapsed < 10 * SLOWDOWN, f"took {elapsed:.1f} s"


def test_flood_every_frame_reaches_the_trace(tmp_path):
    trace = tmp_path / "trace.jsonl"
    proc = subprocess.run([PY, "-m", "inspector", "--cli", "--trace", str(trace), "--tool-name", "echo",
                           "--tool-arg", "message=x", "--", PY, str(HOSTILE), "flood", "20000"],
                          capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert proc.returncode == 0
    lines = trace.read_text().splitlines()
    floods = sum(1 for line in lines if "flood " in line and '"in"' in line)
    assert floods == 20000


def test_stderr_flood_every_line_reaches_the_trace(tmp_path):
    trace = tmp_path / "trace.jsonl"
    proc = subprocess.run([PY, "-m", "inspector", "--cli", "--trace", str(trace), "--tool-name", "echo",
                           "--tool-arg", "message=x", "--", PY, str(HOSTILE), "stderr-flood", "100000"],
                          capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert proc.returncode == 0
    err = sum(1 for line in trace.read_text().splitlines() if '"dir": "err"' in line)
    assert err == 100000
