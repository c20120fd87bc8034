"""The window watching the agents (Server → Watch agents): an agent's server in the sidebar, its call in the
traffic within 100 ms of its answer, and a call that may change things held until the person allows or
denies it in the window."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

from PySide6.QtWidgets import QPlainTextEdit
from uikit import demo_cmd, until

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
