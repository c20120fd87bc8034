"""Locust runs the MCP user (inspector/loadtest/locust_user.py) against the demo server over HTTP: one master and two
workers on loopback, headless, for a few seconds, in both protocol eras; what Locust's CSV files say is held against
what the demo server says it answered (SPYGLASS_DEMO_COUNTS).

Locust runs in its own processes only: its gevent patches the process that imports it, so this one never does.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from http_peers import demo_http, free_port, stop_group
from support import PY

from inspector.loadtest import Scenario, Step, render
from inspector.loadtest.locust_stats import read

USERS = 4
RUN_S = 3
STEPS = (
    Step("echo", "tools/call", {"name": "echo", "arguments": {"message": "hi"}}, weight=3),
    Step("divide by zero", "tools/call", {"name": "divide", "arguments": {"a": 1, "b": 0}}),
    Step("no such tool", "tools/call", {"name": "no_such_tool", "arguments": {}}),
)


def locust(locustfile: Path, *flags: str) -> subprocess.Popen:
    return subprocess.Popen([PY, "-m", "locust", "-f", str(locustfile), *flags], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=str(locustfile.parent),
                            start_new_session=True)


def run_distributed(locustfile: Path, prefix: Path, users: int = USERS, run_s: float = RUN_S) -> None:
    """One master and two workers on loopback, headless, run_s seconds; every process gone afterwards."""
    port = free_port()
    master = locust(locustfile, "--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(port),
                    "--expect-workers", "2", "--headless", "-u", str(users), "-r", str(users), "-t", f"{run_s:g}s",
                    "--stop-timeout", "5", "--csv", str(prefix), "--only-summary", "--loglevel", "WARNING")
    workers = [locust(locustfile, "--worker", "--master-host", "127.0.0.1", "--master-port", str(port),
                      "--loglevel", "WARNING") for _ in range(2)]
    procs = [master, *workers]
    try:
        out, _ = master.communicate(timeout=run_s + 25)
        assert master.returncode in (0, 1), out.decode()[-3000:]  # 1: Locust's exit code when requests failed
        for w in workers:
            w.wait(15)
    finally:
        for p in procs:
            stop_group(p, wait=5)
            if p.stdout is not None:
                p.stdout.close()


@pytest.mark.parametrize("protocol, flags", [("2026-07-28", ()), ("2025-11-25", ("--sse",))],
                         ids=["modern-json", "legacy-sse"])
def test_locust_master_and_workers_agree_with_the_server(tmp_path, protocol, flags):
    counts_path = tmp_path / "answered.json"
    locustfile = tmp_path / "mcp_load.py"
    prefix = tmp_path / "run"
    with demo_http(counts_path, *flags) as (url, demo):
        locustfile.write_text(render(Scenario(url=url, protocol=protocol, steps=STEPS, users=USERS, rate=40,
                                              duration_s=RUN_S), str(locustfile), str(prefix)))
        run_distributed(locustfile, prefix)
        stop_group(demo)
        assert demo.returncode == 0
    answered = json.loads(counts_path.read_text())
    run = read(str(prefix))
    by_name = {row.name: row for row in run.rows}
    mcp_names = set(answered)
    # every request Locust counted was answered by the server, and every answer was counted, name by name
    assert {n for n in by_name if n != "session end" and not n.startswith("notifications/")} == mcp_names
    for name, server in answered.items():
        assert by_name[name].requests == server["answered"], name
    assert run.aggregated.requests == sum(r.requests for r in run.rows)
    assert by_name["tools/call echo"].requests > 10  # a load, not a handful
    if protocol == "2025-11-25":  # the handshake once per simulated user, its session ended when it stops
        assert answered["initialize"]["answered"] == USERS
        assert by_name["notifications/initialized"].requests == USERS
        assert by_name["session end"].requests == USERS and by_name["session end"].failures == 0
    else:
        assert "initialize" not in answered
    # failures by kind: a tool error is the server's isError, a JSON-RPC error carries its code
    kinds = {(f.name, f.kind, f.code): f.occurrences for f in run.failures}
    assert kinds == {("tools/call divide", "tool_error", None): answered["tools/call divide"]["toolErrors"],
                     ("tools/call no_such_tool", "rpc_error", -32602):
                         answered["tools/call no_such_tool"]["rpcErrors"]["-32602"]}
    assert answered["tools/call divide"]["toolErrors"] == by_name["tools/call divide"].requests
    assert by_name["tools/call echo"].failures == 0
    divide = [f for f in run.failures if f.kind == "tool_error"][0]
    assert divide.error == "tool_error: Cannot divide 1 by zero. Try any other divisor!"
    # the latency percentiles are a distribution: ordered, within the fastest and the slowest request
    echo = by_name["tools/call echo"]
    p = [echo.percentiles[k] for k in ("50%", "66%", "75%", "80%", "90%", "95%", "98%", "99%", "100%")]
    assert all(v is not None for v in p) and p == sorted(p)
    assert echo.min_ms <= echo.median_ms <= echo.max_ms and 0 < echo.min_ms
    summary = run.summary("tools/call divide")
    assert summary["toolErrors"] == summary["requests"] == answered["tools/call divide"]["answered"]
    assert summary["errorsByKind"] == {"tool_error": summary["requests"]} and summary["ok"] == 0


def test_a_request_in_flight_when_the_run_ends_is_counted(tmp_path):
    """The run ends while each user's call is still running (1.5 s calls, a 2 s run, --stop-timeout 5): each worker
    lets its call finish and reports it, and the master waits for that report before it writes the CSV files, however
    long it takes (Locust's master alone waits 0.5 s for the workers' last reports, so on a loaded machine — or with a
    call in flight — the requests of the run's last moments were missing)."""
    counts_path = tmp_path / "answered.json"
    locustfile = tmp_path / "slow_load.py"
    prefix = tmp_path / "run"
    slow = Step("slow", "tools/call", {"name": "long_task", "arguments": {"steps": 1, "step_ms": 1500}})
    with demo_http(counts_path) as (url, demo):
        locustfile.write_text(render(Scenario(url=url, protocol="2026-07-28", steps=(slow,), users=2, duration_s=2),
                                     str(locustfile), str(prefix)))
        run_distributed(locustfile, prefix, users=2, run_s=2)
        stop_group(demo)
    answered = json.loads(counts_path.read_text())["tools/call long_task"]["answered"]
    row = {r.name: r for r in read(str(prefix)).rows}["tools/call long_task"]
    assert answered == 4 and row.requests == answered and row.failures == 0


COLLECTION = """\
name: demo under load
steps:
  - name: list tools
    list: tools
    expect: {listed: {present: [echo, divide]}}
  - name: echo hi
    call: echo
    arguments: {message: hi}
    expect: {text: {contains: hi}, maxMs: 5000}
  - name: divide by zero
    call: divide
    arguments: {a: 1, b: 0}
    expect: {isError: true, text: {contains: zero}}
  - name: wrong text
    call: echo
    arguments: {message: bye}
    expect: {text: {equals: hi}}
  - name: unknown tool
    call: no_such_tool
    expect: {error: {code: -32602}}
  - name: uses a saved value
    call: echo
    arguments: {message: "${greeting}"}
"""


def test_a_collection_under_locust_checks_every_answer(tmp_path):
    """`spyglass test COLLECTION --locust FILE`, then Locust on this machine (one process, headless): what a step
    expects is what succeeds — a tool error, a JSON-RPC error when they are expected — and an answer that falls
    short is a failure of kind `expectation`, as often as the server answered that step."""
    collection = tmp_path / "smoke.yaml"
    collection.write_text(COLLECTION)
    locustfile = tmp_path / "smoke_load.py"
    with demo_http(tmp_path / "answered.json") as (url, demo):
        proc = subprocess.run([PY, "-m", "inspector", "test", str(collection), "--locust", str(locustfile),
                               "--weight", "echo hi=3", "--users", "3", "--duration", "2", url],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert "5 tasks (list tools ×1, echo hi ×3, divide by zero ×1, wrong text ×1, unknown tool ×1)" in proc.stdout
        assert "step 'uses a saved value' left out: it uses ${…}" in proc.stderr
        run = locust(locustfile, "--headless", "-u", "3", "-r", "3", "-t", "2s", "--stop-timeout", "5",
                     "--csv", str(tmp_path / "smoke"), "--only-summary", "--loglevel", "WARNING")
        try:
            out, _ = run.communicate(timeout=30)
        finally:
            stop_group(run)
            run.stdout.close()
        # as fast as the answers come (no --rate): hundreds of tasks, so every step is picked (a step missed once in
        # 10^4 runs at 60 tasks, far fewer at the hundreds a run makes)
        assert run.returncode == 1, out.decode()[-2000:]  # Locust's exit code when a request failed
        stop_group(demo)
    answered = json.loads((tmp_path / "answered.json").read_text())
    stats = read(str(tmp_path / "smoke"))
    assert [(f.name, f.error) for f in stats.failures] == [
        ("tools/call echo", 'expectation: text equals: expected "hi", got "bye"')]
    by_name = {r.name: r for r in stats.rows}
    assert by_name["tools/call divide"].failures == by_name["tools/call no_such_tool"].failures == 0
    assert by_name["tools/call no_such_tool"].requests == answered["tools/call no_such_tool"]["rpcErrors"]["-32602"]
    assert by_name["tools/list"].requests == answered["tools/list"]["answered"] and by_name["tools/list"].failures == 0
    assert by_name["tools/call echo"].requests == answered["tools/call echo"]["answered"]
    assert 0 < stats.failures[0].occurrences < by_name["tools/call echo"].requests  # only "wrong text" fails
    assert stats.aggregated.requests > 60, stats.aggregated
