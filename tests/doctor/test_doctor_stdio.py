"""The connection doctor against stdio servers that fail each way it names (and the demo server, which
passes every step): the failing step, what it saw, and its advice."""

from __future__ import annotations

import json
import sys

import pytest
from support import ROOT, demo_cmd, hostile_cmd

from inspector import errors as E
from inspector.config import ServerSpec
from inspector.doctor import FAILED, NOT_REACHED, PASSED, DoctorOptions, diagnose
from inspector.doctor.stdio import missing_variables
from inspector.transport.sandbox import tool

FAST = DoctorOptions(timeout=10)  # only a server that hangs waits this long: none here but one, with its own


async def doctor(command: list[str], options: DoctorOptions = FAST, **env: str):
    return await diagnose(ServerSpec(name="t", command=command, env=dict(env)), options)


def failed(report):
    step = report.failed
    assert step is not None, report.as_text()
    return step


async def test_a_healthy_server_passes_every_step():
    report = await doctor(demo_cmd(), DoctorOptions(timeout=10))
    assert [s.outcome for s in report.steps] == [PASSED] * 6, report.as_text()
    assert report.connected and report.exit_code == E.EXIT_OK
    handshake = report.step("handshake")
    assert "speaks: 2026-07-28, 2025-11-25" in handshake.seen, handshake.seen
    assert any("Python 3" in s for s in report.step("command").seen)  # the runtime's version
    assert all(s.ms is not None for s in report.steps)
    assert "result: connected" in report.as_text()


async def test_a_command_not_on_path():
    report = await doctor(["spyglass-no-such-server-xyz", "--stdio"])
    step = failed(report)
    assert step.id == "command" and report.exit_code == E.EXIT_CONNECT
    assert "not on PATH" in step.seen[-1] and "full path" in (step.fix or "")
    assert report.step("start").outcome == NOT_REACHED


async def test_npx_missing_names_node(tmp_path):
    report = await doctor(["npx", "-y", "some-server"], PATH=str(tmp_path))
    step = failed(report)
    assert step.id == "command" and "install Node.js (npx comes with it)" in (step.fix or "")


async def test_a_server_that_exits_at_once_names_the_variable_it_lacks():
    report = await doctor(hostile_cmd("die-at-start"))
    step = failed(report)
    assert step.id == "stays-up", report.as_text()
    assert "exited with code 3" in step.seen[-1] and "could not open database" in step.seen[-1]
    assert step.fix and step.fix.startswith("set DATABASE_PATH")


async def test_a_server_that_exits_without_saying_why():
    report = await doctor([sys.executable, "-c", "import sys; sys.exit(2)"])
    step = failed(report)
    assert step.id == "stays-up" and "exited with code 2" in step.seen[-1]
    assert "run the command in a terminal" in (step.fix or "")


async def test_a_log_line_on_stdout_is_named():
    report = await doctor(hostile_cmd("noise"))
    step = failed(report)
    assert step.id == "stdout" and report.exit_code == E.EXIT_INVALID
    assert "'INFO starting up'" in step.seen[-1]
    assert "stderr" in (step.fix or "") and "console.error" in (step.fix or "")


async def test_a_server_that_never_answers_times_out():
    report = await doctor(hostile_cmd("no-reply-all"), DoctorOptions(timeout=0.3))
    step = failed(report)
    assert step.id == "handshake" and report.exit_code == E.EXIT_TIMEOUT
    assert "no answer to server/discover or initialize within 0.3 s" in step.seen[-1]
    assert report.step("stays-up").outcome == PASSED


async def test_a_legacy_server_speaks_the_legacy_era():
    report = await doctor(hostile_cmd(), DoctorOptions(timeout=5))
    assert report.connected, report.as_text()
    seen = report.step("handshake").seen
    assert any(s.startswith("2026-07-28 (server/discover): refused, error -32601") for s in seen), seen
    assert seen[-1] == "speaks: 2025-11-25"


async def test_stderr_is_shown_with_missing_variables():
    code = ("import sys, json\nprint('warning: GITHUB_TOKEN is not set, running anonymously', file=sys.stderr, "
            "flush=True)\nfor line in sys.stdin:\n    m = json.loads(line)\n    if 'id' in m:\n        "
            "print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'protocolVersion': '2025-06-18', "
            "'capabilities': {}, 'serverInfo': {'name': 'x', 'version': '1'}}}), flush=True)\n")
    report = await doctor([sys.executable, "-c", code], DoctorOptions(timeout=5))
    assert report.connected, report.as_text()
    stderr = report.step("stderr")
    assert stderr.outcome == PASSED and "GITHUB_TOKEN is not set" in stderr.seen[0]
    assert stderr.seen[-1].endswith("missing: GITHUB_TOKEN")


def test_missing_variables_are_read_from_stderr_only_when_unset():
    lines = ["Error: OPENAI_API_KEY environment variable is required", "hint: set DATABASE_URL first",
             "loaded config from HOME_DIR", "API_TOKEN missing"]
    assert missing_variables(lines, {"API_TOKEN": "x"}) == ["OPENAI_API_KEY", "DATABASE_URL"]


async def test_the_text_report_escapes_controls():
    report = await doctor(["spy\x1b]0;owned\x07glass-nope"])
    text = report.as_text()
    assert "\x1b" not in text and "\x07" not in text and "spy\\x1b]0;owned\\x07glass" in text
    assert report.step("command").outcome == FAILED


async def test_the_servers_secrets_are_masked_in_the_report():
    token = "ghp_" + "x1Y2z3" * 6
    code = (f"import sys\nprint('using token {token} and password=hunter2secret', file=sys.stderr, flush=True)\n"
            "sys.exit(1)\n")
    report = await doctor([sys.executable, "-c", code, "--api-key", "sk-abcdefghijklmnopqrstuvwx"],
                          GITHUB_TOKEN=token)
    text = report.as_text() + json.dumps(report.as_json())
    assert failed(report).id == "stays-up"
    assert token not in text and "hunter2secret" not in text and "sk-abcdefghijklmnopqrstuvwx" not in text
    assert "using token" in text


@pytest.mark.skipif(tool() is None and not sys.platform.startswith("linux"), reason="the sandbox: Linux, macOS")
async def test_a_sandboxed_server_is_diagnosed_sandboxed(tmp_path, monkeypatch):
    # (the doctor started it unconfined: `doctor --sandbox`, and Diagnose on a server marked "Run sandboxed",
    # ran a server the user did not trust with their network and home folder)
    assert tool() is not None, "Linux CI has util-linux unshare"
    monkeypatch.setenv("HOME", str(tmp_path))  # this venv's Python may live in the real home folder
    spec = ServerSpec(name="t", command=demo_cmd(), env={"PYTHONPATH": str(ROOT)}, sandbox=True)
    report = await diagnose(spec, FAST)
    assert report.connected, report.as_text()
    assert any("spyglass sandbox" in line and "no network" in line for line in report.step("stderr").seen)
    assert any(line.startswith("sandboxed (") for line in report.step("start").seen), report.step("start").seen
    inside = tmp_path / "bin" / "server"
    inside.parent.mkdir()
    inside.write_text("#!/bin/sh\n", encoding="utf-8")
    inside.chmod(0o755)
    refused = await diagnose(ServerSpec(name="t", command=[str(inside)], sandbox=True), FAST)
    step = failed(refused)
    assert step.id == "start" and "inside the home folder" in step.seen[-1] and "sandbox" in (step.fix or "")


async def test_a_command_given_by_its_path_that_cannot_run_says_why(tmp_path):
    # (each was "… is not on PATH" with the fix "install passwd": a path is not looked up on PATH)
    plain = tmp_path / "server.py"
    plain.write_text("print('hi')\n", encoding="utf-8")
    for command, seen, fix in (
            ([str(tmp_path / "nope" / "server")], "no such file", "check the path"),
            ([str(tmp_path)], "is a folder", "give the program"),
            ([str(plain)], "is not executable", "chmod +x"),
            ([""], "the command is empty", "give the command")):
        step = failed(await doctor(command))
        assert step.id == "command" and seen in step.seen[-1] and fix in (step.fix or ""), (command, step.seen)
        assert "not on PATH" not in step.seen[-1]
