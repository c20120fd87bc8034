"""What *Replay against…* and *Compare with…* share: a dialog that runs one job on the qasync loop — a
Run button, Cancel, a busy bar and a status line — so the window never waits, and closing the dialog
cancels the job (which closes the server it started)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import shiboken6
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QDialog, QHBoxLayout, QProgressBar, QPushButton, QWidget

from ..base import theme
from ..base.layout import text_label
from ..base.tasks import spawn
from ..base.text import visible_block


class JobDialog(QDialog):
    """`prefix` names the widgets (`<prefix>Run`, `<prefix>Cancel`, `<prefix>Busy`, `<prefix>Status`)."""

    cancelled_text = "Cancelled."

    def __init__(self, prefix: str, run_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.task: asyncio.Future[Any] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.run_button = QPushButton(run_text, self)
        self.run_button.setObjectName(f"{prefix}Run")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setObjectName(f"{prefix}Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.busy = QProgressBar(self)
        self.busy.setObjectName(f"{prefix}Busy")
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(160)
        self.busy.hide()
        self.status = text_label("", self, name=f"{prefix}Status", role="muted")

    def job_bar(self) -> QHBoxLayout:
        """The row of Run, Cancel, the busy bar and the status, for the subclass's layout."""
        row = QHBoxLayout()
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.busy)
        row.addWidget(self.status, 1)
        return row

    def say(self, text: str, level: str = "muted") -> None:
        self.status.setText(visible_block(text, 3000))
        self.status.setStyleSheet(f"color: {theme.colour(level).name()};" if text else "")

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def can_run(self) -> bool:
        """Whether Run may be pressed when no job runs (the subclass knows what it needs)."""
        return True

    def run(self) -> asyncio.Future[Any] | None:  # the subclass checks its inputs, then calls `start`
        raise NotImplementedError

    def start(self, job: Coroutine[Any, Any, None], what: str) -> asyncio.Future[Any] | None:
        """Run `job` on the loop; `what` ("replay", "compare") names it in a failure."""
        self._set_busy(True)
        self.task = spawn(job, self._tasks, lambda exc: self.say(f"{what.capitalize()} failed: "
                                                                 f"{type(exc).__name__}: {exc}", "error"), what)
        if self.task is None:
            self._set_busy(False)
            self.say(f"Cannot {what}: no event loop runs.", "error")
        else:
            self.task.add_done_callback(self._ended)
        return self.task

    def _ended(self, task: asyncio.Future[Any]) -> None:
        if not shiboken6.isValid(self):  # closed (and deleted) while it ran: nobody to tell
            return
        self._set_busy(False)
        if task.cancelled():
            self.say(self.cancelled_text, "warning")

    def _set_busy(self, on: bool) -> None:
        self.busy.setVisible(on)
        self.cancel_button.setEnabled(on)
        self.run_button.setEnabled(not on and self.can_run())

    def cancel(self) -> None:
        if self.running and self.task is not None:
            self.task.cancel()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.cancel()
        super().closeEvent(event)

    def reject(self) -> None:
        self.cancel()
        super().reject()
