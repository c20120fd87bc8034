"""Servers you can fix: Edit (four ways in; saved to the catalog with its secrets in the keyring; connected
again with the new definition), Remove with undo (no question; the server back with its settings, at its
place), Add from a pasted command line, URL or JSON entry of any host, and a server named as it reports
itself when the user gave no name. Real peers: the demo server (serverInfo title "Spyglass demo server")."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys

from calling import connected, dialog
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QLineEdit, QPushButton, QTableWidget, QToolButton
from uikit import find, until

from inspector.catalog import Catalog
from inspector.config import ServerSpec
from inspector.keystore import MemorySecrets
from inspector.session import Status

DEMO_TITLE = "Spyglass demo server"
DEMO_ARGS = [sys.executable, "-m", "inspector.demo"]


def env_of(dlg) -> dict[str, str]:
    table = dlg.findChild(QTableWidget, "serverEnv")
    return {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}


def no_dialog_open() -> bool:
    return not any(isinstance(w, QDialog) and w.isVisible() for w in QApplication.topLevelWidgets())


async def open_edit(window, how: str):
    view = window.server_view
    if how == "button":
        find(window, QToolButton, "buttonEditServer").click()
    elif how == "context menu":
        assert view.contextMenuPolicy() == Qt.ActionsContextMenu
        [action] = [a for a in view.actions() if a.objectName() == "actionEditServer"]
        action.trigger()
    elif how == "double-click":
        rect = view.visualRect(view.currentIndex())
        QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, rect.center())  # as a hand does: the
        QTest.mouseDClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, rect.center())  # press comes first
    else:  # the Server menu's named action, which the command palette lists
        menu = window.menuBar().findChild(type(window.menuBar().actions()[0].menu()), "serverMenu")
        assert "actionEditServer" in [a.objectName() for a in menu.actions()]
        palette = window.open_command_palette()
        row = palette.labels().index("Server: Edit server")
        palette.run_index(palette.proxy.index(row, 0))
    return await dialog(window, "editServerDialog", 5)


async def test_edit_is_reached_four_ways_saves_and_reconnects(open_window, tmp_path):
    keyring = MemorySecrets()
    path = tmp_path / "servers.json"
    async with open_window(catalog=Catalog(path, secrets=keyring).load()) as window:
        conn = window.add_server(ServerSpec(name="demo", command=DEMO_ARGS, env={"API_TOKEN": "tok-1"}))
        await connected(conn)
        first_pid = conn.session.pid
        for how in ("button", "context menu", "double-click"):
            dlg = await open_edit(window, how)
            assert dlg.findChild(QLineEdit, "serverName").text() == "demo", how
            assert dlg.findChild(QLineEdit, "serverCommand").text() == sys.executable, how
            assert env_of(dlg) == {"API_TOKEN": "tok-1"}, how
            dlg.reject()
            await until(no_dialog_open, 5)
        dlg = await open_edit(window, "menu")
        assert dlg.findChild(QPushButton, "addServerOk").text() == "Save and reconnect"
        dlg.findChild(QLineEdit, "serverName").setText("demo edited")
        dlg.env.add_pair("DEMO_MODE", "edited")
        dlg.findChild(QPushButton, "addServerOk").click()
        await until(no_dialog_open, 5)
        assert conn.name == "demo edited" and conn.spec.env == {"API_TOKEN": "tok-1", "DEMO_MODE": "edited"}
        await until(lambda: conn.session.status is Status.CONNECTED and conn.session.pid not in (None, first_pid),
                    30, "the server to connect again with its new definition")
        saved = json.loads(path.read_text())
        [entry] = saved["servers"]
        assert entry["name"] == "demo edited" and entry["env"]["DEMO_MODE"] == "edited"
        assert "tok-1" not in path.read_text() and "tok-1" in keyring._items.values()  # the keyring keeps it
    again = Catalog(path, secrets=keyring).load()
    assert again.servers[0].spec.env == {"API_TOKEN": "tok-1", "DEMO_MODE": "edited"}


async def test_an_edit_to_a_name_another_server_has_is_refused_in_the_dialog(open_window, tmp_path):
    async with open_window(catalog=Catalog(tmp_path / "servers.json", secrets=MemorySecrets()).load()) as window:
        window.add_server(ServerSpec(name="one", command=["x"]), connect=False)
        two = window.add_server(ServerSpec(name="two", command=["y"]), connect=False)
        dlg = window.edits.edit(two)
        dlg.findChild(QLineEdit, "serverName").setText("one")
        dlg.findChild(QPushButton, "addServerOk").click()
        assert dlg.isVisible() and "already called 'one'" in dlg.error.text()
        dlg.reject()
        assert two.name == "two"


async def test_remove_asks_nothing_and_undo_puts_the_server_back_as_it_was(open_window, tmp_path):
    keyring = MemorySecrets()
    path = tmp_path / "servers.json"
    async with open_window(catalog=Catalog(path, secrets=keyring).load()) as window:
        for name in ("alpha", "beta", "gamma"):
            window.add_server(ServerSpec(name=name, command=[name, "--flag"], env={"API_KEY": f"k-{name}"}),
                              mode="legacy" if name == "beta" else None, timeout=12 if name == "beta" else None,
                              connect=False)
        beta = window.connections()[1]
        beta.session.roots = [{"uri": "file:///work/beta", "name": "beta root"}]
        window.catalog_link.save_roots(beta, beta.session.roots, window.settings)
        before = [(e.id, e.name, e.mode, e.timeout, e.spec.env, e.roots) for e in window.catalog.servers]
        window.select_connection(beta)
        find(window, QToolButton, "buttonRemove").click()
        assert no_dialog_open()  # no question
        assert [c.name for c in window.connections()] == ["alpha", "gamma"]
        assert [e.name for e in Catalog(path, secrets=keyring).load().servers] == ["alpha", "gamma"]
        undo = find(window, QPushButton, "undoRemoveButton")
        assert window.banner.isVisible() and undo.isVisible() and "Removed beta" in window.banner.label.text()
        assert window.act_undo_remove.isEnabled()
        await asyncio.sleep(0.1)  # the removed server's session is wound up meanwhile
        undo.click()
        assert not window.banner.isVisible() and not window.act_undo_remove.isEnabled()
        assert [c.name for c in window.connections()] == ["alpha", "beta", "gamma"]
        back = window.connections()[1]
        assert window.selected_connection() is back
        assert back.session.options.mode == "legacy" and back.session.options.timeout == 12
        assert back.spec.command == ["beta", "--flag"] and back.spec.env == {"API_KEY": "k-beta"}
        assert back.session.roots == [{"uri": "file:///work/beta", "name": "beta root"}]
        assert [(e.id, e.name, e.mode, e.timeout, e.spec.env, e.roots) for e in window.catalog.servers] == before
        assert back.catalog_id == before[1][0]
        reread = Catalog(path, secrets=keyring).load()
        assert [(e.id, e.name, e.spec.env) for e in reread.servers] == [(b[0], b[1], b[4]) for b in before]


def paste_into_command(dlg, text: str) -> None:
    command = dlg.findChild(QLineEdit, "serverCommand")
    command.setFocus()
    QGuiApplication.clipboard().setText(text)
    command.paste()


async def test_a_pasted_command_line_is_split_as_a_shell_would_and_named_by_the_server(open_window, tmp_path):
    async with open_window(catalog=Catalog(tmp_path / "servers.json", secrets=MemorySecrets()).load()) as window:
        window.add_server_dialog()
        dlg = await dialog(window, "addServerDialog", 5)
        line = f"API_TOKEN=tok-9 GREETING='hello world' {shlex.join(DEMO_ARGS)} --label \"two words\""
        paste_into_command(dlg, line)
        assert dlg.findChild(QLineEdit, "serverCommand").text() == sys.executable
        assert shlex.split(dlg.findChild(QLineEdit, "serverArgs").text()) == ["-m", "inspector.demo", "--label",
                                                                              "two words"]
        assert env_of(dlg) == {"API_TOKEN": "tok-9", "GREETING": "hello world"}
        assert dlg.env.displayed(0) != "tok-9"  # a secret stays masked
        assert dlg.findChild(QLineEdit, "serverName").text() == ""
        dlg.findChild(QLineEdit, "serverArgs").setText(shlex.join(DEMO_ARGS[1:]))  # the demo takes no --label
        dlg.findChild(QPushButton, "addServerOk").click()
        await until(no_dialog_open, 5)
        conn = window.selected_connection()
        assert conn.spec.env == {"API_TOKEN": "tok-9", "GREETING": "hello world"}
        await connected(conn)
        await until(lambda: conn.name == DEMO_TITLE, 5, f"the server to be named as it reports (is {conn.name!r})")
        assert [e.name for e in window.catalog.servers] == [DEMO_TITLE]
        assert window.windowTitle().startswith(DEMO_TITLE)


async def test_a_url_pasted_into_command_is_an_http_server(open_window):
    async with open_window() as window:
        window.add_server_dialog()
        dlg = await dialog(window, "addServerDialog", 5)
        paste_into_command(dlg, "  https://mcp.example.com/mcp  ")
        assert dlg.tabs.currentIndex() == 1 and dlg.findChild(QLineEdit, "serverUrl").text() == \
            "https://mcp.example.com/mcp"
        spec = dlg.spec()
        assert spec.url == "https://mcp.example.com/mcp" and not spec.command and not dlg.named()
        dlg.reject()


HOSTS = {
    "Claude Desktop, bare": (json.dumps({"command": "npx", "args": ["-y", "@scope/server", "a b"],
                                         "env": {"API_KEY": "k1"}}), None, "stdio"),
    "Claude Desktop, named": ('"files": {"command": "npx", "args": ["-y", "@scope/server", "a b"], '
                              '"env": {"API_KEY": "k1"}},', "files", "stdio"),
    "Claude Desktop, mcpServers": (json.dumps({"mcpServers": {"files": {"command": "npx", "args": [
        "-y", "@scope/server", "a b"], "env": {"API_KEY": "k1"}}}}), "files", "stdio"),
    "Cursor, URL": (json.dumps({"remote": {"url": "https://mcp.example.com/mcp",
                                           "headers": {"X-Team": "blue"}}}), "remote", "http"),
    "VS Code, stdio": (json.dumps({"type": "stdio", "command": "npx", "args": ["-y", "@scope/server", "a b"],
                                   "env": {"API_KEY": "k1"}}), None, "stdio"),
    "VS Code, http in servers": (json.dumps({"servers": {"remote": {"type": "http",
                                                                    "url": "https://mcp.example.com/mcp",
                                                                    "headers": {"X-Team": "blue"}}}}),
                                 "remote", "http"),
}


async def test_a_pasted_json_entry_of_each_host_fills_the_dialog(open_window):
    async with open_window() as window:
        for host, (text, name, kind) in HOSTS.items():
            window.add_server_dialog()
            dlg = await dialog(window, "addServerDialog", 5)
            QGuiApplication.clipboard().setText(text)
            dlg.findChild(QPushButton, "pasteServerButton").click()
            assert not dlg.error.isVisible(), f"{host}: {dlg.error.text()}"
            spec = dlg.spec()
            assert dlg.findChild(QLineEdit, "serverName").text() == (name or ""), host
            assert dlg.named() == (name is not None), host
            if kind == "stdio":
                assert dlg.tabs.currentIndex() == 0 and spec.command == ["npx", "-y", "@scope/server", "a b"], host
                assert spec.env == {"API_KEY": "k1"}, host
            else:
                assert dlg.tabs.currentIndex() == 1 and spec.url == "https://mcp.example.com/mcp", host
                assert spec.headers == {"X-Team": "blue"}, host
            dlg.reject()
            await until(no_dialog_open, 5)
        # the same paste straight into Command; then one that is no server says why
        window.add_server_dialog()
        dlg = await dialog(window, "addServerDialog", 5)
        paste_into_command(dlg, HOSTS["VS Code, stdio"][0])
        assert dlg.findChild(QLineEdit, "serverCommand").text() == "npx"
        QGuiApplication.clipboard().setText('{"theme": "dark"}')
        assert not dlg.paste_clipboard() and "holds no server" in dlg.error.text()
        dlg.reject()


async def test_a_pasted_entry_connects_and_is_named_by_the_server(open_window):
    async with open_window() as window:
        window.add_server_dialog()
        dlg = await dialog(window, "addServerDialog", 5)
        QGuiApplication.clipboard().setText(json.dumps({"command": DEMO_ARGS[0], "args": DEMO_ARGS[1:]}))
        dlg.findChild(QPushButton, "pasteServerButton").click()
        dlg.findChild(QPushButton, "addServerOk").click()
        await until(no_dialog_open, 5)
        conn = window.selected_connection()
        assert conn.name == "inspector.demo"  # the guess, until the server says its name
        await connected(conn)
        await until(lambda: conn.name == DEMO_TITLE, 5, f"the server to be named as it reports (is {conn.name!r})")
