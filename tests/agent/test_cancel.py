"""A caller that gives up on a request it sent to the background process: the cancel reaches the server.

The server is an SDK server that keeps its `wait` call until it is cancelled and writes down every
`notifications/cancelled` it receives (`cancel_server.py`), so each test sees the cancel arrive at the server
itself: from a request cancelled on the socket (`{"cancel": ID}`, other requests of the connection going on),
from an agent whose MCP client cancels its `spyglass_call`, and from a `spyglass do` killed mid-call."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import Implementation

from inspector.agent.remote import IDLE_ENV, SOCKET_ENV, Remote

CANCEL_SERVER = Path(__file__).with_name("cancel_server.py")


def cancel_cmd(record: Path) -> list[str]:
    return [sys.executable, str(CANCEL_SERVER), str(record)]


@pytest.fixture
def env(tmp_path, monkeypatch):
    path = str(tmp_path / "s" / "agent.sock")
    monkeypatch.setenv(SOCKET_ENV, path)
    monkeypatch.setenv(IDLE_ENV, "120")  # a test that fails midway leaves no process for long
    environ = {**os.environ, SOCKET_ENV: path}
    yield environ
    subprocess.run([sys.executable, "-m", "inspector", "do", "stop"], env=environ, capture_output=True, timeout=30)


class Record:
    """What the server wrote down: `start TAG ID`, `cancel ID`, `stop TAG` lines."""

    def __init__(self, path: Path) -> None:
        self.path = path
        _RECORDS[:] = [self]

    def lines(self) -> list[str]:
        return self.path.read_text().splitlines() if self.path.exists() else []

    def started(self, tag: str) -> str | None:
        """The request id of the `wait` call tagged `tag`, once the server runs it."""
        return next((line.split()[2] for line in self.lines() if line.startswith(f"start {tag} ")), None)

    def cancelled(self, request_id: str | None) -> bool:
        return request_id is not None and f"cancel {request_id}" in self.lines()


_RECORDS: list[Record] = []


def _seen() -> str:
    return " | ".join(" / ".join(r.lines()) for r in _RECORDS)


async def until(predicate, what: str, timeout=15.0):
    end = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < end, f"timed out waiting for {what}: {_seen()}"
        await asyncio.sleep(0.01)


def wait_call(tag: str) -> dict:
    return {"server": "c", "tool": "wait", "arguments": {"tag": tag}}


async def test_a_request_given_up_on_the_socket_is_cancelled_on_the_wire(env, tmp_path):
    record = Record(tmp_path / "record.txt")
    remote = Remote()
    try:
        await remote.connect()
        events: list[dict] = []
        watcher = Remote()
        watcher.on_event = events.append
        await watcher.connect()
        await watcher.request("watch")
        await remote.request("spyglass_connect", {"name": "c", "command": cancel_cmd(record.path)})
        a = asyncio.ensure_future(remote.request("spyglass_call", wait_call("a")))
        b = asyncio.ensure_future(remote.request("spyglass_call", wait_call("b")))
        await until(lambda: record.started("a") and record.started("b"), "both calls at the server")
        a.cancel()
        await until(lambda: record.cancelled(record.started("a")), "notifications/cancelled for a at the server")
        await until(lambda: any(e["event"] == "call" and e["phase"] == "finished" for e in events),
                    "the call freed in the background process")
        ended = [e for e in events if e["event"] == "call" and e["phase"] == "finished"]
        assert [(e["arguments"], e["outcome"]) for e in ended] == [({"tag": "a"}, "cancelled")]
        assert not b.done() and not record.cancelled(record.started("b")), "the other request was cancelled too"

        # a cancel for an id not running there, or not an id at all, is ignored; the connection goes on
        for line in ({"cancel": 9999}, {"cancel": True}, {"cancel": [1]}, {"cancel": None}):
            remote._lines.write(json.dumps(line).encode() + b"\n")
        servers = (await remote.request("spyglass_servers"))["servers"]
        assert servers[0]["name"] == "c" and servers[0]["status"] == "connected"
        assert not b.done()
        b.cancel()
        await until(lambda: record.cancelled(record.started("b")), "notifications/cancelled for b at the server")
        with pytest.raises(asyncio.CancelledError):
            await a

        # a call held for the person's approval, given up: it stops waiting and the question closes
        held = asyncio.ensure_future(remote.request("spyglass_call", {"server": "c", "tool": "poke",
                                                                      "arguments": {"tag": "held"}}))
        await until(lambda: any(e["event"] == "approve" for e in events), "the call held for approval")
        approval = next(e["approval"] for e in events if e["event"] == "approve")
        held.cancel()
        await until(lambda: {"event": "decided", "approval": approval} in events, "the question closed")
        assert (await watcher.request("watch"))["waiting"] == []
        assert not any(line.startswith("poke ") for line in record.lines())
        await watcher.close()
    finally:
        await remote.close()


@pytest.mark.parametrize("private", [False, True], ids=["shared", "private"])
async def test_an_agent_cancelling_its_call_cancels_it_at_the_server(env, tmp_path, private):
    """`spyglass mcp` forwards to the background process (or, --private, runs the call itself): the agent's
    notifications/cancelled goes on to the server."""
    record = Record(tmp_path / "record.txt")
    params = StdioServerParameters(command=sys.executable, args=["-m", "inspector", "mcp",
                                                                 *(["--private"] if private else [])], env=env)
    async with Client(params, mode="legacy", client_info=Implementation(name="canceller", version="1")) as agent:
        opened = await agent.call_tool("spyglass_connect", {"name": "c", "command": cancel_cmd(record.path)})
        assert not opened.is_error, opened.content
        call = asyncio.ensure_future(agent.call_tool("spyglass_call", wait_call("agent")))
        await until(lambda: record.started("agent"), "the agent's call at the server")
        call.cancel()  # the SDK's client sends notifications/cancelled to spyglass mcp
        await until(lambda: record.cancelled(record.started("agent")), "notifications/cancelled at the server")
        servers = (await agent.call_tool("spyglass_servers", {})).structured_content["servers"]
        assert servers[0]["status"] == "connected"  # the agent's session and the server go on
    if private:
        return
    remote = Remote()
    try:
        await remote.connect(start=False)
        page = await remote.request("spyglass_traffic", {"server": "c",
                                                         "filter": 'method == "notifications/cancelled"'})
        assert page["matched"] == 1
    finally:
        await remote.close()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
async def test_a_do_command_stopped_mid_call_cancels_its_call(env, tmp_path, sig):
    record = Record(tmp_path / "record.txt")
    remote = Remote()
    try:
        await remote.connect()
        await remote.request("spyglass_connect", {"name": "c", "command": cancel_cmd(record.path)})
        shell = subprocess.Popen([sys.executable, "-m", "inspector", "do", "c", "call", "wait", "tag=shell"], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            await until(lambda: record.started("shell"), "the shell's call at the server")
            shell.send_signal(sig)
            await until(lambda: record.cancelled(record.started("shell")), "notifications/cancelled at the server")
        finally:
            shell.kill()
            _out, err = shell.communicate(timeout=30)
        assert b"Traceback" not in err
        servers = (await remote.request("spyglass_servers"))["servers"]
        assert servers[0]["calls"] == 1 and servers[0]["status"] == "connected"
    finally:
        await remote.close()

