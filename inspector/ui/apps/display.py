"""An app outside its block: fullscreen in a window of its own (`appFullscreen`), or picture-in-picture as a
small window that stays on top (`appPip`). Closing either brings the app back inline."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from ..base import design
from ..base.layout import text_label
from ..base.text import visible

PIP_SIZE = (420, 300)


class AppWindow(QWidget):
    closedByUser = Signal()

    def __init__(self, mode: str, title: str, parent: QWidget | None = None) -> None:
        flags = Qt.WindowType.Window
        if mode == "pip":
            flags |= Qt.WindowType.Tool | Qt.WindowType.WindowStaysOnTopHint
        super().__init__(parent, flags)
        self.mode = mode
        self.setObjectName("appPip" if mode == "pip" else "appFullscreen")
        self.setWindowTitle(f"{visible(title, 80)} — {'picture in picture' if mode == 'pip' else 'fullscreen'}")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        bar = QHBoxLayout()
        bar.setContentsMargins(design.margins("hair", "s"))
        bar.addWidget(text_label(visible(title, 80), self, role="muted", wrap=False), 1)
        back = QPushButton("Back inline", self)
        back.setObjectName("appBackInline")
        back.setToolTip("Show the app in its result block again")
        back.clicked.connect(self.close)
        bar.addWidget(back)
        lay.addLayout(bar)
        self.body = QVBoxLayout()
        lay.addLayout(self.body, 1)
        self._closing_quietly = False

    def place(self) -> None:
        if self.mode == "pip":
            self.resize(*PIP_SIZE)
            screen = QGuiApplication.primaryScreen()
            if screen is not None:
                area = screen.availableGeometry()
                self.move(area.right() - PIP_SIZE[0] - 24, area.bottom() - PIP_SIZE[1] - 24)
            self.show()
        else:
            self.showFullScreen()

    def close_quietly(self) -> None:
        """Closed by the host (the app went back inline, or away): no signal."""
        self._closing_quietly = True
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        super().closeEvent(event)
        if not self._closing_quietly:
            self.closedByUser.emit()
