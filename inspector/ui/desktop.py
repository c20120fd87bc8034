"""Desktop integration of the main window (issue 9), kept out of main_window.py:

- File menu: Import… (also drag-and-drop of a file onto the window, and `spyglass --import FILE`),
  Export the catalog / one server in the Claude Desktop format, copy one server as a `spyglass`
  command line, Preferences…
- Keyboard: Ctrl+F filter traffic, Ctrl+L tool search, Ctrl+K command palette, F5 re-list (the
  window's own action), Help → Keyboard shortcuts; Help → About.
- Preferences applied at start; the last selected server and tool saved and restored.

`install(window)` is called once from MainWindow.__init__.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMenu

from .preferences import Preferences, apply_font, apply_to_transports, show_preferences

log = logging.getLogger("spyglass.ui.desktop")

LAST_SERVER = "window/lastServer"
LAST_TOOL = "window/lastTool"


def install(window: Any) -> None:
    window.preferences = Preferences.load(window.settings)
    apply_to_transports(window.preferences)
    window.apply_preferences = lambda prefs: apply_preferences(window, prefs)
    window.show_about = lambda: show_about(window)
    window.import_file = lambda path: import_file(window, path)
    window.open_command_palette = lambda: open_command_palette(window)
    _build_actions(window)
    _build_menus(window)
    window.setAcceptDrops(True)
    window._drop_filter = _DropFilter(window)
    window.installEventFilter(window._drop_filter)
    for warning in window.catalog_link.startup_warnings():
        QTimer.singleShot(0, lambda w=warning: window.show_banner(w, level="info"))


# ---------------------------------------------------------------------- actions and menus
def _action(window: Any, text: str, slot: Callable[[], Any], shortcut: Any, name: str, tip: str = "") -> QAction:
    a = QAction(text, window)
    a.setObjectName(name)
    if shortcut:
        a.setShortcut(QKeySequence(shortcut))
        a.setShortcutContext(Qt.WindowShortcut)
    if tip:
        a.setToolTip(tip)
        a.setStatusTip(tip)
    a.triggered.connect(lambda _=False: slot())
    window.addAction(a)  # shortcuts work even while the menu bar is hidden
    return a


def _build_actions(window: Any) -> None:
    window.act_import = _action(window, "Import servers…", lambda: choose_import_file(window), QKeySequence.Open,
                                "actionImport", "Import servers from Claude Desktop, Cursor, VS Code, the MCP "
                                "Inspector or a registry server.json")
    window.act_export_all = _action(window, "Export catalog (Claude Desktop format)…",
                                    lambda: export_servers(window, None), None, "actionExportCatalog",
                                    "Write every saved server to a claude_desktop_config.json (secrets masked)")
    window.act_export_one = _action(window, "Export selected server…", lambda: export_servers(window, "selected"),
                                    None, "actionExportServer",
                                    "Write the selected server in the Claude Desktop format (secrets masked)")
    window.act_copy_command = _action(window, "Copy as spyglass command", lambda: copy_command(window),
                                      "Ctrl+Shift+C", "actionCopyCommand",
                                      "Copy the selected server as a `spyglass` command line")
    window.act_preferences = _action(window, "Preferences…", lambda: show_preferences(window),
                                     QKeySequence.Preferences if not QKeySequence(QKeySequence.Preferences)
                                     .isEmpty() else "Ctrl+,", "actionPreferences")
    window.act_filter_traffic = _action(window, "Filter traffic", lambda: focus_traffic_filter(window), "Ctrl+F",
                                        "actionFilterTraffic", "Show the traffic pane and type a filter")
    window.act_find_tool = _action(window, "Find a tool", lambda: focus_tool_search(window), "Ctrl+L",
                                   "actionFindTool", "Type in the tool search box")
    window.act_palette = _action(window, "Command palette…", lambda: open_command_palette(window), "Ctrl+K",
                                 "actionCommandPalette", "Connect, switch server, jump to a tool… by typing")
    window.act_clear_traffic = _action(window, "Clear traffic", lambda: clear_traffic(window), None,
                                       "actionClearTraffic", "Hide the frames so far (the session keeps them)")
    window.act_shortcuts = _action(window, "Keyboard shortcuts", lambda: show_shortcuts(window), "F1",
                                   "actionShortcuts", "Every keyboard shortcut of Spyglass")


def _build_menus(window: Any) -> None:
    mb = window.menuBar()
    first = mb.actions()[0] if mb.actions() else None
    file_menu = QMenu("&File", window)
    file_menu.setObjectName("fileMenu")
    file_menu.addAction(window.act_import)
    file_menu.addSeparator()
    file_menu.addActions([window.act_export_all, window.act_export_one, window.act_copy_command])
    file_menu.addSeparator()
    file_menu.addAction(window.act_preferences)
    mb.insertMenu(first, file_menu) if first is not None else mb.addMenu(file_menu)
    for action in mb.actions():
        menu = action.menu()
        if menu is None:
            continue
        if menu.objectName() == "viewMenu":
            menu.addSeparator()
            menu.addActions([window.act_palette, window.act_filter_traffic, window.act_find_tool,
                             window.act_clear_traffic])
        elif action.text().replace("&", "") == "Help":
            menu.insertAction(menu.actions()[0] if menu.actions() else None, window.act_shortcuts)


# ---------------------------------------------------------------------- preferences
def apply_preferences(window: Any, prefs: Preferences) -> None:
    old = getattr(window, "preferences", None)
    window.preferences = prefs
    apply_to_transports(prefs)
    app = QApplication.instance()
    if app is not None:
        apply_font(app, prefs.font_size)
    if old is None or old.theme != prefs.theme:
        window.set_theme(prefs.theme)


# ---------------------------------------------------------------------- focus and traffic
def focus_traffic_filter(window: Any) -> None:
    window.traffic_dock.show()
    window.traffic_dock.raise_()
    edit = window.findChild(QLineEdit, "trafficFilter")
    if edit is not None:
        edit.setFocus(Qt.ShortcutFocusReason)
        edit.selectAll()


def focus_tool_search(window: Any) -> None:
    if window.selected_connection() is not None:
        window.tabs.setCurrentIndex(0)
    window.tool_panel.search.setFocus(Qt.ShortcutFocusReason)
    window.tool_panel.search.selectAll()


def clear_traffic(window: Any) -> None:
    pane = window.traffic_pane
    if pane is not None and hasattr(pane, "clear_view"):
        pane.clear_view()


# ---------------------------------------------------------------------- import
def choose_import_file(window: Any) -> QFileDialog:
    dialog = QFileDialog(window, "Import servers", str(Path.home()),
                         "Server lists (*.json *.jsonc);;All files (*)")
    dialog.setObjectName("importFileDialog")
    dialog.setFileMode(QFileDialog.ExistingFile)
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.fileSelected.connect(lambda path: import_file(window, path))
    dialog.open()
    return dialog


def import_file(window: Any, path: str) -> Any:
    """Preview `path` in the import dialog (nothing is written before Import). A file that cannot be
    read or parsed gets a banner naming the file, line and column; returns the dialog or None."""
    from ..importers import ImportFileError, preview_file
    from .import_dialog import ImportDialog

    try:
        preview = preview_file(path, window.catalog)
    except ImportFileError as exc:
        window.show_banner(f"Cannot import: {exc.message}")  # the message names the file (and line, column)
        return None
    except Exception as exc:  # noqa: BLE001 - a bug in an importer must not take the window down
        log.exception("import preview of %s", path)
        window.show_banner(f"Cannot import {path}: {type(exc).__name__}: {exc}")
        return None
    dialog = ImportDialog(preview, window.catalog, window, save=window.persist)
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.imported.connect(lambda result: imported(window, result, preview.path))
    dialog.open()
    return dialog


def imported(window: Any, result: Any, source: str) -> None:
    """Put what an import added or replaced into the sidebar (not connected)."""
    first = None
    for entry in result.added:
        conn = window.add_server(copy.deepcopy(entry.spec), mode=entry.mode, timeout=entry.timeout, connect=False,
                                 select=False, catalog_id=entry.id)
        first = first or conn
    for entry in result.replaced:
        for conn in window.servers.connections:
            if getattr(conn, "catalog_id", None) == entry.id:
                conn.spec = copy.deepcopy(entry.spec)
                conn.mode = entry.mode
                row = window.servers.connections.index(conn)
                window.servers.dataChanged.emit(window.servers.index(row), window.servers.index(row))
                break
        else:
            conn = window.add_server(copy.deepcopy(entry.spec), mode=entry.mode, timeout=entry.timeout,
                                     connect=False, select=False, catalog_id=entry.id)
            first = first or conn
    if first is not None:
        window.select_connection(first)
    n, r = len(result.added), len(result.replaced)
    parts = [f"{n} server{'s' if n != 1 else ''} added"] + ([f"{r} replaced"] if r else [])
    if result.skipped:
        parts.append(f"{len(result.skipped)} skipped")
    text = f"Imported from {Path(source).name}: {', '.join(parts)}."
    if result.warnings:
        text += " " + " ".join(result.warnings)
    window.show_banner(text, level="info")
    window.catalog_link.warn_secrets()


class _DropFilter(QObject):
    """Drag a config file onto the window to import it."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        kind = event.type()
        if kind in (QEvent.DragEnter, QEvent.DragMove):
            if _dropped_file(event) is not None:
                event.acceptProposedAction()
                return True
        elif kind == QEvent.Drop:
            path = _dropped_file(event)
            if path is not None:
                event.acceptProposedAction()
                QTimer.singleShot(0, lambda: import_file(self.window, path))
                return True
        return False


def _dropped_file(event: Any) -> str | None:
    mime = event.mimeData()
    if mime is None or not mime.hasUrls():
        return None
    for url in mime.urls():
        if url.isLocalFile():
            return url.toLocalFile()
    return None


# ---------------------------------------------------------------------- export
def _selected_server(window: Any) -> Any:
    """The selected server as a catalog entry when it is saved (secret marks kept), else its spec."""
    conn = window.selected_connection()
    if conn is None:
        return None
    entry = window.catalog_link.entry_of(conn)
    return entry if entry is not None else conn.spec


def export_servers(window: Any, which: str | None, path: str | None = None) -> Any:
    """Write the catalog (`which` None) or the selected server to a Claude Desktop config file.
    Without `path`, asks for one (non-blocking). An existing file keeps its other servers."""
    if which == "selected":
        server = _selected_server(window)
        if server is None:
            window.show_banner("Select a server to export.", level="info")
            return None
        servers = [server]
    else:
        servers = window.catalog.servers or [c.spec for c in window.servers.connections]
    if not servers:
        window.show_banner("There is no server to export yet.", level="info")
        return None
    if path is None:
        dialog = QFileDialog(window, "Export servers (Claude Desktop format)",
                             str(Path.home() / "claude_desktop_config.json"), "JSON files (*.json);;All files (*)")
        dialog.setObjectName("exportFileDialog")
        dialog.setAcceptMode(QFileDialog.AcceptSave)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda p: export_servers(window, which, p))
        dialog.open()
        return dialog
    from ..config import ConfigError
    from ..exporters import export_claude_desktop

    try:
        export_claude_desktop(path, servers)
    except ConfigError as exc:
        window.show_banner(f"Export failed: {exc.message}")
        return False
    n = len(servers)
    window.show_banner(f"Exported {n} server{'s' if n != 1 else ''} to {path} (secrets masked).", level="info")
    return True


def copy_command(window: Any) -> str | None:
    from ..exporters import spyglass_command

    server = _selected_server(window)
    if server is None:
        window.show_banner("Select a server to copy.", level="info")
        return None
    text = spyglass_command(server)
    QGuiApplication.clipboard().setText(text)
    window.statusBar().showMessage(f"Copied: {text}", 8000)
    return text


# ---------------------------------------------------------------------- palette, shortcuts, about
def open_command_palette(window: Any) -> Any:
    from .command_palette import CommandPalette, window_commands

    palette = CommandPalette(window_commands(window), window)
    palette.setAttribute(Qt.WA_DeleteOnClose)
    palette.popup()
    window._palette = palette
    return palette


def show_shortcuts(window: Any) -> Any:
    from .shortcuts import ShortcutsDialog

    dialog = ShortcutsDialog(window)
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.open()
    return dialog


def show_about(window: Any) -> Any:
    from .about import AboutDialog

    dialog = AboutDialog(window)
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.open()
    return dialog


# ---------------------------------------------------------------------- last selection
def save_selection(window: Any) -> None:
    conn = window.selected_connection()
    window.settings.setValue(LAST_SERVER, conn.spec.name if conn is not None else "")
    tool = window.tool_panel.selected_name() if conn is not None else None
    window.settings.setValue(LAST_TOOL, tool or "")


def restore_selection(window: Any, *, connect: bool = True) -> Any:
    """Select last session's server (connecting it when it is a saved one) and, once listed, its tool."""
    name = str(window.settings.value(LAST_SERVER) or "")
    tool = str(window.settings.value(LAST_TOOL) or "")
    conn = next((c for c in window.servers.connections if c.spec.name == name), None) if name else None
    if conn is None:
        return None
    window.select_connection(conn)
    from .connection import Status

    if connect and conn.status is Status.IDLE:
        window._spawn(conn.start(), f"connecting {conn.name}")
    if tool:
        def pick() -> None:
            if window.selected_connection() is conn and conn.tools_loaded and window.tool_panel.select(tool):
                try:
                    conn.toolsChanged.disconnect(pick)
                except (RuntimeError, TypeError):
                    pass
        conn.toolsChanged.connect(pick)
        if conn.tools_loaded:
            QTimer.singleShot(0, pick)
    return conn
