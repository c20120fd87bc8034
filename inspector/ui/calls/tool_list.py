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

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QHBoxLayout, QLabel, QLineEdit, QListView, QVBoxLayout, QWidget

from ...checks.definitions import Cost
from ...protocol.tasks import task_support
from ...session import ServerSession, Status
from ...session.tools import app_badges, badges, display_name, flags, hints_tooltip
from ..base import theme
from ..base.items import (
    BADGES_ROLE,
    CHANGE_ROLE,
    DESCRIPTION_ROLE,
    FLAGS_ROLE,
    ICON_SIZE,
    NAME_ROLE,
    SEARCH_ROLE,
    TOOL_ROLE,
    ItemDelegate,
    item_icon,
)
from ..base.text import plain_tooltip, visible


# ---------------------------------------------------------------------- model
class ToolModel(QStandardItemModel):
    def set_tools(self, tools: Iterable[Any], appeared: set[str] = frozenset(),
                  vanished: Iterable[dict[str, Any]] = (), findings: dict[str, list[str]] | None = None,
                  cost: Cost | None = None, changed: dict[str, str] | None = None) -> None:
        """`findings`: tool name -> what the live check says of it (marked like the tool's own flags);
        `cost`: what the list costs a model, for each tool's share in its tooltip; `changed`: tool name ->
        what of its definition changed ("schema", "description"...), marked "schema changed"."""
        tools = list(tools)
        names = [t.get("name") for t in tools if isinstance(t, dict)]
        duplicates = {n for n, c in collections.Counter(names).items() if c > 1 and isinstance(n, str)}
        self.clear()
        self._findings = findings or {}
        self._cost = cost
        self._tools: list[Any] = []
        changed = changed or {}
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            mark = "new" if name in appeared else f"{changed[name]} changed" if name in changed else None
            self.appendRow(self._item(tool, duplicates, mark))
        for tool in vanished:
            self.appendRow(self._item(tool, set(), "removed"))

    def tool(self, index: QModelIndex) -> dict[str, Any] | None:
        """The tool dict of a row (of this model or a proxy over it)."""
        key = index.data(TOOL_ROLE) if index.isValid() else None
        tools = getattr(self, "_tools", [])
        if isinstance(key, int) and 0 <= key < len(tools):
            tool = tools[key]
            return tool if isinstance(tool, dict) else {}
        return None

    def _item(self, tool: Any, duplicates: set[str], change: str | None) -> QStandardItem:
        item = QStandardItem()
        item.setEditable(False)
        t = tool if isinstance(tool, dict) else {}
        name = t.get("name") if isinstance(t.get("name"), str) else ""
        shown = visible(display_name(t), 200)
        desc = t.get("description") if isinstance(t.get("description"), str) else ""
        first = next((line for line in desc.splitlines() if line.strip()), "")
        item.setData(shown, Qt.DisplayRole)
        item.setData(name, Qt.UserRole)
        self._tools.append(tool)
        item.setData(len(self._tools) - 1, TOOL_ROLE)
        support = task_support(t)
        tasks = ["task"] if support == "required" else ["task optional"] if support == "optional" else []
        item.setData(app_badges(t) + badges(t) + tasks, BADGES_ROLE)
        problems = [visible(f, 200) for f in flags(tool, duplicates)]
        found = [visible(f, 300) for f in self._findings.get(name, [])]
        item.setData(problems + ([f"{len(found)} finding{'s' if len(found) != 1 else ''}"] if found else []),
                     FLAGS_ROLE)
        item.setData(change, CHANGE_ROLE)
        item.setData(visible(name, 200), NAME_ROLE)
        item.setData(visible(first, 300), DESCRIPTION_ROLE)
        title = t.get("title") if isinstance(t.get("title"), str) else ""
        ann = t.get("annotations") if isinstance(t.get("annotations"), dict) else {}
        ann_title = ann.get("title") if isinstance(ann.get("title"), str) else ""
        item.setData(" ".join([name, title, ann_title, desc]).casefold(), SEARCH_ROLE)
        pm, icon_note = item_icon(t)
        item.setData(pm if pm is not None else theme.tool_glyph(ICON_SIZE), Qt.DecorationRole)
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
        if icon_note:
            tip.append(icon_note)
        tip += ["", hints_tooltip(t)]
        item.setData(plain_tooltip("\n".join(tip)), Qt.ToolTipRole)
        return item


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
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.search, 1)
        top.addWidget(self.count)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        lay.addLayout(top)
        lay.addWidget(self.changes)
        lay.addWidget(self.message)
        lay.addWidget(self.view, 1)

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
        if keep:
            self.select(keep)

    def _filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.casefold().strip())

    def selected_name(self) -> str | None:
        idx = self.view.currentIndex()
        return idx.data(Qt.UserRole) if idx.isValid() else None

    def select(self, name: str) -> bool:
        for row in range(self.proxy.rowCount()):
            idx = self.proxy.index(row, 0)
            if idx.data(Qt.UserRole) == name:
                self.view.setCurrentIndex(idx)
                return True
        return False

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.toolSelected.emit(self.model.tool(current))
