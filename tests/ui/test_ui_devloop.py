"""The development loop in the window: Restart on save on a real SDK server whose source the test
rewrites — the row says it is restarting, the traffic gets a marker, the tool list marks what changed,
the selected tool stays selected with the arguments its new schema still takes, the last call runs again
and the Re-run dock shows both answers with the difference; a broken start shows its stderr and the next
save brings it back; the watch settings dialog; `--watch` on the command line."""

from __future__ import annotations

import asyncio
import time

import pytest
import watched_server as watched
from calling import call
from PySide6.QtWidgets import QComboBox, QLineEdit, QTreeWidget
from uikit import find, row_of, shot, until

from inspector import errors as E
from inspector.app import parse_args, watch_settings
from inspector.config import ServerSpec
from inspector.devloop import WatchSettings
from inspector.session import Status
from inspector.ui.devloop.watch_dialog import WatchDialog


@pytest.fixture
def source(tmp_path):
    folder = tmp_path / "srv"
    folder.mkdir()
    watched.write(folder, "v1")
    return folder


async def test_restart_on_save_marks_changes_keeps_the_form_and_shows_the_rerun(open_window, source):
    async with open_window() as window:
        spec = ServerSpec(name="watched", command=watched.command(source), cwd=str(source))
        conn = window.add_server(spec, mode="legacy", save=False)
        await until(lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30, "connected")
        window.tool_panel.select("greet")
        await until(lambda: window.tool_detail.form is not None, 10, "the form")
        rec = await call(window, "greet", {"name": "Ada"}, timeout=20)  # greet declares nothing: it asks first
        assert rec.result["content"][0]["text"] == "Hello, Ada!"
        window.devloop.act_watch.trigger()
        loop = window.devloop.loop_of(conn)
        assert loop is not None and window.devloop.act_watch.isChecked()
        await asyncio.sleep(0.4)
        statuses = []
        conn.statusChanged.connect(lambda: statuses.append(conn.session.status_text()))
        saved = time.monotonic()
        watched.write(source, "v2")
        await until(lambda: loop.rerun_at is not None, 30, "the re-run")
        shown = time.monotonic() - saved
        assert any(s.startswith("restarting (1 file changed)") for s in statuses), statuses
        # the tool list: what changed is marked, the selection kept
        names = {row_of(window.tool_panel.view, n) is not None for n in ("greet", "wave", "farewell")}
        assert names == {True}
        assert window.tool_panel.selected_name() == "greet"
        from inspector.ui.base.items import CHANGE_ROLE
        marks = {window.tool_panel.view.model().index(r, 0).data(CHANGE_ROLE) for r in
                 range(window.tool_panel.view.model().rowCount())}
        assert {"new", "removed", "schema and description changed"} <= marks, marks
        assert window.tool_panel.count.text() == "2 tools"
        assert window.tool_panel.changes.text() == "Since the last listing: 1 new, 1 removed, 1 changed"
        # the form has the new schema, with the argument it still takes
        assert "loud" in str(window.tool_detail.form.schema)
        assert window.tool_detail.form.value().get("name") == "Ada"
        # the re-run, beside the call before
        view = window.devloop.view
        await until(lambda: view.list.topLevelItemCount() == 1, 10, "the re-run listed")
        assert "1 file changed): 1 of 1 call answered differently" in view.summary.text(), view.summary.text()
        assert "/content/0/text" in view.changes.paths()
        assert view.list.topLevelItem(0).text(3) != "none"
        assert "Hi, Ada!" in view.sides.b.view.toPlainText() and "Hello, Ada!" in view.sides.a.view.toPlainText()
        # the traffic: one restart marker, not dimmed
        store = window.store
        window.traffic.flush()
        await until(lambda: any((store.meta(n) or {}).get("marker") == "restart" for n in range(len(store))), 10,
                    "the restart marker")
        await shot(window, "devloop-rerun-light")
        print(f"saved → re-run shown: {shown:.2f} s")
        # a broken start: stderr and exit code; the next save brings it back
        watched.write(source, "broken")
        await until(lambda: loop.state == "failed", 30, "the failed start")
        assert "exit code 3" in conn.session.status_text()
        assert window.status_card.isVisible()
        assert any("config is broken" in line for line in conn.session.stderr_tail)
        await shot(window, "devloop-broken-light")
        watched.write(source, "v1")
        await until(lambda: loop.state == "watching" and conn.session.status is Status.CONNECTED, 30, "back")
        window.devloop.act_watch.trigger()
        await until(lambda: window.devloop.loop_of(conn) is None and not loop.running, 10, "unwatched")


async def test_the_watch_settings_dialog_and_pinned_calls(open_window, source, qtbot):
    async with open_window(mode="dark") as window:
        spec = ServerSpec(name="watched", command=watched.command(source), cwd=str(source))
        conn = window.add_server(spec, mode="modern", save=False)
        await until(lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30, "connected")
        dialog = window.devloop.open_settings()
        assert isinstance(dialog, WatchDialog)
        assert str(source) in dialog.preview.text() and "*.py" in dialog.preview.text()
        find(dialog, QLineEdit, "watchPatterns").setText("*.py, *.toml")
        rerun = find(dialog, QComboBox, "watchRerun")
        rerun.setCurrentIndex(rerun.findData("pinned"))
        await shot(dialog, "devloop-watch-dialog-dark")
        dialog.accept()
        loop = window.devloop.loop_of(conn)
        assert loop is not None and loop.settings == WatchSettings(patterns=["*.py", "*.toml"], rerun="pinned")
        a = conn.session.calls.call("greet", {"name": "A"})
        b = conn.session.calls.call("farewell", {"name": "B"})
        await until(lambda: not a.running and not b.running, 20, "two calls")
        window.tool_panel.select("greet")
        history = window.tool_detail.history
        await until(lambda: history.tree.topLevelItemCount() >= 2, 10, "history")
        history.tree.setCurrentItem(history._items[a.id])
        history.pin.click()
        assert a.pinned and not b.pinned
        assert history._items[a.id].text(1).startswith("📌 ")
        await asyncio.sleep(0.4)
        watched.write(source, "v2")
        await until(lambda: loop.rerun_at is not None, 30, "the re-run of the pinned call")
        assert [r.before.tool for r in loop.reruns] == ["greet"]
        assert find(window, QTreeWidget, "rerunList").topLevelItemCount() == 1
        await shot(window, "devloop-rerun-dark")


def test_watch_on_the_command_line(tmp_path):
    args = parse_args(["--watch", str(tmp_path), "--watch-files", "*.py *.json", "--rerun", "pinned",
                       "--", "python", "server.py"])
    assert watch_settings(args) == WatchSettings([str(tmp_path)], ["*.py", "*.json"], "pinned")
    with pytest.raises(E.UsageError, match="no such file or folder"):
        parse_args(["--watch", str(tmp_path / "nope"), "--", "python", "server.py"])
    with pytest.raises(E.UsageError, match="--watch needs a server"):
        parse_args(["--watch", str(tmp_path)])


async def test_a_saved_server_keeps_its_watch_in_the_catalog(open_window, source, tmp_path):
    from inspector.catalog import Catalog
    from inspector.keystore import MemorySecrets

    keyring = MemorySecrets()
    path = tmp_path / "config" / "servers.json"
    spec = ServerSpec(name="watched", command=watched.command(source), cwd=str(source))
    async with open_window(catalog=Catalog(path, secrets=keyring).load()) as window:
        conn = window.add_server(spec, connect=False)
        window.devloop.watch(conn, WatchSettings(patterns=["*.py"], rerun="pinned"))
        assert window.devloop.act_watch.isChecked()
        window.save_settings()
    raw = path.read_text()
    assert '"watch"' in raw and '"pinned"' in raw
    async with open_window(catalog=Catalog(path, secrets=keyring).load()) as again:
        [restored] = again.restore_servers()
        loop = again.devloop.loop_of(restored)
        assert loop is not None and loop.settings == WatchSettings(patterns=["*.py"], rerun="pinned")
        again.select_connection(restored)
        assert again.devloop.act_watch.isChecked()
        again.devloop.act_watch.trigger()  # off: saved as off
        await until(lambda: again.devloop.loop_of(restored) is None, 5, "unwatched")
        assert again.catalog_link.entry_of(restored).watch["on"] is False
