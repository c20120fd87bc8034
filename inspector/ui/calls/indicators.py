"""Running-call marks on the tool list and the servers sidebar: the delegates of those views, plus a
"● running 3.2 s" chip (elapsed time of the calls in flight) painted over the row's second line. Each
delegate keeps the mark it last painted on each row (`painted`): what is on screen, for tests to read."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QRect, Qt
from PySide6.QtGui import QFontMetrics, QPainter
from PySide6.QtWidgets import QStyleOptionViewItem, QToolTip

from ..base import design
from ..base.badge import paint_badge
from ..base.items import ItemDelegate
from ..servers.sidebar import SERVER_ID_ROLE, ServerDelegate


def _chip_rect(option: QStyleOptionViewItem, text: str, pad: int, line: int = 1) -> QRect:
    fm = QFontMetrics(option.font)
    w = fm.horizontalAdvance(text) + 2 * design.space("s")
    r = option.rect.adjusted(pad, pad, -pad, -pad)
    return QRect(r.right() - w, r.top() + line * (fm.height() + 3), w, fm.height())


def _chip(painter: QPainter, option: QStyleOptionViewItem, text: str, pad: int, line: int = 1) -> None:
    """The running mark: a filled badge in the "connecting" colour (base.badge)."""
    painter.save()
    painter.setFont(option.font)
    paint_badge(painter, _chip_rect(option, text, pad, line), text, "connecting")
    painter.restore()


RUNNING_TIP = ("Running: {what} in flight for {seconds:.1f} s so far. The mark ends when the call does; Cancel is "
               "in the tool's panel.")


def _tip(event: Any, view: Any, option: QStyleOptionViewItem, text: str, pad: int, line: int, records: list[Any]
         ) -> bool:
    """The running mark's tooltip, when the pointer is on it."""
    if not text or not records or not _chip_rect(option, text, pad, line).contains(event.pos()):
        return False
    what = f"{len(records)} calls" if len(records) > 1 else "a call"
    QToolTip.showText(event.globalPos(), RUNNING_TIP.format(what=what, seconds=max(r.elapsed for r in records)),
                      view)
    return True


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

    def helpEvent(self, event: Any, view: Any, option: QStyleOptionViewItem, index: QModelIndex) -> bool:
        conn, name = self.connection(), index.data(Qt.UserRole)
        if event.type() == QEvent.Type.ToolTip and conn is not None and isinstance(name, str):
            running = self.calls.running(conn.server_id, name)
            if _tip(event, view, option, _label(running) if running else "", self.PAD, 1, running):
                return True
        return super().helpEvent(event, view, option, index)


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

    def helpEvent(self, event: Any, view: Any, option: QStyleOptionViewItem, index: QModelIndex) -> bool:
        sid = index.data(SERVER_ID_ROLE)
        if event.type() == QEvent.Type.ToolTip and isinstance(sid, str):
            running = self.calls.running(sid)
            if _tip(event, view, option, _label(running) if running else "", self.PAD, 0, running):
                return True
        return super().helpEvent(event, view, option, index)
