"""Array fields: arrays (and tuples) with add, remove and reorder; multi-select lists of enum values. Qt."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QPushButton, QWidget

from ._base import Field, dumps, hbox, same, small_button
from .group import MAX_ROWS, Group

if TYPE_CHECKING:
    from .templates import Row


class ArrayField(Group):
    """An array (or a tuple: `prefixItems`, draft-07 `items: [...]`), with add, remove and reorder."""

    kind = "array"

    def _prepare(self) -> None:
        self.items: list[Field] = []
        self.rows: list[Row] = []
        self.add_button = None
        self.tuple = self.shape.kind == "tuple"

    def empty(self) -> Any:
        return []

    def _setup(self) -> None:
        s = self.shape.schema
        self.tuple = self.shape.kind == "tuple"
        if self.tuple:
            self.prefix, self.rest = self.ctx.tree.prefix_items(self.shape)
        else:
            self.prefix, self.rest = [], self.ctx.tree.item_schema(self.shape)
        mx = s.get("maxItems")
        self.max_items = mx if isinstance(mx, int) and not isinstance(mx, bool) else None
        if self.rest is False:
            self.max_items = min(self.max_items, len(self.prefix)) if self.max_items is not None else len(self.prefix)

    def _build(self) -> None:
        self._setup()
        self.built = True
        self.add_button = QPushButton("Add item")
        self.add_button.setObjectName("add:" + self.ptr)
        self.add_button.clicked.connect(self._add_clicked)
        self.body_layout.addWidget(self.add_button, 0, Qt.AlignLeft)
        self._update_buttons()

    def _renamed(self) -> None:
        if self.built:
            self.add_button.setObjectName("add:" + self.ptr)

    def summary(self) -> str:
        n = len(self.items) if self.built else len(self._pending) if isinstance(self._pending, list) else 0
        text = f"{n} item" + ("" if n == 1 else "s") + ("" if self.built else " (collapsed)")
        s = self.shape.schema
        lo, hi = s.get("minItems"), s.get("maxItems")
        lo = lo if isinstance(lo, int) and not isinstance(lo, bool) and lo > 0 else None
        hi = hi if isinstance(hi, int) and not isinstance(hi, bool) else None
        if lo is not None and hi is not None:
            text += f" · {lo}–{hi} allowed" if lo != hi else f" · exactly {lo}"
        elif lo is not None:
            text += f" · at least {lo}"
        elif hi is not None:
            text += f" · at most {hi}"
        if s.get("uniqueItems") is True:
            text += " · no duplicates"
        return text

    def schema_at(self, i: int) -> Any:
        return self.prefix[i] if i < len(self.prefix) else self.rest

    def children_fields(self) -> list[Field]:
        return list(self.items)

    def child_path(self, child: Field) -> tuple:
        return self.path + (self.items.index(child),)

    def focus_widgets(self) -> list[QWidget]:
        out: list[QWidget] = [self.toggle] if self.toggle is not None else []
        if self.built and (self.toggle is None or self.expanded):
            for f, row in zip(self.items, self.rows, strict=True):
                out += f.focus_widgets() + [b for b in row.tools if b.isVisibleTo(row)]
            out.append(self.add_button)
        if self.clear_button is not None:
            out.append(self.clear_button)
        return out

    def fits(self, value: Any) -> bool:
        if not isinstance(value, list) or len(value) > MAX_ROWS:
            return False
        if not self.tuple_ok(len(value)):
            return False
        return True

    def tuple_ok(self, n: int) -> bool:
        if self.shape.kind != "tuple":
            return True
        prefix, rest = self.ctx.tree.prefix_items(self.shape)
        return rest is not False or n <= len(prefix)

    # -- rows
    def _make_row(self, i: int) -> tuple[Field, Row]:
        shape = self.ctx.tree.shape(self.schema_at(i), self.shape.refs, self.depth + 1)
        f = self.registry.build(self.ctx, shape, self.path + (i,), True, self.depth + 1, self)
        tools: list[QWidget] = []
        if not self.tuple:
            up = small_button("↑", "Move up")
            down = small_button("↓", "Move down")
            up.clicked.connect(lambda: self.move(self.items.index(f), -1))
            down.clicked.connect(lambda: self.move(self.items.index(f), +1))
            tools += [up, down]
        rm = small_button("✕", "Remove this item")
        rm.clicked.connect(lambda: self.remove(self.items.index(f)))
        tools.append(rm)
        label = ""
        if shape.kind in ("object", "array", "tuple", "choice"):
            f.title = f"{shape.title or 'Item'} {i + 1}"
            if f.toggle is not None:
                f.toggle.setText(f.title)
        return f, self.registry.row(f, label, "", tools=tools)

    def _append(self, value: Any, has: bool) -> Field:
        i = len(self.items)
        f, row = self._make_row(i)
        self.items.append(f)
        self.rows.append(row)
        self.body_layout.insertWidget(self.body_layout.indexOf(self.add_button), row)
        if has:
            f = self.items[i] = self.fitting_child(f, value)
            f.put(value)
        else:
            f.reset()
        return f

    def _retitle(self) -> None:
        for i, f in enumerate(self.items):
            if isinstance(f, Group) and f.toggle is not None:
                base = f.shape.title or "Item"
                f.title = f"{base} {i + 1}"
                f.toggle.setText(f.title)
            f.set_path(self.path + (i,))
            self._update_row_tools(i)

    def _update_row_tools(self, i: int) -> None:
        tools = self.rows[i].tools
        n = len(self.items)
        if self.tuple:
            tools[-1].setVisible(i == n - 1)
        else:
            tools[0].setEnabled(i > 0)
            tools[1].setEnabled(i < n - 1)

    def _update_buttons(self) -> None:
        if not self.built:
            return
        n = len(self.items)
        full = self.max_items is not None and n >= self.max_items
        self.add_button.setEnabled(not full and n < MAX_ROWS)
        for i in range(n):
            self._update_row_tools(i)

    def _add_clicked(self) -> None:
        f = self._append(None, False)
        self._present = True
        self._update_buttons()
        self._update_state()
        ed = f.focus_widgets()
        if ed:
            QTimer.singleShot(0, ed[0].setFocus)
        self.edited()

    def remove(self, i: int) -> None:
        self.items.pop(i)
        row = self.rows.pop(i)
        row.setParent(None)
        row.deleteLater()
        self._retitle()
        self._present = True
        self._update_buttons()
        self._update_state()
        self.edited()

    def move(self, i: int, step: int) -> None:
        j = i + step
        if not 0 <= j < len(self.items):
            return
        self.items[i], self.items[j] = self.items[j], self.items[i]
        self.rows[i], self.rows[j] = self.rows[j], self.rows[i]
        lay = self.body_layout
        for row in self.rows:
            lay.removeWidget(row)
        for k, row in enumerate(self.rows):
            lay.insertWidget(k, row)
        self._retitle()
        self._present = True
        self.edited()

    def _clear_rows(self) -> None:
        for row in self.rows:
            row.setParent(None)
            row.deleteLater()
        self.items, self.rows = [], []

    def _get_built(self) -> Any:
        return [f.get() if f.has_value() else None for f in self.items]

    def _put_built(self, value: list[Any]) -> None:
        keep = min(len(self.items), len(value))  # rows at the same index have the same schema: reuse them
        while len(self.items) > keep:
            row = self.rows.pop()
            self.items.pop()
            row.setParent(None)
            row.deleteLater()
        for i in range(keep):
            f = self.fitting_child(self.items[i], value[i])
            if f is not self.items[i]:
                self.items[i] = f
            f.put(value[i])
        for v in value[keep:]:
            self._append(v, True)
        self._update_buttons()

    def _unset_built(self) -> None:
        self._clear_rows()
        self._update_buttons()

    def _reset_built(self) -> None:
        self._clear_rows()
        if self.required and self.tuple:
            for _ in self.prefix[: self.max_items if self.max_items is not None else None]:
                self._append(None, False)
        self._update_buttons()

    def local_errors(self) -> list[tuple[str, str]]:
        out = super().local_errors()
        for f in self.items:
            if not f.has_value() and not f.local_problem and f.kind != "raw":
                out.append((f.ptr, "this item has no value"))
        return out


class MultiSelectField(Field):
    """An array of distinct enum values, picked from a checkable list (order of picking kept)."""

    kind = "multiselect"

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        lay = hbox(self)
        self.values = [v for _, v in self.shape.options]
        self.list = QListWidget()
        self.list.setSelectionMode(QListWidget.NoSelection)
        for label, _v in self.shape.options:
            it = QListWidgetItem(label if isinstance(label, str) else dumps(_v, None))
            it.setFlags(Qt.ItemIsEnabled | Qt.ItemIsUserCheckable)
            it.setCheckState(Qt.Unchecked)
            self.list.addItem(it)
        rows = min(len(self.values), 8)
        self.list.setFixedHeight(self.list.sizeHintForRow(0) * rows + 6 if self.values else 30)
        self.list.itemChanged.connect(self._item_changed)
        self.name_editor(self.list)
        lay.addWidget(self.list, 1)
        self.order: list[int] = []
        self._present = False
        self._updating = False

    def editor(self) -> QListWidget:
        return self.list

    def _item_changed(self, item: QListWidgetItem) -> None:
        if self._updating:
            return
        i = self.list.row(item)
        if item.checkState() == Qt.Checked and i not in self.order:
            self.order.append(i)
        elif item.checkState() != Qt.Checked and i in self.order:
            self.order.remove(i)
        self._present = True
        self.edited()

    def has_value(self) -> bool:
        return self._present

    def reset(self) -> None:
        super().reset()
        if self.required and not self._present:
            self._present = True

    def get(self) -> Any:
        return [self.values[i] for i in self.order]

    def _index(self, v: Any) -> int:
        for i, x in enumerate(self.values):
            if same(x, v):
                return i
        return -1

    def fits(self, value: Any) -> bool:
        if not isinstance(value, list):
            return False
        idx = [self._index(v) for v in value]
        return all(i >= 0 for i in idx) and len(set(idx)) == len(idx)

    def _check(self, order: list[int]) -> None:
        self._updating = True
        try:
            for i in range(self.list.count()):
                self.list.item(i).setCheckState(Qt.Checked if i in order else Qt.Unchecked)
        finally:
            self._updating = False
        self.order = list(order)

    def put(self, value: Any) -> None:
        self._check([self._index(v) for v in value])
        self._present = True

    def unset(self) -> None:
        self._check([])
        self._present = False
