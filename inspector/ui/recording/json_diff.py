"""Two JSON values side by side with what differs marked: `DiffColumns` (each side pretty-printed and
highlighted, the lines of every changed path tinted by the kind of change) and `ChangeList` (one row per
change: path, A's value, B's value). Replay and compare show their findings with both.

A change is a dict as `inspector.recording.compare` writes it (`path`, `kind`, `a`, `b`); its path is a
JSON pointer into the values shown. Tints are the theme's semantic colours at low opacity, so the text
stays readable in light and dark themes alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QPlainTextEdit,
    QSplitter,
    QTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...recording.compare import MISSING, pointer_part, short
from ..base import design, theme
from ..base.json_view import JsonView
from ..base.layout import heading_label, text_label

# the theme's colour for each kind of change (theme.py: green, red, amber in both themes)
KIND_COLOURS = {"added": "new", "removed": "error", "changed": "connecting"}
KIND_MARKS = {"added": "+", "removed": "−", "changed": "~"}
MAX_DEPTH = 100  # deeper than this, a value is printed on one line (a hostile server can nest deeply)
MAX_CHARS = 1_000_000  # a bigger value is shown as plain text, its paths not marked
MAX_MARKED_LINES = 4000


def tint(kind: str, alpha: int = 70) -> QColor:
    c = QColor(theme.colour(KIND_COLOURS.get(kind, "muted")))
    c.setAlpha(alpha)
    return c


def layout_json(value: Any) -> tuple[str, dict[str, tuple[int, int]]]:
    """`value` printed as `json.dumps(indent=2)` does, and the lines (first, last) of every JSON pointer."""
    lines: list[str] = []
    spans: dict[str, tuple[int, int]] = {}

    def emit(v: Any, path: str, depth: int, prefix: str, suffix: str) -> None:
        start = len(lines)
        pad = "  " * depth
        if isinstance(v, dict) and v and depth < MAX_DEPTH:
            lines.append(f"{pad}{prefix}{{")
            items = list(v.items())
            for i, (k, item) in enumerate(items):
                emit(item, f"{path}/{pointer_part(k)}", depth + 1, json.dumps(str(k), ensure_ascii=False) + ": ",
                     "," if i < len(items) - 1 else "")
            lines.append(f"{pad}}}{suffix}")
        elif isinstance(v, list) and v and depth < MAX_DEPTH:
            lines.append(f"{pad}{prefix}[")
            for i, item in enumerate(v):
                emit(item, f"{path}/{i}", depth + 1, "", "," if i < len(v) - 1 else "")
            lines.append(f"{pad}]{suffix}")
        else:
            try:
                text = json.dumps(v, ensure_ascii=False, default=str)
            except (ValueError, RecursionError):
                text = repr(v)
            lines.append(f"{pad}{prefix}{text}{suffix}")
        spans[path] = (start, len(lines) - 1)

    emit(value, "", 0, "", "")
    return "\n".join(lines), spans


def _too_big(value: Any) -> str | None:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        return repr(value)[:MAX_CHARS]
    return text[:MAX_CHARS] + " … (cut)" if len(text) > MAX_CHARS else None


class JsonColumn(QWidget):
    """One side: a heading and the value, with lines tinted per marked path."""

    def __init__(self, title: str, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = heading_label(title, self)
        self.heading.setObjectName(f"{name}Title")
        self.view = JsonView(self)
        self.view.setObjectName(name)
        self.spans: dict[str, tuple[int, int]] = {}
        self.marked: list[str] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(design.space("hair"))
        lay.addWidget(self.heading)
        lay.addWidget(self.view, 1)

    def show_value(self, value: Any, marks: Iterable[tuple[str, str]] = (), *, absent: str = "") -> None:
        """`value` (MISSING: the `absent` note instead), the lines of each (path, kind) in `marks` tinted."""
        self.marked = []
        self.spans = {}
        if value is MISSING:
            self.view.setPlainText(absent)
            self.view.setExtraSelections([])
            return
        big = _too_big(value)
        if big is not None:
            self.view.setPlainText(big)
            self.view.setExtraSelections([])
            return
        text, self.spans = layout_json(value)
        self.view.set_json_text(text)
        selections: list[QTextEdit.ExtraSelection] = []
        doc = self.view.document()
        for path, kind in marks:
            span = self.spans.get(path)
            if span is None:
                continue
            self.marked.append(path)
            first, last = span
            for line in range(first, min(last, first + MAX_MARKED_LINES) + 1):
                sel = QTextEdit.ExtraSelection()
                sel.format.setBackground(tint(kind))
                sel.format.setProperty(QTextFormat.FullWidthSelection, True)
                sel.cursor = QTextCursor(doc.findBlockByNumber(line))
                selections.append(sel)
        self.view.setExtraSelections(selections)

    def reveal(self, path: str) -> None:
        """Scroll to the line of `path` (or its nearest parent shown)."""
        while path and path not in self.spans:
            path = path.rsplit("/", 1)[0]
        span = self.spans.get(path)
        if span is None:
            return
        cursor = QTextCursor(self.view.document().findBlockByNumber(span[0]))
        self.view.setTextCursor(cursor)
        self.view.centerCursor()


class DiffColumns(QSplitter):
    """A on the left, B on the right (`<name>A`, `<name>B`), each changed path tinted: an added one on B,
    a removed one on A, a changed one on both."""

    def __init__(self, name: str, titles: tuple[str, str], parent: QWidget | None = None) -> None:
        super().__init__(Qt.Horizontal, parent)
        self.setObjectName(name)
        self.a = JsonColumn(titles[0], f"{name}A", self)
        self.b = JsonColumn(titles[1], f"{name}B", self)
        self.addWidget(self.a)
        self.addWidget(self.b)
        self.setChildrenCollapsible(False)

    def set_titles(self, a: str, b: str) -> None:
        self.a.heading.setText(a)
        self.b.heading.setText(b)

    def show_values(self, a: Any, b: Any, changes: Sequence[dict[str, Any]] = (), *,
                    absent: tuple[str, str] = ("(not on this side)", "(not on this side)")) -> None:
        self.a.show_value(a, [(c["path"], c["kind"]) for c in changes if c["kind"] != "added"], absent=absent[0])
        self.b.show_value(b, [(c["path"], c["kind"]) for c in changes if c["kind"] != "removed"], absent=absent[1])

    def reveal(self, path: str) -> None:
        self.a.reveal(path)
        self.b.reveal(path)


class ChangeList(QTreeWidget):
    """One row per change: the mark and path, A's value, B's value (Qt.UserRole: the change)."""

    changeSelected = Signal(object)

    def __init__(self, name: str, titles: tuple[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setHeaderLabels(["Path", *titles])
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setTextElideMode(Qt.ElideRight)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.Interactive)
        header.setSectionResizeMode(1, QHeaderView.Stretch)
        header.setSectionResizeMode(2, QHeaderView.Stretch)
        header.resizeSection(0, self.fontMetrics().horizontalAdvance("~ /structuredContent/result/0") + 24)
        self.empty = text_label("", self.viewport(), name=f"{name}Empty", role="muted")
        self.empty.move(8, 6)
        self.currentItemChanged.connect(
            lambda item, _prev: self.changeSelected.emit(item.data(0, Qt.UserRole) if item is not None else None))

    def set_changes(self, changes: Sequence[dict[str, Any]], empty: str = "No differences.") -> None:
        self.clear()
        for change in changes:
            kind = change["kind"]
            item = QTreeWidgetItem(self, [f"{KIND_MARKS[kind]} {change['path'] or '(the whole value)'}",
                                          short(change.get("a", MISSING), 200), short(change.get("b", MISSING), 200)])
            item.setForeground(0, theme.colour(KIND_COLOURS[kind]))
            item.setData(0, Qt.UserRole, change)
            for col in range(3):
                item.setToolTip(col, item.text(col))
        self.empty.setText(empty)
        self.empty.adjustSize()
        self.empty.setVisible(not changes and bool(empty))

    def paths(self) -> list[str]:
        return [self.topLevelItem(i).data(0, Qt.UserRole)["path"] for i in range(self.topLevelItemCount())]


def plain_view(name: str, parent: QWidget | None = None) -> QPlainTextEdit:
    """Read-only text without wrapping (stderr lines, instructions)."""
    view = QPlainTextEdit(parent)
    view.setObjectName(name)
    view.setReadOnly(True)
    view.setLineWrapMode(QPlainTextEdit.WidgetWidth)
    return view
