"""Tasks (MCP 2025-11-25): the rules in inspector.protocol.tasks, and the client following real tasks of
@modelcontextprotocol/server-everything (its simulate-research-query tool runs only as a task)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from support import ROOT, everything_cmd

from inspector import errors as E
from inspector.client import Client
from inspector.protocol import tasks as T
from inspector.transport import StdioTransport

RESEARCH = "simulate-research-query"


# ---------------------------------------------------------------------------------------------- the rules

def test_task_support_reads_execution_and_treats_anything_else_as_forbidden():
    assert T.task_support({"execution": {"taskSupport": "required"}}) == "required"
    assert T.task_support({"execution": {"taskSupport": "optional"}}) == "optional"
    for odd in ({}, {"execution": None}, {"execution": {"taskSupport": "always"}}, {"execution": "x"}, None, []):
        assert T.task_support(odd) == "forbidden"


def test_capabilities_and_created_tasks():
    caps = {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
    assert T.server_runs_tool_tasks(caps) and T.server_can(caps, "cancel") and T.server_can(caps, "list")
    assert not T.server_runs_tool_tasks({"tasks": {"list": {}}}) and not T.server_can({}, "cancel")
    task = {"taskId": "a", "status": "working", "pollInterval": 250}
    assert T.created_task({"task": task}) == task
    assert T.created_task({"content": [], "task": task}) is None  # an ordinary result that happens to say "task"
    assert T.created_task({"content": []}) is None


@pytest.mark.parametrize("bad, says", [
    ("nope", "must be an object"),
    ({"status": "working"}, "no taskId"),
    ({"taskId": "a", "status": "dancing"}, "unknown status 'dancing'"),
    ({"taskId": "a", "status": "working", "pollInterval": -5}, "pollInterval must be a non-negative integer"),
    ({"taskId": "a", "status": "working", "ttl": True}, "ttl must be"),
    ({"taskId": "a", "status": "failed", "statusMessage": 3}, "statusMessage must be a string"),
])
def test_a_malformed_task_is_refused_with_the_reason(bad, says):
    with pytest.raises(T.TaskShapeError, match=says):
        T.check_task(bad)


def test_polling_follows_the_server_within_bounds():
    assert T.poll_seconds({"pollInterval": 1500}) == 1.5
    assert T.poll_seconds({"pollInterval": 1}) == T.MIN_POLL_S
    assert T.poll_seconds({"pollInterval": 3_600_000}) == T.MAX_POLL_S
    assert T.poll_seconds({}) == T.DEFAULT_POLL_S
    assert T.describe({"status": "input_required", "statusMessage": "Which one?"}) == "input required: Which one?"
    assert T.describe({"status": "completed"}) == "completed"


# ---------------------------------------------------------------------------------------------- real tasks

def make_client(frames: list | None = None, answers: list | None = None, **kw) -> Client:
    async def elicit(params):
        if answers is not None:
            answers.append(params)
        choices = params["requestedSchema"]["properties"]["interpretation"]["oneOf"]
        return {"action": "accept", "content": {"interpretation": choices[1]["const"]}}

    return Client(StdioTransport(everything_cmd()), handlers={"elicitation/create": elicit}, timeout=30,
                  traffic=frames.append if frames is not None else None, **kw)


def sent(frames: list, method: str) -> list[dict]:
    out = []
    for f in frames:
        if f.direction == "out" and method.encode() in f.data:
            msg = json.loads(f.data)
            if msg.get("method") == method:
                out.append(msg)
    return out


async def test_a_tool_that_requires_a_task_runs_as_one_and_its_states_are_reported():
    frames: list = []
    async with make_client(frames) as client:
        assert client.tasks_exist and T.server_runs_tool_tasks(client.hello.capabilities)
        await client.list_tools()
        assert client.wants_task(RESEARCH) and not client.wants_task("echo")
        states: list[dict] = []
        result = await client.call_tool(RESEARCH, {"topic": "otters"}, on_task=states.append)
        assert "# Research Report: otters" in result["content"][0]["text"]
        statuses = [s["status"] for s in states]
        assert statuses[0] == "working" and statuses[-1] == "completed" and set(statuses) <= {"working", "completed"}
        messages = [s.get("statusMessage") for s in states]
        assert "Analyzing content..." in messages  # followed through the stages, each reported once
        assert len(messages) == len(set(zip(statuses, messages)))
        [call] = sent(frames, "tools/call")
        assert call["params"]["task"] == {}
        assert sent(frames, "tasks/result") and sent(frames, "tasks/get")
        tid = states[0]["taskId"]
        listed = (await client.list_tasks())["tasks"]
        assert any(t["taskId"] == tid and t["status"] == "completed" for t in listed)


async def test_a_task_that_needs_input_asks_through_the_elicitation_handler():
    answers: list = []
    async with make_client(answers=answers) as client:
        await client.list_tools()
        states: list[dict] = []
        result = await client.call_tool(RESEARCH, {"topic": "python", "ambiguous": True}, on_task=states.append)
        assert [a["message"] for a in answers] and "python" in answers[0]["message"]
        assert "input_required" in [s["status"] for s in states]
        assert "python (snake)" in result["content"][0]["text"]


async def test_cancelling_a_task_call_sends_tasks_cancel_and_the_task_ends_cancelled():
    frames: list = []
    async with make_client(frames) as client:
        await client.list_tools()
        states: list[dict] = []
        call = asyncio.ensure_future(client.call_tool(RESEARCH, {"topic": "slow"}, on_task=states.append))
        for _ in range(200):
            if states:
                break
            await asyncio.sleep(0.02)
        assert states and states[0]["status"] == "working"
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        tid = states[0]["taskId"]
        for _ in range(100):
            if sent(frames, "tasks/cancel"):
                break
            await asyncio.sleep(0.02)
        [cancel] = sent(frames, "tasks/cancel")
        assert cancel["params"] == {"taskId": tid}
        assert (await client.get_task(tid))["status"] == "cancelled"


async def test_no_task_calls_the_tool_plainly_and_the_server_says_why_it_refuses():
    async with make_client() as client:
        await client.list_tools()
        result = await client.call_tool(RESEARCH, {"topic": "otters"}, task=False)
        assert result.get("isError") is True and "requires task augmentation" in result["content"][0]["text"]


async def test_tasks_are_refused_locally_on_a_revision_without_them():
    async with make_client(mode="2025-06-18") as client:
        await client.list_tools()
        assert not client.tasks_exist and not client.wants_task(RESEARCH)
        with pytest.raises(E.UsageError, match="tasks exist only in protocol 2025-11-25; this connection uses "
                                               "2025-06-18"):
            await client.call_tool("echo", {"message": "x"}, task=True)


def test_cli_runs_a_required_task_and_prints_its_states_on_stderr():
    r = subprocess.run([sys.executable, "-m", "inspector", "--cli", "--tool-name", RESEARCH, "--tool-arg",
                        "topic=otters", "--", *everything_cmd()], capture_output=True, text=True, timeout=120,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "# Research Report: otters" in json.loads(r.stdout)["content"][0]["text"]
    lines = [line for line in r.stderr.splitlines() if line.startswith("spyglass: task ")]
    assert lines[0].endswith("working: Gathering sources...") and lines[-1].split(": ", 2)[2].startswith("completed")
    plain = subprocess.run([sys.executable, "-m", "inspector", "--cli", "--no-task", "--tool-name", RESEARCH,
                            "--tool-arg", "topic=otters", "--", *everything_cmd()], capture_output=True, text=True,
                           timeout=120, cwd=ROOT)
    assert plain.returncode == E.EXIT_TOOL_ERROR and "requires task augmentation" in plain.stderr


def test_cli_ctrl_c_during_a_task_sends_tasks_cancel_and_exits_130(tmp_path):
    import signal
    import time

    trace = tmp_path / "trace.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "--cli", "--trace", str(trace), "--tool-name",
                             RESEARCH, "--tool-arg", "topic=otters", "--", *everything_cmd()],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until the task is running
            if trace.exists() and 'tasks/get' in trace.read_text():
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130 and "spyglass: interrupted" in err
    sent = [json.loads(json.loads(line)["text"]) for line in trace.read_text().splitlines()
            if json.loads(line)["dir"] == "out"]
    cancels = [m for m in sent if m.get("method") == "tasks/cancel"]
    created = next(m for m in sent if m.get("method") == "tasks/get")["params"]["taskId"]
    assert cancels and cancels[0]["params"] == {"taskId": created}
