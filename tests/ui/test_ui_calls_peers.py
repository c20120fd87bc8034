"""Calling tools in the real window against real peers: server-everything (every tool through the form,
sampling and elicitation dialogs with the capabilities declared, progress and cancel), the Python SDK
server in both eras (MRTR elicitation), and the hostile server's odd content and 20 MB reply."""

from __future__ import annotations

import asyncio
import time

import pytest
import shiboken6
from calling import (
    call,
    click,
    connected,
    dialog,
    dialog_shot,
    result_shot,
    result_widgets,
    select_tool,
    shown_in_result,
)
from PySide6.QtWidgets import QApplication, QCheckBox, QDialog, QLabel, QListView, QPlainTextEdit, QPushButton, QWidget
from support import PY, SDK_SERVER, SLOWDOWN
from test_client_everything import ARGS, elicitation, fill_required
from uikit import demo_cmd, everything_cmd, find, hostile_cmd, row_of, until

from inspector.config import ServerSpec
from inspector.ui.base.items import BADGES_ROLE
from inspector.ui.calls import confirm


class DialogAnswerer:
    """Answers every dialog the calls open, as a user would, and remembers which ones appeared."""

    def __init__(self, window) -> None:
        self.window = window
        self.seen: list[str] = []
        self.shots: set[str] = set()
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            for w in QApplication.topLevelWidgets():
                if (
                    isinstance(w, QDialog)
                    and shiboken6.isValid(w)
                    and w.isVisible()
                    and w.result() == 0
                    and not getattr(w, "_answered", False)
                ):
                    w._answered = True
                    self.seen.append(w.objectName())
                    await asyncio.sleep(0.05)
                    await self.answer(w)
            await asyncio.sleep(0.05)

    async def answer(self, w: QDialog) -> None:
        name = w.objectName()
        if name not in self.shots:
            self.shots.add(name)
            await dialog_shot(w, f"calls-everything-{name}-light")
        if name == "confirmDialog":
            click(w, "confirmCall")
        elif name == "samplingDialog":
            w.findChild(QPlainTextEdit, "samplingReply").setPlainText("hi from the person at the keyboard")
            click(w, "samplingSend")
        elif name == "elicitationDialog":
            if w.form is not None:
                content = (await elicitation(w_params(w)))["content"]
                for key, prop in (w.form.schema.get("properties") or {}).items():
                    fmt = {
                        "email": "ada@example.com",
                        "uri": "https://example.com/ada",
                        "date": "1990-12-10",
                        "date-time": "1990-12-10T10:00:00Z",
                    }.get(prop.get("format"))
                    if fmt:
                        content[key] = fmt
                w.form.set_value(content)
            click(w, "elicitAccept")
            await asyncio.sleep(0.05)
            if shiboken6.isValid(w) and w.isVisible():  # the form refused: say why, then decline so the test goes on
                self.seen.append("refused: " + w.findChild(QLabel, "elicitProblem").text() + repr(w.form.errors()))
                click(w, "elicitDecline")
        else:
            w.reject()

    async def stop(self) -> None:
        self.task.cancel()
        try:
            await self.task
        except asyncio.CancelledError:
            pass


def w_params(w):
    return {"requestedSchema": w.form.schema}


async def test_server_everything_every_tool_through_the_form(open_window, settings):
    settings.setValue(confirm.SETTING, confirm.NOT_READ_ONLY)  # the strictest: many confirmations
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="everything", command=everything_cmd()))
        await connected(conn, 60)
        names = [t["name"] for t in conn.session.tools.items]
        # sampling and elicitation were declared: the server offers its client-feature tools
        assert {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} <= set(names)
        answerer = DialogAnswerer(window)
        kinds: set[str] = set()
        try:
            for tool in list(conn.session.tools.items):
                name = tool["name"]
                args = ARGS.get(name, fill_required(tool.get("inputSchema", {})))
                rec = await call(window, name, args, timeout=60)
                assert rec.outcome == "ok", (name, rec.outcome, rec.error_text, rec.result)
                if (tool.get("execution") or {}).get("taskSupport") == "required":  # ran as a task
                    assert rec.task_id and rec.task_status == "completed", name
                    assert shown_in_result(window, QWidget, "callTask")
                for kind in ("text", "image", "audio", "resource", "resource_link", "structured", "unknown"):
                    if result_widgets(window, kind):
                        kinds.add(kind)
                assert not result_widgets(window, "unknown"), name
                if name == "get-tiny-image":
                    [img] = result_widgets(window, "image")
                    assert img.view.image is not None
                    await result_shot(window, "calls-everything-image-light")
                if name == "get-annotated-message":
                    badges = [b.text() for w in result_widgets(window, "text") for b in w.badges]
                    assert any(b.startswith("priority") for b in badges) and any(b.startswith("for ") for b in badges)
                    await result_shot(window, "calls-everything-annotated-light")
                if name == "get-structured-content":
                    [s] = result_widgets(window, "structured")
                    assert s.findChild(QLabel, "structuredValid") is not None
                    await result_shot(window, "calls-everything-structured-light")
                if name == "get-resource-links":
                    links = result_widgets(window, "resource_link")
                    assert len(links) == 2
                    links[0].read_button.click()
                    await until(lambda: links[0].contents is not None, 10, "the link to be read")
                    await result_shot(window, "calls-everything-resource-links-light")
                if name == "get-resource-reference":
                    assert result_widgets(window, "resource")
                    await result_shot(window, "calls-everything-resource-light")
                if name == "trigger-sampling-request":
                    assert "hi from the person at the keyboard" in str(rec.result)
                    assert [r.method for r in rec.rounds] == ["sampling/createMessage"]
                    await result_shot(window, "calls-everything-sampling-light")
                if name == "trigger-elicitation-request":
                    assert [r.method for r in rec.rounds] == ["elicitation/create"]
                    assert rec.rounds[0].response["action"] == "accept"
                    await result_shot(window, "calls-everything-elicitation-light")
                if name == "trigger-long-running-operation":
                    assert rec.progress is not None and rec.total
        finally:
            await answerer.stop()
        assert {"text", "image", "resource", "resource_link", "structured"} <= kinds
        assert {"samplingDialog", "elicitationDialog", "confirmDialog"} <= set(answerer.seen)
        # long-running with progress, then cancel
        settings.setValue(confirm.SETTING, confirm.NEVER)
        rec = await call(window, "trigger-long-running-operation", {"duration": 30, "steps": 30}, wait=False)
        await until(lambda: rec.progress, 15, "progress from the server")
        assert find(window, QWidget, "callProgress").isVisible()
        await result_shot(window, "calls-everything-progress-light")
        find(window, QPushButton, "cancelButton").click()
        await until(lambda: not rec.running, 10)
        assert rec.outcome == "cancelled"
        rec = await call(window, "echo", {"message": "still alive"})
        assert rec.outcome == "ok"


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_sdk_server_both_eras(open_window, mode):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="sdk", command=[PY, str(SDK_SERVER)]), mode=mode)
        await connected(conn, 60)
        assert conn.session.era == mode
        rec = await call(window, "add", {"a": 2, "b": 3})
        assert rec.result["structuredContent"] == {"result": 5}
        assert result_widgets(window, "structured")
        rec = await call(window, "fail", {})
        assert rec.outcome == "tool error"
        rec = await call(window, "tone", {})
        [audio] = result_widgets(window, "audio")
        info = audio.findChild(QLabel, "audioInfo").text()
        assert "WAV" in info and "0.25 s" in info and "8,000 Hz" in info
        await result_shot(window, f"calls-sdk-audio-{mode}-light")
        rec = await call(window, "slow", {"seconds": 0.3})
        assert rec.outcome == "ok" and rec.progress is not None
        rec = await call(window, "ask_name", {}, wait=False)
        dlg = await dialog(window, "elicitationDialog")
        dlg.form.set_value({"name": "Ada"})
        click(dlg, "elicitAccept")
        await until(lambda: not rec.running, 15)
        assert rec.outcome == "ok" and "Hello, Ada!" in str(rec.result)
        assert len(rec.rounds) == 1
        assert window.findChild(QWidget, "callConversation") is not None
        await result_shot(window, f"calls-sdk-mrtr-{mode}-light")
        # cancel the elicitation: the server gets action "cancel"
        rec = await call(window, "ask_name", {}, wait=False)
        click(await dialog(window, "elicitationDialog"), "elicitCancel")
        await until(lambda: not rec.running, 15)
        assert rec.rounds[0].response == {"action": "cancel"}


@pytest.mark.parametrize("theme", ["light", "dark"])
async def test_hostile_odd_content_is_refused_with_messages(open_window, theme):
    async with open_window(theme) as window:
        conn = window.add_server(ServerSpec(name="hostile", command=hostile_cmd("odd-content")))
        await connected(conn)
        rec = await call(window, "echo", {"message": "hi"})
        assert rec.outcome == "ok"
        [unknown] = result_widgets(window, "unknown")
        assert "hologram" in unknown.findChild(QLabel, "unknownWarning").text()
        bad, bomb = result_widgets(window, "image")
        assert bad.view.image is None and "not valid base64" in bad.view.error
        assert bomb.view.image is None and "60000×60000" in bomb.view.error
        await result_shot(window, f"calls-odd-content-{theme}")


async def test_hostile_20_mb_text_previews_at_once_without_stalling(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="hostile", command=hostile_cmd("big-reply", "20")))
        await connected(conn)
        gaps: list[float] = []
        measuring = [False]

        async def ticker():
            # The gap between two turns of the loop, in CPU time of this thread: the work done without
            # letting the loop turn. (Wall time would also count the machine being busy with other
            # processes, which is not a stall of ours; it is reported beside.)
            # A gap counts only when the same phase was on at both ends (not the test's own screenshot).
            last, last_wall, last_phase = time.thread_time(), time.perf_counter(), False
            while True:
                await asyncio.sleep(0.005)
                now, wall = time.thread_time(), time.perf_counter()
                if measuring[0] and measuring[0] == last_phase:
                    gaps.append((now - last, wall - last_wall, measuring[0]))
                last, last_wall, last_phase = now, wall, measuring[0]

        tick = asyncio.ensure_future(ticker())
        try:
            rec = await call(window, "echo", {"message": "hi"}, wait=False)
            await until(lambda: not rec.running, 60, "the 20 MB answer")
            # from the moment the answer is in: rendering the preview, then "show all", never stall
            measuring[0] = "preview"
            await until(lambda: result_widgets(window, "text"), 5)
            [text] = result_widgets(window, "text")
            view = text.view
            assert not view.fully_shown() and view.more.isVisibleTo(text)
            assert len(view.text()) < 100_000
            measuring[0] = False  # (a screenshot is not the app's work)
            await result_shot(window, "calls-big-reply-preview-light")
            measuring[0] = "show all"
            await asyncio.sleep(0.02)
            find(text, QWidget, "showAllButton").click()
            await until(view.fully_shown, 60, "the whole text to load")
            await asyncio.sleep(0.1)
            measuring[0] = False
        finally:
            tick.cancel()
        assert len(view.full) == 20 * 1024 * 1024
        assert view.edit.document().characterCount() >= 20 * 1024 * 1024
        worst, wall, phase = max(gaps)
        # A freeze a user would notice; the 100 ms goal itself is measured by bench/big_text.py.
        assert worst < 0.25 * SLOWDOWN, \
            f"the event loop stalled {worst * 1000:.0f} ms ({wall * 1000:.0f} ms wall) during {phase}"
        await result_shot(window, "calls-big-reply-all-light")


@pytest.mark.parametrize("theme", ["light", "dark"])
async def test_server_everything_task_tool_runs_as_a_task_asks_for_input_and_cancels(open_window, theme):
    async with open_window(theme) as window:
        conn = window.add_server(ServerSpec(name="everything", command=everything_cmd()))
        await connected(conn, 60)
        tools = find(window, QListView, "toolList")
        assert "task" in row_of(tools, "simulate-research-query").data(BADGES_ROLE)
        assert "task" not in row_of(tools, "echo").data(BADGES_ROLE)
        select_tool(window, "echo")
        box = find(window, QCheckBox, "runAsTask")
        assert box.isHidden()  # echo cannot run as a task: no box
        select_tool(window, "simulate-research-query")
        assert box.isVisible() and box.isChecked() and not box.isEnabled()
        assert "runs only as a task" in find(window, QLabel, "toolName").text()
        answerer = DialogAnswerer(window)
        try:
            rec = await call(window, "simulate-research-query", {"topic": "python", "ambiguous": True}, wait=False)
            await until(lambda: "task working" in find(window, QLabel, "callStatus").text(), 20,
                        "the task to show it works")
            await until(lambda: not rec.running, 60, "the task to end")
        finally:
            await answerer.stop()
        assert rec.outcome == "ok", (rec.error_text, rec.result)
        assert "elicitationDialog" in answerer.seen and "elicitation/create" in [r.method for r in rec.rounds]
        assert not [s for s in answerer.seen if s.startswith("refused")], answerer.seen
        statuses = [status for _secs, status, _msg in rec.task_trail]
        assert statuses[0] == "working" and "input_required" in statuses and statuses[-1] == "completed"
        [box] = shown_in_result(window, QWidget, "taskTrail")
        trail = "\n".join(label.text() for label in box.findChildren(QLabel, "taskState"))
        assert "input required: Found multiple interpretations" in trail and "completed" in trail
        assert "python (programming)" in text_of_result(window)
        assert [w.text() for w in shown_in_result(window, QLabel, "taskTitle")] == [f"Ran as task {rec.task_id}"]
        assert "Research Report: python" in text_of_result(window)
        await result_shot(window, f"calls-task-{theme}")
        # Cancel while it works: tasks/cancel goes out and the call ends as cancelled. Wait for what the
        # user sees (the status line, then the failure), never for the record's own flags: under a slow
        # machine (coverage) the result view is drawn a little after the record ends.
        rec = await call(window, "simulate-research-query", {"topic": "otters"}, wait=False)
        status = find(window, QLabel, "callStatus")
        await until(lambda: "task working" in status.text(), 20, "the second task to show it works")
        find(window, QPushButton, "cancelButton").click()

        def failure_shown() -> list:
            return [w for w in shown_in_result(window, QLabel, "failureMessage")
                    if w.text().endswith("tasks/cancel was sent")]
        await until(failure_shown, 15, "the cancellation to be shown")
        assert rec.outcome == "cancelled" and "tasks/cancel was sent" in rec.error_text
        store = window.store
        await until(
            lambda: any(
                store.method(n) == "tasks/cancel" and store.direction(n) == "out" and rec.task_id in store.text(n)
                for n in range(len(store))
            ),
            10,
            "tasks/cancel on the wire",
        )


async def test_an_optional_task_runs_as_one_when_ticked_and_survives_an_eager_tasks_result(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="hostile", command=hostile_cmd("task-eager-result")))
        await connected(conn)
        assert "task optional" in row_of(find(window, QListView, "toolList"), "echo").data(BADGES_ROLE)
        select_tool(window, "echo")
        box = find(window, QCheckBox, "runAsTask")
        assert box.isVisible() and box.isEnabled() and not box.isChecked()
        rec = await call(window, "echo", {"message": "plain"})
        assert rec.outcome == "ok" and rec.task_id is None  # unticked: an ordinary call
        box.setChecked(True)
        rec = await call(window, "echo", {"message": "as a task"})
        assert rec.outcome == "ok" and rec.task_id == "task-1", rec.error_text
        [text] = result_widgets(window, "text")
        assert text.view.text() == "done after 3 polls"
        hist = window.tool_detail.history
        window.tool_detail.result_tabs.setCurrentIndex(1)
        hist.tree.setCurrentItem(hist.tree.topLevelItem(0))  # the newest call
        assert hist.copy_as("cli").startswith("spyglass --cli --tool-name echo --task ")
        assert '"task": {}' in hist.copy_as("jsonrpc")


def text_of_result(window) -> str:
    return "\n".join(w.view.text() for w in result_widgets(window, "text"))


async def test_tasks_tab_lists_the_servers_tasks_fetches_a_result_and_cancels(open_window):
    from PySide6.QtWidgets import QTreeWidget

    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="everything", command=everything_cmd()))
        await connected(conn, 60)
        pane = window.tasks_pane
        window.tabs.setCurrentWidget(pane)
        tree = find(pane, QTreeWidget, "taskList")
        assert tree.topLevelItemCount() == 0 and pane.available() == (True, "")
        # a task started from the Tools tab shows up here, running, then completed
        first = await call(window, "simulate-research-query", {"topic": "owls"}, wait=False)
        await until(lambda: first.task_id, 20, "the task to be created")
        window.tabs.setCurrentWidget(pane)

        def row_status(tid):
            for i in range(tree.topLevelItemCount()):
                if tree.topLevelItem(i).text(0) == tid:
                    return tree.topLevelItem(i).text(1)
            return None

        await until(lambda: row_status(first.task_id) == "working", 10, "the running task in the list")
        await until(lambda: row_status(first.task_id) == "completed", 30, "the list to show it completed")
        assert pane.select(first.task_id)
        assert '"status": "completed"' in find(pane, QWidget, "taskDetail").toPlainText()
        find(pane, QPushButton, "taskResultButton").click()
        await until(lambda: pane.result is not None, 10, "tasks/result")
        [text] = [w for w in find(pane, QWidget, "taskResult").blocks("text")]
        assert "Research Report: owls" in text.view.text()
        assert not find(pane, QLabel, "tasksMessage").isVisible()  # nothing to say: connected, tasks listed
        assert pane.split.isVisible() and not pane.empty.isVisible()  # the list, not the empty state
        await result_shot(window, "tasks-tab-light")
        # another one, cancelled from here
        second = await call(window, "simulate-research-query", {"topic": "bats"}, wait=False)
        await until(lambda: second.task_id, 20, "the second task")
        window.tabs.setCurrentWidget(pane)
        pane.refresh()
        await until(lambda: pane.select(second.task_id), 10, "the second task in the list")
        cancel = find(pane, QPushButton, "tasksCancel")
        assert cancel.isEnabled() and find(pane, QPushButton, "taskResultButton").text() == "Wait for result"
        cancel.click()
        await until(lambda: row_status(second.task_id) == "cancelled", 10, "the task cancelled")
        assert "cancelled" in find(pane, QLabel, "tasksMessage").text()


async def test_tasks_tab_says_why_a_server_has_no_task_list(open_window):
    async with open_window() as window:
        window.tabs.setCurrentWidget(window.tasks_pane)
        pane = window.tasks_pane
        assert find(window.tasks_pane, QLabel, "tasksEmptyText").text() == "Select a server to see its tasks."
        modern = window.add_server(ServerSpec(name="demo", command=demo_cmd()), mode="modern")
        await connected(modern)
        window.select_connection(modern)
        await until(
            lambda: (
                "this connection uses 2026-07-28, which has none"
                in find(window.tasks_pane, QLabel, "tasksEmptyText").text()
            ),
            5,
            "the modern note",
        )
        legacy = window.add_server(ServerSpec(name="demo legacy", command=demo_cmd()), mode="legacy")
        await connected(legacy)
        window.select_connection(legacy)
        await until(
            lambda: (
                "does not list its tasks (no tasks.list capability)"
                in find(window.tasks_pane, QLabel, "tasksEmptyText").text()
            ),
            5,
            "the no-capability note",
        )
        assert not find(window.tasks_pane, QPushButton, "tasksRefresh").isEnabled()
        # the why takes the place of an empty table and detail, said once (not also above them)
        assert pane.empty.isVisible() and not pane.split.isVisible()
        assert not find(pane, QLabel, "tasksMessage").isVisible()
        assert find(pane, QLabel, "tasksEmptyTitle").text() == "No task list"
        assert not find(pane, QPushButton, "tasksEmptyRefresh").isVisible()
