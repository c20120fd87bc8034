"""`spyglass --cli --load`: the official CLI's flags and summary fields, Spyglass's additions, the counts checked
against the traffic of the run (its `--session` file), and the combinations refused."""

from __future__ import annotations

import json

import pytest
from support import demo_cmd, everything_cmd, hostile_cmd
from test_cli import one_line_error, out_json, spyglass

from inspector.recording.files import open_session


def envelope(proc) -> dict:
    """The error envelope of a failed run: on stdout, or (the official CLI's place) the last line of stderr."""
    text = proc.stdout.strip() or proc.stderr.strip().splitlines()[-1]
    return json.loads(text)["error"]


OFFICIAL_FIELDS = ["tool", "concurrency", "requestLimit", "requests", "ok", "toolErrors", "errors", "errorRate",
                   "elapsedMs", "throughput", "latencyMs", "errorMessages"]


def test_a_load_run_prints_the_official_summary_and_the_session_file_has_every_call(tmp_path):
    session = tmp_path / "load.mcpsession"
    proc = spyglass("--load", "--load-requests", "150", "--load-concurrency", "5", "--tool-name", "echo",
                    "--tool-arg", "message=hi", "--session", str(session), "--", *everything_cmd())
    assert proc.returncode == 0, proc.stderr
    summary = out_json(proc)
    assert list(summary)[:len(OFFICIAL_FIELDS)] == OFFICIAL_FIELDS
    assert list(summary)[len(OFFICIAL_FIELDS):] == ["errorsByKind", "histogram"]
    assert summary["tool"] == "echo" and summary["concurrency"] == 5 and summary["requests"] == summary["ok"] == 150
    assert list(summary["latencyMs"]) == ["min", "mean", "p50", "p90", "p99", "max"]
    store = open_session(session).store
    calls = [n for n in range(len(store)) if store.method(n) == "tools/call" and store.direction(n) == "out"]
    answers = [n for n in range(len(store)) if store.direction(n) == "in" and store.pair(n) in set(calls)]
    assert len(calls) == len(answers) == 150
    args = {json.loads(store.text(n))["params"]["arguments"]["message"] for n in calls}
    assert args == {"hi"}


def test_text_output_has_every_field_errors_by_kind_and_a_histogram():
    proc = spyglass("--load", "--load-requests", "30", "--tool-name", "divide", "--tool-arg", "a=1", "--tool-arg",
                    "b=0", "--format", "text", "--", *demo_cmd())
    assert proc.returncode == 0, proc.stderr  # a completed run exits 0, whatever the calls answered
    text = proc.stdout
    assert text.startswith("Load test of divide: 10 at once, at most 30 calls\n")
    for field in ("requests    30 in", "toolErrors  30", "errors      0", "errorRate   100.00 %",
                  "by kind     tool_error 30", "Latency histogram (ms):"):
        assert field in text, field
    assert all(k in text for k in ("min ", "mean ", "p50 ", "p90 ", "p99 ", "max "))
    bars = [line for line in text.splitlines() if "█" in line]
    assert bars and sum(int(line.rsplit(" ", 1)[1]) for line in bars) == 30


@pytest.mark.parametrize(("argv", "message"), [
    (["--load-requests", "5", "--tool-name", "echo"], "--load-requests requires --load."),
    (["--load", "--method", "tools/list"], "--load requires --method tools/call."),
    (["--load", "--method", "tools/call"], "--load requires --tool-name."),
    (["--load", "--tool-name", "echo", "--load-concurrency", "0"], "--load-concurrency must be a positive integer."),
    (["--load", "--tool-name", "echo", "--load-rate", "-3"], "--load-rate must be a positive number."),
])
def test_usage_errors_exit_1_before_any_server_starts(argv, message):
    proc = spyglass(*argv, "--", "/nonexistent/server")
    assert proc.returncode == 1 and message in one_line_error(proc)
    assert envelope(proc)["kind"] == "usage"


def test_an_unknown_tool_exits_5_as_tool_not_found():
    proc = spyglass("--load", "--load-requests", "3", "--tool-name", "nope", "--", *demo_cmd())
    assert proc.returncode == 5
    error = envelope(proc)
    assert error["kind"] == "tool_not_found" and error["message"] == "Tool 'nope' not found on server."


def test_a_server_that_dies_mid_run_ends_the_run_with_the_reason():
    proc = spyglass("--load", "--load-requests", "20", "--tool-name", "echo", "--tool-arg", "message=x",
                    "--format", "text", "--", *hostile_cmd("exit-during-call"))
    assert proc.returncode == 0, proc.stderr  # the run completed, as the official CLI's does: its summary says how
    first, *rest = proc.stdout.splitlines()
    assert first.startswith("Load test of echo: 10 at once, at most 20 calls (stopped: ") and "exited" in first
    assert any(line.startswith("  errors") and int(line.split()[1]) >= 1 for line in rest)


def test_a_paced_run_says_its_bounds_and_bad_numbers_are_refused():
    proc = spyglass("--load", "--load-duration", "0.4", "--load-rate", "25", "--tool-name", "echo", "--tool-arg",
                    "message=x", "--format", "text", "--", *demo_cmd())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Load test of echo: 10 at once, for 0.4 s, at most 25 calls/s\n")
    calls = int(proc.stdout.splitlines()[1].split()[1])
    assert 5 <= calls <= 11  # 25 a second for 0.4 s: at most 10 (and the one at 0 s)
    proc = spyglass("--load", "--load-rate", "fast", "--tool-name", "echo", "--", *demo_cmd())
    assert proc.returncode == 1 and "--load-rate must be a positive number." in one_line_error(proc)


def test_a_wide_histogram_is_merged_to_sixteen_rows():
    from inspector.cli.load import histogram_rows

    bins = [{"fromMs": 10 ** (i / 10), "toMs": 10 ** ((i + 1) / 10), "count": i} for i in range(40)]
    rows = histogram_rows(bins)
    assert len(rows) <= 16 and sum(int(r.rsplit(" ", 1)[1]) for r in rows) == sum(range(40))


def test_task_runs_every_call_as_a_task(tmp_path):
    trace = tmp_path / "trace.jsonl"
    proc = spyglass("--load", "--load-requests", "3", "--load-concurrency", "1", "--task", "--no-validate",
                    "--tool-name", "add", "--tool-args-json", '{"a": 1, "b": 2}', "--trace", str(trace), "--",
                    *hostile_cmd("task-eager-result"))
    assert proc.returncode == 0, proc.stderr
    assert out_json(proc)["ok"] == 3
    sent = [json.loads(r["text"]) for r in map(json.loads, trace.read_text().splitlines()) if r["dir"] == "out"]
    calls = [m for m in sent if m.get("method") == "tools/call"]
    assert len(calls) == 3 and all("task" in m["params"] for m in calls)
    assert sum(m.get("method") == "tasks/result" for m in sent) >= 3  # each result fetched from its task
