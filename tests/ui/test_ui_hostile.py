"""Hostile servers in the window: every frame that arrived, malformed or not, is in
the store and visible in the traffic pane with its problem; the window's own
excepthook never fires."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel
from uikit import find, hostile_cmd, shot, until

from inspector.config import ServerSpec


async def test_malformed_frames_are_shown_with_their_problem(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="noisy", command=hostile_cmd("noise", "unknown-id")), mode="legacy")
        await until(
            lambda: conn.session.client is not None and conn.session.tools.loaded, 20, "the noisy server to connect"
        )
        result = await conn.session.client.call_tool("echo", {"message": "still works"})
        assert result["content"][0]["text"] == "still works"
        store, pane = window.store, window.traffic_pane
        await until(lambda: pane.model.rowCount() == len(store), 10, "the view to show every record")
        malformed = [n for n in range(len(store)) if store.kind(n) == "malformed"]
        reasons = " | ".join(store.record(n).malformed or "" for n in malformed)
        for words in ("bad JSON", "not UTF-8", "blank line", "batch array", "unknown id 99999"):
            assert words in reasons, reasons
        assert pane.select_record(malformed[0])
        problem = find(window, QLabel, "trafficDetailProblem")
        await until(lambda: problem.isVisible() and problem.text(), 5, "the problem to be shown")
        assert store.record(malformed[0]).malformed in problem.text()
        await shot(window, "traffic-malformed-light")
