"""Fields that hold one of several shapes: `oneOf`/`anyOf`/type lists (a variant selector), and
nullable values (the value editor plus a "null" toggle). Qt."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QVBoxLayout, QWidget

from ._base import Field, hbox, muted
from .schema import Shape
from .validation import json_type


def _kind_accepts(shape: Shape, value: Any) -> bool:
    """Whether a value's JSON type is one a shape can edit (used when validation cannot tell)."""
    t = json_type(value)
    k = shape.kind
    if k in ("free", "raw"):
        return True
    if k in ("object", "map"):
        return t == "object"
    if k in ("array", "tuple", "multiselect"):
        return t == "array"
    if k == "scalar":
        want = shape.types[0] if shape.types else ""
        return t == want or (want == "number" and t == "integer")
    if k in ("enum", "const"):
        return True
    if k == "nullable":
        return True
    return False


class ChoiceField(Field):
    """One of several variants, chosen with a drop-down (`variant:<pointer>`)."""

    kind = "choice"

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        tree = self.ctx.tree
        self.variants = tree.variants(self.shape)
        self.shapes: list[Shape | None] = [None] * len(self.variants)
        self.disc = tree.discriminator(self.shape) if len(self.variants) > 1 else None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        top = QWidget()
        tl = hbox(top)
        self.combo = QComboBox()
        self.combo.setFocusPolicy(Qt.StrongFocus)
        self.combo.addItems([label for label, _ in self.variants])
        self.combo.setObjectName("variant:" + self.ptr)
        self.combo.activated.connect(self._chosen)
        if self.disc is not None:
            which = QLabel(f"{self.disc}:")
            which.setObjectName("fieldHelp")
            muted(which)
            tl.addWidget(which)
        tl.addWidget(self.combo)
        tl.addStretch(1)
        lay.addWidget(top)
        self.area = QVBoxLayout()
        self.area.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(self.area)
        self._present = False
        self.current: Field | None = None
        self.index = -1
        self._switch(0)

    def variant_shape(self, i: int) -> Shape:
        shape = self.shapes[i]
        if shape is None:
            shape = self.shapes[i] = self.ctx.tree.shape(self.variants[i][1], self.shape.refs, self.depth)
        return shape

    def _switch(self, i: int) -> None:
        if i == self.index and self.current is not None:
            return
        if self.current is not None:
            self.current.setParent(None)
            self.current.deleteLater()
        self.index = i
        self.combo.setCurrentIndex(i)
        shape = self.variant_shape(i)
        self.current = self.registry.build(self.ctx, shape, self.path, True, self.depth, self,
                                           title=self.shape.title or (str(self.path[-1]) if self.path else ""),
                                           headerless=True)
        self.area.addWidget(self.current)
        self.current.reset()
        disc = getattr(self.current, "children", {}).get(self.disc) if self.disc else None
        if disc is not None and disc.kind == "const" and disc.row is not None:
            disc.row.hide()  # the variant selector already says it

    def _chosen(self, i: int) -> None:
        old = self.current.get() if self.current is not None and self.current.has_value() else None
        self._switch(i)
        if isinstance(old, dict) and self.current.kind == "object" and self.disc is None:
            keep = {k: v for k, v in old.items() if k in getattr(self.current, "children", {})}
            merged = {**self.current.get(), **keep} if keep else None
            if merged is not None and self.current.fits(merged):
                self.current.put(merged)
        self._present = True
        self.edited()

    def editor(self) -> QComboBox:
        return self.combo

    def set_path(self, path: tuple) -> None:
        self.path = path
        self.combo.setObjectName("variant:" + self.ptr)
        if self.current is not None:
            self.current.set_path(path)

    def children_fields(self) -> list[Field]:
        return [self.current] if self.current is not None else []

    def child_path(self, child: Field) -> tuple:
        return self.path

    def focus_widgets(self) -> list[QWidget]:
        return [self.combo] + (self.current.focus_widgets() if self.current is not None else [])

    def child_edited(self, child: Field) -> None:
        self._present = True
        self._propagate()

    def pick(self, value: Any) -> int:
        """The variant that `value` belongs to, or -1."""
        if self.disc is not None and isinstance(value, dict) and self.disc in value:
            for i in range(len(self.variants)):
                sh = self.variant_shape(i)
                for k, sub, _ in (self.ctx.tree.properties(sh) if sh.kind == "object" else []):
                    if k == self.disc:
                        try:
                            sub, _, _ = self.ctx.tree.deref(sub, sh.refs)
                        except Exception:
                            continue
                        if isinstance(sub, dict) and sub.get("const") == value[self.disc] and \
                                type(sub.get("const")) is type(value[self.disc]):
                            return i
        checker = self.ctx.checker()
        for i, (_, schema) in enumerate(self.variants):
            if checker.matches(schema, value):
                return i
        for i in range(len(self.variants)):
            if _kind_accepts(self.variant_shape(i), value):
                return i
        return -1

    def has_value(self) -> bool:
        return self._present and self.current is not None and self.current.has_value()

    def get(self) -> Any:
        return self.current.get()

    def fits(self, value: Any) -> bool:
        i = self.pick(value)
        if i < 0:
            return False
        if i == self.index:
            return self.current.fits(value)
        return True

    def put(self, value: Any) -> None:
        i = self.pick(value)
        if getattr(self.current, "forced", False):
            self.index = -1  # a raw editor from an earlier value: build the variant again
        self._switch(i)
        if not self.current.fits(value):
            old = self.current
            self.current = self.registry.fallback(self.ctx, old.shape, self.path, True, self.depth,
                                                  "the value does not fit the form", parent=self)
            self.area.addWidget(self.current)
            old.setParent(None)
            old.deleteLater()
        self.current.put(value)
        self._present = True

    def unset(self) -> None:
        if self.current is not None:
            self.current.reset()
        self._present = False

    def reset(self) -> None:
        if self.shape.has_default and self.shape.default is not None and self.fits(self.shape.default):
            self.put(self.shape.default)
            return
        self._present = self.required
        self._switch(0)
        if self.current is not None:
            self.current.reset()


class NullableField(Field):
    """A value that may also be null: the value's editor and a `null` check box (`null:<pointer>`)."""

    kind = "nullable"

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        tree = self.ctx.tree
        inner_shape = tree.shape(tree.nullable_inner(self.shape), self.shape.refs, self.depth)
        for k in ("title", "description", "deprecated", "readOnly"):
            if k in self.shape.schema and k not in inner_shape.schema:
                inner_shape.schema = {**inner_shape.schema, k: self.shape.schema[k]}
        self.inner = self.registry.build(self.ctx, inner_shape, self.path, False, self.depth, self, title=self.title)
        self.shows_title = self.inner.shows_title
        lay = hbox(self)
        self.null = QCheckBox("null")
        self.null.setToolTip("Send null (no value)")
        self.null.setObjectName("null:" + self.ptr)
        self.null.clicked.connect(self._null_clicked)
        lay.addWidget(self.inner, 1)
        lay.addWidget(self.null, 0, Qt.AlignTop)

    def editor(self) -> QWidget | None:
        return self.inner.editor()

    def set_path(self, path: tuple) -> None:
        self.path = path
        self.null.setObjectName("null:" + self.ptr)
        self.inner.set_path(path)

    def children_fields(self) -> list[Field]:
        return [self.inner]

    def child_path(self, child: Field) -> tuple:
        return self.path

    def focus_widgets(self) -> list[QWidget]:
        return self.inner.focus_widgets() + [self.null]

    def _null_clicked(self, on: bool) -> None:
        self.inner.setEnabled(not on)
        self.edited()

    def _set_null(self, on: bool) -> None:
        self.null.setChecked(on)
        self.inner.setEnabled(not on)

    def has_value(self) -> bool:
        return self.null.isChecked() or self.inner.has_value()

    def get(self) -> Any:
        return None if self.null.isChecked() else self.inner.get()

    def fits(self, value: Any) -> bool:
        return value is None or self.inner.fits(value)

    def put(self, value: Any) -> None:
        if value is None:
            self.inner.unset()
            self._set_null(True)
        else:
            self._set_null(False)
            self.inner.put(value)

    def unset(self) -> None:
        self._set_null(False)
        self.inner.unset()

    def reset(self) -> None:
        d = self.shape.default
        if self.shape.has_default and d is None:
            self.inner.reset()
            self._set_null(self.required)
        elif self.shape.has_default and self.inner.fits(d):
            self.put(d)
        else:
            self.unset()
            self.inner.reset()
