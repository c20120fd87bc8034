"""The group: a collapsible field with a lazily built body, the base of objects and arrays. Qt.

Groups deeper than `EAGER_DEPTH`, and groups reached again through a recursive `$ref`, are built
only when the user expands them; until then they keep the value they were given as is. How a
group looks (its header, state note, clear button and body) is the registry's "group" template.
"""

from __future__ import annotations

import copy
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from ._base import EAGER_DEPTH, Field

MAX_ROWS = 200       # array items / map entries rendered as rows; longer values are edited as JSON


class Group(Field):
    """A collapsible titled group with a lazily built body (base of objects and arrays)."""

    shows_title = True

    def __init__(self, *args: Any, headerless: bool = False, **kw: Any):
        super().__init__(*args, **kw)
        self._prepare()
        self._present = False
        self.built = False
        self._pending: Any = None       # value given while the body was not built
        self._pending_put = False       # True: `_pending` came from put(), else from reset()
        self.expanded = False
        eager = self.depth <= self.ctx.eager_limit and not self.shape.recursive
        self.headerless = headerless and eager
        if self.headerless:
            self.shows_title = False
        frame = self.frame = self.registry.group_frame(self, self.depth > 0 and not self.headerless)
        self.header, self.toggle, self.clear_button = frame.header, frame.toggle, frame.clear_button
        self.body, self.body_layout = frame.body, frame.body_layout
        if eager:
            self._build()
            self._set_expanded(True)
        else:
            self.body.hide()
            self._set_expanded(False)

    # -- header
    def editor(self) -> QWidget:
        return self.toggle if self.toggle is not None else self.body

    def set_path(self, path: tuple) -> None:
        self.path = path
        self.frame.set_names(self.ptr)
        self._renamed()
        for child in self.children_fields():
            child.set_path(self.child_path(child))

    def _renamed(self) -> None:
        """Rename what a subclass added to the body after the group moved."""

    def _set_expanded(self, on: bool) -> None:
        self.expanded = on
        self.frame.show_expanded(on)

    def toggle_body(self, on: bool) -> None:
        """Open (building the body the first time) or close the group: its header's toggle."""
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

    def clear_value(self) -> None:
        """The header's clear button: back to "not set"."""
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
        self.frame.show_state(text, self._present)

    def summary(self) -> str:
        return ""

    def child_edited(self, child: Field) -> None:
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

    def fitting_child(self, old: Field, value: Any) -> Field:
        """`old`, or what holds `value`: a raw JSON editor when the value does not fit the form,
        and the form's own field again when a later value fits it."""
        if getattr(old, "forced", False):
            fresh = self.registry.build(self.ctx, old.shape, old.path, old.required, old.depth, self)
            if fresh.fits(value):
                return self._swap(old, fresh)
            fresh.setParent(None)
            fresh.deleteLater()
            return old
        if old.fits(value):
            return old
        raw = self.registry.fallback(self.ctx, old.shape, old.path, old.required, old.depth,
                                     "the value does not fit the form")
        return self._swap(old, raw)

    def _swap(self, old: Field, new: Field) -> Field:
        """`new` in the place of `old` (in its row), `old` deleted."""
        new.parent_field = self
        if old.row is not None:
            old.row.replace_field(new)
        old.setParent(None)
        old.deleteLater()
        return new
