"""A big session file is read in a thread: the window keeps running while it loads, Cancel drops it, and a
file that is no session still ends in the message box."""

from __future__ import annotations

import asyncio
import json
import time

from PySide6.QtWidgets import QMessageBox, QProgressDialog
from uikit import until

from inspector.traffic import Frame, TrafficStore
from inspector.ui.recording import window_link


def big_session(path, calls: int) -> None:
    store = TrafficStore(path)
    for i in range(calls):
        request = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"message": f"message {i}"}}}
        answer = {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": f"message {i}"}]}}
        store.add("big", Frame("out", json.dumps(request).encode(), i * 0.001, 1.8e9 + i * 0.001))
        store.add("big", Frame("in", json.dumps(answer).encode(), i * 0.001 + 0.0004, 1.8e9 + i * 0.001))
    store.close()


async def test_a_big_session_opens_in_the_background_and_the_window_keeps_running(open_window, tmp_path,
                                                                                 monkeypatch):
    path = tmp_path / "big.sqlite"
    big_session(path, 20000)
    monkeypatch.setattr(window_link, "BACKGROUND_BYTES", 1)  # this file counts as big
    async with open_window() as window:
        gaps: list[float] = []
        running = True

        async def ticker() -> None:
            last = time.perf_counter()
            while running:
                await asyncio.sleep(0.01)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        tick = asyncio.ensure_future(ticker())
        begun = time.perf_counter()
        task = window.sessions.open_file(path)
        assert isinstance(task, asyncio.Future)
        assert window.findChild(QProgressDialog, "sessionOpening") is not None
        win = await asyncio.wait_for(task, 120)
        took = time.perf_counter() - begun
        running = False
        await tick
        assert win is not None and len(win.opened.store) == 40000
        assert window.findChild(QProgressDialog, "sessionOpening") is None or not window.findChild(
            QProgressDialog, "sessionOpening").isVisible()
        # reading 40,000 frames takes seconds; the loop kept turning (a freeze guard, not a speed target: the
        # thread shares the GIL and the window is built on the loop, so turns are longer than usual, but no
        # turn takes a large part of the load — read on the loop itself, one turn would take all of it)
        assert len(gaps) > 20 and max(gaps) < 0.5 * took, f"a loop turn of {max(gaps):.2f} s in {took:.2f} s"
        win.close()


async def test_cancel_drops_the_session_and_no_session_gets_the_message(open_window, tmp_path, monkeypatch):
    path = tmp_path / "big.sqlite"
    big_session(path, 5000)
    monkeypatch.setattr(window_link, "BACKGROUND_BYTES", 1)
    async with open_window() as window:
        task = window.sessions.open_file(path)
        progress = window.findChild(QProgressDialog, "sessionOpening")
        progress.cancel()
        assert await asyncio.wait_for(task, 60) is None
        assert window.sessions.windows == []
        bad = tmp_path / "notes.txt"
        bad.write_bytes(b"x" * 100)
        assert await asyncio.wait_for(window.sessions.open_file(bad), 60) is None
        await until(lambda: window.findChild(QMessageBox, "sessionOpenError") is not None, 5, "the message")
        assert "is not a Spyglass session" in window.findChild(QMessageBox, "sessionOpenError").text()


async def test_the_collector_waits_while_a_session_is_read_in_a_thread(open_window, tmp_path, monkeypatch):
    """A collection on the reading thread would free Qt objects there (it crashed the suite once): the
    collector is off while a read runs and on again, and run, once the last read ends."""
    import gc

    path = tmp_path / "big.sqlite"
    big_session(path, 3000)
    seen: list[bool] = []
    real = window_link.read_session

    def spy(p):
        seen.append(gc.isenabled())
        return real(p)

    monkeypatch.setattr(window_link, "read_session", spy)
    monkeypatch.setattr(window_link, "BACKGROUND_BYTES", 1)
    async with open_window() as window:
        assert gc.isenabled()
        first = window.sessions.open_file(path)
        second = window.sessions.open_file(path)
        await asyncio.wait_for(asyncio.gather(first, second), 60)
        assert seen == [False, False] and gc.isenabled()
        for win in list(window.sessions.windows):
            win.close()
