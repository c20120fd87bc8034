"""The Load tab of the tool panel (`loadView`): the selected tool called again and again with the arguments of its
form, several at once, for a time or a number of calls, optionally paced; live plots while it runs; two runs
compared side by side.

The run itself is the session layer's `LoadRun` (the same as `spyglass --cli --load`), started as an asyncio
task: the window never waits for it. Every call goes through the server's session, so each one is in the traffic
pane and the traffic store. The view reads a snapshot of the run ten times a second (`REFRESH_MS`), never once
per call, so plotting costs the same at 5 calls a second or 5,000. A tool that may destroy something asks once
before the run, naming how many calls it will make.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ... import errors as E
from ...loadtest import load_scenario
from ...loadtest import write as write_locustfile
from ...loadtest.locust_stats import read as read_locust
from ...session import LoadOptions, LoadRun, Snapshot, tool_call
from ...session.tools import HINTS_NOTE, display_name, lists
from ..base import design, theme
from ..base.dialogs import run_dialog
from ..base.text import visible
from . import confirm

if TYPE_CHECKING:  # QtCharts loads when the first run's plots are built, not with the window
    from .load_charts import CompareView, LiveCharts

log = logging.getLogger("spyglass.ui.load")

REFRESH_MS = 100  # live plots: ten updates a second at most


def load_needs_confirmation(tool: dict[str, Any] | None, policy: str) -> bool:
    """A load run multiplies a call: a tool marked destructive asks even when single calls are set not to."""
    return confirm.needs_confirmation(tool, confirm.DESTRUCTIVE if policy == confirm.NEVER else policy)


class LoadConfirmDialog(QDialog):
    """Asked once before a load run of a tool that may destroy something: the tool, how many calls, the
    arguments; Start (`loadConfirmStart`) or Cancel (`loadConfirmCancel`, the default)."""

    def __init__(self, tool: dict[str, Any], options: LoadOptions, arguments: Any,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("loadConfirmDialog")
        self.setWindowTitle("Load-test this tool?")
        self.setModal(True)
        most = options.most_calls()
        calls = f"up to {most:,} calls" if most is not None else \
            f"as many calls as it answers in {options.duration_s:g} s"
        text = QLabel(f"“{visible(display_name(tool), 200)}” ({visible(tool.get('name'), 200)}) may change or "
                      f"delete things ({HINTS_NOTE.rstrip('.')}). The load run will make {calls}: "
                      f"{options.describe()}.", self)
        text.setObjectName("loadConfirmText")
        text.setTextFormat(Qt.TextFormat.PlainText)
        text.setWordWrap(True)
        args = QPlainTextEdit(self)
        args.setObjectName("loadConfirmArguments")
        args.setReadOnly(True)
        try:
            shown = json.dumps(arguments, indent=2, ensure_ascii=False)
        except (TypeError, ValueError):
            shown = repr(arguments)
        args.setPlainText(shown[:200_000])
        args.setMaximumHeight(180)
        buttons = QDialogButtonBox(self)
        self.start_button = buttons.addButton(f"Make {calls}", QDialogButtonBox.ButtonRole.AcceptRole)
        self.start_button.setObjectName("loadConfirmStart")
        self.cancel_button = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.setObjectName("loadConfirmCancel")
        self.cancel_button.setDefault(True)  # Enter starts nothing by accident
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(text)
        lay.addWidget(QLabel("Each call sends these arguments:", self))
        lay.addWidget(args)
        lay.addWidget(buttons)
        self.resize(480, 320)


def _spin(parent: QWidget, name: str, tip: str, maximum: int, value: int, none: str | None) -> QSpinBox:
    box = QSpinBox(parent)
    box.setObjectName(name)
    box.setRange(0 if none else 1, maximum)
    if none:
        box.setSpecialValueText(none)
    box.setValue(value)
    box.setToolTip(tip)
    box.setGroupSeparatorShown(True)
    return box


class LoadView(QWidget):
    """`set_tool(tool)` as the panel shows a tool; `arguments()` gives the form's value and its problem count."""

    def __init__(self, parent: QWidget | None = None, *, connection: Callable[[], Any],
                 arguments: Callable[[], tuple[Any, int]], reveal_problems: Callable[[], None],
                 confirm_policy: Callable[[], str]) -> None:
        super().__init__(parent)
        self.setObjectName("loadView")
        self.connection = connection
        self.arguments = arguments
        self.reveal_problems = reveal_problems
        self.confirm_policy = confirm_policy
        self.tool: dict[str, Any] | None = None
        self.run: LoadRun | None = None
        self.job: asyncio.Future[Any] | None = None
        self._active = False  # from Start until the run's summary is in
        self.run_label = ""
        self._confirming = False
        self._dark = theme.is_dark()
        self._build()
        self.timer = QTimer(self)
        self.timer.setObjectName("loadTimer")
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)
        self._update_buttons()

    def _build(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("none", "xs", "none", "none"))
        lay.setSpacing(design.space("xs"))
        row = QHBoxLayout()
        self.concurrency = _spin(self, "loadConcurrency", "Most calls in flight at once", 1000, 10, None)
        self.duration = QDoubleSpinBox(self)
        self.duration.setObjectName("loadDuration")
        self.duration.setRange(0, 24 * 3600)
        self.duration.setDecimals(1)
        self.duration.setSuffix(" s")
        self.duration.setSpecialValueText("no limit")
        self.duration.setValue(10)
        self.duration.setToolTip("Stop starting calls after this long (calls in flight still finish). With neither "
                                 "a duration nor a number of calls, the run lasts 10 s")
        self.requests = _spin(self, "loadRequests", "Stop after starting this many calls", 10_000_000, 0, "no limit")
        self.rate = QDoubleSpinBox(self)
        self.rate.setObjectName("loadRate")
        self.rate.setRange(0, 100_000)
        self.rate.setDecimals(1)
        self.rate.setSuffix(" /s")
        self.rate.setSpecialValueText("no limit")
        self.rate.setToolTip("Start at most this many calls a second, spread evenly")
        # two settings a line: the Load tab fits the answer's column beside the form
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        for i, (label, box) in enumerate((("At once", self.concurrency), ("Duration", self.duration),
                                          ("Calls", self.requests), ("Rate", self.rate))):
            grid.addWidget(QLabel(label, self), i // 2, 2 * (i % 2))
            grid.addWidget(box, i // 2, 2 * (i % 2) + 1)
        row.addLayout(grid)
        self.start_button = QPushButton("Start", self)
        self.start_button.setObjectName("loadStart")
        self.start_button.setToolTip("Call the tool with the arguments of its form, again and again")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setObjectName("loadStop")
        self.stop_button.setToolTip("Start no more calls (those in flight finish); press again to cancel them")
        self.stop_button.clicked.connect(self.stop)
        # Locust's two actions under one small button: the tab shares its width with the tool's form
        self.locust_button = QToolButton(self)
        self.locust_button.setObjectName("loadLocust")
        self.locust_button.setText("Locust")
        self.locust_button.setToolTip("Run this load test with Locust, from many machines, and read its results back "
                                      "(docs/load.md#locust)")
        self.locust_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.locust_button)
        self.export_action = menu.addAction("Export for Locust…", lambda: self.export_locust())
        self.export_action.setObjectName("loadExportLocust")
        self.export_action.setToolTip("Write the tool, the form's arguments and these bounds as a locustfile")
        self.open_action = menu.addAction("Open Locust results…", lambda: self.open_locust())
        self.open_action.setObjectName("loadOpenLocust")
        self.open_action.setToolTip("Read a Locust run's CSV files (PREFIX_stats.csv) into the plots and Compare runs")
        self.locust_button.setMenu(menu)
        row.addStretch(1)
        lay.addLayout(row)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        buttons.addWidget(self.locust_button)
        lay.addLayout(buttons)
        self.status = QLabel(self)
        self.status.setObjectName("loadStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        self.summary = QLabel(self)
        self.summary.setObjectName("loadSummary")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        self.pages = QTabWidget(self)
        self.pages.setObjectName("loadPages")
        self.pages.setDocumentMode(True)
        self.charts: LiveCharts | None = None  # built when first needed: the window opens without them
        self.compare: CompareView | None = None
        lay.addWidget(self.pages, 1)
        self._say("Calls the tool with the arguments of its form (the Arguments tab above), many times and several "
                  "at once; every call is in the traffic pane.", "muted")

    def plots(self) -> tuple[LiveCharts, CompareView]:
        """The plots and the comparison, built the first time the tab is shown or a run starts."""
        if self.charts is None or self.compare is None:
            from .load_charts import CompareView, LiveCharts

            self.charts = LiveCharts(self.pages)
            self.compare = CompareView(self.pages)
            self.pages.addTab(self.charts, "Live")
            self.pages.addTab(self.compare, "Compare runs")
            self._dark = theme.is_dark()
        return self.charts, self.compare

    def showEvent(self, event: Any) -> None:
        self.plots()
        super().showEvent(event)

    # ------------------------------------------------------------------ the panel's side
    def set_tool(self, tool: dict[str, Any] | None) -> None:
        self.tool = tool
        if theme.is_dark() != self._dark and self.charts is not None and self.compare is not None:
            self._dark = theme.is_dark()
            self.charts.restyle()
            self.compare.restyle()
        self._update_buttons()

    # ------------------------------------------------------------------ running
    def options(self) -> LoadOptions:
        return LoadOptions.resolve(self.concurrency.value(), self.duration.value() or None,
                                   self.requests.value() or None, self.rate.value() or None)

    def start(self) -> LoadRun | None:
        """Start a run of the tool shown (after the confirmation, for a destructive tool: then None)."""
        tool, conn = self.tool, self.connection()
        if self.running or self._confirming or tool is None:
            return None
        if conn is None or conn.session.client is None:
            self._say("Not connected: connect the server first.", "error")
            return None
        if getattr(conn.session, "read_only", False):
            self._say("A tapped server: its host makes the calls; Spyglass only watches.", "error")
            return None
        args, problems = self.arguments()
        if problems:
            self.reveal_problems()
            self._say(f"Not started: {problems} problem{'s' if problems != 1 else ''} in the arguments (marked in "
                      "the form). A load run sends only arguments the form accepts.", "error")
            return None
        options = self.options()
        if load_needs_confirmation(tool, self.confirm_policy()):
            self._confirming = True
            self._update_buttons()
            task = asyncio.ensure_future(self._confirm_then_start(conn, tool, args, options))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            return None
        return self._start(conn, tool, args, options)

    async def _confirm_then_start(self, conn: Any, tool: dict[str, Any], args: Any, options: LoadOptions) -> None:
        try:
            code = await run_dialog(LoadConfirmDialog(tool, options, args, self.window()))
        finally:
            self._confirming = False
            self._update_buttons()
        if code == QDialog.DialogCode.Accepted:
            self._start(conn, tool, args, options)
        else:
            self._say("Not started: you cancelled the confirmation.", "muted")

    def _start(self, conn: Any, tool: dict[str, Any], args: Any, options: LoadOptions) -> LoadRun | None:
        if conn is not self.connection() or not lists(conn.session.tools, tool.get("name")):
            # a run goes only to the selected server, with a tool it lists (it may have changed meanwhile)
            self._say(f"Not started: {visible(conn.name, 60)} is not the selected server or does not list "
                      f"{visible(tool.get('name'), 60)}.", "error")
            return None
        name = str(tool.get("name"))
        run = LoadRun(tool_call(conn.session, name, args if isinstance(args, dict) else {}), options, tool=name)
        self.run = run
        self.run_label = f"{time.strftime('%H:%M:%S')} · {visible(name, 60)} on {visible(conn.name, 60)} · " \
                         f"{options.concurrency} at once"
        charts, _ = self.plots()
        charts.reset()
        self.pages.setCurrentWidget(charts)
        self._active = True
        self.job = asyncio.ensure_future(self._run(run))
        self._say(f"Running {visible(name, 200)}: {options.describe()}.", "connecting")
        self.timer.start()
        self._update_buttons()
        return run

    async def _run(self, run: LoadRun) -> None:
        try:
            summary = await run.run()
        except Exception as exc:  # a bug of ours: said, not lost
            log.exception("load run of %s", run.tool)
            self._say(f"The load run failed: {type(exc).__name__}: {exc}", "error")
            return
        finally:
            self._active = False
            self.timer.stop()
            self.refresh()
            self._update_buttons()
        self.plots()[1].add(self.run_label, run, summary)
        failed = summary["toolErrors"] + summary["errors"]
        how = "stopped by you" if run.stopped else \
            f"stopped: {visible(run.gone, 200)}" if run.gone else "finished"
        self._say(f"{visible(run.tool, 200)}: {how} · {summary['requests']:,} calls in "
                  f"{summary['elapsedMs'] / 1000:.1f} s · {failed:,} failed.", "error" if failed or run.gone else
                  "connected")
        self.summary.setText(summary_line(summary))

    @property
    def running(self) -> bool:
        return self._active

    def stop(self) -> None:
        """Start no more calls; pressed again while calls are in flight, cancel them."""
        run = self.run
        if run is None or not self.running:
            return
        if run.stopped:
            run.cancel()
            self._say("Cancelling the calls in flight…", "connecting")
        else:
            run.stop()
            self._say(f"Stopping: no more calls start; {run.in_flight} in flight finish (press Stop again to "
                      "cancel them).", "connecting")
        self._update_buttons()

    def refresh(self) -> None:
        run = self.run
        if run is None:
            return
        snap = run.snapshot()
        self.plots()[0].show_snapshot(snap)
        if snap.running:
            self.summary.setText(live_line(snap))

    # ------------------------------------------------------------------ Locust
    def export_locust(self, path: str | None = None) -> str | None:
        """Write the tool, the form's arguments and the tab's bounds as a locustfile; the path written, or None."""
        tool, conn = self.tool, self.connection()
        if tool is None or conn is None or conn.session.client is None:
            self._say("Not exported: connect the server and pick a tool first.", "error")
            return None
        if conn.session.spec.url is None:
            self._say("Not exported: Locust's users reach a server over HTTP, and this one runs as a command "
                      "(stdio). Export from a server added by its URL.", "error")
            return None
        args, problems = self.arguments()
        if problems:
            self.reveal_problems()
            self._say(f"Not exported: {problems} problem{'s' if problems != 1 else ''} in the arguments (marked in "
                      "the form).", "error")
            return None
        name = str(tool.get("name"))
        if path is None:
            stem = "".join(c if c.isalnum() else "_" for c in name)[:40] or "tool"
            path, _ = QFileDialog.getSaveFileName(self, "Export for Locust", f"{stem}_load.py", "Python (*.py)")
            if not path:
                return None
        options = self.options()
        scenario = load_scenario(conn.session.spec.url, conn.session.client.protocol_version or "2025-11-25", name,
                                 args if isinstance(args, dict) else {}, concurrency=options.concurrency,
                                 duration_s=options.duration_s, requests=options.requests, rate=options.rate,
                                 headers=dict(conn.session.spec.headers or {}),
                                 source=f"Spyglass's Load tab, {conn.name}")
        try:
            write_locustfile(path, scenario)
        except OSError as exc:
            self._say(f"Not exported: {visible(path, 200)}: {exc.strerror or exc}", "error")
            return None
        bound = f" -t {options.duration_s:g}s" if options.duration_s else ""
        self._say(f"Wrote {visible(path, 200)}. Run it with: locust -f {visible(path, 200)} --headless "
                  f"-u {options.concurrency} -r {options.concurrency}{bound} --csv locust", "connected")
        return path

    def open_locust(self, path: str | None = None) -> dict[str, Any] | None:
        """Read a Locust run's CSV files into the plots and Compare runs: the shown tool's row when Locust has one,
        else every request; its summary, or None."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open Locust results", "",
                                                  "Locust statistics (*_stats.csv);;CSV (*.csv)")
            if not path:
                return None
        prefix = path[: -len("_stats.csv")] if path.endswith("_stats.csv") else path
        try:
            result = read_locust(prefix)
            name = f"tools/call {self.tool.get('name')}" if self.tool is not None else None
            if name is None or name not in {row.name for row in result.rows}:
                name = None
            summary, snapshot, stats = result.summary(name), result.snapshot(name), result.stats(name)
        except E.SpyglassError as exc:
            self._say(f"Not opened: {visible(exc.message, 300)}", "error")
            return None
        charts, compare = self.plots()
        charts.reset()
        charts.show_snapshot(snapshot)
        self.pages.setCurrentWidget(charts)
        label = f"Locust · {visible(summary['tool'], 60)} · {Path(prefix).name}" + \
            (f" · {summary['users']} users" if summary.get("users") else "")
        compare.add(label, SimpleNamespace(stats=stats), summary)
        whose = "" if name is None or result.timeline_of(name) == name or not result.history else \
            " The timeline is every request's (Locust writes one a name with --csv-full-history)."
        self._say(f"Locust run {visible(Path(prefix).name, 100)}: {visible(summary['tool'], 100)}, "
                  f"{summary['requests']:,} requests.{whose}", "connected")
        self.summary.setText(summary_line(summary))
        return summary

    # ------------------------------------------------------------------ state
    def _update_buttons(self) -> None:
        busy = self.running or self._confirming
        self.start_button.setEnabled(not busy and self.tool is not None)
        self.stop_button.setEnabled(self.running)
        self.stop_button.setText("Cancel calls" if self.run is not None and self.run.stopped and self.running
                                 else "Stop")
        for box in (self.concurrency, self.duration, self.requests, self.rate):
            box.setEnabled(not busy)

    def _say(self, text: str, colour: str) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {theme.colour(colour).name()};")


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g} ms" if value < 1000 else f"{value / 1000:.3g} s"


def live_line(s: Snapshot) -> str:
    kinds = ", ".join(f"{k} {n:,}" for k, n in sorted(s.errors_by_kind.items(), key=lambda kv: -kv[1]))
    return (f"{s.completed:,} calls · {s.in_flight} in flight · {s.throughput:,.0f} calls/s · "
            f"p50 ≤ {_ms(s.p50_ms)} · p90 ≤ {_ms(s.p90_ms)} · p99 ≤ {_ms(s.p99_ms)} · max {_ms(s.max_ms)} · "
            f"{s.tool_errors + s.errors:,} failed" + (f" ({kinds})" if kinds else "") + f" · {s.elapsed_s:.1f} s")


def summary_line(summary: dict[str, Any]) -> str:
    lat = summary.get("latencyMs") or {}
    kinds = ", ".join(f"{k} {n:,}" for k, n in summary.get("errorsByKind", {}).items())
    return (f"{summary['requests']:,} calls · {summary['ok']:,} ok · {summary['toolErrors']:,} tool errors · "
            f"{summary['errors']:,} errors" + (f" ({kinds})" if kinds else "")
            + f" · error rate {summary['errorRate'] * 100:.2f} % · {summary['throughput']:,.1f} calls/s · "
            + " · ".join(f"{k} {_ms(lat.get(k))}" for k in ("min", "mean", "p50", "p90", "p99", "max")))
