"""The Load tab's plots (Qt Charts, from the PySide6 wheels): latency over time, the latency histogram, calls per
second and errors per second of the run shown (`LiveCharts`), and two runs side by side (`CompareView`).

The plots are fed snapshots (`inspector.session.load.Snapshot`) at most ten times a second; only the timeline
buckets closed since the last update are appended, so a long run costs each update the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from PySide6.QtCharts import QAreaSeries, QChart, QChartView, QLineSeries, QLogValueAxis, QValueAxis
from PySide6.QtCore import QMargins, QPointF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...session.load import LoadRun, Snapshot, aligned_histograms
from ..base import design, theme

HISTOGRAM_BINS = 40  # compared runs: neighbouring bins merged beyond this
COLOURS = design.named("chart-")  # (light, dark) per series


def _colour(name: str) -> QColor:
    light, dark = COLOURS[name]
    return QColor(dark if theme.is_dark() else light)


class Chart(QChartView):
    """One small chart with a value axis at the bottom and the left (or categories below, for bars)."""

    def __init__(self, name: str, title: str, y_title: str, parent: QWidget | None = None, *,
                 log_x: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setMinimumSize(240, 170)
        c = self.chart_ = QChart()
        c.setTitle(title)
        c.setMargins(QMargins(2, 2, 2, 2))
        c.legend().setAlignment(Qt.AlignmentFlag.AlignTop)
        c.setAnimationOptions(QChart.AnimationOption.NoAnimation)
        self.setChart(c)
        self._ranges: tuple[tuple[float, float], float] | None = None
        self.y = QValueAxis()
        self.y.setTitleText(y_title)
        self.y.setLabelFormat("%.4g")
        self.y.setRange(0, 1)
        c.addAxis(self.y, Qt.AlignmentFlag.AlignLeft)
        self.x: Any
        if log_x:
            self.x = QLogValueAxis()
            self.x.setBase(10)
            self.x.setLabelFormat("%g")
            self.x.setTitleText("latency, ms")
            self.x.setRange(0.1, 10)
        else:
            self.x = QValueAxis()
            self.x.setTitleText("seconds into the run")
            self.x.setLabelFormat("%.4g")
            self.x.setRange(0, 1)
        c.addAxis(self.x, Qt.AlignmentFlag.AlignBottom)
        self.restyle()

    def line(self, label: str, colour: str, width: float = 1.6) -> QLineSeries:
        s = QLineSeries()
        s.setName(label)
        s.setProperty("colourKey", colour)
        s.setPen(QPen(_colour(colour), width))
        self.chart_.addSeries(s)
        s.attachAxis(self.x)
        s.attachAxis(self.y)
        return s

    def area(self, label: str, colour: str) -> QLineSeries:
        """A filled histogram drawn as steps: its outline is the returned series (feed it `steps(...)`)."""
        outline = QLineSeries(self)
        a = QAreaSeries(outline)
        a.setName(label)
        a.setProperty("colourKey", colour)
        self.chart_.addSeries(a)
        a.attachAxis(self.x)
        a.attachAxis(self.y)
        self._paint_area(a)
        return outline

    @staticmethod
    def _paint_area(a: QAreaSeries) -> None:
        c = _colour(a.property("colourKey"))
        fill = QColor(c)
        fill.setAlpha(110)
        a.setBrush(fill)
        a.setPen(QPen(c, 1.2))

    def restyle(self) -> None:
        dark = theme.is_dark()
        c = self.chart_
        c.setTheme(QChart.ChartTheme.ChartThemeDark if dark else QChart.ChartTheme.ChartThemeLight)
        palette = QApplication.palette()  # the theme just applied (this widget's own palette follows later)
        c.setBackgroundBrush(palette.color(QPalette.ColorRole.Base))
        c.setPlotAreaBackgroundVisible(False)
        self.setBackgroundBrush(palette.color(QPalette.ColorRole.Base))
        text = palette.color(QPalette.ColorRole.Text)
        c.setTitleBrush(text)
        c.legend().setLabelColor(text)
        for axis in (self.x, self.y):
            axis.setLabelsColor(text)
            axis.setTitleBrush(text)
        f = QFont(self.font())
        f.setPointSizeF(design.size("small", f.pointSizeF()))
        for axis in (self.x, self.y):
            axis.setLabelsFont(f)
            axis.setTitleFont(f)
        c.legend().setFont(f)
        bold = QFont(f)
        bold.setBold(True)
        c.setTitleFont(bold)
        for s in c.series():
            key = s.property("colourKey")
            if isinstance(s, QLineSeries) and key:
                s.setPen(QPen(_colour(key), s.pen().widthF()))
            elif isinstance(s, QAreaSeries) and key:
                self._paint_area(s)

    def fit(self, x_max: float, y_max: float, x_min: float = 0.0) -> None:
        """Axes that hold the data, in round numbers (1, 2, 5 × 10ⁿ): they change only when the data outgrows
        them (setting an axis lays the chart out again: not ten times a second for nothing)."""
        if isinstance(self.x, QLogValueAxis):
            x = (10 ** math.floor(math.log10(x_min)), 10 ** math.ceil(math.log10(max(x_max, x_min * 10))))
        else:
            x = (0.0, nice(max(1.0, x_max)))
        y = nice(max(1.0, y_max * 1.05))
        if (x, y) != self._ranges:
            self._ranges = (x, y)
            self.x.setRange(*x)
            self.y.setRange(0, y)


def nice(value: float) -> float:
    """The smallest of 1, 2, 5 × 10ⁿ not below `value`."""
    base = 10 ** math.floor(math.log10(value))
    return next(m * base for m in (1, 2, 5, 10) if m * base >= value * (1 - 1e-9))


def steps(edges: list[tuple[float, float, int]]) -> list[QPointF]:
    """A histogram's outline: up and across each bin, down to zero at both ends."""
    if not edges:
        return []
    out = [QPointF(edges[0][0], 0)]
    for a, b, n in edges:
        out += [QPointF(a, n), QPointF(b, n)]
    out.append(QPointF(edges[-1][1], 0))
    return out


class LiveCharts(QWidget):
    """Four plots of one run: latency over time (p50, p90, max of each half second), the latency histogram,
    calls per second and errors per second."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("loadCharts")
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(design.space("xs"))
        self.latency = Chart("loadLatencyChart", "Latency over time", "ms", self)
        self.p50 = self.latency.line("p50", "p50")
        self.p90 = self.latency.line("p90", "p90")
        self.max = self.latency.line("max", "max", 1.0)
        self.histogram = Chart("loadHistogramChart", "Latency histogram", "calls", self, log_x=True)
        self.bins = self.histogram.area("calls", "p50")
        self.histogram.chart_.legend().hide()
        self.rate = Chart("loadRateChart", "Calls per second", "calls/s", self)
        self.calls = self.rate.line("calls ended", "calls")
        self.errors = Chart("loadErrorChart", "Errors per second", "errors/s", self)
        self.tool_errors = self.errors.line("tool errors (isError)", "tool")
        self.failures = self.errors.line("errors (no result)", "errors")
        grid.addWidget(self.latency, 0, 0)
        grid.addWidget(self.histogram, 0, 1)
        grid.addWidget(self.rate, 1, 0)
        grid.addWidget(self.errors, 1, 1)
        self.charts = (self.latency, self.histogram, self.rate, self.errors)
        self.restyle()
        self.reset()

    def reset(self) -> None:
        for s in (self.p50, self.p90, self.max, self.calls, self.tool_errors, self.failures):
            s.clear()
        self.bins.clear()
        self._shown = 0
        self._pending: Snapshot | None = None
        self._peaks = {"latency": 0.0, "rate": 0.0, "errors": 0.0}
        for chart in self.charts:
            chart.fit(1, 1, 0.1)

    def restyle(self) -> None:
        for chart in self.charts:
            chart.restyle()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if self._pending is not None:
            self.show_snapshot(self._pending)

    def show_snapshot(self, snap: Snapshot) -> None:
        """Append the buckets closed since the last call; redraw the histogram. Hidden (another tab is shown),
        the plots wait: the latest snapshot is drawn when they are shown again."""
        if not self.isVisible():
            self._pending = snap
            return
        self._pending = None
        new = snap.buckets[self._shown:]
        if new:
            self._shown = len(snap.buckets)
            for series, values in ((self.p50, [b.p50_ms for b in new]), (self.p90, [b.p90_ms for b in new]),
                                   (self.max, [b.max_ms for b in new])):
                series.append([QPointF(b.start_s + b.width_s, v) for b, v in zip(new, values, strict=True)
                               if v is not None])
            self.calls.append([QPointF(b.start_s + b.width_s, b.per_second) for b in new])
            self.tool_errors.append([QPointF(b.start_s + b.width_s, b.tool_errors / b.width_s) for b in new])
            self.failures.append([QPointF(b.start_s + b.width_s, b.errors / b.width_s) for b in new])
            p = self._peaks
            p["latency"] = max([p["latency"]] + [b.max_ms or 0.0 for b in new])
            p["rate"] = max([p["rate"]] + [b.per_second for b in new])
            p["errors"] = max([p["errors"]] + [b.failed_per_second for b in new])
        end = snap.elapsed_s
        self.latency.fit(end, self._peaks["latency"])
        self.rate.fit(end, self._peaks["rate"])
        self.errors.fit(end, self._peaks["errors"])
        self._show_histogram(snap.histogram)

    def _show_histogram(self, histogram: tuple[tuple[float, float, int], ...]) -> None:
        rows = list(histogram)
        self.bins.replace(steps(rows))
        if rows:
            self.histogram.fit(rows[-1][1], max(n for _, _, n in rows), rows[0][0])


def _latency(key: str) -> Callable[[dict[str, Any]], Any]:
    return lambda s: (s["latencyMs"] or {}).get(key)


COMPARED = [  # (label, how to read it from a summary, lower is better)
    ("calls", lambda s: s["requests"], None),
    ("ok", lambda s: s["ok"], None),
    ("tool errors", lambda s: s["toolErrors"], True),
    ("errors", lambda s: s["errors"], True),
    ("error rate", lambda s: s["errorRate"], True),
    ("elapsed, s", lambda s: s["elapsedMs"] / 1000, None),
    ("throughput, calls/s", lambda s: s["throughput"], False),
    *[(f"latency {k}, ms", _latency(k), True) for k in ("min", "mean", "p50", "p90", "p99", "max")],
]


def _number(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:,}" if isinstance(value, int) else f"{value:,.2f}"


def change(a: Any, b: Any, lower_is_better: bool | None) -> tuple[str, str | None]:
    """B against A: "+12 %" with the colour it deserves (None: neither better nor worse)."""
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return "", None
    if a == b:
        return "same", None
    if a == 0:
        return f"+{b:g}", None if lower_is_better is None else ("error" if lower_is_better else "connected")
    pct = (b - a) / abs(a) * 100
    better = None if lower_is_better is None else (pct < 0) == lower_is_better
    return f"{pct:+.0f} %", None if better is None else ("connected" if better else "error")


class CompareView(QWidget):
    """Two runs side by side: pick A and B among the runs kept; their figures in a table (with B's change
    against A) and their latency histograms on the same bins."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("loadComparePane")
        self.runs: list[tuple[str, LoadRun, dict[str, Any]]] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("none", "xs", "none", "none"))
        row = QHBoxLayout()
        self.a = QComboBox(self)
        self.a.setObjectName("loadCompareA")
        self.b = QComboBox(self)
        self.b.setObjectName("loadCompareB")
        for combo in (self.a, self.b):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.currentIndexChanged.connect(self.refresh)
        row.addWidget(QLabel("Run A", self))
        row.addWidget(self.a)
        row.addWidget(QLabel("against run B", self))
        row.addWidget(self.b)
        row.addStretch(1)
        lay.addLayout(row)
        self.note = QLabel("Finished runs are kept here (the last ten): run the tool twice to compare.", self)
        self.note.setObjectName("loadCompareNote")
        lay.addWidget(self.note)
        body = QHBoxLayout()
        self.table = QTableWidget(len(COMPARED), 3, self)
        self.table.setObjectName("loadCompare")
        self.table.setHorizontalHeaderLabels(["A", "B", "B against A"])
        self.table.setVerticalHeaderLabels([label for label, _, _ in COMPARED])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        body.addWidget(self.table, 1)
        self.chart = Chart("loadCompareChart", "Latency histograms", "calls", self, log_x=True)
        self.outline_a = self.chart.area("A", "a")
        self.outline_b = self.chart.area("B", "b")
        body.addWidget(self.chart, 1)
        lay.addLayout(body, 1)

    def add(self, label: str, run: LoadRun, summary: dict[str, Any], keep: int = 10) -> None:
        self.runs.insert(0, (label, run, summary))
        del self.runs[keep:]
        for combo, pick in ((self.a, 1), (self.b, 0)):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems([label for label, _, _ in self.runs])
            combo.setCurrentIndex(min(pick, len(self.runs) - 1))
            combo.blockSignals(False)
        self.refresh()

    def restyle(self) -> None:
        self.chart.restyle()
        self.refresh()

    def refresh(self) -> None:
        i, j = self.a.currentIndex(), self.b.currentIndex()
        ready = 0 <= i < len(self.runs) and 0 <= j < len(self.runs)
        self.note.setVisible(len(self.runs) < 2)
        if not ready:
            self.outline_a.clear()
            self.outline_b.clear()
            self.table.clearContents()
            return
        (_, run_a, a), (_, run_b, b) = self.runs[i], self.runs[j]
        for row, (_, read, lower) in enumerate(COMPARED):
            va, vb = read(a), read(b)
            text, colour = change(va, vb, lower)
            for col, value in enumerate((_number(va), _number(vb), text)):
                item = QTableWidgetItem(value)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if col == 2 and colour:
                    item.setForeground(theme.colour(colour))
                self.table.setItem(row, col, item)
        edges, counts_a, counts_b = aligned_histograms(run_a.stats, run_b.stats, HISTOGRAM_BINS)
        if not edges:
            return
        width = edges[1] / edges[0] if len(edges) > 1 else 10 ** 0.1
        rows = [(e, e * width, 0) for e in edges]
        self.outline_a.replace(steps([(a, b, n) for (a, b, _), n in zip(rows, counts_a, strict=True)]))
        self.outline_b.replace(steps([(a, b, n) for (a, b, _), n in zip(rows, counts_b, strict=True)]))
        self.chart.fit(rows[-1][1], max(counts_a + counts_b, default=1), rows[0][0])
