"""The import preview (`importDialog`): every server of the file with its definition (secrets masked),
warnings and conflicts, a choice per server (add, rename, replace, skip), and the values the file
leaves to fill in (password fields for secrets). Nothing is written before Import.

Object names: `importEntries` (the tree, one row per server, Qt.UserRole = entry key),
`importAction:<key>` (QComboBox), `importName:<key>` (QLineEdit for the new name),
`importAnswer:<token>` (QLineEdit or QComboBox), `importButton`, `importError`.
"""

from __future__ import annotations

import shlex
import textwrap
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...catalog import Catalog, CatalogError
from ...importers import Choice, ImportPreview, MissingAnswers, apply
from ...secrets import mask_args, mask_url, mask_value
from ..base import design, theme
from ..base.text import masked, visible

ACTION_LABELS = {
    "add": "Add",
    "rename": "Add under a new name",
    "replace": "Replace the saved one",
    "skip": "Skip",
}


def describe(spec: Any) -> str:
    """One or a few lines a person reads: the command or URL, then env / headers (already masked)."""
    if spec is None:
        return ""
    lines = []
    if spec.url:
        kind = spec.transport or "http"
        lines.append(f"{mask_url(spec.url)}  ({kind})")
        lines += [f"{k}: {mask_value(k, v)}" for k, v in spec.headers.items()]
    else:
        lines.append(shlex.join(mask_args(spec.command)))
        lines += [f"{k}={masked(k, v)}" for k, v in spec.env.items()]
        if spec.cwd:
            lines.append(f"in {spec.cwd}")
    return "\n".join(visible(line, 160) for line in lines)


def wrap(text: str, width: int) -> str:
    """Lines broken by hand: the tree's rows are as tall as their line count (no eliding)."""
    out = []
    for line in text.split("\n"):
        out += textwrap.wrap(line, width, break_long_words=True, break_on_hyphens=False) or [""]
    return "\n".join(out)


def actions_for(entry: Any) -> list[str]:
    if not entry.importable:
        return ["skip"]
    if entry.conflict is None:
        return ["add", "skip"]
    return ["rename", "replace", "skip"]


class ImportDialog(QDialog):
    imported = Signal(object)  # ImportResult

    def __init__(self, preview: ImportPreview, catalog: Catalog, parent: QWidget | None = None, *,
                 save: bool = True) -> None:
        super().__init__(parent)
        self.setObjectName("importDialog")
        self.setWindowTitle("Import servers")
        self.preview = preview
        self.catalog = catalog
        self.save = save
        self.result_: Any = None
        self.action_boxes: dict[str, QComboBox] = {}
        self.name_edits: dict[str, QLineEdit] = {}
        self.answer_fields: dict[str, QWidget] = {}

        title = QLabel(f"{visible(preview.path, 200)}", self)
        title.setObjectName("importSource")
        title.setTextFormat(Qt.PlainText)
        title.setWordWrap(True)
        f = title.font()
        f.setBold(True)
        title.setFont(f)
        fmt = QLabel(f"{preview.format_label} · {len(preview.entries)} server"
                     f"{'s' if len(preview.entries) != 1 else ''}. Nothing is saved until you press Import.", self)
        fmt.setObjectName("importFormat")
        fmt.setTextFormat(Qt.PlainText)
        fmt.setWordWrap(True)

        lay = QVBoxLayout(self)
        lay.addWidget(title)
        lay.addWidget(fmt)
        if preview.warnings:
            note = QLabel("\n".join(visible(w, 300) for w in preview.warnings), self)
            note.setObjectName("importFileWarnings")
            note.setTextFormat(Qt.PlainText)
            note.setWordWrap(True)
            note.setStyleSheet(f"color: {theme.colour('warning').name()};")
            lay.addWidget(note)
        tree = self._build_tree()
        questions = self._build_questions()
        if questions is not None:  # both resizable; the questions scroll when there are many
            split = QSplitter(Qt.Vertical, self)
            split.setObjectName("importSplitter")
            split.setChildrenCollapsible(False)
            scroll = QScrollArea(split)
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QFrame.NoFrame)
            scroll.setWidget(questions)
            split.addWidget(tree)
            split.addWidget(scroll)
            split.setStretchFactor(0, 3)
            split.setStretchFactor(1, 2)
            lay.addWidget(split, 1)
        else:
            lay.addWidget(tree, 1)
        self.error = QLabel(self)
        self.error.setObjectName("importError")
        self.error.setTextFormat(Qt.PlainText)
        self.error.setWordWrap(True)
        self.error.setStyleSheet(f"color: {theme.colour('error').name()};")
        self.error.hide()
        lay.addWidget(self.error)
        buttons = QDialogButtonBox(self)
        self.import_button = QPushButton("Import", self)
        self.import_button.setObjectName("importButton")
        self.import_button.setDefault(True)
        buttons.addButton(self.import_button, QDialogButtonBox.AcceptRole)
        cancel = buttons.addButton(QDialogButtonBox.Cancel)
        cancel.setObjectName("importCancel")
        self.import_button.clicked.connect(self.do_import)
        cancel.clicked.connect(self.reject)
        lay.addWidget(buttons)
        self._update_button()
        self.resize(1000, 720 if questions is not None else 520)

    # ------------------------------------------------------------------ building
    def _build_tree(self) -> QTreeWidget:
        tree = QTreeWidget(self)
        tree.setObjectName("importEntries")
        tree.setColumnCount(4)
        tree.setHeaderLabels(["Server", "Definition (secrets masked)", "Notes", "Import as"])
        tree.setRootIsDecorated(False)
        tree.setWordWrap(False)
        tree.setUniformRowHeights(False)
        line_height = tree.fontMetrics().lineSpacing()
        tree.setAlternatingRowColors(True)
        tree.setSelectionMode(QTreeWidget.NoSelection)
        tree.setFocusPolicy(Qt.NoFocus)  # no focus frame on a cell: the choices are the controls
        header = tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.Stretch)
        header.setStretchLastSection(True)
        for entry in self.preview.entries:
            item = QTreeWidgetItem(tree)
            item.setData(0, Qt.UserRole, entry.key)
            item.setText(0, wrap(visible(entry.name, 60), 22) + (f"\nline {entry.line}" if entry.line else ""))
            item.setText(1, wrap(describe(entry.masked_spec()), 42) if entry.spec is not None else "—")
            notes = []
            if entry.error:
                notes.append(f"Cannot import: {entry.error}")
            if entry.conflict is not None:
                text = entry.conflict.describe()
                notes.append(text[:1].upper() + text[1:])
            prefix = f"server {entry.name!r}: "
            notes += [w[len(prefix):] if w.startswith(prefix) else w for w in entry.warnings]
            if not notes:
                notes.append("Ready")
            item.setText(2, wrap("\n".join(visible(n, 240) for n in notes), 36))
            item.setToolTip(2, "\n".join(notes))
            if entry.error:
                item.setForeground(2, QBrush(theme.colour("error")))
            elif entry.conflict or entry.warnings:
                item.setForeground(2, QBrush(theme.colour("warning")))
            for col in range(3):
                item.setTextAlignment(col, Qt.AlignLeft | Qt.AlignTop)
            widget = self._choice_widget(entry, tree)
            tree.setItemWidget(item, 3, widget)
            lines = max(item.text(c).count("\n") + 1 for c in range(3))
            item.setSizeHint(0, QSize(-1, max(lines * line_height + 8, widget.sizeHint().height())))
        self.tree = tree
        return tree

    def _choice_widget(self, entry: Any, parent: QWidget) -> QWidget:
        box = QWidget(parent)
        lay = QVBoxLayout(box)
        lay.setContentsMargins(design.margins("hair"))
        lay.setSpacing(design.space("hair"))
        combo = QComboBox(box)
        combo.setObjectName(f"importAction:{entry.key}")
        for action in actions_for(entry):
            label = ACTION_LABELS[action]
            if action == "skip" and entry.conflict is not None and entry.conflict.kind == "duplicate":
                label = "Skip (already saved)"
            combo.addItem(label, action)
        combo.setCurrentIndex(max(0, combo.findData(entry.default_action)))
        combo.setEnabled(entry.importable)
        name = QLineEdit(box)
        name.setObjectName(f"importName:{entry.key}")
        name.setText(entry.suggested_name or entry.name)
        name.setPlaceholderText("new name")
        name.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        combo.currentIndexChanged.connect(lambda _=0, c=combo, n=name: (n.setVisible(c.currentData() == "rename"),
                                                                        self._update_button()))
        name.setVisible(combo.currentData() == "rename")
        lay.addWidget(combo)
        lay.addWidget(name)
        self.action_boxes[entry.key] = combo
        self.name_edits[entry.key] = name
        return box

    def _build_questions(self) -> QGroupBox | None:
        questions = self.preview.questions
        if not questions:
            return None
        group = QGroupBox("Values to fill in", self)
        group.setObjectName("importQuestions")
        form = QFormLayout(group)
        for q in questions:
            if q.choices:
                field: QWidget = QComboBox(group)
                field.setEditable(not q.password)
                field.addItems(q.choices)
                if q.default is not None and q.default in q.choices:
                    field.setCurrentText(q.default)
            else:
                field = QLineEdit(group)
                if q.password:
                    field.setEchoMode(QLineEdit.Password)
                    field.setPlaceholderText("secret: saved in the OS keyring, never in the file")
                elif q.default is not None:
                    field.setText(q.default)
                else:
                    field.setPlaceholderText("required" if q.required else "optional")
            field.setObjectName(f"importAnswer:{q.token}")
            tip = [q.description] if q.description else []
            if q.used_in:
                tip.append("Used in " + ", ".join(q.used_in))
            field.setToolTip("\n".join(tip))
            label = QLabel(visible(q.label, 80) + (" (secret)" if q.password else "") + ":", group)
            label.setTextFormat(Qt.PlainText)
            label.setToolTip(field.toolTip())
            text = "  ".join(tip)
            if text:
                row = QWidget(group)
                rl = QVBoxLayout(row)
                rl.setContentsMargins(0, 0, 0, 0)
                rl.setSpacing(design.space("hair"))
                rl.addWidget(field)
                hint = QLabel(visible(text, 200), row)
                hint.setTextFormat(Qt.PlainText)
                hint.setEnabled(False)
                hint.setWordWrap(True)
                rl.addWidget(hint)
                form.addRow(label, row)
            else:
                form.addRow(label, field)
            self.answer_fields[q.token] = field
        return group

    # ------------------------------------------------------------------ reading and applying
    def choices(self) -> dict[str, Choice]:
        out = {}
        for key, combo in self.action_boxes.items():
            action = combo.currentData()
            name = self.name_edits[key].text().strip() if action == "rename" else None
            out[key] = Choice(action, name or None)
        return out

    def answers(self) -> dict[str, str]:
        out = {}
        for token, field in self.answer_fields.items():
            value = field.currentText() if isinstance(field, QComboBox) else field.text()
            if value != "":
                out[token] = value
        return out

    def set_action(self, key: str, action: str, name: str | None = None) -> None:
        combo = self.action_boxes[key]
        combo.setCurrentIndex(combo.findData(action))
        if name is not None:
            self.name_edits[key].setText(name)

    def set_answer(self, token: str, value: str) -> None:
        field = self.answer_fields[token]
        if isinstance(field, QComboBox):
            field.setCurrentText(value)
        else:
            field.setText(value)

    def _update_button(self) -> None:
        n = sum(1 for c in self.action_boxes.values() if c.currentData() != "skip")
        self.import_button.setEnabled(n > 0)
        self.import_button.setText(f"Import {n} server{'s' if n != 1 else ''}" if n else "Nothing to import")

    def do_import(self) -> Any:
        self.error.hide()
        try:
            result = apply(self.preview, self.catalog, self.choices(), self.answers(), save=self.save)
        except MissingAnswers as exc:
            names = ", ".join(q.label for q in exc.questions)
            self._fail(f"Fill in before importing: {names}")
            for q in exc.questions:
                field = self.answer_fields.get(q.token)
                if field is not None:
                    field.setStyleSheet(design.border_css(theme.colour("error").name()))
            return None
        except (CatalogError, ValueError, KeyError) as exc:
            self._fail(f"Nothing was imported: {getattr(exc, 'message', None) or exc}")
            return None
        self.result_ = result
        self.accept()
        self.imported.emit(result)
        return result

    def _fail(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()
