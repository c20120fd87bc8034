"""The command palette (Ctrl+K, `commandPalette`): type to find a command, Enter runs it.

Commands: connect, disconnect, restart, re-list tools, switch to a server, jump to a tool of the
selected server, clear traffic, import, export, copy as a command line, preferences, shortcuts.
Matching is by words in any order (every typed word must start a word of the label, or occur in it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QObject, QSortFilterProxyModel, Qt
from PySide6.QtGui import QAction, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QDialog, QLabel, QLineEdit, QListView, QVBoxLayout, QWidget

from ...session.tools import display_name
from ..base.text import visible
from ..servers.connection import Connection


@dataclass
class Command:
    label: str
    run: Callable[[], Any]
    group: str = "Command"
    shortcut: str = ""
    enabled: bool = True


def matches(query: str, text: str) -> bool:
    words = query.casefold().split()
    hay = text.casefold()
    return all(w in hay for w in words)


class _Filter(QSortFilterProxyModel):
    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.query = ""

    def set_query(self, query: str) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.10 (invalidateFilter is deprecated there)
            self.beginFilterChange()
            self.query = query
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # pragma: no cover - older Qt
            self.query = query
            self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent: Any) -> bool:
        idx = self.sourceModel().index(row, 0, parent)
        return matches(self.query, idx.data(Qt.DisplayRole) or "")


class CommandPalette(QDialog):
    def __init__(self, commands: list[Command], parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.Popup | Qt.FramelessWindowHint)
        self.setObjectName("commandPalette")
        self.commands = [c for c in commands if c.enabled]
        self.ran: Command | None = None
        self.input = QLineEdit(self)
        self.input.setObjectName("commandPaletteInput")
        self.input.setPlaceholderText("Type a command, a server or a tool…")
        self.model = QStandardItemModel(self)
        for i, c in enumerate(self.commands):
            text = f"{c.group}: {c.label}" if c.group != "Command" else c.label
            item = QStandardItem(visible(text, 120) + (f"    {c.shortcut}" if c.shortcut else ""))
            item.setData(i, Qt.UserRole)
            item.setEditable(False)
            self.model.appendRow(item)
        self.proxy = _Filter(self)
        self.proxy.setSourceModel(self.model)
        self.list = QListView(self)
        self.list.setObjectName("commandPaletteList")
        self.list.setModel(self.proxy)
        self.list.setUniformItemSizes(True)
        self.list.clicked.connect(lambda idx: self.run_index(idx))
        self.hint = QLabel("↑↓ choose · Enter run · Esc close", self)
        self.hint.setEnabled(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 8, 8, 6)
        lay.addWidget(self.input)
        lay.addWidget(self.list, 1)
        lay.addWidget(self.hint)
        self.input.textChanged.connect(self._filter)
        self.input.installEventFilter(self)
        f = self.input.font()
        f.setPointSizeF(f.pointSizeF() * 1.2)
        self.input.setFont(f)
        self.setStyleSheet("QDialog#commandPalette { border: 1px solid palette(dark); }"
                           "QLineEdit#commandPaletteInput { padding: 4px; }"
                           "QListView#commandPaletteList::item { padding: 4px 6px; }")
        self._filter("")

    @classmethod
    def open_over(cls, parent: QWidget, commands: list[Command]) -> CommandPalette:
        """A palette over `parent`, shown now; it deletes itself when closed."""
        palette = cls(commands, parent)
        palette.setAttribute(Qt.WA_DeleteOnClose)
        palette.popup()
        return palette

    def popup(self) -> None:
        parent = self.parentWidget()
        width = 560
        if parent is not None:
            w = min(width, max(360, parent.width() - 80))
            self.resize(w, self.sizeHint().height())
            top = parent.mapToGlobal(parent.rect().topLeft())
            self.move(top.x() + (parent.width() - w) // 2, top.y() + 60)
        else:
            self.resize(width, self.sizeHint().height())
        self.show()
        self.input.setFocus(Qt.PopupFocusReason)

    def _filter(self, text: str) -> None:
        self.proxy.set_query(text)
        if self.proxy.rowCount():
            self.list.setCurrentIndex(self.proxy.index(0, 0))
        self._fit()

    def _fit(self) -> None:
        """As tall as the matches (up to 12 rows), so a narrow search is a small popup."""
        rows = min(max(self.proxy.rowCount(), 1), 12)
        row = self.list.sizeHintForRow(0) if self.proxy.rowCount() else self.fontMetrics().height() + 8
        self.list.setFixedHeight(rows * max(row, 1) + 2 * self.list.frameWidth() + 2)
        self.layout().invalidate()
        self.layout().activate()
        self.resize(self.width(), self.layout().sizeHint().height())

    def labels(self) -> list[str]:
        return [self.proxy.index(r, 0).data() for r in range(self.proxy.rowCount())]

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.input and event.type() == QEvent.KeyPress:
            key = event.key()
            if key in (Qt.Key_Down, Qt.Key_Up, Qt.Key_PageDown, Qt.Key_PageUp):
                row = self.list.currentIndex().row()
                step = {Qt.Key_Down: 1, Qt.Key_Up: -1, Qt.Key_PageDown: 8, Qt.Key_PageUp: -8}[key]
                row = max(0, min(self.proxy.rowCount() - 1, row + step))
                self.list.setCurrentIndex(self.proxy.index(row, 0))
                return True
            if key in (Qt.Key_Return, Qt.Key_Enter):
                self.run_index(self.list.currentIndex())
                return True
            if key == Qt.Key_Escape:
                self.close()
                return True
        return super().eventFilter(obj, event)

    def run_index(self, idx: Any) -> None:
        if not idx.isValid():
            return
        command = self.commands[self.proxy.mapToSource(idx).data(Qt.UserRole)]
        self.ran = command
        self.close()
        command.run()


def palette_commands(*, server_actions: Sequence[QAction], actions: Sequence[QAction],
                     traffic: Sequence[tuple[QAction, bool]], servers: Sequence[Connection],
                     selected: Connection | None, select: Callable[[Connection], Any],
                     jump_to_tool: Callable[[str], Any]) -> list[Command]:
    """What the palette offers now: the server actions, the traffic actions (each with whether it applies),
    the other actions, switching to another server, and jumping to a tool of the selected one."""
    out: list[Command] = []

    def from_action(action: QAction, group: str = "Command", enabled: bool = True) -> None:
        out.append(Command(action.text().replace("&", "").rstrip("…"), action.trigger, group,
                           action.shortcut().toString(), enabled and action.isEnabled()))

    for a in server_actions:
        from_action(a, "Server")
    for a, applies in traffic:
        from_action(a, "Traffic", applies)
    for a in actions:
        from_action(a)
    for c in servers:
        if c is not selected:
            out.append(Command(f"{c.name} ({c.session.status.value})", lambda c=c: select(c), "Switch to server"))
    for tool in selected.session.tools.items if selected is not None else []:
        name = tool.get("name")
        if not isinstance(name, str):
            continue
        title = display_name(tool)
        label = f"{title} ({name})" if title and title != name else name
        out.append(Command(label, lambda n=name: jump_to_tool(n), "Tool"))
    return out
