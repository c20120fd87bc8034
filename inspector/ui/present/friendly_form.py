"""The friendly presentation of `SchemaForm` (`presentForm`): the same schema machinery with a registry whose row
template and leaf widgets speak to people. Labels from titles (else the property name turned into words), help
from descriptions, examples as placeholders, date and time pickers, a stepper (and for a whole number a slider)
for bounded numbers, a "Choose a file…" button for a file input (its path, its file URI, or its contents in
base64), a switch for a boolean, an enum shown by its titles or its values in words, "Add another" for lists,
optional fields folded under "More options", and a problem in plain words next to its field. The form is as
tall as its fields (the stage scrolls, not the form). Fields keep `field:<ptr>`."""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QDate, QDateTime, QEvent, QObject, QSize, Qt, QTime
from PySide6.QtWidgets import (
    QCheckBox,
    QDateEdit,
    QDateTimeEdit,
    QDoubleSpinBox,
    QFileDialog,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QTimeEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...forms import Registry, SchemaForm
from ...forms.registry import default_widgets
from ...forms.templates import Row
from ...forms.widgets import Field, SelectField, TextField, hbox
from . import words

MAX_SLIDER_STEPS = 1000  # a bounded whole number with at most this many values also gets a slider
MAX_FILE_BYTES = 10 * 1024 * 1024  # the largest file whose contents a form sends (base64)
URI_FORMATS = ("uri", "uri-reference", "iri", "iri-reference")
_FILE_WORDS = re.compile(r"\b(files?|paths?|file ?names?|file ?paths?|folders?|director(y|ies)|documents?)\b",
                         re.IGNORECASE)


class FriendlyRow(Row):
    """A label in words, the description as help, and problems said plainly (never a validator's message)."""

    def __init__(self, field: Field, label: str, help_text: str = "", *, required: bool = False,
                 deprecated: bool = False, read_only: bool = False, tools: list[QWidget] | None = None,
                 parent: QWidget | None = None):
        key = field.path[-1] if field.path else label
        if isinstance(key, int):  # an item of a list
            self.friendly_label = f"Item {key + 1}"
        else:
            self.friendly_label = words.field_label(field.shape.schema, str(key)) if field.path else label
        description = "" if field.shows_title else field.shape.description or ""
        super().__init__(field, self.friendly_label, description, required=False, deprecated=False,
                         read_only=read_only, tools=tools, parent=parent)
        ed = field.editor()
        if ed is not None:
            ed.setAccessibleName(self.friendly_label)
            ed.setAccessibleDescription(description or self.friendly_label)
            if description:
                ed.setToolTip(description)
        self.required = required
        # None: not seen by the form yet; True: an item added after the form was built, whose problems wait for
        # Run or for its own edit (an empty item just added is not a mistake); False: as every field
        self.quiet: bool | None = None

    def was_edited(self) -> bool:
        ptr, touched = self.field.ptr, self.field.ctx.touched
        return any(t == ptr or t.startswith(ptr + "/") for t in touched)

    def set_problems(self, messages: list[str]) -> None:
        if self.quiet and not self.was_edited():
            messages = []
        plain = list(dict.fromkeys(words.problem(m, self.friendly_label, self.field.shape.schema)
                                   for m in messages if not m.startswith("warning: ")))[:1]  # one at a time
        super().set_problems(plain)
        if self.problem is not None and plain:
            self.problem.setText("⚠ " + " ".join(plain))  # a sign as well as a colour
            self.problem.setAccessibleName("Problem: " + " ".join(plain))


class PickerField(Field):
    """A date, a date and time, or a time, picked from a calendar or typed; ISO 8601 on the wire."""

    kind = "picker"

    def __init__(self, *args: Any, widget: str = "date", **kw: Any):
        super().__init__(*args, **kw)
        self.widget = widget
        lay = hbox(self)
        if widget == "date":
            self.edit: QDateTimeEdit = QDateEdit(QDate.currentDate())
        elif widget == "time":
            self.edit = QTimeEdit(QTime.currentTime())
        else:
            self.edit = QDateTimeEdit(QDateTime.currentDateTime())
        self.edit.setCalendarPopup(widget != "time")
        self.edit.dateTimeChanged.connect(self._changed)
        self.name_editor(self.edit)
        lay.addWidget(self.edit)
        lay.addStretch(1)
        self.chosen = False

    def editor(self) -> QWidget:
        return self.edit

    def _changed(self, _value: Any) -> None:
        self.chosen = True
        self.edited()

    def has_value(self) -> bool:
        return self.chosen or self.required

    def get(self) -> Any:
        if self.widget == "date":
            return self.edit.date().toString(Qt.ISODate)
        if self.widget == "time":
            return self.edit.time().toString("HH:mm:ss")
        return self.edit.dateTime().toUTC().toString(Qt.ISODate)

    def fits(self, value: Any) -> bool:
        return isinstance(value, str) and self._parse(value) is not None

    def _parse(self, value: str) -> Any:
        if self.widget == "date":
            d = QDate.fromString(value[:10], Qt.ISODate)
            return d if d.isValid() else None
        if self.widget == "time":
            t = QTime.fromString(value[:8], "HH:mm:ss")
            return t if t.isValid() else None
        dt = QDateTime.fromString(value, Qt.ISODate)
        return dt if dt.isValid() else None

    def put(self, value: Any) -> None:
        parsed = self._parse(value) if isinstance(value, str) else None
        if parsed is None:
            return
        self.edit.blockSignals(True)
        if self.widget == "date":
            self.edit.setDate(parsed)
        elif self.widget == "time":
            self.edit.setTime(parsed)
        else:
            self.edit.setDateTime(parsed.toLocalTime())
        self.edit.blockSignals(False)
        self.chosen = True

    def unset(self) -> None:
        self.chosen = False


def file_kind(schema: Any, key: str) -> str | None:
    """How a string field takes a file, or None: "content" (`contentEncoding: base64`: the file's contents),
    "uri" (`format: uri` or `uri-reference` whose name, title or description says file or path: a file URI),
    "path" (no format, its name or title says file or path: the file's path)."""
    if not isinstance(schema, dict) or schema.get("type", "string") != "string" or "enum" in schema:
        return None
    if str(schema.get("contentEncoding") or "").lower() == "base64":
        return "content"
    named = f"{words.words(key)} {schema.get('title') or ''}"
    fmt = schema.get("format")
    if fmt in URI_FORMATS and _FILE_WORDS.search(f"{named} {schema.get('description') or ''}"):
        return "uri"
    if fmt is None and _FILE_WORDS.search(named):
        return "path"
    return None


def ask_for_file(parent: QWidget, title: str) -> str:
    """The platform's file chooser; '' when nothing was chosen."""
    path, _ = QFileDialog.getOpenFileName(parent, title)
    return path


def size_words(n: int) -> str:
    if n < 1024:
        return f"{n} byte{'s' if n != 1 else ''}"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / 1024 / 1024:.1f} MB"


class FileField(TextField):
    """A file input: "Choose a file…" fills in the file's path, its file URI, or (for `contentEncoding:
    base64`) its contents, and says the chosen file's name in words. A path or a URI can still be typed; a
    file's contents are never shown. `FileField.chooser` asks for the file (replaced in tests)."""

    chooser: Callable[[QWidget, str], str] = staticmethod(ask_for_file)

    def __init__(self, *args: Any, how: str = "path", **kw: Any):
        super().__init__(*args, widget="text", **kw)
        self.how = how
        self.content: str | None = None
        lay = self.layout()
        self.choose = QPushButton("Choose a file…")
        self.choose.setObjectName("choose:" + self.ptr)
        self.choose.clicked.connect(self.choose_file)
        self.chosen_label = QLabel("No file chosen yet" if how == "content" else "")
        self.chosen_label.setObjectName("chosen:" + self.ptr)
        self.chosen_label.setTextFormat(Qt.PlainText)
        self.chosen_label.setVisible(how == "content")
        lay.addWidget(self.choose)
        lay.addWidget(self.chosen_label, 1 if how == "content" else 0)
        self.choose.setAccessibleName("Choose a file")
        self.choose.setAccessibleDescription("Choose the file to send")
        if how == "content":  # the contents are no text for a person: the button is the field
            self.edit.setObjectName("")
            self.edit.hide()
            self.name_editor(self.choose)

    def editor(self) -> QWidget:
        return self.choose if self.how == "content" else self.edit

    def choose_file(self) -> None:
        label = self.row.friendly_label if isinstance(self.row, FriendlyRow) else "a file"
        path = type(self).chooser(self, f"Choose {label[:1].lower() + label[1:]}")
        if path:
            self.take(Path(path))

    def take(self, path: Path) -> None:
        """Fill the field from the file at `path` and say which file it is."""
        if self.how == "content":
            try:
                size = path.stat().st_size
                if size > MAX_FILE_BYTES:
                    self._say(f"⚠ {path.name} is too large to send ({size_words(size)}; at most "
                              f"{size_words(MAX_FILE_BYTES)}).")
                    return
                data = path.read_bytes()
            except OSError:
                self._say(f"⚠ {path.name} couldn't be read.")
                return
            self.content = base64.b64encode(data).decode("ascii")
            self._set = True
            self._say(f"Chosen: {path.name} ({size_words(len(data))})")
            self.edited()
            return
        self._quick(path.resolve().as_uri() if self.how == "uri" else str(path))
        self._say(f"Chosen: {path.name}")

    def _say(self, text: str) -> None:
        self.chosen_label.setText(text)
        self.chosen_label.setVisible(bool(text))
        self.choose.setAccessibleDescription(text or "Choose the file to send")

    def _edited(self, text: str) -> None:
        super()._edited(text)
        if self.how != "content":
            self._say("")  # typed by hand: no longer the chosen file

    def get(self) -> Any:
        if self.how == "content":
            return self.content or ""
        return super().get()

    def put(self, value: Any) -> None:
        if self.how != "content":
            super().put(value)
            return
        self.content = value
        self._set = True
        self._say(f"A file is filled in ({size_words(len(value) * 3 // 4)})" if value else "No file chosen yet")

    def unset(self) -> None:
        super().unset()
        if self.how == "content":
            self.content = None
            self._say("No file chosen yet")


class FriendlyText(TextField):
    """A text a person must fill in: left empty, it is a problem ("Please enter a city"), not an empty string
    sent as a value (the developer's form sends it: an empty string is a value)."""

    def local_errors(self) -> list[tuple[str, str]]:
        out = super().local_errors()
        if self.required and not self.local_problem and not self.get().strip():
            out.append((self.ptr, "required"))
        return out


def friendly_text(*args: Any, widget: str = "text", **kw: Any) -> Field:
    """A text field, or a file input when the schema says it takes a file (see `file_kind`)."""
    shape, path = args[1], args[2]
    how = file_kind(shape.schema, str(path[-1]) if path else "")
    if how is not None and widget in ("text", "textarea", "uri"):
        return FileField(*args, how=how, **kw)
    maker = default_widgets()[widget]
    return (FriendlyText if maker is TextField else maker)(*args, widget=widget, **kw)


class SwitchField(Field):
    """A yes-or-no switch: its own words say which way it is (no meaning by colour alone)."""

    kind = "boolean"

    def __init__(self, *args: Any, widget: str = "checkbox", **kw: Any):
        super().__init__(*args, **kw)
        lay = hbox(self)
        self.box = QCheckBox("No")
        self.box.toggled.connect(self._toggled)
        self.name_editor(self.box)
        lay.addWidget(self.box)
        lay.addStretch(1)
        self.chosen = False

    def editor(self) -> QWidget:
        return self.box

    def _toggled(self, on: bool) -> None:
        self.box.setText("Yes" if on else "No")
        self.chosen = True
        self.edited()

    def has_value(self) -> bool:
        return self.chosen or self.required

    def get(self) -> Any:
        return self.box.isChecked()

    def fits(self, value: Any) -> bool:
        return isinstance(value, bool)

    def put(self, value: Any) -> None:
        self.box.blockSignals(True)
        self.box.setChecked(bool(value))
        self.box.setText("Yes" if value else "No")
        self.box.blockSignals(False)
        self.chosen = True

    def unset(self) -> None:
        self.put(False)
        self.chosen = False


def bounds(schema: Any) -> tuple[float, float] | None:
    """The inclusive range of a number with both ends (exclusive ends count as inclusive here), or None."""
    if not isinstance(schema, dict):
        return None
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))
    ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (lo, hi))
    return (float(lo), float(hi)) if ok and lo <= hi else None


def step_of(schema: Any, lo: float, hi: float, whole: bool) -> float:
    """A stepper's step: the schema's `multipleOf`, else 1 for a whole number, else about a hundredth of the
    range rounded to 1, 2 or 5 of a power of ten, at most 1 (0 – 1 steps by 0.01, 0 – 40 by 0.5)."""
    m = schema.get("multipleOf") if isinstance(schema, dict) else None
    if isinstance(m, (int, float)) and not isinstance(m, bool) and math.isfinite(m) and m > 0:
        return float(max(1, round(m))) if whole else float(m)
    if whole:
        return 1.0
    raw = (hi - lo) / 100
    if raw <= 0:
        return 0.1
    power = 10.0 ** math.floor(math.log10(raw))
    return min(next(f * power for f in (1, 2, 5, 10) if raw <= f * power * (1 + 1e-9)), 1.0)


class StepperField(Field):
    """A bounded number: a stepper, and for a whole number with a small range a slider beside it; a decimal
    steps by `step_of` and shows as many decimals as its step needs (at least two)."""

    kind = "number"

    def __init__(self, *args: Any, widget: str = "integer", **kw: Any):
        super().__init__(*args, **kw)
        lo, hi = bounds(self.shape.schema) or (0.0, 0.0)
        self.whole = widget == "integer"
        lay = hbox(self)
        if self.whole:
            self.spin: QSpinBox | QDoubleSpinBox = QSpinBox()
            self.spin.setRange(int(lo), int(hi))
            self.spin.setSingleStep(int(step_of(self.shape.schema, lo, hi, True)))
        else:
            self.spin = QDoubleSpinBox()
            step = step_of(self.shape.schema, lo, hi, False)
            self.spin.setDecimals(min(6, max(2, -math.floor(math.log10(step) + 1e-9))))
            self.spin.setRange(lo, hi)
            self.spin.setSingleStep(step)
        self.spin.setMinimumWidth(140)
        self.spin.valueChanged.connect(self._changed)
        self.name_editor(self.spin)
        self.slider: QSlider | None = None
        if self.whole and hi - lo <= MAX_SLIDER_STEPS:
            self.slider = QSlider(Qt.Horizontal)
            self.slider.setObjectName("slider:" + self.ptr)
            self.slider.setRange(int(lo), int(hi))
            self.slider.setSingleStep(self.spin.singleStep())
            self.slider.setAccessibleName(words.words(str(self.path[-1])) if self.path else "Slider")
            self.slider.setFocusPolicy(Qt.NoFocus)  # the stepper is the keyboard's; the slider follows it
            self.slider.valueChanged.connect(lambda v: self.spin.setValue(v))
            lay.addWidget(self.slider, 1)
        lay.addWidget(self.spin)
        self.chosen = False

    def editor(self) -> QWidget:
        return self.spin

    def _changed(self, value: Any) -> None:
        if self.slider is not None:
            self.slider.blockSignals(True)
            self.slider.setValue(int(value))
            self.slider.blockSignals(False)
        self.chosen = True
        self.edited()

    def has_value(self) -> bool:
        return self.chosen or self.required

    def get(self) -> Any:
        return int(self.spin.value()) if self.whole else float(self.spin.value())

    def fits(self, value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and \
            self.spin.minimum() <= value <= self.spin.maximum()

    def put(self, value: Any) -> None:
        self.spin.blockSignals(True)
        self.spin.setValue(value)
        self.spin.blockSignals(False)
        if self.slider is not None:
            self.slider.blockSignals(True)
            self.slider.setValue(int(value))
            self.slider.blockSignals(False)
        self.chosen = True

    def unset(self) -> None:
        self.put(self.spin.minimum())
        self.chosen = False


class FriendlySelect(SelectField):
    """An enum picker: titled values by their titles, plain strings turned into words."""

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self.combo.setItemText(0, "Choose…" if self.required else "(none)")
        for i, (label, value) in enumerate(self.shape.options, start=1):
            if isinstance(label, str) and label == value:
                self.combo.setItemText(i, words.words(label))
            elif not isinstance(label, str):
                self.combo.setItemText(i, words.value_text(value))


def friendly_number(*args: Any, widget: str = "number", **kw: Any) -> Field:
    shape = args[1]
    if bounds(shape.schema) is not None:
        return StepperField(*args, widget=widget, **kw)
    return Registry().widgets[widget](*args, widget=widget, **kw)


def friendly_registry() -> Registry:
    reg = Registry()
    reg.templates["row"] = FriendlyRow
    for name in ("date", "date-time", "time"):
        reg.widgets[name] = PickerField
    reg.widgets["checkbox"] = SwitchField
    reg.widgets["number"] = friendly_number
    reg.widgets["integer"] = friendly_number
    reg.widgets["select"] = FriendlySelect
    for name in ("text", "textarea", "uri"):
        reg.widgets[name] = friendly_text
    return reg


class FriendlyForm(SchemaForm):
    """`SchemaForm` built from the friendly registry, with no Form | JSON switch and optional fields folded."""

    def __init__(self, schema: Any, parent: QWidget | None = None, *, fold: bool = True):
        """`fold=False` shows the optional fields with the rest (a server's short question asks for them all)."""
        super().__init__(schema, parent, friendly_registry())
        self.setObjectName("presentForm")
        self.form_button.parentWidget().hide()  # no JSON mode here
        # As tall as its fields, no more: the hidden JSON page would make the stack as tall as a text box, and
        # the inner scroll area would keep a scroll area's height (the stage scrolls, not the form).
        self.stack.widget(1).setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Ignored)
        self.scroll.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Fixed)
        self.page.installEventFilter(self)
        self.more: QToolButton | None = None
        self.more_body: QWidget | None = None
        self.required_fields: list[Field] = []
        self.optional_fields: list[Field] = []
        self._name_groups(self.root)
        if fold:
            self._fold_optional()
        for button in self.findChildren(QPushButton):
            if button.objectName().startswith("add:"):
                button.setText("Add another")
                button.setAccessibleName("Add another")
        self._settle_rows(False)

    def _settle_rows(self, quiet: bool) -> None:
        """Rows the form has not seen yet become `quiet` (True: added after it was built)."""
        for row in self.findChildren(FriendlyRow):
            if row.quiet is None:
                row.quiet = quiet

    def _name_groups(self, field: Field) -> None:
        """A group's header (an object's, a list's) says its name in words, without a mark for required."""
        head = getattr(field, "toggle", None) or getattr(getattr(field, "inner", None), "toggle", None)
        if head is not None and field.path and not isinstance(field.path[-1], int):
            label = words.field_label(field.shape.schema, str(field.path[-1]))
            head.setText(label)
            head.setAccessibleName(label)
            head.setAccessibleDescription(field.shape.description or label)
        for child in field.children_fields():
            self._name_groups(child)

    def _fold_optional(self) -> None:
        children = getattr(self.root, "children", None)
        if not isinstance(children, dict):
            return
        for child in children.values():
            (self.required_fields if child.required else self.optional_fields).append(child)
        if not self.optional_fields or not self.required_fields:
            return  # nothing to fold, or nothing but options: show them all
        body_layout = getattr(self.root, "body_layout", None)
        if body_layout is None:  # pragma: no cover - an object field always has one
            return
        self.more = QToolButton()
        self.more.setObjectName("presentMoreOptions")
        self.more.setText("More options")
        self.more.setCheckable(True)
        self.more.setArrowType(Qt.RightArrow)
        self.more.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        self.more.setAccessibleName("More options")
        self.more.setAccessibleDescription("Show the fields you may leave as they are")
        self.more_body = QWidget()
        inner = QVBoxLayout(self.more_body)
        inner.setContentsMargins(0, 0, 0, 0)
        for child in self.optional_fields:
            if child.row is not None:
                inner.addWidget(child.row)
        body_layout.addWidget(self.more)
        body_layout.addWidget(self.more_body)
        self.more_body.hide()
        self.more.toggled.connect(self.show_more)

    def fields_height(self, width: int = -1) -> int:
        """The height that shows every field at `width` (wrapped help and problems are taller when narrow;
        the messages line included when shown)."""
        extra = sum(w.sizeHint().height() for w in (self.banner, self.messages) if not w.isHidden())
        page = self.page.heightForWidth(width) if width > 0 and self.page.hasHeightForWidth() else -1
        return (page if page >= 0 else self.page.sizeHint().height()) + extra + 4

    def sizeHint(self) -> QSize:
        width = self.scroll.viewport().width() if self.isVisible() else -1
        return QSize(super().sizeHint().width(), self.fields_height(width))

    def minimumSizeHint(self) -> QSize:
        return QSize(super().minimumSizeHint().width(), self.sizeHint().height())

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # wrapped lines: the height follows the width

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.page and event.type() == QEvent.LayoutRequest:
            self.updateGeometry()  # a field shown or added ("More options", "Add another"): grow with it
        return super().eventFilter(obj, event)

    def show_more(self, on: bool) -> None:
        if self.more is not None and self.more_body is not None:
            self.more.setChecked(on)
            self.more.setArrowType(Qt.DownArrow if on else Qt.RightArrow)
            self.more_body.setVisible(on)

    def focus_widgets(self) -> list[QWidget]:
        if self.more is None:
            return super().focus_widgets()
        out: list[QWidget] = []
        for f in self.required_fields:
            out += f.focus_widgets()
        out.append(self.more)
        for f in self.optional_fields:
            out += f.focus_widgets()
        return out

    def refresh(self) -> int:
        self._settle_rows(True)
        n = super().refresh()
        self.messages.hide()  # what no field showed is the presenter's to say, in words
        return n

    def reveal_problems(self) -> int:
        for row in self.findChildren(FriendlyRow):
            row.quiet = False  # Run: every problem is said
        n = super().reveal_problems()
        if n and self.more is not None and any(
                f.row is not None and f.row.problem is not None and not f.row.problem.isHidden()
                for f in self.optional_fields):
            self.show_more(True)
        return n


def plain_label(text: str, name: str = "", parent: QWidget | None = None) -> QLabel:
    label = QLabel(text, parent)
    label.setTextFormat(Qt.PlainText)
    label.setWordWrap(True)
    if name:
        label.setObjectName(name)
    return label
