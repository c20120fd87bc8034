"""The templates that frame fields, as rjsf's FieldTemplate and ObjectFieldTemplate do. Qt.

`Row` (the registry's template "row") puts a label over a field, then its help text and, once
validation finds some, its problems. `GroupFrame` (template "group") frames an object or an
array: a header whose title opens and closes the body, a state note ("not set", "3 items") and
a clear button, over the body, which nested groups indent. Fields reach both only through their
registry, so a tool can replace either without touching the fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from ._base import Field, hbox, muted, small_button
from .schema import Shape
from .widget_choice import constraints_text

if TYPE_CHECKING:
    from .group import Group

MAX_PROBLEMS_SHOWN = 5   # problems listed under one field; the rest are counted


class Row(QWidget):
    """A label, a field (with `tools` beside it: an array item's buttons), its help text and its problems."""

    def __init__(self, field: Field, label: str, help_text: str = "", *, required: bool = False,
                 deprecated: bool = False, read_only: bool = False, tools: list[QWidget] | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.field = field
        self.tools = tools or []
        field.row = self
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 2)
        lay.setSpacing(2)
        self.label: QLabel | None = None
        if label:
            text = label + (" *" if required else "")
            if deprecated:
                text += "  (deprecated)"
            if read_only:
                text += "  (read-only)"
            self.label = QLabel(text)
            self.label.setTextFormat(Qt.PlainText)
            if deprecated:
                f = QFont(self.label.font())
                f.setStrikeOut(True)
                self.label.setFont(f)
            if required:
                self.label.setToolTip("required")
            ed = field.editor()
            if ed is not None:
                self.label.setBuddy(ed)
                ed.setAccessibleName(label)
        if self.label is not None and not field.shows_title:
            lay.addWidget(self.label)
        elif self.label is not None:
            self.label.hide()  # groups show their title in their own header
            self.label.setParent(self)
        if tools:
            line = QWidget()
            tl = hbox(line)
            tl.addWidget(field, 1)
            for t in tools:
                tl.addWidget(t, 0, Qt.AlignTop)
            lay.addWidget(line)
        else:
            lay.addWidget(field)
        self.help: QLabel | None = None
        if help_text:
            self.help = QLabel(help_text)
            self.help.setTextFormat(Qt.PlainText)
            self.help.setWordWrap(True)
            self.help.setObjectName("fieldHelp")
            muted(self.help)
            self.help.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
            lay.addWidget(self.help)
        self.problem: QLabel | None = None
        self.setEnabled(not read_only)

    def replace_field(self, new: Field) -> None:
        """Show `new` where the field is (a raw JSON editor for a value the form cannot hold, and
        back); deleting the old field is the caller's business."""
        old = self.field
        lay = old.parentWidget().layout()
        lay.insertWidget(lay.indexOf(old), new, 1)
        new.row = self
        self.field = new
        if self.label is not None and new.editor() is not None:
            self.label.setBuddy(new.editor())

    def set_problems(self, messages: list[str]) -> None:
        if not messages:
            if self.problem is not None:
                self.problem.hide()
            return
        if self.problem is None:
            self.problem = QLabel()
            self.problem.setTextFormat(Qt.PlainText)
            self.problem.setWordWrap(True)
            self.problem.setObjectName("problem:" + self.field.ptr)
            self.problem.setStyleSheet("color: #d13438;")
            self.layout().addWidget(self.problem)
        self.problem.setObjectName("problem:" + self.field.ptr)
        text = "\n".join(_short(m) for m in messages[:MAX_PROBLEMS_SHOWN])
        if len(messages) > MAX_PROBLEMS_SHOWN:
            text += f"\n… and {len(messages) - MAX_PROBLEMS_SHOWN} more"
        self.problem.setText(text)
        # a value off its format only: a warning (amber), not a problem (red)
        warning = all(m.startswith("warning: ") for m in messages)
        self.problem.setStyleSheet("color: #b7791f;" if warning else "color: #d13438;")
        self.problem.show()


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[: limit - 1] + "…"


def help_text(shape: Shape) -> str:
    """A row's help: the description, then the constraints of a scalar, e.g. '(5 – 480, multiple of 5)'."""
    parts = []
    if shape.description:
        parts.append(shape.description)
    type_name = _scalar_type(shape)
    if type_name:
        c = constraints_text(shape.schema, type_name)
        if c:
            parts.append(f"({c})")
    return " ".join(parts)


def _scalar_type(shape: Shape) -> str:
    """The JSON type whose constraints the help text spells out ('' for structures)."""
    if shape.kind == "scalar" and shape.types:
        return shape.types[0]
    if shape.kind == "nullable":
        types = [t for t in shape.types if t != "null"]
        if len(types) == 1 and types[0] in ("string", "number", "integer"):
            return types[0]
    return ""


class GroupFrame:
    """The frame of a group, laid out in the group widget itself (one widget fewer per group).

    With `header`, the title is a toggle (the group's editor, `field:<ptr>`) that opens and
    closes the body, followed by a state note and, when the value is optional, a clear button
    (`unset:<ptr>`). Without one, the body is the editor. What a group needs from its frame:
    `header`, `toggle`, `clear_button`, `body`, `body_layout` (where the group puts its rows),
    `show_expanded()`, `show_state()` and `set_names()`."""

    def __init__(self, group: Group, header: bool):
        outer = QVBoxLayout(group)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(2)
        self.header: QWidget | None = None
        self.toggle: QToolButton | None = None
        self.state: QLabel | None = None
        self.clear_button: QToolButton | None = None
        nested = group.depth > 0
        description = group.shape.description
        if header:
            self.header = QWidget()
            hl = hbox(self.header)
            self.toggle = QToolButton()
            self.toggle.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
            self.toggle.setAutoRaise(True)
            self.toggle.setFocusPolicy(Qt.StrongFocus)
            self.toggle.setText(group.title)
            bold = self.toggle.font()
            bold.setBold(True)
            self.toggle.setFont(bold)
            if description:
                self.toggle.setToolTip(description)
            self.toggle.clicked.connect(lambda: group.toggle_body(not group.expanded))
            self.state = QLabel()
            self.state.setObjectName("fieldHelp")
            muted(self.state)
            hl.addWidget(self.toggle)
            hl.addWidget(self.state)
            hl.addStretch(1)
            if not group.required:
                self.clear_button = small_button("clear", "Remove this value (leave it not set)")
                self.clear_button.clicked.connect(group.clear_value)
                hl.addWidget(self.clear_button)
            outer.addWidget(self.header)
        self.body = QFrame()
        self.body.setObjectName("groupBody")
        if nested:
            self.body.setFrameShape(QFrame.NoFrame)
            self.body.setAttribute(Qt.WA_StyledBackground, True)
            self.body.setStyleSheet("QFrame#groupBody { border: none; border-left: 2px solid palette(mid); }")
        self.body_layout = QVBoxLayout(self.body)
        self.body_layout.setContentsMargins(10 if nested else 0, 2 if nested else 0, 0, 2)
        self.body_layout.setSpacing(4)
        outer.addWidget(self.body)
        if description and nested:
            desc = QLabel(description)
            desc.setTextFormat(Qt.PlainText)
            desc.setWordWrap(True)
            desc.setObjectName("fieldHelp")
            muted(desc)
            self.body_layout.addWidget(desc)
        self.set_names(group.ptr)

    def set_names(self, ptr: str) -> None:
        """Name the editor (the toggle, else the body) and the clear button after the group's pointer."""
        (self.toggle if self.toggle is not None else self.body).setObjectName("field:" + ptr)
        if self.clear_button is not None:
            self.clear_button.setObjectName("unset:" + ptr)

    def show_expanded(self, on: bool) -> None:
        if self.toggle is not None:
            self.toggle.setArrowType(Qt.DownArrow if on else Qt.RightArrow)

    def show_state(self, text: str, present: bool) -> None:
        """`text`: the group's summary, "not set" first when it holds no value."""
        if self.state is not None:
            self.state.setText(text)
        if self.clear_button is not None:
            self.clear_button.setVisible(present)
