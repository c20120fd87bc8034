"""The page shown when no server is selected: what Spyglass is for, and the two ways to begin."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ..base import design


class EmptyPage(QWidget):
    def __init__(self, add: QAction, demo: QAction, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("emptyPage")
        self.title = QLabel("No server yet", self)
        self.title.setObjectName("emptyTitle")
        f = self.title.font()
        f.setPointSizeF(design.size("title", f.pointSizeF()))
        f.setBold(True)
        self.title.setFont(f)
        self.title.setAlignment(Qt.AlignCenter)
        text = QLabel("Add an MCP server to see its tools, call them, and watch every message on the wire.\n"
                      "You can also start Spyglass with a server:  spyglass -- COMMAND ARGS…", self)
        text.setTextFormat(Qt.PlainText)
        text.setAlignment(Qt.AlignCenter)
        text.setWordWrap(True)
        add_button = QPushButton("Add server…", self)
        add_button.setObjectName("emptyAddServer")
        add_button.clicked.connect(add.trigger)
        demo_button = QPushButton("Try the demo server", self)
        demo_button.setObjectName("emptyAddDemo")
        demo_button.clicked.connect(demo.trigger)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(add_button)
        buttons.addWidget(demo_button)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.addStretch(2)
        lay.addWidget(self.title)
        lay.addWidget(text)
        lay.addSpacing(design.space("l"))
        lay.addLayout(buttons)
        lay.addStretch(3)

    def set_title(self, text: str) -> None:
        self.title.setText(text)
