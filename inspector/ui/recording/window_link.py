"""The main window's side of kept sessions: *File → Open session…* (Ctrl+Shift+O), *Recent sessions*,
*Import session…*, *Export session…* and *Server → Compare with…*.

`WindowSessions` is handed the main window and uses only what it offers everyone (its settings, store,
servers, selection and banner), so the window itself needs two lines for all of this. Opening a file
shows it in a `SessionWindow`; a file that is no session says so in a message box, never a traceback.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QWidget

from ...checks.rules import Finding
from ...recording.files import SUFFIX, Opened, SessionFileError, open_session, reading
from ...recording.findings import Judging, judge_recording
from ...recording.surface import SurfacesBuilder
from ...secrets import secrets_of
from ...traffic import list_sessions, sessions_dir
from ..base.tasks import spawn
from ..base.text import visible
from ..render.text import human_size
from .compare_view import CompareDialog
from .export_dialog import ExportSessionDialog, suggested_name
from .session_window import SessionWindow
from .sides import LiveServer, Side, live_side, recorded_side

log = logging.getLogger("spyglass.ui.recording")

STEP_SECONDS = 0.012  # the reading's share of one turn of the loop: the window paints between its steps
STEP_FRAMES = 200  # frames read from the file at once (about 5 ms)
PROGRESS_SECONDS = 0.25  # how often the session window's summary counts the frames read


def read_session(path: Path) -> tuple[Opened, dict[int, list[Finding]]]:
    """Everything opening a session costs, in one call: the frames, each server rebuilt, the frames judged
    (none when a rule failed: the session opens without findings)."""
    opened = open_session(path)
    opened.surfaces  # noqa: B018
    try:
        found = judge_recording(opened.store, opened.surfaces)
    except Exception:
        log.exception("judging the frames of %s failed", path)
        found = {}
    return opened, found


async def read_stepwise(opened: Opened, steps: Iterator[int], win: SessionWindow) -> dict[int, list[Finding]] | None:
    """Read the rest of a session shown in `win` a slice at a time on the window's loop, never more than
    STEP_SECONDS a turn: the frames (the traffic pane and the timeline show them as they come), each server
    rebuilt alongside, then the frames judged. None when the window was closed first."""
    global _reading
    if _reading == 0:
        _collecting[0] = gc.isenabled()
        gc.disable()  # a full collection walks every object the session made so far: seconds at a million frames
    _reading += 1
    try:
        return await _read_stepwise(opened, steps, win)
    finally:
        _reading -= 1
        if _reading == 0:
            gc.freeze()  # what was read lives as long as its window: later collections leave it out
            if _collecting[0]:
                gc.enable()


_reading = 0  # sessions being read right now
_collecting = [True]  # whether the collector ran before the first of them began


async def _read_stepwise(opened: Opened, steps: Iterator[int], win: SessionWindow) -> dict[int, list[Finding]] | None:
    store = opened.store
    builder = SurfacesBuilder(store)
    judging = Judging(store)  # the frames judged as they are read, with the messages the store parsed
    judged = True  # False once a rule failed: the session opens without findings
    told = time.perf_counter()
    reading = True
    while True:
        start = time.perf_counter()
        while time.perf_counter() - start < STEP_SECONDS:
            if reading:
                reading = next(steps, None) is not None
                builder.take(len(store))
                if judged:
                    try:
                        judging.take_read(*store.last_read, builder.out)
                    except Exception:
                        log.exception("judging the frames of %s failed", opened.path)
                        judged = False
                if not reading:
                    opened.rebuilt(builder.finish())
                    if not judged:
                        return {}
                    judging.settle(opened.surfaces)
            else:
                try:
                    judging.take(min(judging.taken + STEP_FRAMES, len(store)))
                except Exception:
                    log.exception("judging the frames of %s failed", opened.path)
                    return {}
                if judging.taken >= len(store):
                    return judging.found
        await asyncio.sleep(0)
        if not shiboken6.isValid(win) or not win.isVisible():
            close = getattr(steps, "close", None)
            if close is not None:
                close()  # the file is let go
            return None
        if start - told >= PROGRESS_SECONDS:
            told = start
            win.reading()

RECENT_KEY = "sessions/recentFiles"
RECENT_SHOWN = 10
SESSION_FILTER = "Sessions (*.sqlite *.mcpsession);;All files (*)"


def _action(window: QWidget, text: str, slot: Callable[[], Any], name: str, tip: str,
            shortcut: str | None = None) -> QAction:
    a = QAction(text, window)
    a.setObjectName(name)
    a.setToolTip(tip)
    a.setStatusTip(tip)
    if shortcut:
        a.setShortcut(QKeySequence(shortcut))
        a.setShortcutContext(Qt.WindowShortcut)
    a.triggered.connect(lambda _=False: slot())
    window.addAction(a)  # its shortcut works while the menu bar is hidden too
    return a


def when(moment: dt.datetime | float | None) -> str:
    """A moment in local time, as the recent list shows it."""
    try:
        if isinstance(moment, dt.datetime):
            return moment.astimezone().strftime("%Y-%m-%d %H:%M")
        if isinstance(moment, (int, float)):
            return dt.datetime.fromtimestamp(moment).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        pass
    return "unknown time"


def _same_file(a: Path | None, b: Path | None) -> bool:
    if a is None or b is None:
        return False
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


class WindowSessions(QObject):
    """`directory`: where the window's own session files are (None: the user data folder)."""

    def __init__(self, window: Any, directory: str | Path | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.directory = directory
        self.windows: list[SessionWindow] = []
        self.dialogs: list[QWidget] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self.act_open = _action(window, "Open session…", self.choose_open, "actionOpenSession",
                                "Open a saved session read-only: its servers, calls, log and traffic",
                                "Ctrl+Shift+O")
        self.recent_menu = QMenu("Recent sessions", window)
        self.recent_menu.setObjectName("recentSessionsMenu")
        self.recent_menu.aboutToShow.connect(self.fill_recent)
        self.act_import = _action(window, "Import session…", self.choose_import, "actionImportSession",
                                  f"Open a {SUFFIX} file someone shared (read-only)")
        self.act_export = _action(window, "Export session…", self.export_dialog, "actionExportSession",
                                  "Write this window's session as .mcpsession, HAR or OTLP JSON (secrets masked)")
        self.act_compare = _action(window, "Compare with…", self.compare_dialog, "actionCompareWith",
                                   "What changed between the selected server and another, live or recorded")
        self.install()
        self.fill_recent()
        window.selectionChanged.connect(self._update)
        window.installEventFilter(self)
        self._update()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.window and event.type() == QEvent.Close:
            # the main window is closing: a replay or comparison still running stops now and closes the
            # server it started, while the window shuts its own servers down
            for widget in [*self.windows, *self.dialogs]:
                widget.close()
        return False

    def install(self) -> None:
        """Put the actions in the window's File and Server menus (and the server list's context menu)."""
        file_menu = self.window.findChild(QMenu, "fileMenu")
        if file_menu is not None:
            first = file_menu.actions()[0] if file_menu.actions() else None
            file_menu.insertAction(first, self.act_open)
            file_menu.insertMenu(first, self.recent_menu)
            file_menu.insertAction(first, self.act_import)
            file_menu.insertAction(first, self.act_export)
            file_menu.insertSeparator(first)
        server_menu = self.window.findChild(QMenu, "serverMenu")
        if server_menu is not None:
            actions = server_menu.actions()
            after = next((i for i, a in enumerate(actions) if a.objectName() == "actionRefreshTools"), None)
            before = actions[after + 1] if after is not None and after + 1 < len(actions) else None
            server_menu.insertAction(before, self.act_compare)
        view = getattr(self.window, "server_view", None)
        if view is not None:
            view.addAction(self.act_compare)

    def _update(self) -> None:
        self.act_compare.setEnabled(self.window.selected_connection() is not None)
        self.act_export.setEnabled(self.window.store is not None)

    # ------------------------------------------------------------------ recent
    def remembered(self) -> list[Path]:
        value = self.window.settings.value(RECENT_KEY) or []
        paths = [value] if isinstance(value, str) else list(value)
        return [Path(p) for p in paths if isinstance(p, str) and p]

    def remember(self, path: Path) -> None:
        keep = [str(path)] + [str(p) for p in self.remembered() if not _same_file(p, path)]
        self.window.settings.setValue(RECENT_KEY, keep[:RECENT_SHOWN])

    def window_sessions(self) -> list[tuple[Path, str]]:
        """(path, label) of the window's newest session files."""
        store = self.window.store
        live = store.path if store is not None else None
        return [(s.path, f"{when(s.started)} · {human_size(s.size)}" + (" · this window" if _same_file(s.path, live)
                                                                        else ""))
                for s in list_sessions(self.directory)[:RECENT_SHOWN]]

    def opened_files(self) -> list[tuple[Path, str]]:
        """(path, label) of the files opened lately (those still there)."""
        out = []
        for path in self.remembered():
            try:
                stat = path.stat()
            except OSError:
                continue  # moved or deleted since: not offered
            out.append((path, f"{visible(path.name, 60)} · {when(stat.st_mtime)} · {human_size(stat.st_size)}"))
        return out

    def recent(self) -> list[tuple[Path, str]]:
        return self.window_sessions() + self.opened_files()

    def fill_recent(self) -> None:
        self.recent_menu.clear()
        groups = [g for g in (self.window_sessions(), self.opened_files()) if g]
        for i, group in enumerate(groups):
            if i:
                self.recent_menu.addSeparator()
            for path, label in group:
                a = self.recent_menu.addAction(label)
                a.setObjectName("recentSession")
                a.setData(str(path))
                a.setToolTip(str(path))
                a.triggered.connect(lambda _=False, p=str(path): self.open_file(p))
        if not groups:
            self.recent_menu.addAction("No saved sessions yet").setEnabled(False)

    # ------------------------------------------------------------------ opening
    def _file_dialog(self, title: str, name: str, start: str, filters: str) -> QFileDialog:
        dialog = QFileDialog(self.window, title, start, filters)
        dialog.setObjectName(name)
        dialog.setFileMode(QFileDialog.ExistingFile)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.open_file)
        dialog.open()
        return dialog

    def choose_open(self) -> QFileDialog:
        start = Path(self.directory) if self.directory is not None else sessions_dir()
        return self._file_dialog("Open session", "openSessionDialog", str(start if start.is_dir() else Path.home()),
                                 SESSION_FILTER)

    def choose_import(self) -> QFileDialog:
        return self._file_dialog("Import session", "importSessionDialog", str(Path.home()),
                                 f"Portable sessions (*{SUFFIX});;All files (*)")

    def open_file(self, path: str | Path) -> SessionWindow | None:
        """What the menus, the file dialog and `spyglass FILE` call: the session window shows at once and fills
        as the file is read (`read_stepwise`: its first rows in a moment, the window never waits on the file);
        its servers and findings come when every frame is read. None (and a message box) when it is no
        session."""
        path = Path(path)
        self._flush_own(path)
        try:
            opened, steps = reading(path, STEP_FRAMES)
        except Exception as exc:
            self._failed(path, exc)
            return None
        win = self._show(opened, None, loading=True)

        async def load() -> None:
            found = await read_stepwise(opened, steps, win)
            if found is None:
                return
            for _ in win.showing(found):  # the servers, their tabs and the findings: a step a turn
                await asyncio.sleep(0)
                if not shiboken6.isValid(win) or not win.isVisible():
                    return

        spawn(load(), self._tasks, lambda exc: self._failed(path, exc), "opening a session")
        return win

    def open_path(self, path: str | Path) -> SessionWindow | None:
        """Show session file `path` read-only, read whole first; None (and a message box) when it is no session."""
        path = Path(path)
        self._flush_own(path)
        try:
            opened, found = read_session(path)
        except Exception as exc:
            self._failed(path, exc)
            return None
        return self._show(opened, found)

    def _flush_own(self, path: Path) -> None:
        store = self.window.store
        if store is not None and _same_file(store.path, path):
            store.flush(wait=True)  # this window's own session: what it recorded so far is in the file

    def _failed(self, path: Path, exc: BaseException) -> None:
        if isinstance(exc, SessionFileError):
            self.error(exc.message)
        else:  # a bug of ours must not take the window down
            log.error("opening session %s", path, exc_info=exc)
            self.error(f"{path.name} could not be opened: {type(exc).__name__}: {exc}")

    def _show(self, opened: Opened, found: dict[int, list[Finding]] | None, loading: bool = False) -> SessionWindow:
        path = opened.path
        in_data_dir = any(_same_file(path, s.path) for s in list_sessions(self.directory))
        if not in_data_dir:
            self.remember(path)
        win = SessionWindow(opened, self.window, live=self.live_servers, findings=found, loading=loading,
                            exported=lambda p, n: self.window.statusBar().showMessage(f"Exported to {p}", 8000),
                            add_server=lambda spec: self.window.add_server(spec))
        self.windows.append(win)
        win.destroyed.connect(lambda _=None, w=win: w in self.windows and self.windows.remove(w))
        win.show()
        return win

    def error(self, text: str) -> QMessageBox:
        box = QMessageBox(QMessageBox.Warning, "Cannot open the session", visible(text, 2000), QMessageBox.Ok,
                          self.window)
        box.setObjectName("sessionOpenError")
        box.setInformativeText("A session is a .sqlite file the window wrote (File → Open session) or a "
                               f"{SUFFIX} file exported from Spyglass.")
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()
        return box

    # ------------------------------------------------------------------ export, compare
    def live_servers(self) -> list[LiveServer]:
        return [LiveServer(c.name, c.spec, c.session.options) for c in self.window.connections()]

    def export_dialog(self) -> ExportSessionDialog | None:
        store = self.window.store
        if store is None:
            self.window.show_banner("There is no session to export: traffic is not being recorded.")
            return None
        store.flush(wait=True)  # every frame so far, in the file and in the export
        known = [secret for conn in self.window.connections() for secret in secrets_of(conn.spec)]
        dialog = ExportSessionDialog(store, self.window, suggested=suggested_name(store), exported=lambda p, n:
                                     self.window.show_banner(f"Exported {n:,} to {p} (secrets masked).",
                                                             level="info"), known=known)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def compare_dialog(self) -> CompareDialog | None:
        conn = self.window.selected_connection()
        if conn is None:
            self.window.show_banner("Select a server to compare.", level="info")
            return None
        servers = self.live_servers()
        mine = next((s for s, c in zip(servers, self.window.connections(), strict=True) if c is conn), None)
        if mine is None:
            return None
        others: list[Side] = [live_side(s) for s in servers if s is not mine]
        for win in self.windows:  # the servers of the sessions open now
            others += [recorded_side(s, win.opened.path.name) for s in win.surfaces if s.frames]
        dialog = CompareDialog(live_side(mine), others, self.window)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        self.dialogs.append(dialog)
        dialog.destroyed.connect(lambda _=None, d=dialog: d in self.dialogs and self.dialogs.remove(d))
        dialog.show()
        return dialog
