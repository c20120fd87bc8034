"""Sessions you keep, in the window: File → Open session shows a recorded session read-only (servers,
tools with their forms disabled, calls with their answers drawn as live ones are, the log, server info,
every frame in the traffic dock); a damaged file opens and says what could not be read; a file that is
no session gets a message; Export → Import gives the same frames back; the recent list. The sessions are
recorded with real servers (the SDK peer, the demo server) through a real `ServerSession` and
`TrafficStore`; test_ui_sessions_replay.py uses the same helpers."""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QListView, QMessageBox, QTableView, QWidget
from support import PY, SDK_SERVER
from uikit import ARTIFACTS, demo_cmd, until

from inspector.config import ServerSpec
from inspector.recording.files import definition_of, open_session
from inspector.session import ServerSession, SessionOptions
from inspector.traffic import TrafficStore
from inspector.ui.base import theme
from inspector.ui.recording.session_window import SessionWindow


def sdk_spec(*flags: str, name: str = "sdk") -> ServerSpec:
    return ServerSpec(name=name, command=[PY, str(SDK_SERVER), *flags])


def demo_spec_(name: str = "demo") -> ServerSpec:
    return ServerSpec(name=name, command=demo_cmd())


SDK_CALLS = [("tools/call", {"name": "echo", "arguments": {"message": "hello"}}),
             ("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}),
             ("tools/call", {"name": "fail", "arguments": {}}),
             ("resources/read", {"uri": "sdk://hello"}),
             ("prompts/get", {"name": "review", "arguments": {"code": "print(1)"}})]


async def drive(store: TrafficStore, spec: ServerSpec, requests, *, log_level: str | None = None) -> None:
    """Connect `spec` recording into `store`, list everything, send `requests`, disconnect."""
    store.set_meta(f"server:{spec.name}", json.dumps(definition_of(spec)))
    session = ServerSession(spec, spec.name, SessionOptions(heartbeat_s=None, listen=False, log_level=log_level),
                            traffic=store.hook(spec.name))
    try:
        await session.open()
        await session.listings.load_all(("resources", "templates", "prompts"))
        client = session.need_client()
        for method, params in requests:
            await client.request(method, params)
        await asyncio.sleep(0.1)  # the last notifications (log messages) arrive
    finally:
        await session.close()


async def record_session(path: Path, *, demo: bool = True) -> Path:
    """A session file of the SDK peer (five calls) and, with `demo`, the demo server (its log at every
    level), written as the window writes one."""
    store = TrafficStore(str(path))
    try:
        await drive(store, sdk_spec(), SDK_CALLS)
        if demo:
            await drive(store, demo_spec_(), [("tools/call", {"name": "log_demo", "arguments": {}})],
                        log_level="debug")
    finally:
        store.close()
    return path


async def grab(widget, name: str) -> Path:
    """test-artifacts/NAME.png of a window (after layouts and paints settle)."""
    await asyncio.sleep(0.25)
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    pm = widget.grab()
    assert not pm.isNull() and pm.save(str(path), "PNG")
    return path


def frames(store) -> list[tuple]:
    return [(store.server_id(n), store.direction(n), store.raw(n), store.wall(n)) for n in range(len(store))]


def calls_rows(win: SessionWindow) -> list[tuple[str, str, str]]:
    model = win.findChild(QTableView, "sessionCalls").model()
    return [tuple(model.index(row, col).data() for col in (2, 5, 3)) for row in range(model.rowCount())]  # method,
    # target, outcome


def shown(view: QWidget, name: str, cls=QWidget) -> list:
    return [w for w in view.findChildren(cls, name) if w.isVisibleTo(view)]


async def test_a_recorded_session_opens_read_only(open_window, tmp_path, qapp):
    path = await record_session(tmp_path / "recorded.sqlite")
    async with open_window() as window:
        win = window.sessions.open_path(path)
        assert isinstance(win, SessionWindow) and win.objectName() == "sessionWindow"
        assert win.windowTitle() == "recorded.sqlite (read-only)"
        assert not win.findChild(QWidget, "sessionProblems").isVisibleTo(win)
        servers = win.findChild(QListView, "sessionServers")
        assert [servers.model().index(r, 0).data(Qt.UserRole) for r in range(servers.model().rowCount())] == [
            "sdk", "demo"]
        view = win.current_view()
        # tools: the list, and each tool's form built from its inputSchema, disabled, with its last arguments
        tools = view.findChild(QListView, "sessionTools")
        names = [tools.model().index(r, 0).data(Qt.UserRole) for r in range(tools.model().rowCount())]
        assert {"add", "echo", "fail", "slow", "ask_name"} <= set(names)
        assert tools.__class__.__name__ == "ItemList" and tools.select("echo")
        page = view.tools
        assert page.form is not None and not page.form.isEnabled()
        assert page.form.value() == {"message": "hello"}
        assert "Echo the message back." in page.description.text()
        assert "record" in page.filled.text() and "nothing is called" in page.filled.text()
        await grab(win, "session-window-tools-light")
        # resources, templates and prompts as listed
        for name, ident in (("sessionResources", "sdk://hello"), ("sessionTemplates", "sdk://greet/{name}"),
                            ("sessionPrompts", "review")):
            assert view.findChild(QListView, name).select(ident), name
        view.setCurrentWidget(view.resources)
        await grab(win, "session-window-resources-light")
        # calls: every one in order, each answer as it was
        assert calls_rows(win) == [("tools/call", "echo", "ok"), ("tools/call", "add", "ok"),
                                   ("tools/call", "fail", "tool error"), ("resources/read", "sdk://hello", "ok"),
                                   ("prompts/get", "review", "ok")]
        calls = view.calls
        result = win.findChild(QWidget, "sessionCallResult")
        calls.select_record(calls.exchanges[0].n)
        texts = shown(result, "result:text")
        assert len(texts) == 1 and "hello" in texts[0].findChild(QWidget, "resultText").toPlainText()
        assert "Done · echo" in result.findChild(QLabel, "resultStatus").text()
        calls.select_record(calls.exchanges[2].n)
        error = shown(result, "result:error")
        assert error and error[0].property("errorKind") == "tool"
        calls.select_record(calls.exchanges[3].n)
        assert shown(result, "resourceContents")
        calls.select_record(calls.exchanges[4].n)
        assert shown(result, "promptMessage")
        result.findChild(QWidget, "sessionCallShowFrame").click()
        assert win.traffic.selected_record() == calls.exchanges[4].n
        view.setCurrentWidget(view.calls)
        calls.select_record(calls.exchanges[0].n)
        await grab(win, "session-window-light")
        # server info
        info = view.info
        assert info.fields["revision"].text() == "2026-07-28"
        assert "spyglass-sdk-peer" in info.fields["info"].text()
        assert "tools" in view.info.capabilities.toPlainText()
        view.setCurrentWidget(view.info)
        await grab(win, "session-window-info-light")
        # the demo server's log
        assert win.select_server("demo")
        log = win.current_view().findChild(QTableView, "sessionLog").model()
        levels = {log.index(i, 1).data() for i in range(log.rowCount())}
        assert {"debug", "info", "error", "emergency"} <= levels
        # every frame in the traffic dock
        assert win.traffic.store is win.opened.store and len(win.opened.store) > 30
        assert win.traffic.model.rowCount() == len(win.opened.store)
        win.close()
        # the same window in the dark theme
        theme.apply_theme(qapp, "dark")
        dark = window.sessions.open_path(path)
        dark.current_view().setCurrentWidget(dark.current_view().calls)
        dark.current_view().calls.select_record(dark.current_view().calls.exchanges[2].n)
        await grab(dark, "session-window-dark")
        dark.select_server("demo")
        dark.current_view().setCurrentWidget(dark.current_view().log)
        await grab(dark, "session-window-log-dark")
        dark.close()


async def test_a_damaged_file_opens_and_says_what_could_not_be_read(open_window, tmp_path):
    path = await record_session(tmp_path / "whole.sqlite", demo=False)
    portable = tmp_path / "whole.mcpsession"
    from inspector.recording.files import export_session

    whole = open_session(path)
    export_session(whole.store, portable)
    data = portable.read_bytes()
    cut = tmp_path / "cut.mcpsession"
    cut.write_bytes(data[: len(data) * 2 // 3])
    async with open_window() as window:
        win = window.sessions.open_path(cut)
        assert win is not None
        banner = win.findChild(QWidget, "sessionProblems")
        assert banner.isVisibleTo(win) and win.problem_lines
        text = win.findChild(QLabel, "sessionProblemsText").text()
        assert "could not be read" in text and "frames could be read" in text
        assert 0 < len(win.opened.store) < len(whole.store)
        assert win.surfaces and win.surfaces[0].name == "sdk"
        await grab(win, "session-window-damaged")
        win.close()
        # a SQLite file cut short opens too, with what could be read
        torn = tmp_path / "torn.sqlite"
        shutil.copy(path, torn)
        raw = torn.read_bytes()
        torn.write_bytes(raw[: len(raw) // 2])
        torn_win = window.sessions.open_path(torn)
        assert torn_win is not None and any("damaged" in p for p in torn_win.problem_lines)
        assert torn_win.findChild(QWidget, "sessionEmpty").isVisibleTo(torn_win)  # no server could be read
        await grab(torn_win, "session-window-torn")
        torn_win.close()


def _message_box(window) -> QMessageBox | None:
    for w in QApplication.topLevelWidgets():
        if isinstance(w, QMessageBox) and w.objectName() == "sessionOpenError" and w.isVisible():
            return w
    return None


async def test_the_menus_offer_the_session_commands(open_window, tmp_path):
    from PySide6.QtGui import QKeySequence
    from PySide6.QtWidgets import QFileDialog, QMenu

    async with open_window() as window:
        file_menu = window.findChild(QMenu, "fileMenu")
        names = [a.objectName() or (a.menu().objectName() if a.menu() else "") for a in file_menu.actions()]
        assert names[:4] == ["actionOpenSession", "recentSessionsMenu", "actionImportSession", "actionExportSession"]
        server_menu = window.findChild(QMenu, "serverMenu")
        order = [a.objectName() for a in server_menu.actions()]
        assert order.index("actionCompareWith") == order.index("actionRefreshTools") + 1
        assert window.sessions.act_compare in window.server_view.actions()
        assert window.sessions.act_open.shortcut() == QKeySequence("Ctrl+Shift+O")
        assert not window.sessions.act_compare.isEnabled()  # no server selected yet
        window.sessions.directory = tmp_path
        window.sessions.fill_recent()
        assert [a.text() for a in window.sessions.recent_menu.actions()] == ["No saved sessions yet"]
        window.sessions.act_open.trigger()
        dialog = await until(lambda: window.findChild(QFileDialog, "openSessionDialog"), 5, "the file dialog")
        assert dialog.directory().absolutePath() == str(tmp_path)
        dialog.reject()
        window.add_server(ServerSpec(name="demo", command=demo_cmd()), connect=False)
        assert window.sessions.act_compare.isEnabled()


async def test_a_file_that_is_no_session_gets_a_message(open_window, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a session\n")
    fake = tmp_path / "fake.mcpsession"
    with gzip.open(fake, "wt") as fh:
        fh.write('{"format": "something else"}\n')
    async with open_window() as window:
        for bad, words in ((notes, "is not a Spyglass session"), (fake, "is not a .mcpsession file"),
                           (tmp_path / "missing.sqlite", "cannot open")):
            assert window.sessions.open_path(bad) is None
            box = await until(lambda: _message_box(window), 5, "the message box")
            assert words in box.text(), box.text()
            assert "Traceback" not in box.text() + box.informativeText()
            box.close()
            await until(lambda: _message_box(window) is None, 5, "the box to close")
        assert not window.sessions.windows


async def test_export_then_import_gives_the_same_frames(open_window, tmp_path):
    from calling import call, connected

    store_path = tmp_path / "live.sqlite"
    async with open_window(store_path=str(store_path)) as window:
        window.sessions.directory = tmp_path
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await connected(conn)
        await call(window, "echo", {"message": "round trip"})
        # the session this very window is writing opens too (what is committed so far)
        live_win = window.sessions.open_path(store_path)
        assert live_win is not None and live_win.surfaces[0].name == "demo"
        assert any(x.target == "echo" for x in live_win.surfaces[0].calls())
        live_win.close()
        dialog = window.sessions.export_dialog()
        assert dialog.objectName() == "exportSessionDialog"
        assert dialog.findChild(QWidget, "exportDropStderr").isEnabled()
        servers = dialog.findChild(QWidget, "exportServers")
        assert servers.count() == 1 and servers.item(0).checkState() == Qt.Checked
        out = tmp_path / "shared.mcpsession"
        dialog.path.setText(str(out))
        dialog.path.textEdited.emit(str(out))
        assert dialog.chosen_format() == ".mcpsession"
        await grab(dialog, "export-session-dialog")
        count = dialog.export_now()
        assert count and count <= len(window.store) and out.exists()
        await until(lambda: "Exported" in window.banner.label.text(), 5, "the export notice")
        # Import session… opens it: the same frames, in order, byte for byte
        imported = window.sessions.open_path(out)
        assert imported is not None and imported.opened.kind == "mcpsession"
        window.store.flush(wait=True)
        assert frames(imported.opened.store) == frames(window.store)[:count]  # (a heartbeat may follow)
        # the recent list: this window's session file, then the file opened
        window.sessions.fill_recent()
        labels = [(a.data(), a.text()) for a in window.sessions.recent_menu.actions() if a.data()]
        assert labels[0][0] == str(store_path) and "this window" in labels[0][1]
        assert labels[-1][0] == str(out) and labels[-1][1].startswith("shared.mcpsession · ")
        imported.close()
        # a format chosen by the file's type; HAR has only HTTP servers to export
        dialog = window.sessions.export_dialog()
        dialog.path.setText(str(tmp_path / "x.har"))
        dialog.path.textEdited.emit(str(tmp_path / "x.har"))
        assert dialog.chosen_format() == ".har" and not dialog.drop_stderr.isEnabled()
        assert dialog.export_now() is None  # a stdio server only: nothing HAR can hold, said in the dialog
        assert "Not exported" in dialog.status.text() and not (tmp_path / "x.har").exists()
        dialog.format.setCurrentIndex(dialog.format.findData(".mcpsession"))
        assert dialog.path.text().endswith("x.mcpsession")
        dialog.servers.item(0).setCheckState(Qt.Unchecked)
        assert dialog.export_now() is None and "tick at least one" in dialog.status.text()
        dialog.reject()


async def test_export_leaves_out_stderr_and_servers(tmp_path):
    from inspector.ui.recording.export_dialog import ExportSessionDialog

    path = await record_session(tmp_path / "two.sqlite")
    opened = open_session(path)
    dialog = ExportSessionDialog(opened.store, suggested=str(tmp_path / "one"))
    assert dialog.path.text().endswith("one.mcpsession")
    assert [dialog.servers.item(i).data(Qt.UserRole) for i in range(dialog.servers.count())] == ["sdk", "demo"]
    dialog.servers.item(1).setCheckState(Qt.Unchecked)
    dialog.drop_stderr.setChecked(True)
    assert dialog.export_now()
    again = open_session(tmp_path / "one.mcpsession")
    assert list(again.surfaces) == ["sdk"]
    assert not any(again.store.direction(n) == "err" for n in range(len(again.store)))
    assert [x.target for x in again.surface("sdk").calls()][: len(SDK_CALLS)] == [
        "echo", "add", "fail", "sdk://hello", "review"]
    dialog.deleteLater()
    # OpenTelemetry traces of the servers kept (the file's type picks the format)
    traces = ExportSessionDialog(opened.store, suggested=str(tmp_path / "t.otlp.json"))
    assert traces.chosen_format() == ".otlp.json" and not traces.drop_stderr.isEnabled()
    traces.servers.item(0).setCheckState(Qt.Unchecked)
    spans = traces.export_now()
    assert spans
    body = json.loads((tmp_path / "t.otlp.json").read_text())
    servers = {a["value"]["stringValue"] for r in body["resourceSpans"] for ss in r["scopeSpans"]
               for span in ss["spans"] for a in span["attributes"] if a["key"] == "spyglass.server.id"}
    assert servers == {"demo"}
    traces.deleteLater()


def test_json_is_laid_out_as_json_dumps_does_with_the_lines_of_every_path():
    from inspector.ui.recording.json_diff import layout_json

    value = {"content": [{"type": "text", "text": "hi"}], "a/b": {"~": []}, "n": None, "empty": {}}
    text, spans = layout_json(value)
    assert text == json.dumps(value, indent=2, ensure_ascii=False)
    lines = text.splitlines()
    assert lines[spans["/content/0/text"][0]].strip() == '"text": "hi"'
    assert spans["/content"] == (1, 6) and spans[""] == (0, len(lines) - 1)
    assert lines[spans["/a~1b/~0"][0]].strip() == '"~": []'
