"""One recorded server, read-only (`sessionTabs`): Tools, Resources, Prompts, Calls, Log and Server info,
as the session's frames show them (`inspector.recording.surface`).

The lists are drawn as the live ones are (the delegate of `base.items`), each tool's form is built from
its inputSchema and shown disabled, filled with the arguments of its last recorded call: a session
shows what was offered and asked, it calls nothing.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Iterator, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QPixmap, QShowEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...recording.surface import Exchange, LogEntry, ServerSurface
from ...secrets import mask_text
from ...session.tools import badges, display_name, flags, hints_tooltip
from ..base import design, theme
from ..base.items import (
    BADGES_ROLE,
    DESCRIPTION_ROLE,
    FLAGS_ROLE,
    NAME_ROLE,
    TOOL_ROLE,
    ItemDelegate,
    item_icon,
)
from ..base.json_view import JsonView
from ..base.layout import heading_label, label_grid, scrolling_column, text_label, title_label
from ..base.text import plain_tooltip, visible, visible_block
from .calls_view import CallsPage, clock, row_table
from .json_diff import plain_view

log = logging.getLogger("spyglass.ui.recording")

LEVEL_COLOURS = {"debug": "muted", "info": "idle", "notice": "idempotent", "warning": "warning", "error": "error",
                 "critical": "error", "alert": "error", "emergency": "error"}


def listed_note(surface: ServerSurface, key: str, what: str) -> str | None:
    """What an empty list means: never asked for in this session, or asked for and empty."""
    if key not in surface.listings:
        return f"The session never listed {what}: the server may not offer them, or nobody asked."
    if not surface.listings[key]:
        return f"The server listed no {what}."
    return None


class ItemList(QListView):
    """Tools, resources, templates or prompts drawn like the window's lists (Qt.UserRole: the identity)."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.items: list[dict[str, Any]] = []
        self.model_ = QStandardItemModel(self)
        self.setModel(self.model_)
        self.setItemDelegate(ItemDelegate(self))
        self.setUniformItemSizes(True)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)

    def set_entries(self, entries: list[dict[str, Any]], key: str, *, tools: bool = False) -> None:
        self.model_.clear()
        self.items = list(entries)
        names = [e.get(key) for e in entries]
        duplicates = {n for n, c in collections.Counter(names).items() if c > 1 and isinstance(n, str)}
        any_icon = any(isinstance(e.get("icons"), list) and e["icons"] for e in entries)
        for i, entry in enumerate(entries):
            ident = entry.get(key) if isinstance(entry.get(key), str) else ""
            item = QStandardItem()
            item.setEditable(False)
            desc = entry.get("description") if isinstance(entry.get("description"), str) else ""
            first = next((line for line in desc.splitlines() if line.strip()), "")
            title = display_name(entry) if tools else (entry.get("title") or entry.get("name") or ident)
            item.setData(visible(title, 200), Qt.DisplayRole)
            item.setData(ident, Qt.UserRole)
            item.setData(i, TOOL_ROLE)
            item.setData(visible(ident, 200), NAME_ROLE)
            item.setData(visible(first, 300), DESCRIPTION_ROLE)
            if tools:
                item.setData(badges(entry), BADGES_ROLE)
                item.setData([visible(f, 200) for f in flags(entry, duplicates)], FLAGS_ROLE)
                item.setData(plain_tooltip(f"{visible(title, 200)}\n\n{hints_tooltip(entry)}"), Qt.ToolTipRole)
            pm, _note = item_icon(entry)
            if pm is not None or any_icon:  # icons only where a server gave one; names line up when one did
                item.setData(pm if pm is not None else QPixmap(), Qt.DecorationRole)
            self.model_.appendRow(item)

    def entry(self, index: QModelIndex) -> dict[str, Any] | None:
        i = index.data(TOOL_ROLE) if index.isValid() else None
        return self.items[i] if isinstance(i, int) and 0 <= i < len(self.items) else None

    def select(self, ident: str) -> bool:
        for row in range(self.model_.rowCount()):
            index = self.model_.index(row, 0)
            if index.data(Qt.UserRole) == ident:
                self.setCurrentIndex(index)
                return True
        return False


def list_column(parent: QWidget, heading: str, view: ItemList, note_name: str) -> tuple[QWidget, Any]:
    box = QWidget(parent)
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(design.space("xs"))
    count = heading_label(heading, box)
    count.setObjectName(f"{view.objectName()}Count")
    note = text_label("", box, name=note_name, role="muted")
    note.hide()
    lay.addWidget(count)
    lay.addWidget(note)
    lay.addWidget(view, 1)
    return box, (count, note)


class ToolsPage(QSplitter):
    """The tool list and, for the selected tool, its description and its form, disabled."""

    def __init__(self, surface: ServerSurface, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Horizontal, parent)
        self.setObjectName("sessionToolsPage")
        self.surface = surface
        self.list = ItemList("sessionTools", self)
        box, (count, note) = list_column(self, f"{len(surface.tools)} tool{'s' if len(surface.tools) != 1 else ''}",
                                         self.list, "sessionToolsNote")
        empty = listed_note(surface, "tools", "tools")
        note.setText(empty or "")
        note.setVisible(bool(empty))
        self.detail = QWidget(self)
        self.title = title_label(self.detail, "sessionToolTitle")
        self.name = text_label("", self.detail, name="sessionToolName", role="muted")
        self.description = text_label("", self.detail, name="sessionToolDescription")
        self.filled = text_label("", self.detail, name="sessionToolArguments", role="muted")
        self.form_host = QWidget(self.detail)
        self.form_lay = QVBoxLayout(self.form_host)
        self.form_lay.setContentsMargins(0, 0, 0, 0)
        self.form: Any = None
        self.definition = JsonView(self.detail)
        self.definition.setObjectName("sessionToolJson")
        self.definition.setMinimumHeight(160)
        self.definition_heading = heading_label("Definition as listed", self.detail)
        self.placeholder = text_label("Select a tool to see its description and its form, as listed."
                                      if surface.tools else "", self.detail, name="sessionToolPlaceholder",
                                      role="muted")
        self.scroll_area = scrolling_column(self.detail, "sessionToolScroll", self.placeholder, self.title, self.name,
                                       self.description, self.filled, self.form_host,
                                       self.definition_heading, self.definition)
        lay = QVBoxLayout(self.detail)
        lay.setContentsMargins(design.margins("m", "none", "none", "none"))
        lay.addWidget(self.scroll_area)
        self.addWidget(box)
        self.addWidget(self.detail)
        self.setStretchFactor(0, 2)
        self.setStretchFactor(1, 3)
        self.setChildrenCollapsible(False)
        self.list.set_entries(surface.tools, "name", tools=True)
        self.list.selectionModel().currentChanged.connect(lambda cur, _prev: self.show_tool(self.list.entry(cur)))
        self.show_tool(None)

    def last_arguments(self, name: str) -> tuple[Any, int] | None:
        for x in reversed(self.surface.calls()):
            if x.method == "tools/call" and x.target == name and isinstance(x.params, dict):
                return x.params.get("arguments"), x.n
        return None

    def show_tool(self, tool: dict[str, Any] | None) -> None:
        from ...forms import SchemaForm

        if self.form is not None:
            self.form.hide()
            self.form.deleteLater()
            self.form = None
        shown = tool is not None
        self.placeholder.setVisible(not shown and bool(self.surface.tools))
        for w in (self.title, self.name, self.description, self.form_host, self.definition_heading,
                  self.definition):
            w.setVisible(shown)
        self.filled.setVisible(False)
        if tool is None:
            return
        name = str(tool.get("name")) if isinstance(tool.get("name"), str) else ""
        title = display_name(tool)
        self.title.setText(visible(title, 200))
        self.name.setText(visible(name, 200))
        self.name.setVisible(name != title)
        desc = tool.get("description")
        self.description.setText(visible_block(desc, 4000) if isinstance(desc, str) and desc else "(no description)")
        try:
            self.form = SchemaForm(tool.get("inputSchema", {"type": "object"}), self.form_host)
        except Exception as exc:  # a schema the form cannot take: said, the definition is still shown
            log.exception("building the form of a recorded tool")
            self.form = text_label(f"⚠ No form for this inputSchema: {type(exc).__name__}: {exc}", self.form_host,
                                   role="warning")
        else:
            last = self.last_arguments(name)
            if last is not None:
                try:
                    self.form.set_value(last[0])
                    self.filled.setText(f"Filled with the arguments of its last recorded call (record {last[1]}). "
                                        "A session is read-only: nothing is called.")
                except Exception:
                    log.debug("recorded arguments do not fit the form of %s", name, exc_info=True)
                    self.filled.setText("A session is read-only: nothing is called.")
            else:
                self.filled.setText("Not called in this session. A session is read-only: nothing is called.")
            self.filled.setVisible(True)
            self.form.setEnabled(False)
            self.form.setMaximumHeight(self.form.natural_height())  # the definition follows, not a gap
        self.form_lay.addWidget(self.form)
        self.definition.set_json(tool)


class EntriesPage(QSplitter):
    """Lists of entries (resources and templates, or prompts) and the selected entry as listed."""

    def __init__(self, name: str, lists: list[tuple[str, str, str, list[dict[str, Any]], str | None]],
                 parent: QWidget | None = None) -> None:
        super().__init__(Qt.Horizontal, parent)
        self.setObjectName(name)
        column = QSplitter(Qt.Vertical, self)
        column.setChildrenCollapsible(False)
        self.lists: dict[str, ItemList] = {}
        for view_name, heading, key, entries, empty in lists:
            view = ItemList(view_name, column)
            box, (_count, note) = list_column(column, heading, view, f"{view_name}Note")
            note.setText(empty or "")
            note.setVisible(bool(empty))
            view.set_entries(entries, key)
            view.selectionModel().currentChanged.connect(lambda cur, _prev, v=view: self._show(v, v.entry(cur)))
            column.addWidget(box)
            self.lists[view_name] = view
        self.detail = JsonView(self)
        self.detail.setObjectName(f"{name}Json")
        self.detail.setPlaceholderText("Select an entry to see it as the server listed it.")
        self.addWidget(column)
        self.addWidget(self.detail)
        self.setStretchFactor(0, 2)
        self.setStretchFactor(1, 3)
        self.setChildrenCollapsible(False)

    def _show(self, view: ItemList, entry: dict[str, Any] | None) -> None:
        if entry is None:
            return
        for other in self.lists.values():
            if other is not view:
                other.clearSelection()
        self.detail.set_json(entry)


class LogPage(QSplitter):
    """The server's log messages (notifications/message), then what it wrote on stderr."""

    def __init__(self, surface: ServerSurface, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Vertical, parent)
        self.setObjectName("sessionLogPage")
        top = QWidget(self)
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        n = len(surface.log)
        tl.addWidget(heading_label(f"{n} log message{'s' if n != 1 else ''}", top))
        self.log = row_table("sessionLog", top)
        self.log_model = RecordedLogModel(surface.log, self.log)
        self.log.setModel(self.log_model)
        header = self.log.horizontalHeader()
        metrics = self.log.fontMetrics()  # widths from the first rows (ResizeToContents measures every row)
        for col in range(len(LOG_COLUMNS) - 1):
            texts = [LOG_COLUMNS[col], *(self.log_model.text(row, col) for row in range(min(len(surface.log), 200)))]
            header.resizeSection(col, min(max(metrics.horizontalAdvance(t) for t in texts) + 16, 260))
        empty = text_label("The server sent no log messages in this session.", top, name="sessionLogEmpty",
                           role="muted")
        empty.setVisible(not surface.log)
        tl.addWidget(empty)
        tl.addWidget(self.log, 1)
        bottom = QWidget(self)
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        n = len(surface.stderr)
        bl.addWidget(heading_label(f"{n} line{'s' if n != 1 else ''} on stderr", bottom))
        self.stderr = plain_view("sessionStderr", bottom)
        self.stderr_lines: list[str] | None = surface.stderr  # laid out when the page is first shown (20,000
        # lines took 100 ms, in the turn that showed the session's servers)
        self.stderr.setPlaceholderText("The server wrote nothing on stderr (or it is not a stdio server).")
        bl.addWidget(self.stderr, 1)
        self.addWidget(top)
        self.addWidget(bottom)
        self.setChildrenCollapsible(False)

    def showEvent(self, event: QShowEvent) -> None:
        if self.stderr_lines is not None:
            lines, self.stderr_lines = self.stderr_lines, None
            self.stderr.setPlainText(visible_block("\n".join(s.rstrip("\n") for s in lines), 2_000_000))
        super().showEvent(event)


LOG_COLUMNS = ("Time", "Level", "Logger", "Message")


class RecordedLogModel(QAbstractTableModel):
    """A recorded server's log messages as rows, described only when shown: a session of a million log
    lines opens at once (an item per line took 35 seconds, in one turn of the loop)."""

    def __init__(self, entries: Sequence[LogEntry], parent: Any = None) -> None:
        super().__init__(parent)
        self.entries = entries
        self.colours = {level: theme.colour(c) for level, c in LEVEL_COLOURS.items()}
        self.muted = theme.colour("muted")

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.entries)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(LOG_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.DisplayRole) -> Any:
        if orientation == Qt.Horizontal and role == Qt.DisplayRole and 0 <= section < len(LOG_COLUMNS):
            return LOG_COLUMNS[section]
        return None

    def message(self, row: int) -> str:
        data = self.entries[row].data
        return data if isinstance(data, str) else _compact(data)

    def text(self, row: int, col: int) -> str:
        entry = self.entries[row]
        if col == 0:
            return clock(entry.wall)
        if col == 1:
            return visible(entry.level, 40)
        if col == 2:
            return visible(entry.logger or "", 200)
        return visible(self.message(row), 2000)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if role == Qt.DisplayRole:
            return self.text(row, col)
        if role == Qt.ForegroundRole and col == 1:
            return self.colours.get(self.entries[row].level, self.muted)
        if role == Qt.ToolTipRole and col == 3:
            return plain_tooltip(visible_block(self.message(row), 4000))
        if role == Qt.UserRole:
            return self.entries[row].n
        return None


def _compact(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        return repr(value)


INFO_FIELDS = (("name", "Server"), ("id", "Server id"), ("revision", "Protocol revision"), ("era", "Era"),
               ("info", "serverInfo"), ("frames", "Frames"), ("started", "Started as"))


class InfoPage(QWidget):
    """Revision, serverInfo, capabilities, instructions and the definition the session kept."""

    def __init__(self, surface: ServerSurface, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sessionInfo")
        form_box = QWidget(self)
        form, self.fields = label_grid(form_box, INFO_FIELDS, "sessionInfo", wrap=True)
        form_box.setLayout(form)
        info = surface.server_info or {}
        definition = surface.definition or {}
        started = mask_text(definition.get("url") or " ".join(str(c) for c in definition.get("command") or [])) \
            or "(not kept)"  # masked when kept; a session from an older Spyglass may not be
        values = {"name": surface.name, "id": surface.server_id, "revision": surface.revision or "(unknown)",
                  "era": {"legacy": "legacy (initialize)", "modern": "2026-07-28 (server/discover)"}.get(
                      surface.era or "", "(unknown)"),
                  "info": " ".join(str(info.get(k)) for k in ("name", "version") if info.get(k)) or "(not said)",
                  "frames": f"{surface.frames:,}", "started": started}
        for key, value in values.items():
            self.fields[key].setText(visible(value, 2000))
        if surface.server_id == surface.name:
            form.setRowVisible(1, False)  # the id says nothing more than the name
        self.capabilities = JsonView(self)
        self.capabilities.setObjectName("sessionCapabilities")
        self.capabilities.set_json(surface.capabilities if surface.capabilities is not None else {})
        self.instructions = plain_view("sessionInstructions", self)
        self.instructions.setPlainText(visible_block(surface.instructions or "", 100_000))
        self.instructions.setPlaceholderText("(no instructions)")
        lines = min(max(len((surface.instructions or "").splitlines()), 1), 6)
        self.instructions.setFixedHeight(lines * self.instructions.fontMetrics().lineSpacing() + 16)
        self.definition = JsonView(self)
        self.definition.setObjectName("sessionDefinition")
        self.definition.set_json({"definition": surface.definition, "serverInfo": surface.server_info})
        problems = text_label("\n".join(f"⚠ {visible(p, 500)}" for p in surface.problems), self,
                              name="sessionServerProblems", role="warning")
        problems.setVisible(bool(surface.problems))
        lay = QVBoxLayout(self)
        lay.addWidget(problems)
        lay.addWidget(form_box)
        grid = QSplitter(Qt.Horizontal, self)
        for title, view in (("Capabilities", self.capabilities), ("Definition (secrets masked) and serverInfo",
                                                                    self.definition)):
            box = QWidget(grid)
            bl = QVBoxLayout(box)
            bl.setContentsMargins(0, 0, 0, 0)
            bl.addWidget(heading_label(title, box))
            bl.addWidget(view, 1)
            grid.addWidget(box)
        lay.addWidget(heading_label("Instructions", self))
        lay.addWidget(self.instructions)
        lay.addWidget(grid, 1)


class SurfaceView(QTabWidget):
    """Every tab of one recorded server (`sessionTabs`); `show_call(n)` jumps to a call by record number.
    `calls`: the server's calls, found already; `now=False`: the tabs are made by `building()`, a page a
    step, for a window that makes them between turns of its loop."""

    def __init__(self, surface: ServerSurface, parent: QWidget | None = None, *,
                 calls: list[Exchange] | None = None, now: bool = True) -> None:
        super().__init__(parent)
        self.setObjectName("sessionTabs")
        self.setDocumentMode(True)
        self.surface = surface
        self._calls = surface.calls() if calls is None else calls
        if now:
            for _ in self.building():
                pass

    def building(self) -> Iterator[None]:
        """Make the tabs, a page a step."""
        surface = self.surface
        self.tools = ToolsPage(surface, self)
        yield
        self.resources = EntriesPage("sessionResourcesPage", [
            ("sessionResources", f"Resources ({len(surface.resources)})", "uri", surface.resources,
             listed_note(surface, "resources", "resources")),
            ("sessionTemplates", f"Resource templates ({len(surface.templates)})", "uriTemplate", surface.templates,
             listed_note(surface, "resourceTemplates", "resource templates"))], self)
        self.prompts = EntriesPage("sessionPromptsPage", [
            ("sessionPrompts", f"Prompts ({len(surface.prompts)})", "name", surface.prompts,
             listed_note(surface, "prompts", "prompts"))], self)
        yield
        self.calls = CallsPage(surface, self, calls=self._calls)
        yield
        self.log = LogPage(surface, self)
        yield
        self.info = InfoPage(surface, self)
        calls = len(self._calls)
        for page, title in ((self.tools, f"Tools ({len(surface.tools)})"),
                            (self.resources, f"Resources ({len(surface.resources) + len(surface.templates)})"),
                            (self.prompts, f"Prompts ({len(surface.prompts)})"), (self.calls, f"Calls ({calls})"),
                            (self.log, f"Log ({len(surface.log) + len(surface.stderr)})"),
                            (self.info, "Server info")):
            self.addTab(page, title)

    def show_call(self, n: int) -> bool:
        self.setCurrentWidget(self.calls)
        return self.calls.select_record(n)
