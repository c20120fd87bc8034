"""The servers sidebar (`sidebar`): buttons, `serverList` (one row per connection) and the status card.

Each row reads at a glance: a status icon in the status colour, the server's name, and one line of
status (connecting…, connected · version (era), error: reason, exited (code N)), ending in "not saved"
for a server named on the command line that is not kept in the catalog. The card below the list shows,
for the selected server, the full reason, the last stderr lines and a Retry button.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QAction, QFont, QFontMetrics, QPainter, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...secrets import mask_text
from ...session import Status
from ..base import design, theme
from ..base.fit import FlowLayout
from ..base.text import plain_tooltip, visible, visible_block
from .connection import Connection

STATUS_ROLE = Qt.UserRole + 1
STATUS_TEXT_ROLE = Qt.UserRole + 2
SERVER_ID_ROLE = Qt.UserRole
PIN_BADGE = "changed since pinned · "  # a server whose definitions differ from its pin file (spyglass pin)
LIST_ROOM = 140  # px: the server list's least height holds as many rows as fit in this, one to three


class ServerModel(QAbstractListModel):
    """`unsaved(conn)`: whether a row is a server the user has not saved (it says so)."""

    def __init__(self, parent: Any = None, unsaved: Callable[[Connection], bool] = lambda conn: False) -> None:
        super().__init__(parent)
        self.connections: list[Connection] = []
        self.unsaved = unsaved

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.connections)

    def data(self, index: QModelIndex, role: int = Qt.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.connections):
            return None
        conn = self.connections[index.row()]
        if role == Qt.DisplayRole:
            return visible(mask_text(conn.name), 200)  # a server named by its URL
        if role == SERVER_ID_ROLE:
            return conn.server_id
        if role == STATUS_ROLE:
            return conn.session.status.value
        if role == STATUS_TEXT_ROLE:
            found = sum(conn.live.summary().values())  # first: a narrow sidebar cuts the end of the line
            return ((f"⚠ {found} · " if found else "") + (PIN_BADGE if conn.live.pin.changes else "")
                    + visible(conn.session.status_text(), 300) + (" · not saved" if self.unsaved(conn) else ""))
        if role == Qt.DecorationRole:
            return theme.status_icon(conn.session.status.value)
        if role == Qt.ToolTipRole:
            found = sum(conn.live.summary().values())
            return plain_tooltip(f"{visible(mask_text(conn.name), 200)}\n{visible(conn.session.describe(), 400)}\n"
                                 f"{visible(conn.session.status_text(), 600)}"
                                 + (f"\n⚠ {found} finding{'s' if found != 1 else ''} (the Check tab)" if found else "")
                                 + (f"\nChanged since its pin ({visible(conn.spec.pin, 200)}):\n"
                                    f"{visible_block(conn.live.pin.tooltip(), 2000)}" if conn.live.pin.changes else ""))
        if role == Qt.AccessibleTextRole:
            return f"{mask_text(conn.name)}: {conn.session.status_text()}"
        return None

    def add(self, conn: Connection) -> int:
        row = len(self.connections)
        self.beginInsertRows(QModelIndex(), row, row)
        self.connections.append(conn)
        self.endInsertRows()
        conn.statusChanged.connect(lambda c=conn: self._changed(c))
        return row

    def remove(self, conn: Connection) -> None:
        if conn not in self.connections:
            return
        row = self.connections.index(conn)
        self.beginRemoveRows(QModelIndex(), row, row)
        self.connections.pop(row)
        self.endRemoveRows()

    def move(self, conn: Connection, row: int) -> None:
        """Put a row at `row` (an undone removal goes back where it was)."""
        if conn not in self.connections:
            return
        src = self.connections.index(conn)
        row = max(0, min(row, len(self.connections) - 1))
        if row == src:
            return
        self.beginMoveRows(QModelIndex(), src, src, QModelIndex(), row + 1 if row > src else row)
        self.connections.insert(row, self.connections.pop(src))
        self.endMoveRows()

    def refresh(self, conn: Connection) -> None:
        """Draw a row again (its definition or its saved state changed)."""
        self._changed(conn)

    def _changed(self, conn: Connection) -> None:
        if conn in self.connections:
            idx = self.index(self.connections.index(conn))
            self.dataChanged.emit(idx, idx)


def core_name(name: str) -> str:
    """A server's name without a trailing note in brackets ("demo (built-in)" → "demo"): what a narrow list shows."""
    head, bracket, _ = name.rpartition(" (")
    return head if bracket and head.strip() and name.endswith(")") else name


class ServerDelegate(QStyledItemDelegate):
    PAD = 6
    ICON_ROOM = 22  # the status icon and the gap after it, before a row's text

    def name_shown(self, font: QFont, width: int, name: str) -> str:
        """What a row `width` px wide shows of `name` (bold): the whole name where it fits, else the name without
        its note in brackets, elided only where even that does not fit."""
        bold = QFont(font)
        bold.setBold(True)
        fm = QFontMetrics(bold)
        room = width - 2 * self.PAD - self.ICON_ROOM
        if fm.horizontalAdvance(name) > room:
            name = core_name(name)
        return fm.elidedText(name, Qt.ElideRight, room)

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        fm = QFontMetrics(option.font)
        return QSize(160, fm.height() * 2 + self.PAD * 2 + 3)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        opt.icon = type(opt.icon)()
        painter.save()
        if opt.widget:
            opt.widget.style().drawControl(QStyle.CE_ItemViewItem, opt, painter, opt.widget)
        selected = bool(option.state & QStyle.State_Selected)
        fm = QFontMetrics(option.font)
        r = option.rect.adjusted(self.PAD, self.PAD, -self.PAD, -self.PAD)
        icon = index.data(Qt.DecorationRole)
        if icon is not None:
            icon.paint(painter, QRect(r.left(), r.top() + (fm.height() - 16) // 2, 16, 16))
        x = r.left() + self.ICON_ROOM
        bold = QFont(option.font)
        bold.setBold(True)
        painter.setFont(bold)
        text_colour = option.palette.highlightedText().color() if selected else option.palette.text().color()
        painter.setPen(text_colour)
        line1 = QRect(x, r.top(), r.right() - x, fm.height())
        painter.drawText(line1, Qt.AlignLeft | Qt.AlignVCenter,
                         self.name_shown(option.font, option.rect.width(), index.data(Qt.DisplayRole) or ""))
        painter.setFont(option.font)
        painter.setPen(text_colour if selected else theme.status_colour(index.data(STATUS_ROLE) or ""))
        line2 = QRect(x, r.top() + fm.height() + 3, r.right() - x, fm.height())
        painter.drawText(line2, Qt.AlignLeft | Qt.AlignVCenter,
                         fm.elidedText(index.data(STATUS_TEXT_ROLE) or "", Qt.ElideRight, line2.width()))
        painter.restore()


class StatusCard(QFrame):
    """Reason, last stderr lines and Retry for a server in error or exited state."""

    retry = Signal()
    diagnose = Signal()  # find out where the connection broke (the connection doctor)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("serverStatusCard")
        self.setFrameShape(QFrame.StyledPanel)
        self.title = QLabel(self)
        self.title.setObjectName("serverStatusTitle")
        self.title.setTextFormat(Qt.PlainText)
        self.title.setWordWrap(True)
        f = self.title.font()
        f.setBold(True)
        self.title.setFont(f)
        self.reason = QLabel(self)
        self.reason.setObjectName("serverStatusReason")
        self.reason.setTextFormat(Qt.PlainText)
        self.reason.setWordWrap(True)
        self.reason.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.stderr_label = QLabel("Last lines on stderr:", self)
        self.stderr = QPlainTextEdit(self)
        self.stderr.setObjectName("serverStderr")
        self.stderr.setReadOnly(True)
        self.stderr.setMaximumBlockCount(200)
        self.stderr.setLineWrapMode(QPlainTextEdit.WidgetWidth)
        self.stderr.setMaximumHeight(100)
        self.retry_button = QPushButton("Retry", self)
        self.retry_button.setObjectName("retryButton")
        self.retry_button.clicked.connect(self.retry)
        self.diagnose_button = QPushButton("Diagnose", self)
        self.diagnose_button.setObjectName("diagnoseButton")
        self.diagnose_button.setToolTip("Run the steps of the connection one by one: where it breaks, and what to do")
        self.diagnose_button.clicked.connect(self.diagnose)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.diagnose_button)
        row.addWidget(self.retry_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("m"))
        lay.addWidget(self.title)
        lay.addWidget(self.reason)
        lay.addWidget(self.stderr_label)
        lay.addWidget(self.stderr)
        lay.addLayout(row)
        self.hide()

    def show_for(self, conn: Connection | None) -> None:
        if conn is None or conn.session.status not in (Status.ERROR, Status.EXITED):
            self.hide()
            return
        exited = conn.session.status is Status.EXITED
        self.title.setText(visible(conn.session.status_text() if exited else "Could not connect", 200))
        self.title.setStyleSheet(f"color: {theme.status_colour(conn.session.status.value).name()};")
        self.reason.setText(visible_block(conn.session.reason or "", 2000))
        tail = [visible_block(line, 2000) for line in conn.session.stderr_tail if line.strip()]
        self.stderr.setPlainText("\n".join(tail))
        self.stderr_label.setVisible(bool(tail))
        self.stderr.setVisible(bool(tail))
        self.retry_button.setText("Retry" if conn.session.status is Status.ERROR else "Restart")
        self.show()


class ServerListView(QListView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("serverList")
        self.setItemDelegate(ServerDelegate(self))
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setUniformItemSizes(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setContextMenuPolicy(Qt.ActionsContextMenu)
        row = 2 * self.fontMetrics().height() + 15
        # three servers stay visible beside an error card; fewer at a large text size (one at least): the
        # window must still fit a laptop's screen
        self.setMinimumHeight(max(1, min(3, LIST_ROOM // row)) * row + 4)


class ServerSidebar(QWidget):
    """The heading, a grid of buttons for `actions`, the list of servers and the status card."""

    def __init__(self, model: ServerModel, actions: Sequence[QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        heading = QLabel("Servers", self)
        f = heading.font()
        f.setBold(True)
        heading.setFont(f)
        # rows of three, so the buttons ask no more width than a short name: what is done to the list, then to
        # the connection, and Remove on a row of its own; fewer a row where the sidebar is narrower (large text)
        buttons = FlowLayout(spacing=design.space("xs"), columns=3)
        self.button_rows = buttons
        self.buttons: dict[str, QToolButton] = {}
        for a in actions:
            b = QToolButton(self)
            b.setDefaultAction(a)
            b.setObjectName("button" + a.objectName().removeprefix("action"))
            b.setToolButtonStyle(Qt.ToolButtonTextOnly)
            b.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
            buttons.addWidget(b)
            self.buttons[a.objectName()] = b
        self.view = ServerListView(self)
        self.view.setModel(model)
        self.card = StatusCard(self)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("s", "s", "none", "s"))
        lay.addWidget(heading)
        lay.addLayout(buttons)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.card)

    def minimumSizeHint(self) -> QSize:
        """With the buttons in as many rows as they wrap into at the sidebar's width (a layout counts one row)."""
        size = super().minimumSizeHint()
        m = self.layout().contentsMargins()
        wrapped = self.button_rows.heightForWidth(max(1, self.width() - m.left() - m.right()))
        return QSize(size.width(), size.height() + max(0, wrapped - self.button_rows.minimumSize().height()))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # the buttons may wrap into more or fewer rows

    def comfortable_width(self) -> int:
        """The width with the buttons in rows of three: the least the sidebar starts with where there is room."""
        m = self.layout().contentsMargins()
        return self.button_rows.sizeHint().width() + m.left() + m.right()
