"""A person watching the background process (what the window attaches to): every frame and call of the agent
as it happens, and a call that may change things held until the person allows or denies it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import Implementation
from support import demo_cmd

from inspector.agent.remote import IDLE_ENV, SOCKET_ENV, Remote

DELETE = {"server": "demo", "tool": "delete_item", "arguments": {"id": "item-1", "confirm": True}}


@pytest.fixture
def env(tmp_path, monkeypatch):
    path = str(tmp_path / "s" / "agent.sock")
    monkeypatch.setenv(SOCKET_ENV, path)
    monkeypatch.setenv(IDLE_ENV, "120")  # a test that fails midway leaves no process for long
    environ = {**os.environ, SOCKET_ENV: path}
    yield environ
    subprocess.run([sys.executable, "-m", "inspector", "do", "stop"], env=environ, capture_output=True, timeout=30)


async def until(predicate, timeout=15.0):
    end = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < end, "timed out"
        await asyncio.sleep(0.01)


async def test_a_held_call_resolves_only_by_the_persons_choice(env):
    events: list[dict] = []
    window = Remote()
    window.on_event = events.append
    await window.connect()
    seen = await window.request("watch")
    assert seen["watching"] is True and seen["servers"] == []
    params = StdioServerParameters(command=sys.executable, args=["-m", "inspector", "mcp"], env=env)
    agent_info = Implementation(name="test-agent", title="Test Agent", version="1")
    async with Client(params, mode="legacy", client_info=agent_info) as agent:
        await agent.call_tool("spyglass_connect", {"name": "demo", "command": demo_cmd()})
        await until(lambda: any(e["event"] == "frame" and e["dir"] == "in" for e in events))
        assert any(e["event"] == "server" and e["what"] == "opened" for e in events)

        held = asyncio.ensure_future(agent.call_tool("spyglass_call", DELETE))
        await until(lambda: any(e["event"] == "approve" for e in events))
        ask = next(e for e in events if e["event"] == "approve")
        assert ask["tool"] == "delete_item" and ask["arguments"] == DELETE["arguments"]
        assert ask["definition"]["inputSchema"]["properties"]["id"]
        await asyncio.sleep(0.3)  # nothing but the person's choice ends it
        assert not held.done()
        await window.request("decide", {"approval": ask["approval"], "allow": True})
        done = await held
        assert not done.is_error and done.structured_content["outcome"] == "ok"
        finished = [e for e in events if e["event"] == "call" and e["phase"] == "finished"]
        assert finished[-1]["by"] == "agent" and finished[-1]["tool"] == "delete_item"
        started = [e for e in events if e["event"] == "call" and e["phase"] == "started"]
        assert started[-1]["client"] == finished[-1]["client"] == "Test Agent"  # its MCP clientInfo, for History

        denied = asyncio.ensure_future(agent.call_tool("spyglass_call", DELETE))
        await until(lambda: sum(e["event"] == "approve" for e in events) == 2)
        second = [e for e in events if e["event"] == "approve"][-1]
        await window.request("decide", {"approval": second["approval"], "allow": False})
        refused = await denied
        assert refused.is_error and "denied" in refused.content[0].text

        orphan = asyncio.ensure_future(agent.call_tool("spyglass_call", DELETE))
        await until(lambda: sum(e["event"] == "approve" for e in events) == 3)
        await window.close()  # the window goes away: nobody is left to ask
        gone = await orphan
        assert gone.is_error and "window watching Spyglass was closed" in gone.content[0].text


async def test_a_watcher_that_stops_reading_is_let_go(tmp_path, monkeypatch, expect_log):
    """A window that stops reading (stuck, suspended) while a server floods would have the background process
    keep every event for it: past WATCH_BACKLOG it is detached and what it did not read is dropped."""
    from inspector.agent import daemon as daemon_module
    from inspector.agent.daemon import Daemon

    monkeypatch.setattr(daemon_module, "WATCH_BACKLOG", 256 * 1024, raising=False)
    expect_log("spyglass.agent.daemon", "a watcher is")
    d = Daemon(tmp_path / "s" / "agent.sock", idle=60)
    serving = asyncio.ensure_future(d.serve())
    try:
        reader, writer = None, None
        end = asyncio.get_running_loop().time() + 10
        while reader is None:
            try:
                reader, writer = await asyncio.open_unix_connection(str(d.path))
            except OSError:
                assert asyncio.get_running_loop().time() < end
                await asyncio.sleep(0.01)
        writer.write(b'{"id": 1, "tool": "watch"}\n')
        assert b'"watching": true' in await reader.readline()
        await until(lambda: d.watchers.watching)
        for _ in range(200):  # 200 events of 64 KiB, never read
            d.watchers.broadcast({"event": "frame", "text": "x" * 65536})
        await until(lambda: not d.watchers.watching)
        writer.close()
    finally:
        d.done.set()
        await serving


async def test_a_watcher_learns_the_tool_list_when_the_listing_ends_not_only_from_its_frames():
    """A window that attaches between the listing's request and its answer sees only the answer, which it cannot
    pair: the server event of the listing's end carries the tools themselves (and the handshake's capabilities),
    as the catch-up of a watcher that came later does."""
    from inspector.agent.hub import Hub
    from inspector.agent.watch import Watchers

    hub = Hub()
    watchers = Watchers(hub)
    events: list[dict] = []
    watchers.add(events.append)
    try:
        await hub.open("demo", command=demo_cmd())
        listed = [e for e in events if e.get("event") == "server" and e.get("what") == "changed:tools"]
        assert listed, [e.get("what") for e in events if e.get("event") == "server"]
        tools = listed[-1]["server"]["toolList"]
        assert {t["name"] for t in tools} >= {"echo", "delete_item"}
        assert "capabilities" in listed[-1]["server"]
    finally:
        await hub.close_all()
