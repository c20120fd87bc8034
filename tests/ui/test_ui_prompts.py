"""Issue 7 in the window: prompts (form, completions with context, rendered messages) and logging controls.

Against the demo server (both eras), server-everything (its four prompts, the completable one, logging),
the mcp 2.x SDK peer (both eras) and the bad-input server."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QListView, QPushButton, QTreeView, QWidget
from support import SDK_SERVER
from test_ui_resources import BAD, ready, text_of
from uikit import demo_cmd, everything_cmd, find, row_of, rows, shot, until

from inspector.config import ServerSpec
from inspector.ui.base.items import CHANGE_ROLE, FLAGS_ROLE


def arg(window, name: str) -> QLineEdit:
    return find(window.prompts_pane.form, QLineEdit, f"arg:{name}")


async def typed(window, name: str, text: str, expect, what: str) -> list[str]:
    """Type into a prompt argument and wait for the suggestions (debounced completion/complete)."""
    form = window.prompts_pane.form
    form.debounce_ms = 10
    field = arg(window, name)
    field.setFocus()
    field.setText(text)
    field.textEdited.emit(text)
    await until(lambda: expect(form.suggestions(name)), 10, what)
    return form.suggestions(name)


async def get(window, what: str) -> None:
    pane = window.prompts_pane
    button = find(window, QPushButton, "getPromptButton")
    assert button.isEnabled(), button.toolTip()
    before = pane.last_result
    button.click()
    await until(lambda: pane.last_result is not before and pane.cards and what in text_of(pane.messages), 15,
                f"prompts/get to show {what!r} (status: {pane.status.text()})")


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_demo_prompts_form_completions_and_messages(open_window, mode):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), mode=mode)
        await ready(conn)
        window.tabs.setCurrentWidget(window.prompts_pane)
        prompts = find(window, QListView, "promptList")
        assert rows(prompts) == ["greeting", "code_review"]
        assert row_of(prompts, "greeting").data(Qt.DisplayRole) == "Friendly greeting"
        window.prompts_pane.select("greeting")
        form = find(window, QWidget, "promptForm")
        assert find(form, QLabel, "argLabel:name").text() == "Name *"  # required marked
        assert find(form, QLabel, "argLabel:style").text() == "Style"
        assert find(form, QLabel, "argHelp:name").text() == "Who should be greeted"
        button = find(window, QPushButton, "getPromptButton")
        assert not button.isEnabled() and "name" in button.toolTip()  # a required argument is empty
        assert await typed(window, "style", "p", lambda v: v == ["pirate"], "style completions") == ["pirate"]
        arg(window, "style").setText("pirate")
        arg(window, "name").setText("Ada")
        await get(window, "Ahoy, Ada!")
        pane = window.prompts_pane
        assert [c.role for c in pane.cards] == ["user", "assistant"]
        assert all(c.view.blocks("text") for c in pane.cards)
        # code_review: a completion list, and an embedded resource rendered as a resource block
        pane.select("code_review")
        await typed(window, "language", "py", lambda v: v == ["python"], "language completions")
        arg(window, "language").setText("python")
        arg(window, "code").setText("def f():\n    return 1")
        await get(window, "Please review this python code")
        assert [c.role for c in pane.cards] == ["user", "user", "assistant"]
        assert pane.cards[1].view.blocks("resource"), "the style guide is an embedded resource block"
        await shot(window, f"prompts-{mode}-light")


async def test_prompts_dark_screenshot(open_window):
    async with open_window("dark") as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await ready(conn)
        window.tabs.setCurrentWidget(window.prompts_pane)
        window.prompts_pane.select("greeting")
        await typed(window, "style", "", lambda v: len(v) == 3, "style completions")
        arg(window, "name").setText("Grace")
        arg(window, "style").setText("formal")
        await get(window, "Good day, Grace.")
        await shot(window, "prompts-dark")


async def test_everything_prompts_and_completion_context(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="everything", command=everything_cmd()))
        sent = []
        conn.session.traffic = lambda frame, orig=conn.session.traffic: (sent.append(frame), orig and orig(frame))
        await ready(conn)
        window.tabs.setCurrentWidget(window.prompts_pane)
        pane = window.prompts_pane
        assert rows(find(window, QListView, "promptList")) == ["simple-prompt", "args-prompt", "completable-prompt",
                                                              "resource-prompt"]
        pane.select("simple-prompt")
        assert find(pane.form, QLabel, "argumentFormEmpty").isVisible()
        await get(window, "This is a simple prompt without arguments.")
        pane.select("args-prompt")
        assert find(pane.form, QLabel, "argLabel:city").text() == "city *"
        assert not find(pane.form, QLabel, "argHelp:state").isVisible()  # optional, undescribed: no help line
        arg(window, "city").setText("Paris")
        await get(window, "Paris")
        # the completable prompt: the department narrows the names (context.arguments sent along)
        pane.select("completable-prompt")
        await typed(window, "department", "", lambda v: "Engineering" in v, "department completions")
        arg(window, "department").setText("Sales")
        names = await typed(window, "name", "", lambda v: v and "Alice" not in v, "names for Sales")
        assert names == ["David", "Eve", "Frank"]
        assert any(b'"context":{"arguments":{"department":"Sales"}}' in f.data.replace(b" ", b"")
                   for f in sent if f.direction == "out")
        arg(window, "name").setText("Eve")
        await get(window, "Eve")
        # a prompt embedding a resource
        pane.select("resource-prompt")
        arg(window, "resourceType").setText("Text")
        arg(window, "resourceId").setText("2")
        await get(window, "Resource 2")
        assert pane.cards[1].view.blocks("resource")


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_sdk_peer_prompt_both_eras(open_window, mode):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="sdk", command=[sys.executable, str(SDK_SERVER)]), mode=mode)
        await ready(conn)
        window.tabs.setCurrentWidget(window.prompts_pane)
        window.prompts_pane.select("review")
        assert find(window.prompts_pane.form, QLabel, "argLabel:code").text().endswith("*")
        arg(window, "code").setText("print('hi')")
        await get(window, "print('hi')")
        assert [c.role for c in window.prompts_pane.cards] == ["user"]


async def test_required_argument_without_description_and_list_changed(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="bad", command=BAD))
        await ready(conn)
        window.tabs.setCurrentWidget(window.prompts_pane)
        prompts = find(window, QListView, "promptList")
        assert "required argument 'x' is not described" in row_of(prompts, "undescribed").data(FLAGS_ROLE)
        window.prompts_pane.select("undescribed")
        help_label = find(window.prompts_pane.form, QLabel, "argHelp:x")
        assert help_label.text() == "Required by the server, which does not say what it is."
        assert "not described" in find(window, QLabel, "promptStatus").text()
        arg(window, "x").setText("42")
        await get(window, "x=42")  # this server's prompts/get also changes its lists
        await until(lambda: "extra" in rows(prompts), 10, "the re-listed prompts")
        assert row_of(prompts, "extra").data(CHANGE_ROLE) == "new"
        assert "1 new" in find(window, QLabel, "promptCount").text()


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_log_level_control_and_filters(open_window, mode):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), mode=mode)
        sent = []
        conn.session.traffic = lambda frame, orig=conn.session.traffic: (sent.append(frame), orig and orig(frame))
        await ready(conn)
        window.log_dock.raise_()
        level = find(window, QComboBox, "logLevel")
        assert level.isEnabled() and level.currentText() == "server default"
        level.setCurrentIndex(level.findData("warning"))
        level.activated.emit(level.currentIndex())
        await until(lambda: conn.session.health.log_level == "warning", 10, "the log level")
        if mode == "legacy":
            assert any(f.direction == "out" and b'"logging/setLevel"' in f.data and b'"warning"' in f.data
                       for f in sent)
        else:
            assert conn.session.client.session.log_level == "warning"
        await conn.session.client.call_tool("log_demo", {})
        log = find(window, QTreeView, "serverLog")
        await until(lambda: [e for e in conn.session.log if e.level == "error"], 10, "log messages")
        levels = {e.level for e in conn.session.log if e.logger and e.logger != "spyglass"}
        assert "info" not in levels and "debug" not in levels and {"warning", "error"} <= levels
        # the pane's filters: level and logger
        window.log_controls.show_level.setCurrentIndex(window.log_controls.show_level.findData("error"))
        await until(lambda: "ERROR" in log.toPlainText() and "WARNING" not in log.toPlainText(), 5, "the level filter")
        window.log_controls.logger.setText("no-such-logger")
        await until(lambda: "ERROR" not in log.toPlainText(), 5, "the logger filter")
        window.log_controls.logger.setText("")
        window.log_controls.show_level.setCurrentIndex(0)
        await until(lambda: "WARNING" in log.toPlainText(), 5, "the filter cleared")
        await shot(window, f"log-level-{mode}-light")


async def test_everything_logging_level(open_window):
    async with open_window("dark") as window:
        conn = window.add_server(ServerSpec(name="everything", command=everything_cmd()))
        await ready(conn)
        window.log_dock.raise_()
        assert await window.log_controls.set_level("error") is None
        assert conn.session.health.log_level == "error"
        since = conn.session.log.total  # (what the server logged before, its roots note at info, is not judged)

        def after() -> list:
            return list(conn.session.log)[len(conn.session.log) - (conn.session.log.total - since):]
        await conn.session.client.call_tool("toggle-simulated-logging", {})
        await until(lambda: any(e.logger != "spyglass" and e.level not in ("stderr", "spyglass") for e in after()),
                    45, "simulated log messages")  # a random level every 5 s, half of them below error
        ranks = ("error", "critical", "alert", "emergency")
        shown = [e.level for e in after() if e.level not in ("stderr", "spyglass")]
        assert shown and all(level in ranks for level in shown), shown
        await conn.session.client.call_tool("toggle-simulated-logging", {})
        await shot(window, "log-level-dark")
