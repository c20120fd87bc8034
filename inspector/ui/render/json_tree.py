"""A JSON value as a tree (key, value, type) whose rows are made as the view asks for them.

A node's children are described the first time its row count is asked (a closed node costs nothing), and no
node has more than GROUP children: a longer array or object shows its items in ranges, "[0 … 9999]", each
opening on smaller ranges down to the items themselves, as browsers' developer tools show a long array. So a
result of 50 MB of structured content (a table of 300,000 records) shows at once, and any record is a few
clicks away without a long turn of the loop, where a tree item per node took 20 seconds to build (and a
flat list fetched as it scrolled grew slower with every page, Qt laying out every open row again).
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QTreeView, QWidget

from ..base.text import visible

GROUP = 100  # most children a node shows: longer containers show ranges of items
COLUMNS = ("key", "value", "type")
OPENED = 40  # at most this many nodes are opened when the tree is shown
Index = QModelIndex | QPersistentModelIndex


class _Node:
    """A value of the JSON (`key`, `value`), or a range of a container's items (`span`: first, end)."""

    __slots__ = ("parent", "row", "key", "value", "span", "children", "keys")

    def __init__(self, parent: _Node | None, row: int, key: str, value: Any,
                 span: tuple[int, int] | None = None) -> None:
        self.parent = parent
        self.row = row
        self.key = key
        self.value = value
        self.span = span
        self.children: list[_Node] | None = None  # described when first asked for
        self.keys: list[Any] | None = None  # an object's keys, listed once for its ranges

    def size(self) -> int:
        if self.span is not None:
            return self.span[1] - self.span[0]
        v = self.value
        return len(v) if isinstance(v, (dict, list)) else 0

    def _keys(self) -> list[Any]:
        node = self
        while node.span is not None and node.parent is not None:  # a range shares its container's keys
            node = node.parent
        if node.keys is None:
            node.keys = list(node.value)
        return node.keys

    def describe_children(self) -> list[_Node]:
        if self.children is not None:
            return self.children
        v = self.value
        first, end = self.span if self.span is not None else (0, self.size())
        count = end - first
        out: list[_Node] = []
        if count > GROUP:
            step = GROUP
            while count > step * GROUP:
                step *= GROUP
            for row, start in enumerate(range(first, end, step)):
                stop = min(start + step, end)
                out.append(_Node(self, row, f"[{start} … {stop - 1}]", v, (start, stop)))
        elif isinstance(v, dict):
            keys = self._keys() if self.span is not None or len(v) > GROUP else list(v)
            out = [_Node(self, row, str(k), v[k]) for row, k in enumerate(keys[first:end])]
        elif isinstance(v, list):
            out = [_Node(self, row, f"[{i}]", v[i]) for row, i in enumerate(range(first, end))]
        self.children = out
        return out


def describe(v: Any) -> tuple[str, str]:
    """(what the value column shows, the JSON type)."""
    if isinstance(v, dict):
        return f"{{{len(v)} keys}}", "object"
    if isinstance(v, list):
        return f"[{len(v)} items]", "array"
    if isinstance(v, str):
        return visible(v, 500), "string"
    if v is None:
        return "null", "null"
    if isinstance(v, bool):
        return ("true" if v else "false"), "boolean"
    return json.dumps(v), "number"


class JsonTreeModel(QAbstractItemModel):
    """The tree of one JSON value, under a "(root)" row."""

    def __init__(self, value: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._top = _Node(None, 0, "", None)
        self._top.children = [_Node(self._top, 0, "(root)", value)]

    def _node(self, index: Index) -> _Node:
        return index.internalPointer() if index.isValid() else self._top  # type: ignore[no-any-return]

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:
        children = self._node(parent).describe_children()
        if not (0 <= row < len(children)) or not (0 <= column < len(COLUMNS)):
            return QModelIndex()
        return self.createIndex(row, column, children[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        up = self._node(index).parent
        if up is None or up is self._top:
            return QModelIndex()
        return self.createIndex(up.row, 0, up)

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._node(parent).describe_children())

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return len(COLUMNS)

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:
        if parent.isValid() and parent.column() != 0:
            return False
        node = self._node(parent)
        return node is self._top or node.size() > 0

    def data(self, index: Index, role: int = Qt.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node = self._node(index)
        col = index.column()
        if role == Qt.DisplayRole:
            if col == 0:
                return visible(node.key, 200)
            if node.span is not None:
                return "" if col == 2 else f"{node.size():,} {'keys' if isinstance(node.value, dict) else 'items'}"
            shown, kind = describe(node.value)
            return shown if col == 1 else kind
        if role == Qt.ToolTipRole and col == 1 and node.span is None and isinstance(node.value, str) \
                and len(node.value) > 80:
            return visible(node.value, 2000)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.DisplayRole) -> Any:
        if orientation == Qt.Horizontal and role == Qt.DisplayRole and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        return None

    def is_range(self, index: Index) -> bool:
        """Whether a row stands for a range of its container's items."""
        return index.isValid() and self._node(index).span is not None

    def value(self, index: Index) -> Any:
        """The JSON value a row stands for (a range: its container)."""
        return self._node(index).value


def json_tree(value: Any, parent: QWidget | None = None) -> QTreeView:
    """A read-only tree view of a JSON value (`structuredTree`): the root and the levels under it open, breadth
    first, to two levels deep and OPENED nodes at most, ranges closed; everything else is described when it is
    opened."""
    tree = QTreeView(parent)
    tree.setObjectName("structuredTree")
    tree.setUniformRowHeights(True)
    model = JsonTreeModel(value, tree)
    tree.setModel(model)
    level = [model.index(0, 0)]
    opened = 0
    for _depth in range(3):
        below = []
        for index in level:
            if opened >= OPENED:
                break
            if model.hasChildren(index) and not model.is_range(index):  # a range opens when asked
                tree.expand(index)
                opened += 1
                below.extend(model.index(r, 0, index) for r in range(min(model.rowCount(index), OPENED)))
        level = below
    # the key column fits the first rows shown (resizeColumnToContents lays out every open row)
    metrics = tree.fontMetrics()
    widest, rows, index = 0, 0, model.index(0, 0)
    while index.isValid() and rows < 200:
        depth, up = 1, index.parent()
        while up.isValid():
            depth, up = depth + 1, up.parent()
        widest = max(widest, metrics.horizontalAdvance(str(index.data())) + depth * tree.indentation())
        rows += 1
        index = tree.indexBelow(index)
    tree.setColumnWidth(0, min(max(140, widest + 24), 420))
    row_h = max(18, tree.sizeHintForRow(0))
    tree.setFixedHeight(min(380, min(rows, 16) * row_h + tree.header().sizeHint().height() + 8))
    return tree
