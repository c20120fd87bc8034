"""`toolChoiceView`: which tool does a model pick? A list of plain requests (`toolChoiceRequests`), each
with the tool expected (or none), asked N times (`toolChoiceRuns`) of the chosen model
(`toolChoiceModel`) with the selected server's current tool list; `toolChoiceRun` fills
`toolChoiceTable` — for each request, which tool was picked how often, the arguments most picks chose,
and whether the model was right, wrong or hesitant. A tool's description can be edited in place
(`toolChoiceDescription`, *Use this description*): a local override, never sent to the server, offered to
the model on the next run. *Copy as collection steps* gives the requests as `ask` steps for
`spyglass test`."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...model import ModelError
from ...model.choice import NONE, Case, CaseResult, run_cases
from ...model.hosted import host_tool_specs
from ...session import Status
from ..base import theme
from ..base.host_picker import HostPicker
from ..base.layout import text_label
from ..base.text import visible, visible_block
from .connections import ModelBook
from .view import ModelPicker

log = logging.getLogger("spyglass.model")
STARTERS = [("What's the weather in Paris?", ""), ("Say hello.", NONE)]
SETTING = "toolChoice"  # + "/<server name>": that server's requests, as JSON
VERDICT_WORDS = {"right": "✓ right", "wrong": "✗ wrong", "hesitant": "? hesitant", "failed": "⚠ failed"}
VERDICT_COLOURS = {"right": "read-only", "wrong": "error", "hesitant": "warning", "failed": "error"}


def pick_lines(result: CaseResult) -> str:
    """Each ask's answer, one a line (the Picked cell's tooltip): the tool and its arguments, or what the
    model said instead, or why the ask failed; and what was wrong with the arguments."""
    lines = []
    for i, p in enumerate(result.picks, 1):
        if p.error is not None:
            said = f"failed: {p.error}"
        elif p.tool is None:
            said = f"no tool; it said: {p.text[:200] or '(nothing)'}"
        else:
            args = json.dumps(p.arguments, ensure_ascii=False) if p.arguments is not None else p.raw_arguments
            said = f"{p.tool} {args[:200]}" + (f"  ⚠ {'; '.join(p.problems)[:200]}" if p.problems else "")
        lines.append(f"{i}. {said}")
    return "\n".join(lines)


class ToolChoiceView(QWidget):
    def __init__(self, book: ModelBook, connection: Any, parent: QWidget | None = None, settings: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolChoiceView")
        self.book = book
        self.connection = connection  # () -> the selected server's Connection, or None
        self.settings = settings  # where each server's requests are kept (by its name), between runs and starts
        self._shown: str | None = None  # the server whose requests are listed
        self.overrides: dict[str, dict[str, str]] = {}  # server id -> tool -> the description to offer instead
        self.results: list[CaseResult] = []
        self.job: asyncio.Future[Any] | None = None
        self._stopping = False
        self.model = ModelPicker(book, "toolChoiceModel", self)
        self.runs = QSpinBox(self)
        self.runs.setObjectName("toolChoiceRuns")
        self.runs.setRange(1, 50)
        self.runs.setValue(3)
        self.runs.setSuffix(" × each")
        self.runs.setToolTip("How many times each request is asked (models do not always choose alike)")
        self.run_button = QPushButton("Run", self)
        self.run_button.setObjectName("toolChoiceRun")
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setObjectName("toolChoiceStop")
        self.stop_button.setEnabled(False)
        self.status = text_label("", self, name="toolChoiceStatus", role="muted")
        self.requests = QTableWidget(0, 2, self)
        self.requests.setObjectName("toolChoiceRequests")
        self.requests.setHorizontalHeaderLabels(["Request (in plain words)", "Expected tool"])
        self.requests.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.requests.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self.requests.verticalHeader().hide()
        self.add_button = QPushButton("Add request", self)
        self.add_button.setObjectName("toolChoiceAdd")
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setObjectName("toolChoiceRemove")
        self.copy_button = QPushButton("Copy as collection steps", self)
        self.copy_button.setObjectName("toolChoiceCopySteps")
        self.copy_button.setToolTip("The requests as ask steps of a collection, for spyglass test --model-url …")
        self.tool = QComboBox(self)
        self.tool.setObjectName("toolChoiceTool")
        self.description = QPlainTextEdit(self)
        self.description.setObjectName("toolChoiceDescription")
        self.description.setMaximumHeight(80)
        self.override_button = QPushButton("Use this description", self)
        self.override_button.setObjectName("toolChoiceOverride")
        self.override_button.setToolTip("Offer the model this description instead of the server's (never sent to "
                                        "the server); run again to compare")
        self.reset_button = QPushButton("Server's description", self)
        self.reset_button.setObjectName("toolChoiceReset")
        self.override_note = text_label("", self, name="toolChoiceOverrideNote", role="muted")
        self.table = QTableWidget(0, 5, self)
        self.table.setObjectName("toolChoiceTable")
        self.table.setHorizontalHeaderLabels(["Request", "Expected", "Picked (times)", "Arguments", "Verdict"])
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.Stretch)
        for col in (1, 2, 4):
            header.setSectionResizeMode(col, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.Stretch)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setWordWrap(True)
        # layout
        top = QHBoxLayout()
        top.addWidget(QLabel("Model:", self))
        top.addWidget(self.model, 1)
        self.host = HostPicker("toolChoiceHost", self)
        top.addWidget(self.host)
        top.addWidget(QLabel("Ask:", self))
        top.addWidget(self.runs)
        top.addWidget(self.run_button)
        top.addWidget(self.stop_button)
        left = QWidget(self)
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.requests, 1)
        row = QHBoxLayout()
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        row.addStretch(1)
        row.addWidget(self.copy_button)
        ll.addLayout(row)
        right = QWidget(self)
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(QLabel("A tool's description, as the model reads it:", right))
        rl.addWidget(self.tool)
        rl.addWidget(self.description, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.override_button)
        buttons.addWidget(self.reset_button)
        buttons.addStretch(1)
        rl.addLayout(buttons)
        rl.addWidget(self.override_note)
        upper = QSplitter(Qt.Horizontal, self)
        upper.addWidget(left)
        upper.addWidget(right)
        upper.setStretchFactor(0, 3)
        upper.setStretchFactor(1, 2)
        split = QSplitter(Qt.Vertical, self)
        split.addWidget(upper)
        split.addWidget(self.table)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(split, 1)
        lay.addWidget(self.status)
        self.add_button.clicked.connect(lambda: self.add_request("", ""))
        self.remove_button.clicked.connect(self.remove_request)
        self.copy_button.clicked.connect(self.copy_steps)
        self.run_button.clicked.connect(self.run)
        self.stop_button.clicked.connect(self.stop)
        self.tool.currentIndexChanged.connect(lambda _i: self._show_description())
        self.override_button.clicked.connect(self.override)
        self.reset_button.clicked.connect(self.reset_override)
        for text, expected in STARTERS:
            self.add_request(text, expected)
        self.show_connection()

    # ------------------------------------------------------------------ the server's tools
    def _conn(self) -> Any:
        conn = self.connection()
        return conn if conn is not None and conn.session.status == Status.CONNECTED else None

    def server_tools(self) -> list[dict[str, Any]]:
        conn = self._conn()
        return list(conn.session.tools.items) if conn is not None else []

    def show_connection(self) -> None:
        """The selected server changed, or its tools did: the tool choices follow."""
        conn = self.connection()
        if conn is not None and conn.name != self._shown:
            self._shown = conn.name
            self.load_cases(conn.name)
        tools = self.server_tools()
        names = [str(t.get("name")) for t in tools if isinstance(t.get("name"), str)]
        current = self.tool.currentText()
        self.tool.blockSignals(True)
        self.tool.clear()
        self.tool.addItems(names)
        self.tool.setCurrentIndex(max(0, self.tool.findText(current)))
        self.tool.blockSignals(False)
        for r in range(self.requests.rowCount()):
            box = self.requests.cellWidget(r, 1)
            if isinstance(box, QComboBox):
                self._fill_expected(box, names, box.currentText())
        self._show_description()
        if conn is None:
            self.status.setText("Select a server: its tools are what the model chooses among.")
        elif self._conn() is None:
            self.status.setText(f"{conn.name} is not connected: connect it to offer its tools.")
        elif not self.job or self.job.done():
            self.status.setText(f"{len(names)} tool{'s' if len(names) != 1 else ''} of {conn.name} are offered.")

    @staticmethod
    def _fill_expected(box: QComboBox, names: list[str], current: str) -> None:
        box.blockSignals(True)
        box.clear()
        box.addItems([NONE, *names])
        if current and box.findText(current) < 0:
            box.addItem(current)
        box.setCurrentIndex(max(0, box.findText(current or (names[0] if names else NONE))))
        box.blockSignals(False)

    # ------------------------------------------------------------------ the requests
    def add_request(self, text: str, expected: str) -> None:
        r = self.requests.rowCount()
        self.requests.insertRow(r)
        self.requests.setItem(r, 0, QTableWidgetItem(text))
        box = QComboBox(self.requests)
        box.setObjectName(f"toolChoiceExpected:{r}")
        names = [str(t.get("name")) for t in self.server_tools() if isinstance(t.get("name"), str)]
        self._fill_expected(box, names, expected)
        self.requests.setCellWidget(r, 1, box)
        if not text:
            self.requests.editItem(self.requests.item(r, 0))

    def remove_request(self) -> None:
        r = self.requests.currentRow()
        if r >= 0:
            self.requests.removeRow(r)

    def cases(self) -> list[Case]:
        out = []
        for r in range(self.requests.rowCount()):
            item = self.requests.item(r, 0)
            box = self.requests.cellWidget(r, 1)
            text = item.text().strip() if item is not None else ""
            if text:
                out.append(Case(text, box.currentText() if isinstance(box, QComboBox) else NONE))
        return out

    def load_cases(self, server: str) -> None:
        """The requests kept for `server` (its name), when there are any."""
        raw = self.settings.value(f"{SETTING}/{server}") if self.settings is not None else None
        try:
            saved = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            saved = None
        rows = [(c["request"], c["expected"]) for c in saved or [] if isinstance(c, dict)
                and isinstance(c.get("request"), str) and isinstance(c.get("expected"), str)]
        if rows:
            self.requests.setRowCount(0)
            for text, expected in rows:
                self.add_request(text, expected)

    def save_cases(self) -> None:
        conn = self.connection()
        if conn is not None and self.settings is not None:
            self.settings.setValue(f"{SETTING}/{conn.name}", json.dumps(
                [{"request": c.request, "expected": c.expected} for c in self.cases()], ensure_ascii=False))

    def steps_yaml(self) -> str:
        lines = ["steps:"]
        for i, case in enumerate(self.cases(), 1):
            lines += [f"  - name: {json.dumps(f'ask {i}: {case.request[:40]}', ensure_ascii=False)}",
                      f"    ask: {json.dumps(case.request, ensure_ascii=False)}",
                      f"    expect: {{tool: {json.dumps(case.expected)}}}"]
        return "\n".join(lines) + "\n"

    def copy_steps(self) -> None:
        QGuiApplication.clipboard().setText(self.steps_yaml())
        self.status.setText(f"Copied {len(self.cases())} ask steps: paste them into a collection and run "
                            "spyglass test COLLECTION --model-url URL --model NAME.")

    # ------------------------------------------------------------------ descriptions, overridden here only
    def _overrides(self) -> dict[str, str]:
        conn = self.connection()
        return self.overrides.setdefault(conn.server_id, {}) if conn is not None else {}

    def _show_description(self) -> None:
        name = self.tool.currentText()
        tool = next((t for t in self.server_tools() if t.get("name") == name), None)
        original = tool.get("description") if isinstance(tool, dict) else None
        mine = self._overrides().get(name)
        self.description.setPlainText(mine if mine is not None else original if isinstance(original, str) else "")
        self.description.setEnabled(tool is not None)
        self.override_button.setEnabled(tool is not None)
        self.reset_button.setEnabled(mine is not None)
        said = sorted(self._overrides())
        self.override_note.setText(f"Overridden here (never sent to the server): {', '.join(said)}" if said else
                                   "Every tool is offered with the server's own description.")

    def override(self) -> None:
        name = self.tool.currentText()
        if name:
            self._overrides()[name] = self.description.toPlainText()
            self._show_description()

    def reset_override(self) -> None:
        self._overrides().pop(self.tool.currentText(), None)
        self._show_description()

    # ------------------------------------------------------------------ running
    def run(self) -> None:
        if self.job is not None and not self.job.done():
            return
        connection = self.model.connection()
        cases = self.cases()
        if connection is None:
            self.status.setText("No model to ask: add a model connection in File → Preferences… → Models.")
            return
        if self._conn() is None:
            self.status.setText("Connect a server first: its tools are what the model chooses among.")
            return
        if not cases:
            self.status.setText("Add a request first (Add request).")
            return
        conn = self._conn()
        tools, _notes = host_tool_specs({"": (conn.name, self.server_tools())}, self.host.profile(),
                                        self._overrides())
        self.save_cases()
        self.results = []
        self.table.setRowCount(0)
        self._stopping = False
        self.run_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.status.setText(f"Asking {connection.label} {len(cases)} request(s) × {self.runs.value()}…")
        self.job = asyncio.ensure_future(self._run(connection, cases, tools, self.runs.value()))
        self.job.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _run(self, connection: Any, cases: list[Case], tools: list[Any], runs: int) -> None:
        chat = self.book.open(connection)
        try:
            self.results = await run_cases(chat, cases, tools, runs, self._progress, lambda: self._stopping)
            self._fill(self.results)
            wrong = [r for r in self.results if r.verdict != "right"]
            self.status.setText(("Every request got the tool expected." if not wrong else
                                 f"{len(wrong)} of {len(self.results)} requests chose wrong or hesitated.")
                                + (" (stopped)" if self._stopping else ""))
        except ModelError as exc:
            self.status.setText(f"⚠ {exc.message}")
        except asyncio.CancelledError:
            self._fill(self.results)
            self.status.setText("Stopped: the table shows the answers so far.")
        except Exception as exc:  # a bug of ours: said, the view stays usable
            log.exception("tool choice run")
            self.status.setText(f"⚠ internal error: {type(exc).__name__}: {exc}")
        finally:
            await chat.aclose()
            self.run_button.setEnabled(True)
            self.stop_button.setEnabled(False)

    async def close(self) -> None:
        self.stop()
        if self.job is not None:
            await asyncio.gather(self.job, return_exceptions=True)

    def stop(self) -> None:
        self._stopping = True
        if self.job is not None and not self.job.done():
            self.job.cancel()

    def _progress(self, result: CaseResult) -> None:
        if result not in self.results:
            self.results.append(result)
        self._fill(self.results)

    def _fill(self, results: list[CaseResult]) -> None:
        self.table.setRowCount(len(results))
        for r, res in enumerate(results):
            counts = ", ".join(f"{name} ×{n}" for name, n in res.counts.most_common())
            args = res.common_arguments()
            errors = [p.error for p in res.picks if p.error]
            verdict = res.verdict if res.picks else "failed"
            shown_args = json.dumps(args, ensure_ascii=False) if args is not None else (errors[0] if errors else "—")
            cells = [res.case.request, res.case.expected, counts or "…", visible(shown_args, 300),
                     VERDICT_WORDS[verdict] + f" ({res.right}/{len(res.picks)})"]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(visible(text, 500))
                item.setToolTip(visible_block(pick_lines(res)) if c == 2 else visible(text, 2000))
                if c == 4:
                    item.setForeground(QBrush(theme.colour(VERDICT_COLOURS[verdict])))
                self.table.setItem(r, c, item)
        self.table.resizeRowsToContents()
