"""The log dock's controls: the server's log level (`logLevel`) and the pane's level and logger filters.

`logLevel` sends `logging/setLevel` in the legacy era and sets the `_meta` log
level of every request in the 2026-07-28 era. The filters only change what
`serverLog` shows: MCP levels at or above the chosen one (stderr lines and
Spyglass's own notes always pass) and a logger name containing the text.
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from ... import errors as E
from ...protocol.versions import LOG_LEVELS
from ...session import LogEntry
from ..base import design
from ..base.fit import overflow_row
from .connection import Connection

_RANK = {level: i for i, level in enumerate(LOG_LEVELS)}


def entry_passes(entry: LogEntry, min_level: str | None, logger: str) -> bool:
    if min_level and entry.level in _RANK and _RANK[entry.level] < _RANK.get(min_level, 0):
        return False
    if logger:
        name = entry.logger or ("stderr" if entry.level == "stderr" else "")
        return logger.casefold() in name.casefold()
    return True


class LogControls(QWidget):
    """A bar above `serverLog`; wraps the pane so the dock shows both."""

    def __init__(self, pane: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("logPanel")
        self.pane = pane
        self.conn: Connection | None = None
        self.level = QComboBox(self)
        self.level.setObjectName("logLevel")
        self.level.addItem("server default", None)
        for level in LOG_LEVELS:
            self.level.addItem(level, level)
        self.level.setToolTip("The level the server logs at: logging/setLevel (2024-11-05 … 2025-11-25), or the "
                              "_meta log level sent with every request (2026-07-28)")
        self.level.activated.connect(self._level_chosen)
        self.show_level = QComboBox(self)
        self.show_level.setObjectName("logFilterLevel")
        self.show_level.addItem("all levels", None)
        for level in LOG_LEVELS:
            self.show_level.addItem(f"{level} and above", level)
        self.show_level.setToolTip("Show log messages at this level or above "
                                   "(stderr lines and Spyglass's notes always show)")
        self.logger = QLineEdit(self)
        self.logger.setObjectName("logFilterLogger")
        self.logger.setPlaceholderText("Filter by logger")
        self.logger.setClearButtonEnabled(True)
        self.logger.setMaximumWidth(220)
        self.note = QLabel(self)
        self.note.setObjectName("logLevelNote")
        self.show_level.currentIndexChanged.connect(self._filter)
        self.logger.textChanged.connect(self._filter)
        bar = QHBoxLayout()
        bar.setContentsMargins(design.margins("xs", "hair", "xs", "none"))
        bar.addWidget(overflow_row(self, "logToolbar", (  # what has no room goes into its » menu
            QLabel("Server log level:", self), self.level, self.note, None, QLabel("Show:", self),
            self.show_level, self.logger)))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(design.space("hair"))
        lay.addLayout(bar)
        lay.addWidget(pane, 1)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sync()

    def _filter(self, *_: object) -> None:
        min_level, logger = self.show_level.currentData(), self.logger.text().strip()
        self.pane.entry_filter = None if not (min_level or logger) else \
            (lambda e: entry_passes(e, min_level, logger))
        self.pane.show_connection(self.conn)

    def set_connection(self, conn: Connection | None) -> None:
        if self.conn is not None and self.conn is not conn:
            for sig in (self.conn.healthChanged, self.conn.statusChanged):
                try:
                    sig.disconnect(self._sync)
                except (RuntimeError, TypeError):
                    pass
        if conn is not None and conn is not self.conn:
            conn.healthChanged.connect(self._sync)
            conn.statusChanged.connect(self._sync)
        self.conn = conn
        self._sync()

    def _sync(self) -> None:
        conn = self.conn
        level = conn.session.health.log_level if conn is not None else None
        self.level.setCurrentIndex(max(0, self.level.findData(level)) if level else 0)
        live = conn is not None and conn.session.client is not None and conn.session.hello is not None
        self.level.setEnabled(live)
        caps = conn.session.hello.capabilities if live else None
        self.note.setText("(the server does not declare logging)"
                          if isinstance(caps, dict) and "logging" not in caps else "")

    def _level_chosen(self, index: int) -> None:
        level = self.level.itemData(index)
        conn = self.conn
        if not level or conn is None:
            return
        self.set_level(level)

    def set_level(self, level: str) -> asyncio.Task[Any] | None:
        conn = self.conn
        if conn is None:
            return None

        async def apply() -> None:
            try:
                await conn.session.health.set_log_level(level)
            except E.SpyglassError as exc:
                conn.session.log.note(f"setting the log level to {level} failed: {exc.message}", level="error")
            self._sync()
        try:
            task = asyncio.ensure_future(apply())
        except RuntimeError:
            return None
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
