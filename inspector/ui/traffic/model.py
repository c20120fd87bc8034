"""The traffic table model: a filtered view of the `TrafficStore`, Wireshark style.

Rows reach the view in batches: the store wakes the model when a record is
appended, a single-shot `QTimer` (`BATCH_MS`) then takes in everything that
arrived meanwhile with ONE `beginInsertRows(parent, first, last)` (`last`
inclusive). Display strings are built only in `data()`, for the rows on screen;
brushes are module constants. A new filter is applied progressively (at most
`SCAN_BUDGET` records or `SCAN_SECONDS` per tick), so filtering a million rows never freezes the
window.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor

from ...traffic import FilteredView, TrafficFilter, TrafficStore
from ...traffic.columns import HANDMADE, HANDMADE_ANSWER
from ...traffic.store import K_APP, K_ERROR, K_MALFORMED, K_MODEL, K_REQUEST, K_STDERR
from ..base.theme import severity_icon

BATCH_MS = 80
FLOOD_ROWS = 2_000  # rows taken in by one batch that mean a flood: the next batch waits FLOOD_SLOWER times longer
FLOOD_SLOWER = 3  # (the pane still fills four times a second, and the flood's frames cost the window a third less)
FINDINGS_KEPT = 50_000  # records whose findings' words are kept for the tooltip and the detail
SCAN_BUDGET = 200_000  # at most this many records looked at per tick...
SCAN_SECONDS = 0.02  # ...and no more than this long (a slice of 8,192 records at a time)

COLUMNS = ("No.", "Expert", "Time", "Δ", "Server", "Dir", "Kind", "Method", "ID", "Latency", "Size", "Summary")
(COL_N, COL_EXPERT, COL_TIME, COL_DELTA, COL_SERVER, COL_DIR, COL_KIND, COL_METHOD, COL_ID, COL_LATENCY, COL_SIZE,
 COL_SUMMARY) = range(len(COLUMNS))
HEADER_TIPS = (
    "Record number in this session",
    "What is wrong with this frame, by severity (error, warning, info): the revision's schema, the server's "
    "own declarations (spyglass check's rules)",
    "Seconds since the first frame of the session",
    "Seconds since the previous row shown",
    "Server",
    "→ sent to the server, ← received from it, err: its stderr, http: an HTTP exchange, → app / ← app: the bridge "
    "of an MCP App (to its view / from it), → model / ← model: an exchange with a language model's endpoint; "
    "✎ hand-made (the raw composer, Edit and resend) or its answer",
    "request, response, notification, error (JSON-RPC error response), malformed, stderr, http, app (a message of "
    "an MCP App's bridge), model (an exchange with a model endpoint)",
    "JSON-RPC method (for a response: the method of its request)",
    "JSON-RPC id (\"quoted\" when it is a string)",
    "Time from the request to this response",
    "Bytes on the wire",
    "One-line summary",
)
ARROWS = {"out": "→", "in": "←", "err": "err", "http": "http", "to-view": "→ app", "from-view": "← app",
          "to-model": "→ model", "from-model": "← model"}
DIR_TIPS = {"out": "sent to the server", "in": "received from the server", "err": "a line on the server's stderr",
            "http": "an HTTP exchange", "to-view": "sent by Spyglass (the host) to an app's view",
            "from-view": "sent by an app's view to Spyglass (the host)",
            "to-model": "a request to a model endpoint (its key masked)", "from-model": "a model endpoint's answer"}
NUMERIC = frozenset({COL_N, COL_TIME, COL_DELTA, COL_LATENCY, COL_SIZE})
RECORD_ROLE = Qt.ItemDataRole.UserRole  # the record number of a row

# Translucent tints: readable on light and dark bases alike.
MALFORMED_BRUSH = QBrush(QColor(220, 38, 38, 90))
ERROR_BRUSH = QBrush(QColor(234, 120, 12, 80))
PAIR_BRUSH = QBrush(QColor(37, 99, 235, 110))
DIM_BRUSH = QBrush(QColor(128, 128, 128))
MARKER_BRUSH = QBrush(QColor(130, 80, 223, 70))  # a restart and the like (Frame.meta "marker"), a line across
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

_DISPLAY = Qt.ItemDataRole.DisplayRole
_BACKGROUND = Qt.ItemDataRole.BackgroundRole
_FOREGROUND = Qt.ItemDataRole.ForegroundRole
_ALIGN = Qt.ItemDataRole.TextAlignmentRole
_TOOLTIP = Qt.ItemDataRole.ToolTipRole
_DECORATION = Qt.ItemDataRole.DecorationRole


def format_latency(seconds: float | None) -> str:
    if seconds is None:
        return ""
    ms = seconds * 1000
    if ms < 1:
        return f"{ms:.3f} ms"
    if ms < 10:
        return f"{ms:.2f} ms"
    if ms < 1000:
        return f"{ms:.1f} ms"
    return f"{seconds:.2f} s"


def format_id(rid: Any) -> str:
    if rid is None:
        return ""
    return f'"{rid}"' if isinstance(rid, str) else str(rid)


HANDMADE_KEYS = (HANDMADE, HANDMADE_ANSWER)


def handmade_mark(meta: dict[str, Any] | None) -> str:
    """"✎ hand-made #k" for a hand-made frame (the raw composer's, Edit and resend), "✎ answers #k" for its
    answer, "" for the rest."""
    if meta and HANDMADE in meta:
        return f"✎ hand-made #{meta[HANDMADE]}"
    if meta and HANDMADE_ANSWER in meta:
        return f"✎ answers hand-made #{meta[HANDMADE_ANSWER]}"
    return ""


def format_wall(wall: float) -> str:
    return dt.datetime.fromtimestamp(wall, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"



PROBE_LOOKAHEAD = 200  # records after the probe's answer in which its legacy handshake is looked for
PROBE_WORDS = {False: "Spyglass's version probe · ",
               True: "version probe: not the 2026-07-28 revision, so the legacy handshake follows · "}
PROBE_TIP = ("Spyglass's own version probe, not the server's fault: in the auto protocol mode Spyglass first asks "
             "server/discover whether the server speaks the 2026-07-28 revision. This server answered with an "
             "error, so Spyglass spoke the legacy initialize handshake instead, as the specification expects.")

class TrafficModel(QAbstractTableModel):
    filterChanged = Signal()
    pausedChanged = Signal(bool)

    def __init__(self, store: TrafficStore, parent: Any = None, *, batch_ms: int = BATCH_MS) -> None:
        super().__init__(parent)
        self.store = store
        self._view = FilteredView(store, TrafficFilter())
        self._view.update(SCAN_BUDGET, SCAN_SECONDS)
        self._rows = self._view.rows
        self._shown = len(self._rows)
        self._marked: int | None = None  # record number tinted as the selection's pair
        self._paused = False
        self._armed = False
        self._batch_ms = batch_ms
        self._next_ms = batch_ms  # the wait before the next batch: longer while a flood lasts
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(batch_ms)
        self._timer.timeout.connect(self.refresh)
        self.inserts = 0  # beginInsertRows calls (for tests and benchmarks)
        # record number -> the findings' messages, for the Expert column's tooltip (set with `set_findings`)
        self.findings: dict[int, list[str]] = {}
        self._probes: set[int] = set()  # record numbers of Spyglass's own version probe and its answer
        self._arm()
        if not self._view.complete:
            self._continue()

    # ------------------------------------------------------------------ batching
    def _arm(self) -> None:
        if not self._armed:
            self._armed = True
            self.store.notify_next(self._woken)

    def _woken(self, n: int) -> None:
        self._armed = False
        if not self._timer.isActive():
            self._timer.start(self._next_ms)

    def _continue(self) -> None:
        """More of a filter to apply: the next slice as soon as the event loop is free."""
        self._timer.start(0)

    def refresh(self) -> int:
        """Take in what the store appended since the last batch; returns the rows added."""
        self._arm()
        if self._paused:
            return 0
        view = self._view
        if view.filter.expert:  # flagged rows join anywhere, not only at the end
            added = view.update()
            self._pace(added)
            if added:
                self.beginResetModel()
                self._rows, self._shown = view.rows, len(view.rows)
                self.endResetModel()
            return added
        view.update(SCAN_BUDGET, SCAN_SECONDS)
        if not view.complete:
            self._continue()  # a long filter: go on after the event loop had its turn
        new = len(view.rows)
        first = self._shown
        self._pace(new - first)
        if new <= first:
            return 0
        self.beginInsertRows(QModelIndex(), first, new - 1)
        self._shown = new
        self.inserts += 1
        self.endInsertRows()
        return new - first

    def _pace(self, added: int) -> None:
        """A batch of a flood's size: the next one waits longer (each batch lays out and paints the view, a
        quarter of the window's work in a flood of 100,000 frames); the first quieter batch brings it back."""
        self._next_ms = self._batch_ms * FLOOD_SLOWER if added >= FLOOD_ROWS else self._batch_ms

    @property
    def paused(self) -> bool:
        return self._paused

    def set_paused(self, paused: bool) -> None:
        """While paused the view keeps its rows (the store keeps recording)."""
        if paused == self._paused:
            return
        self._paused = paused
        self.pausedChanged.emit(paused)
        if not paused:
            self.refresh()

    @property
    def pending(self) -> int:
        """Records the store holds that the view has not looked at yet."""
        return len(self.store) - max(self._view.scanned, self._view.filter.start)

    # ------------------------------------------------------------------ filtering
    @property
    def filter(self) -> TrafficFilter:
        return self._view.filter

    @property
    def complete(self) -> bool:
        return self._view.complete and self._shown == len(self._view.rows)

    def set_filter(self, flt: TrafficFilter) -> None:
        if flt == self._view.filter:
            return
        self.beginResetModel()
        self._view = FilteredView(self.store, flt)
        self._view.update(SCAN_BUDGET, SCAN_SECONDS)
        self._rows = self._view.rows
        self._shown = len(self._rows)
        self.endResetModel()
        if not self._view.complete:
            self._continue()
        self.filterChanged.emit()

    def clear_view(self) -> None:
        """Hide every record so far (the store keeps them)."""
        self.set_filter(self._view.filter.replace(start=len(self.store)))

    def show_all(self) -> None:
        self.set_filter(self._view.filter.replace(start=0))

    # ------------------------------------------------------------------ rows ↔ records
    def record_at(self, row: int) -> int:
        return self._rows[row]

    def row_of(self, n: int) -> int | None:
        row = self._view.row_of(n)
        return row if row is not None and row < self._shown else None

    @property
    def marked(self) -> int | None:
        return self._marked

    def set_marked(self, n: int | None) -> None:
        """Tint record `n` (the pair of the selected row); None clears it."""
        old, self._marked = self._marked, n
        last = len(COLUMNS) - 1
        for rec in (old, n):
            if rec is not None:
                row = self.row_of(rec)
                if row is not None:
                    self.dataChanged.emit(self.index(row, 0), self.index(row, last), [_BACKGROUND])

    def set_findings(self, found: dict[int, list[str]]) -> None:
        """Findings of these records (record number -> messages; the store's flags hold the severity).
        The words of at most `FINDINGS_KEPT` records are kept (a flood of broken frames keeps its flags)."""
        for n, messages in found.items():
            if n in self.findings or len(self.findings) < FINDINGS_KEPT:
                self.findings.setdefault(n, []).extend(messages)
            row = self.row_of(n)
            if row is not None:
                self.dataChanged.emit(self.index(row, COL_EXPERT), self.index(row, COL_EXPERT))
        if self._view.filter.expert:
            self.refresh()

    # ------------------------------------------------------------------ Qt model API
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._shown

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        return _FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            if role == _DISPLAY:
                return COLUMNS[section]
            if role == _TOOLTIP:
                return HEADER_TIPS[section]
            if role == _ALIGN:
                return _RIGHT if section in NUMERIC else _LEFT
        elif orientation == Qt.Orientation.Vertical and role == _DISPLAY and 0 <= section < self._shown:
            return str(self._rows[section])
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = _DISPLAY) -> Any:
        if not index.isValid():
            return None
        row = index.row()
        if row >= self._shown:
            return None
        n = self._rows[row]
        col = index.column()
        store = self.store
        if role == _DISPLAY:
            return self._text(store, n, row, col)
        if role == _BACKGROUND:
            if n == self._marked:
                return PAIR_BRUSH
            kind = store.kind_code(n)
            if kind == K_MALFORMED:
                return MALFORMED_BRUSH
            if kind == K_ERROR and not self.is_probe(n):  # a JSON-RPC error response (not to our probe)
                return ERROR_BRUSH
            if kind == K_STDERR and self._marker(n):
                return MARKER_BRUSH
            return None
        if role == _FOREGROUND:
            kind = store.kind_code(n)
            dim = kind >= K_STDERR and kind not in (K_APP, K_MODEL) and not (kind == K_STDERR and self._marker(n))
            return DIM_BRUSH if dim or (kind in (K_REQUEST, K_ERROR) and self.is_probe(n)) else None
        if role == _DECORATION:
            severity = store.flags.get(n) if col == COL_EXPERT else None
            return severity_icon(severity) if severity is not None else None
        if role == _ALIGN:
            return _RIGHT if col in NUMERIC else _LEFT
        if role == RECORD_ROLE:
            return n
        if role == _TOOLTIP:
            reason = store.malformed(n)
            if col == COL_DIR:
                tip = DIR_TIPS.get(store.direction(n))
                return f"{tip} · {handmade_mark(store.meta(n))}" if n in store.columns.handmade else tip
            if col == COL_TIME:
                return format_wall(store.wall(n))
            if col == COL_EXPERT:
                if n in self.findings:
                    return "\n".join(self.findings[n])
                return (f"A finding (its words are kept for the first {FINDINGS_KEPT:,} frames with one)"
                        if n in store.flags else None)
            if reason:
                return f"Malformed: {reason}"
            if self.is_probe(n):
                return PROBE_TIP
            if col in (COL_SUMMARY, COL_METHOD):
                return store.summary(n)
        return None

    def is_probe(self, n: int) -> bool:
        """Whether record `n` is Spyglass's own version probe (a `server/discover` request, or the error that
        answered it) followed by the legacy handshake: what the probe is for, not the server's fault."""
        if n in self._probes:
            return True
        store = self.store
        kind = store.kind_code(n)
        if kind not in (K_REQUEST, K_ERROR):
            return False
        request = n if kind == K_REQUEST else store.pair(n)
        if request is None or store.method(request) != "server/discover" or store.direction(request) != "out":
            return False
        answer = store.pair(request)
        if answer is None or store.kind_code(answer) != K_ERROR:
            return False
        server, end = store.server_id(request), min(len(store), answer + PROBE_LOOKAHEAD)
        for m in range(answer + 1, end):
            if store.method(m) == "initialize" and store.kind_code(m) == K_REQUEST and store.server_id(m) == server:
                self._probes.update((request, answer))
                return True
        return False

    def _marker(self, n: int) -> bool:
        meta = self.store.meta(n)
        return bool(meta and meta.get("marker"))

    def _text(self, store: TrafficStore, n: int, row: int, col: int) -> str:
        if col == COL_N:
            return str(n)
        if col == COL_TIME:
            return f"{store.mono(n) - (store.t0 or 0.0):.6f}"
        if col == COL_DELTA:
            mono = store.mono(n)
            return f"{mono - store.mono(self._rows[row - 1]) if row else 0.0:.6f}"
        if col == COL_SERVER:
            return store.server_id(n)
        if col == COL_DIR:  # ✎: a hand-made frame or its answer
            arrow = ARROWS.get(store.direction(n), "?")
            return f"{arrow} ✎" if n in store.columns.handmade else arrow
        if col == COL_KIND:
            return store.kind(n)
        if col == COL_METHOD:
            # Frames without a method (malformed ones, stderr lines, responses seen
            # before their request) show their summary here, so the problem is
            # readable without scrolling to the Summary column.
            return store.method(n) or store.summary(n)
        if col == COL_ID:
            return format_id(store.request_id(n))
        if col == COL_LATENCY:
            return format_latency(store.latency(n))
        if col == COL_SIZE:
            return f"{store.size(n):,}"
        if col == COL_SUMMARY:
            if self.is_probe(n):
                return PROBE_WORDS[store.kind_code(n) == K_ERROR] + store.summary(n)
            return store.summary(n)
        return ""  # COL_EXPERT: an icon (DecorationRole), its findings in the tooltip
