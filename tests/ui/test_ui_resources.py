"""Issue 7 in the window: resources, templates, subscriptions, roots, ping and server info.

Against the demo server (both eras), server-everything, the mcp 2.x SDK peer (both eras) and a server
whose resources are bad input (tests/ui/bad_catalog_server.py)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QLabel, QLineEdit, QListView, QPushButton, QWidget
from support import SDK_SERVER
from uikit import demo_cmd, everything_cmd, find, row_of, rows, shot, until

from inspector.config import ServerSpec
from inspector.session import Status
from inspector.ui.base.items import BADGES_ROLE, CHANGE_ROLE, FLAGS_ROLE

BAD = [sys.executable, str(Path(__file__).with_name("bad_catalog_server.py"))]


async def ready(conn, timeout=30):
    await until(lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded
                and all(conn.session.listings[k].loaded for k in ("resources", "templates", "prompts")), timeout,
                f"{conn.name} to connect and list everything (status: {conn.session.status_text()})")


def text_of(widget: QWidget) -> str:
    """Every plain text shown under `widget` (labels and text views)."""
    from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

    parts = [w.text() for w in widget.findChildren(QLabel)]
    parts += [w.toPlainText() for w in widget.findChildren(QPlainTextEdit)]
    parts += [w.toPlainText() for w in widget.findChildren(QTextEdit)]
    return "\n".join(parts)


async def read(window, key: str, what: str) -> QWidget:
    pane = window.resources_pane
    assert pane.select(key), f"{key} is not listed"
    button = find(window, QPushButton, "readButton")
    await until(button.isEnabled, 5, "readButton to be enabled")
    button.click()
    await until(lambda: pane.contents is not None and what in text_of(pane.contents), 15,
                f"{key} to be read and show {what!r} (status: {pane.status.text()})")
    return pane.contents


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_demo_resources_read_templates_and_subscriptions(open_window, mode):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), mode=mode)
        await ready(conn)
        window.tabs.setCurrentWidget(window.resources_pane)
        resources = find(window, QListView, "resourceList")
        templates = find(window, QListView, "templateList")
        assert rows(resources) == ["demo://docs/welcome.txt", "demo://config/app.json", "demo://images/logo.png",
                                   "demo://docs/style-guide.md", "demo://live/clock"]
        assert rows(templates) == ["demo://notes/{note_id}"]
        welcome = row_of(resources, "demo://docs/welcome.txt")
        assert welcome.data(Qt.DisplayRole) == "Welcome note"
        assert welcome.data(BADGES_ROLE) == ["for user", "priority 0.9"]
        assert row_of(resources, "demo://images/logo.png").data(Qt.DecorationRole) is not None  # data: icon
        # read: text, and a PNG blob previewed
        await read(window, "demo://docs/welcome.txt", "Welcome to the Spyglass demo server")
        assert "size: " in find(window, QLabel, "resourceMeta").text()
        shown = await read(window, "demo://images/logo.png", "demo://images/logo.png")
        assert "Blob not shown" not in text_of(shown)
        # cacheable results (modern era only: ttlMs + cacheScope)
        cache = find(window, QLabel, "resourcesCache").text()
        if mode == "modern":
            assert "cacheable for 60 s, public" in cache
        # a template: its variable, completions, then the expanded URI read
        window.resources_pane.select("demo://notes/{note_id}")
        field = find(window, QLineEdit, "arg:note_id")
        window.resources_pane.form.debounce_ms = 10
        field.setFocus()
        field.setText("re")
        field.textEdited.emit("re")
        await until(lambda: window.resources_pane.form.suggestions("note_id") == ["reading-list", "recipes",
                                                                                 "release-plan"], 10,
                    "note_id completions")
        assert "recipes" in find(window, QLabel, "argSuggestions:note_id").text()
        await shot(window, f"resources-template-completion-{mode}-light")
        field.setText("recipes")
        assert find(window, QLabel, "expandedUri").text().startswith("URI: demo://notes/recipes")
        await read(window, "demo://notes/{note_id}", "Pancakes")
        # subscribe to the live clock: the update marks it, and "Re-read on update" reads it again
        pane = window.resources_pane
        await read(window, "demo://live/clock", "The time is")
        first = pane.last_result
        find(window, QCheckBox, "autoReread").setChecked(True)
        sub = find(window, QPushButton, "subscribeButton")
        assert sub.isEnabled() and sub.text() == "Subscribe"
        sub.click()
        await until(lambda: "demo://live/clock" in conn.session.library.subscribed and sub.text() == "Unsubscribe", 10,
                    "the subscription")
        assert row_of(resources, "demo://live/clock").data(BADGES_ROLE)[0] == "subscribed"
        status = find(window, QLabel, "subscriptionStatus").text()
        if mode == "modern":
            await until(lambda: conn.session.library.granted is not None
                        and "demo://live/clock" in conn.session.library.granted.get("resourceSubscriptions", []), 10,
                        "the acknowledged filter")
            status = find(window, QLabel, "subscriptionStatus").text()
            assert "acknowledged" in status and "updates of demo://live/clock" in status
        else:
            assert "resources/subscribe" in status
        await until(lambda: "demo://live/clock" in conn.session.library.updated or pane.last_result is not first, 15,
                    "notifications/resources/updated")
        await until(lambda: pane.last_result is not first, 10, "the automatic re-read")
        await shot(window, f"resources-{mode}-light")
        sub.click()
        await until(lambda: "demo://live/clock" not in conn.session.library.subscribed, 10, "unsubscribing")
        # the listen filter (modern) or the session (legacy) still brings the tool list changes
        await conn.session.client.call_tool("toggle_bonus_tool", {})
        await until(lambda: "bonus" in conn.session.tools.appeared, 10, "the tool list change")
        if mode == "modern":
            # a URI the server does not know: it leaves it out of the acknowledged filter, and we say so
            await conn.session.library.subscribe("demo://notes/nothing-here")
            assert "demo://notes/nothing-here" in conn.session.library.refused
            assert "Refused by the server: demo://notes/nothing-here" in \
                find(window, QLabel, "subscriptionStatus").text()


async def test_resources_screenshot_dark(open_window):
    async with open_window("dark") as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await ready(conn)
        window.tabs.setCurrentWidget(window.resources_pane)
        await read(window, "demo://config/app.json", '"spyglass-demo"')
        await shot(window, "resources-dark")
        window.resources_pane.select("demo://notes/{note_id}")
        window.resources_pane.form.debounce_ms = 10
        field = find(window, QLineEdit, "arg:note_id")
        field.setText("r")
        field.textEdited.emit("r")
        await until(lambda: len(window.resources_pane.form.suggestions("note_id")) == 3, 10, "completions")
        await shot(window, "resources-template-completion-dark")


async def test_everything_resources_templates_and_subscriber_updates(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="everything", command=everything_cmd()))
        await ready(conn)
        window.tabs.setCurrentWidget(window.resources_pane)
        resources = find(window, QListView, "resourceList")
        assert len(rows(resources)) == len(conn.session.listings["resources"].items) >= 5
        assert rows(find(window, QListView, "templateList")) == ["demo://resource/dynamic/text/{resourceId}",
                                                                 "demo://resource/dynamic/blob/{resourceId}"]
        await read(window, "demo://resource/static/document/features.md", "demo://resource/static/document/features.md")
        # a template read through its form
        window.resources_pane.select("demo://resource/dynamic/text/{resourceId}")
        find(window, QLineEdit, "arg:resourceId").setText("3")
        await read(window, "demo://resource/dynamic/text/{resourceId}", "Resource 3")
        # subscriber updates: subscribe, then the server's toggle-subscriber-updates tool starts them
        window.resources_pane.select("demo://resource/static/document/features.md")
        find(window, QPushButton, "subscribeButton").click()
        await until(lambda: conn.session.library.subscribed, 10, "the subscription")
        await conn.session.client.call_tool("toggle-subscriber-updates", {})
        await until(lambda: "demo://resource/static/document/features.md" in conn.session.library.updated, 15,
                    "an update notice")
        await until(lambda: row_of(resources, "demo://resource/static/document/features.md").data(CHANGE_ROLE)
                    == "updated", 5, "the updated mark")
        await conn.session.client.call_tool("toggle-subscriber-updates", {})


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_sdk_peer_resources_both_eras(open_window, mode):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="sdk", command=[sys.executable, str(SDK_SERVER)]), mode=mode)
        await ready(conn)
        assert conn.session.era == mode
        window.tabs.setCurrentWidget(window.resources_pane)
        assert "sdk://hello" in rows(find(window, QListView, "resourceList"))
        await read(window, "sdk://hello", "Hello from the SDK peer")
        window.resources_pane.select("sdk://greet/{name}")
        find(window, QLineEdit, "arg:name").setText("Ada Lovelace")
        assert "sdk://greet/Ada%20Lovelace" in find(window, QLabel, "expandedUri").text()
        await read(window, "sdk://greet/{name}", "Hello, Ada Lovelace!")
        # ping: a round trip (legacy) or server/discover reachability (modern)
        window.tabs.setCurrentWidget(window.info_view)
        find(window, QPushButton, "pingButton").click()
        label = find(window, QLabel, "pingResult")
        await until(lambda: ("Round trip" if mode == "legacy" else "Reachable") in label.text(), 10, "the ping")


async def test_bad_resources_are_reported_not_fatal(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="bad", command=BAD))
        await ready(conn)
        window.tabs.setCurrentWidget(window.resources_pane)
        pane = window.resources_pane
        templates = find(window, QListView, "templateList")
        # a template that is not RFC 6570: flagged, explained, not readable
        flags = row_of(templates, "bad://{oops").data(FLAGS_ROLE)
        assert flags and flags[0].startswith("invalid template")
        pane.select("bad://{oops")
        assert "not valid RFC 6570" in find(window, QLabel, "resourceStatus").text()
        assert not find(window, QPushButton, "readButton").isEnabled()
        # untrusted text stays plain text, with the bidi override made visible
        pane.select("bad://text")
        title = find(window, QLabel, "resourceTitle")
        assert title.textFormat() == Qt.PlainText and title.text() == "<b>bold</b> ⟨U+202E⟩evil"
        assert find(window, QLabel, "resourceDescription").textFormat() == Qt.PlainText
        # a blob that is not base64
        shown = await read(window, "bad://blob", "bad://blob")
        await until(lambda: "Blob not shown" in text_of(pane.contents), 5, "the blob error")
        # more than 100 completion values: the first 100, and a note
        pane.select("bad://item/{id}")
        pane.form.request_completion("id")
        await until(lambda: len(pane.form.suggestions("id")) == 100, 10, "completions")
        assert "at most 100" in pane.form.suggestion_note("id")
        assert "at most 100" in find(window, QLabel, "argSuggestions:id").text()
        # list_changed: re-listed, new and removed marked (prompts/get of this server changes its lists)
        await conn.session.library.get_prompt("undescribed", {"x": "1"})
        resources = find(window, QListView, "resourceList")
        await until(lambda: "bad://new" in rows(resources), 10, "the new resource list")
        assert row_of(resources, "bad://new").data(CHANGE_ROLE) == "new"
        assert row_of(resources, "bad://text").data(CHANGE_ROLE) == "removed"
        assert "1 new" in find(window, QLabel, "resourceCount").text()
        assert shown is not None


async def test_cursor_repeated_forever_stops_with_a_message(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="bad", command=[*BAD, "repeat-cursor"]))
        await ready(conn)
        window.tabs.setCurrentWidget(window.resources_pane)
        message = find(window, QLabel, "resourceListMessage")
        assert message.isVisible() and "cursor" in message.text().lower()
        assert message.text().startswith("resources/list")
        assert conn.session.status is Status.CONNECTED  # the rest of the server still works
        assert rows(find(window, QListView, "templateList"))


async def test_roots_answered_and_changes_announced(open_window, tmp_path):
    import json

    from inspector.catalog import Catalog
    from inspector.keystore import MemorySecrets

    catalog_file = tmp_path / "config" / "servers.json"
    async with open_window(catalog=Catalog(catalog_file, secrets=MemorySecrets()).load()) as window:
        conn = window.add_server(ServerSpec(name="everything", command=everything_cmd()))
        sent = []
        conn.session.traffic = lambda frame, orig=conn.session.traffic: (sent.append(frame), orig and orig(frame))
        await ready(conn)
        window.tabs.setCurrentWidget(window.roots_editor)
        editor = window.roots_editor  # no folder yet: a sentence and Add folder…, not a blank white box
        assert editor.empty.isVisible() and not editor.view.isVisible()
        assert "empty list" in editor.empty.text.text() and editor.empty.buttons["rootsEmptyAdd"].isEnabled()
        folder = tmp_path / "project"
        folder.mkdir()
        await window.roots_editor.add_folder(str(folder))
        uri = folder.as_uri()
        assert [window.roots_editor.view.item(i).text() for i in range(window.roots_editor.view.count())] == [uri]
        assert editor.view.isVisible() and not editor.empty.isVisible()
        await until(lambda: any(f.direction == "out" and b"notifications/roots/list_changed" in f.data
                                for f in sent), 5, "notifications/roots/list_changed")
        seen: list[str] = []

        async def known() -> bool:  # the server asks for the roots again in its own time after the notification
            seen.append((await conn.session.client.call_tool("get-roots-list", {}))["content"][0]["text"])
            return uri in seen[-1]
        for _ in range(50):
            if await known():
                break
            await asyncio.sleep(0.1)
        assert uri in seen[-1], seen[-1]
        # kept with the server in the catalog file, offered again after a restart
        saved = json.loads(catalog_file.read_text())["servers"][0]["roots"]
        assert saved == [{"uri": uri, "name": "project"}] and window.settings.value("roots/everything") is None
        await shot(window, "roots-light")
    async with open_window(catalog=Catalog(catalog_file, secrets=MemorySecrets()).load()) as again:
        [conn] = again.restore_servers()
        again.select_connection(conn)
        assert conn.session.roots == saved
        again.tabs.setCurrentWidget(again.roots_editor)
        again.roots_editor.view.setCurrentRow(0)
        await again.roots_editor.remove_selected()
        assert conn.session.roots == [] and json.loads(catalog_file.read_text())["servers"][0]["roots"] == []


async def test_roots_can_need_your_answer_first(open_window, tmp_path):
    import asyncio

    from calling import click, dialog, dialog_shot
    from PySide6.QtWidgets import QPlainTextEdit

    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="everything", command=everything_cmd()))
        await ready(conn)
        await asyncio.sleep(0.3)  # (any roots/list of the connection itself is answered by now)
        window.preferences.roots_policy = "ask"  # Preferences: "When a server asks for roots: Ask me each time"
        window.tabs.setCurrentWidget(window.roots_editor)
        shared = tmp_path / "shared"
        shared.mkdir()
        window.roots_editor.add_folder(str(shared))  # list_changed: the server asks again
        asked = await dialog(window, "rootsDialog")
        assert shared.as_uri() in asked.findChild(QPlainTextEdit, "rootsShared").toPlainText()
        await dialog_shot(asked, "roots-ask-dialog-light")
        click(asked, "rootsSend")
        window.preferences.roots_policy = "settings"  # (the tool below asks for roots itself)
        seen: list[str] = []

        async def roots_known() -> bool:  # the server takes the answer in its own time
            result = await conn.session.client.call_tool("get-roots-list", {})
            seen.append(result["content"][0]["text"])
            return shared.as_uri() in seen[-1]

        for _ in range(50):
            if await roots_known():
                break
            await asyncio.sleep(0.1)
        assert shared.as_uri() in seen[-1], seen[-1]
        store = window.store
        before = len(store)
        window.preferences.roots_policy = "ask"
        private = tmp_path / "private"
        private.mkdir()
        window.roots_editor.add_folder(str(private))
        click(await dialog(window, "rootsDialog"), "rootsRefuse")
        await until(lambda: any(store.direction(n) == "out" and '"code":-1' in store.text(n).replace(" ", "")
                                and "User refused to share roots" in store.text(n)
                                for n in range(before, len(store))), 5, "the refusal on the wire")


async def test_server_info_shows_cache_and_refresh_bypasses_it(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), mode="modern")
        sent = []
        conn.session.traffic = lambda frame, orig=conn.session.traffic: (sent.append(frame), orig and orig(frame))
        await ready(conn)
        window.tabs.setCurrentWidget(window.info_view)
        cache = find(window, QLabel, "serverCache")
        assert "server/discover: ttlMs 60000, cacheScope public" in cache.text()
        assert "prompts/list · cacheable for 60 s, public" in cache.text()
        await until(lambda: "Reachable" in find(window, QLabel, "pingResult").text(), 10, "reachability")
        assert "Extensions:" in find(window, QLabel, "serverExtensions").text()
        count = lambda: sum(1 for f in sent if f.direction == "out" and b'"prompts/list"' in f.data)
        before = count()
        await conn.session.load("prompts")  # within ttlMs: reused, nothing sent
        assert count() == before and conn.session.listings["prompts"].from_cache
        find(window, QPushButton, "refreshListsButton").click()
        await until(lambda: count() == before + 1, 10, "prompts/list sent again")
        await shot(window, "server-info-modern-light")
