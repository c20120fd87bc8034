"""Desktop integration: the catalog behind the sidebar, import (dialog, drag-and-drop,
--import), export, preferences across restarts, the command palette, shortcuts, About, and the last
selected server and tool. Screenshots of the dialogs go to test-artifacts/."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication, QPainter
from PySide6.QtWidgets import QApplication, QComboBox, QLabel, QLineEdit, QPushButton, QTableView
from uikit import ARTIFACTS, ROOT, demo_cmd, find, row_of, until

from inspector.catalog import Catalog
from inspector.config import ServerSpec
from inspector.keystore import MemorySecrets
from inspector.session import Status
from inspector.ui import demo_spec

DATA = ROOT / "tests" / "data" / "configs"


class FakeKeyring(MemorySecrets):
    """Stands for the OS keyring: values outlive one Catalog object (a restart of the app)."""

    persistent = True


@pytest.fixture
def keyring_():
    return FakeKeyring()


@pytest.fixture
def catalog_path(tmp_path) -> Path:
    return tmp_path / "config" / "servers.json"


@pytest.fixture
def new_catalog(catalog_path, keyring_):
    """A fresh Catalog object on the same file and keyring (what a restarted app reads)."""
    return lambda: Catalog(catalog_path, secrets=keyring_).load()


async def grab(widget, name: str, over=None) -> Path:
    """test-artifacts/NAME.png of a dialog (drawn over the window `over`, where it sits, if given)."""
    await asyncio.sleep(0.2)
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    pm = widget.grab()
    if over is not None:
        base = over.grab()
        p = QPainter(base)
        top_left = over.mapFromGlobal(widget.mapToGlobal(QPoint(0, 0)))
        p.drawPixmap(top_left, pm)
        p.end()
        pm = base
    assert not pm.isNull() and pm.save(str(path), "PNG")
    return path


def dialog_of(window, name):
    from PySide6.QtWidgets import QDialog

    return window.findChild(QDialog, name)


def answer_everything(dialog, secret="s3cret-value"):
    """Fill every question of an import dialog: secrets with `secret`, others with something plausible."""
    for token, field in dialog.answer_fields.items():
        if isinstance(field, QComboBox):
            if not field.currentText():
                field.setCurrentText("info")
        elif field.echoMode() == QLineEdit.Password:
            field.setText(secret)
        elif not field.text():
            field.setText("/work/repo" if "Folder" in token else "answer")


# ---------------------------------------------------------------------- catalog behind the sidebar
async def test_servers_are_saved_in_the_catalog_and_come_back_after_a_restart(open_window, new_catalog,
                                                                             catalog_path, keyring_):
    async with open_window(catalog=new_catalog()) as window:
        window.add_server(ServerSpec(name="tokens", command=["x"], env={"API_TOKEN": "tok-123"}), connect=False)
        window.add_server(ServerSpec(name="remote", url="https://example.com/mcp",
                                     headers={"Authorization": "Bearer abc"}), connect=False)
        window.add_server(demo_spec(), connect=False)  # the built-in demo is never saved
        assert catalog_path.exists()  # saved at once, not only at a clean exit
        text = catalog_path.read_text()
        assert "tok-123" not in text and "Bearer abc" not in text and "demo (built-in)" not in text
        window.remove_connection(next(c for c in window.connections() if c.name == "remote"))
        await asyncio.sleep(0.05)
    async with open_window(catalog=new_catalog()) as again:
        restored = again.restore_servers()
        assert [c.name for c in restored] == ["tokens"]
        assert restored[0].spec.env == {"API_TOKEN": "tok-123"} and restored[0].session.status is Status.IDLE


async def test_the_same_server_started_again_is_not_saved_twice(open_window, new_catalog):
    async with open_window(catalog=new_catalog()) as window:
        window.add_server(ServerSpec(name="cmd", command=["python3", "-V"]), connect=False)
    async with open_window(catalog=new_catalog()) as again:  # `spyglass -- python3 -V` once more
        conn = again.add_server(ServerSpec(name="python3", command=["python3", "-V"]), connect=False)
        assert conn.name == "cmd" and [e.name for e in again.catalog.servers] == ["cmd"]
        again.select_connection(conn)
        again.duplicate_selected()  # an explicit copy is a second server
        assert [e.name for e in again.catalog.servers] == ["cmd", "cmd (2)"]


async def test_a_crash_between_temp_write_and_rename_keeps_the_servers(open_window, new_catalog, catalog_path,
                                                                       tmp_path):
    async with open_window(catalog=new_catalog()) as window:
        window.add_server(ServerSpec(name="kept", command=["python3", "-V"]), connect=False)
    before = catalog_path.read_text()
    # Another Spyglass dies (os._exit) after writing the temp file and before renaming it.
    code = textwrap.dedent(f"""
        import os
        from inspector.catalog import Catalog
        from inspector.config import ServerSpec
        from inspector.keystore import MemorySecrets
        c = Catalog({str(catalog_path)!r}, secrets=MemorySecrets()).load()
        c.add(ServerSpec(name="lost", command=["y"]))
        os.replace = lambda *a: os._exit(9)
        c.save()
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 9, r.stderr
    assert catalog_path.read_text() == before
    assert list(catalog_path.parent.glob(".servers.json.*.tmp"))  # the half-done write is left beside it
    async with open_window(catalog=new_catalog()) as again:
        assert [c.name for c in again.restore_servers()] == ["kept"]


async def test_no_keyring_says_secrets_cannot_be_saved(open_window, catalog_path):
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        async with open_window(catalog=Catalog(catalog_path).load()) as window:
            window.add_server(ServerSpec(name="gh", command=["x"], env={"GITHUB_TOKEN": "ghp_1"}), connect=False)
            text = window.banner.label.text()
            assert "cannot be saved" in text and "keyring" in text
            assert "ghp_1" not in catalog_path.read_text()
            window.banner.dismiss()
    finally:
        keyring.set_keyring(previous)


# ---------------------------------------------------------------------- import
IMPORTS = {
    "claude_desktop_config.json": {"filesystem", "github", "sqlite"},
    "cursor_mcp.json": {"linear", "context7", "notes", "postgres"},
    "vscode_mcp.json": None,
    "inspector_config.json": None,
    "mcp_inspector_catalog.json": {"filesystem-server-default", "issues"},
    "server.json": None,
    "server_snake_case.json": None,
    "broken_entries.json": {"good", "extra-keys", "not-installed"},
}


@pytest.mark.parametrize("name", sorted(IMPORTS))
async def test_import_each_sample_file_through_the_dialog(open_window, new_catalog, catalog_path, keyring_, name):
    from inspector.importers import preview_file
    from inspector.ui.servers.import_dialog import ImportDialog

    expected = IMPORTS[name]
    async with open_window(catalog=new_catalog()) as window:
        dialog = window.import_file(str(DATA / name))
        assert isinstance(dialog, ImportDialog) and dialog.isVisible()
        assert not catalog_path.exists()  # nothing written by the preview
        tree = dialog.tree
        keys = [tree.topLevelItem(i).data(0, Qt.UserRole) for i in range(tree.topLevelItemCount())]
        preview = preview_file(DATA / name, Catalog(catalog_path, secrets=MemorySecrets()))
        assert keys == [e.key for e in preview.entries]
        shown = "\n".join(tree.topLevelItem(i).text(1) for i in range(tree.topLevelItemCount()))
        for secret in ("ghp_example", "ctx7sk-example", "local-dev-token"):
            assert secret not in shown  # definitions are masked
        for e in preview.entries:  # each broken entry names its problem
            notes = tree.topLevelItem(keys.index(e.key)).text(2)
            if e.error:
                assert "Cannot import" in notes and not dialog.action_boxes[e.key].isEnabled()
        for q in preview.questions:  # passwords are asked in hidden fields
            field = dialog.answer_fields[q.token]
            if q.password and isinstance(field, QLineEdit):
                assert field.echoMode() == QLineEdit.Password
        if name in ("vscode_mcp.json", "server.json", "cursor_mcp.json", "broken_entries.json"):
            await grab(dialog, f"import-preview-{Path(name).stem}")
        answer_everything(dialog)
        find(dialog, QPushButton, "importButton").click()
        await until(lambda: not dialog.isVisible(), 5, "the dialog to close after Import")
        assert dialog.result_ is not None, dialog.error.text()
        names = {c.name for c in window.connections()}
        importable = {e.name for e in preview.entries if e.importable}
        assert names == (expected if expected is not None else importable)
        assert all(c.session.status is Status.IDLE for c in window.connections())  # imported, not started
        text = catalog_path.read_text()
        for secret in ("s3cret-value", "ghp_example", "ctx7sk-example", "local-dev-token"):
            assert secret not in text
        again = new_catalog()
        assert {e.name for e in again.servers} == names
        if name == "claude_desktop_config.json":
            gh = again.find("github")
            assert gh.spec.env["GITHUB_PERSONAL_ACCESS_TOKEN"].startswith("ghp_example")  # from the keyring
        assert "Imported from" in window.banner.label.text()


@pytest.mark.parametrize("name,where", [
    ("broken_json.json", "line 5, column"),
    ("truncated_vscode.json", "line"),
    ("not_a_config.json", "expected a JSON object"),
    ("empty.json", "defines no servers"),
    ("no_such_file.json", "file not found"),
])
async def test_broken_files_name_file_and_line_and_change_nothing(open_window, new_catalog, catalog_path, name,
                                                                  where):
    async with open_window(catalog=new_catalog()) as window:
        window.add_server(ServerSpec(name="already", command=["python3", "-V"]), connect=False)
        before = catalog_path.read_text()
        assert window.import_file(str(DATA / name)) is None
        text = window.banner.label.text()
        assert name in text and where in text, text
        assert dialog_of(window, "importDialog") is None
        assert catalog_path.read_text() == before
        if name == "broken_json.json":
            from uikit import shot

            await shot(window, "import-broken-file")
        window.banner.dismiss()


async def test_conflicts_rename_replace_and_skip(open_window, new_catalog, catalog_path):
    async with open_window(catalog=new_catalog()) as window:
        window.add_server(ServerSpec(name="github", command=["old-github"]), connect=False)
        window.add_server(ServerSpec(name="filesystem", command=["old-fs"]), connect=False)
        window.add_server(ServerSpec(name="sqlite", command=["uvx", "mcp-server-sqlite", "--db-path",
                                                             "/Users/ada/test.db"]), connect=False)
        dialog = window.import_file(str(DATA / "claude_desktop_config.json"))
        actions = {k: c.currentData() for k, c in dialog.action_boxes.items()}
        assert actions == {"filesystem": "rename", "github": "rename", "sqlite": "skip"}  # sqlite: identical
        notes = {dialog.tree.topLevelItem(i).data(0, Qt.UserRole): dialog.tree.topLevelItem(i).text(2)
                 for i in range(dialog.tree.topLevelItemCount())}
        assert "Already in the catalog" in notes["sqlite"] and "different server" in notes["github"]
        assert [dialog.action_boxes["github"].itemData(i) for i in range(dialog.action_boxes["github"].count())] \
            == ["rename", "replace", "skip"]
        dialog.set_action("github", "replace")
        dialog.set_action("filesystem", "rename", "filesystem (laptop)")
        assert dialog.name_edits["filesystem"].isVisibleTo(dialog)
        await grab(dialog, "import-preview-conflicts")
        dialog.do_import()
        names = [c.name for c in window.connections()]
        assert names == ["github", "filesystem", "sqlite", "filesystem (laptop)"]
        github = next(c for c in window.connections() if c.name == "github")
        assert github.spec.command[0] == "npx"  # replaced in place
        saved = new_catalog()
        assert [e.name for e in saved.servers] == names


async def test_missing_answers_keep_the_dialog_open(open_window, new_catalog, catalog_path):
    async with open_window(catalog=new_catalog()) as window:
        dialog = window.import_file(str(DATA / "vscode_mcp.json"))
        assert dialog.do_import() is None
        assert dialog.isVisible() and "Fill in" in dialog.error.text() and not catalog_path.exists()
        dialog.reject()


async def test_drop_a_file_on_the_window_opens_the_preview(open_window, new_catalog):
    async with open_window(catalog=new_catalog()) as window:
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(str(DATA / "cursor_mcp.json"))])
        enter = QDragEnterEvent(QPoint(200, 200), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
        QApplication.sendEvent(window, enter)  # Qt delivers a drop only after an accepted drag-enter
        assert enter.isAccepted()
        event = QDropEvent(QPointF(200, 200), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
        QApplication.sendEvent(window, event)
        assert event.isAccepted()
        dialog = await until(lambda: dialog_of(window, "importDialog"), 5, "the import dialog")
        assert "cursor_mcp.json" in find(dialog, type(dialog.error), "importSource").text()
        dialog.reject()


def test_launch_flag_import_opens_the_preview(qapp, tmp_path, monkeypatch):
    from inspector import app as spyglass_app
    from inspector.ui.window.files import ServerFiles

    assert spyglass_app.parse_args(["--import", "x.json"]).import_file == "x.json"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("SPYGLASS_CONFIG_DIR", str(tmp_path / "config"))
    from PySide6.QtCore import QSettings

    QSettings.setPath(QSettings.NativeFormat, QSettings.UserScope, str(tmp_path / "qconfig"))
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / "qconfig"))
    seen = []
    real = ServerFiles.import_file

    dialogs = []

    def spy(files, path):
        dialog = real(files, path)
        seen.append((path, dialog is not None and dialog.isVisible(), len(dialog.preview.entries)))
        dialogs.append(dialog)
        return dialog

    monkeypatch.setattr(ServerFiles, "import_file", spy)
    from inspector.__main__ import main

    out = tmp_path / "import.png"
    assert main(["--import", str(DATA / "claude_desktop_config.json"), "--screenshot", str(out),
                 "--", *demo_cmd()]) == 0
    for dialog in dialogs:  # main() returned, but this process goes on: no modal dialog left for other tests
        dialog.reject()
        dialog.deleteLater()
    assert seen == [(str(DATA / "claude_desktop_config.json"), True, 3)]
    assert not (tmp_path / "config" / "servers.json").exists()  # the preview wrote nothing


# ---------------------------------------------------------------------- export
async def test_export_catalog_and_one_server_and_copy_command(open_window, new_catalog, tmp_path):
    async with open_window(catalog=new_catalog()) as window:
        window.add_server(ServerSpec(name="gh", command=["npx", "server-github"], env={"GITHUB_TOKEN": "ghp_1"}),
                          connect=False)
        window.add_server(ServerSpec(name="remote", url="https://example.com/mcp"), connect=False)
        out = tmp_path / "claude_desktop_config.json"
        out.write_text(json.dumps({"globalShortcut": "Ctrl+Space", "mcpServers": {"other": {"command": "x"}}}))
        assert window.files.export(None, str(out)) is True
        data = json.loads(out.read_text())
        assert data["globalShortcut"] == "Ctrl+Space" and set(data["mcpServers"]) == {"other", "gh", "remote"}
        assert data["mcpServers"]["gh"]["env"]["GITHUB_TOKEN"] != "ghp_1"  # masked
        one = tmp_path / "one.json"
        window.select_connection(window.connections()[1])
        assert window.files.export("selected", str(one)) is True
        assert json.loads(one.read_text()) == {"mcpServers": {"remote": {"type": "http",
                                                                          "url": "https://example.com/mcp"}}}
        window.select_connection(window.connections()[0])
        window.act_copy_command.trigger()
        copied = QGuiApplication.clipboard().text()
        assert copied == 'spyglass -e GITHUB_TOKEN="$GITHUB_TOKEN" -- npx server-github'


# ---------------------------------------------------------------------- preferences
async def test_preferences_persist_across_a_restart(open_window, settings, qapp):
    from inspector.ui.window import preferences
    from inspector.ui.window.preferences import Preferences, PreferencesDialog

    base_size = qapp.font().pointSize()
    try:
        async with open_window() as window:
            window.act_preferences.trigger()
            dialog = await until(lambda: dialog_of(window, "preferencesDialog"), 5, "the preferences dialog")
            assert isinstance(dialog, PreferencesDialog)
            await grab(dialog, "preferences-dialog")
            find(dialog, QComboBox, "prefTheme").setCurrentIndex(2)  # dark
            dialog.font_size.setValue(16)
            dialog.timeout.setValue(15)
            dialog.confirm.setCurrentIndex(dialog.confirm.findData("not-read-only"))
            dialog.protocol.setCurrentIndex(dialog.protocol.findData("legacy"))
            dialog.max_message.setValue(8)
            dialog.keep_sessions.setValue(256)
            find(dialog, QComboBox, "prefRootsPolicy").setCurrentIndex(1)  # ask each time
            cimd = find(dialog, QLineEdit, "prefClientMetadataUrl")
            cimd.setText("http://example.com/spyglass.json")  # not https: refused, with the reason
            dialog.accept()
            problem = find(dialog, QLabel, "prefClientMetadataProblem")
            assert dialog.isVisible() and problem.text() == "Not usable: it must be an https:// URL."
            cimd.setText("https://example.com/spyglass.json")
            assert not problem.isVisible()
            dialog.accept()
            assert qapp.font().pointSize() == 16 and window.preferences.timeout == 15
            # the text size reaches fixed row heights and headers too, not only the widgets' fonts
            for name in ("trafficView", "timelineMethods"):
                table = find(window, QTableView, name)
                await until(lambda t=table: t.font().pointSize() == 16, 5, f"{name} to take the text size")
                assert table.horizontalHeader().font().pointSize() == 16
                need = table.fontMetrics().height()
                assert table.verticalHeader().defaultSectionSize() >= need + 4, (name, need)
            conn = window.add_server(ServerSpec(name="s", command=["x"]), connect=False)
            assert conn.session.options.transport.max_message == 8 * 1024 * 1024  # passed in, per server
            options = conn.session.options
            assert options.mode == "legacy" and options.timeout == 15  # the defaults for new servers
            assert settings.value("confirmPolicy") == "not-read-only"  # what the call panel reads
            remote = window.add_server(ServerSpec(name="r", url="https://mcp.example.com/mcp"), connect=False)
            assert remote.auth.settings().client_metadata_url == "https://example.com/spyglass.json"
            await grab(window, "preferences-large-text-dark")
        async with open_window() as again:  # a restart: a new window on the same settings
            prefs = Preferences.load(settings)
            assert prefs == Preferences(
                theme="dark",
                font_size=16,
                timeout=15.0,
                confirm_policy="not-read-only",
                protocol_mode="legacy",
                max_message_mib=8,
                keep_sessions_mib=256,
                client_metadata_url="https://example.com/spyglass.json",
                roots_policy="ask",
            )
            assert again.preferences == prefs
            dialog = PreferencesDialog(settings, again)
            assert dialog.values() == prefs
            dialog.show_values(Preferences())
            assert dialog.values() == Preferences()  # Restore defaults
            dialog.reject()
    finally:
        preferences.apply_font(qapp, 0)
    assert qapp.font().pointSize() == base_size


@pytest.mark.parametrize("scale", [1.0, 2.0])
async def test_every_preference_field_starts_at_one_x(open_window, qapp, settings, scale):
    """Four group boxes, four forms: the fields started at four different x positions (407, 528, 514, 480 px)."""
    from inspector.ui.window import preferences
    from inspector.ui.window.preferences import PreferencesDialog

    base = qapp.font().pointSizeF()
    try:
        if scale != 1.0:
            preferences.apply_font(qapp, round(base * scale))
        async with open_window() as window:
            dialog = PreferencesDialog(settings, window)
            dialog.show()
            await until(lambda: dialog.isVisible(), 5, "the dialog")
            await asyncio.sleep(0.05)
            fields = [dialog.theme, dialog.font_size, dialog.timeout, dialog.confirm, dialog.protocol,
                      dialog.roots_policy, dialog.max_message, dialog.keep_sessions, dialog.client_metadata]
            xs = {f.objectName() or type(f).__name__: f.mapTo(dialog, QPoint(0, 0)).x() for f in fields}
            assert max(xs.values()) - min(xs.values()) <= 1, xs
            form = dialog.form
            labels = [form.itemAt(r, form.ItemRole.LabelRole).widget() for r in range(form.rowCount())
                      if form.itemAt(r, form.ItemRole.LabelRole) is not None]
            assert len(labels) == 9 and all(lab.width() >= lab.sizeHint().width() for lab in labels)  # none cut
            assert all(f.x() + f.width() <= dialog.width() for f in fields)  # and nothing pushed out of sight
            dialog.reject()
    finally:
        preferences.apply_font(qapp, 0)


def test_preferences_ignore_garbage(settings):
    from inspector.ui.window.preferences import Preferences

    for key, value in (
        ("theme", "pink"),
        ("fontSize", "huge"),
        ("requestTimeout", "-3"),
        ("confirmPolicy", "sometimes"),
        ("protocolMode", "1999"),
        ("traffic/maxMessageMiB", "0"),
        ("auth/clientMetadataUrl", "https://example.com/"),
        ("rootsPolicy", "sometimes"),
    ):
        settings.setValue(key, value)
    assert Preferences.load(settings) == Preferences(max_message_mib=1)


def test_prune_sessions_keeps_the_newest(tmp_path):
    from inspector.ui.window.preferences import prune_sessions

    for i, stamp in enumerate(["2026-01-01T00-00-00Z", "2026-02-01T00-00-00Z", "2026-03-01T00-00-00Z"]):
        (tmp_path / f"{stamp}.sqlite").write_bytes(b"x" * (600 * 1024))
    removed = prune_sessions(1, tmp_path)
    assert [p.name for p in removed] == ["2026-02-01T00-00-00Z.sqlite", "2026-01-01T00-00-00Z.sqlite"]
    assert [p.name for p in tmp_path.iterdir()] == ["2026-03-01T00-00-00Z.sqlite"]
    assert prune_sessions(0, tmp_path) == []


# ---------------------------------------------------------------------- palette, shortcuts, about
async def test_command_palette_actions(open_window, new_catalog):
    async with open_window(catalog=new_catalog()) as window:
        other = window.add_server(ServerSpec(name="second", command=["python3", "-V"]), connect=False)
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await until(
            lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30, "the demo to connect"
        )
        window.act_palette.trigger()
        palette = window.command_palette
        assert palette.isVisible() and palette.objectName() == "commandPalette"
        labels = palette.labels()
        for wanted in (
            "Server: Disconnect",
            "View: Clear traffic",
            "Switch to server: second (not connected)",
            "Tool: Echo (echo)",
            "File: Export catalog (Claude Desktop format)",
        ):
            assert any(label.startswith(wanted) for label in labels), (wanted, "\n".join(labels))
        palette.input.setText("div")
        await grab(palette, "command-palette", over=window)
        assert palette.labels()[0] == "Tool: Divide two numbers (divide)"  # the best match first
        palette.run_index(palette.list.currentIndex())
        assert window.tool_panel.selected_name() == "divide" and not palette.isVisible()
        # clear traffic
        window.act_palette.trigger()
        window.command_palette.input.setText("clear traffic")
        window.command_palette.run_index(window.command_palette.list.currentIndex())
        if window.traffic_pane is not None:
            assert window.traffic_pane.view.model().rowCount() == 0
        # switch server
        window.act_palette.trigger()
        window.command_palette.input.setText("switch second")
        window.command_palette.run_index(window.command_palette.list.currentIndex())
        assert window.selected_connection() is other
        # connect / disconnect the selected one
        window.select_connection(conn)
        window.act_palette.trigger()
        window.command_palette.input.setText("disconnect")
        window.command_palette.run_index(window.command_palette.list.currentIndex())
        await until(lambda: conn.session.status is Status.DISCONNECTED, 10, "the demo to disconnect")
        window.act_palette.trigger()
        window.command_palette.input.setText("server connect")
        assert window.command_palette.labels()[0].startswith("Server: Connect")
        window.command_palette.run_index(window.command_palette.list.currentIndex())
        await until(lambda: conn.session.status is Status.CONNECTED, 30, "the demo to connect again")


async def test_the_palette_reaches_every_menu_action_tab_and_view(open_window, new_catalog):
    """Every menu action (by its menu path), every tab and every view is found by typing, fuzzily, best first;
    the matched letters are what is drawn bold; the shortcut is drawn at the row's right end; nothing found
    says so in a sentence."""
    from PySide6.QtWidgets import QMenu

    from inspector.ui.window.command_palette import menu_commands

    async with open_window(catalog=new_catalog()) as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await until(
            lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30, "the demo to connect"
        )
        palette = window.open_command_palette()
        labels = palette.labels()

        def enabled_actions(menu: QMenu) -> list:
            out = []
            for a in menu.actions():
                if a.menu() is not None:
                    out += enabled_actions(a.menu())
                elif not a.isSeparator() and a.isVisible() and a.isEnabled() and a is not window.act_palette:
                    out.append(a)
            return out

        every = [a for top in window.menuBar().actions() if top.menu() for a in enabled_actions(top.menu())]
        offered = [c for c in menu_commands(window.menuBar(), [window.act_palette]) if c.enabled]
        assert len(every) >= 30 and len(offered) == len(every)
        for i in range(window.tabs.count()):
            if not window.tabs.isTabVisible(i):  # Skills, on a server without them
                continue
            assert any(label.startswith(f"Tab: {window.tabs.tabText(i)}") for label in labels), window.tabs.tabText(i)
        for wanted in ("File: Quit", "Show view: Timeline", "Show view: Log"):
            assert wanted in labels, wanted
        assert "Quit" not in [a.text() for a in window.findChild(QMenu, "serverMenu").actions()]
        palette.close()

        async def first(query: str) -> str:
            p = window.open_command_palette()
            p.input.setText(query)
            top = p.labels()[0] if p.labels() else ""
            p.close()
            return top

        assert await first("dark") == "View › Theme: Dark"
        assert await first("present") == "View: Presentation mode (off)"
        assert await first("check") == "Tab: Check"
        assert await first("resources") == "Tab: Resources"
        assert (await first("timeline")).endswith("Timeline") or "Timeline (" in await first("timeline")
        assert await first("mdrep") == "Tool: Markdown report (markdown_report)"  # letters, not a substring
        palette = window.open_command_palette()
        palette.input.setText("theme")
        assert [label for label in palette.labels() if label.startswith("View › Theme")] == palette.labels()[:4]
        palette.input.setText("div")
        assert palette.labels()[0] == "Tool: Divide two numbers (divide)" and palette.highlighted(0) == "Div"
        palette.input.setText("zzqx")
        empty = find(palette, QLabel, "commandPaletteEmpty")
        assert palette.labels() == [] and empty.isVisible() and "“zzqx”" in empty.text()
        assert not palette.list.isVisible()

        def ink_at_right(query: str) -> int:
            palette.input.setText(query)
            row_rect = palette.list.visualRect(palette.proxy.index(0, 0))
            image = palette.list.viewport().grab().toImage()
            base = image.pixelColor(row_rect.right() - 2, row_rect.center().y())
            x0 = row_rect.right() - 8 - palette.fontMetrics().horizontalAdvance("F1") - 4
            return sum(1 for x in range(x0, row_rect.right() - 4) for y in range(row_rect.top() + 2,
                       row_rect.bottom() - 2) if image.pixelColor(x, y) != base)

        assert ink_at_right("keyboard shortcuts") > 5  # "F1", drawn at the right end of its row
        assert ink_at_right("tab check") == 0  # no shortcut: the row's right end is empty
        palette.input.setText("tab resources")
        palette.run_index(palette.list.currentIndex())
        assert window.tabs.currentWidget() is window.resources_pane
        palette = window.open_command_palette()
        palette.input.setText("show view log")
        palette.run_index(palette.list.currentIndex())
        await until(lambda: not window.log_dock.visibleRegion().isEmpty(), 5, "the log view to come to the front")


async def test_focus_shortcuts_and_the_shortcuts_view(open_window):
    from inspector.ui.window.shortcuts import ShortcutsDialog

    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await until(
            lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30, "the demo to connect"
        )
        window.activateWindow()
        window.log_dock.raise_()
        window.act_filter_traffic.trigger()
        if window.traffic_pane is not None:
            assert window.focusWidget() is find(window, QLineEdit, "trafficFilter")
        window.act_find_tool.trigger()
        assert window.focusWidget() is find(window, QLineEdit, "toolSearch")
        keys = {
            a.objectName(): a.shortcut().toString()
            for a in (window.act_filter_traffic, window.act_find_tool, window.act_palette, window.act_refresh)
        }
        assert keys == {
            "actionFilterTraffic": "Ctrl+F",
            "actionFindTool": "Ctrl+L",
            "actionCommandPalette": "Ctrl+K",
            "actionRefreshTools": "F5",
        }
        window.act_shortcuts.trigger()
        dialog = await until(lambda: dialog_of(window, "shortcutsDialog"), 5, "the shortcuts view")
        assert isinstance(dialog, ShortcutsDialog)
        listed = {k for k, _ in dialog.rows()}
        for k in ("Ctrl+F", "Ctrl+L", "Ctrl+K", "F5", "Ctrl+Return", "Ctrl+O", "Ctrl+R", "Ctrl+J"):
            assert k in listed, (k, listed)
        every = {
            a.shortcut().toString() for a in window.findChildren(type(window.act_palette)) if not a.shortcut().isEmpty()
        }
        assert every <= listed  # every shortcut of the window is in the view
        await grab(dialog, "keyboard-shortcuts")
        dialog.reject()


async def test_about_names_versions_and_the_data_directory(open_window):
    from PySide6.QtCore import qVersion

    from inspector.traffic.sessions import sessions_dir

    async with open_window() as window:
        find(window, type(window.act_palette), "actionAbout").trigger()
        dialog = await until(lambda: dialog_of(window, "aboutDialog"), 5, "the About dialog")
        assert dialog.values["Traffic sessions"] == str(sessions_dir())
        assert qVersion() in dialog.values["Qt"] and sys.version.split()[0] in dialog.values["Python"]
        assert dialog.values["Version"].startswith("0.")
        await grab(dialog, "about")
        dialog.reject()


async def test_last_selected_server_and_tool_are_restored(open_window, new_catalog, settings):
    async with open_window(catalog=new_catalog()) as window:
        window.add_server(ServerSpec(name="idle one", command=["python3", "-V"]), connect=False)
        conn = window.add_server(ServerSpec(name="demo here", command=demo_cmd()))
        await until(
            lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30, "the demo to connect"
        )
        window.tool_panel.view.setCurrentIndex(row_of(window.tool_panel.view, "divide"))
        window.save_settings()
    assert settings.value("window/lastServer") == "demo here" and settings.value("window/lastTool") == "divide"
    async with open_window(catalog=new_catalog()) as again:
        again.restore_servers()
        again.add_server(demo_spec())  # as the app does: the demo is added and selected last
        conn = again.restore_selection()
        assert conn is not None and again.selected_connection() is conn and conn.name == "demo here"
        await until(lambda: again.tool_panel.selected_name() == "divide", 30, "the last tool to be selected")
