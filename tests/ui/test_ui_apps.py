"""MCP Apps in the real window, Qt WebEngine offscreen, against the example servers from npm
(@modelcontextprotocol/server-basic-vanillajs and server-debug 2.0.3, pinned in tests/peers): the app loads
above the result and shows the tool's result, its button's tools/call goes to the server and comes back,
ui/message reaches the side panel, ui/open-link asks first, theme and host-context changes reach the app,
display modes, reloading (teardown awaited), every bridge message in the traffic pane.

The app is driven as a user would, by clicking its buttons, through its frame (QWebEngineFrame). One
WebEngine start serves the file (its helper processes live as long as the QApplication)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from calling import call, connected, result_widgets, select_tool
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QComboBox, QDialog, QListView, QPushButton, QToolButton, QWidget
from support import app_cmd
from uikit import find, row_of, shot, until

from inspector.config import ServerSpec
from inspector.ui.base.items import BADGES_ROLE


async def app_shot(window, name):
    """A screenshot for the docs: the docks out of the way, the result given the room, scrolled to the app."""
    from PySide6.QtWidgets import QDockWidget

    docks = [d for d in window.findChildren(QDockWidget) if d.isVisible()]
    for d in docks:
        d.hide()
    window.resize(1400, 1000)
    await asyncio.sleep(0.3)  # the tool panel fits its form to the new height first
    panel = window.tool_detail
    total = sum(panel.body.sizes())
    panel.body.setSizes([170, total - 170])
    window.centralWidget().findChild(QWidget, "toolsSplitter").setSizes([330, 1030])
    panel.result_view.scroll.verticalScrollBar().setValue(0)
    try:
        return await shot(window, name)
    finally:
        for d in docks:
            d.show()


def block_of(window, rec):
    return window.apps.blocks.get((rec.server_id, rec.id))


async def ready_block(window, rec, timeout=40):
    block = await until(lambda: block_of(window, rec), 10, "the app's block")
    await until(lambda: block.app is not None and block.app.bridge.ready, timeout,
                f"the app to initialize ({block.state.text()} {block.problem_text})")
    return block


async def frame_js(block, script, timeout=10.0):
    """Run `script` in the app's frame, as its own page would; its value."""
    fut = asyncio.get_running_loop().create_future()
    frame = await until(lambda: block.page.app_frame(), 10, "the app's frame")
    frame.runJavaScript(script, 0, lambda v: fut.done() or fut.set_result(v))
    return await asyncio.wait_for(fut, timeout)


async def click_in_app(block, element_id):
    assert await frame_js(block, f"(() => {{ const b = document.getElementById({json.dumps(element_id)});"
                                 f" if (!b) return false; b.click(); return true; }})()"), element_id


def bridge_frames(window, server_id, *, direction=None, method=None):
    """(record number, direction, method) of the app frames in the traffic store."""
    store = window.traffic.store
    window.traffic.flush()
    out = []
    for n in range(len(store)):
        if store.kind(n) != "app" or store.server_id(n) != server_id:
            continue
        if (direction is None or store.direction(n) == direction) and (method is None or store.method(n) == method):
            out.append(n)
    return out


async def top_dialog(name, timeout=15):
    def find_it():
        for w in QApplication.topLevelWidgets():
            if isinstance(w, QDialog) and w.objectName() == name and w.isVisible():
                return w
        return None
    return await until(find_it, timeout, f"the {name}")


async def test_the_basic_app_shows_the_result_calls_its_server_and_asks_before_a_link(open_window):
    async with open_window() as window:
        opened: list[str] = []
        window.apps.opener = lambda url: opened.append(url.toString()) or True
        conn = window.add_server(ServerSpec(name="vanilla", command=app_cmd("basic-vanillajs")))
        await connected(conn)
        sid = conn.server_id
        # the tool carries an app badge; its header names the app resource
        view = find(window, QListView, "toolList")
        assert "app" in row_of(view, "get-time").data(BADGES_ROLE)
        select_tool(window, "get-time")
        assert "App: ui://get-time/mcp-app.html" in window.tool_detail.badges.text()
        rec = await call(window, "get-time")
        block = await ready_block(window, rec)
        # the block sits above the result's own blocks, which stay readable
        assert block.objectName() == "result:app" and block.isVisible()
        [text_block] = result_widgets(window, "text")
        top = block.mapTo(window, block.rect().topLeft()).y()
        assert top < text_block.mapTo(window, text_block.rect().topLeft()).y()
        # the app shows the tool's result (tool-input, then tool-result, after ui/notifications/initialized)
        shown = rec.result["structuredContent"]["time"]
        await until(lambda: block.app.bridge._outcome_sent, 10, "the result to go to the app")
        assert await until_js(block, "document.getElementById('server-time').textContent", shown)
        order = [window.traffic.store.method(n) for n in bridge_frames(window, sid, direction="to-view")]
        assert order[:3] == ["ui/initialize", "ui/notifications/tool-input", "ui/notifications/tool-result"]
        # its button's proxied tools/call goes to the server and comes back
        before = len(bridge_frames(window, sid, direction="from-view", method="tools/call"))
        server_calls = sum(1 for n in range(len(window.traffic.store)) if window.traffic.store.direction(n) == "out"
                           and window.traffic.store.method(n) == "tools/call")
        await click_in_app(block, "get-time-btn")
        changed = await until_js(block, "document.getElementById('server-time').textContent",
                                 lambda v: v and v != shown)
        assert changed.startswith("20")
        asked = bridge_frames(window, sid, direction="from-view", method="tools/call")
        assert len(asked) == before + 1
        store = window.traffic.store
        answer = store.pair(asked[-1])
        assert answer is not None and store.direction(answer) == "to-view" and store.latency(answer) > 0
        assert sum(1 for n in range(len(store)) if store.direction(n) == "out"
                   and store.method(n) == "tools/call") == server_calls + 1  # it really went to the server
        # ui/message reaches the side panel; notifications/message the server's log
        await click_in_app(block, "send-message-btn")
        messages = find(block, QWidget, "appMessages")
        await until(lambda: messages.messages and block.side.isVisible(), 10, "the message in the side panel")
        assert messages.messages[0]["content"][0]["text"] == "This is message text."
        await click_in_app(block, "send-log-btn")
        await until(lambda: any(e.text == "This is log text." and "app" in (e.logger or "")
                                for e in conn.session.log), 10, "the app's log line in the server's log")
        # the app's console lines are in the log pane too
        assert any((e.logger or "").startswith("app console · ui://get-time/") for e in conn.session.log)
        await app_shot(window, "apps-basic-light")
        # ui/open-link asks first, shows the whole address, and opens nothing on Cancel
        await click_in_app(block, "open-link-btn")
        dlg = await top_dialog("appOpenLinkDialog")
        assert dlg.findChild(QWidget, "appOpenLinkUrl").text() == "https://modelcontextprotocol.io/"
        assert dlg.findChild(QWidget, "appOpenLinkHost").text() == "modelcontextprotocol.io"
        from calling import dialog_shot
        await dialog_shot(dlg, "apps-open-link")
        dlg.findChild(QPushButton, "appOpenLinkCancel").click()
        await until(lambda: any("you declined" in r for r in block.app.refused), 10, "the refusal")
        assert opened == []
        await click_in_app(block, "open-link-btn")
        dlg = await top_dialog("appOpenLinkDialog")
        dlg.findChild(QPushButton, "appOpenLinkOpen").click()
        await until(lambda: opened == ["https://modelcontextprotocol.io/"], 10, "the link to open")
        # Spyglass's theme reaches the app as host-context-changed
        window.set_theme("dark")
        assert await until_js(block, "document.documentElement.getAttribute('data-theme')", "dark")
        changes = bridge_frames(window, sid, direction="to-view", method="ui/notifications/host-context-changed")
        assert changes and json.loads(store.raw(changes[-1]))["params"]["theme"] == "dark"
        await app_shot(window, "apps-basic-dark")
        # the traffic pane's kind filter keeps the bridge
        kind = find(window, QComboBox, "trafficKind")
        kind.setCurrentIndex(kind.findText("Apps (bridge)"))
        pane = window.traffic.pane
        await until(lambda: pane.model.rowCount() >= len(bridge_frames(window, sid)), 10, "the app rows")
        window.resize(1400, 1000)
        pane.select_record(asked[-1])
        await shot(window, "apps-traffic")
        # Reload: ui/resource-teardown awaited, the old renderer process ended, the app up again
        old_pid = block.page.renderProcessPid()
        find(block, QToolButton, "appReload").click()
        await until(lambda: bridge_frames(window, sid, direction="from-view", method="ui/resource-teardown"), 10,
                    "the app to answer its teardown")
        await until(lambda: not Path(f"/proc/{old_pid}").exists(), 15, "the old renderer process to end")
        await until(lambda: block.app is not None and block.app.bridge.ready, 30, "the app to start again")
        kind.setCurrentIndex(0)


async def until_js(block, script, expected, timeout=15.0):
    """Poll `script` in the app's frame until it gives `expected` (or satisfies it, a callable)."""
    seen = []

    async def check():
        value = await frame_js(block, script)
        seen.append(value)
        return value if (expected(value) if callable(expected) else value == expected) else None
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        value = await check()
        if value is not None:
            return value
        await asyncio.sleep(0.1)
    raise AssertionError(f"{script} never gave {expected!r} (last: {seen[-1:]})")


async def test_the_debug_app_model_context_display_modes_size_and_an_emulated_host(open_window, tmp_path):
    log_file = tmp_path / "debug.jsonl"
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="debug", command=app_cmd("debug", f"--log-file={log_file}")))
        await connected(conn)
        sid = conn.server_id
        view = find(window, QListView, "toolList")
        assert row_of(view, "debug-refresh").data(BADGES_ROLE)[:2] == ["app", "app-only"]
        rec = await call(window, "debug-tool", {"contentType": "text", "multipleBlocks": False})
        block = await ready_block(window, rec)
        # the app-only tool is the app's to call; its calls reach the server (the server logs them)
        await click_in_app(block, "call-debug-refresh-btn")
        await until(lambda: log_file.exists() and "debug-refresh" in log_file.read_text(), 15,
                    "the app's call of debug-refresh to reach the server")
        # ui/update-model-context: the latest is shown
        await click_in_app(block, "update-context-text-btn")
        title = find(block, QWidget, "appModelContextTitle")
        await until(lambda: "latest" in title.text(), 10, "the model context")
        assert block.messages.context["content"][0]["text"] == "Current app state info"
        # the view follows the app's size (its own measuring turned off, it asks for 300 px)
        await frame_js(block, "(() => { const t = document.getElementById('auto-resize-toggle');"
                              " if (t.checked) t.click(); return t.checked; })()")
        await click_in_app(block, "resize-400x300-btn")

        def asked():
            sizes = bridge_frames(window, sid, direction="from-view", method="ui/notifications/size-changed")
            return json.loads(window.traffic.store.raw(sizes[-1]))["params"]["height"]
        def told() -> int:
            return len(bridge_frames(window, sid, direction="from-view", method="ui/notifications/size-changed"))
        await until(lambda: asked() == 300 or block.body.height() == min(asked(), 900), 10, "the app's new size")
        seen, deadline = -1, time.monotonic() + 10
        while seen != told() and time.monotonic() < deadline:  # the app's sizes settled: none new for 0.5 s
            seen = told()
            await asyncio.sleep(0.5)
        await until(lambda: block.body.height() == min(asked(), 900), 10, "the block to follow the app's size")
        # the side panel opened or closed keeps it (a splitter resets its own maximum height when a pane shows)
        followed = block.body.height()
        for shown in (not block.side.isVisible(), block.side.isVisible()):
            block.side_button.setChecked(shown)
            await asyncio.sleep(0.1)
            block.setFixedHeight(block.height() + 300)  # room to grow into, as a later layout may give it
            await asyncio.sleep(0.1)
            assert block.body.height() == followed
            block.setMinimumHeight(0)
            block.setMaximumHeight(16777215)
        # display modes: fullscreen in its own window, back inline, then picture in picture
        await click_in_app(block, "display-fullscreen-btn")
        full = await until(lambda: next((w for w in QApplication.topLevelWidgets()
                                         if w.objectName() == "appFullscreen" and w.isVisible()), None), 10,
                           "the fullscreen window")
        assert find(block, QComboBox, "appDisplayMode").currentData() == "fullscreen"
        store = window.traffic.store
        changes = bridge_frames(window, sid, direction="to-view", method="ui/notifications/host-context-changed")
        assert [json.loads(store.raw(n))["params"].get("displayMode") for n in changes].count("fullscreen") == 1
        full.findChild(QPushButton, "appBackInline").click()
        await until(lambda: block.mode == "inline" and block.view.isVisible(), 10, "the app back inline")
        await click_in_app(block, "display-pip-btn")
        pip = await until(lambda: next((w for w in QApplication.topLevelWidgets()
                                        if w.objectName() == "appPip" and w.isVisible()), None), 10, "the pip window")
        assert pip.windowFlags() & Qt.WindowType.WindowStaysOnTopHint
        block.set_mode("inline")
        # the host context panel emulates another host: a phone, in French
        block.side_button.setChecked(True)
        block.side.setCurrentWidget(block.context_panel)
        panel = find(block, QWidget, "appHostContext")
        container = find(panel, QComboBox, "appContainer")
        container.setCurrentIndex(container.findData("phone"))
        find(panel, QComboBox, "appLocale").setCurrentText("fr-FR")
        await until(lambda: any(json.loads(store.raw(n))["params"].get("locale") == "fr-FR"
                                for n in bridge_frames(window, sid, direction="to-view",
                                                       method="ui/notifications/host-context-changed")), 10,
                    "the emulated locale to reach the app")
        assert block.view.width() == 390
        info = await until_js(block, "document.getElementById('host-context-info').innerText",
                              lambda v: v and "fr-FR" in v)
        assert "fr-FR" in info
        await app_shot(window, "apps-debug-phone")
        container.setCurrentIndex(container.findData("desktop"))
        # streaming the arguments: the next load gets tool-input-partial before tool-input
        find(panel, QWidget, "appStreamInput").setChecked(True)
        find(block, QToolButton, "appReload").click()
        await until(lambda: bridge_frames(window, sid, direction="to-view",
                                          method="ui/notifications/tool-input-partial"), 20, "partial input")
        await until(lambda: "ontoolinputpartial" in log_file.read_text(), 15, "the app to see the partial input")
        # the developer tools open for the view
        find(block, QToolButton, "appDevTools").click()
        await until(lambda: block.devtools is not None and block.devtools.isVisible(), 10, "the developer tools")
        window.apps.settings_stream = False

