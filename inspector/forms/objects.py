"""Object fields: declared properties as rows, described extra keys as key-value entries, other
extra keys in a JSON editor. Qt. (A map is an object with no declared properties.)
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from ._base import Field, hbox, muted, small_button
from .group import MAX_ROWS, Group
from .schema import Shape
from .templates import help_text


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
        self.built = True
        tree = self.ctx.tree
        props = tree.properties(self.shape)
        for key, sub, req in props:
            cshape = tree.shape(sub, self.shape.refs, self.depth + 1)
            if cshape.kind == "never":
                continue
            child = self.registry.build(self.ctx, cshape, self.path + (key,), req, self.depth + 1, self)
            row = self.registry.row(child, cshape.title or key, "" if child.shows_title else help_text(cshape),
                                    required=req, deprecated=cshape.flag("deprecated"),
                                    read_only=cshape.flag("readOnly"))
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

    def focus_widgets(self) -> list[QWidget]:
        out: list[QWidget] = [self.toggle] if self.toggle is not None else []
        if self.built and (self.toggle is None or self.expanded):
            for child in self.children.values():
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
        out: dict[str, Any] = {}
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

    def _put_built(self, value: dict[str, Any]) -> None:
        for key in list(self.children):
            child = self.children[key]
            if key in value:
                child = self.children[key] = self.fitting_child(child, value[key])
                child.put(value[key])
            else:
                child.unset()
        self._clear_map()
        extras = {k: v for k, v in value.items() if k not in self.children}
        others: dict[str, Any] = {}
        if self.described_extras():
            for k, v in extras.items():
                if self.ctx.tree.value_schema(self.shape, k) is not None:
                    self._add_entry(k, v, True)
                else:
                    others[k] = v
        else:
            others = extras
        self._set_others(others)

    def _set_others(self, others: dict[str, Any]) -> None:
        if not others:
            if self.others is not None:
                self.others.unset()
            return
        if self.others is None:
            self.others = self.registry.fallback(self.ctx, Shape("free", {}), self.path, False, self.depth + 1, "",
                                                 parent=self)
            self.others.editor().setObjectName("others:" + self.ptr)
            row = self.registry.row(self.others, "Other properties (JSON object)",
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

    def _add_entry(self, key: str, value: Any, has: bool) -> MapEntry:
        e = MapEntry(self, key, value, has)
        idx = self.body_layout.indexOf(self.add_button)
        self.body_layout.insertWidget(idx, e)
        self.map_rows.append(e)
        return e

    def remove_entry(self, e: MapEntry) -> None:
        self.map_rows.remove(e)
        e.setParent(None)
        e.deleteLater()
        for other in self.map_rows:
            other._name()
        self._present = True
        self.edited()

    def local_errors(self) -> list[tuple[str, str]]:
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
        owner = self.owner
        tree = owner.ctx.tree
        sub = tree.value_schema(owner.shape, key)
        shape = tree.shape(sub if sub is not None else True, owner.shape.refs, owner.depth + 1)
        self._schema_id = id(sub)
        return owner.registry.build(owner.ctx, shape, owner.path + (key,), True, owner.depth + 1, owner)

    def _swap_raw(self, value: Any) -> None:
        old = self.field
        self.field = self.owner.registry.fallback(self.owner.ctx, old.shape, old.path, True, old.depth,
                                                  "the value does not fit the form", parent=self.owner)
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


def _esc(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
