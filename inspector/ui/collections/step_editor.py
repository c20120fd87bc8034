"""Editing one step of a collection: its arguments in the form generated from the tool's `inputSchema`
(`collectionArguments`; as YAML text when the server does not describe the tool, or when a value is a
`${name}` reference no form field can hold), and its expectations in a small YAML editor
(`collectionExpect`), checked as `spyglass test` checks them, each problem with its line and column.

An edit is applied to the open collection (`edited`); the Collections tab writes the file on Save.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QFont, QFontDatabase, QSyntaxHighlighter, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ...collection import edit
from ...collection.load import CollectionError, Step, plain, yaml
from ..base import design, theme
from ..base.highlight import DARK_STYLE, LIGHT_STYLE, format_for
from ..base.layout import text_label
from ..base.text import visible

EXPECT_HINT = ("isError · text: {contains | equals | matches | not_contains} · structured: {schema | equals} · "
               "content: {count, types} · error: {code, message} · maxMs · snapshot · messages · listed")


class YamlHighlighter(QSyntaxHighlighter):
    """Colours YAML as it is typed: each line lexed on its own (keys, strings, numbers, comments)."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        from pygments.lexers import YamlLexer

        self.lexer = YamlLexer()

    def highlightBlock(self, text: str) -> None:
        style = DARK_STYLE if theme.is_dark() else LIGHT_STYLE
        offset = 0
        for ttype, value in self.lexer.get_tokens(text):
            fmt = format_for(ttype, style)
            length = len(value.encode("utf-16-le")) // 2
            if fmt is not None:
                self.setFormat(offset, length, fmt)
            offset += length


def code_editor(parent: QWidget, name: str) -> QPlainTextEdit:
    view = QPlainTextEdit(parent)
    view.setObjectName(name)
    font = QFontDatabase.systemFont(QFontDatabase.FixedFont)
    font.setStyleHint(QFont.Monospace)
    view.setFont(font)
    view.setLineWrapMode(QPlainTextEdit.NoWrap)
    view.setTabChangesFocus(True)  # YAML is indented with spaces; Tab moves on
    view.setMinimumHeight(40)  # the tab fits a small window; the editor grows with it
    view.highlighter = YamlHighlighter(view.document())  # type: ignore[attr-defined]
    return view


def has_reference(value: Any) -> bool:
    if isinstance(value, dict):
        return any(has_reference(v) for v in value.values())
    if isinstance(value, list):
        return any(has_reference(v) for v in value)
    return isinstance(value, str) and "${" in value


def problems_text(exc: CollectionError) -> str:
    return "\n".join(f"line {p.line}, column {p.column}: {p.message}" for p in exc.problems)


def goto(view: QPlainTextEdit, line: int, column: int) -> None:
    block = view.document().findBlockByNumber(max(0, line - 1))
    cursor = QTextCursor(block)
    cursor.movePosition(QTextCursor.Right, QTextCursor.MoveAnchor, max(0, min(column - 1, block.length() - 1)))
    view.setTextCursor(cursor)
    view.centerCursor()


class _Editor(QWidget):
    """What both editors share: the step being edited, Apply and Revert, a problems line."""

    edited = Signal()

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.editable: edit.Editable | None = None
        self.index = -1
        self.step: Step | None = None
        self.changed = False  # typed since shown or applied
        self.apply_button = QPushButton("Apply", self)
        self.apply_button.setObjectName(f"{name}Apply")
        self.apply_button.clicked.connect(lambda: self.apply())
        self.revert_button = QPushButton("Revert", self)
        self.revert_button.setObjectName(f"{name}Revert")
        self.revert_button.setToolTip("Back to what the open collection holds")
        self.revert_button.clicked.connect(self.revert)
        self.problems = text_label("", self, name=f"{name}Problems", role="error")
        self.problems.hide()
        self.buttons = QHBoxLayout()
        self.buttons.addWidget(self.problems, 1)
        self.buttons.addWidget(self.revert_button)
        self.buttons.addWidget(self.apply_button)

    def _mark(self, changed: bool) -> None:
        self.changed = changed
        self.apply_button.setEnabled(changed)
        self.revert_button.setEnabled(changed)

    def _fail(self, text: str) -> None:
        self.problems.setText(visible(text, 2000))
        self.problems.show()

    def apply(self) -> bool:
        raise NotImplementedError  # each editor applies its own kind of value

    def revert(self) -> None:
        self.show_step(self.editable, self.index, self.step)

    def show_step(self, editable: edit.Editable | None, index: int, step: Step | None, **_: Any) -> None:
        raise NotImplementedError


class ExpectEditor(_Editor):
    """The step's `expect:` as YAML, its comments kept (`collectionExpectEditor`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("collectionExpect", parent)
        self.text = code_editor(self, "collectionExpectEditor")
        self.text.textChanged.connect(lambda: self._mark(True))
        hint = text_label(EXPECT_HINT, self, name="collectionExpectHint", role="muted")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("none", "xs", "none", "none"))
        lay.addWidget(self.text, 1)
        lay.addWidget(hint)
        lay.addLayout(self.buttons)
        self.show_step(None, -1, None)

    def show_step(self, editable: edit.Editable | None, index: int, step: Step | None, **_: Any) -> None:
        self.editable, self.index, self.step = editable, index, step
        self.problems.hide()
        self.text.blockSignals(True)
        self.text.setPlainText(edit.expect_text(editable, index) if editable is not None and step is not None else "")
        self.text.blockSignals(False)
        self.text.setReadOnly(step is None)
        self.text.setPlaceholderText("isError: false\ntext: {contains: …}" if step is not None else "")
        self._mark(False)

    def apply(self) -> bool:
        if self.editable is None or self.step is None:
            return False
        if not self.changed:
            return True
        try:
            edit.set_expect(self.editable, self.index, self.text.toPlainText())
        except CollectionError as exc:
            self._fail(problems_text(exc))
            if exc.problems:
                goto(self.text, exc.problems[0].line, exc.problems[0].column)
            return False
        self.problems.hide()
        self._mark(False)
        self.edited.emit()
        return True


class ArgumentsEditor(_Editor):
    """The step's arguments: the generated form for the tool (or prompt), or YAML text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("collectionArguments", parent)
        self.schema: Any = None
        self.form: Any = None
        self.note = text_label("", self, name="collectionArgumentsNote", role="muted")
        self.as_text = QPushButton("Edit as YAML", self)
        self.as_text.setObjectName("collectionArgumentsAsText")
        self.as_text.setCheckable(True)
        self.as_text.toggled.connect(self._switch)
        self.text = code_editor(self, "collectionArgumentsText")
        self.text.textChanged.connect(lambda: self._mark(True))
        self.form_host = QWidget(self)
        self.form_host.setObjectName("collectionArgumentsForm")
        self.form_layout = QVBoxLayout(self.form_host)
        self.form_layout.setContentsMargins(0, 0, 0, 0)
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.form_host)
        top = QHBoxLayout()
        top.addWidget(self.note, 1)
        top.addWidget(self.as_text)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("none", "xs", "none", "none"))
        lay.addLayout(top)
        lay.addWidget(self.scroll, 1)
        lay.addWidget(self.text, 1)
        lay.addLayout(self.buttons)
        self.show_step(None, -1, None)

    def show_step(self, editable: edit.Editable | None, index: int, step: Step | None, *,
                  schema: Any = None, **_: Any) -> None:
        self.editable, self.index, self.step = editable, index, step
        self.schema = schema
        self.problems.hide()
        value = step.arguments if step is not None else None
        self.as_text.blockSignals(True)
        text_only = schema is None or has_reference(value)
        self.as_text.setChecked(text_only)
        self.as_text.setEnabled(schema is not None and not has_reference(value))
        self.as_text.blockSignals(False)
        if step is None:
            self.note.setText("")
        elif step.kind in ("read", "list", "ask"):
            self.note.setText("This step takes no arguments." if step.kind == "list" else
                              "A model makes up this step's arguments: expect them under Expect "
                              "(arguments: {...})." if step.kind == "ask" else
                              "A resource is read by its URI alone: this step takes no arguments.")
        elif schema is None:
            self.note.setText("The selected server does not list this " + ("tool" if step.kind == "call" else "prompt")
                              + ": the arguments are edited as YAML.")
        elif has_reference(value):
            self.note.setText("A value here is a ${name} (saved by an earlier step or from the environment): "
                              "the arguments are edited as YAML.")
        else:
            self.note.setText("")
        takes = step is not None and step.kind in ("call", "prompt")
        self._fill(value, takes)
        self._mark(False)

    def _fill(self, value: Any, takes: bool) -> None:
        self._drop_form()
        self.text.blockSignals(True)
        self.text.setPlainText(self._yaml(value) if takes else "")
        self.text.blockSignals(False)
        self.text.setReadOnly(not takes)
        form = takes and self.schema is not None and not self.as_text.isChecked()
        self.scroll.setVisible(form)
        self.text.setVisible(not form and takes)
        self.as_text.setVisible(takes)
        if form:
            from ...forms import SchemaForm

            self.form = SchemaForm(self.schema, self.form_host)
            if value is not None:
                try:
                    self.form.set_value(value)
                except Exception as exc:  # a value the form cannot show: the text then
                    self._drop_form()
                    self.as_text.setChecked(True)
                    self.note.setText(f"The form cannot show these arguments ({exc}): edited as YAML.")
                    return
            self.form.changed.connect(lambda: self._mark(True))
            self.form_layout.addWidget(self.form)
            self.form_layout.addStretch(1)

    def _drop_form(self) -> None:
        while self.form_layout.count():
            item = self.form_layout.takeAt(0)
            w = item.widget()
            if w is not None:
                w.deleteLater()
        self.form = None

    @staticmethod
    def _yaml(value: Any) -> str:
        if not value:
            return ""
        return edit.dump(value)  # block style: one argument per line

    def _switch(self, text: bool) -> None:
        value = self.current_value(quiet=True)
        self._fill(value if value is not None else (self.step.arguments if self.step is not None else None),
                   self.step is not None and self.step.kind in ("call", "prompt"))

    def current_value(self, *, quiet: bool = False) -> Any:
        """The arguments as shown (None: none, or text that does not parse, said unless `quiet`)."""
        if self.form is not None:
            return self.form.value()
        text = self.text.toPlainText()
        if not text.strip():
            return None
        from ruamel.yaml.error import MarkedYAMLError, YAMLError

        try:
            value = plain(yaml().load(text))
        except MarkedYAMLError as exc:
            if not quiet:
                mark = exc.problem_mark
                self._fail(f"line {mark.line + 1}, column {mark.column + 1}: not valid YAML: {exc.problem}"
                           if mark is not None else f"not valid YAML: {exc}")
            return None
        except (YAMLError, ValueError) as exc:
            if not quiet:
                self._fail(f"not valid YAML: {exc}")
            return None
        if not isinstance(value, dict):
            if not quiet:
                self._fail(f"arguments are a mapping of names to values, not {json.dumps(value)[:80]}")
            return None
        return value

    def apply(self) -> bool:
        if self.editable is None or self.step is None:
            return False
        if not self.changed:
            return True
        value = self.current_value()
        if value is None and self.text.toPlainText().strip() and self.form is None:
            return False
        if self.form is not None and self.form.problem_count():
            self.form.reveal_problems()
            self._fail(f"{self.form.problem_count()} field(s) are not valid for the tool's schema")
            return False
        if self.step.kind == "prompt" and isinstance(value, dict):
            value = {k: v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}
        edit.set_arguments(self.editable, self.index, value)
        self.problems.hide()
        self._mark(False)
        self.edited.emit()
        return True


def prompt_schema(prompt: dict[str, Any]) -> dict[str, Any]:
    """A prompt's arguments as a JSON Schema, so the generated form can edit them (all text)."""
    props: dict[str, Any] = {}
    required = []
    for arg in prompt.get("arguments") or []:
        if isinstance(arg, dict) and isinstance(arg.get("name"), str):
            props[arg["name"]] = {"type": "string", **({"description": arg["description"]}
                                                       if isinstance(arg.get("description"), str) else {})}
            if arg.get("required") is True:
                required.append(arg["name"])
    return {"type": "object", "properties": props, **({"required": required} if required else {})}

