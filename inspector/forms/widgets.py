"""The widgets: leaf editors of one JSON scalar (or of any JSON value, as text) each. Qt.

Each class is registered under one or more widget names (`inspector.forms.registry`), the names
`widget_choice.choose_widget` gives; it is made as `make(ctx, shape, path, required, depth,
widget=name)`. `widget_field` is the field of scalars, enums and consts: it asks the registry
for the widget the shape names, as rjsf's scalar fields do.
"""

from __future__ import annotations

import copy
import datetime
import json
import math
import re
import uuid
from typing import Any

from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSizePolicy,
    QVBoxLayout,
)

from ._base import Context, Field, dumps, hbox, muted, same, small_button
from .schema import Shape
from .widget_choice import placeholder

_INT = re.compile(r"^-?\d+$")
_NUM = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
EMPTY_STRING_HINT = '""  (an empty string)'


def widget_field(ctx: Context, shape: Shape, path: tuple, required: bool, depth: int, *,
                 title: str = "", headerless: bool = False) -> Field:
    """The registry's widget for `shape.widget` ("const" for a const); its row shows the title."""
    name = "const" if shape.kind == "const" else shape.widget or "text"
    return ctx.registry.widget(name)(ctx, shape, path, required, depth, widget=name)


class TextField(Field):
    """A string: single line (with format helpers), password or multi-line."""

    kind = "string"

    def __init__(self, *args: Any, widget: str = "text", **kw: Any):
        super().__init__(*args, **kw)
        self.widget = widget
        lay = hbox(self)
        self._set = False
        self._updating = False
        self._exact: tuple[str, str] | None = None  # (value put, text Qt shows for it)
        self.multiline = widget == "textarea"
        self.edit = self._make_editor()
        self._placeholder = placeholder(self.shape.schema, widget)
        self.edit.setPlaceholderText(self._placeholder)
        if self.shape.description:
            self.edit.setToolTip(self.shape.description)
        self.name_editor(self.edit)
        lay.addWidget(self.edit, 1)
        quick = _QUICK.get(widget)
        if widget == "password":
            b = small_button("show", "Show or hide the text")
            b.setCheckable(True)
            b.toggled.connect(lambda on: self.edit.setEchoMode(QLineEdit.Normal if on else QLineEdit.Password))
            lay.addWidget(b)
        elif quick is not None:
            text, tip, func = quick
            b = small_button(text, tip)
            b.clicked.connect(lambda: self._quick(func()))
            lay.addWidget(b)

    def _make_editor(self):
        if self.multiline:
            edit = QPlainTextEdit()
            edit.setTabChangesFocus(True)
            edit.setFixedHeight(edit.fontMetrics().lineSpacing() * 5 + 12)
            edit.textChanged.connect(self._plain_changed)
        else:
            edit = QLineEdit()
            edit.textEdited.connect(self._edited)
            if self.widget == "password":
                edit.setEchoMode(QLineEdit.Password)
        return edit

    def _to_multiline(self) -> None:
        """A value with line breaks arrived in a single-line editor: switch to a multi-line one."""
        old = self.edit
        self.multiline = True
        self.edit = self._make_editor()
        self.edit.setPlaceholderText(old.placeholderText())
        self.edit.setToolTip(old.toolTip())
        self.layout().replaceWidget(old, self.edit)
        old.setParent(None)
        old.deleteLater()
        self.name_editor(self.edit)

    def editor(self):
        return self.edit

    def _text(self) -> str:
        text = self.edit.toPlainText() if self.multiline else self.edit.text()
        if self._exact is not None and text == self._exact[1]:
            return self._exact[0]  # Qt normalises some characters (NBSP, BOM, CR): keep what was put
        return text

    def _set_text(self, text: str) -> None:
        self._updating = True
        try:
            if self.multiline:
                self.edit.setPlainText(text)
            else:
                self.edit.setText(text)
                self.edit.setCursorPosition(0)
        finally:
            self._updating = False

    def _hint(self) -> None:
        empty = self._set and not self._text() and not self.required
        self.edit.setPlaceholderText(EMPTY_STRING_HINT if empty else self._placeholder)

    def _quick(self, text: str) -> None:
        self._set_text(text)
        self._edited(text)

    def _plain_changed(self) -> None:
        if not self._updating:
            self._edited(self._text())

    def _edited(self, text: str) -> None:
        self._set = bool(text) or self.required
        self._hint()
        self.edited()

    def has_value(self) -> bool:
        return self._set

    def reset(self) -> None:
        if self.shape.has_default and isinstance(self.shape.default, str):
            self.put(self.shape.default)
        elif self.required:
            self.put("")  # a required string starts as "" (an empty string is a value)
        else:
            self.unset()

    def get(self) -> Any:
        return self._text()

    def fits(self, value: Any) -> bool:
        return isinstance(value, str)

    def put(self, value: Any) -> None:
        if not self.multiline and ("\n" in value or "\r" in value):
            self._to_multiline()
        self._exact = None
        self._set_text(value)
        shown = self.edit.toPlainText() if self.multiline else self.edit.text()
        self._exact = (value, shown) if shown != value else None
        self._set = True
        self._hint()

    def unset(self) -> None:
        self._exact = None
        self._set_text("")
        self._set = False
        self._hint()


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


_QUICK = {
    "date": ("today", "Fill in today's date", lambda: datetime.date.today().isoformat()),
    "date-time": ("now", "Fill in the current time (UTC)", _now),
    "time": ("now", "Fill in the current time (UTC)", lambda: _now()[11:]),
    "uuid": ("new", "Fill in a new random UUID", lambda: str(uuid.uuid4())),
}


class NumberField(Field):
    """A number or integer typed as text, so that any JSON number survives exactly."""

    kind = "number"

    def __init__(self, *args: Any, widget: str = "number", **kw: Any):
        super().__init__(*args, **kw)
        lay = hbox(self)
        self.edit = QLineEdit()
        self.edit.setPlaceholderText(placeholder(self.shape.schema, widget) or
                                     ("whole number" if widget == "integer" else "number"))
        self.edit.textEdited.connect(self._edited)
        self.edit.setMaximumWidth(260)
        if self.shape.description:
            self.edit.setToolTip(self.shape.description)
        self.name_editor(self.edit)
        lay.addWidget(self.edit)
        lay.addStretch(1)

    def editor(self):
        return self.edit

    def _parse(self) -> tuple[bool, Any]:
        text = self.edit.text().strip()
        if not text:
            return False, None
        if _INT.match(text):
            return True, int(text)
        if _NUM.match(text):
            try:
                f = float(text)
            except (ValueError, OverflowError):
                return False, None
            if math.isfinite(f):
                return True, f
        return False, None

    def _edited(self, _text: str) -> None:
        self._check()
        self.edited()

    def _check(self) -> None:
        text = self.edit.text().strip()
        ok, _ = self._parse()
        self.local_problem = "" if ok or not text else f"{text!r} is not a number"

    def has_value(self) -> bool:
        return self._parse()[0]

    def get(self) -> Any:
        return self._parse()[1]

    def fits(self, value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and (
            not isinstance(value, float) or math.isfinite(value))

    def put(self, value: Any) -> None:
        self.edit.setText(str(value) if isinstance(value, int) else repr(value))
        self.local_problem = ""

    def unset(self) -> None:
        self.edit.setText("")
        self.local_problem = ""


class CheckField(Field):
    """A boolean; three states (the middle one is "not set") when the property is optional."""

    kind = "boolean"

    def __init__(self, *args: Any, widget: str = "checkbox", **kw: Any):
        super().__init__(*args, **kw)
        lay = hbox(self)
        self.box = QCheckBox()
        self.box.setTristate(not self.required)
        self.box.clicked.connect(lambda _=None: self._clicked())
        if self.shape.description:
            self.box.setToolTip(self.shape.description)
        self.name_editor(self.box)
        lay.addWidget(self.box)
        self.state = QLabel()
        self.state.setObjectName("fieldHelp")
        muted(self.state)
        lay.addWidget(self.state)
        lay.addStretch(1)
        self._absent = False
        self._show_state()

    def editor(self):
        return self.box

    def _clicked(self) -> None:
        self._absent = False
        self._show_state()
        self.edited()

    def _show_state(self) -> None:
        st = self.box.checkState()
        self.state.setText("not set" if st == Qt.PartiallyChecked else "true" if st == Qt.Checked else "false")

    def has_value(self) -> bool:
        return not self._absent and self.box.checkState() != Qt.PartiallyChecked

    def get(self) -> Any:
        return self.box.checkState() == Qt.Checked

    def fits(self, value: Any) -> bool:
        return isinstance(value, bool)

    def put(self, value: Any) -> None:
        self._absent = False
        self.box.setCheckState(Qt.Checked if value else Qt.Unchecked)
        self._show_state()

    def unset(self) -> None:
        self._absent = self.required  # a required box has no "not set" state: remember it
        self.box.setCheckState(Qt.Unchecked if self.required else Qt.PartiallyChecked)
        self._show_state()

    def reset(self) -> None:
        if isinstance(self.shape.default, bool) and self.shape.has_default:
            self.put(self.shape.default)
        elif self.required:
            self.put(False)
        else:
            self.unset()


class SelectField(Field):
    """One of a list of JSON values (enum, titled oneOf of consts, enumNames)."""

    kind = "enum"

    def __init__(self, *args: Any, widget: str = "select", **kw: Any):
        super().__init__(*args, **kw)
        lay = hbox(self)
        self.values = [v for _, v in self.shape.options]
        self.combo = QComboBox()
        self.combo.setFocusPolicy(Qt.StrongFocus)
        self.combo.addItem("— choose —" if self.required else "— not set —")
        self.combo.addItems([label if isinstance(label, str) else json.dumps(v)
                             for label, v in self.shape.options])
        self.combo.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        self.combo.setMinimumContentsLength(8)
        self.combo.activated.connect(lambda _=None: self.edited())
        if self.shape.description:
            self.combo.setToolTip(self.shape.description)
        self.name_editor(self.combo)
        lay.addWidget(self.combo)
        lay.addStretch(1)

    def editor(self):
        return self.combo

    def has_value(self) -> bool:
        return self.combo.currentIndex() > 0

    def get(self) -> Any:
        return self.values[self.combo.currentIndex() - 1]

    def index_of(self, value: Any) -> int:
        for i, v in enumerate(self.values):
            if same(v, value):
                return i
        return -1

    def fits(self, value: Any) -> bool:
        return self.index_of(value) >= 0

    def put(self, value: Any) -> None:
        self.combo.setCurrentIndex(self.index_of(value) + 1)

    def unset(self) -> None:
        self.combo.setCurrentIndex(0)


class CompleterField(TextField):
    """A string from a very long enum: typed, with completion."""

    kind = "enum"

    def __init__(self, *args: Any, widget: str = "completer", **kw: Any):
        super().__init__(*args, widget="text", **kw)
        model = QStringListModel([v for _, v in self.shape.options], self)
        comp = QCompleter(model, self)
        comp.setCaseSensitivity(Qt.CaseInsensitive)
        comp.setFilterMode(Qt.MatchContains)
        comp.setModelSorting(QCompleter.UnsortedModel)
        self.edit.setCompleter(comp)
        self.edit.setPlaceholderText(f"one of {len(self.shape.options):,} values: start typing")
        self._placeholder = self.edit.placeholderText()


class ConstField(Field):
    """A single allowed value (`const`, or `type: null`): shown, not edited."""

    kind = "const"

    def __init__(self, *args: Any, widget: str = "const", **kw: Any):
        super().__init__(*args, **kw)
        lay = hbox(self)
        self.value = self.shape.options[0][1] if self.shape.options else None
        label = self.shape.options[0][0] if self.shape.options else "null"
        self._absent = False
        if self.required:
            self.box = None
            self.show_label = QLabel(label)
            self.show_label.setTextFormat(Qt.PlainText)
            self.show_label.setObjectName("fieldConst")
            self.show_label.setFocusPolicy(Qt.NoFocus)
            self.name_editor(self.show_label)
            lay.addWidget(self.show_label)
        else:
            self.box = QCheckBox(f"include {label}")
            self.box.clicked.connect(lambda _=None: self.edited())
            self.name_editor(self.box)
            lay.addWidget(self.box)
        lay.addStretch(1)

    def editor(self):
        return self.box if self.box is not None else self.show_label

    def has_value(self) -> bool:
        return not self._absent if self.box is None else self.box.isChecked()

    def get(self) -> Any:
        return self.value

    def fits(self, value: Any) -> bool:
        return same(value, self.value)

    def put(self, value: Any) -> None:
        self._absent = False
        if self.box is not None:
            self.box.setChecked(True)

    def unset(self) -> None:
        self._absent = True
        if self.box is not None:
            self.box.setChecked(False)

    def reset(self) -> None:
        self.unset()
        self._absent = False


class RawField(Field):
    """Any JSON value as text. A fallback when `shape.reason` (or `why`) says why; else free-form."""

    kind = "raw"

    def __init__(self, *args: Any, widget: str = "raw", why: str = "", **kw: Any):
        super().__init__(*args, **kw)
        self.why = why or (self.shape.reason if self.shape.kind in ("raw", "never") else "")
        self.forced = bool(why) and self.shape.kind not in ("raw", "never", "free")  # by a value, not the schema
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        if self.why:
            note = QLabel(f"Edited as JSON: {self.why}.")
            note.setTextFormat(Qt.PlainText)
            note.setWordWrap(True)
            note.setObjectName("fallbackNote")
            lay.addWidget(note)
        self.edit = QPlainTextEdit()
        self.edit.setTabChangesFocus(True)
        self.edit.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.edit.setPlaceholderText("any JSON value, e.g. {\"key\": 1}" if not self.why else "JSON")
        lines = 3 if self.depth else 8
        self.edit.setFixedHeight(self.edit.fontMetrics().lineSpacing() * lines + 14)
        self.edit.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.edit.textChanged.connect(self._changed)
        self._updating = False
        self._exact: tuple[Any, str] | None = None  # (value put, its text as shown)
        self.name_editor(self.edit)
        lay.addWidget(self.edit)

    def editor(self):
        return self.edit

    def fallbacks(self) -> list[str]:
        return [self.ptr] if self.why else []

    def _parse(self) -> tuple[bool, Any]:
        text = self.edit.toPlainText()
        if self._exact is not None and text == self._exact[1]:
            return True, self._exact[0]
        if not text.strip():
            return False, None
        try:
            return True, json.loads(text)
        except (ValueError, RecursionError):
            return False, None

    def _changed(self) -> None:
        if self._updating:
            return
        self._check()
        self.edited()

    def _check(self) -> None:
        text = self.edit.toPlainText()
        if not text.strip():
            self.local_problem = ""
            return
        try:
            json.loads(text)
            self.local_problem = ""
        except ValueError as exc:
            self.local_problem = f"not valid JSON: {exc}"
        except RecursionError:
            self.local_problem = "not valid JSON: nested too deeply"

    def has_value(self) -> bool:
        return self._parse()[0]

    def get(self) -> Any:
        return self._parse()[1]

    def fits(self, value: Any) -> bool:
        return True

    def put(self, value: Any) -> None:
        self._updating = True
        try:
            self.edit.setPlainText(dumps(value, 2 if self.depth < 8 else None))
        finally:
            self._updating = False
        self._exact = (copy.deepcopy(value), self.edit.toPlainText())
        self.local_problem = ""

    def unset(self) -> None:
        self._exact = None
        self._updating = True
        try:
            self.edit.setPlainText("")
        finally:
            self._updating = False
        self.local_problem = ""
