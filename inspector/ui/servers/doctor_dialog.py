"""*Diagnose*: the connection doctor's checklist for one server, filled in live as each step runs (passed,
failed with its fix, not reached), copyable as text for a bug report, and — when the server's certificate
is self-signed or from a private CA — the action that trusts it for this server only."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...config import ServerSpec
from ...doctor import FAILED, NOT_REACHED, PASSED, DoctorOptions, Report, Step, diagnose, plan
from ...doctor.report import MARKS
from ...doctor.tls import TRUST_HOWTO, normal_pin
from ..base.tasks import spawn
from ..base.text import plain_tooltip, visible, visible_block

FINGERPRINT = "SHA-256 fingerprint: "


def trustable_fingerprint(report: Report) -> str | None:
    """The fingerprint to pin when the run failed at TLS for want of trust (self-signed, private CA), else
    None (an expired certificate, or one for another name, is not made right by trusting it)."""
    failed = report.failed
    if failed is None or failed.id != "tls" or TRUST_HOWTO not in (failed.fix or ""):
        return None
    for seen in failed.seen:
        if seen.startswith(FINGERPRINT):
            try:
                return normal_pin(seen.removeprefix(FINGERPRINT))
            except ValueError:
                return None
    return None


class DoctorDialog(QDialog):
    """`trust(fingerprint)`: the user asked to trust the certificate shown, for this server only."""

    trust = Signal(str)
    finished_run = Signal()

    def __init__(self, spec: ServerSpec, options: DoctorOptions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("doctorDialog")
        self.setWindowTitle(f"Diagnose {visible(spec.name, 80)}")
        self.spec = spec
        self.options = options
        self.report: Report = plan(spec)
        self.task: asyncio.Task[Any] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.target = QLabel(self)
        self.target.setObjectName("doctorTarget")
        self.target.setTextFormat(Qt.PlainText)
        self.target.setWordWrap(True)
        self.checklist = QTreeWidget(self)
        self.checklist.setObjectName("doctorChecklist")
        self.checklist.setHeaderLabels(["Step", "Outcome", "Time"])
        # one line a row: a long line shows its beginning and ends in "…" (whole in its tooltip, and in Copy as
        # text); wrapped, it was cut to a row one line high, and a fingerprint showed as "SHA-256 fingerprint: …"
        self.checklist.setWordWrap(False)
        self.checklist.setTextElideMode(Qt.ElideRight)
        self.result = QLabel(self)
        self.result.setObjectName("doctorResult")
        self.result.setTextFormat(Qt.PlainText)
        self.result.setWordWrap(True)
        self.run_button = QPushButton("Run again", self)
        self.run_button.setObjectName("doctorRunButton")
        self.run_button.clicked.connect(self.start)
        self.copy_button = QPushButton("Copy as text", self)
        self.copy_button.setObjectName("doctorCopyButton")
        self.copy_button.setToolTip("Copy the checklist, as the command line prints it, for a bug report")
        self.copy_button.clicked.connect(self.copy)
        self.trust_button = QPushButton("Trust this certificate", self)
        self.trust_button.setObjectName("doctorTrustButton")
        self.trust_button.setToolTip("Trust the certificate this server shows now, for this server only (pinned by "
                                     "its SHA-256 fingerprint and kept in the catalog)")
        self.trust_button.clicked.connect(self._trust)
        self.trust_button.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.Close, self)
        buttons.setObjectName("doctorButtons")
        buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(self.trust_button)
        row.addStretch(1)
        row.addWidget(self.copy_button)
        row.addWidget(self.run_button)
        row.addWidget(buttons)
        lay = QVBoxLayout(self)
        lay.addWidget(self.target)
        lay.addWidget(self.checklist, 1)
        lay.addWidget(self.result)
        lay.addLayout(row)
        fm = self.fontMetrics()
        self.resize(fm.averageCharWidth() * 120, fm.height() * 32)
        self._fill()

    # -- running ---------------------------------------------------------------------------------
    def start(self) -> None:
        if self.task is not None and not self.task.done():
            return
        self.report = plan(self.spec)
        self._fill()
        self.run_button.setEnabled(False)
        self.trust_button.hide()
        self.result.setText("Running…")
        self.task = spawn(self._run(), self._tasks, self._failed, "diagnose")

    async def _run(self) -> None:
        await diagnose(self.spec, self.options, on_step=self._on_step, report=self.report)
        self._done()

    def _failed(self, exc: BaseException) -> None:
        self.result.setText(f"The doctor itself failed: {type(exc).__name__}: {exc}")
        self.run_button.setEnabled(True)

    def _done(self) -> None:
        for step in self.report.steps:
            self._show(step)
        failed = self.report.failed
        if failed is not None:
            self.result.setText(visible(f"Failed at “{failed.title}”: {failed.fix or ''}", 2000))
        else:
            self.result.setText("Connected: every step passed." if self.report.connected else "Not connected.")
        self.trust_button.setVisible(trustable_fingerprint(self.report) is not None)
        self.run_button.setEnabled(True)
        self.finished_run.emit()

    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def reject(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()  # every wait of the doctor is bounded; closing ends it at once
        super().reject()

    # -- the checklist ---------------------------------------------------------------------------
    def _fill(self) -> None:
        self.target.setText(visible(f"{self.report.target} ({self.report.transport})", 500))
        self.checklist.clear()
        self.items: dict[str, QTreeWidgetItem] = {}
        for step in self.report.steps:
            item = QTreeWidgetItem(self.checklist)
            item.setData(0, Qt.UserRole, step.id)
            self.items[step.id] = item
            self._show(step)
        self.checklist.resizeColumnToContents(0)

    def _on_step(self, step: Step) -> None:
        self._show(step, running=step.ms is None)

    def _show(self, step: Step, running: bool = False) -> None:
        item = self.items[step.id]
        outcome = "running…" if running else step.outcome
        item.setText(0, f"{'…' if running else MARKS[step.outcome]} {step.title}")
        item.setText(1, outcome)
        item.setText(2, f"{step.ms:.0f} ms" if step.ms is not None and step.outcome != NOT_REACHED else "")
        font = QFont(item.font(0))
        font.setBold(step.outcome == FAILED)
        item.setFont(0, font)
        item.setToolTip(1, {PASSED: "passed", FAILED: "failed: see the fix below"}.get(step.outcome, step.outcome))
        item.takeChildren()
        for seen in step.seen:
            child = QTreeWidgetItem(item, [visible_block(seen, 4000)])
            child.setFirstColumnSpanned(True)
            child.setToolTip(0, plain_tooltip(seen))  # a long line is elided in the row: whole here
        if step.fix:
            fix = QTreeWidgetItem(item, [visible_block(f"Fix: {step.fix}", 4000)])
            fix.setFirstColumnSpanned(True)
            fix.setToolTip(0, plain_tooltip(step.fix))
            bold = QFont(fix.font(0))
            bold.setBold(True)
            fix.setFont(0, bold)
        item.setExpanded(step.outcome == FAILED)

    def text(self) -> str:
        return self.report.as_text()

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())

    def _trust(self) -> None:
        pin = trustable_fingerprint(self.report)
        if pin is not None:
            self.trust.emit(pin)
