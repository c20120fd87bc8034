"""The command palette (Ctrl+K, `commandPalette`): type to find anything, Enter runs it.

It reaches every action of every menu (by its menu path, so "dark" finds View › Theme › Dark), every tab
of the server's page, every view (the docks), every server and every tool of the selected server.
Matching is fuzzy (`palette_match`): each typed word must appear as a subsequence of the entry's letters,
and entries whose letters start words and follow each other come first. Matched letters are drawn bold in
the accent colour, shortcuts right-aligned, and a sentence says so when nothing matches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QSize, QSortFilterProxyModel, Qt
from PySide6.QtGui import (
    QAction,
    QFont,
    QFontMetrics,
    QKeySequence,
    QPainter,
    QPalette,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDockWidget,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QMenuBar,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...session.tools import display_name
from ..base import design
from ..base.text import visible
from ..servers.connection import Connection
from .palette_match import match

SHORTCUT_ROLE = Qt.UserRole + 1
POSITIONS_ROLE = Qt.UserRole + 2
GROUP_LENGTH_ROLE = Qt.UserRole + 3


@dataclass
class Command:
    label: str
    run: Callable[[], Any]
    group: str = "Command"
    shortcut: str = ""
    enabled: bool = True

    @property
    def text(self) -> str:
        """What is shown and matched: the group, then the label."""
        return f"{self.group}: {self.label}" if self.group != "Command" else self.label


def matches(query: str, text: str) -> bool:
    return match(query, text) is not None


class _Filter(QSortFilterProxyModel):
    """Keeps the rows whose text matches, best first (the source order among equals); remembers where."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.query = ""
        self.found: dict[int, tuple[float, list[int]]] = {}
        self.setDynamicSortFilter(False)

    def set_query(self, query: str) -> None:
        source = self.sourceModel()
        found = {}
        for row in range(source.rowCount() if source is not None else 0):
            got = match(query, source.index(row, 0).data(Qt.DisplayRole) or "")
            if got is not None:
                found[row] = got
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.10 (invalidateFilter is deprecated there)
            self.beginFilterChange()
            self.query, self.found = query, found
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # pragma: no cover - older Qt
            self.query, self.found = query, found
            self.invalidateFilter()
        self.sort(0 if query.strip() else -1)

    def filterAcceptsRow(self, row: int, parent: Any) -> bool:
        return row in self.found if self.query.strip() else True

    def lessThan(self, left: QModelIndex, right: QModelIndex) -> bool:
        a, b = self.found.get(left.row()), self.found.get(right.row())
        sa, sb = (a[0] if a else 0.0), (b[0] if b else 0.0)
        if sa != sb:
            return sa > sb
        return left.row() < right.row()

    def data(self, index: QModelIndex, role: int = Qt.DisplayRole) -> Any:
        if role == POSITIONS_ROLE and index.isValid():
            got = self.found.get(self.mapToSource(index).row())
            return got[1] if got and self.query.strip() else []
        return super().data(index, role)


class _Row(QStyledItemDelegate):
    """One entry: its group dimmed, its label, matched letters bold in the accent colour, and the shortcut
    right-aligned. Text is drawn as runs of plain text: a server's tool name is never read as markup."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text, opt.text = opt.text, ""
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        style.drawControl(QStyle.CE_ItemViewItem, opt, painter, opt.widget)
        rect = opt.rect.adjusted(8, 0, -8, 0)
        selected = bool(opt.state & QStyle.State_Selected)
        pal = opt.palette
        ink = pal.color(QPalette.HighlightedText if selected else QPalette.Text)
        dim = pal.color(QPalette.HighlightedText if selected else QPalette.PlaceholderText)
        accent = ink if selected else pal.color(QPalette.Link)
        painter.save()
        shortcut = index.data(SHORTCUT_ROLE) or ""
        if shortcut:
            painter.setPen(dim)
            painter.setFont(opt.font)
            painter.drawText(rect, Qt.AlignRight | Qt.AlignVCenter, shortcut)
            rect.setRight(rect.right() - QFontMetrics(opt.font).horizontalAdvance(shortcut) - 16)
        group_len = index.data(GROUP_LENGTH_ROLE) or 0
        marked = set(index.data(POSITIONS_ROLE) or [])
        bold = QFont(opt.font)
        bold.setBold(True)
        plain_m, bold_m = QFontMetrics(opt.font), QFontMetrics(bold)
        x, right = rect.left(), rect.right()
        ell = "…"
        for run, is_marked, in_group in _runs(text, marked, group_len):
            font, metrics = (bold, bold_m) if is_marked else (opt.font, plain_m)
            width = metrics.horizontalAdvance(run)
            if x + width > right:
                run = metrics.elidedText(run, Qt.ElideRight, max(0, right - x))
                width = metrics.horizontalAdvance(run)
            painter.setFont(font)
            painter.setPen(accent if is_marked else (dim if in_group else ink))
            painter.drawText(x, rect.top(), width + 2, rect.height(), Qt.AlignLeft | Qt.AlignVCenter, run)
            x += width
            if run.endswith(ell) or x >= right:
                break
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        base = super().sizeHint(option, index)
        return QSize(base.width(), max(base.height(), QFontMetrics(option.font).height() + 10))


def _runs(text: str, marked: set[int], group_len: int) -> Iterable[tuple[str, bool, bool]]:
    """`text` cut where marking or the group's end changes: (run, marked, in the group)."""
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or (i in marked) != (start in marked) or i == group_len:
            yield text[start:i], start in marked, start < group_len
            start = i


class CommandPalette(QDialog):
    def __init__(self, commands: list[Command], parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.Popup | Qt.FramelessWindowHint)
        self.setObjectName("commandPalette")
        self.commands = [c for c in commands if c.enabled]
        self.ran: Command | None = None
        self.input = QLineEdit(self)
        self.input.setObjectName("commandPaletteInput")
        self.input.setPlaceholderText("Type a command, a tab, a view, a server or a tool…")
        self.model = QStandardItemModel(self)
        for i, c in enumerate(self.commands):
            text = visible(c.text, 160)
            item = QStandardItem(text)
            item.setData(i, Qt.UserRole)
            item.setData(c.shortcut, SHORTCUT_ROLE)
            item.setData(len(c.group) + 2 if c.group != "Command" else 0, GROUP_LENGTH_ROLE)
            item.setToolTip(text + (f"  ({c.shortcut})" if c.shortcut else ""))
            item.setEditable(False)
            self.model.appendRow(item)
        self.proxy = _Filter(self)
        self.proxy.setSourceModel(self.model)
        self.list = QListView(self)
        self.list.setObjectName("commandPaletteList")
        self.list.setModel(self.proxy)
        self.list.setUniformItemSizes(True)
        self.list.setItemDelegate(_Row(self.list))
        self.list.clicked.connect(lambda idx: self.run_index(idx))
        self.empty = QLabel(self)
        self.empty.setObjectName("commandPaletteEmpty")
        self.empty.setWordWrap(True)
        self.empty.setTextFormat(Qt.PlainText)
        self.empty.setContentsMargins(design.margins("m", "s"))
        self.empty.hide()
        self.hint = QLabel("↑↓ choose · Enter run · Esc close", self)
        self.hint.setEnabled(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("m", "m", "m", "s"))
        lay.addWidget(self.input)
        lay.addWidget(self.list, 1)
        lay.addWidget(self.empty)
        lay.addWidget(self.hint)
        self.input.textChanged.connect(self._filter)
        self.input.installEventFilter(self)
        f = self.input.font()
        f.setPointSizeF(design.size("heading", f.pointSizeF()))
        self.input.setFont(f)
        self.setStyleSheet(f"QDialog#commandPalette {{ {design.border_css('palette(dark)')} }}"
                           f"QLineEdit#commandPaletteInput {{ padding: {design.space('xs')}px; }}")
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
        width = max(560, self.fontMetrics().averageCharWidth() * 72)
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
        found = self.proxy.rowCount()
        if found:
            self.list.setCurrentIndex(self.proxy.index(0, 0))
        self.empty.setText("" if found else
                           f"Nothing matches “{visible(text.strip(), 60)}”. The palette finds menu commands, "
                           "tabs (Resources, Check…), views (Traffic, Log, Timeline), servers and the tools "
                           "of the selected server.")
        self.list.setVisible(bool(found))
        self.empty.setVisible(not found)
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

    def highlighted(self, row: int = 0) -> str:
        """The matched letters of a row, in order (what is drawn bold)."""
        idx = self.proxy.index(row, 0)
        text = idx.data() or ""
        return "".join(text[i] for i in idx.data(POSITIONS_ROLE) or [] if i < len(text))

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


def _clean(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").rstrip(".").strip()


def menu_commands(menu_bar: QMenuBar, skip: Sequence[QAction] = ()) -> list[Command]:
    """Every enabled action of every menu, grouped by its menu path ("View › Theme")."""
    out: list[Command] = []

    def walk(menu: QMenu, path: str) -> None:
        for a in menu.actions():
            if a.isSeparator() or a in skip or not a.isVisible():
                continue
            sub = a.menu()
            if isinstance(sub, QMenu):
                walk(sub, f"{path} › {_clean(sub.title())}")
                continue
            label = _clean(a.text())
            if not label:
                continue
            if a.isCheckable() and a.actionGroup() is None:
                label += " (on)" if a.isChecked() else " (off)"
            elif a.isCheckable() and a.isChecked():
                label += " (current)"
            out.append(Command(label, a.trigger, path, a.shortcut().toString(QKeySequence.NativeText),
                               a.isEnabled()))

    for top in menu_bar.actions():
        sub = top.menu()
        if isinstance(sub, QMenu) and top.isVisible():
            walk(sub, _clean(sub.title()))
    return out


def palette_commands(*, menu_bar: QMenuBar, tabs: QTabWidget | None, docks: Sequence[QDockWidget],
                     skip: Sequence[QAction], servers: Sequence[Connection], selected: Connection | None,
                     select: Callable[[Connection], Any], jump_to_tool: Callable[[str], Any]) -> list[Command]:
    """What the palette offers now: every menu action, the server page's tabs, the views, switching to another
    server, and jumping to a tool of the selected one."""
    out = menu_commands(menu_bar, skip)
    if tabs is not None and selected is not None:
        for i in range(tabs.count()):
            if tabs.isTabVisible(i):
                title = _clean(tabs.tabText(i))
                why = "" if tabs.isTabEnabled(i) else " (not for this server)"
                out.append(Command(title + why, lambda i=i, t=tabs: t.setCurrentIndex(i), "Tab",
                                   enabled=tabs.isTabEnabled(i)))
    for dock in docks:
        title = _clean(dock.windowTitle())

        def show(d: QDockWidget = dock) -> None:
            d.show()
            d.raise_()
        out.append(Command(title, show, "Show view"))
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
