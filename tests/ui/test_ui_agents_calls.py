"""Calls on an agent's server as the window shows them: the person's Cancel reaches the server (through the
background process), an agent's cancelled call ends `cancelled` in History, and History's "by" column names
each call's own maker when two agents, a shell and the person call the same server."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp_types import Implementation
from PySide6.QtWidgets import QPushButton
from uikit import demo_cmd, find, until

from inspector.agent.remote import IDLE_ENV, SOCKET_ENV, Remote

CANCEL_SERVER = Path(__file__).resolve().parent.parent / "agent" / "cancel_server.py"


def lines(record: Path) -> list[str]:
    return record.read_text().splitlines() if record.exists() else []


def started(record: Path, tag: str) -> str | None:
    """The request id the server saw for the `wait` call tagged `tag`."""
    return next((line.split()[2] for line in lines(record) if line.startswith(f"start {tag} ")), None)


def cancelled_at_server(record: Path, tag: str) -> bool:
    rid = started(record, tag)
    return rid is not None and f"cancel {rid}" in lines(record)


async def attached(window, agent: Remote, name: str):
    window.agents.start()
    await until(lambda: window.agents.attached and name in window.agents.sessions, 10, "the agent's server")
    session = window.agents.sessions[name]
    conn = next(c for c in window.servers.connections if c.session is session)
    window.select_connection(conn)
    await until(lambda: any(t.get("name") for t in session.tools.items), 5, "its tools")
    return session


async def test_cancel_in_the_window_reaches_the_agents_server(open_window, tmp_path, monkeypatch):
    """The person's Cancel on their call through the background process: the server is sent
    notifications/cancelled, whether the call's frame reached the window before the Cancel or after it, and a
    call cancelled before it was sent ends too. An agent's call its agent cancels ends `cancelled` in History."""
    monkeypatch.setenv(SOCKET_ENV, str(tmp_path / "s" / "agent.sock"))
    monkeypatch.setenv(IDLE_ENV, "120")  # a test that fails midway leaves no process for long
    record = tmp_path / "record.txt"
    agent = Remote()
    try:
        async with open_window() as window:
            await agent.connect()
            await agent.request("spyglass_connect", {"name": "c", "command": [sys.executable, str(CANCEL_SERVER),
                                                                              str(record)]})
            session = await attached(window, agent, "c")
            assert window.tool_panel.select("wait")
            panel = window.tool_detail
            cancel = find(window, QPushButton, "cancelButton")
            hist = panel.history

            def call(tag: str):
                panel.form.set_value({"tag": tag})
                panel.call_button.click()
                rec = session.calls.history[-1]
                assert rec.caller == "you" and rec.arguments == {"tag": tag} and rec.running
                return rec

            mine = call("you")
            await until(lambda: started(record, "you") and mine.request_id is not None, 10,
                        "the person's call at the server and its frame in the window")
            assert cancel.isEnabled()
            cancel.click()
            await until(lambda: cancelled_at_server(record, "you"), 10, "notifications/cancelled at the server")
            assert mine.outcome == "cancelled" and "the server was told to stop" in mine.error_text
            await until(lambda: any(window.store.method(n) == "notifications/cancelled"
                                    for n in range(len(window.store))), 5, "the cancel in the window's traffic")

            # the call's frames reach the window only after the Cancel (a busy window, a slow socket)
            watching = window.agents.remote
            held: list[dict] = []
            hear, watching.on_event = watching.on_event, held.append
            late = call("late")
            await until(lambda: started(record, "late") and any(
                e.get("event") == "frame" and '"late"' in (e.get("text") or "") for e in held), 10, "the call sent")
            cancel.click()
            await until(lambda: not late.running, 5, "the late call cancelled")
            assert late.outcome == "cancelled"
            await until(lambda: cancelled_at_server(record, "late"), 10, "the late call's cancel at the server")
            watching.on_event = hear
            for event in held:
                hear(event)
            assert late.request_id is not None, "its frame did not find the person's call"
            assert [r.arguments["tag"] for r in session.calls.history] == ["you", "late"], "a call seen twice"
            assert not any(r.running for r in session.calls.history)

            early = call("early")
            cancel.click()  # before its task even ran: nothing was sent
            await until(lambda: not early.running, 5, "the call cancelled before it was sent")
            assert early.outcome == "cancelled" and "before it was sent" in early.error_text

            # an agent's call with the very same arguments is the agent's, and its agent cancels it
            theirs = asyncio.ensure_future(agent.request("spyglass_call", {"server": "c", "tool": "wait",
                                                                           "arguments": {"tag": "early"}}))
            await until(lambda: started(record, "early"), 10, "the agent's call at the server")
            await until(lambda: len(session.calls.history) == 4, 5, "the agent's call in History")
            agents = session.calls.history[-1]
            assert agents.arguments == {"tag": "early"} and agents.caller == "agent" and agents.running
            theirs.cancel()
            await until(lambda: cancelled_at_server(record, "early"), 10, "the agent's cancel at the server")
            await until(lambda: not agents.running, 5, "the agent's cancelled call ended in History")
            assert agents.outcome == "cancelled" and "notifications/cancelled" in agents.error_text
            await until(lambda: hist.tree.topLevelItemCount() == 4, 5, "the calls in History")
            assert [hist.tree.topLevelItem(i).text(3) for i in range(4)] == ["cancelled"] * 4
            assert [hist.tree.topLevelItem(i).text(2) for i in range(4)] == ["agent", "you", "you", "you"]
            assert (await agent.request("spyglass_servers"))["servers"][0]["status"] == "connected"
            await window.agents.close()
    finally:
        await agent.close()
        subprocess.run([sys.executable, "-m", "inspector", "do", "stop"], capture_output=True, timeout=30,
                       env={**os.environ})


async def test_history_names_each_calls_maker(open_window, tmp_path, monkeypatch):
    """Two agents (MCP clients with their own clientInfo, through `spyglass mcp`), a shell (`spyglass do`) and
    the person call the same server in turn: History's "by" column names each call's own maker, in order."""
    monkeypatch.setenv(SOCKET_ENV, str(tmp_path / "s" / "agent.sock"))
    monkeypatch.setenv(IDLE_ENV, "120")
    env = {**os.environ}
    opener = Remote()
    try:
        async with open_window() as window:
            await opener.connect()
            await opener.request("spyglass_connect", {"name": "demo", "command": demo_cmd()})
            session = await attached(window, opener, "demo")
            hist = window.tool_detail.history
            params = StdioServerParameters(command=sys.executable, args=["-m", "inspector", "mcp"], env=env)
            ada = Client(params, mode="legacy", client_info=Implementation(name="ada-agent", title="Ada", version="1"))
            bob = Client(params, mode="legacy", client_info=Implementation(name="bob-agent", version="2"))
            made: list[tuple[str, str]] = []  # (the echoed message, who History must name)

            async def echoed(message: str, by: str, call) -> None:
                await call(message)
                made.append((message, by))
                await until(lambda: hist.tree.topLevelItemCount() == len(made)
                            and not session.calls.history[-1].running, 10, f"{message} in History")

            async def shell(message: str) -> None:
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "inspector", "do", "demo", "call", "echo", f"message={message}", env=env,
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                _out, err = await proc.communicate()
                assert proc.returncode == 0, err

            def person(message: str):
                async def call(_message: str) -> None:
                    assert window.tool_panel.select("echo")
                    window.tool_detail.form.set_value({"message": message})
                    window.tool_detail.call_button.click()
                    await until(lambda: session.calls.history[-1].caller == "you"
                                and not session.calls.history[-1].running, 10, "the person's call")
                return call

            async with ada, bob:
                def mcp(client):
                    async def call(message: str) -> None:
                        done = await client.call_tool("spyglass_call", {"server": "demo", "tool": "echo",
                                                                        "arguments": {"message": message}})
                        assert not done.is_error, done.content
                    return call

                await echoed("from ada", "agent: Ada", mcp(ada))
                await echoed("from the shell", "agent: spyglass do", shell)
                await echoed("from bob", "agent: bob-agent", mcp(bob))
                await echoed("from you", "you", person("from you"))
                await echoed("from ada again", "agent: Ada", mcp(ada))
                await echoed("from bob again", "agent: bob-agent", mcp(bob))

            newest_first = [hist.tree.topLevelItem(i) for i in range(hist.tree.topLevelItemCount())]
            shown = [(item.text(5), item.text(2)) for item in reversed(newest_first)]
            assert shown == [(f'{{"message":"{m}"}}', by) for m, by in made]
            assert [(r.arguments["message"], r.caller) for r in session.calls.history] == made
            assert all(r.outcome == "ok" for r in session.calls.history)
            await window.agents.close()
    finally:
        await opener.close()
        subprocess.run([sys.executable, "-m", "inspector", "do", "stop"], capture_output=True, timeout=30,
                       env={**os.environ})


async def test_the_window_learns_an_agents_tools_from_the_listings_end(open_window):
    """A window that attached between the listing's request and its answer cannot pair the answer: the
    background process's word that the listing ended carries the tools, and the agent's server shows them."""
    async with open_window() as window:
        link = window.agents
        link._server_event({"event": "server", "what": "opened", "name": "late",
                            "server": {"name": "late", "status": "connecting", "target": "python server.py"}})
        session = link.sessions["late"]
        assert not any(t.get("name") for t in session.tools.items)
        link._server_event({"event": "server", "what": "changed:tools", "name": "late",
                            "server": {"name": "late", "status": "connected", "target": "python server.py",
                                       "toolList": [{"name": "wait", "inputSchema": {"type": "object"}}]}})
        assert [t.get("name") for t in session.tools.items] == ["wait"]
