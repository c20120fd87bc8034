"""*Server → Tap a host's server…* (`tapHostDialog`): a host's config (Claude Desktop, Cursor, VS Code,
Claude Code, or any file with `mcpServers`) read, each of its servers listed, and the chosen one rewritten
to run through `spyglass tap` — with the change previewed as a diff first, a backup beside the file, and
**Untap** to put the entry back exactly (`inspector.tap.install`). A config that cannot be read is left
untouched, with the reason and where in the file.

A stdio server is tapped in place: the host starts the tap, the tap starts the server. A URL server goes
through a local reverse proxy instead: it is tapped on port chosen here, and the command that runs the
proxy is shown (it must run while the host uses the server).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ... import errors as E
from ...cli.tap import tap_command
from ...secrets import mask_args, mask_url
from ...tap import install
from ..base.layout import heading_label, text_label
from ..base.text import visible

NAME_ROLE = Qt.UserRole + 1
ANOTHER = "Another file…"


class TapHostDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, *, hosts: list[install.HostConfig] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tapHostDialog")
        self.setWindowTitle("Tap a host's server")
        self.config: install.TapConfig | None = None
        self.change: install.Change | None = None
        self.hosts = hosts if hosts is not None else install.hosts()
        self.host = QComboBox(self)
        self.host.setObjectName("tapHost")
        for h in self.hosts:
            self.host.addItem(f"{h.label} — {h.path}" + ("" if h.exists else " (not found)"), str(h.path))
        self.host.addItem(ANOTHER, "")
        self.host.currentIndexChanged.connect(lambda _i: self._host_chosen())
        self.path = text_label("", self, name="tapConfigPath", role="muted")
        self.servers = QTreeWidget(self)
        self.servers.setObjectName("tapServers")
        self.servers.setHeaderLabels(["Server", "Kind", "Runs", "State"])
        self.servers.setRootIsDecorated(False)
        self.servers.setUniformRowHeights(True)
        self.servers.setAlternatingRowColors(True)
        header = self.servers.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeToContents)
        header.setStretchLastSection(False)
        self.servers.currentItemChanged.connect(lambda *_: self._plan())
        self.preview = QPlainTextEdit(self)
        self.preview.setObjectName("tapPreview")
        self.preview.setReadOnly(True)
        self.preview.setLineWrapMode(QPlainTextEdit.NoWrap)
        font = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        font.setStyleHint(QFont.Monospace)
        self.preview.setFont(font)
        self.notes = text_label("", self, name="tapNotes", role="muted")
        self.error = text_label("", self, name="tapError", role="error")
        self.error.hide()
        self.apply_button = QPushButton("Tap", self)
        self.apply_button.setObjectName("tapApply")
        self.apply_button.clicked.connect(self.apply)
        self.copy_button = QPushButton("Copy the proxy command", self)
        self.copy_button.setObjectName("tapCopyProxy")
        self.copy_button.clicked.connect(self.copy_proxy)
        self.copy_button.hide()
        close = QPushButton("Close", self)
        close.setObjectName("tapClose")
        close.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(self.error, 1)
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.apply_button)
        buttons.addWidget(close)
        lay = QVBoxLayout(self)
        lay.addWidget(text_label("The host then starts the server through `spyglass tap`, which records the "
                                 "conversation and shows it here while this window is open. Restart the host "
                                 "after a change.", self, role="muted"))
        lay.addWidget(self.host)
        lay.addWidget(self.path)
        lay.addWidget(self.servers, 2)
        lay.addWidget(heading_label("The change", self))
        lay.addWidget(self.preview, 3)
        lay.addWidget(self.notes)
        lay.addLayout(buttons)
        self.resize(760, 620)
        first = next((i for i, h in enumerate(self.hosts) if h.exists), None)
        if first is not None:
            self.host.setCurrentIndex(first)
        self._host_chosen()

    # ------------------------------------------------------------------ reading
    def _host_chosen(self) -> None:
        path = self.host.currentData()
        if path == "":
            if self.host.count() > 1 or self.isVisible():
                self.browse()
            return
        self.load(Path(path))

    def browse(self) -> QFileDialog:
        dialog = QFileDialog(self, "A host's config", str(Path.home()), "JSON files (*.json);;All files (*)")
        dialog.setObjectName("tapConfigChooser")
        dialog.setFileMode(QFileDialog.ExistingFile)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda p: self.load(Path(p)))
        dialog.open()
        return dialog

    def load(self, path: Path) -> bool:
        self.path.setText(str(path))
        self.servers.clear()
        self.config = None
        self._show_change(None)
        try:
            self.config = install.read(path)
        except E.SpyglassError as exc:
            self._fail(f"{exc.message} (the file was left untouched)" if "untouched" not in exc.message
                       else exc.message)
            return False
        self._say_ok()
        for entry in self.config.entries:
            runs = (" ".join(mask_args(entry.command)) if entry.command else
                    mask_url(entry.url) if entry.url else entry.problem or "")
            state = "tapped" if entry.tapped else ""
            item = QTreeWidgetItem(self.servers, [entry.name, entry.transport, visible(runs, 200), state])
            item.setData(0, NAME_ROLE, entry.name)
            item.setToolTip(2, visible(runs, 2000))
            if entry.transport == "unknown":
                item.setDisabled(True)
        if not self.config.entries:
            self._fail(f"{path.name} lists no servers")
        elif self.servers.topLevelItemCount():
            self.servers.setCurrentItem(self.servers.topLevelItem(0))
        return True

    def select(self, name: str) -> bool:
        for i in range(self.servers.topLevelItemCount()):
            item = self.servers.topLevelItem(i)
            if item.data(0, NAME_ROLE) == name:
                self.servers.setCurrentItem(item)
                return True
        return False

    # ------------------------------------------------------------------ the change
    def _plan(self) -> None:
        item = self.servers.currentItem()
        if self.config is None or item is None:
            self._show_change(None)
            return
        name = item.data(0, NAME_ROLE)
        entry = self.config.entry(name)
        try:
            if entry.tapped:
                change = install.plan_untap(self.config, name)
            else:
                change = install.plan_tap(self.config, name, tap_command=tap_command(),
                                          port=0 if entry.transport == "url" else None)
        except E.SpyglassError as exc:
            self._show_change(None)
            self._fail(exc.message)
            return
        self._say_ok()
        self._show_change(change)

    def _show_change(self, change: install.Change | None) -> None:
        self.change = change
        self.preview.setPlainText(change.preview() if change is not None else "")
        notes = list(change.notes) if change is not None else []
        if change is not None and change.proxy_command:
            notes.append("Run meanwhile: " + shlex.join(change.proxy_command))
        self.notes.setText("\n".join(notes))
        self.notes.setVisible(bool(notes))
        self.copy_button.setVisible(change is not None and bool(change.proxy_command))
        self.apply_button.setEnabled(change is not None)
        self.apply_button.setText("Untap" if change is not None and change.action == "untap" else "Tap")

    def apply(self) -> bool:
        change = self.change
        if change is None:
            return False
        try:
            install.apply(change)
        except E.SpyglassError as exc:
            self._fail(exc.message)
            return False
        done = "tapped" if change.action == "tap" else "put back as it was"
        self.load(change.path)
        self.select(change.name)
        self.notes.setText(f"{change.name} is {done}. Restart the host so it starts the server "
                           + ("through the tap." if change.action == "tap" else "directly again."))
        self.notes.show()
        return True

    def copy_proxy(self) -> str | None:
        if self.change is None or not self.change.proxy_command:
            return None
        text = shlex.join(self.change.proxy_command)
        QGuiApplication.clipboard().setText(text)
        return text

    def _fail(self, text: str) -> None:
        self.error.setText(visible(text, 800))
        self.error.show()

    def _say_ok(self) -> None:
        self.error.hide()

