"""A big session file opens like a capture: the session window shows at once and fills as the file is read,
its first rows long before the last frame is read, and no turn of the loop waits on the file; its servers and
findings come when every frame is read. Closing it first lets the file go; a file that is no session still
ends in the message box."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from PySide6.QtCore import QModelIndex
from PySide6.QtWidgets import QMessageBox
from support import SLOWDOWN
from uikit import until

from inspector.recording.files import export_session
from inspector.traffic import Frame, TrafficStore
from inspector.ui.recording.surface_view import RecordedLogModel

FRAMES = 50_000


def big_session(path, frames: int) -> None:
    """A session as a flood leaves it: a handshake, then log notifications with a call every 50 frames."""
    store = TrafficStore(path)
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    welcome = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {
        "tools": {}, "logging": {}}, "serverInfo": {"name": "big", "version": "1"}}}
    store.add("big", Frame("out", json.dumps(hello).encode(), 0.0, 1.8e9))
    store.add("big", Frame("in", json.dumps(welcome).encode(), 0.001, 1.8e9))
    for i in range(1, (frames - 2) // 2 + 1):
        t = i * 0.0001
        if i % 25 == 0:
            out = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"message": f"message {i}"}}}
            back = {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": f"message {i}"}]}}
            store.add("big", Frame("out", json.dumps(out).encode(), t, 1.8e9 + t))
            store.add("big", Frame("in", json.dumps(back).encode(), t + 0.00005, 1.8e9 + t))
        else:
            for k in range(2):
                note = {"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "info", "logger": "flood", "data": f"line {i}.{k}"}}
                store.add("big", Frame("in", json.dumps(note).encode(), t + k * 0.00001, 1.8e9 + t))
    store.close()


@pytest.fixture(scope="module")
def big_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("big")
    database = folder / "big.sqlite"
    big_session(database, FRAMES)
    portable = folder / "big.mcpsession"
    store = TrafficStore.open_session(database)
    export_session(store, portable)
    store.close()
    return {"sqlite": database, "mcpsession": portable}


@pytest.mark.parametrize("kind", ["sqlite", "mcpsession"])
async def test_a_big_session_shows_its_first_rows_at_once_and_never_holds_the_loop(open_window, big_files, kind,
                                                                                    monkeypatch):
    path = big_files[kind]
    asked = [0]  # how often the log's view asks its model how many rows it has
    told = RecordedLogModel.rowCount

    def counted(self, parent=QModelIndex()):
        asked[0] += 1
        return told(self, parent)

    monkeypatch.setattr(RecordedLogModel, "rowCount", counted)
    async with open_window() as window:
        gaps: list[float] = []
        running = True

        async def ticker() -> None:  # the window's own work between two ticks, in CPU time of its thread: what
            last = time.thread_time()  # other processes of a busy machine take is left out
            while running:
                await asyncio.sleep(0.005)
                now = time.thread_time()
                gaps.append(now - last)
                last = now

        tick = asyncio.ensure_future(ticker())
        await asyncio.sleep(0.05)
        begun = time.perf_counter()
        win = window.sessions.open_file(path)
        opened_in = time.perf_counter() - begun
        assert win is not None and win.isVisible() and win.loading
        model = win.traffic.model
        await until(lambda: model.rowCount() > 0, 30, "the first rows")
        first_rows = len(win.opened.store)
        assert win.loading and first_rows < FRAMES // 2, "the first rows came only once most of the file was read"
        await until(lambda: not win.loading, 120, "the whole session")
        took = time.perf_counter() - begun
        await until(lambda: model.complete and model.rowCount() == FRAMES, 30, "every frame in the view")
        assert [s.name for s in win.surfaces] == ["big"]
        surface = win.surfaces[0]
        assert len(surface.calls()) == (FRAMES - 2) // 2 // 25 and len(surface.log) > FRAMES * 0.9
        assert f"{FRAMES:,} frames" in win.summary.text() and not win.problems.isVisibleTo(win)
        # from the open to the Log tab shown and painted, the log's view asked about the rows on screen, not
        # about each of the 48,000 (a tree view laid every row out once its model was set, in one turn after the
        # servers were shown: 1.4 s of CPU for a million log lines; 48,073 questions here)
        page = win.current_view()
        page.setCurrentWidget(page.log)
        await until(lambda: page.log.log.isVisible(), 5, "the Log tab")
        page.log.log.viewport().repaint()
        assert 0 < asked[0] < 1000, f"the log's model was asked its row count {asked[0]:,} times"
        running = False
        await tick
        # the window's own reading never takes a turn long: before, the whole file was read in one turn (a small
        # file) or its window built in one (a big one: seconds); building the window is the longest turn now;
        # showing its servers, their tabs and the findings is split into turns too
        longest = max(gaps)
        # (coverage traces every line: CI's turns take 2-3 times the CPU, as the other freeze guards allow)
        assert opened_in < 0.5 * SLOWDOWN and longest < 0.2 * SLOWDOWN, \
            f"a turn of {longest:.2f} s (open {opened_in:.2f} s), {took:.1f} s"
        log = page.log.log_model
        assert log.rowCount() == len(surface.log)
        win.close()


async def test_closing_while_it_reads_lets_the_file_go_and_no_session_gets_the_message(open_window, big_files,
                                                                                     tmp_path):
    async with open_window() as window:
        win = window.sessions.open_file(big_files["sqlite"])
        await until(lambda: len(win.opened.store) > 0, 30, "some frames")
        win.close()
        read = len(win.opened.store)
        await asyncio.sleep(0.2)
        assert len(win.opened.store) == read < FRAMES  # it stopped reading
        bad = tmp_path / "notes.txt"
        bad.write_bytes(b"x" * 100)
        assert window.sessions.open_file(bad) is None
        await until(lambda: window.findChild(QMessageBox, "sessionOpenError") is not None, 5, "the message")
        assert "is not a Spyglass session" in window.findChild(QMessageBox, "sessionOpenError").text()
