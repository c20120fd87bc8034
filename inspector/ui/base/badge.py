"""Badges, drawn one way everywhere: filled with their colour (`theme.colour(key)`), the text on it in the
theme's on-filled colour, rounded, and each with a tooltip that says what it means (`badge_tip`). `Badge` is the
widget (a tool's header, a result's annotations, a resource's); `paint_badge` draws one in an item delegate,
whose `helpEvent` shows the same tooltip for the badge under the pointer."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from ...session.tools import UNDECLARED, UNDECLARED_NOTE
from . import design, theme
from .text import plain_tooltip

NOT_A_GUARANTEE = "A hint from the server, not a guarantee."
TIPS = {
    "read-only": "Read-only: the server says this tool only reads and changes nothing.",
    "destructive": "Destructive: the server says this tool may delete or overwrite data. Spyglass asks before "
                   "calling it.",
    UNDECLARED: UNDECLARED_NOTE[0].upper() + UNDECLARED_NOTE[1:],
    "idempotent": "Idempotent: calling it again with the same arguments changes nothing more, the server says.",
    "open-world": "Open world: the tool reaches outside the server (the web, other systems), the server says.",
    "task": "Runs only as a task (execution.taskSupport: required): the call returns at once and its result is "
            "fetched when it is done.",
    "task optional": "Can run as a task (execution.taskSupport: optional).",
    "app": "Has an MCP App: its result is shown in an interactive view the server provides.",
    "app-only": "Only apps see this tool (_meta.ui.visibility): a model is never offered it.",
    "new": "New: it appeared after the server said its list changed.",
    "removed": "Removed: the server no longer lists it.",
    "changed": "Changed: its definition differs from the one listed before.",
    "subscribed": "Subscribed: the server tells Spyglass when this resource changes.",
}
HINTED = {"read-only", "destructive", "idempotent", "open-world"}


def badge_tip(label: str, key: str | None = None) -> str:
    """What a badge means, in a sentence (its own label when nothing more is known)."""
    key = key or label
    if key in TIPS:
        return TIPS[key] + (f" {NOT_A_GUARANTEE}" if key in HINTED else "")
    if label.startswith("for "):
        return f"Audience: who this is meant for ({label[4:]}). {NOT_A_GUARANTEE}"
    if label.startswith("priority "):
        return f"Priority {label[9:]}: from 0 (optional) to 1 (most important). {NOT_A_GUARANTEE}"
    if label.startswith("modified "):
        return f"Last modified {label[9:]}, the server says."
    if label.endswith((" finding", " findings")):
        return f"{label.capitalize()} of the Check tab about it: what it says is in the tool's header."
    if key == "warning":
        return f"⚠ {label}"
    return label


def badge_size(label: str, fm: QFontMetrics) -> QSize:
    return QSize(fm.horizontalAdvance(label) + 2 * design.space("s"), fm.height() + design.space("hair"))


def paint_badge(painter: QPainter, rect: QRect, label: str, key: str) -> None:
    """One filled badge in `rect` (the painter's font is the badge's)."""
    fill = theme.colour(key)
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(fill)
    painter.drawRoundedRect(rect.adjusted(0, 0, -1, -1), design.BADGE_RADIUS, design.BADGE_RADIUS)
    painter.setPen(on_fill(fill))
    painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
    painter.restore()


def on_fill(fill: QColor) -> QColor:
    """The text colour on a badge: the theme's on-filled colour, or the other one when that reads worse."""
    luma = fill.red() * 299 + fill.green() * 587 + fill.blue() * 114
    return QColor(design.pair("paper" if luma < 150000 else "ink")[0])


class Badge(QLabel):
    """A filled badge with its tooltip. `key` picks the colour (the label itself when None)."""

    def __init__(self, label: str, parent: QWidget | None = None, *, key: str | None = None, tip: str = "",
                 name: str = "badge") -> None:
        super().__init__(label, parent)
        self.key = key or label
        self.setObjectName(name)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setFont(design.font("small", self.font(), bold=False))
        self.setToolTip(plain_tooltip(tip or badge_tip(label, self.key)))
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)

    def sizeHint(self) -> QSize:
        return badge_size(self.text(), self.fontMetrics())

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def fill(self) -> QColor:
        return theme.colour(self.key)

    def paintEvent(self, event: Any) -> None:
        p = QPainter(self)
        p.setFont(self.font())
        paint_badge(p, self.rect(), self.text(), self.key)
        p.end()


class BadgeRow(QWidget):
    """Badges in a row, and under them a muted note that wraps at the column's width; as narrow as its column
    makes it (badges that do not fit are cut, never widening the window). `labels()` is what is shown."""

    def __init__(self, parent: QWidget | None = None, *, name: str = "badges") -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(design.space("hair"))
        self.line = QWidget(self)
        self.line.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.row = QHBoxLayout(self.line)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.setSpacing(design.space("xs"))
        self.row.addStretch(1)
        column.addWidget(self.line)
        self.badges: list[Badge] = []
        self.note = QLabel(self)
        self.note.setObjectName(name + "Note")
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setWordWrap(True)
        column.addWidget(self.note)

    def set_badges(self, badges: list[tuple[str, str]], note: str = "", tips: dict[str, str] | None = None) -> None:
        """(label, colour key) each; `tips` overrides a label's tooltip."""
        for b in self.badges:
            self.row.removeWidget(b)
            b.deleteLater()
        self.badges = []
        for i, (label, key) in enumerate(badges):
            b = Badge(label, self.line, key=key, tip=(tips or {}).get(label, ""), name="badge")
            self.row.insertWidget(i, b, 0, Qt.AlignmentFlag.AlignVCenter)
            self.badges.append(b)
        self.line.setVisible(bool(self.badges))
        self.note.setText(note)
        self.note.setStyleSheet(f"color: {theme.colour('muted').name()};")
        self.note.setVisible(bool(note))

    def labels(self) -> list[str]:
        return [b.text() for b in self.badges]

    def text(self) -> str:
        """The badges and the note as one line of text (what a screen reader or a test reads)."""
        return " · ".join(self.labels()) + (f"  {self.note.text()}" if self.note.text() else "")
