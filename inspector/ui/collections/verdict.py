"""A step's verdict (`collectionVerdict`): a line saying how it went, one row per expectation that did not
hold (what was expected, what came: `collectionMisses`), and the two sides in full (`collectionSides`):
what the step expects (for a snapshot step, the stored answer, its differences marked) on the left, the
answer that came on the right. *Accept as snapshot* (`collectionAcceptSnapshot`) keeps a drifted answer.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...collection.expect import short
from ...collection.load import Step
from ...collection.run import StepResult, without_meta
from ...recording.compare import MISSING, diff_values
from ..base import design, theme
from ..base.layout import plain_label
from ..base.text import visible
from ..recording.json_diff import DiffColumns

STATUS_COLOUR = {"passed": "connected", "failed": "error", "skipped": "muted", "running": "connecting"}
STATUS_MARK = {"passed": "✓", "failed": "✗", "skipped": "·", "running": "…"}


def answer_of(r: StepResult) -> Any:
    """What came: the result, or the JSON-RPC error (`_meta` left out, as the expectations ignore it)."""
    if r.error is not None:
        return {"error": r.error}
    return without_meta(r.result) if r.result is not None else MISSING


class VerdictView(QWidget):
    acceptSnapshot = Signal(object)  # StepResult

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("collectionVerdict")
        self.result: StepResult | None = None
        self.summary = plain_label(self, "collectionVerdictSummary", selectable=True, bold=True)
        self.accept_button = QPushButton("Accept as snapshot", self)
        self.accept_button.setObjectName("collectionAcceptSnapshot")
        self.accept_button.setToolTip("Keep this answer as the step's snapshot: the next runs compare with it")
        self.accept_button.clicked.connect(lambda: self.result is not None and self.acceptSnapshot.emit(self.result))
        self.accept_button.hide()
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.accept_button)
        self.misses = QTreeWidget(self)
        self.misses.setObjectName("collectionMisses")
        self.misses.setHeaderLabels(["Expectation", "Expected", "Came"])
        self.misses.setRootIsDecorated(False)
        self.misses.setUniformRowHeights(True)
        self.misses.setAlternatingRowColors(True)
        self.misses.setTextElideMode(Qt.ElideRight)
        self.misses.setMinimumHeight(36)  # a row or two; the sides below get the room
        header = self.misses.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.Stretch)
        header.setSectionResizeMode(2, QHeaderView.Stretch)
        self.sides = DiffColumns("collectionSides", ("Expected", "Came"), self)
        split = QSplitter(Qt.Vertical, self)
        split.setObjectName("collectionVerdictSplit")
        split.addWidget(self.misses)
        split.addWidget(self.sides)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("none", "xs", "none", "none"))
        lay.addLayout(top)
        lay.addWidget(split, 1)
        self.show_step(None, None)

    def show_step(self, step: Step | None, r: StepResult | None, snapshot: Any = MISSING) -> None:
        """`step`'s last verdict `r` (None: not run yet); `snapshot`: its stored answer, for a snapshot step."""
        self.result = r
        self.misses.clear()
        self.accept_button.hide()
        if step is None:
            self._say("Select a step to see its verdict.", "muted")
            self.sides.show_values(MISSING, MISSING, absent=("", ""))
            self.misses.hide()
            return
        expected: Any = snapshot if step.expect.get("snapshot") and snapshot is not MISSING else (
            step.expect or {"(nothing)": "no expectation: any answer passes, a tool error fails"})
        self.sides.set_titles("Stored answer (snapshot)" if expected is snapshot else "Expected", "Came")
        if r is None:
            self._say("Not run yet: Run step (or Run all) against the selected server.", "muted")
            self.sides.show_values(expected, MISSING, absent=("", "(not run yet)"))
            self.misses.hide()
            return
        came = answer_of(r)
        if r.status == "passed":
            note = f" · snapshot {r.snapshot}" if r.snapshot else ""
            self._say(f"✓ Passed in {r.ms:.0f} ms{note}", "connected")
        elif r.status == "failed":
            n = len(r.misses)
            what = r.reason or f"{n} expectation{'s' if n != 1 else ''} did not hold"
            self._say(f"✗ Failed after {r.ms:.0f} ms: {visible(what, 300)}", "error")
        else:
            self._say("· Not run", "muted")
        for m in r.misses:
            wanted = short(m.expected, 300) if m.detail is None else "the stored answer"
            got = short(m.actual, 300) if m.detail is None else visible(m.detail, 300)
            item = QTreeWidgetItem(self.misses, [m.what, wanted, got])
            item.setForeground(0, theme.colour("error"))
            for col in range(3):
                item.setToolTip(col, visible(item.text(col), 2000))
        self.misses.setVisible(bool(r.misses))
        changes = [c.as_json() for c in diff_values(expected, came)] if expected is snapshot else []
        self.sides.show_values(expected, came, changes, absent=("", "(no answer: " + (r.reason or "not run") + ")"))
        self.accept_button.setVisible(bool(step.expect.get("snapshot")) and r.snapshot == "drifted")

    def _say(self, text: str, role: str) -> None:
        self.summary.setText(text)
        self.summary.setStyleSheet(f"color: {theme.colour(role).name()};")
