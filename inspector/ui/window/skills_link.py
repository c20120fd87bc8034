"""The Skills tab (after Prompts), there only while the selected server declares the Skills extension
(SEP-2640, `io.modelcontextprotocol/skills`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QModelIndex, QObject

from ..library.skills import SkillsPane

if TYPE_CHECKING:
    from .main_window import MainWindow


class SkillsLink(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.pane = SkillsPane(window.tabs)
        after = window.tabs.indexOf(window.prompts_pane)
        tab = window.tabs.insertTab(after + 1, self.pane, "Skills")
        window.tabs.setTabToolTip(tab, "The server's skills (SEP-2640): their files, digests and verification")
        window.tabs.setTabVisible(tab, False)
        window.selectionChanged.connect(self._selected)
        window.servers.rowsInserted.connect(self._servers_added)

    def _servers_added(self, _parent: QModelIndex, first: int, last: int) -> None:
        for conn in self.window.servers.connections[first:last + 1]:
            conn.statusChanged.connect(lambda c=conn: self._changed(c))

    def _changed(self, conn: Any) -> None:
        if conn is self.window.selected_connection():
            self._selected()

    def _selected(self) -> None:
        """Shown for a server that offers skills; its list follows the selected server."""
        w = self.window
        if not shiboken6.isValid(w) or not shiboken6.isValid(self.pane):
            return
        conn = w.selected_connection()
        # a tapped conversation is only watched: Spyglass sends it nothing of its own
        offered = conn is not None and not getattr(conn.session, "read_only", False) and conn.session.skills.offered
        tab = w.tabs.indexOf(self.pane)
        if not offered and w.tabs.currentIndex() == tab:
            w.tabs.setCurrentIndex(0)
        w.tabs.setTabVisible(tab, offered)
        self.pane.show_connection(conn if offered else None)
