"""*Export session…* (`exportSessionDialog`): a session's frames written to a file whose type says the
format — a portable `.mcpsession` (stderr and servers can be left out), HAR (`.har`, the HTTP exchanges
of HTTP servers) or OpenTelemetry traces (`.otlp.json`). Secrets are masked in every format.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
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
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ... import errors as E
from ...recording.files import SUFFIX, export_session
from ...recording.surface import definitions
from ...traffic import TrafficStore
from ..base import theme
from ..base.layout import text_label
from ..base.text import visible, visible_block

# (suffix, what the combo says, the file dialog's filter)
FORMATS = ((".mcpsession", "Spyglass session (.mcpsession)", "Spyglass sessions (*.mcpsession)"),
           (".har", "HAR: HTTP exchanges of HTTP servers (.har)", "HAR files (*.har)"),
           (".otlp.json", "OpenTelemetry traces, OTLP JSON (.otlp.json)", "OTLP JSON (*.otlp.json)"))


def format_of(path: str) -> str | None:
    name = path.strip().lower()
    for suffix, _label, _filter in sorted(FORMATS, key=lambda f: -len(f[0])):
        if name.endswith(suffix):
            return suffix
    return None


def with_suffix(path: str, suffix: str) -> str:
    current = format_of(path)
    base = path.strip()[: -len(current)] if current else path.strip()
    return base + suffix if base else ""


def write(store: TrafficStore, path: str, fmt: str, *, drop_stderr: bool, left_out: list[str],
          kept: list[str], known: list[str] | None = None) -> int:
    """Write `store` in format `fmt`; the number of frames (or HAR entries, or spans) written. `known`: the
    servers' own secrets, masked wherever the frames repeat them (`secrets.secrets_of`)."""
    known = known or []
    if fmt == ".mcpsession":
        return export_session(store, path, drop_stderr=drop_stderr, drop_servers=left_out, known=known)
    recorded = set(store.servers())
    servers = None if not left_out else [s for s in kept if s in recorded]
    if fmt == ".har":
        from ...recording.har import export_har  # written alongside; loaded when first asked for

        return int(export_har(store, path, servers=servers, known=known))
    from ...recording.otlp import export_otlp_json

    return int(export_otlp_json(store, path, servers=servers, known=known))


class ExportSessionDialog(QDialog):
    """Where to, in which format, and what to leave out; `exported(path, count)` is told of success."""

    def __init__(self, store: TrafficStore, parent: QWidget | None = None, *, suggested: str = "",
                 exported: Callable[[str, int], None] | None = None, known: list[str] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("exportSessionDialog")
        self.setWindowTitle("Export session")
        self.store = store
        self.exported = exported
        self.known = known or []  # the connected servers' own secrets
        self.path = QLineEdit(self)
        self.path.setObjectName("exportPath")
        self.path.setPlaceholderText("Where to write the file; its type says the format")
        self.browse = QPushButton("Choose…", self)
        self.browse.setObjectName("exportBrowse")
        self.browse.clicked.connect(self.choose)
        self.format = QComboBox(self)
        self.format.setObjectName("exportFormat")
        for suffix, label, _filter in FORMATS:
            self.format.addItem(label, suffix)
        self.drop_stderr = QCheckBox("Leave out what the servers wrote on stderr", self)
        self.drop_stderr.setObjectName("exportDropStderr")
        self.servers = QListWidget(self)
        self.servers.setObjectName("exportServers")
        self.servers.setToolTip("Untick a server to leave it out of the file")
        names = {sid: d.get("name") for sid, d in definitions(store).items()}
        ids = list(store.servers()) + [sid for sid in names if sid not in store.servers()]
        for sid in ids:
            name = names.get(sid)
            label = sid if not isinstance(name, str) or name in ("", sid) else f"{name} ({sid})"
            item = QListWidgetItem(visible(label, 120), self.servers)
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked)
            item.setData(Qt.UserRole, sid)
        self.servers.setMaximumHeight(self.servers.sizeHintForRow(0) * min(max(len(ids), 2), 6) + 8
                                      if ids else 60)
        self.note = text_label("", self, name="exportNote", role="muted")
        self.status = text_label("", self, name="exportStatus")
        self.status.hide()
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(self.browse)
        form = QFormLayout()
        form.addRow("File:", row)
        form.addRow("Format:", self.format)
        form.addRow("Servers:", self.servers)
        form.addRow("", self.drop_stderr)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Cancel, self)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.AcceptRole)
        self.export_button.setObjectName("exportButton")
        self.buttons.accepted.connect(self.export_now)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(text_label(f"{len(store):,} frames of {len(ids)} server{'s' if len(ids) != 1 else ''}.", self,
                                 name="exportAbout"))
        lay.addLayout(form)
        lay.addWidget(self.note)
        lay.addWidget(self.status)
        lay.addWidget(self.buttons)
        self.format.currentIndexChanged.connect(self._format_picked)
        self.path.textEdited.connect(self._path_typed)
        self.path.setText(suggested)
        self._path_typed(suggested)
        self._format_picked()
        self.resize(640, self.sizeHint().height())

    def chosen_format(self) -> str:
        return str(self.format.currentData())

    def _path_typed(self, text: str) -> None:
        fmt = format_of(text)
        if fmt is not None and fmt != self.chosen_format():
            self.format.blockSignals(True)
            self.format.setCurrentIndex(self.format.findData(fmt))
            self.format.blockSignals(False)
            self._explain()

    def _format_picked(self) -> None:
        fmt = self.chosen_format()
        text = self.path.text()
        if text and format_of(text) != fmt:
            self.path.setText(with_suffix(text, fmt))
        self._explain()

    def _explain(self) -> None:
        fmt = self.chosen_format()
        self.drop_stderr.setEnabled(fmt == ".mcpsession")
        self.note.setText({
            ".mcpsession": "A portable session: every frame exactly as sent and received, the servers' "
                           "definitions, openable in Spyglass (File → Open session) and `spyglass replay`.",
            ".har": "The HTTP exchanges of the session's HTTP servers, for browser tools and HAR viewers; stdio "
                    "servers have none and are skipped.",
            ".otlp.json": "One trace per server, a span per request, for OpenTelemetry tools (OTLP JSON).",
        }[fmt] + " Secrets are masked: environment values and headers by name and by shape (a URL's "
                 "password and secret query keys, connection strings, known token formats), and in the messages "
                 "secret-named keys and those shapes.")

    def choose(self) -> QFileDialog:
        start = self.path.text() or str(Path.home() / f"session{self.chosen_format()}")
        dialog = QFileDialog(self, "Export session", start, ";;".join(f[2] for f in FORMATS))
        dialog.setObjectName("exportSessionFileDialog")
        dialog.setAcceptMode(QFileDialog.AcceptSave)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.selectNameFilter(next(f[2] for f in FORMATS if f[0] == self.chosen_format()))

        def picked(path: str) -> None:
            fmt = next((f[0] for f in FORMATS if f[2] == dialog.selectedNameFilter()), self.chosen_format())
            self.path.setText(path if format_of(path) else path + fmt)
            self._path_typed(self.path.text())

        dialog.fileSelected.connect(picked)
        dialog.open()
        return dialog

    def left_out(self) -> list[str]:
        return [self.servers.item(i).data(Qt.UserRole) for i in range(self.servers.count())
                if self.servers.item(i).checkState() != Qt.Checked]

    def kept(self) -> list[str]:
        return [self.servers.item(i).data(Qt.UserRole) for i in range(self.servers.count())
                if self.servers.item(i).checkState() == Qt.Checked]

    def say(self, text: str, level: str) -> None:
        self.status.setText(visible_block(text, 2000))
        self.status.setStyleSheet(f"color: {theme.colour(level).name()};")
        self.status.show()

    def export_now(self) -> int | None:
        """Write the file; the count, or None (and a message here) when it could not be written."""
        path = self.path.text().strip()
        if not path:
            self.say("Choose where to write the file.", "error")
            return None
        if self.servers.count() and not self.kept():
            self.say("Every server is left out: tick at least one.", "error")
            return None
        fmt = self.chosen_format()
        try:
            count = write(self.store, path, fmt, drop_stderr=self.drop_stderr.isChecked() and fmt == ".mcpsession",
                          left_out=self.left_out(), kept=self.kept(), known=self.known)
        except E.SpyglassError as exc:
            self.say(f"Not exported: {exc.message}", "error")
            return None
        except ImportError as exc:  # a format whose module this build lacks
            self.say(f"Not exported: this build cannot write {fmt} files ({exc}).", "error")
            return None
        except OSError as exc:
            self.say(f"Not exported: cannot write {path}: {exc.strerror or exc}", "error")
            return None
        if self.exported is not None:
            self.exported(path, count)
        self.accept()
        return count


def suggested_name(store: TrafficStore) -> str:
    """A file in the home folder named after the session's own file (a session in memory: "session")."""
    stem = Path(store.path).stem if store.path is not None else "session"
    return str(Path.home() / f"{stem}{SUFFIX}")
