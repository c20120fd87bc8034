"""What the window shows follows the selected server, and every mark ends with what it marks: the tool panel
belongs to the selected server (a call cannot go to another), a "running" mark on the sidebar and the tool list
ends with its call whatever its end, and a tool's badge agrees with the confirmation its call asks for.

Real servers: the demo server, server-everything (both list `echo`) and the Python SDK peer (its tools declare
no annotations)."""

from __future__ import annotations

import asyncio
import itertools
import sys
from pathlib import Path

import pytest
from calling import call, connected, dialog, select_tool
from PySide6.QtWidgets import QDialog, QLabel, QListView, QPushButton, QWidget
from uikit import demo_cmd, everything_cmd, find, row_of, until

from inspector.config import ServerSpec
from inspector.session import Status
from inspector.session.tools import UNDECLARED, badges
from inspector.ui.base.items import BADGES_ROLE
from inspector.ui.calls import confirm

SDK_SERVER = Path(__file__).resolve().parents[1] / "peers" / "sdk_server.py"


def listed(conn, name):
    return next(t for t in conn.session.tools.items if t.get("name") == name)


async def test_the_tool_panel_belongs_to_the_selected_server(open_window):
    async with open_window() as window:
        demo = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await connected(demo)
        select_tool(window, "markdown_report")
        other = window.add_server(ServerSpec(name="everything", command=everything_cmd()))
        assert window.selected_connection() is other
        shown = window.tool_detail.tool
        assert shown is None, f"demo's {shown.get('name')} is still in the tool panel with everything selected"
        await connected(other)
        assert window.tool_detail.tool is None
        assert window.resources_pane.conn is other and window.prompts_pane.conn is other
        find(window, QPushButton, "callButton").click()  # nothing shown: nothing sent
        await asyncio.sleep(0.2)
        assert window.calls.records(other.server_id) == []

        # enforced where the call is made, not only by the view: a tool of another server in the panel is not sent
        window.tool_detail.show_tool(listed(demo, "markdown_report"))
        assert window.tool_detail.call() is None
        await asyncio.sleep(0.2)
        assert window.calls.records(other.server_id) == []
        status = find(window, QLabel, "callStatus").text()
        assert status.startswith("Not called") and "markdown_report" in status, status
        load = window.tool_detail.load_view  # a load run is held to the same rule
        assert load.start() is None and load.run is None
        assert load.status.text().startswith("Not started") and "markdown_report" in load.status.text()

        # a tool both list: switching server shows the selected server's own definition
        select_tool(window, "echo")
        assert window.tool_detail.tool == listed(other, "echo")
        window.select_connection(demo)
        assert window.tool_detail.tool == listed(demo, "echo")
        rec = await call(window, "echo", {"message": "hi"})
        assert rec.server_id == demo.server_id and rec.outcome == "ok"
        assert window.calls.records(other.server_id) == []

        # a server whose list lacks the tool shown: the panel empties
        select_tool(window, "markdown_report")
        window.select_connection(other)
        assert window.tool_detail.tool is None


def _painted(window, conn, tool):
    return (window.server_view.itemDelegate().painted.get(conn.server_id),
            window.tool_panel.view.itemDelegate().painted.get(tool))


def _start_in_view(window, conn, tool, args, *, anyway=False):
    """Call `tool` and paint both views at once, while the call runs (as any exposure of the window does): the
    marks are on screen before the call can end, however fast it ends."""
    select_tool(window, tool)
    window.tool_detail.form.set_value(args)
    before = len(window.calls.records(conn.server_id))
    window.tool_detail.call(anyway=anyway)
    records = window.calls.records(conn.server_id)
    assert len(records) == before + 1 and records[-1].running
    window.server_view.viewport().repaint()
    window.tool_panel.view.viewport().repaint()
    shown = _painted(window, conn, tool)
    assert all(mark.startswith("● running") for mark in shown), shown
    return records[-1]


async def _marks_end(window, conn, rec):
    await until(lambda: not rec.running, 10, f"the call of {rec.tool} to end")
    await until(lambda: _painted(window, conn, rec.tool) == ("", ""), 5,
                f"the running marks of {rec.tool} to go (sidebar, tool list: {_painted(window, conn, rec.tool)})")


async def test_every_running_mark_ends_with_its_call(open_window):
    async with open_window() as window:
        window.resize(1366, 768)
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await connected(conn)

        rec = _start_in_view(window, conn, "divide", {"a": 1, "b": 0})  # the tool's own error, at once
        await _marks_end(window, conn, rec)
        assert rec.outcome == "tool error"
        rec = _start_in_view(window, conn, "divide", {"b": 2}, anyway=True)  # refused by the server
        await _marks_end(window, conn, rec)
        assert rec.outcome != "ok"
        rec = _start_in_view(window, conn, "echo", {"message": "hi"})  # and a success
        await _marks_end(window, conn, rec)
        assert rec.outcome == "ok"

        rec = _start_in_view(window, conn, "long_task", {"steps": 50, "step_ms": 200})
        await asyncio.sleep(0.3)  # the ticker repaints the marks as they count
        find(window, QPushButton, "cancelButton").click()
        await _marks_end(window, conn, rec)
        assert rec.outcome == "cancelled"

        conn.session.client.timeout = 0.5  # no progress for longer than that: the call times out
        rec = _start_in_view(window, conn, "long_task", {"steps": 2, "step_ms": 2000})
        await _marks_end(window, conn, rec)
        assert rec.outcome == "timeout", rec.outcome
        conn.session.client.timeout = 30

        rec = _start_in_view(window, conn, "long_task", {"steps": 50, "step_ms": 200})
        window.act_disconnect.trigger()  # the server goes under a running call
        await _marks_end(window, conn, rec)
        assert rec.outcome != "ok"
        await until(lambda: conn.session.status is Status.DISCONNECTED and not window._tasks, 10,
                    "the disconnection to finish")

        # removed under a running call: the other server's marks stay clear, and no mark outlives the call
        other = window.add_server(ServerSpec(name="other demo", command=demo_cmd()))
        await connected(other)
        rec = _start_in_view(window, other, "long_task", {"steps": 50, "step_ms": 200})
        window.remove_selected()
        await until(lambda: not rec.running, 10, "the call to end with its server")
        assert window.selected_connection() is conn and window.calls.running() == []
        await until(lambda: window.server_view.itemDelegate().painted.get(conn.server_id) == "", 5)
        await until(lambda: not window._tasks, 10, "the removal to finish")


@pytest.mark.parametrize("policy", [confirm.NEVER, confirm.DESTRUCTIVE, confirm.NOT_READ_ONLY])
def test_badges_and_confirmation_agree_on_every_combination(policy):
    values = (True, False, None)
    for read_only, destructive in itertools.product(values, values):
        ann = {k: v for k, v in (("readOnlyHint", read_only), ("destructiveHint", destructive)) if v is not None}
        tool = {"name": "t", "annotations": ann}
        shown = badges(tool)
        asks = confirm.needs_confirmation(tool, policy)
        if policy == confirm.NEVER:
            expected = False
        elif policy == confirm.DESTRUCTIVE:
            expected = "destructive" in shown or UNDECLARED in shown
        else:
            expected = "read-only" not in shown
        assert asks == expected, f"{ann}: badges {shown}, asks {asks} under {policy}"
        assert (UNDECLARED in shown) == (read_only is not True and destructive is None), ann
        assert ("destructive" in shown) == (read_only is not True and destructive is True), ann


async def test_a_tool_that_declares_nothing_says_so_and_asks(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="sdk", command=[sys.executable, str(SDK_SERVER)]))
        await connected(conn)
        view = find(window, QListView, "toolList")
        assert UNDECLARED in row_of(view, "echo").data(BADGES_ROLE)
        assert "does not say whether this tool is read-only" in row_of(view, "echo").data(0x0003)  # ToolTipRole
        select_tool(window, "echo")
        assert UNDECLARED in find(window, QWidget, "toolBadges").labels()  # a filled badge
        window.tool_detail.form.set_value({"message": "hi"})
        find(window, QPushButton, "callButton").click()
        dlg = await dialog(window, "confirmDialog")
        assert "(spec default)" in dlg.findChild(QLabel, "confirmAnnotations").text()
        dlg.findChild(QPushButton, "confirmCancel").click()
        await until(lambda: not dlg.isVisible(), 5)
        await until(lambda: "cancelled the confirmation" in find(window, QLabel, "callStatus").text(), 5)
        assert window.calls.records(conn.server_id) == []
        find(window, QPushButton, "callButton").click()
        dlg = await dialog(window, "confirmDialog")
        dlg.findChild(QPushButton, "confirmCall").click()
        await until(lambda: window.calls.records(conn.server_id) and not window.calls.records(conn.server_id)[-1]
                    .running, 10, "the confirmed call")
        assert window.calls.records(conn.server_id)[-1].outcome == "ok"
        assert isinstance(dlg, QDialog)
