"""Presentation mode in the window: View → Presentation mode (`actionPresent`, F11 toggles, Esc leaves) turns the
window into one stage (`presentView`) for the selected server: no docks, no traffic, no log, no tabs, no menu
bar, full screen. Leaving brings the normal window back as it was. The traffic is still recorded, only not
shown. `spyglass --present` starts in it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QDockWidget, QMenu, QWidget

from ..present.view import PresentView

if TYPE_CHECKING:
    from .main_window import MainWindow


class PresentLink(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.view: PresentView | None = None
        self.saved: dict[str, Any] = {}
        self.action = QAction("Presentation mode", window)
        self.action.setObjectName("actionPresent")
        self.action.setCheckable(True)
        self.action.setShortcut(QKeySequence("F11"))
        self.action.setShortcutContext(Qt.WindowShortcut)
        self.action.setToolTip("Show the selected server's tools to an audience: large cards, friendly forms and "
                               "answers, nothing technical (F11; Esc leaves)")
        self.action.triggered.connect(self.toggle)
        window.addAction(self.action)  # the shortcut works while the menu bar is hidden
        self.escape = QShortcut(QKeySequence("Esc"), window)
        self.escape.setContext(Qt.WindowShortcut)
        self.escape.setEnabled(False)
        self.escape.activated.connect(self.leave)
        menu = window.findChild(QMenu, "viewMenu")
        if menu is not None:
            first = menu.actions()[0] if menu.actions() else None
            menu.insertAction(first, self.action)
            menu.insertSeparator(first)
        window.installEventFilter(self)

    @property
    def active(self) -> bool:
        return bool(self.saved)

    def toggle(self, on: bool | None = None) -> None:
        on = not self.active if on is None or not isinstance(on, bool) else on
        self.enter() if on else self.leave()

    def enter(self) -> PresentView:
        w = self.window
        if self.view is None:
            self.view = PresentView()
            self.view.leaveRequested.connect(self.leave)
        if not self.active:
            docks = [d for d in w.findChildren(QDockWidget) if d.parent() is w]
            self.saved = {"state": QByteArray(w.saveState()), "central": w.takeCentralWidget(),
                          "docks": [d for d in docks if d.isVisible()], "menu": w.menuBar().isVisible(),
                          "status": w.statusBar().isVisible(), "states": w.windowState()}
            for d in docks:
                d.hide()
            w.menuBar().hide()
            w.statusBar().hide()
            w.setCentralWidget(self.view)
            self.view.show()
            w.showFullScreen()
        self.view.set_connection(w.selected_connection())
        self.view.open_stage()
        w.answers.stage = self.view  # the server's questions are asked on the stage, in words
        self.escape.setEnabled(True)
        self.action.setChecked(True)
        return self.view

    def leave(self) -> None:
        if not self.active:
            self.action.setChecked(False)
            return
        w, saved = self.window, self.saved
        self.saved = {}
        w.answers.stage = None
        if self.view is not None:
            self.view.hand_back()  # a question still on the stage is asked in its dialog
        view = w.takeCentralWidget()  # kept for the next time: its zoom, look and script stay
        if view is not None:
            view.setParent(None)
            view.hide()
        central: QWidget = saved["central"]
        w.setCentralWidget(central)
        central.show()
        w.menuBar().setVisible(saved["menu"])
        w.statusBar().setVisible(saved["status"])
        w.setWindowState(saved["states"])
        w.restoreState(saved["state"])
        for d in saved["docks"]:
            d.show()
        self.escape.setEnabled(False)
        self.action.setChecked(False)

    def saved_server(self, name: str) -> Any:
        """Select the saved server called `name` and connect it (`spyglass --present --server NAME`); None,
        with a banner, when the catalog has none of that name."""
        w = self.window
        conn = next((c for c in w.connections() if c.spec.name == name), None)
        if conn is None:
            w.show_banner(f"No saved server is called “{name}”.", level="warning")
            return None
        w.select_connection(conn)
        w.act_connect.trigger()
        return conn

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.window and event.type() == QEvent.Close and self.active:
            self.leave()  # the normal window's layout is what is saved
        return False
