"""`watchDialog`: one server's development loop — restart on save (folders, patterns, what runs again).

For a stdio server: the folders watched (`watchFolders`; empty: the command's working folder), the glob
patterns (`watchPatterns`; empty: the source files of the server's language), what a restart runs again
(`watchRerun`: nothing, the last call, the pinned calls) and a preview of what that resolves to
(`watchPreview`), ignored folders named. For a URL server there is nothing to watch: the loop reconnects
when the server comes back, and re-runs the same way.
"""

from __future__ import annotations

import os

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...config import ServerSpec
from ...devloop import WatchSettings, default_folder, default_patterns, plan
from ...devloop.watch import IGNORED_DIRS, parse_patterns
from ..base.layout import text_label

RERUN_CHOICES = (("off", "Nothing"), ("last", "The last call"), ("pinned", "The pinned calls (History → Pin)"))


class WatchDialog(QDialog):
    def __init__(self, spec: ServerSpec, settings: WatchSettings | None, on: bool,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("watchDialog")
        self.spec = spec
        url = spec.url is not None
        self.setWindowTitle(f"Development loop: {spec.name}")
        settings = settings or WatchSettings()
        lay = QVBoxLayout(self)
        self.enabled = QCheckBox("Reconnect when the server comes back" if url else "Restart the server when a "
                                 "watched file changes", self)
        self.enabled.setObjectName("watchEnabled")
        self.enabled.setChecked(on)
        lay.addWidget(self.enabled)
        form = QFormLayout()
        self.folders = QListWidget(self)
        self.folders.setObjectName("watchFolders")
        self.folders.addItems(settings.paths)
        self.folders.setMaximumHeight(110)
        add = QPushButton("Add folder…", self)
        add.setObjectName("watchAddFolder")
        add.clicked.connect(self._add_folder)
        remove = QPushButton("Remove", self)
        remove.setObjectName("watchRemoveFolder")
        remove.clicked.connect(self._remove_folder)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        folder_box = QVBoxLayout()
        folder_box.addWidget(self.folders)
        folder_box.addLayout(buttons)
        self.patterns = QLineEdit(" ".join(settings.patterns), self)
        self.patterns.setObjectName("watchPatterns")
        self.patterns.setPlaceholderText(" ".join(default_patterns(spec.command)) + "  (the default)")
        self.rerun = QComboBox(self)
        self.rerun.setObjectName("watchRerun")
        for key, text in RERUN_CHOICES:
            self.rerun.addItem(text, key)
        self.rerun.setCurrentIndex(max(0, [k for k, _ in RERUN_CHOICES].index(settings.rerun)))
        if not url:
            form.addRow("Folders:", folder_box)
            form.addRow("Files:", self.patterns)
        form.addRow("After a restart, run again:", self.rerun)
        lay.addLayout(form)
        self.preview = text_label("", self, name="watchPreview", role="muted")
        self.preview.setWordWrap(True)
        lay.addWidget(self.preview)
        box = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel, self)
        box.setObjectName("watchButtons")
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        lay.addWidget(box)
        for w in (self.folders.model(),):
            w.rowsInserted.connect(self._update_preview)
            w.rowsRemoved.connect(self._update_preview)
        self.patterns.textChanged.connect(self._update_preview)
        self.enabled.toggled.connect(self._update_preview)
        self._update_preview()
        self.resize(max(560, self.sizeHint().width()), self.sizeHint().height())

    def settings(self) -> WatchSettings:
        paths = [self.folders.item(i).text() for i in range(self.folders.count())]
        return WatchSettings(paths=paths, patterns=parse_patterns(self.patterns.text()),
                             rerun=str(self.rerun.currentData()))

    def on(self) -> bool:
        return self.enabled.isChecked()

    def _add_folder(self) -> None:
        start = default_folder(self.spec) if self.spec.command else os.getcwd()
        folder = QFileDialog.getExistingDirectory(self, "Watch a folder", start)
        if folder:
            self.add_folder(folder)

    def add_folder(self, folder: str) -> None:
        if folder not in [self.folders.item(i).text() for i in range(self.folders.count())]:
            self.folders.addItem(folder)

    def _remove_folder(self) -> None:
        for item in self.folders.selectedItems():
            self.folders.takeItem(self.folders.row(item))

    def _update_preview(self) -> None:
        if self.spec.url is not None:
            self.preview.setText("Spyglass asks the server every few seconds whether it is there; when it is not, "
                                 "it tries again (waiting longer each time) until it answers, then lists "
                                 "everything again and marks what changed.")
            return
        p = plan(self.spec, self.settings())
        missing = [f for f in p.folders if not os.path.isdir(f)]
        lines = [f"Watching {', '.join(p.folders)} for {' '.join(p.patterns)}.",
                 "Never watched: " + ", ".join(sorted(IGNORED_DIRS)[:12]) + " and other build folders."]
        if missing:
            lines.insert(1, f"⚠ Not there (yet): {', '.join(missing)} — watched once it exists.")
        self.preview.setText("\n".join(lines))
