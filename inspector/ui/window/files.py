"""Server lists in and out of the window: *File → Import servers…* (also a file dropped on the window,
and `spyglass --import FILE`), *Export catalog / selected server* in the Claude Desktop format, and
*Copy as spyglass command*. Nothing is written before the user confirms an import.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QWidget

from ...config import ConfigError
from ...exporters import export_claude_desktop, spyglass_command
from ...importers import ImportFileError, preview_file
from ..servers.catalog_link import CatalogLink
from ..servers.import_dialog import ImportDialog

log = logging.getLogger("spyglass.ui.files")

Message = Callable[..., None]  # message(text, level="error")


class ServerFiles(QObject):
    """`selected()` is the selected server as a catalog entry when it is saved (its secret marks kept), else
    its spec; `unsaved()` the specs of the sidebar when the catalog is empty; `imported(result, source)`
    puts what an import wrote into the sidebar."""

    def __init__(self, parent: QWidget, link: CatalogLink, *, message: Message, selected: Callable[[], Any],
                 unsaved: Callable[[], list[Any]], imported: Callable[[Any, str], None],
                 persist: Callable[[], bool], status: Callable[[str], None]) -> None:
        super().__init__(parent)
        self.parent_widget = parent
        self.link = link
        self.message = message
        self.selected = selected
        self.unsaved = unsaved
        self.imported = imported
        self.persist = persist
        self.status = status

    # ------------------------------------------------------------------ import
    def choose_import(self) -> QFileDialog:
        dialog = QFileDialog(self.parent_widget, "Import servers", str(Path.home()),
                             "Server lists (*.json *.jsonc);;All files (*)")
        dialog.setObjectName("importFileDialog")
        dialog.setFileMode(QFileDialog.ExistingFile)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.import_file)
        dialog.open()
        return dialog

    def import_file(self, path: str) -> ImportDialog | None:
        """Preview `path` in the import dialog (nothing is written before Import). A file that cannot be
        read or parsed gets a banner naming the file, line and column."""
        try:
            preview = preview_file(path, self.link.catalog)
        except ImportFileError as exc:
            self.message(f"Cannot import: {exc.message}")  # the message names the file (and line, column)
            return None
        except Exception as exc:  # a bug in an importer must not take the window down
            log.exception("import preview of %s", path)
            self.message(f"Cannot import {path}: {type(exc).__name__}: {exc}")
            return None
        dialog = ImportDialog(preview, self.link.catalog, self.parent_widget, save=self.persist())
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.imported.connect(lambda result: self._imported(result, preview.path))
        dialog.open()
        return dialog

    def _imported(self, result: Any, source: str) -> None:
        self.imported(result, source)
        n, r = len(result.added), len(result.replaced)
        parts = [f"{n} server{'s' if n != 1 else ''} added"] + ([f"{r} replaced"] if r else [])
        if result.skipped:
            parts.append(f"{len(result.skipped)} skipped")
        text = f"Imported from {Path(source).name}: {', '.join(parts)}."
        if result.warnings:
            text += " " + " ".join(result.warnings)
        self.message(text, level="info")
        self.link.warn_secrets()

    # ------------------------------------------------------------------ export
    def export(self, which: str | None, path: str | None = None) -> Any:
        """Write the catalog (`which` None) or the selected server to a Claude Desktop config file.
        Without `path`, asks for one (non-blocking). An existing file keeps its other servers."""
        if which == "selected":
            server = self.selected()
            if server is None:
                self.message("Select a server to export.", level="info")
                return None
            servers = [server]
        else:
            servers = self.link.catalog.servers or self.unsaved()
        if not servers:
            self.message("There is no server to export yet.", level="info")
            return None
        if path is None:
            dialog = QFileDialog(self.parent_widget, "Export servers (Claude Desktop format)",
                                 str(Path.home() / "claude_desktop_config.json"), "JSON files (*.json);;All files (*)")
            dialog.setObjectName("exportFileDialog")
            dialog.setAcceptMode(QFileDialog.AcceptSave)
            dialog.setAttribute(Qt.WA_DeleteOnClose)
            dialog.fileSelected.connect(lambda p: self.export(which, p))
            dialog.open()
            return dialog
        try:
            export_claude_desktop(path, servers)
        except ConfigError as exc:
            self.message(f"Export failed: {exc.message}")
            return False
        n = len(servers)
        self.message(f"Exported {n} server{'s' if n != 1 else ''} to {path} (secrets masked).", level="info")
        return True

    def copy_command(self) -> str | None:
        server = self.selected()
        if server is None:
            self.message("Select a server to copy.", level="info")
            return None
        text = spyglass_command(server)
        QGuiApplication.clipboard().setText(text)
        self.status(f"Copied: {text}")
        return text


class DropImporter(QObject):
    """Drag a config file onto the window to import it."""

    def __init__(self, files: ServerFiles, parent: QObject) -> None:
        super().__init__(parent)
        self.files = files

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.DragEnter, QEvent.DragMove):
            if dropped_file(event) is not None:
                event.acceptProposedAction()
                return True
        elif kind == QEvent.Drop:
            path = dropped_file(event)
            if path is not None:
                event.acceptProposedAction()
                QTimer.singleShot(0, lambda: self.files.import_file(path))
                return True
        return False


def dropped_file(event: Any) -> str | None:
    mime = event.mimeData()
    if mime is None or not mime.hasUrls():
        return None
    for url in mime.urls():
        if url.isLocalFile():
            return str(url.toLocalFile())
    return None
