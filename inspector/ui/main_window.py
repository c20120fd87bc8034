"""The main window (`mainWindow`): servers sidebar, tools, server info, traffic and log docks.

Everything the window does to a server is an asyncio task on the qasync loop;
failures become a status in the sidebar or a banner at the top of the window,
never a modal dialog and never an exception escaping a slot.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Awaitable

from PySide6.QtCore import QByteArray, QItemSelectionModel, QModelIndex, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (QApplication, QDockWidget, QGridLayout, QHBoxLayout, QLabel, QMainWindow, QPushButton,
                               QSizePolicy, QSplitter, QStackedWidget, QTabWidget, QToolButton, QVBoxLayout, QWidget)

from ..config import ServerSpec
from . import theme
from ._text import visible
from .add_server_dialog import AddServerDialog
from .banner import Banner
from .connection import Connection, Status
from .log_pane import LogPane
from .server_info import ServerInfoView
from .server_list import ServerListView, ServerModel, StatusCard
from .tool_panel import ToolCallPanel  # issue 6: form, Call/Cancel, results, history (replaces ToolDetail)
from .tool_list import CHANGE_ROLE, ToolListPanel

log = logging.getLogger("spyglass.ui")

DEMO_NAME = "demo (built-in)"
TRAFFIC_FLUSH_MS = 100
SETTINGS_VERSION = 1


def demo_spec() -> ServerSpec:
    from ..demo import launch_command  # `spyglass --demo-server` in a frozen bundle

    return ServerSpec(name=DEMO_NAME, command=launch_command(), transport="stdio")


class MainWindow(QMainWindow):
    closed = Signal()
    selectionChanged = Signal()

    def __init__(self, settings: QSettings | None = None, store_path: str | None = None,
                 parent: QWidget | None = None, catalog: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("Spyglass")
        self.settings = settings if settings is not None else QSettings("Spyglass", "Spyglass")
        self._store_path = store_path
        self.store: Any = None
        self.traffic_pane: Any = None
        self._follow_selection = True
        self.persist = True  # save geometry, docks and servers on shutdown
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closing = False
        self._closed_done = False
        self._shutdown_done = False
        self.servers = ServerModel(self)
        # desktop integration (issue 9): the server catalog; menus/shortcuts are installed below
        from .catalog_link import CatalogLink

        self.catalog_link = CatalogLink(self, catalog)
        self.catalog = self.catalog_link.catalog
        self._build_actions()
        self._build_central()
        # issue 6 (calling tools): call manager, server-request dialogs, argument memory, running marks
        from .tool_panel import install as install_tool_calls

        install_tool_calls(self)
        self._build_docks()
        self._build_auth()  # issue 10: the Authorization tab and per-server OAuth (see _build_auth)
        self._build_features()  # issue 7: Resources, Prompts and Roots tabs, log level controls (see _build_features)
        self._build_menus()
        self.status_label = QLabel(self)
        self.status_label.setObjectName("statusSummary")
        self.statusBar().addPermanentWidget(self.status_label)
        self.resize(1240, 820)
        from . import desktop  # issue 9: File menu, import/export, preferences, palette, shortcuts, About

        desktop.install(self)
        self._restore_window()
        self._update_actions()
        self._update_summary()

    # ------------------------------------------------------------------ construction
    def _build_actions(self) -> None:
        def act(text: str, slot: Any, shortcut: Any = None, name: str = "", tip: str = "") -> QAction:
            a = QAction(text, self)
            a.setObjectName(name)
            if shortcut:
                a.setShortcut(QKeySequence(shortcut))
            if tip:
                a.setToolTip(tip)
                a.setStatusTip(tip)
            a.triggered.connect(slot)
            return a

        self.act_add = act("Add server…", self.add_server_dialog, QKeySequence.New, "actionAddServer",
                           "Add a server: a command over stdio, or a URL")
        self.act_connect = act("Connect", lambda: self._run_on_selected("connect"), None, "actionConnect",
                               "Connect the selected server")
        self.act_disconnect = act("Disconnect", lambda: self._run_on_selected("disconnect"), None,
                                  "actionDisconnect", "Disconnect the selected server (ends its process)")
        self.act_restart = act("Restart", lambda: self._run_on_selected("restart"), "Ctrl+R", "actionRestart",
                               "Disconnect and connect again")
        self.act_duplicate = act("Duplicate", self.duplicate_selected, None, "actionDuplicate",
                                 "Add a copy of the selected server")
        self.act_remove = act("Remove", self.remove_selected, None, "actionRemove",
                              "Disconnect and remove the selected server")
        self.act_refresh = act("Refresh tools", self.refresh_selected_tools, "F5", "actionRefreshTools",
                               "List the selected server's tools again")
        self.act_demo = act("Add the demo server", lambda: self.add_server(demo_spec()), None,
                            "actionAddDemo", "Add and connect the built-in demo server")
        self.act_quit = act("Quit", self.close, QKeySequence.Quit, "actionQuit")
        self.act_add.setIconText("Add…")

    def _build_central(self) -> None:
        self.banner = Banner(self)
        # sidebar
        sidebar = QWidget(self)
        sidebar.setObjectName("sidebar")
        heading = QLabel("Servers", sidebar)
        f = heading.font()
        f.setBold(True)
        heading.setFont(f)
        buttons = QGridLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(4)
        self.server_buttons: dict[str, QToolButton] = {}
        for i, a in enumerate((self.act_add, self.act_connect, self.act_disconnect,
                               self.act_restart, self.act_duplicate, self.act_remove)):
            b = QToolButton(sidebar)
            b.setDefaultAction(a)
            b.setObjectName("button" + a.objectName().removeprefix("action"))
            b.setToolButtonStyle(Qt.ToolButtonTextOnly)
            b.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
            buttons.addWidget(b, i // 3, i % 3)
            self.server_buttons[a.objectName()] = b
        self.server_view = ServerListView(sidebar)
        self.server_view.setModel(self.servers)
        self.server_view.addActions([self.act_connect, self.act_disconnect, self.act_restart, self.act_duplicate,
                                     self.act_remove, self.act_refresh])
        self.server_view.selectionModel().currentChanged.connect(self._current_server_changed)
        self.status_card = StatusCard(sidebar)
        self.status_card.retry.connect(lambda: self._run_on_selected("restart"))
        s = QVBoxLayout(sidebar)
        s.setContentsMargins(6, 6, 0, 6)
        s.addWidget(heading)
        s.addLayout(buttons)
        s.addWidget(self.server_view, 1)
        s.addWidget(self.status_card)
        # main area
        self.pages = QStackedWidget(self)
        self.pages.setObjectName("mainPages")
        self.pages.addWidget(self._empty_page())
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("serverTabs")
        self.tabs.setDocumentMode(True)
        tools_page = QSplitter(Qt.Horizontal, self)
        tools_page.setObjectName("toolsSplitter")
        self.tool_panel = ToolListPanel(tools_page)
        self.tool_detail = ToolCallPanel(tools_page)  # issue 6; wired by tool_panel.install() below
        self.tool_panel.toolSelected.connect(self._tool_selected)
        tools_page.addWidget(self.tool_panel)
        tools_page.addWidget(self.tool_detail)
        tools_page.setStretchFactor(0, 1)
        tools_page.setStretchFactor(1, 1)
        tools_page.setSizes([430, 520])
        self.info_view = ServerInfoView(self)
        self.tabs.addTab(tools_page, "Tools")
        self.tabs.addTab(self.info_view, "Server info")
        self.pages.addWidget(self.tabs)
        self.splitter = QSplitter(Qt.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(sidebar)
        self.splitter.addWidget(self.pages)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([290, 950])
        self.splitter.setChildrenCollapsible(False)
        central = QWidget(self)
        c = QVBoxLayout(central)
        c.setContentsMargins(4, 4, 4, 0)
        c.addWidget(self.banner)
        c.addWidget(self.splitter, 1)
        self.setCentralWidget(central)

    def _empty_page(self) -> QWidget:
        page = QWidget(self)
        page.setObjectName("emptyPage")
        title = QLabel("No server yet", page)
        title.setObjectName("emptyTitle")
        self.empty_title = title
        f = title.font()
        f.setPointSizeF(f.pointSizeF() * 1.5)
        f.setBold(True)
        title.setFont(f)
        title.setAlignment(Qt.AlignCenter)
        text = QLabel("Add an MCP server to see its tools, call them, and watch every message on the wire.\n"
                      "You can also start Spyglass with a server:  spyglass -- COMMAND ARGS…", page)
        text.setTextFormat(Qt.PlainText)
        text.setAlignment(Qt.AlignCenter)
        text.setWordWrap(True)
        add = QPushButton("Add server…", page)
        add.setObjectName("emptyAddServer")
        add.clicked.connect(self.act_add.trigger)
        demo = QPushButton("Try the demo server", page)
        demo.setObjectName("emptyAddDemo")
        demo.clicked.connect(self.act_demo.trigger)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(add)
        buttons.addWidget(demo)
        buttons.addStretch(1)
        lay = QVBoxLayout(page)
        lay.addStretch(2)
        lay.addWidget(title)
        lay.addWidget(text)
        lay.addSpacing(12)
        lay.addLayout(buttons)
        lay.addStretch(3)
        return page

    # ------------------------------------------------------------------ authorization (issue 10)
    # All of the window's OAuth wiring: the tab, the sessions (auth_panel.WindowAuth), and the three hooks
    # marked "issue 10" in add_server, duplicate_selected and _show_selected.
    def _build_auth(self) -> None:
        from .auth_panel import AuthPanel, WindowAuth

        self.auth = WindowAuth(self, warn=lambda text: self.show_banner(text, level="warning"))
        self.auth_panel = AuthPanel(self)
        self.auth_panel.token_view.spawn = self._spawn
        self.auth_panel.signInAgain.connect(lambda c: self._spawn(c.restart(), f"signing in to {c.name} again"))
        self.tabs.insertTab(self.tabs.indexOf(self.info_view) + 1, self.auth_panel, "Authorization")

    # ------------------------------------------------------------------ resources, prompts, logging, roots (issue 7)
    # All of issue 7's window wiring is here: the Resources and Prompts tabs after Tools, the Roots tab after
    # Server info, the log controls around serverLog, and one selectionChanged hook. Server info's ping,
    # extensions and cache section live in server_extras.py (shown by ServerInfoView).
    def _build_features(self) -> None:
        from .log_controls import LogControls
        from .prompts_pane import PromptsPane
        from .resources_pane import ResourcesPane
        from .server_extras import RootsEditor
        from .tasks_pane import TasksPane

        self.resources_pane = ResourcesPane(self)
        self.prompts_pane = PromptsPane(self)
        self.tasks_pane = TasksPane(self)
        self.roots_editor = RootsEditor(self)
        self.roots_editor.on_changed = self._save_roots
        self.tabs.insertTab(1, self.resources_pane, "Resources")
        self.tabs.insertTab(2, self.prompts_pane, "Prompts")
        self.tabs.insertTab(3, self.tasks_pane, "Tasks")
        self.tool_detail.calls.updated.connect(self.tasks_pane.call_updated)
        self.tabs.insertTab(self.tabs.indexOf(self.info_view) + 1, self.roots_editor, "Roots")
        self.log_controls = LogControls(self.log_pane)
        self.log_dock.setWidget(self.log_controls)
        self.selectionChanged.connect(self._show_features)

    def _show_features(self) -> None:
        conn = self.selected_connection()
        if conn is not None and not conn.features.roots_loaded:
            conn.features.roots_loaded = True
            entry = self.catalog_link.entry_of(conn)
            if entry is not None and entry.roots is not None:
                saved: Any = entry.roots
            else:  # a server the catalog does not keep (or roots saved by an earlier Spyglass)
                try:
                    saved = json.loads(self.settings.value(f"roots/{conn.spec.name}") or "[]")
                except (TypeError, ValueError):
                    saved = []
            conn.features.roots = [dict(r) for r in saved if isinstance(r, dict) and isinstance(r.get("uri"), str)]
        self.resources_pane.show_connection(conn)
        self.prompts_pane.show_connection(conn)
        self.tasks_pane.show_connection(conn)
        self.roots_editor.show_connection(conn)
        self.log_controls.set_connection(conn)

    def _save_roots(self, conn: Connection) -> None:
        """With the server in the catalog (servers.json); a server it does not keep, in the settings."""
        entry = self.catalog_link.entry_of(conn)
        if entry is None:
            self.settings.setValue(f"roots/{conn.spec.name}", json.dumps(conn.features.roots))
            return
        entry.roots = [dict(r) for r in conn.features.roots]
        self.settings.remove(f"roots/{conn.spec.name}")
        self.catalog_link.save()

    def _build_docks(self) -> None:
        self.traffic_dock = QDockWidget("Traffic", self)
        self.traffic_dock.setObjectName("trafficDock")
        self.traffic_dock.setWidget(self._build_traffic())
        self.log_dock = QDockWidget("Log", self)
        self.log_dock.setObjectName("logDock")
        self.log_pane = LogPane(self.log_dock)
        self.log_dock.setWidget(self.log_pane)
        for dock in (self.traffic_dock, self.log_dock):
            dock.setAllowedAreas(Qt.AllDockWidgetAreas)
            dock.setFeatures(QDockWidget.DockWidgetClosable | QDockWidget.DockWidgetMovable
                             | QDockWidget.DockWidgetFloatable)
        self.addDockWidget(Qt.BottomDockWidgetArea, self.traffic_dock)
        self.addDockWidget(Qt.BottomDockWidgetArea, self.log_dock)
        self.tabifyDockWidget(self.traffic_dock, self.log_dock)  # drag a tab out to see both at once
        self.traffic_dock.raise_()
        self.resizeDocks([self.traffic_dock], [300], Qt.Vertical)
        self._default_state = self.saveState(SETTINGS_VERSION)

    def _build_traffic(self) -> QWidget:
        """The traffic pane over its store; a note (and a banner) when the store cannot be opened."""
        from ..traffic.store import TrafficStore
        from .traffic_pane import TrafficPane

        try:
            self.store = TrafficStore(self._store_path) if self._store_path else TrafficStore()
            self.traffic_pane = TrafficPane(self.store, self, flush_ms=None)  # flushed by our timer below
        except Exception as exc:  # a broken store must not take the window down
            log.exception("could not open the traffic store")
            self.store = None
            message = f"Traffic is not recorded: {exc}"
            note = QLabel(message, self)
            note.setObjectName("trafficUnavailable")
            note.setWordWrap(True)
            QTimer.singleShot(0, lambda: self.show_banner(message))
            return note
        self._flush_timer = QTimer(self)
        self._flush_timer.setObjectName("trafficFlushTimer")
        self._flush_timer.setInterval(TRAFFIC_FLUSH_MS)
        self._flush_timer.timeout.connect(self._flush_traffic)
        self._flush_timer.start()
        return self.traffic_pane

    def _build_menus(self) -> None:
        mb = self.menuBar()
        server = mb.addMenu("&Server")
        server.addActions([self.act_add, self.act_demo])
        server.addSeparator()
        server.addActions([self.act_connect, self.act_disconnect, self.act_restart, self.act_refresh])
        server.addSeparator()
        server.addActions([self.act_duplicate, self.act_remove])
        server.addSeparator()
        server.addAction(self.act_quit)
        view = mb.addMenu("&View")
        view.setObjectName("viewMenu")
        for dock, key in ((self.traffic_dock, "Ctrl+Shift+T"), (self.log_dock, "Ctrl+Shift+L")):
            a = dock.toggleViewAction()
            a.setShortcut(QKeySequence(key))
            view.addAction(a)
        reset = QAction("Reset layout", self)
        reset.setObjectName("actionResetLayout")
        reset.triggered.connect(self.reset_layout)
        view.addAction(reset)
        follow = QAction("Traffic of the selected server only", self)
        follow.setObjectName("actionTrafficFollows")
        follow.setCheckable(True)
        follow.setChecked(self._follow_selection)
        follow.toggled.connect(self._set_follow)
        view.addAction(follow)
        view.addSeparator()
        themes = view.addMenu("Theme")
        group = QActionGroup(self)
        for mode in theme.THEMES:
            a = QAction(mode.capitalize(), self, checkable=True)
            a.setObjectName(f"actionTheme_{mode}")
            a.setChecked(mode == "system")
            a.triggered.connect(lambda _=False, m=mode: self.set_theme(m))
            group.addAction(a)
            themes.addAction(a)
        self._theme_group = group
        help_menu = mb.addMenu("&Help")
        about = QAction("About Spyglass", self)
        about.setObjectName("actionAbout")
        about.triggered.connect(lambda: self.show_about())  # issue 9: inspector/ui/about.py
        help_menu.addAction(about)

    # ------------------------------------------------------------------ servers
    def connections(self) -> list[Connection]:
        return list(self.servers.connections)

    def _unique_id(self, name: str) -> str:
        taken = {c.server_id for c in self.servers.connections}
        base = name or "server"
        if base not in taken:
            return base
        n = 2
        while f"{base} #{n}" in taken:
            n += 1
        return f"{base} #{n}"

    def add_server(self, spec: ServerSpec, *, mode: str | None = None, timeout: float | None = None,
                   connect: bool = True, select: bool = True, catalog_id: str | None = None) -> Connection:
        mode = mode or self.preferences.protocol_mode
        timeout = timeout or self.preferences.timeout
        catalog_id = self.catalog_link.remember(spec, mode, None, catalog_id)  # saved in the catalog (issue 9)
        conn = Connection(spec, self._unique_id(spec.name), mode=mode, timeout=timeout, parent=self)
        conn.catalog_id = catalog_id
        self.auth.attach(conn)  # issue 10: OAuth for URL servers
        conn.traffic_sink = self._record_frame if self.store is not None else None
        conn.statusChanged.connect(lambda c=conn: self._conn_status_changed(c))
        conn.toolsChanged.connect(lambda c=conn: self._conn_tools_changed(c))
        self.servers.add(conn)
        if select or len(self.servers.connections) == 1:
            self.select_connection(conn)
        if connect:
            self._spawn(conn.start(), f"connecting {spec.name}")
        self._update_summary()
        return conn

    def selected_connection(self) -> Connection | None:
        idx = self.server_view.currentIndex()
        if not idx.isValid() or idx.row() >= len(self.servers.connections):
            return None
        return self.servers.connections[idx.row()]

    def select_connection(self, conn: Connection | None) -> None:
        if conn is None or conn not in self.servers.connections:
            self.server_view.setCurrentIndex(QModelIndex())
            self._show_selected()
            return
        idx = self.servers.index(self.servers.connections.index(conn))
        self.server_view.selectionModel().setCurrentIndex(idx, QItemSelectionModel.ClearAndSelect)

    def add_server_dialog(self) -> None:
        dialog = AddServerDialog(self)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.add_server(dialog.spec(), mode=dialog.mode()))
        dialog.open()  # window-modal sheet, no nested event loop

    def duplicate_selected(self) -> Connection | None:
        conn = self.selected_connection()
        if conn is None:
            return None
        spec = ServerSpec(name=conn.spec.name, command=list(conn.spec.command), env=dict(conn.spec.env),
                          cwd=conn.spec.cwd, url=conn.spec.url, transport=conn.spec.transport,
                          headers=dict(conn.spec.headers), oauth=dict(conn.spec.oauth))  # oauth: issue 10
        return self.add_server(spec, mode=conn.mode, timeout=conn.timeout,
                               connect=conn.status in (Status.CONNECTED, Status.CONNECTING))

    def remove_selected(self) -> None:
        conn = self.selected_connection()
        if conn is not None:
            self.remove_connection(conn)

    def remove_connection(self, conn: Connection) -> asyncio.Task[Any] | None:
        row = self.servers.connections.index(conn) if conn in self.servers.connections else -1
        self.servers.remove(conn)
        self.catalog_link.forget(conn)
        if self.servers.connections:
            self.select_connection(self.servers.connections[min(max(row, 0), len(self.servers.connections) - 1)])
        else:
            self.select_connection(None)
        self._update_summary()
        return self._spawn(self._dispose(conn), f"removing {conn.name}")

    async def _dispose(self, conn: Connection) -> None:
        await conn.disconnect()
        conn.deleteLater()

    def refresh_selected_tools(self) -> None:
        conn = self.selected_connection()
        if conn is not None and conn.client is not None:
            self._spawn(conn.refresh_tools(mark=True), f"listing tools of {conn.name}")

    def _run_on_selected(self, what: str) -> None:
        conn = self.selected_connection()
        if conn is None:
            return
        work = conn.start() if what == "connect" else getattr(conn, what)()
        self._spawn(work, f"{what} {conn.name}")

    def _spawn(self, coro: Awaitable[Any], what: str) -> asyncio.Task[Any] | None:
        try:
            task = asyncio.ensure_future(coro)
        except RuntimeError as exc:  # no event loop: nothing can run
            if hasattr(coro, "close"):
                coro.close()
            self.show_banner(f"{what}: {exc}")
            return None
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                exc = t.exception()
                log.error("%s failed", what, exc_info=exc)
                self.show_banner(f"{what} failed: {type(exc).__name__}: {exc}")
        task.add_done_callback(done)
        return task

    # ------------------------------------------------------------------ reacting
    def _tool_selected(self, tool: dict[str, Any] | None) -> None:
        self.tool_detail.show_tool(tool, self.tool_panel.view.currentIndex().data(CHANGE_ROLE) if tool else None)

    def _current_server_changed(self, *_: Any) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        conn = self.selected_connection()
        self.pages.setCurrentIndex(1 if conn is not None else 0)
        self.empty_title.setText("No server selected" if self.servers.connections else "No server yet")
        self.status_card.show_for(conn)
        self.info_view.show_connection(conn)
        self.auth_panel.show_connection(conn)  # issue 10
        self.log_pane.show_connection(conn)
        self._show_tools(conn)
        self._apply_traffic_filter()
        self._update_actions()
        self.setWindowTitle(f"Spyglass — {visible(conn.name, 80)}" if conn else "Spyglass")
        self.selectionChanged.emit()

    def _show_tools(self, conn: Connection | None) -> None:
        if conn is None:
            self.tool_panel.set_tools([])
            return
        message = None
        error = bool(conn.tools_error) or conn.status in (Status.ERROR, Status.EXITED)
        if conn.tools_error:
            message = conn.tools_error if conn.tools_error.startswith("tools/list") else \
                f"tools/list failed: {conn.tools_error}"
        elif conn.status is not Status.CONNECTED and not conn.tools:
            message = {Status.CONNECTING: "Connecting…", Status.ERROR: "Not connected: the server failed to start.",
                       Status.EXITED: "The server has exited."}.get(conn.status, "Not connected.")
        elif conn.status is Status.CONNECTED and not conn.tools_loaded:
            message = "Listing tools…"
        elif conn.status is Status.CONNECTED and not conn.tools:
            message = conn.tools_note or "This server lists no tools."
        elif conn.status is not Status.CONNECTED:
            message = f"Showing the tools as last listed: the server is {conn.status.value}."
        self.tool_panel.set_tools(conn.tools, appeared=conn.appeared, vanished=conn.vanished, message=message,
                                  error=error)
        self.tool_detail.placeholder.setText("Select a tool to see what it does and what it takes."
                                             if conn.tools or conn.vanished else "")

    def _conn_status_changed(self, conn: Connection) -> None:
        if conn is self.selected_connection():
            self.status_card.show_for(conn)
            self.info_view.show_connection(conn)
            self._update_actions()
            if conn.status in (Status.CONNECTING, Status.ERROR, Status.EXITED, Status.DISCONNECTED):
                self._show_tools(conn)
        self._update_summary()

    def _conn_tools_changed(self, conn: Connection) -> None:
        if conn is self.selected_connection():
            self._show_tools(conn)

    def _update_actions(self) -> None:
        conn = self.selected_connection()
        live = conn is not None and conn.status in (Status.CONNECTED, Status.CONNECTING)
        self.act_connect.setEnabled(conn is not None and not live)
        self.act_disconnect.setEnabled(live)
        self.act_restart.setEnabled(conn is not None)
        self.act_duplicate.setEnabled(conn is not None)
        self.act_remove.setEnabled(conn is not None)
        self.act_refresh.setEnabled(conn is not None and conn.status is Status.CONNECTED)

    def _update_summary(self) -> None:
        conns = self.servers.connections
        up = sum(c.status is Status.CONNECTED for c in conns)
        self.status_label.setText(f"{len(conns)} server{'s' if len(conns) != 1 else ''}, {up} connected")

    # ------------------------------------------------------------------ traffic
    def _record_frame(self, server_id: str, frame: Any) -> None:
        store = self.store
        if store is None:
            return
        try:
            store.add(server_id, frame)
        except Exception:
            log.exception("traffic store rejected a frame")

    def _flush_traffic(self) -> None:
        if self.store is None:
            return
        try:
            self.store.flush()
        except Exception as exc:
            log.exception("traffic flush failed")
            self._flush_timer.stop()
            self.show_banner(f"Traffic recording stopped: {exc}")

    def _set_follow(self, on: bool) -> None:
        self._follow_selection = on
        self._apply_traffic_filter()

    def _apply_traffic_filter(self) -> None:
        pane = self.traffic_pane
        if pane is None or not hasattr(pane, "set_server_filter"):
            return
        conn = self.selected_connection()
        try:
            pane.set_server_filter(conn.server_id if (conn and self._follow_selection) else None)
        except Exception:
            log.exception("traffic filter")

    # ------------------------------------------------------------------ banner, theme, layout
    def show_banner(self, text: str, details: str | None = None, level: str = "error") -> None:
        self.banner.show_message(text, details, level)

    def set_theme(self, mode: str) -> None:
        app = QApplication.instance()
        if app is not None:
            theme.apply_theme(app, mode)
        for a in self._theme_group.actions():
            a.setChecked(a.objectName() == f"actionTheme_{mode}")
        self.settings.setValue("theme", mode)
        if self.banner.isVisible():
            self.banner.restyle()
        self.tool_detail.show_tool(self.tool_detail.tool, getattr(self.tool_detail, "change", None))
        self.info_view.show_connection(self.selected_connection())
        self.status_card.show_for(self.selected_connection())
        self.server_view.viewport().update()
        self.tool_panel.view.viewport().update()

    def reset_layout(self) -> None:
        self.restoreState(self._default_state, SETTINGS_VERSION)
        for dock in (self.traffic_dock, self.log_dock):
            dock.show()

    def save_screenshot(self, path: str) -> tuple[bool, str]:
        # No processEvents() here: called from a coroutine on the qasync loop, a nested event loop would
        # run other tasks' steps inside this one (asyncio then drops them). Callers await a short sleep.
        self.log_pane.flush()
        pixmap = self.grab()
        if pixmap.isNull():
            return False, "the window could not be rendered"
        if not pixmap.save(path, "PNG"):
            return False, f"could not write {path}"
        return True, path

    # ------------------------------------------------------------------ settings
    def _restore_window(self) -> None:
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        state = self.settings.value("window/state")
        if isinstance(state, QByteArray) and not state.isEmpty():
            self.restoreState(state, SETTINGS_VERSION)

    def save_settings(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState(SETTINGS_VERSION))
        self.catalog_link.sync()  # servers live in the catalog, secrets in the keyring (issue 9)
        from . import desktop

        desktop.save_selection(self)
        self.settings.sync()

    def saved_servers(self) -> list[tuple[ServerSpec, str]]:
        """The servers of the catalog (secrets filled in from the keyring), with their protocol modes."""
        return [(e.spec, e.mode) for e in self.catalog.servers]

    def restore_servers(self, *, skip: set[str] = frozenset()) -> list[Connection]:
        """Put the catalog's servers back in the sidebar, not connected."""
        return self.catalog_link.restore(skip)

    # ------------------------------------------------------------------ shutdown
    async def shutdown(self) -> None:
        """Save settings, disconnect every server (awaited: no orphan process), close the store."""
        if self._shutdown_done:
            return
        self._shutdown_done = True
        try:
            if self.persist:
                self.save_settings()
        except Exception:
            log.exception("saving settings")
        conns = list(self.servers.connections)
        await asyncio.gather(*(c.disconnect() for c in conns), return_exceptions=True)
        pending = [t for t in self._tasks if not t.done()]
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        self.log_pane.show_connection(None)
        if getattr(self, "_flush_timer", None) is not None:
            self._flush_timer.stop()
        if self.store is not None:
            try:
                self.store.flush()
                self.store.close()
            except Exception:
                log.exception("closing the traffic store")
            self.store = None

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._closed_done or self._shutdown_done and not self._closing:
            self._closed_done = True
            event.accept()
            self.closed.emit()
            return
        event.ignore()
        if self._closing:
            return
        self._closing = True
        try:
            task = asyncio.ensure_future(self.shutdown())
        except RuntimeError:  # no loop: nothing is running that needs awaiting
            self._closed_done = True
            event.accept()
            self.closed.emit()
            return
        task.add_done_callback(lambda _t: self._finish_close())

    def _finish_close(self) -> None:
        import shiboken6

        if shiboken6.isValid(self):
            self._closed_done = True
            self.close()
