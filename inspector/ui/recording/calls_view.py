"""A recorded server's calls (`sessionCalls`): every request the user made, in order, and the selected
one's answer as it was (`sessionCallResult`), drawn by the renderers of live calls: a tool's result by
`ResultView`, a resource's contents and a prompt's messages by the content blocks of `render`.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ... import errors as E
from ...protocol.jsonrpc import code_name
from ...recording.surface import Exchange, ServerSurface
from ...session import OK, REJECTED, TOOL_ERROR, CallRecord
from ..base import design, theme
from ..base.highlight import json_lexer
from ..base.layout import heading_label, scrolling_column, text_label
from ..base.text import pretty_json, visible, visible_block
from ..render.result_view import ResultView
from ..render.results import ContentView, render_resource_contents
from ..render.text import TextView

log = logging.getLogger("spyglass.ui.recording")


def row_table(name: str, parent: QWidget) -> QTableView:
    """A list of rows with columns, one row selected at a time, each row the same height: a table, not a tree
    (a QTreeView lays out every row when it is shown, asking the model about each: 1.4 s of one turn for a
    million log lines, against milliseconds for a table)."""
    view = QTableView(parent)
    view.setObjectName(name)
    view.setAlternatingRowColors(True)
    view.setSelectionBehavior(QAbstractItemView.SelectRows)
    view.setSelectionMode(QAbstractItemView.SingleSelection)
    view.setEditTriggers(QAbstractItemView.NoEditTriggers)
    view.setShowGrid(False)
    view.setWordWrap(False)
    view.setTextElideMode(Qt.ElideRight)
    view.setHorizontalScrollMode(QAbstractItemView.ScrollPerPixel)
    rows = view.verticalHeader()
    rows.setVisible(False)
    rows.setSectionResizeMode(QHeaderView.Fixed)
    rows.setMinimumSectionSize(1)
    rows.setDefaultSectionSize(view.fontMetrics().height() + design.space("s"))
    header = view.horizontalHeader()
    header.setStretchLastSection(True)
    header.setHighlightSections(False)
    header.setDefaultAlignment(Qt.AlignLeft | Qt.AlignVCenter)
    return view

OUTCOME_COLOURS = {"ok": "connected", "error": "error", "tool error": "warning", "unanswered": "muted"}
COLUMNS = ("#", "Time", "Method", "Outcome", "Latency", "Target")  # the one of any width last: it gets the rest


def clock(wall: float) -> str:
    """A recorded moment in local time, to the millisecond."""
    try:
        return dt.datetime.fromtimestamp(wall).strftime("%H:%M:%S.%f")[:-3]
    except (OverflowError, OSError, ValueError):
        return "?"


def latency_text(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def call_record(x: Exchange, surface: ServerSurface) -> CallRecord:
    """A recorded tools/call as the record `ResultView` draws (its timing the recorded latency)."""
    tool = x.target or "(no name)"
    tool_def = next((t for t in surface.tools if t.get("name") == x.target), None)
    arguments = x.params.get("arguments") if isinstance(x.params, dict) else None
    rec = CallRecord(id=x.n, server_id=surface.server_id, tool=tool, arguments=arguments, tool_def=tool_def,
                     wall=x.wall, started=0.0, ended=x.latency or 0.0)
    rec.result = x.result
    if x.error is not None:
        code = x.error.get("code")
        message = x.error.get("message")
        rec.error = E.RemoteError(x.method, code if isinstance(code, int) else 0,
                                  message if isinstance(message, str) else repr(message), x.error.get("data"))
        rec.error_text = rec.error.message
        rec.outcome = REJECTED
    else:
        rec.outcome = TOOL_ERROR if x.outcome == "tool error" else OK
    return rec


def error_frame(x: Exchange, parent: QWidget) -> QFrame:
    """A JSON-RPC error answer of a request other than tools/call."""
    error = x.error or {}
    f = QFrame(parent)
    f.setObjectName("result:error")
    f.setProperty("errorKind", "rejected")
    c = theme.colour("error").name()
    f.setStyleSheet(design.outline_css('QFrame[objectName="result:error"]', c, bar=True))
    lay = QVBoxLayout(f)
    lay.setContentsMargins(design.margins("m", "s", "m", "m"))
    lay.addWidget(text_label(f"The server rejected {visible(x.method, 100)}", f, name="errorTitle", role="error"))
    code = error.get("code")
    lay.addWidget(text_label(f"{visible(code, 40)} {code_name(code)}", f, name="errorCode"))
    lay.addWidget(text_label(visible_block(error.get("message"), 4000), f, name="errorMessage"))
    if error.get("data") is not None:
        lay.addWidget(TextView(pretty_json(error["data"]), f, lexer=json_lexer(), name="errorData", wrap=False,
                               max_height=200))
    return f


def answer_widget(x: Exchange, surface: ServerSurface, parent: QWidget) -> QWidget:
    """The recorded answer of `x`, drawn as the live window draws that kind of answer."""
    if x.answer is None:
        return scrolling_column(parent, "sessionCallAnswer", text_label(
            "No answer was recorded: the server never answered, or the session ended first.", parent,
            name="sessionCallUnanswered", role="muted"))
    if x.method == "tools/call":
        view = ResultView(parent)
        view.show_record(call_record(x, surface))
        return view
    if x.error is not None:
        return scrolling_column(parent, "sessionCallAnswer", error_frame(x, parent))
    result = x.result if isinstance(x.result, dict) else None
    try:
        if x.method == "resources/read" and result is not None and isinstance(result.get("contents"), list):
            return scrolling_column(parent, "sessionCallAnswer", render_resource_contents(result["contents"]))
        if x.method == "prompts/get" and result is not None and isinstance(result.get("messages"), list):
            return scrolling_column(parent, "sessionCallAnswer", *prompt_messages(result["messages"], parent))
    except Exception as exc:  # a renderer bug: the answer is still shown, as JSON
        log.exception("rendering a recorded answer")
        return scrolling_column(parent, "sessionCallAnswer", text_label(
            f"⚠ Could not render the answer: {type(exc).__name__}: {exc}", parent, role="warning"),
            TextView(pretty_json(x.result), parent, lexer=json_lexer(), wrap=False))
    return scrolling_column(parent, "sessionCallAnswer", TextView(pretty_json(x.result), parent, lexer=json_lexer(),
                                                                  name="sessionCallJson", wrap=False,
                                                                  max_height=2000))


def prompt_messages(messages: list[Any], parent: QWidget) -> list[QWidget]:
    out: list[QWidget] = []
    for message in messages:
        m = message if isinstance(message, dict) else {}
        card = QFrame(parent)
        card.setObjectName("promptMessage")
        card.setFrameShape(QFrame.StyledPanel)
        lay = QVBoxLayout(card)
        lay.setContentsMargins(design.margins("m", "s", "m", "m"))
        lay.addWidget(heading_label(visible(m.get("role", "?"), 40), card))
        content = m.get("content")
        view = ContentView(card)
        view.set_blocks(content if isinstance(content, list) else [content] if isinstance(content, dict) else [])
        lay.addWidget(view)
        out.append(card)
    return out


class CallsModel(QAbstractTableModel):
    """The calls as rows, built only for the rows on screen: a session of 100,000 calls opens at once
    (an item per call took seconds)."""

    def __init__(self, exchanges: list[Exchange], parent: Any = None) -> None:
        super().__init__(parent)
        self.exchanges = exchanges
        self.colours = {k: theme.colour(v) for k, v in OUTCOME_COLOURS.items()}

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.exchanges)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.DisplayRole) -> Any:
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return COLUMNS[section]
        return None

    def text(self, row: int, col: int) -> str:
        x = self.exchanges[row]
        if col == 0:
            return str(row + 1)
        if col == 1:
            return clock(x.wall)
        if col == 2:
            return x.method
        if col == 3:
            return x.outcome
        if col == 4:
            return latency_text(x.latency)
        return visible(x.target or "", 200)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if role == Qt.DisplayRole:
            return self.text(row, col)
        if role == Qt.ForegroundRole and col == 3:
            return self.colours[self.exchanges[row].outcome]
        if role == Qt.TextAlignmentRole and col == 4:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role == Qt.UserRole:
            return row
        return None


class CallsPage(QSplitter):
    """The list of calls on the left, the selected one's request and answer on the right."""

    recordWanted = Signal(int)  # show this record in the traffic pane

    def __init__(self, surface: ServerSurface, parent: QWidget | None = None, *,
                 calls: list[Exchange] | None = None) -> None:
        super().__init__(Qt.Horizontal, parent)
        self.setObjectName("sessionCallsPage")
        self.surface = surface
        self.exchanges = surface.calls() if calls is None else calls  # (`calls`: found already)
        self.tree = row_table("sessionCalls", self)
        self.model = CallsModel(self.exchanges, self.tree)
        self.tree.setModel(self.model)
        header = self.tree.horizontalHeader()
        metrics = self.tree.fontMetrics()
        # widths from the first rows' text (ResizeToContents would measure every row of a long session)
        shown = range(min(len(self.exchanges), 200))
        for col in range(len(COLUMNS)):
            texts = [COLUMNS[col], *(self.model.text(row, col) for row in shown)]
            header.resizeSection(col, min(max(metrics.horizontalAdvance(t) for t in texts) + 12, 260))
        self.tree.selectionModel().currentRowChanged.connect(
            lambda current, _previous: self.show_index(current.row() if current.isValid() else None))
        self.result = QWidget(self)
        self.result.setObjectName("sessionCallResult")
        rl = QVBoxLayout(self.result)
        rl.setContentsMargins(design.margins("m", "none", "none", "none"))
        rl.setSpacing(design.space("xs"))
        head = QHBoxLayout()
        self.head = heading_label("", self.result)
        self.head.setObjectName("sessionCallHead")
        self.show_frame = QPushButton("Show in traffic", self.result)
        self.show_frame.setObjectName("sessionCallShowFrame")
        self.show_frame.setToolTip("Select this request in the traffic pane")
        self.show_frame.clicked.connect(self._want_frame)
        head.addWidget(self.head, 1)
        head.addWidget(self.show_frame)
        rl.addLayout(head)
        self.sub = text_label("", self.result, name="sessionCallInfo", role="muted")
        rl.addWidget(self.sub)
        self.request: TextView | None = None
        self.answer: QWidget | None = None
        self.placeholder = text_label(
            "Select a call to see its answer as it was." if self.exchanges else
            "No calls in this session: the tools called, resources read and prompts got appear here.",
            self.result, name="sessionCallsEmpty", role="muted")
        rl.addWidget(self.placeholder)
        rl.addStretch(1)
        self.addWidget(self.tree)
        self.addWidget(self.result)
        self.setStretchFactor(0, 2)
        self.setStretchFactor(1, 3)
        self.setSizes([460, 640])  # the list shows every column; the answer keeps the larger part
        self.setChildrenCollapsible(False)
        self.current: Exchange | None = None
        self.show_index(None)

    def _want_frame(self) -> None:
        if self.current is not None:
            self.recordWanted.emit(self.current.n)

    def select_record(self, n: int) -> bool:
        for i, x in enumerate(self.exchanges):
            if x.n == n:
                self.tree.setCurrentIndex(self.model.index(i, 0))
                return True
        return False

    def show_index(self, index: int | None) -> None:
        lay = self.result.layout()
        for w in (self.request, self.answer):
            if w is not None:
                lay.removeWidget(w)
                w.hide()
                w.deleteLater()
        self.request = self.answer = None
        x = self.exchanges[index] if index is not None and 0 <= index < len(self.exchanges) else None
        self.current = x
        for w in (self.head, self.sub, self.show_frame):
            w.setVisible(x is not None)
        self.placeholder.setVisible(x is None)
        # the stretch keeps the placeholder at the top; an answer takes the whole height itself
        lay.setStretch(lay.count() - 1, 1 if x is None else 0)
        if x is None:
            return
        self.head.setText(x.label if len(x.label) < 200 else visible(x.label, 200))
        answered = f"answered in {latency_text(x.latency)}" if x.latency is not None else "no answer"
        self.sub.setText(f"Record {x.n} · sent {clock(x.wall)} · {answered} · {x.outcome}")
        params = x.params.get("arguments") if x.method == "tools/call" and isinstance(x.params, dict) else x.params
        self.request = TextView(pretty_json(params), self.result, lexer=json_lexer(), name="sessionCallRequest",
                                wrap=False, max_height=140)
        lay.insertWidget(3, self.request)
        self.answer = answer_widget(x, self.surface, self.result)
        lay.insertWidget(4, self.answer, 1)
