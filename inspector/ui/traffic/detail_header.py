"""The traffic message's header line and its buttons (`HeaderRow`): the header comes first. It wraps where the pane
is narrow (large text, the side dock), and the buttons get what its one line leaves, down to the » menu that holds them
all: at 200 % they had squeezed "#15 · → request" to "#15 ·"."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QToolButton, QWidget

from ..base.fit import overflow_row

SHORTEST = "#" + "9" * 5 + " · → response"  # the header is never narrower than this start of it


class HeaderRow(QWidget):
    """`header` (a label: it wraps) beside `buttons` (their row `trafficDetailButtons`)."""

    reflowed = Signal()  # the header wrapped into more or fewer lines: the message below has other lines

    def __init__(self, header: QLabel, buttons: Sequence[QPushButton], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.header, self.first = header, buttons[0]
        header.setWordWrap(True)
        header.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        header.setMinimumWidth(header.fontMetrics().horizontalAdvance(SHORTEST))
        self.buttons = overflow_row(self, "trafficDetailButtons", buttons)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.addWidget(header, 1)
        self.row.addWidget(self.buttons, 0, Qt.AlignmentFlag.AlignTop)
        header.installEventFilter(self)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.share()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.header and event.type() == QEvent.Type.Resize \
                and event.size().height() != event.oldSize().height():
            self.reflowed.emit()
        return super().eventFilter(watched, event)

    def share(self) -> None:
        """The header first (call it when its text changed): the buttons get what its one line leaves."""
        text = self.header.fontMetrics().horizontalAdvance(self.header.text()) + 2 * self.header.margin() + 2
        ext = self.buttons.findChild(QToolButton, "qt_toolbar_ext_button")  # the row's »
        least = (ext.sizeHint().width() if ext else self.first.sizeHint().width()) + 2 * self.buttons.layout().spacing()
        self.buttons.setMaximumWidth(max(least, self.width() - text - self.row.spacing()))
