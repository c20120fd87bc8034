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
from inspector.transport.stdio import StdioTransport

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
    async def elicit(params, context=None):
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
        assert sent(frames, "tasks/result")
        # the states came from polling (tasks/get) or from the server's status notifications, whichever
        # was first: on a busy machine the notifications can carry the task to its end before a poll is due
        pushed = any(f.direction == "in" and b'"notifications/tasks/status"' in f.data for f in frames)
        assert sent(frames, "tasks/get") or pushed
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
        # wait until the task runs: Spyglass asked for its result (at once; tasks/get polls come later and the
        # research takes only 4 s, too short a window on a loaded machine)
        while time.monotonic() < deadline:
            lines = trace.read_text().splitlines() if trace.exists() else []
            records = [json.loads(line) for line in lines if line.endswith("}")]
            if any(r["dir"] == "out" and '"tasks/result"' in r["text"] for r in records):
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
    created = next(m for m in sent if m.get("method") == "tasks/result")["params"]["taskId"]
    assert cancels and cancels[0]["params"] == {"taskId": created}


# ------------------------------------------------------------------------------------- tasks the server asks for


async def test_the_server_can_ask_the_client_to_elicit_and_sample_as_tasks():
    frames: list = []
    asked: list = []

    async def elicit(params, context=None):
        asked.append(params)
        await asyncio.sleep(1.2)  # a person taking their time: the server polls meanwhile
        return {"action": "accept", "content": {"name": "Ada", "favoriteColor": "Blue", "agreeToTerms": True}}

    async def sample(params, context=None):
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "hi from a fake model"},
            "model": "m",
            "stopReason": "endTurn",
        }

    client = Client(
        StdioTransport(everything_cmd()),
        handlers={"elicitation/create": elicit, "sampling/createMessage": sample},
        timeout=30,
        traffic=frames.append,
    )
    async with client:
        assert client.session.capabilities["tasks"] == {
            "list": {},
            "cancel": {},
            "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
        }
        names = {t["name"] for t in (await client.list_tools())["tools"]}
        assert {"trigger-elicitation-request-async", "trigger-sampling-request-async"} <= names
        result = await client.call_tool("trigger-elicitation-request-async", {})
        assert result["content"][0]["text"] == "[COMPLETED] User provided the requested information!"
        assert "task" not in asked[0]  # the handler sees the plain request
        result = await client.call_tool("trigger-sampling-request-async", {"prompt": "hi"})
        assert "[COMPLETED] Async sampling completed!" in result["content"][0]["text"]
        assert "hi from a fake model" in result["content"][0]["text"]
    answers = [json.loads(f.data) for f in frames if f.direction == "out" and b'"result"' in f.data]
    created = [a["result"]["task"] for a in answers if isinstance(a["result"].get("task"), dict)]
    # "working" while the person answers (input_required would ask the server for input)
    assert [t["status"] for t in created] == ["working", "working"]
    polled = [a["result"]["status"] for a in answers if a["result"].get("taskId") == created[0]["taskId"]]
    assert polled.count("working") >= 1 and polled[-1] == "completed"  # tasks/get while waiting, then done


async def test_client_task_store_answers_get_list_cancel_and_result(expect_log):
    expect_log("spyglass.client.tasks", "failed")
    from inspector.client import ClientTaskStore, RequestContext

    gate = asyncio.Event()

    async def elicit(params, context=None):
        await gate.wait()
        return {"action": "decline"}

    async def sample(params, context=None):
        raise RuntimeError("no model configured")

    notes: list = []

    async def notify(method, params):
        notes.append((method, params["status"]))

    store = ClientTaskStore({"elicitation/create": elicit, "sampling/createMessage": sample}, notify=notify)
    assert store.wants("elicitation/create", {"task": {}, "message": "x"})
    assert not store.wants("elicitation/create", {"message": "x"}) and not store.wants("roots/list", {"task": {}})
    first = store.start(
        "elicitation/create", {"task": {"ttl": 5000}, "message": "x"}, RequestContext("elicitation/create")
    )["task"]
    assert first["status"] == "working" and first["ttl"] == 5000 and first["statusMessage"] == "waiting for your answer"
    assert (await store.answer("tasks/get", {"taskId": first["taskId"]}))["status"] == "working"
    waiting = asyncio.ensure_future(store.answer("tasks/result", {"taskId": first["taskId"]}))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # held until the task ends
    gate.set()
    result = await waiting
    assert result["action"] == "decline" and result["_meta"][T.RELATED_TASK_META] == {"taskId": first["taskId"]}
    # a failing handler: the task fails and tasks/result carries the error
    failed = store.start(
        "sampling/createMessage", {"task": {}, "messages": []}, RequestContext("sampling/createMessage")
    )["task"]
    with pytest.raises(E.RemoteError, match="no model configured"):
        await store.answer("tasks/result", {"taskId": failed["taskId"]})
    assert (await store.answer("tasks/get", {"taskId": failed["taskId"]}))["status"] == "failed"
    # cancelled by the server
    gate.clear()
    third = store.start("elicitation/create", {"task": {}, "message": "y"}, RequestContext("elicitation/create"))[
        "task"
    ]
    assert (await store.answer("tasks/cancel", {"taskId": third["taskId"]}))["status"] == "cancelled"
    with pytest.raises(E.RemoteError, match="was cancelled"):
        await store.answer("tasks/result", {"taskId": third["taskId"]})
    with pytest.raises(E.RemoteError, match="already ended"):
        await store.answer("tasks/cancel", {"taskId": third["taskId"]})
    listed = (await store.answer("tasks/list", {}))["tasks"]
    assert [t["status"] for t in listed] == ["completed", "failed", "cancelled"]
    with pytest.raises(E.RemoteError, match="no task 'nope'") as err:
        await store.answer("tasks/get", {"taskId": "nope"})
    assert err.value.code == -32602
    await asyncio.sleep(0.05)
    assert notes == [
        ("notifications/tasks/status", "completed"),
        ("notifications/tasks/status", "failed"),
        ("notifications/tasks/status", "cancelled"),
    ]


def test_modern_requests_do_not_declare_tasks():
    from inspector.protocol.session import ClientSession, Mode

    caps = {"elicitation": {}, "tasks": {"list": {}, "requests": {"elicitation": {"create": {}}}}}
    [send] = ClientSession(mode=Mode.parse("modern"), capabilities=caps).start()
    meta = json.loads(send.data)["params"]["_meta"]
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {"elicitation": {}}
    [send] = ClientSession(mode=Mode.parse("legacy"), capabilities=caps).start()  # initialize declares them
    assert json.loads(send.data)["params"]["capabilities"]["tasks"] == caps["tasks"]


def test_an_earlier_state_never_replaces_a_later_one():
    later = {
        "taskId": "a",
        "status": "working",
        "statusMessage": "Generating",
        "lastUpdatedAt": "2026-11-30T11:00:03.500Z",
    }
    earlier = {
        "taskId": "a",
        "status": "working",
        "statusMessage": "Synthesizing",
        "lastUpdatedAt": "2026-11-30T11:00:02.400Z",
    }
    assert T.is_older(earlier, later) and not T.is_older(later, earlier)
    assert T.is_older({"taskId": "a", "status": "working"}, {"taskId": "a", "status": "completed"})
    assert not T.is_older({"taskId": "a", "status": "working"}, {"taskId": "a", "status": "working"})  # no stamps
    assert not T.is_older({**later, "lastUpdatedAt": "garbage"}, earlier)


async def test_a_server_that_does_not_declare_tool_tasks_is_never_asked_for_one():
    frames: list = []
    from support import PY

    hostile = [PY, str(ROOT / "tests" / "hostile" / "server.py"), "task-unadvertised"]
    async with Client(StdioTransport(hostile), mode="legacy", traffic=frames.append) as client:
        await client.list_tools()
        assert client.tasks_exist and not client.runs_tool_tasks
        assert T.task_support(client.tools["echo"]) == "required" and not client.wants_task("echo")
        result = await client.call_tool("echo", {"message": "plain"})
        assert result["content"][0]["text"] == "plain"
    [call] = [json.loads(f.data) for f in frames if f.direction == "out" and b'"tools/call"' in f.data]
    assert "task" not in call["params"]
