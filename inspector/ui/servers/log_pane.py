"""`serverLog`: stderr lines and notifications/message of the selected server, with level.

An item view over a model of the session's log entries, never a text editor: a line is formatted only when
it is painted, so a flood of 100,000 log notifications costs a few list appends per 100 ms flush and the
painting of the rows on screen, not the layout of 100,000 lines of text (a QPlainTextEdit spent more time
appending a flood's lines than Spyglass spent reading them). The model keeps what the session keeps (its
newest `LOG_LIMIT` entries); a row says so when a burst went past that between two flushes.

Rows are one line each (a multi-line entry shows `⏎` where it breaks; its tooltip and a copy have it whole);
Ctrl+C copies the selected rows, `toPlainText()` gives every row as text (for people's scripts and tests).
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase, QKeySequence, QPainter
from PySide6.QtWidgets import QAbstractItemView, QApplication, QMenu, QTreeView, QWidget

from ...session import LogEntry
from ...session.log import LOG_LIMIT
from ..base import design
from ..base.text import visible_block
from .connection import Connection

MAX_LINES = LOG_LIMIT
FLUSH_MS = 100
FLOOD_FLUSH_MS = 250  # after a flush that found more lines than the log keeps: a flood, shown 4 times a second
_LABELS = {"stderr": "stderr", "spyglass": "spyglass", "emergency": "EMERG", "critical": "CRIT"}
_LOUD = {"emergency", "alert", "critical", "error"}
PLACEHOLDER = "Select a server to see its stderr and log messages."
# roles looked up once: `Qt.DisplayRole` costs tens of µs in PySide6 each time, and data() runs per row and role
_DISPLAY, _TOOLTIP = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole
_FOREGROUND, _USER = Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.UserRole


def format_entry(entry: LogEntry) -> str:
    stamp = time.strftime("%H:%M:%S", time.localtime(entry.wall)) + f".{int(entry.wall * 1000) % 1000:03d}"
    level = _LABELS.get(entry.level, entry.level.upper() if entry.level else "?")
    who = f" [{entry.logger}]" if entry.logger and entry.logger != "spyglass" else ""
    text = visible_block(entry.text, 8000).replace("\n", "\n    ")
    return f"{stamp} {level:<8}{who} {text}"


class LogModel(QAbstractListModel):
    """The entries shown, oldest first, at most `MAX_LINES`; display strings made on demand."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[LogEntry] = []
        self.loud = QBrush(QColor(design.pair("log-error")[0]))
        self.warn = QBrush(QColor(design.pair("log-warning")[0]))

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = _DISPLAY) -> Any:
        if role != _DISPLAY and role != _FOREGROUND and role != _TOOLTIP and role != _USER:
            return None
        row = index.row()
        if not 0 <= row < len(self.rows):
            return None
        entry = self.rows[row]
        if role == _DISPLAY:
            return format_entry(entry).replace("\n    ", " ⏎ ")
        if role == _FOREGROUND:  # the level is also written out: never meaning by colour alone
            return self.loud if entry.level in _LOUD else self.warn if entry.level == "warning" else None
        if role == _TOOLTIP:
            return format_entry(entry)[:4000]
        return entry

    def reset(self, entries: list[LogEntry]) -> None:
        self.beginResetModel()
        self.rows = entries[-MAX_LINES:]
        self.endResetModel()

    def extend(self, entries: list[LogEntry], follow: bool = True) -> None:
        """Append `entries`, forgetting the oldest rows beyond `MAX_LINES`. When the view `follow`s the newest
        rows, a full model shifts its rows' contents instead (one dataChanged: nothing is laid out again, only
        the rows on screen are painted); otherwise the oldest rows are removed and the new ones inserted, so a
        row someone selected or scrolled to keeps its entry."""
        if not entries:
            return
        room = MAX_LINES - len(self.rows)
        if room > 0:
            first = len(self.rows)
            taken = entries[:room]
            self.beginInsertRows(QModelIndex(), first, first + len(taken) - 1)
            self.rows.extend(taken)
            self.endInsertRows()
            entries = entries[room:]
            if not entries:
                return
        if follow:
            self.rows = (self.rows + entries)[-MAX_LINES:]
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.rows) - 1, 0))
            return
        extra = min(len(entries), len(self.rows))
        self.beginRemoveRows(QModelIndex(), 0, extra - 1)
        del self.rows[:extra]
        self.endRemoveRows()
        entries = entries[-MAX_LINES:]
        first = len(self.rows)
        self.beginInsertRows(QModelIndex(), first, first + len(entries) - 1)
        self.rows.extend(entries)
        self.endInsertRows()


class LogPane(QTreeView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("serverLog")
        self.log_model = LogModel(self)
        self.setModel(self.log_model)
        # a flat list of one column with fixed row heights: a tree view lays out only what is on screen (a list
        # view lays out every row again when rows are added)
        self.setRootIsDecorated(False)
        self.setItemsExpandable(False)
        self.setUniformRowHeights(True)
        self.setHeaderHidden(True)
        self.header().setStretchLastSection(True)
        self.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self.setTextElideMode(Qt.ElideRight)
        self.setWordWrap(False)
        self.setAllColumnsShowFocus(True)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        font = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        font.setStyleHint(QFont.Monospace)
        self.setFont(font)
        self.setContextMenuPolicy(Qt.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.setAccessibleName("Server log")
        self.max_lines = MAX_LINES
        self._conn: Connection | None = None
        self._seen = 0  # the connection's log total already shown
        self.entry_filter = None  # LogEntry -> bool: the level/logger filter of the log controls (log_controls.py)
        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)

    def _passes(self, entries: Any) -> list[LogEntry]:
        keep = self.entry_filter
        return list(entries) if keep is None else [e for e in entries if keep(e)]

    def show_connection(self, conn: Connection | None) -> None:
        self._conn = conn
        if conn is None:
            self.log_model.reset([])
            self._timer.stop()
            return
        self.log_model.reset(self._passes(conn.session.log))
        self._seen = conn.session.log.total
        self.scrollToBottom()
        self._timer.start()

    def flush(self) -> None:
        """Show what the connection logged since the last flush (polled on a timer: a flood costs one insert
        per 250 ms, other lines show within 100 ms; a hidden pane catches up when shown)."""
        conn = self._conn
        if conn is None or conn.session.log.total == self._seen or not self.isVisible():
            return
        log = conn.session.log
        new = log.total - self._seen
        self._seen = log.total
        kept = min(new, len(log))
        # a flood: its lines are made on the log's first read after them (the newest it keeps, 5,000 at each flush)
        self._timer.setInterval(FLOOD_FLUSH_MS if new > kept else FLUSH_MS)
        entries = self._passes(itertools.islice(log.entries, len(log) - kept, None))
        if new > kept:
            entries.insert(0, LogEntry(time.time(), "spyglass", f"… {new - kept:,} earlier lines arrived too fast "
                                                                 f"to keep: the log keeps the newest {len(log):,} "
                                                                 "(every message is in the Traffic pane)"))
        if not entries:
            return
        bar = self.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 2
        self.log_model.extend(entries, follow=at_end and not self.selectionModel().hasSelection())
        if at_end:
            self.scrollToBottom()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self.flush()

    # ------------------------------------------------------------------ reading and copying
    def toPlainText(self) -> str:
        """Every row shown, as text (multi-line entries whole)."""
        return "\n".join(format_entry(e) for e in self.log_model.rows)

    def selected_text(self) -> str:
        rows = sorted(i.row() for i in self.selectionModel().selectedRows())
        return "\n".join(format_entry(self.log_model.rows[r]) for r in rows if r < len(self.log_model.rows))

    def keyPressEvent(self, event: Any) -> None:
        if event.matches(QKeySequence.Copy):
            QApplication.clipboard().setText(self.selected_text())
            return
        super().keyPressEvent(event)

    def _menu(self, pos: Any) -> None:
        menu = QMenu(self)
        copy = menu.addAction("Copy", lambda: QApplication.clipboard().setText(self.selected_text()))
        copy.setEnabled(self.selectionModel().hasSelection())
        menu.addAction("Copy all", lambda: QApplication.clipboard().setText(self.toPlainText()))
        menu.exec(self.viewport().mapToGlobal(pos))

    def paintEvent(self, event: Any) -> None:
        super().paintEvent(event)
        if self.log_model.rows:
            return
        painter = QPainter(self.viewport())
        painter.setPen(self.palette().placeholderText().color())
        painter.drawText(self.viewport().rect().adjusted(8, 6, -8, -6), Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap,
                         PLACEHOLDER)
