"""Structure fields: the collapsible group, objects (and maps). Qt. Arrays are in `arrays`.

Groups deeper than `EAGER_DEPTH`, and groups reached again through a recursive `$ref`, are built
only when the user expands them; until then they keep the value they were given as is.
"""

from __future__ import annotations

import copy
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QFrame, QLabel, QLineEdit, QPushButton,
                               QToolButton, QVBoxLayout, QWidget)

from ._base import EAGER_DEPTH, Field, Row, hbox, help_text, muted, small_button
from .schema import Shape

MAX_ROWS = 200       # array items / map entries rendered as rows; longer values are edited as JSON


class Group(Field):
    """A collapsible titled group with a lazily built body (base of objects and arrays)."""

    shows_title = True

    def __init__(self, *args, title: str = "", headerless: bool = False, **kw):
        super().__init__(*args, **kw)
        self._prepare()
        self._present = False
        self.built = False
        self._pending: Any = None       # value given while the body was not built
        self._pending_put = False       # True: `_pending` came from put(), else from reset()
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(2)
        self.title = title
        self.header: QWidget | None = None
        self.toggle: QToolButton | None = None
        self.expanded = False
        self.state = QLabel()
        self.state.setObjectName("fieldHelp")
        muted(self.state)
        self.clear_button: QToolButton | None = None
        self.tools_layout = None
        eager = self.depth <= self.ctx.eager_limit and not self.shape.recursive
        self.headerless = headerless = headerless and eager
        if headerless:
            self.shows_title = False
        if self.depth > 0 and not headerless:
            self.header = QWidget()
            hl = hbox(self.header)
            self.toggle = QToolButton()
            self.toggle.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
            self.toggle.setAutoRaise(True)
            self.toggle.setFocusPolicy(Qt.StrongFocus)
            self.toggle.setText(title)
            bold = self.toggle.font()
            bold.setBold(True)
            self.toggle.setFont(bold)
            if self.shape.description:
                self.toggle.setToolTip(self.shape.description)
            self.toggle.clicked.connect(lambda: self._toggled(not self.expanded))
            hl.addWidget(self.toggle)
            hl.addWidget(self.state)
            hl.addStretch(1)
            self.tools_layout = hl
            if not self.required:
                self.clear_button = small_button("clear", "Remove this value (leave it not set)", "unset:" + self.ptr)
                self.clear_button.clicked.connect(self._clear_clicked)
                hl.addWidget(self.clear_button)
            outer.addWidget(self.header)
            self.name_editor(self.toggle)
        self.body = QFrame()
        self.body.setObjectName("groupBody")
        if self.depth > 0:
            self.body.setFrameShape(QFrame.NoFrame)
            self.body.setAttribute(Qt.WA_StyledBackground, True)
            self.body.setStyleSheet("QFrame#groupBody { border: none; border-left: 2px solid palette(mid); }")
        self.body_layout = QVBoxLayout(self.body)
        self.body_layout.setContentsMargins(10 if self.depth > 0 else 0, 2 if self.depth > 0 else 0, 0, 2)
        self.body_layout.setSpacing(4)
        outer.addWidget(self.body)
        if self.shape.description and self.depth > 0:
            desc = QLabel(self.shape.description)
            desc.setTextFormat(Qt.PlainText)
            desc.setWordWrap(True)
            desc.setObjectName("fieldHelp")
            muted(desc)
            self.body_layout.addWidget(desc)
        if self.header is None:
            self.name_editor(self.body)
        if eager:
            self._build()
            self._set_expanded(True)
        else:
            self.body.hide()
            self._set_expanded(False)

    # -- header
    def editor(self):
        return self.toggle if self.toggle is not None else self.body

    def name_editor(self, widget) -> None:
        super().name_editor(widget)

    def set_path(self, path: tuple) -> None:
        self.path = path
        (self.toggle or self.body).setObjectName("field:" + self.ptr)
        if self.clear_button is not None:
            self.clear_button.setObjectName("unset:" + self.ptr)
        self._renamed()
        for child in self.children_fields():
            child.set_path(self.child_path(child))

    def _renamed(self) -> None:
        pass

    def _set_expanded(self, on: bool) -> None:
        self.expanded = on
        if self.toggle is not None:
            self.toggle.setArrowType(Qt.DownArrow if on else Qt.RightArrow)

    def _toggled(self, on: bool) -> None:
        if on and not self.built:
            self.ctx.start()
            self.ctx.budgeted = False
            limit, self.ctx.eager_limit = self.ctx.eager_limit, self.depth + EAGER_DEPTH
            try:
                self._build()
                if self._pending_put:
                    self._put_built(self._pending)
                else:
                    self._reset_built()
            finally:
                self.ctx.budgeted = True
                self.ctx.eager_limit = limit
            self._pending, self._pending_put = None, False
            self._update_state()
            QTimer.singleShot(0, lambda: self.ctx.on_edit(quiet=True))
        self.body.setVisible(on)
        self._set_expanded(on)

    def _clear_clicked(self) -> None:
        self.reset()
        self._present = False
        self._update_state()
        self.edited()

    def _update_state(self) -> None:
        if self.header is None:
            return
        text = self.summary()
        if not self._present:
            text = "not set" + (f" · {text}" if text else "")
        self.state.setText(text)
        if self.clear_button is not None:
            self.clear_button.setVisible(self._present)

    def summary(self) -> str:
        return ""

    def child_edited(self, child) -> None:
        self._present = True
        self._update_state()
        self._propagate()

    # -- value protocol (shared part)
    def has_value(self) -> bool:
        return self._present

    def get(self) -> Any:
        if not self.built:
            return copy.deepcopy(self._pending) if self._pending is not None else self.empty()
        return self._get_built()

    def put(self, value: Any) -> None:
        self._present = True
        if not self.built:
            self._pending, self._pending_put = copy.deepcopy(value), True
        else:
            self._put_built(value)
        self._update_state()

    def unset(self) -> None:
        self._present = False
        if not self.built:
            self._pending, self._pending_put = None, False
        else:
            self._unset_built()
        self._update_state()

    def reset(self) -> None:
        d = self.shape.default
        if self.shape.has_default and self.fits(d) and d is not None:
            self.put(d)
            return
        self._present = self.required
        if not self.built:
            self._pending, self._pending_put = None, False
        else:
            self._reset_built()
        self._update_state()

    def _prepare(self) -> None:
        pass

    def empty(self) -> Any:
        raise NotImplementedError

    def _build(self) -> None:
        raise NotImplementedError

    def _get_built(self) -> Any:
        raise NotImplementedError

    def _put_built(self, value: Any) -> None:
        raise NotImplementedError

    def _unset_built(self) -> None:
        raise NotImplementedError

    def _reset_built(self) -> None:
        self._unset_built()

    def replace_child(self, old: Field, value: Any, why: str) -> Field:
        """Swap a child that cannot hold `value` for a raw JSON editor at the same place."""
        from .fields import raw_field

        new = raw_field(self.ctx, old.shape, old.path, old.required, old.depth, why)
        return self._swap(old, new)

    def fitting_child(self, old: Field, value: Any) -> Field:
        """`old`, or what holds `value`: a raw JSON editor when the value does not fit the form,
        and the form's own field again when a later value fits it."""
        from .fields import build_field

        if getattr(old, "forced", False):
            fresh = build_field(self.ctx, old.shape, old.path, old.required, old.depth, self)
            if fresh.fits(value):
                return self._swap(old, fresh)
            fresh.setParent(None)
            fresh.deleteLater()
            return old
        if old.fits(value):
            return old
        return self.replace_child(old, value, "the value does not fit the form")

    def _swap(self, old: Field, new: Field) -> Field:
        new.parent_field = self
        row = old.row
        if row is not None:
            parent_lay = old.parentWidget().layout()
            idx = parent_lay.indexOf(old)
            parent_lay.insertWidget(idx, new, 1)
            new.row = row
            row.field = new
            if row.label is not None and new.editor() is not None:
                row.label.setBuddy(new.editor())
        old.setParent(None)
        old.deleteLater()
        return new


class ObjectField(Group):
    """An object: declared properties as rows; described extra keys as key-value rows;
    other extra keys in a JSON editor that appears when they exist."""

    kind = "object"

    def _prepare(self) -> None:
        self.children: dict[str, Field] = {}
        self.map_rows: list[MapEntry] = []
        self.others: Field | None = None
        self.add_button: QPushButton | None = None

    def empty(self) -> Any:
        return {}

    def summary(self) -> str:
        if not self.built and self._pending_put and isinstance(self._pending, dict):
            return f"{len(self._pending)} properties (collapsed)"
        return ""

    def _build(self) -> None:
        from .fields import build_field

        self.built = True
        tree = self.ctx.tree
        props = tree.properties(self.shape)
        for key, sub, req in props:
            cshape = tree.shape(sub, self.shape.refs, self.depth + 1)
            if cshape.kind == "never":
                continue
            child = build_field(self.ctx, cshape, self.path + (key,), req, self.depth + 1, self)
            read_only = cshape.flag("readOnly")
            row = Row(child, cshape.title or key,
                      "" if child.shows_title else help_text(cshape, _scalar_type(cshape)), required=req,
                      deprecated=cshape.flag("deprecated"), read_only=read_only)
            head = getattr(child, "toggle", None) or getattr(getattr(child, "inner", None), "toggle", None)
            if head is not None and req:
                head.setText(head.text() + " *")
            self.children[key] = child
            self.body_layout.addWidget(row)
        if not props and self.shape.kind == "object" and self.depth == 0:
            note = QLabel("This tool takes no arguments.")
            note.setObjectName("fieldHelp")
            muted(note)
            self.body_layout.addWidget(note)
        if self.described_extras():
            self.add_button = QPushButton("Add entry")
            self.add_button.setObjectName("add:" + self.ptr)
            self.add_button.clicked.connect(self._add_clicked)
            self.body_layout.addWidget(self.add_button, 0, Qt.AlignLeft)

    def _renamed(self) -> None:
        if self.add_button is not None:
            self.add_button.setObjectName("add:" + self.ptr)

    def described_extras(self) -> bool:
        s = self.shape.schema
        add = s.get("additionalProperties", True)
        return bool(s.get("patternProperties")) or (isinstance(add, dict) and add != {})

    def children_fields(self) -> list[Field]:
        out = list(self.children.values()) + [e.field for e in self.map_rows]
        if self.others is not None:
            out.append(self.others)
        return out

    def child_path(self, child: Field) -> tuple:
        for e in self.map_rows:
            if e.field is child:
                return self.path + (e.key(),)
        return self.path + (child.path[-1],)

    def focus_widgets(self) -> list:
        out = [self.toggle] if self.toggle is not None else []
        if self.built and (self.toggle is None or self.expanded):
            for key, child in self.children.items():
                out += child.focus_widgets()
            for e in self.map_rows:
                out += [e.key_edit] + e.field.focus_widgets() + [e.remove]
            if self.add_button is not None:
                out.append(self.add_button)
            if self.others is not None:
                out += self.others.focus_widgets()
        if self.clear_button is not None:
            out.append(self.clear_button)
        return out

    def fits(self, value: Any) -> bool:
        return isinstance(value, dict) and (len(value) <= MAX_ROWS + len(self.shape.schema.get("properties") or {}))

    def _get_built(self) -> Any:
        out = {}
        for key, child in self.children.items():
            if child.has_value() and not child.shape.flag("readOnly"):
                out[key] = child.get()
        for e in self.map_rows:
            if e.field.has_value():
                out[e.key()] = e.field.get()
        if self.others is not None and self.others.has_value():
            extra = self.others.get()
            if isinstance(extra, dict):
                for k, v in extra.items():
                    out.setdefault(k, v)
        return out

    def _put_built(self, value: dict) -> None:
        for key in list(self.children):
            child = self.children[key]
            if key in value:
                child = self.children[key] = self.fitting_child(child, value[key])
                child.put(value[key])
            else:
                child.unset()
        self._clear_map()
        extras = {k: v for k, v in value.items() if k not in self.children}
        others = {}
        if self.described_extras():
            for k, v in extras.items():
                if self.ctx.tree.value_schema(self.shape, k) is not None:
                    self._add_entry(k, v, True)
                else:
                    others[k] = v
        else:
            others = extras
        self._set_others(others)

    def _set_others(self, others: dict) -> None:
        if not others:
            if self.others is not None:
                self.others.unset()
            return
        if self.others is None:
            from .fields import raw_field

            sh = Shape("free", {})
            self.others = raw_field(self.ctx, sh, self.path, False, self.depth + 1, "")
            self.others.parent_field = self
            self.others.editor().setObjectName("others:" + self.ptr)
            row = Row(self.others, "Other properties (JSON object)",
                      "Keys the schema does not describe.")
            self.body_layout.addWidget(row)
        self.others.put(others)

    def _unset_built(self) -> None:
        for child in self.children.values():
            child.unset()
        self._clear_map()
        self._set_others({})

    def _reset_built(self) -> None:
        for child in self.children.values():
            child.reset()
        self._clear_map()
        self._set_others({})

    # -- key-value entries
    def _clear_map(self) -> None:
        for e in self.map_rows:
            e.setParent(None)
            e.deleteLater()
        self.map_rows = []

    def _add_clicked(self) -> None:
        e = self._add_entry("", None, False)
        e.key_edit.setFocus()
        self._present = True
        self._update_state()
        self.edited()

    def _add_entry(self, key: str, value: Any, has: bool) -> "MapEntry":
        e = MapEntry(self, key, value, has)
        idx = self.body_layout.indexOf(self.add_button)
        self.body_layout.insertWidget(idx, e)
        self.map_rows.append(e)
        return e

    def remove_entry(self, e: "MapEntry") -> None:
        self.map_rows.remove(e)
        e.setParent(None)
        e.deleteLater()
        for other in self.map_rows:
            other._name()
        self._present = True
        self.edited()

    def local_errors(self) -> list:
        out = super().local_errors()
        seen: set[str] = set()
        for e in self.map_rows:
            k = e.key()
            if k in seen or k in self.children:
                out.append((self.ptr + "/" + _esc(k), f"the key {k!r} is used twice"))
            seen.add(k)
        return out


class MapEntry(QWidget):
    """One key and its value in a map (additionalProperties / patternProperties)."""

    def __init__(self, owner: ObjectField, key: str, value: Any, has: bool):
        super().__init__()
        self.owner = owner
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        top = QWidget()
        tl = hbox(top)
        self._key = key  # as given: QLineEdit may normalise some characters (e.g. U+FEFF) away
        self.key_edit = QLineEdit(key)
        self.key_edit.setPlaceholderText("key")
        self.key_edit.setMaximumWidth(220)
        self.key_edit.textEdited.connect(self._key_edited)
        self.key_edit.editingFinished.connect(self._key_done)
        tl.addWidget(self.key_edit)
        self.remove = small_button("remove", "Remove this entry")
        self.remove.clicked.connect(lambda: owner.remove_entry(self))
        self.lay = lay
        self.top = top
        self.field: Field = self._make(key)
        tl.addWidget(self.field, 1)
        tl.addWidget(self.remove, 0, Qt.AlignTop)
        lay.addWidget(top)
        self._name()
        if has:
            if not self.field.fits(value):
                self._swap_raw(value)
            else:
                self.field.put(value)
        else:
            self.field.reset()

    def key(self) -> str:
        return self._key

    def _make(self, key: str) -> Field:
        from .fields import build_field

        tree = self.owner.ctx.tree
        sub = tree.value_schema(self.owner.shape, key)
        shape = tree.shape(sub if sub is not None else True, self.owner.shape.refs, self.owner.depth + 1)
        self._schema_id = id(sub)
        f = build_field(self.owner.ctx, shape, self.owner.path + (key,), True, self.owner.depth + 1, self.owner)
        return f

    def _swap_raw(self, value: Any) -> None:
        from .fields import raw_field

        old = self.field
        self.field = raw_field(self.owner.ctx, old.shape, old.path, True, old.depth, "the value does not fit the form")
        self.field.parent_field = self.owner
        self.top.layout().replaceWidget(old, self.field)
        old.setParent(None)
        old.deleteLater()
        self.field.put(value)

    def _name(self) -> None:
        i = self.owner.map_rows.index(self) if self in self.owner.map_rows else len(self.owner.map_rows)
        self.key_edit.setObjectName(f"key:{self.owner.ptr}/{i}")

    def _key_edited(self, text: str) -> None:
        self._key = text
        self.field.set_path(self.owner.path + (self.key(),))
        self.owner.child_edited(self.field)

    def _key_done(self) -> None:
        sub = self.owner.ctx.tree.value_schema(self.owner.shape, self.key())
        if id(sub) == self._schema_id:
            return
        had, value = self.field.has_value(), self.field.get() if self.field.has_value() else None
        old = self.field
        self.field = self._make(self.key())
        self.top.layout().replaceWidget(old, self.field)
        old.setParent(None)
        old.deleteLater()
        if had and self.field.fits(value):
            self.field.put(value)
        else:
            self.field.reset()
        self.owner.child_edited(self.field)


def _scalar_type(shape: Shape) -> str:
    """The JSON type whose constraints the help text spells out ('' for structures)."""
    if shape.kind == "scalar" and shape.types:
        return shape.types[0]
    if shape.kind == "nullable":
        types = [t for t in shape.types if t != "null"]
        if len(types) == 1 and types[0] in ("string", "number", "integer"):
            return types[0]
    return ""


def _esc(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
