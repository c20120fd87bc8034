"""*Replay against…* (`replayDialog`): a recorded server's requests sent again to a server of the user's
choice — one of the main window's, the one the session recorded, or a command or URL typed in — each
answer compared with the recorded one (`inspector.recording.replay`), the result side by side
(`replayResults`): the steps with ✓ / ✗, and for the selected one the recorded and the new answer with
the changed paths marked (`replayChanges`).

The replay runs as a task on the window's loop: the window stays usable, Cancel stops it (the server it
started is closed either way), and a server that cannot start ends in a message here, never a crash.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ... import errors as E
from ...recording.compare import MISSING, valid_pointer
from ...recording.replay import RecordedAnswers, ReplayReport, Step, replay, requests_of
from ...recording.surface import ServerSurface
from ...session import ServerSession
from ..base import theme
from ..base.layout import text_label
from ..base.text import visible
from .job import JobDialog
from .json_diff import ChangeList, DiffColumns
from .sides import LiveServer, masked_parts, recorded_server, session_options, typed_server

MARKS = {"same": ("✓", "connected"), "different": ("✗", "error"), "failed": ("!", "error"),
         "skipped": ("·", "muted")}
TYPED = "typed"


async def run_replay(surface: ServerSurface, server: LiveServer, ignore: list[str],
                     timeout: float | None) -> tuple[ReplayReport, list[str]]:
    """Connect to `server` on a session of its own, replay `surface`'s requests, close; the report and the
    questions the recording had no answer for."""
    answers = RecordedAnswers(surface)
    session = ServerSession(server.spec, options=session_options(server, timeout), answerer=answers)
    session.roots = answers.roots
    try:
        await session.open()
        report = await replay(surface, session, ignore=ignore, timeout=timeout, target=server.describe)
    except E.SpyglassError as exc:
        tail = "\n".join(session.stderr_tail[-5:])
        raise E.ConnectError(exc.message + (f"\nIts last words on stderr:\n{tail}" if tail else "")) from None
    finally:
        await session.close()
    return report, list(answers.declined)


def step_values(step: Step) -> tuple[Any, Any, tuple[str, str]]:
    """What each column shows for a step: the recorded answer and the new one (MISSING with a note)."""
    x = step.recorded
    if step.status == "skipped":
        note = f"(not replayed: {step.note})"
        return MISSING, MISSING, (note, note)
    recorded: Any = ({"error": x.error} if x.error is not None else x.result) if x.answer is not None else MISSING
    if step.status == "failed":
        replayed: Any = MISSING
    else:
        replayed = {"error": step.error} if step.error is not None else step.result
    return recorded, replayed, ("(no answer in the recording)", f"(no answer: {step.note or 'failed'})")


class ReplayResults(QSplitter):
    """The steps on the left; the selected step's two answers and its changes on the right."""

    ignorePath = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Horizontal, parent)
        self.setObjectName("replayResults")
        self.report: ReplayReport | None = None
        left = QWidget(self)
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        self.summary = text_label("", left, name="replaySummary")
        self.steps = QTreeWidget(left)
        self.steps.setObjectName("replaySteps")
        self.steps.setHeaderLabels(["", "#", "Request", "Note"])
        self.steps.setRootIsDecorated(False)
        self.steps.setUniformRowHeights(True)
        self.steps.setAlternatingRowColors(True)
        header = self.steps.header()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.Stretch)
        header.setStretchLastSection(False)
        self.steps.currentItemChanged.connect(lambda item, _p: self.show_step(
            item.data(0, Qt.UserRole) if item is not None else None))
        ll.addWidget(self.summary)
        ll.addWidget(self.steps, 1)
        right = QSplitter(Qt.Vertical, self)
        self.columns = DiffColumns("replayDiff", ("Recorded answer", "Replayed answer"), right)
        changes_box = QWidget(right)
        cl = QVBoxLayout(changes_box)
        cl.setContentsMargins(0, 0, 0, 0)
        self.changes = ChangeList("replayChanges", ("Recorded", "Replayed"), changes_box)
        self.changes.changeSelected.connect(lambda c: c is not None and self.columns.reveal(c["path"]))
        row = QHBoxLayout()
        self.step_note = text_label("", changes_box, name="replayStepNote", role="muted")
        self.ignore_button = QPushButton("Ignore this path", changes_box)
        self.ignore_button.setObjectName("replayIgnorePath")
        self.ignore_button.setToolTip("Add the selected change's path to the pointers not compared")
        self.ignore_button.clicked.connect(self._ignore_selected)
        row.addWidget(self.step_note, 1)
        row.addWidget(self.ignore_button)
        cl.addLayout(row)
        cl.addWidget(self.changes, 1)
        right.addWidget(self.columns)
        right.addWidget(changes_box)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 1)
        right.setChildrenCollapsible(False)
        self.addWidget(left)
        self.addWidget(right)
        self.setStretchFactor(0, 2)
        self.setStretchFactor(1, 5)
        self.setSizes([380, 800])  # room for the request names; the answers take the rest
        self.setChildrenCollapsible(False)

    def _ignore_selected(self) -> None:
        item = self.changes.currentItem()
        change = item.data(0, Qt.UserRole) if item is not None else None
        if change is not None and change["path"]:
            self.ignorePath.emit(change["path"])

    def show_report(self, report: ReplayReport) -> None:
        self.report = report
        self.steps.clear()
        c = report.counts()
        counts = ", ".join(f"{c[k]} {k}" for k in ("same", "different", "failed", "skipped") if c[k])
        self.summary.setText(f"{len(report.steps)} requests: {counts or 'none'} ({report.seconds:.2f} s).")
        self.summary.setToolTip(f"Replayed against {visible(report.target, 300)} "
                                f"({report.revision or 'unknown revision'})")
        self.summary.setStyleSheet(f"color: {theme.colour('error' if report.differs else 'connected').name()};")
        first = None
        for step in report.steps:
            mark, colour = MARKS[step.status]
            item = QTreeWidgetItem(self.steps, [mark, str(step.index), visible(step.label, 200),
                                                visible(step.note or (f"{len(step.changes)} change"
                                                                      f"{'s' if len(step.changes) != 1 else ''}"
                                                                      if step.changes else ""), 200)])
            item.setForeground(0, theme.colour(colour))
            item.setTextAlignment(0, Qt.AlignCenter)
            item.setToolTip(0, step.status)
            item.setData(0, Qt.UserRole, step)
            if first is None and step.status in ("different", "failed"):
                first = item
        if not report.steps:
            self.show_step(None)
            self.step_note.setText("The recording has no requests to replay (only the handshake and listings "
                                   "of its own).")
            return
        self.steps.setCurrentItem(first or self.steps.topLevelItem(0))

    def select(self, label: str) -> bool:
        """Show the first step named `label` (`tools/call echo`)."""
        for i in range(self.steps.topLevelItemCount()):
            item = self.steps.topLevelItem(i)
            if item.data(0, Qt.UserRole).label == label:
                self.steps.setCurrentItem(item)
                return True
        return False

    def show_step(self, step: Step | None) -> None:
        if step is None:
            self.columns.show_values(MISSING, MISSING, absent=("", ""))
            self.changes.set_changes([], empty="")
            self.step_note.setText("")
            self.ignore_button.setEnabled(False)
            return
        recorded, replayed, absent = step_values(step)
        changes = [c.as_json() for c in step.changes]
        self.columns.show_values(recorded, replayed, changes, absent=absent)
        words = {"same": "Same answer as recorded.", "different": f"{len(changes)} difference"
                 f"{'s' if len(changes) != 1 else ''}: marked in both answers.",
                 "failed": f"Failed: {step.note}", "skipped": f"Not replayed: {step.note}"}[step.status]
        self.step_note.setText(visible(f"{step.label} — {words}", 400))
        self.changes.set_changes(changes, empty="No differences." if step.status == "same" else "")
        self.ignore_button.setEnabled(bool(changes))
        if changes:
            self.changes.setCurrentItem(self.changes.topLevelItem(0))


class ReplayDialog(JobDialog):
    """Pick a server and what not to compare, run, and read the result."""

    cancelled_text = "Cancelled: the server was closed."  # also before the replay began: if started, it is

    def __init__(self, surface: ServerSurface, live: Callable[[], list[LiveServer]],
                 parent: QWidget | None = None) -> None:
        super().__init__("replay", "Replay", parent)
        self.setObjectName("replayDialog")
        self.setWindowTitle(f"Replay {visible(surface.name, 60)}")
        self.setWindowFlag(Qt.WindowMaximizeButtonHint, True)
        self.surface = surface
        self.report: ReplayReport | None = None
        self.declined: list[str] = []
        n = len(requests_of(surface))
        self.about = text_label(f"{visible(surface.name, 80)} as recorded ({surface.revision or 'unknown revision'})"
                                f": {n} request{'s' if n != 1 else ''} to send again, each answer compared with "
                                "the recorded one. The server's questions are answered as they were in the "
                                "recording.", self, name="replayAbout")
        self.target = QComboBox(self)
        self.target.setObjectName("replayTarget")
        self.target.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.target.setMinimumContentsLength(40)
        self.target.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.recorded = recorded_server(surface)
        if self.recorded is not None:
            self.target.addItem(f"As recorded: {visible(self.recorded.describe, 100)}", self.recorded)
        for server in live():
            self.target.addItem(f"{visible(server.name, 60)} (in the window): {visible(server.describe, 80)}", server)
        self.target.addItem("A command or URL…", TYPED)
        self.command = QLineEdit(self)
        self.command.setObjectName("replayCommand")
        self.command.setPlaceholderText("python server.py --new-build, or https://host/mcp")
        self.command.returnPressed.connect(self.run)
        self.ignore = QPlainTextEdit(self)
        self.ignore.setObjectName("replayIgnore")
        self.ignore.setPlaceholderText("One JSON pointer a line, e.g. /content/0/text (_meta, ids and timestamps "
                                       "are never compared)")
        self.ignore.setFixedHeight(self.ignore.fontMetrics().lineSpacing() * 3 + 12)
        self.timeout = QDoubleSpinBox(self)
        self.timeout.setObjectName("replayTimeout")
        self.timeout.setRange(1, 3600)
        self.timeout.setDecimals(0)
        self.timeout.setValue(60)
        self.timeout.setSuffix(" s")
        self.timeout.setToolTip("How long to wait for each answer")
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.ExpandingFieldsGrow)
        form.addRow("Replay against:", self.target)
        form.addRow("Command or URL:", self.command)
        form.addRow("Do not compare:", self.ignore)
        form.addRow("Timeout per request:", self.timeout)
        buttons = self.job_bar()
        self.results = ReplayResults(self)
        self.results.ignorePath.connect(self.add_ignore)
        self.results.hide()
        self.placeholder = text_label("The result appears here: every request with ✓ (same answer) or ✗ (different),"
                                      " and the two answers side by side.", self, name="replayPlaceholder",
                                      role="muted")
        lay = QVBoxLayout(self)
        lay.addWidget(self.about)
        lay.addLayout(form)
        lay.addLayout(buttons)
        self.placeholder.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        lay.addWidget(self.placeholder, 1)
        lay.addWidget(self.results, 1)
        self.target.currentIndexChanged.connect(self._target_changed)
        self._target_changed()
        self.resize(1180, 760)

    def _target_changed(self) -> None:
        typed = self.target.currentData() == TYPED
        self.command.setEnabled(typed)
        server = self.target.currentData()
        masked = masked_parts(server.spec) if server is self.recorded and self.recorded is not None else []
        if typed:
            self.command.setFocus()
        self.say(f"The recording masked {', '.join(masked)}: the server is started without their values."
                 if masked else "", "warning")

    def add_ignore(self, path: str) -> None:
        lines = [line for line in self.ignore.toPlainText().splitlines() if line.strip()]
        if path not in lines:
            lines.append(path)
        self.ignore.setPlainText("\n".join(lines))
        self.say(f"{path} is no longer compared: press Replay to run again.")

    def pointers(self) -> list[str] | None:
        """The ignore pointers, or None (and a message) when one is not a JSON pointer."""
        out = []
        for i, line in enumerate(self.ignore.toPlainText().splitlines(), 1):
            text = line.strip()
            if not text:
                continue
            if not valid_pointer(text):
                self.say(f"Line {i} of “Do not compare” is not a JSON pointer: {visible(text, 100)} (a pointer "
                         "starts with /, e.g. /content/0/text).", "error")
                return None
            out.append(text)
        return out

    def chosen(self) -> LiveServer | None:
        data = self.target.currentData()
        if data != TYPED:
            return data if isinstance(data, LiveServer) else None
        try:
            return typed_server(self.command.text())
        except E.UsageError as exc:
            self.say(f"Cannot replay: {exc.message}.", "error")
            return None

    def run(self) -> asyncio.Future[Any] | None:
        if self.running:
            return self.task
        ignore = self.pointers()
        server = self.chosen() if ignore is not None else None
        if ignore is None or server is None:
            return None
        self.say(f"Replaying against {visible(server.describe, 120)}…")
        return self.start(self._run(server, ignore), "replay")

    async def _run(self, server: LiveServer, ignore: list[str]) -> None:
        try:
            report, declined = await run_replay(self.surface, server, ignore, self.timeout.value())
        except E.SpyglassError as exc:
            self.say(f"Could not replay: {exc.message}", "error")  # the message names the server
            return
        self.report, self.declined = report, declined
        self.placeholder.hide()
        self.results.show()
        self.results.show_report(report)
        note = [f"The server asked {m}, which the recording has no answer for: declined." for m in declined]
        self.say(" ".join(note) if note else ("Done: every answer is the same." if not report.differs else
                                               "Done: some answers differ (✗)."),
                 "warning" if note or report.differs else "connected")
