"""A form of named string arguments with completions as you type (prompt arguments, template variables).

One row per argument: its label above it (title or name, `*` when required; the tool form's pattern), a line
edit (`arg:<name>`) with a completion popup, and a help line (the
description, or a warning when the server requires an argument it does not
describe), followed by the suggestions the server gave. Completion requests are
debounced per field and carry the values of the earlier fields as
`context.arguments`; an answer that arrives after a newer request is dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, QStringListModel, Qt, QTimer, Signal
from PySide6.QtWidgets import QCompleter, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from ... import errors as E
from ..base import design, theme
from ..base.text import plain_tooltip, visible, visible_block

log = logging.getLogger("spyglass.ui.arg_form")

DEBOUNCE_MS = 250
SHOWN_SUGGESTIONS = 8

# (argument name, value typed so far, earlier arguments) -> a features.Completion
Completer = Callable[[str, str, dict[str, str]], Awaitable[Any]]


def completer_for(connection: Callable[[], Any], ref: dict[str, Any]) -> Completer:
    """completion/complete for `ref` (a prompt or a resource template) on whichever connection
    `connection()` gives when the user types."""
    async def complete(name: str, value: str, earlier: dict[str, str]) -> Any:
        conn = connection()
        if conn is None:
            raise E.ConnectError("not connected")
        return await conn.session.library.complete(ref, name, value, earlier)
    return complete


class _Field:
    def __init__(self, spec: dict[str, Any], edit: QLineEdit, help_label: QLabel, hint: QLabel) -> None:
        self.spec = spec
        self.name: str = spec["name"]
        self.required = spec.get("required") is True
        self.edit = edit
        self.help = help_label
        self.hint = hint
        self.model = QStringListModel(edit)
        self.completer = QCompleter(self.model, edit)
        self.completer.setCaseSensitivity(Qt.CaseInsensitive)
        self.completer.setCompletionMode(QCompleter.UnfilteredPopupCompletion)
        edit.setCompleter(self.completer)
        self.timer = QTimer(edit)
        self.timer.setSingleShot(True)
        self.seq = 0
        self.suggestions: list[str] = []
        self.note: str | None = None


class ArgumentForm(QWidget):
    """`set_arguments([{name, title?, description?, required?}, ...], completer)`; `values()`, `missing()`."""

    changed = Signal()
    suggestionsChanged = Signal(str)  # argument name

    def __init__(self, parent: QWidget | None = None, *, name: str = "argumentForm") -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.debounce_ms = DEBOUNCE_MS
        self._form = QFormLayout()  # labels above their fields, as the tool form has them (one pattern)
        self._form.setRowWrapPolicy(QFormLayout.WrapAllRows)
        self._form.setFieldGrowthPolicy(QFormLayout.ExpandingFieldsGrow)
        self._form.setLabelAlignment(Qt.AlignLeft | Qt.AlignTop)
        self._form.setFormAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.empty = QLabel("No arguments.", self)
        self.empty.setObjectName("argumentFormEmpty")
        self.empty.setTextFormat(Qt.PlainText)
        self.problems = QLabel(self)
        self.problems.setObjectName("argumentFormProblems")
        self.problems.setTextFormat(Qt.PlainText)
        self.problems.setWordWrap(True)
        self.problems.hide()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.empty)
        lay.addWidget(self.problems)
        lay.addLayout(self._form)
        self.fields: list[_Field] = []
        self._completer: Completer | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------------ building
    def set_arguments(self, arguments: Any, completer: Completer | None = None) -> None:
        for task in list(self._tasks):
            task.cancel()
        while self._form.rowCount():
            self._form.removeRow(0)
        self.fields = []
        self._completer = completer
        problems = []
        seen: set[str] = set()
        for spec in arguments if isinstance(arguments, list) else []:
            if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not spec["name"]:
                problems.append(f"An argument without a name was left out: {visible(repr(spec), 120)}")
                continue
            if spec["name"] in seen:
                problems.append(f"Argument {visible(spec['name'], 80)!r} is listed twice; the first is used.")
                continue
            seen.add(spec["name"])
            self._add_row(spec)
        if arguments is not None and not isinstance(arguments, list):
            problems.append("The server's argument list is not a list; it is ignored.")
        self.empty.setVisible(not self.fields)
        self.problems.setText("\n".join("⚠ " + p for p in problems))
        self.problems.setStyleSheet(f"color: {theme.colour('warning').name()};")
        self.problems.setVisible(bool(problems))

    def _add_row(self, spec: dict[str, Any]) -> None:
        name = spec["name"]
        title = spec.get("title") if isinstance(spec.get("title"), str) and spec["title"].strip() else name
        required = spec.get("required") is True
        label = QLabel(visible(title, 80) + (" *" if required else ""), self)
        label.setObjectName(f"argLabel:{name}")
        label.setTextFormat(Qt.PlainText)
        edit = QLineEdit(self)
        edit.setObjectName(f"arg:{name}")
        edit.setClearButtonEnabled(True)
        label.setBuddy(edit)
        desc = spec.get("description") if isinstance(spec.get("description"), str) else ""
        help_label = QLabel(self)
        help_label.setObjectName(f"argHelp:{name}")
        help_label.setTextFormat(Qt.PlainText)
        help_label.setWordWrap(True)
        if desc.strip():
            help_label.setText(visible_block(desc, 600))
            help_label.setStyleSheet(f"color: {theme.colour('muted').name()};")
        elif required:
            help_label.setText("Required by the server, which does not say what it is.")
            help_label.setStyleSheet(f"color: {theme.colour('warning').name()};")
        else:
            help_label.hide()
        edit.setPlaceholderText("required" if required else "optional")
        tip = [f"{visible(name, 120)}" + (" (required)" if required else " (optional)")]
        if desc:
            tip.append(visible_block(desc, 2000))
        edit.setToolTip(plain_tooltip("\n".join(tip)))
        label.setToolTip(edit.toolTip())
        hint = QLabel(self)
        hint.setObjectName(f"argSuggestions:{name}")
        hint.setTextFormat(Qt.PlainText)
        hint.setWordWrap(True)
        hint.hide()
        box = QWidget(self)
        b = QVBoxLayout(box)
        b.setContentsMargins(0, 0, 0, 0)
        b.setSpacing(design.space("hair"))
        b.addWidget(edit)
        b.addWidget(help_label)
        b.addWidget(hint)
        self._form.addRow(label, box)
        f = _Field(spec, edit, help_label, hint)
        self.fields.append(f)
        f.timer.timeout.connect(lambda f=f: self._request(f))
        edit.textEdited.connect(lambda _t, f=f: self._edited(f))
        edit.textChanged.connect(lambda _t: self.changed.emit())
        edit.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.FocusIn:
            f = next((f for f in self.fields if f.edit is obj), None)
            if f is not None and not f.suggestions and self._completer is not None:
                f.timer.start(self.debounce_ms)
        return super().eventFilter(obj, event)

    # ------------------------------------------------------------------ values
    def field(self, name: str) -> QLineEdit | None:
        f = next((f for f in self.fields if f.name == name), None)
        return f.edit if f else None

    def values(self) -> dict[str, str]:
        """Filled arguments only (an empty optional argument is left out)."""
        return {f.name: f.edit.text() for f in self.fields if f.edit.text() != ""}

    def set_values(self, values: dict[str, str]) -> None:
        for f in self.fields:
            if f.name in values:
                f.edit.setText(values[f.name])

    def missing(self) -> list[str]:
        return [f.name for f in self.fields if f.required and not f.edit.text()]

    def suggestions(self, name: str) -> list[str]:
        f = next((f for f in self.fields if f.name == name), None)
        return list(f.suggestions) if f else []

    def suggestion_note(self, name: str) -> str | None:
        f = next((f for f in self.fields if f.name == name), None)
        return f.note if f else None

    # ------------------------------------------------------------------ completion
    def _edited(self, f: _Field) -> None:
        if self._completer is not None:
            f.timer.start(self.debounce_ms)

    def request_completion(self, name: str) -> None:
        """Ask for suggestions for one field now (no debounce)."""
        f = next((f for f in self.fields if f.name == name), None)
        if f is not None:
            self._request(f)

    def _request(self, f: _Field) -> None:
        if self._completer is None or f not in self.fields:
            return
        f.seq += 1
        seq = f.seq
        earlier: dict[str, str] = {}
        for other in self.fields:
            if other is f:
                break
            if other.edit.text():
                earlier[other.name] = other.edit.text()
        try:
            task = asyncio.ensure_future(self._complete(f, seq, f.edit.text(), earlier))
        except RuntimeError:  # no loop
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _complete(self, f: _Field, seq: int, value: str, earlier: dict[str, str]) -> None:
        try:
            result = await self._completer(f.name, value, earlier)
            error = None
        except asyncio.CancelledError:
            raise
        except E.SpyglassError as exc:
            result, error = None, exc.message
        except Exception as exc:  # a bug of ours: say so in the form, never crash the slot
            log.exception("completion for %s", f.name)
            result, error = None, f"{type(exc).__name__}: {exc}"
        if seq != f.seq or f not in self.fields:
            return  # a newer request is on its way, or the form was rebuilt
        if result is None:
            f.suggestions, f.note = [], error
            f.hint.setText(f"Completion failed: {visible(error, 300)}" if error else "")
            f.hint.setStyleSheet(f"color: {theme.colour('error').name()};")
            f.hint.setVisible(bool(error))
            self.suggestionsChanged.emit(f.name)
            return
        f.suggestions, f.note = list(result.values), result.note
        f.model.setStringList(f.suggestions)
        text = ""
        if f.suggestions:
            shown = " · ".join(visible(v, 40) for v in f.suggestions[:SHOWN_SUGGESTIONS])
            more = (result.total or len(f.suggestions)) - min(len(f.suggestions), SHOWN_SUGGESTIONS)
            text = "Suggestions: " + shown + (f"  (+{more} more)" if more > 0 else "")
            if result.has_more and not more:
                text += "  (more on the server)"
        elif value:
            text = "No suggestions."
        if result.note:
            text = (text + "\n" if text else "") + "⚠ " + result.note
        f.hint.setText(text)
        f.hint.setStyleSheet(f"color: {theme.colour('warning' if result.note else 'muted').name()};")
        f.hint.setVisible(bool(text))
        if f.suggestions and f.edit.hasFocus() and f.edit.isVisible():
            f.completer.complete()
        self.suggestionsChanged.emit(f.name)
