"""The development loop in the window: Server → Restart on save (`actionWatch`, a toggle per server),
Server → Watch settings… (`actionWatchSettings`, the `watchDialog`), and the Re-run dock (`rerunDock`,
a `RerunView`) raised when a restart ran calls again. A saved server keeps its watch in the catalog (and
is watched again at the next start, once connected); a server named on the command line keeps it for the
run (`spyglass --watch PATH -- COMMAND…`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from ...devloop import DevLoop, WatchSettings, watchable
from ..base.dialogs import show_sheet
from ..base.tasks import spawn
from ..devloop.rerun_view import RerunView
from ..devloop.watch_dialog import WatchDialog
from ..servers.connection import Connection
from . import layout, menus

if TYPE_CHECKING:
    from .main_window import MainWindow


class DevLoopLink(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.loops: dict[int, DevLoop] = {}  # id(conn) -> its loop, while watched
        self.settings: dict[int, WatchSettings] = {}  # id(conn) -> its watch (also when off)
        self._tasks: set[Any] = set()
        self.view = RerunView(window)
        self.dock = layout.dock(window, "Re-run", "rerunDock", self.view)
        window.tabifyDockWidget(window.traffic_dock, self.dock)
        window.traffic_dock.raise_()
        self.act_watch = QAction("Restart on save", window)
        self.act_watch.setObjectName("actionWatch")
        self.act_watch.setCheckable(True)
        self.act_watch.setShortcut(QKeySequence("Ctrl+Shift+R"))
        self.act_watch.setToolTip("Restart the selected server when its source changes, list it again with what "
                                  "changed marked, and run the last call again (a URL server: reconnect when it "
                                  "comes back)")
        self.act_watch.triggered.connect(self._toggled)
        self.act_settings = QAction("Watch settings…", window)
        self.act_settings.setObjectName("actionWatchSettings")
        self.act_settings.setToolTip("What the selected server's watch looks at, and what runs again after a restart")
        self.act_settings.triggered.connect(self.open_settings)
        menu = window.findChild(QMenu, "serverMenu")
        if menu is not None:
            menus.insert_after_group(menu, [self.act_watch, self.act_settings])
        view_menu = window.findChild(QMenu, "viewMenu")
        if view_menu is not None:
            docks = view_menu.actions()
            view_menu.insertAction(docks[3] if len(docks) > 3 else None, self.dock.toggleViewAction())
        window.server_view.addActions([self.act_watch, self.act_settings])
        window.selectionChanged.connect(self._selected)
        self._selected()

    # ------------------------------------------------------------------ state
    def loop_of(self, conn: Connection | None) -> DevLoop | None:
        return self.loops.get(id(conn)) if conn is not None else None

    def settings_of(self, conn: Connection) -> WatchSettings:
        if id(conn) in self.settings:
            return self.settings[id(conn)]
        entry = self.window.catalog_link.entry_of(conn)
        saved = WatchSettings.from_json(entry.watch) if entry is not None else None
        return saved or WatchSettings()

    def _selected(self) -> None:
        conn = self.window.selected_connection()
        mine = conn is not None and not getattr(conn.session, "read_only", False) and watchable(conn.session)
        self.act_watch.setEnabled(mine)
        self.act_settings.setEnabled(mine)
        self.act_watch.setChecked(self.loop_of(conn) is not None)
        self.view.show_loop(self.loop_of(conn))

    # ------------------------------------------------------------------ turning it on and off
    def watch(self, conn: Connection, settings: WatchSettings | None = None, *, save: bool = True) -> DevLoop:
        """Watch `conn` (again, with `settings` when given); saved servers keep it in the catalog."""
        old = self.loops.pop(id(conn), None)
        if old is not None:
            self._spawn(old.stop(), f"stopping the watch of {conn.name}")
        settings = settings or self.settings_of(conn)
        self.settings[id(conn)] = settings
        loop = DevLoop(conn.session, settings)
        loop.changed.connect(lambda what, c=conn, lp=loop: self._loop_changed(c, lp, what))
        self.loops[id(conn)] = loop
        loop.start()
        if save:
            self._save(conn, settings, True)
        self._selected()
        self.window.statusBar().showMessage(f"{conn.name}: {loop.describe()}.", 8000)
        return loop

    def unwatch(self, conn: Connection, *, save: bool = True) -> Any:
        loop = self.loops.pop(id(conn), None)
        if save:
            self._save(conn, self.settings_of(conn), False)
        self._selected()
        if loop is None:
            return None
        self.window.statusBar().showMessage(f"{conn.name}: no longer watched.", 8000)
        return self._spawn(loop.stop(), f"stopping the watch of {conn.name}")

    def _toggled(self, on: bool) -> None:
        conn = self.window.selected_connection()
        if conn is None:
            return
        if on:
            self.watch(conn)
        else:
            self.unwatch(conn)

    def _save(self, conn: Connection, settings: WatchSettings, on: bool) -> None:
        entry = self.window.catalog_link.entry_of(conn)
        if entry is not None:
            entry.watch = {"on": on, **settings.to_json()}
            self.window.catalog_link.save()

    def open_settings(self) -> WatchDialog | None:
        conn = self.window.selected_connection()
        if conn is None:
            return None
        on = self.loop_of(conn) is not None or id(conn) not in self.settings  # watched, or never set
        dialog = WatchDialog(conn.spec, self.settings_of(conn), on, self.window)
        dialog.accepted.connect(lambda: self._settings_chosen(conn, dialog))
        return show_sheet(dialog)

    def _settings_chosen(self, conn: Connection, dialog: WatchDialog) -> None:
        settings = dialog.settings()
        self.settings[id(conn)] = settings
        if dialog.on():
            self.watch(conn, settings)
        else:
            self.unwatch(conn)

    def restore(self, conn: Connection) -> None:
        """A saved server whose watch was on at the last run: watched again."""
        entry = self.window.catalog_link.entry_of(conn)
        if entry is not None and isinstance(entry.watch, dict) and entry.watch.get("on") is True:
            self.watch(conn, WatchSettings.from_json(entry.watch), save=False)

    # ------------------------------------------------------------------ what the loop says
    def _loop_changed(self, conn: Connection, loop: DevLoop, what: str) -> None:
        if self.loops.get(id(conn)) is not loop:
            return
        if conn is self.window.selected_connection():
            self.act_watch.setChecked(True)
            if what == "rerun":
                self.view.show_loop(loop)
        if what == "rerun" and loop.reruns and loop.rerun_at is not None and \
                all(r.after is None or not r.after.running for r in loop.reruns):
            presenting = getattr(getattr(self.window, "present", None), "active", False)
            if conn is self.window.selected_connection() and not presenting:  # a stage shows no docks
                self.dock.show()
                self.dock.raise_()
            differ = [r for r in loop.reruns if r.changes]
            self.window.statusBar().showMessage(
                f"{conn.name} restarted: " + ("; ".join(r.describe() for r in loop.reruns[:3])), 10000)
            if differ:
                conn.session.log.note("after the restart: " + "; ".join(r.describe() for r in differ))

    def _spawn(self, coro: Any, what: str) -> Any:
        return spawn(coro, self._tasks, lambda exc: self.window.show_banner(f"{what} failed: {exc}"), what)

    # ------------------------------------------------------------------ ending
    async def forget(self, conn: Connection) -> None:
        self.settings.pop(id(conn), None)
        loop = self.loops.pop(id(conn), None)
        if loop is not None:
            await loop.stop()

    async def close(self) -> None:
        loops, self.loops = list(self.loops.values()), {}
        for loop in loops:
            await loop.stop()
