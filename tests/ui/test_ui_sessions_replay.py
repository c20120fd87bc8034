"""Replay and compare in the window, against real servers: a recorded SDK-peer session replayed against
the same server (every answer the same) and against its next build (`--changed`: echo shouts), a server
that cannot start, Cancel; Compare with… from a session window and from the main window (`version`
added, `add` changed)."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget
from support import PY
from test_ui_sessions import grab, record_session, sdk_spec
from uikit import until

from inspector.ui.base import theme


def steps(dialog) -> list[tuple[str, str]]:
    tree = dialog.findChild(QTreeWidget, "replaySteps")
    return [(tree.topLevelItem(i).text(0), tree.topLevelItem(i).text(2)) for i in range(tree.topLevelItemCount())]


async def finished(dialog, what: str, timeout: float = 60):
    await until(lambda: dialog.task is not None and dialog.task.done(), timeout, what)


async def test_replay_against_the_same_server_and_the_next_build(open_window, tmp_path, qapp):
    path = await record_session(tmp_path / "sdk.sqlite", demo=False)
    async with open_window() as window:
        changed = window.add_server(sdk_spec("--changed", name="sdk next"), connect=False)
        win = window.sessions.open_path(path)
        dialog = win.replay_dialog()
        assert dialog.objectName() == "replayDialog"
        targets = [dialog.target.itemText(i) for i in range(dialog.target.count())]
        assert targets[0].startswith("As recorded: ") and "sdk next (in the window)" in targets[1]
        assert targets[-1] == "A command or URL…" and not dialog.command.isEnabled()
        # the recorded definition: the same server answers the same
        dialog.run()
        assert dialog.busy.isVisibleTo(dialog) and dialog.cancel_button.isEnabled()
        await finished(dialog, "the replay against the recorded server")
        report = dialog.report
        assert report is not None and not report.differs, report.text()
        assert {m for m, _ in steps(dialog)} == {"✓"} and len(steps(dialog)) >= 5  # listings and the five calls
        assert "every answer is the same" in dialog.status.text()
        # the next build, one of the window's servers: echo differs at /content/0/text
        dialog.target.setCurrentIndex(1)
        dialog.run()
        await finished(dialog, "the replay against --changed")
        report = dialog.report
        assert report.differs
        marks = dict((label, mark) for mark, label in steps(dialog))
        assert marks["tools/call echo"] == "✗" and marks["tools/call add"] == "✓"
        results = dialog.findChild(QTreeWidget, "replayChanges")
        assert dialog.results.steps.currentItem().text(2) == "tools/list"  # the first difference: a new tool
        assert dialog.results.select("tools/call echo")
        paths = results.paths()
        assert "/content/0/text" in paths
        change = results.topLevelItem(paths.index("/content/0/text")).data(0, Qt.UserRole)
        assert (change["a"], change["b"]) == ("hello", "HELLO")
        assert "/content/0/text" in dialog.results.columns.a.marked
        assert "/content/0/text" in dialog.results.columns.b.marked
        await grab(dialog, "replay-view-light")
        # ignoring what differs makes it the same
        results.setCurrentItem(results.topLevelItem(paths.index("/content/0/text")))
        dialog.findChild(type(dialog.run_button), "replayIgnorePath").click()
        assert "/content/0/text" in dialog.ignore.toPlainText()
        dialog.ignore.setPlainText("/content/0/text\n/structuredContent/result")
        dialog.run()
        await finished(dialog, "the replay with ignores")
        marks = dict((label, mark) for mark, label in steps(dialog))
        assert marks["tools/call echo"] == "✓" and marks["tools/list"] == "✗"  # the new tool is still new
        # a pointer that is none is said, nothing runs
        dialog.ignore.setPlainText("content/0/text")
        assert dialog.run() is None and "not a JSON pointer" in dialog.status.text()
        dialog.close()
        theme.apply_theme(qapp, "dark")
        dark = win.replay_dialog()
        dark.target.setCurrentIndex(1)
        dark.run()
        await finished(dark, "the dark replay")
        await grab(dark, "replay-view-dark")
        dark.close()
        assert changed.session.client is None  # the window's own connection was never used


async def test_replay_says_what_went_wrong_and_cancels(open_window, tmp_path):
    path = await record_session(tmp_path / "sdk.sqlite", demo=False)
    async with open_window() as window:
        win = window.sessions.open_path(path)
        dialog = win.replay_dialog()
        dialog.target.setCurrentIndex(dialog.target.count() - 1)
        assert dialog.command.isEnabled()
        assert dialog.run() is None and "type a command" in dialog.status.text()
        dialog.command.setText(str(tmp_path / "no-such-server"))
        dialog.run()
        await finished(dialog, "the failed start")
        assert "Could not replay" in dialog.status.text() and dialog.report is None
        assert dialog.run_button.isEnabled() and not dialog.busy.isVisibleTo(dialog)
        await grab(dialog, "replay-view-error")
        # a server that never answers: Cancel stops the replay and closes it
        dialog.command.setText(f"{PY} -c \"import time; time.sleep(60)\"")
        dialog.run()
        await until(lambda: "Replaying" in dialog.status.text(), 5, "the replay to start")
        await asyncio.sleep(1.0)  # the process runs, the handshake waits
        dialog.cancel()
        await finished(dialog, "the cancelled replay", 15)
        assert "Cancelled" in dialog.status.text()
        # closing the main window stops a replay still running (and the server it started)
        dialog.run()
        await asyncio.sleep(1.0)
        task = dialog.task
        window.close()
        await until(task.done, 15, "the replay to stop with the window")
        assert task.cancelled()


async def test_compare_with_the_next_build(open_window, tmp_path, qapp):
    path = await record_session(tmp_path / "sdk.sqlite", demo=False)
    async with open_window() as window:
        window.add_server(sdk_spec("--changed", name="sdk next"), connect=False)
        win = window.sessions.open_path(path)
        dialog = win.compare_dialog()
        assert dialog.objectName() == "compareDialog"
        assert dialog.other.currentText().startswith("sdk next — live")
        dialog.run()
        await finished(dialog, "the comparison")
        view = dialog.view
        assert view.objectName() == "compareView" and dialog.report is not None and not dialog.report["same"]
        tools = view.entry_names("tools")
        assert tools["added"] == ["version"] and "add" in tools["changed"] and "echo" not in tools["changed"]
        assert view.select_entry("tools", "add")
        paths = view.changes.paths()
        assert any(p.startswith("/inputSchema/properties/c") for p in paths), paths
        assert "/description" in paths
        assert "/description" in view.columns.a.marked and "/description" in view.columns.b.marked
        await grab(dialog, "compare-view-light")
        tools_section = next(view.tree.topLevelItem(i) for i in range(view.tree.topLevelItemCount())
                             if view.tree.topLevelItem(i).data(0, Qt.UserRole) == ("listing", "tools"))
        view.tree.setCurrentItem(tools_section)  # the whole listing, by name, each difference marked
        assert "/version" in view.columns.b.marked and "/version" not in view.columns.a.marked
        assert "/add/description" in view.columns.a.marked and "/add/description" in view.columns.b.marked
        assert view.select_entry("tools", "version")
        assert view.columns.a.view.toPlainText() == "(A does not have it)"
        assert view.columns.b.marked == [""]
        dialog.close()
        # from the main window: the selected live server against a session file's server
        window.select_connection(window.connections()[0])
        from_main = window.sessions.compare_dialog()
        assert from_main.side_a.live is not None
        from_main.add_file(str(path))
        assert from_main.other.currentData().surface is not None
        theme.apply_theme(qapp, "dark")
        from_main.run()
        await finished(from_main, "the comparison from the main window")
        names = from_main.view.entry_names("tools")
        assert names["removed"] == ["version"] and "add" in names["changed"]
        from_main.view.select_entry("tools", "add")
        await grab(from_main, "compare-view-dark")
        from_main.close()
