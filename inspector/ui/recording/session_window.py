"""A kept session, read-only (`sessionWindow`): what could not be read (`sessionProblems`), its servers
(`sessionServers`), each server's tabs as recorded (`SurfaceView`), and a traffic dock over every frame.
From here a server is replayed against another (`actionReplaySession`), compared with another
(`actionCompareWith`), served as a mock (`actionServeMock`), and the session exported (`actionExportSession`).

It is a window of its own (the main window stays usable) and holds nothing live: a session is what
happened, shown as it happened.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QFrame,
    QListView,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from ...checks.rules import Finding
from ...config import ServerSpec
from ...recording.files import Opened
from ...recording.findings import judge_recording
from ...recording.replay import requests_of
from ...recording.surface import Exchange, ServerSurface
from ..base import design, theme
from ..base.items import DESCRIPTION_ROLE, NAME_ROLE, ItemDelegate
from ..base.layout import text_label
from ..base.text import visible
from ..render.text import human_size
from ..traffic.pane import TrafficPane
from ..traffic.timeline import TimelineView
from .compare_view import CompareDialog
from .export_dialog import ExportSessionDialog
from .mock_view import MockDialog, MockServing
from .replay_view import ReplayDialog
from .sides import LiveServer, Side, live_side, recorded_side
from .surface_view import SurfaceView

log = logging.getLogger("spyglass.ui.sessions")

FINDINGS_STEP = 2000  # records whose findings go to the traffic view in one step (about 5 ms)

KINDS = {"sqlite": "a session file of the window", "mcpsession": "a portable .mcpsession"}


def window_action(window: QWidget, text: str, slot: Callable[[], Any], name: str, tip: str = "",
                  shortcut: Any = None) -> QAction:
    a = QAction(text, window)
    a.setObjectName(name)
    if tip:
        a.setToolTip(tip)
        a.setStatusTip(tip)
    if shortcut:
        a.setShortcut(QKeySequence(shortcut))
    a.triggered.connect(lambda _=False: slot())
    window.addAction(a)
    return a


def started_text(opened: Opened) -> str:
    try:
        return dt.datetime.fromtimestamp(opened.store.started).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError, TypeError):
        return "an unknown time"


class SessionWindow(QMainWindow):
    """`live()` lists the main window's servers (replay and compare targets); `exported(path, count)` hears
    of an export."""

    def __init__(self, opened: Opened, parent: QWidget | None = None, *,
                 live: Callable[[], list[LiveServer]] = list,
                 exported: Callable[[str, int], None] | None = None,
                 findings: dict[int, list[Finding]] | None = None,
                 add_server: Callable[[ServerSpec], Any] | None = None, loading: bool = False) -> None:
        super().__init__(parent)
        self.loading = loading  # still being read (`WindowSessions` reads it, then calls `loaded`)
        self.setObjectName("sessionWindow")
        self.setAttribute(Qt.WA_DeleteOnClose)
        # the platform adds " — Spyglass" (the application's display name) to every window title
        self.setWindowTitle(f"{opened.path.name} (read-only)")
        self.opened = opened
        self.live = live
        self.exported = exported
        self.add_server = add_server
        self.mocks = MockServing(opened)
        self.dialogs: list[QWidget] = []
        self._found_calls: dict[str, list[Exchange]] = {}
        self._found_requests: dict[str, list[Exchange]] = {}
        self.surfaces = [] if loading else [s for s in opened.surfaces.values() if s.frames or s.definition]
        self.views: dict[str, SurfaceView] = {}
        central = QWidget(self)
        lay = QVBoxLayout(central)
        lay.setContentsMargins(design.margins("s", "s", "s", "none"))
        self.problems = self._problems_banner(central)
        lay.addWidget(self.problems)
        self.summary = text_label("", central, name="sessionSummary", role="muted")
        self._summarise()
        lay.addWidget(self.summary)
        self.servers = QListView(central)
        self.servers.setObjectName("sessionServers")
        self.server_model = QStandardItemModel(self.servers)
        self.servers.setModel(self.server_model)
        self.servers.setItemDelegate(ItemDelegate(self.servers))
        self.servers.setSelectionMode(QAbstractItemView.SingleSelection)
        self.servers.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.servers.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        for surface in self.surfaces:
            self.server_model.appendRow(self._server_item(surface))
        self.pages = QStackedWidget(central)
        self.pages.setObjectName("sessionPages")
        self.empty = text_label("", self.pages, name="sessionEmpty", role="muted")
        self._say_empty()
        self.empty.setAlignment(Qt.AlignCenter)
        self.pages.addWidget(self.empty)
        split = QSplitter(Qt.Horizontal, central)
        split.setObjectName("sessionSplitter")
        split.addWidget(self.servers)
        split.addWidget(self.pages)
        split.setStretchFactor(1, 1)
        split.setSizes([220, 900])
        split.setChildrenCollapsible(False)
        lay.addWidget(split, 1)
        self.setCentralWidget(central)
        self.traffic = TrafficPane(opened.store, self, flush_ms=None)
        if not loading:
            self._judge(findings)
        self.traffic_dock = QDockWidget("Traffic", self)
        self.traffic_dock.setObjectName("sessionTrafficDock")
        self.traffic_dock.setWidget(self.traffic)
        self.addDockWidget(Qt.BottomDockWidgetArea, self.traffic_dock)
        self.timeline = TimelineView(opened.store, self)
        self.timeline_dock = QDockWidget("Timeline", self)
        self.timeline_dock.setObjectName("sessionTimelineDock")
        self.timeline_dock.setWidget(self.timeline)
        self.addDockWidget(Qt.BottomDockWidgetArea, self.timeline_dock)
        self.tabifyDockWidget(self.traffic_dock, self.timeline_dock)
        self.traffic_dock.raise_()
        self.timeline.frameActivated.connect(self._timeline_frame)
        self.traffic.recordSelected.connect(lambda n: self.timeline.select(n) if n >= 0 else None)
        self._build_actions()
        self.servers.selectionModel().currentChanged.connect(lambda cur, _p: self.show_server(cur.row()))
        if self.surfaces:
            self.servers.setCurrentIndex(self.server_model.index(0, 0))
        self._update_actions()
        self.resize(1200, 820)
        self.resizeDocks([self.traffic_dock], [250], Qt.Vertical)

    def _summarise(self) -> None:
        n = len(self.surfaces)
        self.summary.setText(
            f"Reading… {len(self.opened.store):,} frames so far · {KINDS.get(self.opened.kind, self.opened.kind)}"
            if self.loading else
            f"Recorded {started_text(self.opened)} · {len(self.opened.store):,} frames · {n} server"
            f"{'s' if n != 1 else ''} · {KINDS.get(self.opened.kind, self.opened.kind)} · read-only")

    def _say_empty(self) -> None:
        self.empty.setText("Reading the session: its servers appear when every frame is read." if self.loading else
                           "No server could be read from this session." if self.problem_lines else
                           "This session has no server traffic: nothing was connected while it was recorded.")

    def reading(self) -> None:
        """More frames were read (the traffic pane and the timeline follow the store by themselves)."""
        self._summarise()

    def loaded(self, found: dict[int, list[Finding]] | None) -> None:
        """Every frame is read, the servers rebuilt (`opened.surfaces`) and the frames judged: show them."""
        for _ in self.showing(found):
            pass

    def showing(self, found: dict[int, list[Finding]] | None) -> Iterator[None]:
        """`loaded` a step at a time, each a few milliseconds, for the loop to run between (a million log rows,
        a server's twenty thousand calls, the findings of a flood of broken frames: each its own turns).
        `loading` turns False at the last step, when everything is shown."""
        self.surfaces = [s for s in self.opened.surfaces.values() if s.frames or s.definition]
        old = self.problems
        self.problems = self._problems_banner(old.parentWidget())
        self.centralWidget().layout().replaceWidget(old, self.problems)
        old.deleteLater()
        yield
        for surface in self.surfaces:
            self.server_model.appendRow(self._server_item(surface))
            yield
        yield from self._judging(found)
        if self.surfaces and self.surfaces[0].server_id not in self.views:  # the first server's tabs, a page a step
            surface = self.surfaces[0]
            view = SurfaceView(surface, self.pages, calls=self._calls(surface), now=False)
            for _ in view.building():
                yield
            self._keep_view(view)
            self.requests_of(surface)
            yield
        self.loading = False
        self._summarise()
        self._say_empty()
        if self.surfaces:
            self.servers.setCurrentIndex(self.server_model.index(0, 0))
        self._update_actions()

    def _calls(self, surface: ServerSurface) -> list[Exchange]:
        """A recorded server's calls, found once (a session's servers do not change once read)."""
        calls = self._found_calls.get(surface.server_id)
        if calls is None:
            calls = self._found_calls[surface.server_id] = surface.calls()
        return calls

    def requests_of(self, surface: ServerSurface) -> list[Exchange]:
        """The requests a replay of `surface` sends, found once."""
        found = self._found_requests.get(surface.server_id)
        if found is None:
            found = self._found_requests[surface.server_id] = requests_of(surface)
        return found

    def _judge(self, found: dict[int, list[Finding]] | None) -> None:
        for _ in self._judging(found):
            pass

    def _judging(self, found: dict[int, list[Finding]] | None) -> Iterator[None]:
        """The findings a live window would have shown (a session file does not keep them): the Expert
        column and the `expert` / `severity` filters work on an opened session too. `found`: judged
        already (where the session was read). Handed to the traffic view FINDINGS_STEP records a step."""
        if found is None:
            try:
                found = judge_recording(self.opened.store, self.opened.surfaces)
            except Exception:  # a bug in a rule must not keep a session from opening
                log.exception("judging the frames of %s failed", self.opened.path)
                return
        items = list(found.items())
        for start in range(0, len(items), FINDINGS_STEP):
            self.traffic.model.set_findings({n: [f"{f.severity}: {f.message} [{f.rule}]" for f in fs]
                                             for n, fs in items[start:start + FINDINGS_STEP]})
            yield

    def _timeline_frame(self, n: int) -> None:
        self.traffic_dock.show()
        self.traffic_dock.raise_()
        self.traffic.select_record(n)

    def _problems_banner(self, parent: QWidget) -> QFrame:
        lines = [visible(p, 500) for p in self.opened.problems]
        lines += [f"{visible(s.name, 60)}: {visible(p, 500)}" for s in self.surfaces for p in s.problems]
        frame = QFrame(parent)
        frame.setObjectName("sessionProblems")
        frame.setStyleSheet(design.box_css("#sessionProblems", theme.colour("banner").name(),
                                           theme.colour("banner-border").name()))
        fl = QVBoxLayout(frame)
        fl.setContentsMargins(design.margins("s", "m"))
        shown = lines[:12] + ([f"… and {len(lines) - 12} more"] if len(lines) > 12 else [])
        label = text_label("Part of this session could not be read; what could is shown.\n" +
                           "\n".join(f"• {line}" for line in shown), frame, name="sessionProblemsText")
        fl.addWidget(label)
        frame.setVisible(bool(lines))
        self.problem_lines = lines
        return frame

    def _server_item(self, surface: ServerSurface) -> QStandardItem:
        item = QStandardItem()
        item.setEditable(False)
        calls = len(self._calls(surface))
        item.setData(visible(surface.name, 120), Qt.DisplayRole)
        item.setData(surface.server_id, Qt.UserRole)
        item.setData(visible(surface.server_id, 120) if surface.server_id != surface.name else "", NAME_ROLE)
        item.setData(f"{surface.revision or 'unknown revision'} · {calls} call{'s' if calls != 1 else ''}",
                     DESCRIPTION_ROLE)
        item.setData(f"{surface.name}: {surface.frames:,} frames, {calls} call{'s' if calls != 1 else ''}, "
                     f"{len(surface.tools)} tools", Qt.ToolTipRole)
        item.setData(theme.status_icon("connected" if surface.frames else "idle", 20).pixmap(20, 20),
                     Qt.DecorationRole)
        return item

    def _build_actions(self) -> None:
        self.act_replay = window_action(self, "Replay against…", self.replay_dialog, "actionReplaySession",
                                        "Send this server's recorded requests to a server and compare the answers")
        self.act_compare = window_action(self, "Compare with…", self.compare_dialog, "actionCompareWith",
                                         "What changed between this server and another (recorded or live)")
        self.act_mock = window_action(self, "Serve as mock…", self.mock_dialog, "actionServeMock",
                                      "Serve this server as a mock that answers as recorded (stdio or HTTP)")
        self.act_export = window_action(self, "Export session…", self.export_dialog, "actionExportSession",
                                        "Write this session as .mcpsession, HAR or OTLP JSON (secrets masked)")
        self.act_close = window_action(self, "Close", self.close, "actionCloseSession", "", QKeySequence.Close)
        bar = QToolBar("Session", self)
        bar.setObjectName("sessionToolbar")
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonTextOnly)
        for a in (self.act_replay, self.act_compare, self.act_mock, self.act_export):
            bar.addAction(a)
        self.addToolBar(bar)
        menu = self.menuBar().addMenu("&Session")
        menu.setObjectName("sessionMenu")
        for a in (self.act_replay, self.act_compare, self.act_mock, self.act_export, None, self.act_close):
            if a is None:
                menu.addSeparator()
            else:
                menu.addAction(a)
        view = self.menuBar().addMenu("&View")
        view.setObjectName("sessionViewMenu")
        toggle = self.traffic_dock.toggleViewAction()
        toggle.setShortcut(QKeySequence("Ctrl+Shift+T"))
        view.addAction(toggle)

    # ------------------------------------------------------------------ servers
    def selected_surface(self) -> ServerSurface | None:
        row = self.servers.currentIndex().row()
        return self.surfaces[row] if 0 <= row < len(self.surfaces) else None

    def select_server(self, name: str) -> bool:
        for row, surface in enumerate(self.surfaces):
            if name in (surface.name, surface.server_id):
                self.servers.setCurrentIndex(self.server_model.index(row, 0))
                return True
        return False

    def view_of(self, surface: ServerSurface) -> SurfaceView:
        """The tabs of `surface`, built when first shown."""
        view = self.views.get(surface.server_id)
        if view is None:
            view = self._keep_view(SurfaceView(surface, self.pages, calls=self._calls(surface)))
        return view

    def _keep_view(self, view: SurfaceView) -> SurfaceView:
        view.calls.recordWanted.connect(self.show_record)
        self.pages.addWidget(view)
        self.views[view.surface.server_id] = view
        return view

    def show_server(self, row: int) -> None:
        surface = self.surfaces[row] if 0 <= row < len(self.surfaces) else None
        self.pages.setCurrentWidget(self.view_of(surface) if surface is not None else self.empty)
        self._update_actions()

    def current_view(self) -> SurfaceView | None:
        surface = self.selected_surface()
        return self.view_of(surface) if surface is not None else None

    def show_record(self, n: int) -> None:
        self.traffic_dock.show()
        self.traffic_dock.raise_()
        self.traffic.select_record(n)

    def _update_actions(self) -> None:
        surface = self.selected_surface()
        self.act_replay.setEnabled(surface is not None and bool(surface.frames))
        self.act_compare.setEnabled(surface is not None)
        self.act_mock.setEnabled(surface is not None and any(x.answer is not None for x in surface.exchanges))
        self.act_export.setEnabled(len(self.opened.store) > 0 and not self.loading)
        n = len(self.requests_of(surface)) if surface is not None else 0
        self.act_replay.setToolTip(f"Send this server's {n} recorded request{'s' if n != 1 else ''} to a server "
                                   "and compare the answers")

    # ------------------------------------------------------------------ replay, compare, export
    def _keep(self, dialog: QWidget) -> QWidget:
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        self.dialogs.append(dialog)
        dialog.destroyed.connect(lambda _=None, d=dialog: d in self.dialogs and self.dialogs.remove(d))
        dialog.show()
        return dialog

    def replay_dialog(self) -> ReplayDialog | None:
        surface = self.selected_surface()
        if surface is None:
            return None
        dialog = ReplayDialog(surface, self.live, self)
        self._keep(dialog)
        return dialog

    def mock_dialog(self) -> MockDialog | None:
        surface = self.selected_surface()
        if surface is None:
            return None
        dialog = MockDialog(self.opened, surface, self.mocks, self, add_server=self.add_server)
        self._keep(dialog)
        return dialog

    def compare_sides(self, surface: ServerSurface) -> list[Side]:
        others = [recorded_side(s, self.opened.path.name) for s in self.surfaces if s is not surface and s.frames]
        return others + [live_side(server) for server in self.live()]

    def compare_dialog(self) -> CompareDialog | None:
        surface = self.selected_surface()
        if surface is None:
            return None
        dialog = CompareDialog(recorded_side(surface, self.opened.path.name), self.compare_sides(surface), self)
        self._keep(dialog)
        return dialog

    def export_dialog(self) -> ExportSessionDialog:
        stem = self.opened.path.name[: -len(self.opened.path.suffix)] if self.opened.path.suffix else \
            self.opened.path.name
        suggested = str(self.opened.path.with_name(f"{stem}-shared.mcpsession"))
        dialog = ExportSessionDialog(self.opened.store, self, suggested=suggested, exported=self._exported)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def _exported(self, path: str, count: int) -> None:
        size = ""
        try:
            size = f" ({human_size(Path(path).stat().st_size)})"
        except OSError:
            pass
        self.statusBar().showMessage(f"Exported {count:,} to {path}{size}.", 10000)
        if self.exported is not None:
            self.exported(path, count)

    def closeEvent(self, event: QCloseEvent) -> None:
        for dialog in list(self.dialogs):
            dialog.close()
        super().closeEvent(event)
        if event.isAccepted():
            self.mocks.close()
            self.opened.store.close()
