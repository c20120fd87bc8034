"""What collections reach in the window: the Collections tab (after Check), File → Open collection…
(`actionOpenCollection`) with the tab's Recent list, and *Save to collection…* on a call (the Tools
tab's `saveCallButton` and History's `historySaveButton`), which opens `SaveCallDialog` and shows the
collection it wrote."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu

from ...session import CallRecord
from ..base.dialogs import show_sheet
from ..collections.pane import CollectionsPane
from ..collections.save_dialog import COLLECTION_FILTER, SaveCallDialog

if TYPE_CHECKING:
    from .main_window import MainWindow

RECENT_KEY = "collections/recent"
RECENT_SHOWN = 8


class CollectionsLink(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.pane = CollectionsPane(window.selected_connection, window.answers, window)
        self.pane.recent = self.remembered
        self.pane.opened.connect(lambda path: self.remember(Path(path)))
        self.pane.openRequested.connect(self.choose_open)
        after = next((i for i in range(window.tabs.count()) if window.tabs.widget(i) is window.checks.view),
                     window.tabs.count() - 1)
        window.tabs.insertTab(after + 1, self.pane, "Collections")
        window.tool_detail.saveRequested.connect(self.save_call)
        window.selectionChanged.connect(self._selected)
        window.servers.rowsInserted.connect(self._servers_added)
        self.act_open = QAction("Open collection…", window)
        self.act_open.setObjectName("actionOpenCollection")
        self.act_open.setToolTip("Open a collection of saved calls in the Collections tab")
        self.act_open.triggered.connect(self.choose_open)
        file_menu = window.findChild(QMenu, "fileMenu")
        if file_menu is not None:
            actions = file_menu.actions()
            at = next((a for a in actions if a.isSeparator()), None)
            file_menu.insertAction(at, self.act_open)

    # ------------------------------------------------------------------ following the servers
    def _servers_added(self, _parent: QModelIndex, first: int, last: int) -> None:
        for conn in self.window.servers.connections[first:last + 1]:
            conn.statusChanged.connect(lambda c=conn: self._changed(c))
            conn.toolsChanged.connect(lambda c=conn: self._changed(c))
            conn.promptsChanged.connect(lambda c=conn: self._changed(c))

    def _changed(self, conn: Any) -> None:
        if conn is self.window.selected_connection():
            self.pane.show_connection(conn)

    def _selected(self) -> None:
        self.pane.show_connection(self.window.selected_connection())

    # ------------------------------------------------------------------ files
    def remembered(self) -> list[Path]:
        value = self.window.settings.value(RECENT_KEY) or []
        paths = [value] if isinstance(value, str) else list(value)
        return [Path(p) for p in paths if isinstance(p, str) and p]

    def remember(self, path: Path) -> None:
        keep = [str(path)] + [str(p) for p in self.remembered() if str(p) != str(path)]
        self.window.settings.setValue(RECENT_KEY, keep[:RECENT_SHOWN])

    def choose_open(self) -> QFileDialog:
        recent = self.remembered()
        start = recent[0].parent if recent and recent[0].parent.is_dir() else Path.cwd()
        dialog = QFileDialog(self.window, "Open collection", str(start), COLLECTION_FILTER)
        dialog.setObjectName("openCollectionDialog")
        dialog.setFileMode(QFileDialog.ExistingFile)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.open_path)
        dialog.open()
        return dialog

    def open_path(self, path: str | Path) -> bool:
        self.show_tab()
        return self.pane.open_path(path)

    def show_tab(self) -> None:
        if self.window.selected_connection() is not None:
            self.window.tabs.setCurrentWidget(self.pane)

    # ------------------------------------------------------------------ Save to collection…
    def save_call(self, rec: CallRecord) -> SaveCallDialog | None:
        conn = next((c for c in self.window.servers.connections if c.server_id == rec.server_id), None)
        if rec.running:
            return None
        dialog = SaveCallDialog(rec, conn.spec if conn is not None else None, self.remembered(),
                                self.pane.editable_for, parent=self.window)
        dialog.saved.connect(self._saved)
        return show_sheet(dialog)

    def _saved(self, path: str, step: str) -> None:
        self.remember(Path(path))
        mine = self.pane.editable_for(Path(path))
        if mine is not None:
            self.pane.adopt(mine)
        else:
            self.pane.open_path(path)
        self.window.statusBar().showMessage(f"Saved the call as step {step!r} of {Path(path).name} "
                                            "(see the Collections tab).", 8000)
