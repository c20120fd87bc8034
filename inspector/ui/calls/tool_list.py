"""The selected server's tools: `toolList` (one row per tool, Qt.UserRole = name), search, badges.

Display name by the spec's precedence (title > annotations.title > name), the
first line of the description, a data: URI icon (remote icons are never
fetched), and annotation badges with the spec's defaults applied. Tools with a
duplicate name or without a valid inputSchema are flagged, never hidden; after
`notifications/tools/list_changed` new tools are marked "new" and vanished ones
stay listed, struck through, until the next list.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ... import invisible
from ...checks.definitions import Cost
from ...protocol.tasks import task_support
from ...session import ServerSession, Status
from ...session.tools import app_badges, badges, display_name, flags, hints_tooltip
from ..base import design, theme
from ..base.items import (
    BADGES_ROLE,
    CHANGE_ROLE,
    DESCRIPTION_ROLE,
    FLAGS_ROLE,
    NAME_ROLE,
    SEARCH_ROLE,
    TOOL_ROLE,
    ItemDelegate,
    item_icon,
)
from ..base.text import plain_tooltip, visible

# ---------------------------------------------------------------------- model
_DISPLAY, _USER, _TOOLTIP = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.UserRole, Qt.ItemDataRole.ToolTipRole
_DECORATION = Qt.ItemDataRole.DecorationRole
NAME_LETTERS = 16  # of a tool's name the list keeps room for, at any text size
ICON_ROOM = 30  # the row's icon and its margins
_ROW_ROLES = (_DISPLAY, _USER, TOOL_ROLE, BADGES_ROLE, FLAGS_ROLE, CHANGE_ROLE, NAME_ROLE, DESCRIPTION_ROLE)


class ToolModel(QAbstractListModel):
    """The tools as rows, made when they are first shown: a list of 2,000 tools is taken in one reset (no row
    inserted one by one), and a row's texts, badges, icon and tooltip are worked out the first time a view
    asks for them (the rows on screen), then kept. The search text of every row is made up front: the
    search box filters them all."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[tuple[Any, str | None]] = []  # (the tool as listed, its change mark)
        self._tools: list[Any] = []
        self._search: list[str] = []
        self._cache: dict[int, dict[int, Any]] = {}
        self._icons: dict[int, tuple[Any, str | None]] = {}
        self._duplicates: set[str] = set()
        self._findings: dict[str, list[str]] = {}
        self._cost: Cost | None = None
        self._any_icon = False

    def set_tools(self, tools: Iterable[Any], appeared: set[str] = frozenset(),
                  vanished: Iterable[dict[str, Any]] = (), findings: dict[str, list[str]] | None = None,
                  cost: Cost | None = None, changed: dict[str, str] | None = None) -> None:
        """`findings`: tool name -> what the live check says of it (marked like the tool's own flags);
        `cost`: what the list costs a model, for each tool's share in its tooltip; `changed`: tool name ->
        what of its definition changed ("schema", "description"...), marked "schema changed"."""
        tools = list(tools)
        names = [t.get("name") for t in tools if isinstance(t, dict)]
        changed = changed or {}
        self.beginResetModel()
        self._duplicates = {n for n, c in collections.Counter(names).items() if c > 1 and isinstance(n, str)}
        self._findings = findings or {}
        self._cost = cost
        self._rows = []
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            self._rows.append((tool, "new" if name in appeared else f"{changed[name]} changed" if name in changed
                               else None))
        self._rows += [(tool, "removed") for tool in vanished]
        self._tools = [tool for tool, _ in self._rows]
        self._search = [_search_text(tool) for tool in self._tools]
        self._cache, self._icons = {}, {}
        # icons only where a server gives one: a list where no tool has one reserves no room for them, and a
        # tool without one among tools with one keeps an empty place so the names line up
        self._any_icon = any(isinstance(t, dict) and isinstance(t.get("icons"), list) and t["icons"]
                             for t in self._tools)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def tool(self, index: QModelIndex) -> dict[str, Any] | None:
        """The tool dict of a row (of this model or a proxy over it)."""
        key = index.data(TOOL_ROLE) if index.isValid() else None
        if isinstance(key, int) and 0 <= key < len(self._tools):
            tool = self._tools[key]
            return tool if isinstance(tool, dict) else {}
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = _DISPLAY) -> Any:
        row = index.row()
        if not index.isValid() or not 0 <= row < len(self._rows):
            return None
        if role == SEARCH_ROLE:
            return self._search[row]
        if role == _DECORATION:
            return self._icon(row)[0]
        if role == _TOOLTIP:
            return self._tooltip(row)
        if role not in _ROW_ROLES:
            return None
        return self._row_data(row).get(role)

    def _row_data(self, row: int) -> dict[int, Any]:
        cached = self._cache.get(row)
        if cached is None:
            cached = self._cache[row] = self._row(row)
        return cached

    def row_of(self, name: str) -> int | None:
        """The first row of the tool called `name` (None when it is not listed)."""
        return next((r for r, t in enumerate(self._tools) if isinstance(t, dict) and t.get("name") == name), None)

    def _icon(self, row: int) -> tuple[Any, str | None]:
        got = self._icons.get(row)
        if got is None:
            tool = self._tools[row]
            pm, note = item_icon(tool if isinstance(tool, dict) else {})
            got = self._icons[row] = (pm if pm is not None else QPixmap() if self._any_icon else None, note)
        return got

    def _row(self, row: int) -> dict[int, Any]:
        tool, change = self._rows[row]
        t = tool if isinstance(tool, dict) else {}
        name = t.get("name") if isinstance(t.get("name"), str) else ""
        desc = t.get("description") if isinstance(t.get("description"), str) else ""
        first = next((line for line in desc.splitlines() if line.strip()), "")
        support = task_support(t)
        problems = [visible(f, 200) for f in flags(tool, self._duplicates)]
        found = self._findings.get(name, [])
        return {_DISPLAY: visible(display_name(t), 200), _USER: name, TOOL_ROLE: row,
                BADGES_ROLE: app_badges(t) + badges(t) + (["task"] if support == "required" else
                                                          ["task optional"] if support == "optional" else []),
                FLAGS_ROLE: problems + ([f"{len(found)} finding{'s' if len(found) != 1 else ''}"] if found else []),
                CHANGE_ROLE: change, NAME_ROLE: visible(name, 200), DESCRIPTION_ROLE: visible(first, 300)}

    def _tooltip(self, row: int) -> str:
        cached = self._row_data(row)
        shown = cached[_DISPLAY]
        tool, change = self._rows[row]
        t = tool if isinstance(tool, dict) else {}
        name = cached[_USER]
        problems = [f for f in cached[FLAGS_ROLE] if not f.endswith(("finding", "findings"))]
        found = [visible(f, 300) for f in self._findings.get(name, [])]
        tip = [shown] + ([f"name: {visible(name, 200)}"] if visible(name, 200) != shown else [])
        if problems:
            tip.append("⚠ " + "; ".join(problems))
        tip += [f"⚠ {f}" for f in found[:8]]
        share = self._cost.tools.get(name) if self._cost is not None else None
        if share is not None and self._cost is not None and self._cost.tokens:
            tip.append(f"About {share[1]:,} tokens ({100 * share[1] / self._cost.tokens:.0f}% of the tool list) "
                       "for a model to read on every turn")
        if change == "new":
            tip.append("New: appeared after the server said its tool list changed.")
        elif change == "removed":
            tip.append("Removed: no longer offered by the server.")
        elif change:
            tip.append(f"{change.capitalize()} since the server was last listed.")
        icon_note = self._icon(row)[1]
        if icon_note:
            tip.append(icon_note)
        hidden = invisible.hover(t.get("description")) if isinstance(t.get("description"), str) else ""
        if hidden:
            tip.append(hidden)
        tip += ["", hints_tooltip(t)]
        return plain_tooltip("\n".join(tip))


def _search_text(tool: Any) -> str:
    """What the search box matches: name, title, annotations' title and description, case-folded."""
    t = tool if isinstance(tool, dict) else {}
    ann = t.get("annotations") if isinstance(t.get("annotations"), dict) else {}
    parts = (t.get("name"), t.get("title"), ann.get("title"), t.get("description"))
    return " ".join(p if isinstance(p, str) else "" for p in parts).casefold()


class ToolFilter(QSortFilterProxyModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.setFilterRole(SEARCH_ROLE)
        self.setFilterCaseSensitivity(Qt.CaseInsensitive)


# ---------------------------------------------------------------------- delegate
# ---------------------------------------------------------------------- panel
class ToolListPanel(QWidget):
    """Search box, a status line, and the `toolList` view."""

    toolSelected = Signal(object)  # the tool dict, or None
    refreshRequested = Signal()  # Refresh: the window lists the selected server's tools again

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ToolModel(self)
        self.proxy = ToolFilter(self)
        self.proxy.setSourceModel(self.model)
        self.search = QLineEdit(self)
        self.search.setObjectName("toolSearch")
        self.search.setPlaceholderText("Filter tools by name, title or description")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._filter)
        self.count = QLabel(self)
        self.count.setObjectName("toolCount")
        self.count.setTextFormat(Qt.PlainText)
        self.changes = QLabel(self)  # what the last listing changed, under the search box: it needs the room
        self.changes.setObjectName("toolChanges")
        self.changes.setTextFormat(Qt.PlainText)
        self.changes.setWordWrap(True)
        self.changes.setStyleSheet(f"color: {theme.colour('muted').name()};")
        self.changes.hide()
        self.message = QLabel(self)
        self.message.setObjectName("toolListMessage")
        self.message.setTextFormat(Qt.PlainText)
        self.message.setWordWrap(True)
        self.message.hide()
        self.view = QListView(self)
        self.view.setObjectName("toolList")
        self.view.setModel(self.proxy)
        self.view.setItemDelegate(ItemDelegate(self.view))
        self.view.setUniformItemSizes(True)
        self.view.setSelectionMode(QAbstractItemView.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.view.selectionModel().currentChanged.connect(self._current_changed)
        self.refresh_button = QPushButton("Refresh", self)  # where Resources and Prompts have theirs
        self.refresh_button.setObjectName("refreshToolsButton")
        self.refresh_button.setToolTip("List the tools again (tools/list; F5)")
        self.refresh_button.clicked.connect(self.refreshRequested.emit)
        top = QHBoxLayout()  # as on every list's header (ui.base.layout.ListHeader): the search, then a row
        top.setContentsMargins(0, 0, 0, 0)
        self.count.setMinimumWidth(1)  # the list may be narrow: the count gives way, the search and Refresh stay
        top.addWidget(self.count, 1)
        top.addWidget(self.refresh_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(design.space("xs"))
        lay.addWidget(self.search)
        lay.addLayout(top)
        lay.addWidget(self.changes)
        lay.addWidget(self.message)
        lay.addWidget(self.view, 1)
        self._keep_names()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # the text size changed: the names' room with it
            self._keep_names()

    def _keep_names(self) -> None:
        """The list keeps room for NAME_LETTERS letters of a name beside its icon at any text size: a window
        short of width takes it from the answer's column, not from the names."""
        view = self.view
        self.view.setMinimumWidth(NAME_LETTERS * view.fontMetrics().averageCharWidth() + ICON_ROOM
                                  + view.verticalScrollBar().sizeHint().width() + 2 * view.frameWidth())

    def jump_to(self, name: str) -> None:
        """Select tool `name` (the search cleared first) and give the list the focus."""
        self.search.clear()
        if self.select(name):
            self.view.setFocus(Qt.OtherFocusReason)

    def focus_search(self) -> None:
        self.search.setFocus(Qt.ShortcutFocusReason)
        self.search.selectAll()

    def show_session(self, session: ServerSession | None, findings: dict[str, list[str]] | None = None,
                     cost: Cost | None = None) -> None:
        """The tools of `session` as last listed, with a line saying where they stand (connecting, listing,
        failed, none, or shown as last listed while the server is away); `findings` and `cost` as in
        `ToolModel.set_tools`."""
        if session is None:
            self.set_tools([])
            return
        listing = session.tools
        status = session.status
        message = None
        if listing.error:
            message = listing.error if listing.error.startswith("tools/list") else f"tools/list failed: {listing.error}"
        elif status is not Status.CONNECTED and not listing.items:
            message = {Status.CONNECTING: "Connecting…", Status.ERROR: "Not connected: the server failed to start.",
                       Status.EXITED: "The server has exited."}.get(status, "Not connected.")
        elif status is Status.CONNECTED and not listing.loaded:
            message = "Listing tools…"
        elif status is Status.CONNECTED and not listing.items:
            message = listing.note or "This server lists no tools."
        elif status is not Status.CONNECTED:
            now = {Status.ERROR: "could not be reached", Status.EXITED: "has exited"}.get(status,
                                                                                        f"is {status.value}")
            message = f"Showing the tools as last listed: the server {now}."
        self.set_tools(listing.items, appeared=listing.appeared, vanished=listing.vanished, message=message,
                       error=bool(listing.error) or status in (Status.ERROR, Status.EXITED), findings=findings,
                       cost=cost, changed=listing.changed)

    def set_tools(self, tools: list[Any], *, appeared: set[str] = frozenset(),
                  vanished: list[dict[str, Any]] = (), message: str | None = None, error: bool = False,
                  findings: dict[str, list[str]] | None = None, cost: Cost | None = None,
                  changed: dict[str, str] | None = None) -> None:
        keep = self.selected_name()
        self.model.set_tools(tools, appeared, vanished, findings, cost, changed)
        total = len(tools)
        extra = []
        if appeared:
            extra.append(f"{len(appeared)} new")
        if vanished:
            extra.append(f"{len(vanished)} removed")
        if changed:
            extra.append(f"{len(changed)} changed")
        self.count.setText(f"{total} tool{'s' if total != 1 else ''}")
        self.changes.setText(f"Since the last listing: {', '.join(extra)}" if extra else "")
        self.changes.setVisible(bool(extra))
        self.message.setText(message or "")
        self.message.setVisible(bool(message))
        self.message.setStyleSheet(f"color: {theme.colour('error').name()};" if error else "")
        # a reset moves no current row and says nothing: the panel is told the tool is gone, unless this
        # listing has one of that name again (then selecting it tells the panel which tool is shown now)
        if keep and not self.select(keep):
            self.toolSelected.emit(None)

    def _filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.casefold().strip())

    def selected_name(self) -> str | None:
        idx = self.view.currentIndex()
        return idx.data(Qt.UserRole) if idx.isValid() else None

    def select(self, name: str) -> bool:
        row = self.model.row_of(name)
        idx = self.proxy.mapFromSource(self.model.index(row, 0)) if row is not None else QModelIndex()
        if not idx.isValid():  # not listed, or hidden by the search
            return False
        self.view.setCurrentIndex(idx)
        return True

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.toolSelected.emit(self.model.tool(current))
