"""The main window (`mainWindow`): servers sidebar, the selected server's tabs, traffic and log docks.

The window is composed of parts that each own one concern and are handed what they need: the `CatalogLink` (what
is saved), `WindowCalls` (every server's calls), `DialogAnswers` (the server's questions), `WindowAuth` (sign-in),
`TrafficRecorder` (the session store and pane), `ServerFiles` (import, export), `WindowSessions` (kept sessions),
`CollectionsLink` (the Collections tab), the panes of the tabs. Each server is a `ServerSession` behind a
`Connection` that turns its callbacks into signals. Everything the window does to a server is an asyncio task on
the qasync loop; failures become a status in the sidebar or a banner, never a modal dialog or an escaped exception.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ... import messages
from ...config import ServerSpec
from ...forms.memory import ArgumentMemory
from ...recording.files import definition_of
from ...session import ServerSession, SessionOptions, Status, TransportOptions
from ..apps.host import AppHost
from ..auth.panel import AuthPanel, WindowAuth
from ..base import design, fit, theme
from ..base.banner import Banner
from ..base.files import save_png
from ..base.items import CHANGE_ROLE
from ..base.tasks import spawn
from ..base.text import visible
from ..calls import confirm
from ..calls.book import WindowCalls
from ..calls.indicators import RunningServerDelegate, RunningToolDelegate
from ..calls.panel import ToolCallPanel, argument_memory
from ..calls.questions import ROOTS_ASK, DialogAnswers
from ..calls.tasks_pane import TasksPane
from ..calls.tool_list import ToolListPanel
from ..library.prompts import PromptsPane
from ..library.resources import ResourcesPane
from ..recording.window_link import WindowSessions
from ..servers.catalog_link import DEMO_NAME, CatalogLink, demo_spec
from ..servers.connection import Connection
from ..servers.extras import RootsEditor
from ..servers.info import ServerInfoView
from ..servers.log_controls import LogControls
from ..servers.log_pane import LogPane
from ..servers.sidebar import ServerModel, ServerSidebar
from ..traffic.recorder import TrafficRecorder
from . import layout, menus, pages
from .agent_link import AgentLink
from .check_link import CheckLink, tool_findings
from .collections_link import CollectionsLink
from .command_palette import CommandPalette
from .composer_link import ComposerLink
from .devloop_link import DevLoopLink
from .doctor_link import DoctorLink
from .files import DropImporter, ServerFiles
from .playground_link import PlaygroundLink
from .preferences import Preferences
from .present_link import PresentLink
from .server_edits import ServerEdits
from .skills_link import SkillsLink
from .tap_link import TapLink
from .warmup import Warmup
from .window_dialogs import WindowDialogs

log = logging.getLogger("spyglass.ui")

LAST_SERVER = "window/lastServer"
LAST_TOOL = "window/lastTool"

__all__ = ["DEMO_NAME", "MainWindow", "demo_spec"]


class MainWindow(WindowDialogs, QMainWindow):
    closed = Signal()
    selectionChanged = Signal()

    def __init__(self, settings: QSettings | None = None, store_path: str | None = None,
                 parent: QWidget | None = None, catalog: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.settings = settings if settings is not None else QSettings("Spyglass", "Spyglass")
        self.preferences = Preferences.load(self.settings)
        self.persist = True  # save geometry, docks and servers on shutdown
        self._follow_selection = True
        self._tasks: set[asyncio.Future[Any]] = set()
        self._closing = self._closed_done = self._shutdown_done = False
        self.warmup = Warmup()
        self.command_palette: CommandPalette | None = None
        self.catalog_link = CatalogLink(catalog, persist=lambda: self.persist,
                                        message=lambda text, level: self.show_banner(text, level=level))
        self.servers = ServerModel(self, unsaved=self.catalog_link.can_save)
        self.calls = WindowCalls(self)
        self.edits = ServerEdits(self)  # Add, Edit, Remove with undo, a server named as it reports itself
        self.banner = Banner(self)
        self.catalog = self.catalog_link.catalog
        self.answers = DialogAnswers(lambda: self, lambda: self.preferences.roots_policy == ROOTS_ASK)
        self.auth = WindowAuth(self, warn=lambda text: self.show_banner(text, level="warning"),
                               client_metadata_url=lambda: self.preferences.client_metadata_url)
        self.traffic = TrafficRecorder(store_path, self, self.show_banner)
        self.files = ServerFiles(self, self.catalog_link, message=self.show_banner, selected=self._selected_server,
                                 unsaved=lambda: [c.spec for c in self.servers.connections],
                                 imported=self._imported, persist=lambda: self.persist,
                                 status=lambda text: self.statusBar().showMessage(text, 8000))
        memory = argument_memory(self.settings)
        self._build_actions()
        self._build_central(memory)
        self._build_docks()
        self._build_menus()
        self.sessions = WindowSessions(self)  # File → Open, Recent, Import, Export session; Compare with…
        self.collections = CollectionsLink(self)  # the Collections tab, File → Open collection…, Save to collection…
        self.skills = SkillsLink(self)  # the Skills tab, for a server that offers skills (SEP-2640)
        self.doctor = DoctorLink(self)  # Diagnose, on the status card of a server that did not connect
        self.taps = TapLink(self)  # tapped conversations as read-only servers (listening: app.py starts it)
        self.agents = AgentLink(self)  # Server → Watch agents: the agents' servers, calls held for approval
        self.devloop = DevLoopLink(self)  # Server → Restart on save, Watch settings…; the Re-run dock
        self.composer = ComposerLink(self)  # the raw composer; Edit and resend… in the traffic pane and History
        self.present = PresentLink(self)  # View → Presentation mode (F11): the tools shown to an audience
        self.apps = AppHost(self)  # MCP Apps: a call's interactive view above its result (`result:app`)
        self.apps.attach(self.tool_detail, self.calls)
        self.playground = PlaygroundLink(self)  # Preferences → Models, the Playground and Tool choice tabs
        self.status_label = QLabel(self)
        self.status_label.setObjectName("statusSummary")
        self.statusBar().addPermanentWidget(self.status_label)
        self.setAcceptDrops(True)
        self._drops = DropImporter(self.files, self)
        self.installEventFilter(self._drops)
        self.layout_state = layout.WindowLayout(self, self.settings)
        self.layout_state.first_start(self.splitter, self.traffic_dock)  # a saved geometry then wins
        self.layout_state.restore()
        self.layout_state.watch_names(self.server_view, self.sidebar)
        self.traffic_dock.visibilityChanged.connect(self.layout_state.opened)  # made readable when it is opened
        self._update_actions()
        self._update_summary()
        messages.attach(self._told)  # what was said before the window existed (a broken catalog) arrives now

    # ------------------------------------------------------------------ construction
    def _build_actions(self) -> None:
        act = menus.action
        self.act_add = act(self, "Add server…", self.add_server_dialog, QKeySequence.New, "actionAddServer",
                           "Add a server: a command over stdio, or a URL")
        self.act_add.setIconText("Add…")
        self.act_connect = act(self, "Connect", lambda: self._run_on_selected("connect"), None, "actionConnect",
                               "Connect the selected server")
        self.act_disconnect = act(self, "Disconnect", lambda: self._run_on_selected("disconnect"), None,
                                  "actionDisconnect", "Disconnect the selected server (ends its process)")
        self.act_restart = act(self, "Restart", lambda: self._run_on_selected("restart"), "Ctrl+R", "actionRestart",
                               "Disconnect and connect again")
        self.act_duplicate = act(self, "Duplicate", self.duplicate_selected, None, "actionDuplicate",
                                 "Add a copy of the selected server")
        self.act_edit = act(self, "Edit server…", lambda: self.edits.edit(), None, "actionEditServer",
                            "Change the selected server's definition, save it and connect again")
        self.act_edit.setIconText("Edit…")
        self.act_remove = act(self, "Remove", self.remove_selected, None, "actionRemove",
                              "Disconnect and remove the selected server (the banner offers Undo)")
        self.act_undo_remove = act(self, "Undo remove", lambda: self.edits.undo(), None, "actionUndoRemove",
                                   "Put the server just removed back, with its settings, where it was")
        self.act_undo_remove.setEnabled(False)
        self.act_save_server = act(self, "Save to catalog", lambda: self.edits.save(), None, "actionSaveServer",
                                   "Keep this server (named on the command line) for the next start")
        self.act_refresh = act(self, "Refresh tools", self.refresh_selected_tools, "F5", "actionRefreshTools",
                               "List the selected server's tools again")
        self.act_demo = act(self, "Add the demo server", lambda: self.add_server(demo_spec()), None,
                            "actionAddDemo", "Add and connect the built-in demo server")
        self.act_quit = act(self, "Quit", self.close, QKeySequence.Quit, "actionQuit")
        self.act_import = act(self, "Import servers…", self.files.choose_import, QKeySequence.Open, "actionImport",
                              "Import servers from Claude Desktop, Cursor, VS Code, the MCP Inspector or a "
                              "registry server.json")
        self.act_export_all = act(self, "Export catalog (Claude Desktop format)…", lambda: self.files.export(None),
                                  None, "actionExportCatalog",
                                  "Write every saved server to a claude_desktop_config.json (secrets masked)")
        self.act_export_one = act(self, "Export selected server…", lambda: self.files.export("selected"), None,
                                  "actionExportServer",
                                  "Write the selected server in the Claude Desktop format (secrets masked)")
        self.act_copy_command = act(self, "Copy as spyglass command", self.files.copy_command, "Ctrl+Shift+C",
                                    "actionCopyCommand", "Copy the selected server as a `spyglass` command line")
        self.act_preferences = act(self, "Preferences…", self.show_preferences, menus.preferences_shortcut(),
                                   "actionPreferences")
        self.act_filter_traffic = act(self, "Filter traffic", self.focus_traffic_filter, "Ctrl+F",
                                      "actionFilterTraffic", "Show the traffic pane and type a filter")
        self.act_find_tool = act(self, "Find a tool", self.focus_tool_search, "Ctrl+L", "actionFindTool",
                                 "Type in the tool search box")
        self.act_palette = act(self, "Command palette…", self.open_command_palette, "Ctrl+K",
                               "actionCommandPalette", "Connect, switch server, jump to a tool… by typing")
        self.act_clear_traffic = act(self, "Clear traffic", self.traffic.clear, None, "actionClearTraffic",
                                     "Hide the frames so far (the session keeps them)")
        self.act_shortcuts = act(self, "Keyboard shortcuts", self.show_shortcuts, "F1", "actionShortcuts",
                                 "Every keyboard shortcut of Spyglass")
        self.act_about = act(self, "About Spyglass", self.show_about, None, "actionAbout")

    def _build_central(self, memory: ArgumentMemory) -> None:
        self.sidebar = ServerSidebar(self.servers, [self.act_add, self.act_edit, self.act_duplicate, self.act_connect,
                                                    self.act_disconnect, self.act_restart, self.act_remove], self)
        self.server_view = self.sidebar.view
        self.status_card = self.sidebar.card
        self.server_view.addActions([self.act_edit, self.act_connect, self.act_disconnect, self.act_restart,
                                     self.act_duplicate, self.act_remove, self.act_save_server, self.act_refresh])
        self.server_view.doubleClicked.connect(lambda index: self.edits.edit(self.servers.connections[index.row()]))
        self.server_view.selectionModel().currentChanged.connect(lambda *_: self._show_selected())
        self.status_card.retry.connect(lambda: self._run_on_selected("restart"))
        self.server_view.setItemDelegate(RunningServerDelegate(self.calls, self.server_view))
        self.pages = QStackedWidget(self)
        self.pages.setObjectName("mainPages")
        self.empty_page = pages.EmptyPage(self.act_add, self.act_demo, self)
        self.pages.addWidget(self.empty_page)
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("serverTabs")
        self.tabs.setDocumentMode(True)
        tools_page = QSplitter(Qt.Horizontal, self)
        tools_page.setObjectName("toolsSplitter")
        self.tool_panel = ToolListPanel(tools_page)
        self.tool_detail = ToolCallPanel(tools_page, calls=self.calls, connection=self.selected_connection,
                                         confirm_policy=lambda: confirm.policy_from(self.settings), memory=memory)
        self.tool_detail.repaint_views = [self.tool_panel.view, self.server_view]
        self.tool_detail.findings = lambda name: self.checks.tool_words(self.selected_connection(), name)
        self.tool_panel.view.setItemDelegate(RunningToolDelegate(self.calls, self.selected_connection,
                                                                 self.tool_panel.view))
        self.tool_panel.toolSelected.connect(self._tool_selected)
        self.tool_panel.refreshRequested.connect(self.refresh_selected_tools)
        refresh = self.tool_panel.refresh_button
        self.act_refresh.changed.connect(lambda: refresh.setEnabled(self.act_refresh.isEnabled()))
        tools_page.addWidget(self.tool_panel)
        tools_page.addWidget(self.tool_detail)
        tools_page.setStretchFactor(0, 1)  # the list of names; the tool, its form and its answer get the rest
        tools_page.setStretchFactor(1, 4)
        self.resources_pane = ResourcesPane(self)
        self.prompts_pane = PromptsPane(self)
        self.tasks_pane = TasksPane(self)
        self.calls.updated.connect(self.tasks_pane.call_updated)
        self.info_view = ServerInfoView(self)
        self.auth_panel = AuthPanel(self)
        self.auth_panel.token_view.spawn = self._spawn
        self.auth_panel.signInAgain.connect(lambda c: self._spawn(c.session.restart(), f"signing in to {c.name} again"))
        self.roots_editor = RootsEditor(self)
        self.roots_editor.on_changed = self._save_roots
        self.checks = CheckLink(self)
        self.checks.view.spawn = self._spawn
        for page, title in ((tools_page, "Tools"), (self.resources_pane, "Resources"), (self.prompts_pane, "Prompts"),
                            (self.tasks_pane, "Tasks"), (self.checks.view, "Check"), (self.info_view, "Server info"),
                            (self.auth_panel, "Authorization"), (self.roots_editor, "Roots")):
            self.tabs.addTab(page, title)
        self.pages.addWidget(self.tabs)
        for tabs in (self.tabs, self.tool_detail.result_tabs):  # a tab not shown asks the window for no room
            fit.shown_page_counts(tabs)
        self.splitter = QSplitter(Qt.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(self.pages)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        central = QWidget(self)
        c = QVBoxLayout(central)
        c.setContentsMargins(design.margins("xs", "xs", "xs", "none"))
        c.addWidget(self.banner)
        c.addWidget(self.splitter, 1)
        self.setCentralWidget(fit.scroll_column(central, "centralColumn"))  # scrolls when an opened dock needs room

    def _build_docks(self) -> None:
        self.log_pane = LogPane(self)
        self.log_controls = LogControls(self.log_pane)
        self.traffic_dock = layout.dock(self, "Traffic", "trafficDock", self.traffic.widget)
        self.log_dock = layout.dock(self, "Log", "logDock", self.log_controls)
        self.timeline_dock = layout.dock(self, "Timeline", "timelineDock", self.traffic.timeline_widget(self))
        for other in (self.log_dock, self.timeline_dock):  # drag a tab out to see them side by side
            self.tabifyDockWidget(self.traffic_dock, other)
        self.traffic_dock.raise_()

    def _build_menus(self) -> None:
        view_docks = []
        for dock, key in ((self.traffic_dock, "Ctrl+Shift+T"), (self.log_dock, "Ctrl+Shift+L"),
                          (self.timeline_dock, "Ctrl+Shift+M")):
            a = dock.toggleViewAction()
            a.setShortcut(QKeySequence(key))
            view_docks.append(a)
        reset = menus.action(self, "Reset layout", self.reset_layout, None, "actionResetLayout")
        follow = QAction("Traffic of the selected server only", self)
        follow.setObjectName("actionTrafficFollows")
        follow.setCheckable(True)
        follow.setChecked(self._follow_selection)
        follow.toggled.connect(self._set_follow)
        themes, self._theme_group = menus.choice_menu(self, "Theme", [(m, theme.THEME_NAMES[m]) for m in theme.THEMES],
                                                      "system", "actionTheme_", self.set_theme)
        S = menus.SEPARATOR
        menus.fill(self.menuBar(), [
            ("&File", "fileMenu", [self.act_import, S, self.act_export_all, self.act_export_one,
                                   self.act_copy_command, S, self.act_preferences, S, self.act_quit]),
            ("&Server", "serverMenu", [self.act_add, self.act_demo, S, self.act_connect, self.act_disconnect,
                                       self.act_restart, self.act_refresh, S, self.act_edit, self.act_duplicate,
                                       self.act_save_server, self.act_remove, self.act_undo_remove]),
            ("&View", "viewMenu", [*view_docks, reset, follow, S, themes, S, self.act_palette,
                                   self.act_filter_traffic, self.act_find_tool, self.act_clear_traffic]),
            ("&Help", "helpMenu", [self.act_shortcuts, self.act_about]),
        ])

    # ------------------------------------------------------------------ servers
    @property
    def store(self) -> Any:
        """The traffic session store (None when it could not be opened)."""
        return self.traffic.store

    @property
    def traffic_pane(self) -> Any:
        return self.traffic.pane

    def connections(self) -> list[Connection]:
        return list(self.servers.connections)

    def unique_id(self, name: str) -> str:
        taken = {c.server_id for c in self.servers.connections}
        base = name or "server"
        if base not in taken:
            return base
        n = 2
        while f"{base} #{n}" in taken:
            n += 1
        return f"{base} #{n}"

    def add_server(self, spec: ServerSpec, *, mode: str | None = None, timeout: float | None = None,
                   connect: bool = True, select: bool = True, catalog_id: str | None = None,
                   save: bool = True, session: ServerSession | None = None) -> Connection:
        """A server joins the sidebar (and the catalog, with `save`: a server named on the command line is
        kept for this run only until the user saves it). `session`: one made elsewhere (a tapped
        conversation, read-only), never in the catalog."""
        mode = mode or self.preferences.protocol_mode
        timeout = timeout or self.preferences.timeout
        if catalog_id is None and session is None:
            catalog_id = self.catalog_link.remember(spec, mode, None, self.servers.connections, save=save)
        if session is None:
            session = ServerSession(spec, self.unique_id(spec.name), SessionOptions(mode=mode, timeout=timeout),
                                    answerer=self.answers)
            session.roots = []
        conn = Connection(session, self)
        conn.catalog_id = catalog_id
        self.auth.attach(conn)
        self._load_roots(conn)
        session.traffic = self.traffic.recorder_for(session.server_id, conn.live, definition_of(spec))
        self._apply_transport_options(conn)
        conn.statusChanged.connect(lambda c=conn: self._conn_status_changed(c))
        conn.toolsChanged.connect(lambda c=conn: self._conn_tools_changed(c))
        self.calls.attach(conn)
        self.checks.attach(conn)
        self.servers.add(conn)
        if select or len(self.servers.connections) == 1:
            self.select_connection(conn)
        if connect:
            self._spawn(session.start(), f"connecting {spec.name}")
            self.warmup.preload()  # (its steps fill the wait for the server: a call may follow its listing at once)
        self._update_summary()
        return conn

    def _apply_transport_options(self, conn: Connection) -> None:
        """The preferences that decide how a server is reached, for its next connection."""
        conn.session.options.transport = TransportOptions(
            max_message=self.preferences.max_message_mib * 1024 * 1024,
            auth=conn.auth.start_attempt if conn.auth is not None else None)

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

    def add_server_dialog(self) -> Any:
        return self.edits.add_dialog()

    def duplicate_selected(self) -> Connection | None:
        return self.edits.duplicate()

    def remove_selected(self) -> None:
        conn = self.selected_connection()
        if conn is not None:
            self.edits.remove(conn)

    def remove_connection(self, conn: Connection) -> asyncio.Future[Any] | None:
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
        await self.devloop.forget(conn)
        await self.apps.close_server(conn.server_id)
        await conn.session.disconnect()
        self.calls.detach(conn)
        self.traffic.forget(conn.live)
        conn.release()
        conn.deleteLater()

    def refresh_selected_tools(self) -> None:
        conn = self.selected_connection()
        if conn is not None and conn.session.client is not None:
            self._spawn(conn.session.refresh_tools(mark=True), f"listing tools of {conn.name}")

    def _run_on_selected(self, what: str) -> None:
        conn = self.selected_connection()
        if conn is None:
            return
        if what in ("connect", "restart"):
            self._apply_transport_options(conn)
        work = conn.session.start() if what == "connect" else getattr(conn.session, what)()
        self._spawn(work, f"{what} {conn.name}")

    def _spawn(self, coro: Awaitable[Any], what: str) -> asyncio.Future[Any] | None:
        """Run `coro` in the background; its failure becomes a banner (none runs without a loop)."""
        task = spawn(
            coro, self._tasks, lambda exc: self.show_banner(f"{what} failed: {type(exc).__name__}: {exc}"), what
        )
        if task is None:
            self.show_banner(f"{what}: no event loop runs")
        return task

    # ------------------------------------------------------------------ the catalog, imports
    def _selected_server(self) -> Any:
        """The selected server as a catalog entry when it is saved (secret marks kept), else its spec."""
        conn = self.selected_connection()
        if conn is None:
            return None
        entry = self.catalog_link.entry_of(conn)
        return entry if entry is not None else conn.spec

    def import_file(self, path: str) -> Any:
        return self.files.import_file(path)

    def _imported(self, result: Any, source: str) -> None:
        """Put what an import added or replaced into the sidebar (not connected)."""
        added = [self._add_saved(entry) for entry in result.added]
        for entry in result.replaced:
            conn = next((c for c in self.servers.connections if c.catalog_id == entry.id), None)
            if conn is None:
                added.append(self._add_saved(entry))
                continue
            conn.session.spec = entry.spec
            conn.session.options.mode = entry.mode
            self.servers.refresh(conn)
        if added:
            self.select_connection(added[0])

    def _add_saved(self, entry: Any) -> Connection:
        """A server of the catalog in the sidebar, not connected (watched again if it was)."""
        conn = self.add_server(entry.spec, mode=entry.mode, timeout=entry.timeout, connect=False, select=False,
                               catalog_id=entry.id)
        self.devloop.restore(conn)
        return conn

    def restore_servers(self, *, skip: set[str] = frozenset()) -> list[Connection]:
        """Put the catalog's servers back in the sidebar, not connected."""
        return [self._add_saved(e) for e in self.catalog_link.saved(skip)]

    def restore_selection(self, *, connect: bool = True) -> Connection | None:
        """Select last session's server (connecting it when it is a saved one) and, once listed, its tool."""
        name = str(self.settings.value(LAST_SERVER) or "")
        tool = str(self.settings.value(LAST_TOOL) or "")
        conn = next((c for c in self.servers.connections if c.spec.name == name), None) if name else None
        if conn is None:
            return None
        self.select_connection(conn)
        if connect and conn.session.status is Status.IDLE:
            self._spawn(conn.session.start(), f"connecting {conn.name}")
        if tool:
            def pick() -> None:
                if self.selected_connection() is conn and conn.session.tools.loaded and self.tool_panel.select(tool):
                    try:
                        conn.toolsChanged.disconnect(pick)
                    except (RuntimeError, TypeError):
                        pass
            conn.toolsChanged.connect(pick)
            if conn.session.tools.loaded:
                QTimer.singleShot(0, pick)
        return conn

    def _load_roots(self, conn: Connection) -> None:
        conn.session.roots = self.catalog_link.roots_of(conn, self.settings)

    def _save_roots(self, conn: Connection) -> None:
        self.catalog_link.save_roots(conn, list(conn.session.roots or []), self.settings)

    # ------------------------------------------------------------------ reacting
    def _tool_selected(self, tool: dict[str, Any] | None) -> None:
        self.warmup.preload()
        self.tool_detail.show_tool(tool, self.tool_panel.view.currentIndex().data(CHANGE_ROLE) if tool else None)

    def _show_selected(self) -> None:
        conn = self.selected_connection()
        self.pages.setCurrentIndex(1 if conn is not None else 0)
        self.empty_page.set_title("No server selected" if self.servers.connections else "No server yet")
        self.status_card.show_for(conn)
        self.info_view.show_connection(conn)
        self.checks.show(conn)
        self.auth_panel.show_connection(conn)
        self.log_pane.show_connection(conn)
        self.tool_detail.server_changed()
        self._show_tools(conn)
        self.apply_traffic_filter()
        self._update_actions()
        # the platform adds " — Spyglass" (the application's display name) to every window title
        self.setWindowTitle(visible(conn.name, 80) if conn else "")
        for pane in (self.resources_pane, self.prompts_pane, self.tasks_pane, self.roots_editor):
            pane.show_connection(conn)
        self.log_controls.set_connection(conn)
        self.selectionChanged.emit()

    def _show_tools(self, conn: Connection | None) -> None:
        self.tool_panel.show_session(conn.session if conn is not None else None, tool_findings(conn),
                                     conn.live.cost if conn is not None else None)
        listing = conn.session.tools if conn is not None else None
        self.tool_detail.placeholder.setText("Select a tool to see what it does and what it takes."
                                             if listing is not None and (listing.items or listing.vanished) else "")

    def _conn_status_changed(self, conn: Connection) -> None:
        self.edits.status_changed(conn)  # named as it reports itself, when the user gave no name
        if conn is self.selected_connection():
            self.status_card.show_for(conn)
            self.info_view.show_connection(conn)
            self._update_actions()
            if conn.session.status in (Status.CONNECTING, Status.ERROR, Status.EXITED, Status.DISCONNECTED):
                self._show_tools(conn)
        self._update_summary()

    def _conn_tools_changed(self, conn: Connection) -> None:
        if conn is self.selected_connection():
            self._show_tools(conn)

    def _update_actions(self) -> None:
        conn = self.selected_connection()
        live = conn is not None and conn.session.status in (Status.CONNECTED, Status.CONNECTING)
        mine = conn is not None and not getattr(conn.session, "read_only", False)  # a tapped one is its host's
        self.act_connect.setEnabled(mine and not live)
        self.act_disconnect.setEnabled(mine and live)
        for a in (self.act_restart, self.act_duplicate, self.act_edit):
            a.setEnabled(mine)
        self.act_remove.setEnabled(conn is not None)
        self.act_refresh.setEnabled(mine and conn is not None and conn.session.status is Status.CONNECTED)
        self.act_save_server.setEnabled(mine and conn is not None and self.catalog_link.can_save(conn))

    def _update_summary(self) -> None:
        conns = self.servers.connections
        up = sum(c.session.status is Status.CONNECTED for c in conns)
        self.status_label.setText(f"{len(conns)} server{'s' if len(conns) != 1 else ''}, {up} connected")

    # ------------------------------------------------------------------ traffic
    def _set_follow(self, on: bool) -> None:
        self._follow_selection = on
        self.apply_traffic_filter()

    def apply_traffic_filter(self) -> None:
        conn = self.selected_connection()
        self.traffic.follow(conn.server_id if (conn and self._follow_selection) else None)

    def focus_traffic_filter(self) -> None:
        self.traffic_dock.show()
        self.traffic_dock.raise_()
        self.traffic.focus_filter()

    def focus_tool_search(self) -> None:
        if self.selected_connection() is not None:
            self.tabs.setCurrentIndex(0)
        self.tool_panel.focus_search()

    # ------------------------------------------------------------------ banner, theme, layout
    def show_banner(self, text: str, details: str | None = None, level: str = "error") -> None:
        self.banner.show_message(text, details, level)

    def _told(self, message: messages.Message) -> None:
        """What Qt-free code tells the user (inspector.messages) shows in the banner."""
        self.show_banner(message.text, message.details, "error" if message.level == "error" else "info")

    def mark_theme(self, mode: str) -> None:
        """Tick `mode` in View → Theme (the theme itself is applied to the application)."""
        for a in self._theme_group.actions():
            a.setChecked(a.objectName() == f"actionTheme_{mode}")

    def set_theme(self, mode: str) -> None:
        app = QApplication.instance()
        if app is not None:
            theme.apply_theme(app, mode)
        self.mark_theme(mode)
        self.settings.setValue("theme", mode)
        if self.banner.isVisible():
            self.banner.restyle()
        self.tool_detail.show_tool(self.tool_detail.tool, self.tool_detail.change)
        self.apps.theme_changed()
        self.info_view.show_connection(self.selected_connection())
        self.status_card.show_for(self.selected_connection())
        self.server_view.viewport().update()
        self.tool_panel.view.viewport().update()

    def reset_layout(self) -> None:
        self.layout_state.reset((self.traffic_dock, self.log_dock, self.timeline_dock))

    def save_screenshot(self, path: str) -> tuple[bool, str]:
        # No processEvents() here: called from a coroutine on the qasync loop, a nested event loop would
        # run other tasks' steps inside this one (asyncio then drops them). Callers await a short sleep.
        self.log_pane.flush()
        pixmap = self.grab()
        if pixmap.isNull():
            return False, "the window could not be rendered"
        problem = save_png(pixmap, path)  # 0600, as every file Spyglass writes
        return (False, problem) if problem is not None else (True, path)

    # ------------------------------------------------------------------ settings
    def save_settings(self) -> None:
        self.layout_state.save()
        self.catalog_link.sync((c, c.session.options.mode) for c in self.servers.connections)
        conn = self.selected_connection()
        self.settings.setValue(LAST_SERVER, conn.spec.name if conn is not None else "")
        self.settings.setValue(LAST_TOOL, (self.tool_panel.selected_name() if conn is not None else None) or "")
        self.settings.sync()

    # ------------------------------------------------------------------ shutdown
    async def shutdown(self) -> None:
        """Save settings, disconnect every server (awaited: no orphan process), close the store. A second caller
        (a screenshot run ending while a signal's close shuts down) waits for the first one's to end."""
        if self._shutdown_done:
            await asyncio.shield(self._shutdown_done)
            return
        self._shutdown_done = asyncio.get_running_loop().create_future()
        try:
            messages.detach(self._told)
            try:
                if self.persist:
                    self.save_settings()
            except Exception:
                log.exception("saving settings")
            await self.apps.close()  # before the servers: an app may still call its server while it winds up
            await self.playground.close()  # a model's turn in flight ends before the servers it calls
            await self.taps.close()
            await self.agents.close()
            await self.devloop.close()
            conns = list(self.servers.connections)
            await asyncio.gather(*(c.session.disconnect() for c in conns), return_exceptions=True)
            pending = [t for t in self._tasks if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
            self.log_pane.show_connection(None)
            self.traffic.close()
        finally:
            self._shutdown_done.set_result(None)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self.layout_state.shown)  # docks have their place only once the window is shown
        self.warmup.shown()

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
