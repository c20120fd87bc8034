"""Running-call marks on the tool list and the servers sidebar: the delegates of those views, plus a
"● running 3.2 s" chip (elapsed time of the calls in flight) painted over the row's second line. Each
delegate keeps the mark it last painted on each row (`painted`): what is on screen, for tests to read."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QRect, Qt
from PySide6.QtGui import QFontMetrics, QPainter
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem

from ..base import theme
from ..base.items import ItemDelegate
from ..servers.sidebar import SERVER_ID_ROLE, ServerDelegate


def _chip(painter: QPainter, option: QStyleOptionViewItem, text: str, pad: int, line: int = 1) -> None:
    fm = QFontMetrics(option.font)
    w = fm.horizontalAdvance(text) + 12
    r = option.rect.adjusted(pad, pad, -pad, -pad)
    chip = QRect(r.right() - w, r.top() + line * (fm.height() + 3), w, fm.height())
    selected = bool(option.state & QStyle.State_Selected)
    c = theme.colour("connecting")
    painter.save()
    painter.setRenderHint(QPainter.Antialiasing)
    fill = type(c)(option.palette.highlight().color() if selected else option.palette.base().color())
    painter.setBrush(fill)
    painter.setPen(c if not selected else option.palette.highlightedText().color())
    painter.drawRoundedRect(chip.adjusted(0, 0, -1, -1), 4, 4)
    painter.drawText(chip, Qt.AlignCenter, text)
    painter.restore()


def _label(records: list[Any]) -> str:
    longest = max(r.elapsed for r in records)
    n = len(records)
    return (f"● {n} calls · {longest:.1f} s" if n > 1 else f"● running {longest:.1f} s")


class RunningToolDelegate(ItemDelegate):
    def __init__(self, calls: Any, connection: Any, parent: Any = None) -> None:
        super().__init__(parent)
        self.calls = calls
        self.connection = connection  # () -> the selected Connection or None
        self.painted: dict[str, str] = {}  # tool name -> the mark last painted on its row ("" for none)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        super().paint(painter, option, index)
        conn = self.connection()
        name = index.data(Qt.UserRole)
        if conn is None or not isinstance(name, str):
            return
        running = self.calls.running(conn.server_id, name)
        self.painted[name] = _label(running) if running else ""
        if running:
            _chip(painter, option, self.painted[name], self.PAD)  # over the description line


class RunningServerDelegate(ServerDelegate):
    def __init__(self, calls: Any, parent: Any = None) -> None:
        super().__init__(parent)
        self.calls = calls
        self.painted: dict[str, str] = {}  # server id -> the mark last painted on its row ("" for none)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        super().paint(painter, option, index)
        sid = index.data(SERVER_ID_ROLE)
        running = self.calls.running(sid) if isinstance(sid, str) else []
        if isinstance(sid, str):
            self.painted[sid] = _label(running) if running else ""
        if running:
            _chip(painter, option, _label(running), self.PAD, line=0)  # beside the name
