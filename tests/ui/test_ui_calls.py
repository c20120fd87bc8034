"""Calling tools in the real window against the demo server: every result kind, errors, confirmation,
validation, progress and cancel, elicitation in both eras, history and copy-as; screenshots light and dark."""

from __future__ import annotations

import asyncio

import pytest
from calling import call, click, connected, dialog, dialog_shot, result_shot, result_widgets, select_tool
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton, QTextBrowser, QWidget
from uikit import demo_cmd, find, until

from inspector.config import ServerSpec
from inspector.ui.calls import confirm


def demo(window, mode="auto"):
    return window.add_server(ServerSpec(name="demo", command=demo_cmd()), mode=mode)


@pytest.mark.parametrize("theme", ["light", "dark"])
async def test_every_result_kind_of_the_demo_server(open_window, theme):
    async with open_window(theme) as window:
        conn = demo(window)
        await connected(conn)
        # Markdown rendered as it comes (it is Markdown), without links that open; the text as sent a click away
        rec = await call(window, "markdown_report", {"topic": "mcp"})
        assert rec.outcome == "ok"
        [text] = result_widgets(window, "text")
        plain = text.findChild(QPlainTextEdit, "resultText")
        assert plain.toPlainText().startswith("# Report")
        md = text.findChild(QTextBrowser, "markdownView")
        assert md is not None and md.isVisibleTo(text) and not plain.isVisibleTo(text)
        assert text.md_button.isChecked()
        text.md_button.click()  # the source
        assert plain.isVisibleTo(text) and not md.isVisibleTo(text)
        text.md_button.click()
        assert md.isVisibleTo(text) and not md.openLinks() and not md.openExternalLinks()
        assert "# Report" not in md.toPlainText() and "Report" in md.toPlainText()
        await result_shot(window, f"calls-markdown-{theme}")
        # image
        rec = await call(window, "render_chart", {"values": [3, 1, 4, 1, 5], "colour": "green"})
        [image] = result_widgets(window, "image")
        assert image.view.image is not None and image.view.info.width == 160
        assert len(result_widgets(window, "text")) == 1
        await result_shot(window, f"calls-image-{theme}")
        # audio
        await call(window, "play_tone", {"frequency": 440, "duration_ms": 500})
        [audio] = result_widgets(window, "audio")
        assert "WAV" in audio.findChild(QLabel, "audioInfo").text() and "0.50 s" in audio.findChild(
            QLabel, "audioInfo").text()
        await result_shot(window, f"calls-audio-{theme}")
        # embedded resources: JSON text highlighted, a PNG blob shown as an image; annotations as badges
        await call(window, "get_config_file", {})
        res = result_widgets(window, "resource")
        assert len(res) == 2
        badges = [b.text() for b in result_widgets(window, "text")[0].badges]
        assert badges == ["for user, assistant", "priority 0.5"]
        assert res[1].findChild(QWidget, "imageLabel") is not None
        await result_shot(window, f"calls-resource-{theme}")
        # resource link, read in place
        await call(window, "find_document", {"query": "welcome"})
        [link] = result_widgets(window, "resource_link")
        assert "uri: demo://" in link.findChild(QLabel, "link:uri").text()
        link.read_button.click()
        await until(lambda: link.contents is not None, 10, "the linked resource to be read")
        assert link.contents.findChild(QPlainTextEdit, "resourceText").toPlainText()
        await result_shot(window, f"calls-resource-link-{theme}")
        # structured content, validated against the outputSchema
        await call(window, "weather", {"city": "Oslo"})
        [structured] = result_widgets(window, "structured")
        assert structured.findChild(QLabel, "structuredValid") is not None
        assert structured.findChild(QLabel, "structuredTextWarning") is None  # the text carries the same JSON
        [text] = result_widgets(window, "text")
        assert text.is_json
        await result_shot(window, f"calls-structured-{theme}")
        # a tool error: "the tool ran and failed"
        rec = await call(window, "divide", {"a": 1, "b": 0})
        assert rec.outcome == "tool error"
        [err] = result_widgets(window, "error")
        assert err.property("errorKind") == "tool"
        assert err.findChild(QLabel, "errorTitle").text() == "The tool ran and failed"
        await result_shot(window, f"calls-tool-error-{theme}")


async def test_validation_first_then_call_anyway_and_rpc_error(open_window):
    async with open_window() as window:
        conn = demo(window)
        await connected(conn)
        select_tool(window, "echo")
        panel = window.tool_detail
        panel.form.set_value({})
        sid = conn.server_id
        button = find(window, QPushButton, "callButton")
        button.click()
        await asyncio.sleep(0.1)
        assert window.calls.records(sid) == []  # not sent: problems first
        assert button.text() == "Call anyway"
        assert "problem" in find(window, QLabel, "callProblems").text()
        button.click()
        await until(lambda: window.calls.records(sid) and not window.calls.records(sid)[-1].running, 10)
        rec = window.calls.records(sid)[-1]
        assert rec.validated_anyway and rec.outcome == "tool error"  # the demo checks arguments itself
        assert "called with arguments that fail the inputSchema" in find(window, QLabel, "resultStatus").text()
        # fixing the form turns the button back into Call
        panel.form.set_value({"message": "hi"})
        await until(lambda: button.text() == "Call", 5)
        # a JSON-RPC error: call a tool the server no longer has (listed as removed) -> -32602
        await conn.session.client.call_tool("toggle_bonus_tool", {})
        await until(lambda: any(t.get("name") == "bonus" for t in conn.session.tools.items), 10)
        await conn.session.client.call_tool("toggle_bonus_tool", {})
        await until(lambda: not any(t.get("name") == "bonus" for t in conn.session.tools.items), 10)
        rec = await call(window, "bonus", {})
        assert rec.outcome == "rejected", rec.outcome
        [err] = result_widgets(window, "error")
        assert err.property("errorKind") == "rejected"
        assert err.findChild(QLabel, "errorTitle").text() == "The request was rejected"
        assert "-32602 Invalid params" in err.findChild(QLabel, "errorCode").text()
        find(window, QWidget, "rawResultButton").click()
        raw_views = window.findChild(QWidget, "resultView").findChildren(QPlainTextEdit, "rawResult")
        assert raw_views and '"code": -32602' in raw_views[0].toPlainText()
        await result_shot(window, "calls-rpc-error-light")

        # fixing the form turns the button back into Call
        panel.form.set_value({"message": "hi"})
        await until(lambda: button.text() == "Call", 5)


async def test_destructive_tools_ask_first_with_the_policy(open_window, settings):
    async with open_window() as window:
        conn = demo(window)
        await connected(conn)
        sid = conn.server_id
        select_tool(window, "delete_item")
        window.tool_detail.form.set_value({"id": "alpha", "confirm": True})
        find(window, QPushButton, "callButton").click()
        dlg = await dialog(window, "confirmDialog")
        assert "delete_item" in dlg.findChild(QLabel).text()
        assert '"alpha"' in dlg.findChild(QPlainTextEdit, "confirmArguments").toPlainText()
        assert "destructiveHint: true" in dlg.findChild(QLabel, "confirmAnnotations").text()
        await dialog_shot(dlg, "calls-confirm-dialog-light")
        click(dlg, "confirmCancel")
        await asyncio.sleep(0.1)
        assert window.calls.records(sid) == []
        find(window, QPushButton, "callButton").click()
        dlg = await dialog(window, "confirmDialog")
        click(dlg, "confirmCall")
        await until(lambda: window.calls.records(sid) and not window.calls.records(sid)[-1].running, 10)
        assert "Deleted 'alpha'" in window.calls.records(sid)[-1].result["content"][0]["text"]
        # never: no dialog; not-read-only: create_event asks too
        settings.setValue(confirm.SETTING, confirm.NEVER)
        rec = await call(window, "delete_item", {"id": "beta"})
        assert rec.outcome == "ok"
        assert confirm.needs_confirmation({"name": "x"}, confirm.NOT_READ_ONLY)
        assert not confirm.needs_confirmation({"name": "x", "annotations": {"readOnlyHint": True}},
                                              confirm.NOT_READ_ONLY)
        # nothing declared: may destroy by the spec's default, so it asks (its badge says "not declared")
        assert confirm.needs_confirmation({"name": "x"}, confirm.DESTRUCTIVE)
        assert not confirm.needs_confirmation({"name": "x", "annotations": {"destructiveHint": False}},
                                              confirm.DESTRUCTIVE)
        settings.setValue(confirm.SETTING, confirm.DESTRUCTIVE)


async def test_progress_cancel_and_several_calls_in_flight(open_window):
    async with open_window() as window:
        a = demo(window)
        b = demo(window)
        await connected(a)
        await connected(b)
        window.select_connection(a)
        rec_a = await call(window, "long_task", {"steps": 40, "step_ms": 100}, wait=False)
        window.select_connection(b)
        rec_b = await call(window, "long_task", {"steps": 3, "step_ms": 50}, wait=False)
        await until(lambda: not rec_b.running, 10, "the short call to finish while the long one runs")
        assert rec_b.outcome == "ok" and rec_a.running
        window.select_connection(a)
        select_tool(window, "long_task")
        await until(lambda: rec_a.progress and rec_a.progress >= 2, 10, "progress")
        bar = find(window, QWidget, "callProgress")
        assert bar.isVisible() and bar.maximum() == 1000 and bar.value() > 0
        status = find(window, QLabel, "callStatus").text()
        assert status.startswith("Running") and "Step" in status
        assert window.tool_detail.cancel_button.isEnabled()
        await result_shot(window, "calls-progress-light")
        find(window, QPushButton, "cancelButton").click()
        await until(lambda: not rec_a.running, 10, "the cancelled call to end")
        assert rec_a.outcome == "cancelled"
        assert window.findChild(QWidget, "resultView").findChild(QLabel, "failureTitle").text() == "Cancelled"
        assert not window.tool_detail.cancel_button.isEnabled()
        # the server was told: notifications/cancelled on the wire (modern stdio: a notification too)
        store = window.store
        await until(lambda: any(store.method(n) == "notifications/cancelled" and store.direction(n) == "out"
                                for n in range(len(store))), 5, "notifications/cancelled in the traffic")


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_elicitation_in_both_eras_reads_as_one_conversation(open_window, mode):
    async with open_window() as window:
        conn = demo(window, mode)
        await connected(conn)
        assert conn.session.era == mode
        rec = await call(window, "ask_user", {}, wait=False)
        dlg = await dialog(window, "elicitationDialog")
        form = dlg.form
        assert form is not None
        form.set_value({"name": "Ada", "colour": "green"})
        await result_shot(window, f"calls-elicitation-{mode}-light")
        await dialog_shot(dlg, f"calls-elicitation-dialog-{mode}-light")
        click(dlg, "elicitAccept")
        await until(lambda: not rec.running, 10, "the call to finish")
        assert rec.outcome == "ok", rec.error_text
        assert "Nice to meet you, Ada" in rec.result["content"][0]["text"]
        assert len(rec.rounds) == 1 and rec.rounds[0].response["action"] == "accept"
        conv = window.findChild(QWidget, "callConversation")
        assert conv is not None and "you chose accept" in " ".join(
            l.text() for l in conv.findChildren(QLabel, "roundAnswer"))
        await result_shot(window, f"calls-conversation-{mode}-light")
        # decline
        rec = await call(window, "ask_user", {}, wait=False)
        click(await dialog(window, "elicitationDialog"), "elicitDecline")
        await until(lambda: not rec.running, 10)
        assert "declined" in rec.result["content"][0]["text"]


async def test_history_rerun_and_copy_as(open_window):
    async with open_window() as window:
        conn = demo(window)
        await connected(conn)
        await call(window, "echo", {"message": "one"})
        await call(window, "weather", {"city": "Oslo"})
        window.tool_detail.result_tabs.setCurrentIndex(1)
        hist = window.tool_detail.history
        assert hist.tree.topLevelItemCount() == 2
        assert hist.tree.topLevelItem(0).text(1) == "weather" and hist.tree.topLevelItem(0).text(3) == "ok"
        hist.tree.setCurrentItem(hist.tree.topLevelItem(1))
        text = hist.copy_as("cli")
        assert text.startswith("spyglass --cli --tool-name echo --tool-args-json") and '"message":"one"' in text
        assert QGuiApplication.clipboard().text() == text
        assert '"method": "tools/call"' in hist.copy_as("jsonrpc")
        assert not hist.copy_actions["curl"].isEnabled()  # stdio server
        await result_shot(window, "calls-history-light")
        find(window, QPushButton, "rerunButton").click()
        await until(lambda: hist.tree.topLevelItemCount() == 3, 5)
        await until(lambda: not recs[-1].running if (recs := window.calls.records(conn.server_id)) else False, 10)
        assert window.calls.records(conn.server_id)[-1].arguments == {"message": "one"}
        # arguments are remembered per server and tool
        select_tool(window, "weather")
        select_tool(window, "echo")
        assert window.tool_detail.form.value() == {"message": "one"}


async def test_per_server_timeout_that_progress_resets_and_ctrl_enter(open_window):
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtTest import QTest

    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), timeout=1.2)
        await connected(conn)
        # progress every 0.3 s keeps a 1.2 s timeout from firing over 3 s
        rec = await call(window, "long_task", {"steps": 10, "step_ms": 300})
        assert rec.outcome == "ok" and rec.elapsed > 2.7
        # one 2 s step without progress: timed out, and said so
        rec = await call(window, "long_task", {"steps": 1, "step_ms": 2000})
        assert rec.outcome == "timeout"
        assert find(window, QLabel, "failureTitle").text() == "No answer in time"
        assert "1.2 s" in find(window, QLabel, "failureMessage").text()
        # Ctrl+Enter in the form calls
        select_tool(window, "echo")
        window.tool_detail.form.set_value({"message": "keyboard"})
        field = window.tool_detail.form.findChild(QWidget, "field:/message")
        window.activateWindow()
        await until(window.isActiveWindow, 5, "the window to be active (shortcuts need it)")
        field.setFocus()
        before = len(window.calls.records(conn.server_id))
        # A real key press through the window. Not from this coroutine: QTest delivers window events
        # synchronously, which would run other tasks' steps inside this one; from a timer it is
        # an ordinary Qt callback between task steps.
        QTimer.singleShot(0, lambda: QTest.keyClick(window.windowHandle(), Qt.Key_Return, Qt.ControlModifier))
        await until(lambda: len(window.calls.records(conn.server_id)) > before, 5, "Ctrl+Enter to call")
        rec = window.calls.records(conn.server_id)[-1]
        await until(lambda: not rec.running, 10)
        assert rec.arguments == {"message": "keyboard"} and rec.outcome == "ok"


def test_a_ticking_chip_repaints_its_row_only(qapp):
    """The running chips tick 10 times a second: only the rows that show one are repainted (a whole list of
    Python-painted rows is a real cost while a server floods the window)."""
    from PySide6.QtCore import QEvent, QObject, Qt
    from PySide6.QtGui import QStandardItem, QStandardItemModel
    from PySide6.QtWidgets import QListView

    from inspector.ui.calls.panel import ToolCallPanel

    model = QStandardItemModel()
    for name in ("a", "b", "c"):
        item = QStandardItem(name)
        item.setData(name, Qt.ItemDataRole.UserRole)
        model.appendRow(item)
    view = QListView()
    view.setModel(model)
    view.resize(200, 200)
    view.show()
    qapp.processEvents()
    painted: list = []

    class Spy(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                painted.append(event.region().boundingRect())
            return False

    spy = Spy()
    view.viewport().installEventFilter(spy)
    ToolCallPanel._repaint_rows(view, {"b"})
    qapp.processEvents()
    assert painted == [view.visualRect(model.index(1, 0))]
    painted.clear()
    ToolCallPanel._repaint_rows(view, set())
    qapp.processEvents()
    assert painted == []
    view.deleteLater()
