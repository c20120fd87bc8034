"""What the handshake told us about the selected server, all as plain text."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSplitter, QVBoxLayout, QWidget

from ..base import design
from ..base.json_view import JsonView
from ..base.layout import label_grid, scrolled_page
from ..base.text import hidden_tooltip, plain_tooltip, visible, visible_block
from .check_view import summary_text
from .connection import Connection
from .extras import ServerExtras

FIELDS = (("name", "Server"), ("version", "Version"), ("title", "Title"), ("protocol", "Protocol version"),
          ("era", "Era"), ("pid", "Process id"), ("target", "Command / URL"), ("status", "Status"),
          ("check", "Check"))


class ServerInfoView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("serverInfo")
        # a long path is clipped (the full text is in the tooltip)
        form, self.labels = label_grid(self, FIELDS, "serverInfo")
        self.instructions = QPlainTextEdit(self)
        self.instructions.setObjectName("serverInstructions")
        self.instructions.setReadOnly(True)
        self.instructions.setPlaceholderText("The server sent no instructions.")
        self.capabilities = JsonView(self)
        self.capabilities.setObjectName("serverCapabilities")
        split = QSplitter(Qt.Vertical, self)
        for title, widget in (("Instructions (as sent, plain text)", self.instructions),
                              ("Capabilities", self.capabilities)):
            box = QWidget(split)
            lay = QVBoxLayout(box)
            lay.setContentsMargins(design.margins("none", "s", "none", "none"))
            heading = QLabel(title, box)
            f = heading.font()
            f.setBold(True)
            heading.setFont(f)
            lay.addWidget(heading)
            lay.addWidget(widget)
            split.addWidget(box)
        self.extras = ServerExtras(self)
        lay = scrolled_page(self)
        lay.addLayout(form)
        lay.addWidget(self.extras)
        lay.addWidget(split, 1)

    def show_connection(self, conn: Connection | None) -> None:
        hello = conn.session.hello if conn else None
        info: dict[str, Any] = hello.server_info if hello and isinstance(hello.server_info, dict) else {}
        values = {
            "name": info.get("name", "—" if conn is None else ""),
            "version": info.get("version", ""),
            "title": info.get("title", ""),
            "protocol": hello.protocol_version if hello else "",
            "era": hello.era.value if hello else "",
            "pid": str(conn.session.pid) if conn and conn.session.pid else ("—" if conn and conn.spec.url else ""),
            "target": conn.session.describe() if conn else "",
            "status": conn.session.status_text() if conn else "",
            "check": (summary_text(conn.live.summary()) + " (the Check tab says what and where)"
                      if conn and hello else ""),
        }
        for key, label in self.labels.items():
            value = values.get(key)
            text = visible(value if isinstance(value, str) else "" if value is None else str(value), 600)
            label.setText(text)
            label.setToolTip(plain_tooltip(text) if len(text) > 60 else "")
        self.instructions.setPlainText(visible_block(hello.instructions) if hello and hello.instructions else "")
        self.instructions.setToolTip(hidden_tooltip(hello.instructions) if hello else "")
        self.extras.show_connection(conn)
        if hello is None:
            self.capabilities.setPlainText("")
        else:
            self.capabilities.set_json(hello.capabilities if hello.capabilities is not None else {})
