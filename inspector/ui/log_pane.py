"""`serverLog`: stderr lines and notifications/message of the selected server, with level.

A QPlainTextEdit with a maximum block count (never an unbounded log); new lines
are batched and appended on a timer so a flood of log notifications costs one
append per 100 ms.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtGui import QFont, QFontDatabase, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from ._text import visible_block
from .connection import Connection, LogEntry

MAX_LINES = 5000
FLUSH_MS = 100
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
        self._pending: list[str] = []
        self._timer = QTimer(self)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)

    def show_connection(self, conn: Connection | None) -> None:
        if self._conn is not None:
            try:
                self._conn.logAppended.disconnect(self._appended)
            except (RuntimeError, TypeError):
                pass
        self._conn = conn
        self._pending.clear()
        if conn is None:
            self.clear()
            self._timer.stop()
            return
        self.setPlainText("\n".join(format_entry(e) for e in list(conn.log)[-MAX_LINES:]))
        self.moveCursor(QTextCursor.End)
        conn.logAppended.connect(self._appended)
        self._timer.start()

    def _appended(self, entry: LogEntry) -> None:
        self._pending.append(format_entry(entry))
        if len(self._pending) > MAX_LINES:
            del self._pending[: len(self._pending) - MAX_LINES]

    def flush(self) -> None:
        if not self._pending:
            return
        lines, self._pending = self._pending, []
        bar = self.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 2
        self.appendPlainText("\n".join(lines))
        if at_end:
            bar.setValue(bar.maximum())
