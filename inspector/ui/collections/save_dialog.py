"""*Save to collection…* (`saveToCollectionDialog`): a call made by hand becomes a step of a collection
file, with its arguments and, as a starting expectation, what came back this time.

The user picks the file (a recent one, another one, or a new one), the step's name, and what the step
expects: the checks drawn from this answer (no tool error, its first line of text, its kinds of content,
its structured keys) or the same answer each time (a snapshot, stored from this very answer). The
preview is the YAML that will be written. An argument that is a secret is written as `${NAME}`, read
from the environment when the step runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from ... import errors as E
from ...collection import edit
from ...collection.load import CollectionError
from ...session import CallRecord
from ..base.layout import text_label
from ..base.text import visible

COLLECTION_FILTER = "Collections (*.yaml *.yml);;All files (*)"
DEFAULT_NAME = "spyglass.collection.yaml"

# path -> an Editable for it: the Collections tab's own when it has that file open (edits not lost)
Opener = Callable[[Path], "edit.Editable | None"]


def error_of(rec: CallRecord) -> dict[str, Any] | None:
    """A JSON-RPC error of the call as a collection sees it ({code, message})."""
    exc = rec.error
    if isinstance(exc, E.RemoteError):
        return {"code": exc.code, "message": exc.rpc_message}
    return None


class SaveCallDialog(QDialog):
    saved = Signal(str, str)  # the collection's path, the step's name

    def __init__(self, rec: CallRecord, server: Any, recent: list[Path], opened: Opener, *,
                 start_dir: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("saveToCollectionDialog")
        self.setWindowTitle("Save to collection")
        self.rec = rec
        self.server = server  # the ServerSpec the call was made on (its `server:` for a new file)
        self.opened = opened
        self.start_dir = start_dir or Path.cwd()
        schema = rec.tool_def.get("inputSchema") if isinstance(rec.tool_def, dict) else None
        self.arguments, self.secrets = edit.secret_arguments(rec.arguments, schema, rec.tool)
        self.answer_error = error_of(rec)

        self.file = QComboBox(self)
        self.file.setObjectName("saveCollectionFile")
        self.file.setEditable(True)
        self.file.setInsertPolicy(QComboBox.NoInsert)
        self.file.setMinimumContentsLength(48)
        for path in recent:
            self.file.addItem(str(path))
        if not recent:
            self.file.addItem(str(self.start_dir / DEFAULT_NAME))
        self.file.currentTextChanged.connect(lambda _t: self._update())
        browse = QPushButton("Browse…", self)
        browse.setObjectName("saveCollectionBrowse")
        browse.clicked.connect(self.browse)
        file_row = QHBoxLayout()
        file_row.addWidget(self.file, 1)
        file_row.addWidget(browse)
        self.note = text_label("", self, name="saveCollectionNote", role="muted")
        self.keep_server = QCheckBox("Write how to start this server in the new file", self)
        self.keep_server.setObjectName("saveCollectionServer")
        self.keep_server.setChecked(True)
        self.keep_server.setToolTip("Then `spyglass test FILE` needs no -- COMMAND or URL; secrets are written as "
                                    "${NAME}, read from the environment")
        self.keep_server.toggled.connect(lambda _on: self._update())
        self.name = QLineEdit(rec.tool, self)
        self.name.setObjectName("saveStepName")
        self.name.textChanged.connect(lambda _t: self._update())
        self.checks = QRadioButton(self._checks_label(), self)
        self.checks.setObjectName("saveExpectChecks")
        self.checks.setChecked(True)
        self.snapshot = QRadioButton("The same answer every time (this answer kept as a snapshot)", self)
        self.snapshot.setObjectName("saveExpectSnapshot")
        self.snapshot.setEnabled(rec.result is not None or self.answer_error is not None)
        self.timing = QCheckBox(f"No slower than {self._limit_ms()} ms (four times this call, at least 1 s)", self)
        self.timing.setObjectName("saveExpectTime")
        for w in (self.checks, self.snapshot, self.timing):
            w.toggled.connect(lambda _on: self._update())
        self.preview = QPlainTextEdit(self)
        self.preview.setObjectName("saveStepPreview")
        self.preview.setReadOnly(True)
        font = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        font.setStyleHint(QFont.Monospace)
        self.preview.setFont(font)
        self.preview.setMinimumHeight(160)
        self.secret_note = text_label("", self, name="saveSecretNote", role="muted")
        self.error = text_label("", self, name="saveCollectionError", role="error")
        self.error.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel, self)
        self.buttons.setObjectName("saveCollectionButtons")
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("Collection", file_row)
        form.addRow("", self.note)
        form.addRow("", self.keep_server)
        form.addRow("Step name", self.name)
        expect = QVBoxLayout()
        for w in (self.checks, self.snapshot, self.timing):
            expect.addWidget(w)
        form.addRow("Expect", expect)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(text_label("The step as it will be written:", self, role="muted"))
        lay.addWidget(self.preview, 1)
        lay.addWidget(self.secret_note)
        lay.addWidget(self.error)
        lay.addWidget(self.buttons)
        self.resize(640, 560)
        self._update()

    # ------------------------------------------------------------------ what is written
    def _checks_label(self) -> str:
        if self.answer_error is not None:
            return f"The same error: JSON-RPC code {self.answer_error.get('code')}"
        if self.rec.result is None:
            return f"No answer came ({self.rec.outcome}): the step expects nothing yet"
        return "Checks drawn from this answer: tool error or not, its first line of text, its kinds of content"

    def _limit_ms(self) -> int:
        ms = self.rec.elapsed * 1000
        return int(max(1000, -(-ms * 4 // 100) * 100))

    def path(self) -> Path:
        text = self.file.currentText().strip()
        return Path(text).expanduser() if text else self.start_dir / DEFAULT_NAME

    def expectation(self) -> dict[str, Any]:
        ms = self.rec.elapsed * 1000
        if self.snapshot.isChecked():
            expect: dict[str, Any] = {"snapshot": True}
            if self.timing.isChecked():
                expect["maxMs"] = self._limit_ms()
            return expect
        return edit.expectation_from("tools/call", self.rec.result, self.answer_error, ms,
                                     max_ms=self.timing.isChecked())

    def _server_for(self, path: Path) -> dict[str, Any] | None:
        if self.server is None or not self.keep_server.isChecked():
            return None
        return edit.server_of(self.server, path.parent)

    def _target(self, path: Path) -> edit.Editable:
        """The collection the step goes into: the tab's (when it has it open), the file, or a new one."""
        mine = self.opened(path)
        if mine is not None:
            return mine
        if path.exists():
            return edit.open_editable(path)
        return edit.new_editable(path, path.stem.removesuffix(".collection") or "collection",
                                 self._server_for(path))

    def _update(self) -> None:
        path = self.path()
        exists = path.exists() or self.opened(path) is not None
        self.note.setText("Added at the end of this collection." if exists else
                          "A new collection file will be made here.")
        self.keep_server.setVisible(not exists and self.server is not None)
        self.timing.setText(f"No slower than {self._limit_ms()} ms (four times this call, at least 1 s)")
        preview = edit.new_editable(path, "preview")
        edit.add_step(preview, self.name.text() or self.rec.tool, "call", self.rec.tool,
                      self.arguments if isinstance(self.arguments, dict) else None, self.expectation())
        self.preview.setPlainText(edit.dump(preview.steps))
        self.secret_note.setText(
            "Secrets are not written: " + ", ".join(f"${{{n}}}" for n in self.secrets)
            + " will be read from the environment." if self.secrets else "")
        self.secret_note.setVisible(bool(self.secrets))
        self.buttons.button(QDialogButtonBox.Save).setEnabled(bool(self.name.text().strip()) and not self.rec.running)

    def browse(self) -> QFileDialog:
        dialog = QFileDialog(self, "Save to collection", str(self.path().parent if self.path().parent.is_dir()
                                                                 else self.start_dir), COLLECTION_FILTER)
        dialog.setObjectName("saveCollectionChooser")
        dialog.setAcceptMode(QFileDialog.AcceptSave)
        dialog.setOption(QFileDialog.DontConfirmOverwrite, True)  # an existing file gets a step added, no more
        dialog.setDefaultSuffix("yaml")
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.choose)
        dialog.open()
        return dialog

    def choose(self, path: str) -> None:
        self.file.setCurrentText(path)

    def save(self) -> bool:
        """Add the step and write the file; the dialog stays open with the reason when it cannot."""
        path = self.path()
        try:
            target = self._target(path)
            pending = target.dirty and target.stamp is not None  # the tab holds edits not saved yet
            name = edit.add_step(target, self.name.text(), "call", self.rec.tool,
                                 self.arguments if isinstance(self.arguments, dict) else None, self.expectation())
            if not pending:  # else the step waits with those edits for the tab's Save: none written unasked
                try:
                    edit.save(target)
                except E.SpyglassError:
                    edit.remove_step(target, len(target.steps) - 1)  # the document stays as it was
                    target.dirty = False
                    raise
            if self.snapshot.isChecked():
                answer = {"error": self.answer_error} if self.answer_error is not None else self.rec.result
                edit.store_snapshot(target, name, answer)
        except CollectionError as exc:
            first = exc.problems[0] if exc.problems else None
            more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
            self._fail(f"{path.name} cannot take a step until it is fixed: "
                       f"{first.line}:{first.column}: {first.message}{more}" if first else str(exc))
            return False
        except E.SpyglassError as exc:
            self._fail(exc.message)
            return False
        except OSError as exc:
            self._fail(f"cannot write {path}: {exc.strerror or exc}")
            return False
        self.saved.emit(str(path), name)
        self.accept()
        return True

    def _fail(self, text: str) -> None:
        self.error.setText(visible(text, 600))
        self.error.show()
