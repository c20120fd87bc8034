"""`spyglass FILE` opens a session file in the window, as double-clicking one in a file manager expects: a
.mcpsession and a session database alike, a damaged one with its message; the desktop entry offers both."""

from __future__ import annotations

import configparser
import json
import xml.etree.ElementTree as ET

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox
from uikit import ROOT, until

from inspector import errors as E
from inspector.app import open_session_file, parse_args
from inspector.recording.files import export_session
from inspector.traffic import Frame, TrafficStore

APP_ID = "io.github.mcp_spyglass.Spyglass"


def recorded(tmp_path, calls: int = 30):
    """A session database of `calls` tools/call and their answers, and the same session as a .mcpsession."""
    path = tmp_path / "calls.sqlite"
    store = TrafficStore(path)
    for i in range(calls):
        request = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"message": f"message {i}"}}}
        answer = {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": f"message {i}"}]}}
        store.add("echo", Frame("out", json.dumps(request).encode(), i * 0.01, 1.8e9 + i * 0.01))
        store.add("echo", Frame("in", json.dumps(answer).encode(), i * 0.01 + 0.004, 1.8e9 + i * 0.01))
    store.flush(wait=True)
    portable = tmp_path / "shared.mcpsession"
    export_session(store, portable)
    store.close()
    return path, portable


def test_one_argument_that_names_a_session_file_is_a_session(tmp_path):
    database, portable = recorded(tmp_path, 2)
    plain = tmp_path / "capture"  # no suffix: told by what it starts with
    plain.write_bytes(database.read_bytes())
    for path in (database, portable, plain, tmp_path / "missing.mcpsession"):
        args = parse_args([str(path)])
        assert args.session == str(path) and args.command == []
    server = tmp_path / "server.py"
    server.write_text("print('a server')\n")
    assert parse_args([str(server)]).session is None  # a server command, as before
    assert parse_args(["--", str(portable)]).session is None  # after --, always a command
    assert parse_args(["https://example.com/x.db"]).session is None  # a URL
    assert parse_args(["python", str(portable)]).session is None  # a command with its argument
    with pytest.raises(E.UsageError, match="is a session file"):
        parse_args(["--config", "servers.json", str(portable)])


@pytest.mark.parametrize("kind", ["sqlite", "mcpsession"])
async def test_spyglass_file_opens_its_frames_in_the_window(open_window, tmp_path, kind):
    database, portable = recorded(tmp_path)
    path = database if kind == "sqlite" else portable
    async with open_window() as window:
        win = open_session_file(window, parse_args([str(path)]))
        assert win is not None and win.isVisible() and win in window.sessions.windows
        await until(lambda: not win.loading, 10, "the whole session")
        assert win.opened.kind == kind and len(win.opened.store) == 60
        await until(lambda: win.traffic.model.complete and win.traffic.model.rowCount() == 60, 10, "every frame")
        assert [s.name for s in win.surfaces] == ["echo"]
        assert window.connections() == []  # the demo server is not started for a file
        win.close()


async def test_spyglass_damaged_file_says_what_is_wrong(open_window, tmp_path):
    broken = tmp_path / "broken.mcpsession"
    broken.write_bytes(b"this was never gzip")
    async with open_window() as window:
        assert open_session_file(window, parse_args([str(broken)])) is None
        box = await until(lambda: next((w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)
                                        and w.objectName() == "sessionOpenError" and w.isVisible()), None),
                          5, "the message box")
        assert "broken.mcpsession is not a Spyglass session" in box.text(), box.text()
        assert "Traceback" not in box.text() + box.informativeText()
        box.close()
        assert window.sessions.windows == []


def test_the_desktop_entry_opens_both_kinds_of_session_file():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(ROOT / "resources" / f"{APP_ID}.desktop")
    d = entry["Desktop Entry"]
    assert d["Exec"] == "spyglass %f"
    assert set(filter(None, d["MimeType"].split(";"))) == {"application/x-mcpsession", "application/vnd.sqlite3"}
    # the .mcpsession type is ours: a shared-mime-info package declares it (gzip underneath)
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    root = ET.parse(ROOT / "resources" / f"{APP_ID}.mime.xml").getroot()
    kind = root.find("m:mime-type", ns)
    assert kind.get("type") == "application/x-mcpsession"
    assert kind.find("m:glob", ns).get("pattern") == "*.mcpsession"
    assert kind.find("m:sub-class-of", ns).get("type") == "application/gzip"
