"""The field protocol shared by every generated form part, and what one form's fields share. Qt.

A *field* edits the value at one JSON pointer. It knows whether it holds a value (`has_value`),
what the value is (`get`), takes any JSON value (`put`, after `fits` said yes), goes back to
"not set" (`unset`) or to the schema's defaults (`reset`). User edits travel up through
`edited()` so containers learn that they now hold a value, and the form learns that it changed.

Every field is made as `make(ctx, shape, path, required, depth, title=..., headerless=...)` and
builds its children through `self.registry` (the form's `Registry`), never by naming their class.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from .schema import SchemaTree, Shape, pointer

if TYPE_CHECKING:
    from .registry import Registry
    from .templates import Row
    from .validation import Checker

MAX_FIELDS = 1500        # fields one build may create before it gives up (raw JSON instead)
BUILD_BUDGET_S = 0.15    # seconds one build may take before it gives up
EAGER_DEPTH = 3          # groups nested deeper than this are built when first expanded


class BuildBudgetExceeded(Exception):
    pass


class Context:
    """What every field of one form shares: the schema tree, the registry, the build budget."""

    def __init__(self, tree: SchemaTree, registry: Registry, checker: Callable[[], Checker],
                 on_edit: Callable[..., None]):
        self.tree = tree
        self.registry = registry
        self.checker = checker
        self.on_edit = on_edit
        self.count = 0
        self.started = time.perf_counter()
        self.budgeted = True
        self.eager_limit = EAGER_DEPTH   # groups deeper than this are built when expanded
        self.touched: set[str] = set()   # pointers the user edited (their problems are shown)

    def start(self) -> None:
        self.count = 0
        self.started = time.perf_counter()

    def tick(self) -> None:
        self.count += 1
        if not self.budgeted:
            return
        if self.count > MAX_FIELDS:
            raise BuildBudgetExceeded(f"it needs more than {MAX_FIELDS:,} fields")
        if self.count % 16 == 0 and time.perf_counter() - self.started > BUILD_BUDGET_S:
            raise BuildBudgetExceeded(f"building it took longer than {BUILD_BUDGET_S * 1000:.0f} ms")


def same(a: Any, b: Any) -> bool:
    """JSON equality where true is not 1 and 1 is not 1.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


_ESCAPE = {"\u00a0": "\\u00a0", "\u2028": "\\u2028", "\u2029": "\\u2029", "\ufeff": "\\ufeff",
           "\u0085": "\\u0085"}


def dumps(value: Any, indent: int | None = 2) -> str:
    """JSON for an editor: readable, with the characters Qt's text editors alter escaped."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    for ch, esc in _ESCAPE.items():
        if ch in text:
            text = text.replace(ch, esc)
    return text


class Field(QWidget):
    """Base of every field. Subclasses implement the value protocol and `editor()`."""

    kind = "field"
    shows_title = False  # True: the field shows its own title (a group header), the row does not

    def __init__(self, ctx: Context, shape: Shape, path: tuple, required: bool, depth: int, *,
                 title: str = "", headerless: bool = False):
        """`title` is what a header shows (groups; rows take their label from the schema);
        `headerless` asks a group not to repeat a title its caller already shows."""
        super().__init__()
        ctx.tick()
        self.ctx = ctx
        self.registry = ctx.registry
        self.title = title
        self.shape = shape
        self.path = path
        self.required = required
        self.depth = depth
        self.row: Row | None = None
        self.parent_field: Field | None = None
        self.local_problem: str = ""

    # -- identity
    @property
    def ptr(self) -> str:
        return pointer(self.path)

    def set_path(self, path: tuple) -> None:
        self.path = path
        ed = self.editor()
        if ed is not None:
            ed.setObjectName("field:" + self.ptr)
        for child in self.children_fields():
            child.set_path(self.child_path(child))

    def child_path(self, child: Field) -> tuple:
        """A child's path after this field moved (default: same last key)."""
        return self.path + (child.path[-1],)

    def name_editor(self, widget: QWidget) -> None:
        widget.setObjectName("field:" + self.ptr)

    # -- value protocol
    def has_value(self) -> bool:
        raise NotImplementedError

    def get(self) -> Any:
        raise NotImplementedError

    def fits(self, value: Any) -> bool:
        raise NotImplementedError

    def put(self, value: Any) -> None:
        raise NotImplementedError

    def unset(self) -> None:
        raise NotImplementedError

    def reset(self) -> None:
        """The initial state: the schema's default, else not set (required strings: "")."""
        if self.shape.has_default and self.fits(self.shape.default) and not (
                self.shape.default is None and not self.required):
            self.put(self.shape.default)
        else:
            self.unset()

    # -- structure
    def editor(self) -> QWidget | None:
        return None

    def children_fields(self) -> list[Field]:
        return []

    def focus_widgets(self) -> list[QWidget]:
        ed = self.editor()
        return [ed] if ed is not None and ed.focusPolicy() != Qt.NoFocus else []

    def fallbacks(self) -> list[str]:
        out: list[str] = []
        for c in self.children_fields():
            out += c.fallbacks()
        return out

    def local_errors(self) -> list[tuple[str, str]]:
        """Problems the schema validator cannot see: text that does not parse, and the like."""
        out = [(self.ptr, self.local_problem)] if self.local_problem else []
        for c in self.children_fields():
            out += c.local_errors()
        return out

    def show_problems(self, problems: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Show the problems at or under this field; return the ones no field here showed."""
        mine = [m for p, m in problems if p == self.ptr]
        prefix = self.ptr + "/"
        below = [(p, m) for p, m in problems if p.startswith(prefix)]
        rest = [(p, m) for p, m in problems if p != self.ptr and not p.startswith(prefix)]
        for c in self.children_fields():
            below = c.show_problems(below)
        for p, m in below:  # under this field but not shown by a child (collapsed, raw...)
            mine.append(m if p == self.ptr else f"{p[len(prefix):]}: {m}")
        if self.row is not None:
            self.row.set_problems(mine)
            return rest
        return rest + [(self.ptr, m) for m in mine]

    # -- editing
    def edited(self) -> None:
        """Called by the field itself when the user changed something."""
        self.ctx.touched.add(self.ptr)
        self._propagate()

    def _propagate(self) -> None:
        if self.parent_field is not None:
            self.parent_field.child_edited(self)
        else:
            self.ctx.on_edit()

    def child_edited(self, child: Field) -> None:
        self._propagate()


def muted(label: QLabel) -> QLabel:
    """Secondary text (help, states): the palette's placeholder colour, slightly smaller."""
    label.setForegroundRole(QPalette.PlaceholderText)
    f = QFont(label.font())
    if f.pointSizeF() > 0:
        f.setPointSizeF(f.pointSizeF() * 0.92)
    label.setFont(f)
    return label


def small_button(text: str, tip: str, name: str = "") -> QToolButton:
    b = QToolButton()
    b.setText(text)
    b.setToolTip(tip)
    b.setAutoRaise(True)
    b.setFocusPolicy(Qt.TabFocus)
    if name:
        b.setObjectName(name)
    return b


def hbox(widget: QWidget) -> QHBoxLayout:
    lay = QHBoxLayout(widget)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(4)
    return lay
