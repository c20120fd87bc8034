"""UI tests: pytest-qt offscreen, async tests on a qasync loop (this folder only).

pytest-asyncio >= 1.4 asks `pytest_asyncio_loop_factories` for the loops to run
an async test on. Implemented here, not in the root conftest, so only the UI
tests run on a `qasync.QEventLoop`. `qtbot.waitUntil` spins a
nested Qt loop that does not drive asyncio: poll with `uikit.until`.

The window is opened and shut down inside the test body (`async with
open_window() as window`), not in an async fixture: between a test's call and
its fixtures' teardown pytest-qt processes Qt events with the asyncio loop
stopped, and qasync timers started then are not reliably delivered, so an
awaited shutdown in a fixture teardown can hang.
"""

from __future__ import annotations

import contextlib
import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Qt WebEngine (MCP Apps) offscreen: no GPU, and no Chromium process sandbox when the tests run as root
os.environ.setdefault("QTWEBENGINE_CHROMIUM_FLAGS", "--disable-gpu --no-sandbox")

from inspector.ui.apps.engine import prepare

prepare()  # its URL schemes must be registered before the first QApplication exists


STUCK_S = 110  # a loop that waits this long for one future has lost a wakeup (below pytest-timeout's 120 s)


def _qasync_loop():
    import asyncio
    import sys

    import qasync
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    class WatchedLoop(qasync.QEventLoop):
        """qasync's loop, with a Qt timer that stops a `run_until_complete` waiting too long and names the tasks
        that never ended. Without it a lost wakeup hangs the run for good: Qt waits in C with nothing to wake
        it, so pytest-timeout's signal is never handled (seen once in CI, in a test's teardown)."""

        def run_until_complete(self, future):
            watchdog = QTimer()
            watchdog.setSingleShot(True)
            watchdog.timeout.connect(self._stuck)
            watchdog.start(STUCK_S * 1000)
            try:
                return super().run_until_complete(future)
            finally:
                watchdog.stop()

        def _stuck(self) -> None:
            print(f"\nthe event loop waited {STUCK_S} s for one future; the tasks still running:", file=sys.stderr)
            for task in asyncio.all_tasks(self):
                task.print_stack(limit=12, file=sys.stderr)
            self.stop()  # run_until_complete raises: an error in this test, not a hung run

    app = QApplication.instance() or QApplication(["spyglass-tests"])
    return WatchedLoop(app)


def pytest_asyncio_loop_factories(config, item):
    return {"qasync": _qasync_loop}


@pytest.fixture(scope="session", autouse=True)
def _shipped_font(qapp):
    """The whole suite measures the window in a font the repository ships (tests/ui/fonts.py), not the
    machine's: the same heights, widths and line counts on every desktop and in CI."""
    import fonts
    from PySide6.QtGui import QFontInfo

    fonts.load()
    qapp.setFont(fonts.font())
    resolved = QFontInfo(qapp.font()).family()
    assert resolved == fonts.DEFAULT, f"the suite's font resolved to {resolved!r}"
    yield


@pytest.fixture(scope="session", autouse=True)
def _frozen_imports():
    """What was imported before the first UI test (Qt, the window's modules, the test tools) is moved out of the
    garbage collector's sight: each window's teardown collects, and a full collection walked all of it again
    (a quarter of a second a test)."""
    import gc

    import inspector.ui  # noqa: F401  (the window's modules, loaded once)

    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture
def settings(tmp_path):
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "spyglass.ini"), QSettings.IniFormat)


@pytest.fixture
def open_window(qapp, settings):
    """`async with open_window(theme="light") as window`: the real main window, shown offscreen;
    on exit every server is disconnected (awaited: no orphan processes) and the window closed."""
    from inspector.ui import MainWindow
    from inspector.ui.base import theme

    @contextlib.asynccontextmanager
    async def opener(mode: str = "light", **kwargs):
        import asyncio
        import gc

        from inspector.app import ErrorReporter

        theme.apply_theme(qapp, mode)
        qapp.setQuitOnLastWindowClosed(False)  # as app.main does: the loop, not Qt, decides when to stop
        w = MainWindow(settings=kwargs.pop("settings", settings), store_path=kwargs.pop("store_path", ":memory:"),
                       **kwargs)
        # As in the app: loop errors (e.g. a task exception nobody retrieved) become banners. Here they also
        # fail the test: an internal error is never silent.
        reporter = ErrorReporter()
        reporter.window = w
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()
        loop.set_exception_handler(reporter.loop_handler)
        w.show()
        try:
            yield w
        finally:
            try:
                await w.shutdown()
                gc.collect()
                await asyncio.sleep(0.05)
            finally:
                loop.set_exception_handler(previous)
                w.close()
                w.deleteLater()
                theme.apply_theme(qapp, "light")
        assert reporter.count == 0, f"internal errors reached the window: {w.banner.label.text()}"

    return opener
