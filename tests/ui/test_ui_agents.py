"""The window watching the agents (Server → Watch agents): an agent's server in the sidebar, its call in the
traffic within 100 ms of its answer, and a call that may change things held until the person allows or
denies it in the window."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLineEdit, QPlainTextEdit, QPushButton, QWidget
from uikit import demo_cmd, find, until

from inspector.agent.remote import IDLE_ENV, SOCKET_ENV, Remote
from inspector.ui.window.agent_link import AgentSession

DELETE = {"server": "demo", "tool": "delete_item", "arguments": {"id": "item-1", "confirm": True}}


async def test_the_window_shows_the_agent_and_holds_its_writes(open_window, tmp_path, monkeypatch):
    monkeypatch.setenv(SOCKET_ENV, str(tmp_path / "s" / "agent.sock"))
    monkeypatch.setenv(IDLE_ENV, "120")  # a test that fails midway leaves no process for long
    agent = Remote()
    try:
        async with open_window() as window:
            await agent.connect()
            await agent.request("spyglass_connect", {"name": "demo", "command": demo_cmd()})
            window.agents.start()
            await until(lambda: window.agents.attached, 10, "attached to the background process")
            session = window.agents.sessions["demo"]
            assert isinstance(session, AgentSession)
            conn = next(c for c in window.servers.connections if c.session is session)
            assert "(agent)" in session.title and conn.server_id.endswith("(agent)")

            before = len(window.store)
            answer = await agent.request("spyglass_call", {"server": "demo", "tool": "echo",
                                                           "arguments": {"message": "hi"}})
            answered = time.monotonic()
            assert answer["outcome"] == "ok"
            await until(lambda: any(window.store.direction(n) == "in" and window.store.method(n) == "tools/call"
                                    for n in range(before, len(window.store))), 5, "the answer in the traffic")
            assert time.monotonic() - answered < 0.1, "shown more than 100 ms after the agent had its answer"
            await until(lambda: session.calls.history and session.calls.history[-1].outcome == "ok", 5,
                        "the agent's call in History")

            held = asyncio.ensure_future(agent.request("spyglass_call", DELETE))
            await until(lambda: window.agents.dialogs, 10, "the approval dialog")
            (approval, dialog), = window.agents.dialogs.items()
            assert dialog.objectName() == "agentApproval" and dialog.isVisible()
            assert '"item-1"' in dialog.findChild(QPlainTextEdit, "confirmArguments").toPlainText()
            form = find(dialog, QWidget, "confirmForm")  # the arguments as the tool's form shows them
            assert form.isVisible() and not dialog.findChild(QPlainTextEdit, "confirmArguments").isVisible()
            field = find(form, QLineEdit, "field:/id")
            assert field.text() == "item-1" and not field.isEnabled(), "not shown read-only in the tool's form"
            assert approval in window.agents.dialogs
            await asyncio.sleep(0.3)
            assert not held.done(), "a held call ended without the person"
            dialog.call_button.click()  # Allow
            assert (await held)["outcome"] == "ok"

            denied = asyncio.ensure_future(agent.request("spyglass_call", DELETE))
            await until(lambda: window.agents.dialogs, 10, "the second approval dialog")
            (_, dialog), = window.agents.dialogs.items()
            dialog.cancel_button.click()  # Deny
            try:
                await denied
                raise AssertionError("a denied call went through")
            except Exception as exc:
                assert "denied" in str(exc)
            await window.agents.close()
    finally:
        await agent.close()
        subprocess.run([sys.executable, "-m", "inspector", "do", "stop"], capture_output=True, timeout=30,
                       env={**os.environ})


async def test_the_person_sees_whose_calls_takes_one_over_and_disconnects(open_window, tmp_path, monkeypatch):
    """History says which agent made each call (its MCP clientInfo); "Open in the tool panel" puts an agent's call
    in the form to edit and call as the person's own (through the background process, marked "you", one record);
    Server → Disconnect the agent's server closes it in the background process."""
    monkeypatch.setenv(SOCKET_ENV, str(tmp_path / "s" / "agent.sock"))
    monkeypatch.setenv(IDLE_ENV, "120")
    agent = Remote()
    try:
        async with open_window() as window:
            await agent.connect()
            await agent.request("spyglass_connect", {"name": "demo", "command": demo_cmd()})
            window.agents.start()
            await until(lambda: window.agents.attached, 10, "attached to the background process")
            session = window.agents.sessions["demo"]
            conn = next(c for c in window.servers.connections if c.session is session)
            window.select_connection(conn)
            # opened before the window came: its tools and handshake come with the catch-up, not as frames
            assert {t["name"] for t in session.tools.items} >= {"echo", "delete_item"}
            assert session.status.name == "CONNECTED" and session.hello.protocol_version
            await agent.request("spyglass_call", {"server": "demo", "tool": "echo", "arguments": {"message": "hi"}},
                                client="Test Agent")
            await until(lambda: session.calls.history and not session.calls.history[-1].running, 5, "the call")
            hist = window.tool_detail.history
            await until(lambda: hist.tree.topLevelItemCount() == 1, 5, "the call in History")
            item = hist.tree.topLevelItem(0)
            assert session.calls.history[-1].caller == "agent: Test Agent"
            assert hist.tree.headerItem().text(2) == "by" and item.text(2) == "agent: Test Agent"

            hist.tree.setCurrentItem(item)
            opener = find(window, QPushButton, "historyOpenButton")
            assert opener.isEnabled()
            opener.click()
            panel = window.tool_detail
            assert panel.tool is not None and panel.tool["name"] == "echo"
            assert panel.form.value() == {"message": "hi"}
            assert panel.call_button.isEnabled(), "the person cannot call on the agent's server"
            panel.form.set_value({"message": "mine"})
            panel.call_button.click()
            await until(lambda: len(session.calls.history) == 2 and not session.calls.history[-1].running, 10,
                        "the person's call")
            mine = session.calls.history[-1]
            assert mine.caller == "you" and mine.outcome == "ok", (mine.outcome, mine.error_text)
            assert "mine" in str(mine.result) and mine.request_id is not None  # its frames followed it
            await until(lambda: hist.tree.topLevelItemCount() == 2, 5, "the person's call in History")
            assert hist.tree.topLevelItem(0).text(2) == "you"
            seen = await agent.request("spyglass_traffic", {"server": "demo", "filter": 'tool == "echo" && dir == in'})
            assert sum('"mine"' in (f.get("text") or "") for f in seen["frames"]) == 1, "not called on that server"

            act = find(window, QAction, "actionAgentDisconnect")
            window.select_connection(conn)
            assert act.isEnabled()
            act.trigger()
            await until(lambda: session.status.name == "EXITED", 10, "the agent's server closed")
            assert "disconnected by you" in (session.reason or "")
            assert (await agent.request("spyglass_servers"))["servers"] == []
            await window.agents.close()
    finally:
        await agent.close()
        subprocess.run([sys.executable, "-m", "inspector", "do", "stop"], capture_output=True, timeout=30,
                       env={**os.environ})
