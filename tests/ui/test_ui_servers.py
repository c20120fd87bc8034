"""The real window against real servers: demo, server-everything, and the hostile server."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QListView, QPlainTextEdit, QPushButton, QTreeView, QWidget
from uikit import demo_cmd, everything_cmd, find, hostile_cmd, row_of, rows, shot, until

from inspector import errors as E
from inspector.config import ServerSpec
from inspector.session import Status
from inspector.ui.base.items import BADGES_ROLE, CHANGE_ROLE, FLAGS_ROLE
from inspector.ui.servers.sidebar import STATUS_TEXT_ROLE


def spec(name, command):
    return ServerSpec(name=name, command=command)


async def connected(conn, timeout=30):
    await until(lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, timeout,
                f"{conn.name} to connect and list its tools (status: {conn.session.status_text()})")


async def test_object_names_and_empty_state(open_window):
    async with open_window() as window:
        assert window.objectName() == "mainWindow"
        server_list = find(window, QListView, "serverList")
        find(window, QListView, "toolList")
        find(window, QTreeView, "serverLog")
        assert server_list.model().rowCount() == 0
        assert find(window, QLabel, "statusSummary").text() == "0 servers, 0 connected"
        assert window.pages.currentWidget().objectName() == "emptyPage"
        await shot(window, "empty-light")


async def test_demo_server_tools_and_badges(open_window):
    async with open_window() as window:
        conn = window.add_server(spec("demo", demo_cmd()))
        await connected(conn)
        tool_list = find(window, QListView, "toolList")
        names = rows(tool_list)
        assert "echo" in names and "delete_item" in names and "toggle_bonus_tool" in names
        assert "bonus" not in names
        assert len(names) == len(conn.session.tools.items) == 15
        # display names: title > annotations.title > name
        assert row_of(tool_list, "echo").data(Qt.DisplayRole) == "Echo"
        assert row_of(tool_list, "divide").data(Qt.DisplayRole) == "Divide two numbers"
        # badges with the spec's defaults
        assert row_of(tool_list, "echo").data(BADGES_ROLE) == ["read-only", "idempotent"]
        assert row_of(tool_list, "delete_item").data(BADGES_ROLE) == ["destructive", "idempotent"]
        assert "not guarantees" in row_of(tool_list, "delete_item").data(Qt.ToolTipRole)
        # sidebar status: the check's one finding (create_event's nullable enum, a type union some model
        # providers reject: the demo shows it on purpose), then version and era
        server_list = find(window, QListView, "serverList")
        status = server_list.model().index(0, 0).data(STATUS_TEXT_ROLE)
        assert (
            status.startswith("⚠ 1 · connected · ") and conn.session.protocol_version in status
            and conn.session.era in status
        )
        # selecting a tool shows its schema, highlighted, read-only
        tool_list.setCurrentIndex(row_of(tool_list, "delete_item"))
        schema = find(window, QPlainTextEdit, "toolSchema")
        assert schema.isReadOnly() and '"confirm"' in schema.toPlainText()
        assert find(window, QLabel, "toolTitle").text() == "Delete an item"
        assert "destructive" in find(window, QWidget, "toolBadges").labels()  # a filled badge
        # server info
        window.tabs.setCurrentIndex(1)
        assert find(window, QLabel, "serverInfo:pid").text() == str(conn.session.pid)
        assert find(window, QLabel, "serverInfo:era").text() == conn.session.era
        window.tabs.setCurrentIndex(0)
        await shot(window, "demo-connected-light")


async def test_search_filters_by_name_title_description(open_window):
    async with open_window() as window:
        conn = window.add_server(spec("demo", demo_cmd()))
        await connected(conn)
        tool_list = find(window, QListView, "toolList")
        window.tool_panel.search.setText("chart")  # title "Render a bar chart"
        assert rows(tool_list) == ["render_chart"]
        window.tool_panel.search.setText("DIVIDES A BY B")  # description, any case
        assert rows(tool_list) == ["divide"]
        window.tool_panel.search.setText("log_demo")  # name
        assert rows(tool_list) == ["log_demo"]
        window.tool_panel.search.clear()
        assert len(rows(tool_list)) == 15


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # modern: subscriptions/listen; legacy: plain notification
async def test_list_changed_marks_new_and_removed_tools(open_window, mode):
    async with open_window() as window:
        conn = window.add_server(spec("demo", demo_cmd()), mode=mode)
        await connected(conn)
        assert conn.session.era == ("legacy" if mode == "legacy" else "modern")
        tool_list = find(window, QListView, "toolList")
        result = await conn.session.client.call_tool("toggle_bonus_tool", {})
        assert not result.get("isError")
        await until(lambda: "bonus" in rows(tool_list), 10, "the bonus tool to appear")
        assert row_of(tool_list, "bonus").data(CHANGE_ROLE) == "new"
        assert row_of(tool_list, "echo").data(CHANGE_ROLE) is None
        assert "1 new" in window.tool_panel.changes.text() and window.tool_panel.changes.isVisible()
        tool_list.setCurrentIndex(row_of(tool_list, "bonus"))
        tool_list.scrollTo(row_of(tool_list, "bonus"))
        await shot(window, f"demo-list-changed-{mode}-light")
        await conn.session.client.call_tool("toggle_bonus_tool", {})
        await until(lambda: row_of(tool_list, "bonus").data(CHANGE_ROLE) == "removed", 10, "bonus to be marked removed")
        assert [t["name"] for t in conn.session.tools.items].count("bonus") == 0
        assert rows(tool_list).count("bonus") == 1  # still listed, marked, until the next list
        await shot(window, f"demo-list-changed-removed-{mode}-light")


async def test_server_everything(open_window):
    async with open_window() as window:
        conn = window.add_server(spec("everything", everything_cmd()))
        await connected(conn, 60)
        tool_list = find(window, QListView, "toolList")
        names = rows(tool_list)
        assert {"echo", "get-sum", "gzip-file-as-resource", "trigger-long-running-operation"} <= set(names)
        assert row_of(tool_list, "get-sum").data(BADGES_ROLE) == ["read-only", "idempotent"]
        assert row_of(tool_list, "gzip-file-as-resource").data(BADGES_ROLE) == ["idempotent", "open-world"]
        assert row_of(tool_list, "toggle-simulated-logging").data(BADGES_ROLE) == []
        # no broken definitions; the live check marks what it finds (a parameter without a description)
        flagged = {n: row_of(tool_list, n).data(FLAGS_ROLE) for n in names if row_of(tool_list, n).data(FLAGS_ROLE)}
        assert flagged == {"get-resource-reference": ["1 finding"]}
        assert conn.session.hello.server_info.get("name")


async def test_several_servers_at_once(open_window):
    async with open_window() as window:
        a = window.add_server(spec("demo", demo_cmd()))
        b = window.add_server(spec("demo", demo_cmd()))
        await connected(a)
        await connected(b)
        assert a.server_id != b.server_id and a.session.pid != b.session.pid
        assert find(window, QLabel, "statusSummary").text() == "2 servers, 2 connected"
        window.select_connection(a)
        assert window.selected_connection() is a
        window.act_disconnect.trigger()
        await until(lambda: a.session.status is Status.DISCONNECTED, 10, "a to disconnect")
        assert b.session.status is Status.CONNECTED
        dup = window.duplicate_selected()
        assert dup is not a and dup.spec.command == a.spec.command and dup.session.status is Status.IDLE
        window.act_connect.trigger()
        await connected(dup)
        window.select_connection(b)
        window.act_restart.trigger()
        await until(lambda: b.session.status is Status.CONNECTING or b.session.pid is None, 10, "b to restart")
        await connected(b)
        window.select_connection(dup)
        window.act_remove.trigger()
        assert dup not in window.connections()
        await until(lambda: dup.session.status is Status.DISCONNECTED, 10, "the removed server to stop")


async def test_server_that_fails_to_start_shows_error_stderr_and_retry(open_window):
    async with open_window() as window:
        conn = window.add_server(spec("broken", hostile_cmd("die-at-start")))
        await until(lambda: conn.session.status is Status.ERROR, 20, "the error state")
        server_list = find(window, QListView, "serverList")
        status = server_list.model().index(0, 0).data(STATUS_TEXT_ROLE)
        assert status.startswith("error: ") and "code 3" in status
        stderr = find(window, QPlainTextEdit, "serverStderr")
        assert stderr.isVisible() and stderr.toPlainText().strip()
        retry = find(window, QPushButton, "retryButton")
        assert retry.isVisible() and retry.isEnabled() and retry.text() == "Retry"
        assert conn.session.stderr_tail and conn.session.exit_code == 3
        await shot(window, "error-light")
        first_pid_gone = conn.session.pid is None
        retry.click()
        await until(lambda: conn.session.status is Status.CONNECTING, 5, "retry to start connecting")
        await until(lambda: conn.session.status is Status.ERROR, 20, "the error state again")
        assert first_pid_gone


async def test_server_exiting_mid_session_shows_exit_code(open_window):
    async with open_window() as window:
        conn = window.add_server(spec("fragile", hostile_cmd("exit-during-call")))
        await connected(conn)
        with pytest.raises(E.SpyglassError):
            await conn.session.client.call_tool("echo", {"text": "hi"})
        await until(lambda: conn.session.status is Status.EXITED, 10, "the exited state")
        server_list = find(window, QListView, "serverList")
        assert server_list.model().index(0, 0).data(STATUS_TEXT_ROLE).endswith("exited (code 70)")
        assert find(window, QPushButton, "retryButton").text() == "Restart"
        assert "panic: boom" in find(window, QPlainTextEdit, "serverStderr").toPlainText()
        await shot(window, "exited-light")


async def test_log_pane_shows_stderr_and_log_notifications(open_window):
    async with open_window() as window:
        conn = window.add_server(spec("demo", demo_cmd()))
        await connected(conn)
        await conn.session.client.set_log_level("debug")
        await conn.session.client.call_tool("log_demo", {})
        log_pane = find(window, QTreeView, "serverLog")
        assert log_pane.max_lines > 0 and log_pane.uniformRowHeights()  # an item view, never a text editor
        await until(
            lambda: "EMERGENCY" in log_pane.toPlainText().upper() and "stderr" in log_pane.toPlainText(),
            10,
            "log lines in serverLog",
        )
        text = log_pane.toPlainText()
        assert "WARNING" in text and "stderr" in text
        window.log_dock.raise_()
        await shot(window, "log-light")


async def test_url_that_cannot_be_reached_is_an_error_state(open_window):
    import socket

    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="remote", url=f"http://127.0.0.1:{port}/mcp"))
        await until(lambda: conn.session.status is Status.ERROR, 30, "the error state")
        assert conn.session.reason
        assert find(window, QPushButton, "retryButton").isVisible()


async def test_add_server_dialog_adds_and_connects(open_window):
    from inspector.ui.servers.add_dialog import AddServerDialog

    async with open_window() as window:
        window.act_add.trigger()
        dialog = window.findChild(AddServerDialog, "addServerDialog")
        assert dialog is not None and dialog.isVisible() and dialog.windowModality() != Qt.ApplicationModal
        cmd = demo_cmd()
        dialog.name.setText("from the dialog")
        dialog.command.setText(cmd[0])
        dialog.args.setText(" ".join(cmd[1:]))
        dialog.env.add_pair("SECRET_TOKEN", "x")
        dialog._accept()
        await until(lambda: len(window.connections()) == 1, 5, "the server to be added")
        conn = window.connections()[0]
        assert conn.name == "from the dialog" and conn.spec.env == {"SECRET_TOKEN": "x"}
        await connected(conn)


async def test_closing_the_window_disconnects_every_server(open_window):
    async with open_window() as window:
        conns = [
            window.add_server(spec("demo", demo_cmd())),
            window.add_server(spec("sleepy", hostile_cmd("no-reply"))),
        ]
        for conn in conns:
            await connected(conn)
        pids = [c.session.pid for c in conns]
        closed = []
        window.closed.connect(lambda: closed.append(True))
        window.close()  # the close is deferred until every server's process has ended
        assert window.isVisible()
        await until(lambda: closed, 20, "the window to close")
        assert all(c.session.status is Status.DISCONNECTED and c.session.client is None for c in conns)
        import os

        for pid in pids:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


async def test_untrusted_text_stays_plain(open_window):
    async with open_window() as window:
        window.tool_panel.set_tools(
            [{"name": "<b>bold</b>", "description": "<img src='http://x/y.png'>", "inputSchema": {"type": "object"}}]
        )
        idx = window.tool_panel.proxy.index(0, 0)
        assert idx.data(Qt.DisplayRole) == "<b>bold</b>"
        tip = idx.data(Qt.ToolTipRole)
        assert "&lt;b&gt;bold&lt;/b&gt;" in tip and "<b>" not in tip
        window.tool_panel.view.setCurrentIndex(idx)
        title = find(window, QLabel, "toolTitle")
        assert title.textFormat() == Qt.PlainText and title.text() == "<b>bold</b>"
        assert find(window, QPlainTextEdit, "toolDescription").toPlainText() == "<img src='http://x/y.png'>"


async def test_a_broken_tools_list_is_shown_not_fatal(open_window):
    async with open_window() as window:
        conn = window.add_server(spec("nope", hostile_cmd("tools-nope")))
        await until(lambda: conn.session.tools.loaded, 20, "tools/list to be answered")
        assert conn.session.status is Status.CONNECTED and conn.session.tools.error
        message = find(window, QLabel, "toolListMessage")
        assert message.isVisible() and message.text().startswith("tools/list")
        await shot(window, "tools-list-failed-light")


async def test_a_shown_tool_list_starts_the_form_checks_import(open_window, monkeypatch):
    """The forms' checks import jsonschema (50 ms): it starts in steps once a server's tools are shown, not in the
    turn of a click on Call that comes at once (the first flood's longest turn), nor only 1.5 s after the start."""
    from inspector.ui.window import warmup

    started: list[str] = []
    monkeypatch.setattr(warmup, "PRELOAD_AFTER_MS", 600_000)
    monkeypatch.setattr(warmup, "preload_steps", lambda module, later: started.append(module))
    async with open_window() as window:
        conn = window.add_server(spec("demo", demo_cmd()))
        assert started == ["jsonschema"]  # at once, while the server starts
        await connected(conn)
        assert find(window, QListView, "toolList").currentIndex().isValid() is False  # no tool selected yet
