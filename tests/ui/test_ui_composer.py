"""The development loop in the real window: the raw composer (`rawComposer`) and Edit and resend
(`resendEditor`) driven by object name against real peers, the ✎ mark and the pairing in the traffic pane,
the `handmade` display filter, and screenshots of both dialogs in both themes."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

from calling import call, connected
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QLabel,
    QListWidget,
    QMenu,
    QPlainTextEdit,
    QPushButton,
)
from uikit import everything_cmd, find, hostile_cmd, shot, until

from inspector.config import ServerSpec
from inspector.ui.traffic.model import COL_DIR


def handmade_rows(window, server_id):
    store = window.store
    return [n for n in sorted(store.columns.handmade) if store.server_id(n) == server_id]


def shown_dir(window, n):
    pane = window.traffic_pane
    row = pane.model.row_of(n)
    assert row is not None, f"#{n} is not shown"
    return pane.model.index(row, COL_DIR).data()


async def status_of(dialog, prefix, *words, timeout=20):
    label = find(dialog, QLabel, f"{prefix}Status")
    try:
        await until(lambda: all(w in label.text() for w in words), timeout, f"the status to say {words}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; it says {label.text()!r}") from None
    return label.text()


async def test_the_raw_composer_sends_what_is_typed_and_the_traffic_pane_marks_and_pairs_it(open_window):
    async with open_window("light") as window:
        conn = window.add_server(ServerSpec(name="hostile", command=hostile_cmd()), mode="legacy")
        await connected(conn)
        window.resize(1300, 900)
        find(window, QAction, "actionRawComposer").trigger()
        dialog = find(window, QDialog, "rawComposer")
        assert dialog.isVisible() and "To hostile · stdio: one line · 2025-11-25" in find(
            dialog, QLabel, "composerTarget").text()
        # a template of the revision: tools/call of the first listed tool, arguments from its schema
        templates = find(dialog, QComboBox, "composerTemplate")
        index = templates.findText("tools/call")
        assert index > 0 and templates.findText("notifications/cancelled") > 0
        templates.setCurrentIndex(index)
        templates.activated.emit(index)
        editor = find(dialog, QPlainTextEdit, "composerText")
        message = json.loads(editor.toPlainText())
        assert message["method"] == "tools/call" and message["params"]["name"] == "echo"
        assert not find(dialog, QCheckBox, "composerByteEscapes").isChecked()
        assert not find(dialog, QPlainTextEdit, "composerHeaders").isVisibleTo(dialog)  # stdio: no headers
        # a warning as it is typed, with its line: never blocking
        editor.setPlainText(editor.toPlainText().replace('"name": "echo"', '"name": 5'))
        problems = find(dialog, QListWidget, "composerProblems")
        await until(lambda: problems.count() and "line" in problems.item(0).text(), 5, "the problems to be listed")
        assert problems.item(0).text().startswith("⚠ line 6, column 13 · /params/name: 5 is not of type")
        editor.setPlainText(editor.toPlainText().replace('"name": 5', '"name": "echo"')
                            .replace('"message": "x"', '"message": "by hand"'))
        dialog.judge()
        assert dialog.problem_texts()[0].startswith("✓")
        QTest.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # Ctrl+Enter sends
        text = await status_of(dialog, "composer", "answered", "a result")
        assert text.startswith("✎1 sent")
        assert "by hand" in find(dialog, QPlainTextEdit, "composerAnswer").toPlainText()
        # the traffic pane: the hand-made request and its answer, marked and paired
        pane, store = window.traffic_pane, window.store
        sent, answer = handmade_rows(window, conn.server_id)[:2]
        assert store.direction(sent) == "out" and store.kind(sent) == "request"
        assert store.pair(sent) == answer and store.kind(answer) == "response"
        await until(lambda: pane.model.row_of(answer) is not None, 5, "the answer's row")
        assert shown_dir(window, sent) == "→ ✎" and shown_dir(window, answer) == "← ✎"
        find(dialog, QPushButton, "composerShowFrame").click()
        assert pane.selected_record() == sent
        header = find(window, QLabel, "trafficDetailHeader").text()
        assert "✎ hand-made #1" in header and "tools/call" in header
        assert pane.model.marked == answer  # its pair is tinted
        await shot(dialog, "composer-light")
        await shot(window, "composer-traffic-light")
        # invalid JSON: sent as typed, the server's parse error (a null id) is its answer, not a malformed frame
        editor.setPlainText("{this is not JSON")
        dialog.judge()
        assert "not JSON" in dialog.problem_texts()[0] and "line 1, column 2" in dialog.problem_texts()[0]
        find(dialog, QPushButton, "composerSend").click()
        await status_of(dialog, "composer", "✎2", "null id")
        rows = handmade_rows(window, conn.server_id)
        assert store.kind(rows[-2]) == "malformed" and store.direction(rows[-2]) == "out"
        assert store.kind(rows[-1]) == "error" and not store.malformed(rows[-1])
        # bytes that are not UTF-8, typed as escapes
        find(dialog, QCheckBox, "composerByteEscapes").setChecked(True)
        editor.setPlainText("\\xff\\xfe{}")
        find(dialog, QPushButton, "composerSend").click()
        await status_of(dialog, "composer", "✎3", "null id")
        assert "not UTF-8" in (store.malformed(handmade_rows(window, conn.server_id)[-2]) or "")
        # the display filter shows the hand-made frames and their answers only
        pane.set_filter_text("handmade")
        await until(lambda: pane.model.rowCount() == len(handmade_rows(window, conn.server_id)), 5,
                    "the filter to show the hand-made frames")
        pane.set_filter_text("")
        # the session goes on: its own requests and calls
        rec = await call(window, "echo", {"message": "after the composer"})
        assert rec.outcome == "ok"
        # in the command palette and the Server menu
        palette = window.open_command_palette()
        assert "Server: Raw composer" in palette.labels()
        palette.close()
        find(dialog, QPushButton, "composerClose").click()
        assert not dialog.isVisible()


async def test_edit_and_resend_from_history_and_the_traffic_pane(open_window):
    async with open_window("dark") as window:
        conn = window.add_server(ServerSpec(name="everything", command=everything_cmd()), mode="legacy")
        await connected(conn, 60)
        window.resize(1300, 900)
        rec = await call(window, "echo", {"message": "first"})
        assert rec.outcome == "ok" and rec.request_id is not None
        history = window.tool_detail.history
        window.tool_detail.result_tabs.setCurrentWidget(history)
        await until(lambda: history.selected() is rec, 5, "the call to be selected in History")
        find(window, QPushButton, "historyResendButton").click()
        dialog = find(window, QDialog, "resendEditor")
        editor = find(dialog, QPlainTextEdit, "resendText")
        request = json.loads(editor.toPlainText())
        assert request["method"] == "tools/call" and request["params"]["arguments"] == {"message": "first"}
        assert request["id"] != rec.request_id  # a fresh id
        assert "progressToken" not in json.dumps(request)  # the original's, not the resend's
        # a problem named where it is, as typed
        editor.setPlainText(editor.toPlainText().replace('"name": "echo"', '"name": 7'))
        await until(lambda: dialog.problem_texts() and "/params/name" in dialog.problem_texts()[0], 5,
                    "a problem at /params/name")
        line = dialog.problem_texts()[0]
        assert line.startswith("⚠ line ") and "is not of type" in line
        await shot(dialog, "resend-editor-dark")
        editor.setPlainText(editor.toPlainText().replace('"name": 7', '"name": "echo"').replace("first", "again"))
        find(dialog, QPushButton, "resendSend").click()
        await status_of(dialog, "resend", "answered", "a result")
        assert "Echo: again" in find(dialog, QPlainTextEdit, "resendAnswer").toPlainText()
        store = window.store
        sent, answer = handmade_rows(window, conn.server_id)
        assert store.pair(sent) == answer and store.request_id(sent) == request["id"]
        assert store.method(answer) == "tools/call"
        # the traffic pane's context menu on the original request: Edit and resend… again
        original = window.composer._request_row(conn.server_id, rec.request_id)
        menu = window.composer.context_menu(original)
        assert menu.objectName() == "trafficContextMenu"
        resend = next(a for a in menu.actions() if a.objectName() == "trafficResend")
        assert resend.isEnabled()
        on_answer = next(n for n in range(len(store)) if store.kind(n) == "response")
        assert not next(a for a in window.composer.context_menu(on_answer).actions()
                        if a.objectName() == "trafficResend").isEnabled()  # only outgoing requests
        resend.trigger()
        again = json.loads(editor.toPlainText())
        assert again["id"] not in (rec.request_id, request["id"]) and again["params"]["arguments"]["message"] == "first"
        status = find(dialog, QLabel, "resendStatus").text()  # what the last one came to is gone
        assert status == f"A fresh id, {again['id']!r} (it was {rec.request_id!r})", status
        find(dialog, QPushButton, "resendSend").click()
        await status_of(dialog, "resend", "✎2", "answered")
        # a call whose request the traffic does not have: built from the call
        built = json.loads(window.composer.resend_call(replace(rec, request_id=None)).text())
        assert built["method"] == "tools/call"
        assert built["params"] == {"name": "echo", "arguments": {"message": "first"}}
        # the context menu itself, as a right click opens it
        pane = window.traffic_pane
        pane.model.refresh()
        rect = pane.view.visualRect(pane.model.index(pane.model.row_of(original), 0))
        pane.view.customContextMenuRequested.emit(rect.center())
        popup = await until(lambda: next((w for w in QApplication.topLevelWidgets() if isinstance(w, QMenu)
                                          and w.objectName() == "trafficContextMenu" and w.isVisible()), None),
                            5, "the context menu")
        popup.close()
        # the same frame in the raw composer, and the composer in the dark theme
        to_composer = next(a for a in menu.actions() if a.objectName() == "trafficToComposer")
        to_composer.trigger()
        composer = find(window, QDialog, "rawComposer")
        assert json.loads(find(composer, QPlainTextEdit, "composerText").toPlainText())["id"] == rec.request_id
        find(composer, QPushButton, "composerFreshId").click()
        fresh = json.loads(find(composer, QPlainTextEdit, "composerText").toPlainText())["id"]
        assert fresh not in (rec.request_id, request["id"], again["id"])
        await shot(composer, "composer-dark")
        # the session keeps working
        rec2 = await call(window, "echo", {"message": "still fine"})
        assert rec2.outcome == "ok" and rec2.request_id not in (request["id"], again["id"], fresh)
        await asyncio.sleep(0)
        composer.close()
        dialog.close()


async def test_a_refused_frame_says_why_and_an_http_composer_shows_its_headers(open_window):
    import http_peers

    with http_peers.sdk() as url:
        async with open_window("light") as window:
            conn = window.add_server(ServerSpec(name="sdk-http", url=url), mode="legacy")
            await connected(conn, 30)
            dialog = window.composer.open_composer()
            headers = find(dialog, QPlainTextEdit, "composerHeaders")
            assert headers.isVisibleTo(dialog)
            assert "Mcp-Session-Id: " in headers.toPlainText() and "MCP-Protocol-Version: 2025-11-25" in \
                headers.toPlainText()
            editor = find(dialog, QPlainTextEdit, "composerText")
            # an id the session is waiting on is refused, naming it
            slow = conn.session.calls.call("slow", {"seconds": 3})
            await until(lambda: slow.request_id is not None, 5, "the slow call's id")
            editor.setPlainText(json.dumps({"jsonrpc": "2.0", "id": slow.request_id, "method": "ping"}))
            find(dialog, QPushButton, "composerSend").click()
            await status_of(dialog, "composer", "Not sent", f"id {slow.request_id} is taken", "tools/call")
            # the headers as edited are what is sent: without the session id, the server refuses the POST
            editor.setPlainText('{"jsonrpc": "2.0", "id": "no-session", "method": "tools/list"}')
            dialog.judge()
            headers.setPlainText("\n".join(line for line in headers.toPlainText().splitlines()
                                           if not line.startswith("Mcp-Session-Id")))
            find(dialog, QPushButton, "composerSend").click()
            await status_of(dialog, "composer", "✎1", "HTTP 400")
            find(dialog, QPushButton, "composerResetHeaders").click()
            assert "Mcp-Session-Id" in headers.toPlainText()
            find(dialog, QPushButton, "composerSend").click()
            await status_of(dialog, "composer", "✎2", "answered", "a result")
            await slow.job
            assert slow.outcome == "ok"  # kept apart from the hand-made frames
            await shot(dialog, "composer-http-light")
            dialog.close()


async def test_edit_and_resend_on_a_2026_07_28_connection_carries_the_sessions_meta(open_window):
    from support import PY, SDK_SERVER

    async with open_window("light") as window:
        conn = window.add_server(ServerSpec(name="sdk", command=[PY, str(SDK_SERVER)]), mode="modern")
        await connected(conn, 30)
        rec = await call(window, "add", {"a": 2, "b": 3})
        assert rec.outcome == "ok"
        dialog = window.composer.resend_call(rec)
        request = json.loads(dialog.text())
        meta = request["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "spyglass" and "progressToken" not in meta
        assert "and the _meta the session sends now" in find(dialog, QLabel, "resendStatus").text()
        assert dialog.problem_texts() == ["✓ nothing in it breaks the 2026-07-28 schema"]
        assert "To sdk · stdio: one line · 2026-07-28" in find(dialog, QLabel, "resendTarget").text()
        find(dialog, QPushButton, "resendSend").click()
        await status_of(dialog, "resend", "✎1", "answered", "a result")
        assert '"result": 5' in find(dialog, QPlainTextEdit, "resendAnswer").toPlainText()
        sent, answer = handmade_rows(window, conn.server_id)
        assert window.store.pair(sent) == answer
        find(dialog, QPushButton, "resendShowFrame").click()
        assert window.traffic_pane.selected_record() == sent
        await shot(dialog, "resend-editor-modern-light")
        dialog.close()
