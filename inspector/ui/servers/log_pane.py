"""`serverLog`: stderr lines and notifications/message of the selected server, with level.

A QPlainTextEdit with a maximum block count (never an unbounded log); new lines
are batched and appended on a timer so a flood of log notifications costs one
append per 100 ms.
"""

from __future__ import annotations

import itertools
import time

from PySide6.QtCore import QTimer
from PySide6.QtGui import QFont, QFontDatabase, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from ...session import LogEntry
from ..base.text import visible_block
from .connection import Connection

MAX_LINES = 5000
FLUSH_MS = 100
FLOOD_LINES = 500  # at most this many new lines per flush; a flood shows its tail
_LABELS = {"stderr": "stderr", "spyglass": "spyglass", "emergency": "EMERG", "critical": "CRIT"}


def format_entry(entry: LogEntry) -> str:
    stamp = time.strftime("%H:%M:%S", time.localtime(entry.wall)) + f".{int(entry.wall * 1000) % 1000:03d}"
    level = _LABELS.get(entry.level, entry.level.upper() if entry.level else "?")
    who = f" [{entry.logger}]" if entry.logger and entry.logger != "spyglass" else ""
    text = visible_block(entry.text, 8000).replace("\n", "\n    ")
    return f"{stamp} {level:<8}{who} {text}"


class LogPane(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("serverLog")
        self.setReadOnly(True)
        self.setMaximumBlockCount(MAX_LINES)
        self.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.setUndoRedoEnabled(False)
        font = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        font.setStyleHint(QFont.Monospace)
        self.setFont(font)
        self.setPlaceholderText("Select a server to see its stderr and log messages.")
        self._conn: Connection | None = None
        self._seen = 0  # the connection's log_total already shown
        self.entry_filter = None  # LogEntry -> bool: the level/logger filter of the log controls (log_controls.py)
        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)

    def show_connection(self, conn: Connection | None) -> None:
        self._conn = conn
        if conn is None:
            self.clear()
            self._timer.stop()
            return
        self.setPlainText("\n".join(format_entry(e) for e in list(conn.session.log)[-MAX_LINES:]
                                    if self.entry_filter is None or self.entry_filter(e)))
        self._seen = conn.session.log.total
        self.moveCursor(QTextCursor.End)
        self._timer.start()

    def flush(self) -> None:
        """Show what the connection logged since the last flush (polled on a
        timer: a flood costs one append per 100 ms, and lines beyond what the
        view keeps are never formatted)."""
        conn = self._conn
        if conn is None or conn.session.log.total == self._seen or not self.isVisible():
            return  # a hidden pane catches up when shown (showEvent)
        new = conn.session.log.total - self._seen
        self._seen = conn.session.log.total
        shown = min(new, len(conn.session.log), FLOOD_LINES)
        entries = list(itertools.islice(reversed(conn.session.log), shown))[::-1]
        lines = [format_entry(e) for e in entries if self.entry_filter is None or self.entry_filter(e)]
        if new > shown:
            lines.insert(0, f"… {new - shown:,} earlier lines not shown here: more than {FLOOD_LINES} arrived "
                            "at once (every message is in the Traffic pane)")
        if not lines:
            return
        bar = self.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 2
        self.appendPlainText("\n".join(lines))
        if at_end:
            bar.setValue(bar.maximum())

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.flush()
