"""The traffic pane: filter bar, the packet-list table, and the selected frame.

Object names (the automation contract, docs/automation.md): `trafficView` (the table), `trafficDetail` (the
selected message), plus `trafficFilter` (plain text or an expression, docs/filters.md), `trafficFilterError`
(what is wrong with it), `trafficSavedFilters`, `trafficDirection`, `trafficKind`,
`trafficServer`, `trafficPause`, `trafficAutoScroll`, `trafficClear`,
`trafficExport`, `trafficCount`, `trafficDetailHeader`, `trafficDetailProblem`,
`trafficDetailPretty`, `trafficDetailRaw`, `trafficCopyPretty`,
`trafficCopyRaw`, `trafficPairButton`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...portable import mask_frame, mask_meta
from ...traffic import TrafficFilter, TrafficStore
from ...traffic.expr import FilterSyntaxError, Node, is_expression, parse
from ...traffic.summary import human_size
from ..base import design
from ..base.fit import overflow_row
from ..base.highlight import JsonHighlighter, palette_is_dark
from ..base.layout import mono_font
from .detail_header import HeaderRow
from .filter_edit import FilterEdit, SavedFilters, error_colour
from .model import (
    ARROWS,
    COL_DELTA,
    COL_DIR,
    COL_EXPERT,
    COL_ID,
    COL_KIND,
    COL_LATENCY,
    COL_METHOD,
    COL_N,
    COL_SERVER,
    COL_SIZE,
    COL_SUMMARY,
    COL_TIME,
    HANDMADE_KEYS,
    TrafficModel,
    format_id,
    format_latency,
    format_wall,
    handmade_mark,
)

FLUSH_MS = 100
FILTER_DEBOUNCE_MS = 200
PRETTY_MAX = 2 * 1024 * 1024  # bigger messages: no pretty-printing
RAW_SHOWN_MAX = 1024 * 1024  # characters of raw text put in the widget (Copy raw copies everything)

DIRECTION_CHOICES: list[tuple[str, frozenset[str] | None]] = [
    ("Both directions", None),
    ("→ Sent", frozenset({"out"})),
    ("← Received", frozenset({"in"})),
    ("stderr / HTTP", frozenset({"err", "http"})),
    ("→ To apps", frozenset({"to-view"})),
    ("← From apps", frozenset({"from-view"})),
    ("Model exchanges", frozenset({"to-model", "from-model"})),
]
KIND_CHOICES: list[tuple[str, frozenset[str] | None]] = [
    ("All kinds", None),
    ("Messages (no stderr)", frozenset({"request", "response", "notification", "error", "malformed"})),
    ("Requests + responses", frozenset({"request", "response", "error"})),
    ("Requests", frozenset({"request"})),
    ("Responses", frozenset({"response"})),
    ("Notifications", frozenset({"notification"})),
    ("Errors", frozenset({"error"})),
    ("Malformed", frozenset({"malformed"})),
    ("Problems (errors + malformed)", frozenset({"error", "malformed"})),
    ("stderr", frozenset({"stderr"})),
    ("HTTP", frozenset({"http"})),
    ("Apps (bridge)", frozenset({"app"})),
    ("Model", frozenset({"model"})),
]
# Widths of the fixed columns, as sample text (the view measures them once).
SHOWN_ORDER = (COL_N, COL_EXPERT, COL_DIR, COL_METHOD, COL_ID, COL_TIME, COL_LATENCY, COL_KIND, COL_SERVER, COL_DELTA,
               COL_SIZE, COL_SUMMARY)
_SAMPLES = {COL_N: "000000", COL_EXPERT: "", COL_TIME: "0000.000000", COL_DELTA: "0.000000", COL_SERVER: "server-name",
            COL_DIR: "← model", COL_KIND: "notification", COL_METHOD: "notifications/message",
            COL_ID: '"p1000"', COL_LATENCY: "1000.0 ms", COL_SIZE: "1,000,000"}


def _tool_button(name: str, text: str, tip: str, *, checkable: bool = False, checked: bool = False) -> QToolButton:
    b = QToolButton()
    b.setObjectName(name)
    b.setText(text)
    b.setToolTip(tip)
    b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    if checkable:
        b.setCheckable(True)
        b.setChecked(checked)
    return b


class TrafficDetail(QWidget):
    """The selected frame: a header line, the problem if any, pretty JSON
    (pygments-highlighted), and the raw text exactly as on the wire."""

    copied = Signal(str)
    reflowed = Signal()  # the header wrapped into more or fewer lines: the message's lines changed with it

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trafficDetail")
        mono = mono_font()
        self.header = QLabel("No frame selected")
        self.header.setObjectName("trafficDetailHeader")
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem = QLabel()
        self.problem.setObjectName("trafficDetailProblem")
        self.problem.setTextFormat(Qt.TextFormat.PlainText)
        self.problem.setWordWrap(True)
        self.problem.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem.hide()
        self.pretty = QPlainTextEdit()
        self.pretty.setObjectName("trafficDetailPretty")
        self.pretty.setReadOnly(True)
        self.pretty.setFont(mono)
        # wrapped at the pane's width: a long value reads on, with no scroll bar eating a line of a short pane
        self.pretty.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.pretty.setPlaceholderText("Select a row to see its message")
        self.highlighter = JsonHighlighter(self.pretty.document())
        self.raw = QPlainTextEdit()
        self.raw.setObjectName("trafficDetailRaw")
        self.raw.setReadOnly(True)
        self.raw.setFont(mono)
        self.raw.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.raw.setWordWrapMode(self.raw.wordWrapMode().WrapAnywhere)
        self.raw.setPlaceholderText("Raw text, as on the wire")
        self.copy_pretty = QPushButton("Copy pretty")
        self.copy_pretty.setObjectName("trafficCopyPretty")
        self.copy_raw = QPushButton("Copy raw")
        self.copy_raw.setObjectName("trafficCopyRaw")
        self.pair_button = QPushButton("Go to pair")
        self.pair_button.setObjectName("trafficPairButton")
        self.pair_button.setToolTip("Jump between a request and its response (Ctrl+J)")
        for b in (self.copy_pretty, self.copy_raw, self.pair_button):
            b.setEnabled(False)
            b.setAutoDefault(False)
        self.copy_pretty.clicked.connect(lambda: self._copy(self.pretty_text, "pretty"))
        self.copy_raw.clicked.connect(lambda: self._copy(self.raw_text, "raw"))

        # two lines each at least: a short window keeps its traffic dock short (the splitter gives more)
        for edit in (self.pretty, self.raw):
            edit.setMinimumHeight(2 * edit.fontMetrics().lineSpacing() + 2 * edit.frameWidth() + 8)
        self.top = HeaderRow(self.header, (self.pair_button, self.copy_pretty, self.copy_raw), self)
        self.top.reflowed.connect(self.reflowed)
        self.raw.setToolTip("The message's raw text, exactly as on the wire")  # (no label: its lines get the room)
        self.raw_box = QWidget()
        self.raw_box.setObjectName("trafficBytes")
        raw_layout = QVBoxLayout(self.raw_box)
        raw_layout.setContentsMargins(0, 0, 0, 0)
        raw_layout.addWidget(self.raw)
        # the formatted message and its bytes: side by side in a wide pane (each a third of it, with the
        # list), one above the other in a tall one
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.setObjectName("trafficDetailSplitter")
        self.split.addWidget(self.pretty)
        self.split.addWidget(self.raw_box)
        self.split.setStretchFactor(0, 1)
        self.split.setStretchFactor(1, 1)
        self.split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(design.space("hair"))
        layout.addWidget(self.top)
        layout.addWidget(self.problem)
        layout.addWidget(self.split, 1)
        self.n: int | None = None
        self.pretty_text = ""
        self.raw_text = ""
        self.highlighted = False

    def toPlainText(self) -> str:
        """The pretty-printed message shown (the raw text is `raw_text`)."""
        return self.pretty_text

    def _copy(self, text: str, what: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.copied.emit(what)

    def clear(self) -> None:
        self.n = None
        self.pretty_text = self.raw_text = ""
        self.highlighted = False
        self.header.setText("No frame selected")
        self.top.share()
        self.problem.hide()
        self.highlighter.set_text("", json=False)
        self.raw.setPlainText("")
        for b in (self.copy_pretty, self.copy_raw, self.pair_button):
            b.setEnabled(False)

    def show_record(self, store: TrafficStore, n: int, findings: list[str] | None = None) -> None:
        rec = store.record(n)
        raw = store.raw(n)
        if rec.direction == "http":  # an exchange's URL and headers (the messages themselves are shown as sent)
            raw = mask_frame("http", raw)
        self.n = n
        self.raw_text = raw.decode("utf-8", errors="backslashreplace")
        arrow = ARROWS.get(rec.direction, rec.direction)
        parts = [f"#{n}", arrow if rec.kind in ("app", "model") else f"{arrow} {rec.kind}"]  # "← app", not "← app app"
        if mark := handmade_mark(rec.meta):
            parts.insert(1, mark)
        if rec.method:
            parts.append(rec.method)
        if rec.id is not None:
            parts.append(f"id {format_id(rec.id)}")
        if rec.latency is not None:
            parts.append(format_latency(rec.latency))
        # the time is the list's Time column and the tooltip's: a line less to wrap in a narrow pane
        parts += [human_size(rec.size), rec.server_id]
        self.header.setText(" · ".join(parts))
        self.header.setToolTip(" · ".join([*parts, format_wall(rec.wall)]))
        self.top.share()
        problem = ""
        if rec.malformed:
            problem = f"Malformed: {rec.malformed}"
        elif rec.kind == "error":
            problem = "JSON-RPC error response"
        for finding in findings or ():
            problem = (problem + "\n" if problem else "") + finding
        if transport := mask_meta({k: v for k, v in (rec.meta or {}).items() if k not in HANDMADE_KEYS}):  # ✎: header
            problem = (problem + "\n" if problem else "") + "Transport: " + json.dumps(transport, ensure_ascii=False,
                                                                                     default=str)
        self.problem.setText(problem)
        self.problem.setVisible(bool(problem))
        dark = palette_is_dark(self.palette())
        self.problem.setStyleSheet(f"color: {error_colour(dark)};" if rec.malformed or
                                   rec.kind == "error" or store.flags.get(n) == 0 else "")
        self.highlighter.dark = dark
        self.pretty_text, is_json = self._pretty(rec.kind, raw)
        self.highlighted = self.highlighter.set_text(self.pretty_text, json=is_json)
        shown = self.raw_text if len(self.raw_text) <= RAW_SHOWN_MAX else (
            self.raw_text[:RAW_SHOWN_MAX] + f"\n… ({human_size(len(raw))} in all: Copy raw copies everything)")
        self.raw.setPlainText(shown)
        self.copy_pretty.setEnabled(True)
        self.copy_raw.setEnabled(True)
        pair = rec.pair
        self.pair_button.setEnabled(pair is not None)
        if pair is None:
            self.pair_button.setText("Go to pair")
        else:
            asked = rec.kind == "request" or (rec.kind in ("app", "model") and pair > rec.n)  # the request is first
            self.pair_button.setText(f"Go to {'response' if asked else 'request'} #{pair}")

    def _pretty(self, kind: str, raw: bytes) -> tuple[str, bool]:
        if kind == "stderr":
            return raw.decode("utf-8", errors="backslashreplace"), False
        if len(raw) > PRETTY_MAX:
            return f"(message of {human_size(len(raw))}: too large to pretty-print; see the raw text)", False
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            return raw.decode("utf-8", errors="backslashreplace"), False
        try:
            return json.dumps(obj, indent=2, ensure_ascii=False), True
        except (ValueError, RecursionError):  # pragma: no cover
            return raw.decode("utf-8", errors="backslashreplace"), False


class TrafficPane(QWidget):
    """Filter bar + traffic table + detail of the selected frame, over one store."""

    recordSelected = Signal(int)  # record number; -1 when nothing is selected

    def __init__(self, store: TrafficStore, parent: QWidget | None = None, *, flush_ms: int | None = FLUSH_MS,
                 settings: QSettings | None = None) -> None:
        """`settings` keep the saved filters; without, those of the window the pane is in (its `settings`),
        else the app's."""
        super().__init__(parent)
        self.setObjectName("trafficPane")
        self.store = store
        self.model = TrafficModel(store, self)
        self._status = ""
        self._settings = settings
        self._good: tuple[str, Node | None] = ("", None)  # the last valid filter text: (plain text, expression)
        self.filter_error: FilterSyntaxError | None = None

        # --- filter bar
        self.filter_edit = FilterEdit(store)
        self.filter_edit.setPlaceholderText('Filter: text, or an expression: method == "tools/call" && latency > 1s')
        self.filter_edit.setClearButtonEnabled(True)
        self.saved_filters = SavedFilters(self.filter_edit, self.settings, self.filter_edit.text)
        self.saved_filters.applied.connect(self.set_filter_text)
        self.error_label = QLabel()
        self.error_label.setObjectName("trafficFilterError")
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setMinimumWidth(50)
        self.error_label.hide()
        self.direction_combo = self._combo("trafficDirection", DIRECTION_CHOICES, "Direction")
        self.kind_combo = self._combo("trafficKind", KIND_CHOICES, "Kind of frame")
        self.server_combo = self._combo("trafficServer", [("All servers", None)], "Server")
        self.pause_button = _tool_button("trafficPause", "Pause", "Stop adding rows (the session keeps recording)",
                                         checkable=True)
        self.autoscroll_button = _tool_button("trafficAutoScroll", "Auto-scroll", "Follow the newest row",
                                              checkable=True, checked=True)
        self.heartbeat_button = _tool_button("trafficHeartbeats", "Heartbeats",
                                             "Show the periodic server/discover checks of 2026-07-28 servers "
                                             "(always recorded; hidden so they do not bury the real traffic)",
                                             checkable=True)
        self.expert_button = _tool_button("trafficExpert", "Expert", "Show only frames with a finding: what breaks "
                                          "the revision's schema or the server's own declarations",
                                          checkable=True)
        self.clear_button = _tool_button("trafficClear", "Clear", "Hide the rows so far (the session keeps them)")
        self.export_button = _tool_button("trafficExport", "Export", "Save frames as JSON Lines")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        self.export_shown_action = QAction("Export shown rows…", self)
        self.export_all_action = QAction("Export all frames…", self)
        menu.addAction(self.export_shown_action)
        menu.addAction(self.export_all_action)
        self.export_button.setMenu(menu)
        # room for the menu arrow, which the style draws inside the button (over the last letter otherwise)
        self.export_button.setMinimumWidth(self.export_button.sizeHint().width() + 12)
        self.count_label = QLabel()
        self.count_label.setObjectName("trafficCount")
        self.count_label.setMinimumWidth(50)  # a third of the dock is its column: the list, not the words, sets it
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.setSpacing(design.space("xs"))
        # the filter keeps room for what is typed; the boxes take their longest choice's width at most
        self.filter_edit.setMinimumWidth(self.filter_edit.fontMetrics().horizontalAdvance("Filter: method, sum") + 24)
        for combo, letters in ((self.direction_combo, 9), (self.kind_combo, 12), (self.server_combo, 12)):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(letters)
        bar.addWidget(self.filter_edit, 1)
        bar.addWidget(overflow_row(self, "trafficToolbar", (  # what has no room goes into its » menu
            self.direction_combo, self.kind_combo, self.server_combo, self.pause_button, self.autoscroll_button,
            self.heartbeat_button, self.expert_button, self.clear_button, self.export_button)))

        # --- table
        self.view = QTableView()
        self.view.setObjectName("trafficView")
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setWordWrap(False)
        self.view.setShowGrid(False)
        self.view.setAlternatingRowColors(True)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.view.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        vh = self.view.verticalHeader()
        vh.setVisible(False)
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setMinimumSectionSize(1)
        vh.setDefaultSectionSize(self.view.fontMetrics().height() + 6)
        hh = self.view.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(True)
        hh.setHighlightSections(False)
        fm = self.view.fontMetrics()
        header_fm = hh.fontMetrics()
        for col, sample in _SAMPLES.items():
            title = str(self.model.headerData(col, Qt.Orientation.Horizontal))
            hh.resizeSection(col, max(fm.horizontalAdvance(sample), header_fm.horizontalAdvance(title)) + 24)
        # what a row is read by comes first (the direction, the method, the id: in sight in a narrow list at
        # 200 %), the timings and the server after it, the summary last; the model's columns keep their numbers
        for visual, logical in enumerate(SHOWN_ORDER):
            hh.moveSection(hh.visualIndex(logical), visual)

        # --- detail
        self.detail = TrafficDetail()
        # a status line under the table, as Wireshark's: the bar keeps its room, the message its height
        listing = QWidget()
        listing.setObjectName("trafficList")
        lv = QVBoxLayout(listing)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.setSpacing(design.space("hair"))
        lv.addWidget(self.view, 1)
        status = QHBoxLayout()
        status.setContentsMargins(0, 0, 0, 0)
        status.setSpacing(design.space("l"))
        status.addWidget(self.count_label)
        status.addWidget(self.error_label, 1)
        lv.addLayout(status)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.setObjectName("trafficSplitter")
        self.split.addWidget(listing)
        self.split.addWidget(self.detail)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        self.split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        # (the dock frames it; a 768-pixel screen holds the window)
        layout.setContentsMargins(design.margins("hair", "xs"))
        layout.setSpacing(design.space("xs"))
        layout.addLayout(bar)
        layout.addWidget(self.split, 1)

        # --- wiring
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(FILTER_DEBOUNCE_MS)
        self._filter_timer.timeout.connect(self.apply_filter)
        self.filter_edit.textChanged.connect(lambda _t: self._filter_timer.start())
        self.filter_edit.returnPressed.connect(self.apply_filter)
        for combo in (self.direction_combo, self.kind_combo, self.server_combo):
            combo.currentIndexChanged.connect(lambda _i: self.apply_filter())
        self.pause_button.toggled.connect(self.model.set_paused)
        self.heartbeat_button.toggled.connect(lambda _on: self.apply_filter())
        self.expert_button.toggled.connect(lambda _on: self.apply_filter())
        self.clear_button.clicked.connect(self.clear_view)
        self.export_shown_action.triggered.connect(lambda: self._export_dialog(shown_only=True))
        self.export_all_action.triggered.connect(lambda: self._export_dialog(shown_only=False))
        self.detail.pair_button.clicked.connect(self.jump_to_pair)
        self.detail.copied.connect(lambda what: self._set_status(f"copied the {what} text"))
        self.view.selectionModel().currentRowChanged.connect(self._current_changed)
        self.model.rowsInserted.connect(self._rows_inserted)
        self.model.modelReset.connect(self._model_reset)
        self.model.pausedChanged.connect(lambda _p: self._update_count())
        self._pair_shortcut = QShortcut(QKeySequence("Ctrl+J"), self, self.jump_to_pair,
                                        context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._servers_known = 0
        self._sized = False
        self._status_timer = QTimer(self)
        self._status_timer.setSingleShot(True)
        self._status_timer.setInterval(4000)
        self._status_timer.timeout.connect(self._clear_status)
        self._flush_timer: QTimer | None = None
        if flush_ms and not store.readonly:
            self._flush_timer = QTimer(self)
            self._flush_timer.setInterval(flush_ms)
            self._flush_timer.timeout.connect(store.flush)
            self._flush_timer.start()
        self._sync_servers()
        self._update_count()

    @staticmethod
    def _combo(name: str, choices: list[tuple[str, Any]], tip: str) -> QComboBox:
        combo = QComboBox()
        combo.setObjectName(name)
        combo.setToolTip(tip)
        for label, data in choices:
            combo.addItem(label, data)
        return combo

    # ------------------------------------------------------------------ filtering
    def settings(self) -> QSettings:
        """Where the saved filters are kept."""
        if self._settings is None:
            holder = self.parent()
            while holder is not None and not isinstance(getattr(holder, "settings", None), QSettings):
                holder = holder.parent()
            self._settings = holder.settings if holder is not None else QSettings("Spyglass", "Spyglass")
        return self._settings

    def current_filter(self) -> TrafficFilter:
        """The filter bar's filter; an expression that does not parse leaves the last valid text in place
        (`filter_error` says what is wrong)."""
        text = self.filter_edit.text()
        try:
            expr = parse(text) if is_expression(text) else None
            self._good, self.filter_error = ("" if expr is not None else text, expr), None
        except FilterSyntaxError as exc:
            self.filter_error = exc
        plain, expr = self._good
        return TrafficFilter.make(text=plain, expr=expr, directions=self.direction_combo.currentData(),
                                  kinds=self.kind_combo.currentData(), servers=self.server_combo.currentData(),
                                  start=self.model.filter.start, background=self.heartbeat_button.isChecked(),
                                  expert=self.expert_button.isChecked())

    def apply_filter(self) -> None:
        """Apply the filter bar now (typing applies it after a short pause)."""
        self._filter_timer.stop()
        keep = self.selected_record()
        flt = self.current_filter()
        self._show_filter_error()
        self.model.set_filter(flt)
        if keep is not None:
            self.select_record(keep, scroll=True)

    def _show_filter_error(self) -> None:
        error = self.filter_error
        self.filter_edit.show_error(error)
        self.error_label.setVisible(error is not None)
        if error is not None:
            self.error_label.setText(f"✖ {error} · the previous filter stays applied")
            self.error_label.setToolTip(str(error))
            self.error_label.setStyleSheet(f"color: {error_colour(palette_is_dark(self.palette()))};")

    def set_server_filter(self, server_id: str | None) -> None:
        """Show one server's frames (None: every server)."""
        if server_id is None:
            self.server_combo.setCurrentIndex(0)
            return
        self._sync_servers()
        index = self.server_combo.findData(frozenset({server_id}))
        if index < 0:
            self.server_combo.addItem(server_id, frozenset({server_id}))
            index = self.server_combo.count() - 1
        self.server_combo.setCurrentIndex(index)

    def set_filter_text(self, text: str) -> None:
        self.filter_edit.setText(text)
        self.apply_filter()

    def clear_view(self) -> None:
        """Hide every row so far; new frames keep coming. The store keeps everything."""
        self.model.clear_view()
        self.detail.clear()
        self._set_status("cleared (the session keeps every frame)")

    def show_all(self) -> None:
        self.model.show_all()

    def _sync_servers(self) -> None:
        servers = self.store.servers()
        if len(servers) == self._servers_known:
            return
        for server in servers[self._servers_known:]:
            if self.server_combo.findData(frozenset({server})) < 0:
                self.server_combo.addItem(server, frozenset({server}))
        self._servers_known = len(servers)

    # ------------------------------------------------------------------ selection
    def selected_record(self) -> int | None:
        index = self.view.currentIndex()
        if not index.isValid() or not self.view.selectionModel().isRowSelected(index.row(), QModelIndex()):
            return None
        return self.model.record_at(index.row())

    def select_row(self, row: int) -> None:
        """Select view row `row` (0-based, among the rows shown) and show it in the detail."""
        index = self.model.index(row, 0)
        if not index.isValid():
            raise IndexError(row)
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.view.selectionModel().setCurrentIndex(index, flags)
        self.view.scrollTo(index)

    def select_record(self, n: int, *, scroll: bool = True) -> bool:
        """Select record number `n`; False when the filter hides it."""
        row = self.model.row_of(n)
        if row is None:
            return False
        index = self.model.index(row, 0)
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.view.selectionModel().setCurrentIndex(index, flags)
        if scroll:
            self.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    def jump_to_pair(self) -> bool:
        """Select the response of the selected request (or the request of the selected response)."""
        n = self.selected_record()
        pair = self.store.pair(n) if n is not None else None
        if pair is None:
            self._set_status("no pair for this row")
            return False
        if not self.select_record(pair):
            self._set_status(f"#{pair} is hidden by the filter or by Clear")
            return False
        return True

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            self.detail.clear()
            self.model.set_marked(None)
            self.recordSelected.emit(-1)
            return
        n = self.model.record_at(current.row())
        self.detail.show_record(self.store, n, self.model.findings.get(n))
        self.model.set_marked(self.store.pair(n))
        self.recordSelected.emit(n)

    # ------------------------------------------------------------------ live updates
    def _rows_inserted(self, _parent: QModelIndex, _first: int, _last: int) -> None:
        self._sync_servers()
        if self.autoscroll_button.isChecked():
            self.view.scrollToBottom()
        self._update_count()

    def _model_reset(self) -> None:
        self._sync_servers()
        self._update_count()
        if self.model.rowCount() == 0:
            self.detail.clear()

    def _set_status(self, text: str) -> None:
        self._status = text
        self._update_count()
        self._status_timer.start()

    def _clear_status(self) -> None:
        self._status = ""
        self._update_count()

    def _update_count(self) -> None:
        shown = self.model.rowCount()
        total = len(self.store)
        text = f"{shown:,} of {total:,}" if shown != total else f"{total:,} frames"
        hidden = len(self.store.columns.background)
        if hidden and not self.heartbeat_button.isChecked():
            text += f" · {hidden:,} heartbeat frames hidden"
        if self.model.paused:
            text += " · paused"
        if self._status:
            text += f" · {self._status}"
        self.count_label.setText(text)

    # ------------------------------------------------------------------ export
    def export_jsonl(self, path: str | Path, *, shown_only: bool = True) -> int:
        """Write the shown rows (or every frame) as JSON Lines; returns the count."""
        rows = [self.model.record_at(r) for r in range(self.model.rowCount())] if shown_only else None
        count = self.store.export_jsonl(path, rows)
        self._set_status(f"exported {count:,} frames")
        return count

    def _export_dialog(self, *, shown_only: bool) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export traffic", "traffic.jsonl",
                                              "JSON Lines (*.jsonl);;All files (*)")
        if path:
            try:
                self.export_jsonl(path, shown_only=shown_only)
            except OSError as exc:
                self._set_status(f"export failed: {exc.strerror or exc}")

    # ------------------------------------------------------------------ layout
    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        # Wide and short (a bottom dock): Wireshark's three panes side by side, the list, the message and
        # its bytes, a third each; otherwise one below the other (the list above the detail)
        wide = self.width() > 2 * self.height()
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if not self._sized and self.split.property("spyglassKept") and self.split.orientation() == orientation:
            self._sized = True  # where the user left the dividers (the window keeps them between runs)
        if self.split.orientation() != orientation or not self._sized:
            self._sized = True
            self.split.setOrientation(orientation)
            self.detail.split.setOrientation(orientation)
            total = self.split.width() if wide else self.split.height()
            # the list a little more than a third (its Method and Summary columns are what rows are read by),
            # the message, then its bytes (wrapped: they need the least width)
            table = int(total * (0.42 if wide else 0.55))
            self.split.setSizes([table, max(1, total - table)])
            rest = max(2, total - table)
            self.detail.split.setSizes([rest * 4 // 7, rest - rest * 4 // 7])

    def changeEvent(self, event: Any) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange and self.filter_error is not None:
            self._show_filter_error()  # the error's red for the new palette
        if event.type() == event.Type.PaletteChange and self.detail.n is not None:
            self.detail.show_record(self.store, self.detail.n, self.model.findings.get(self.detail.n))  # new palette

    def closeEvent(self, event: Any) -> None:
        if self._flush_timer is not None:
            self._flush_timer.stop()
        self.store.flush()
        super().closeEvent(event)


__all__ = ["TrafficDetail", "TrafficPane"]
