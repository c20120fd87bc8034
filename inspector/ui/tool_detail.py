"""The selected tool: names, hint badges, flags, description, and its inputSchema (read-only).

Until the generated form lands (inspector.forms), the schema is shown pretty-printed and highlighted.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from . import theme
from ._text import plain_tooltip, visible, visible_block
from .schema_view import JsonView
from .tool_list import HINTS_NOTE, badges, display_name, flags, hints_tooltip


class ToolDetail(QWidget):
    """The selected tool: names, badges, description, and its inputSchema (until forms land)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolDetail")
        self.title = QLabel(self)
        self.title.setObjectName("toolTitle")
        self.title.setTextFormat(Qt.PlainText)
        f = QFont(self.title.font())
        f.setPointSizeF(f.pointSizeF() * 1.25)
        f.setBold(True)
        self.title.setFont(f)
        self.title.setWordWrap(True)
        self.name = QLabel(self)
        self.name.setObjectName("toolName")
        self.name.setTextFormat(Qt.PlainText)
        self.name.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.badges = QLabel(self)
        self.badges.setObjectName("toolBadges")
        self.badges.setTextFormat(Qt.PlainText)
        self.badges.setWordWrap(True)
        self.flags = QLabel(self)
        self.flags.setObjectName("toolFlags")
        self.flags.setTextFormat(Qt.PlainText)
        self.flags.setWordWrap(True)
        self.description = QPlainTextEdit(self)
        self.description.setObjectName("toolDescription")
        self.description.setReadOnly(True)
        self.description.setMaximumHeight(96)
        heading = QLabel("Input schema (read-only; the generated form replaces this view)", self)
        heading.setObjectName("toolSchemaHeading")
        self.schema = JsonView(self)
        self.schema.setObjectName("toolSchema")
        self.placeholder = QLabel("Select a tool to see what it does and what it takes.", self)
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.setObjectName("toolPlaceholder")
        self.body = QWidget(self)
        b = QVBoxLayout(self.body)
        b.setContentsMargins(0, 0, 0, 0)
        for w in (self.title, self.name, self.badges, self.flags, self.description, heading):
            b.addWidget(w)
        b.addWidget(self.schema, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 0, 0, 0)
        lay.addWidget(self.placeholder, 1)
        lay.addWidget(self.body, 1)
        self.tool: dict[str, Any] | None = None
        self.show_tool(None)

    def show_tool(self, tool: dict[str, Any] | None, change: str | None = None) -> None:
        self.tool = tool
        self.change = change
        self.placeholder.setVisible(tool is None)
        self.body.setVisible(tool is not None)
        if tool is None:
            return
        shown = visible(display_name(tool), 300)
        self.title.setText(shown)
        name = visible(tool.get("name"), 300)
        self.name.setText(f"name: {name}")
        b = badges(tool)
        self.badges.setText("Hints: " + (" · ".join(b) if b else "none") + f"   ({HINTS_NOTE})")
        self.badges.setToolTip(plain_tooltip(hints_tooltip(tool)))
        problems = flags(tool, set())
        if change == "removed":
            problems.insert(0, "removed: the server no longer lists this tool")
        elif change == "new":
            problems.insert(0, "new: appeared when the server said its tool list changed")
        self.flags.setText("⚠ " + "; ".join(problems) if problems else "")
        self.flags.setVisible(bool(problems))
        self.flags.setStyleSheet(f"color: {theme.colour('warning').name()};")
        desc = tool.get("description")
        text = visible_block(desc) if isinstance(desc, str) and desc else "(no description)"
        self.description.setPlainText(text)
        fm = self.description.fontMetrics()
        width = max(200, self.description.viewport().width() - 8)
        lines = sum(max(1, -(-fm.horizontalAdvance(line) // width)) for line in text.splitlines() or [""])
        self.description.setFixedHeight(min(6, max(1, lines)) * fm.lineSpacing() + 14)
        if "inputSchema" in tool:
            self.schema.set_json(tool["inputSchema"])
        else:
            self.schema.setPlainText("(the server sent no inputSchema)")
