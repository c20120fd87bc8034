"""The selected server's tools: `toolList` (one row per tool, Qt.UserRole = name), search, badges.

Display name by the spec's precedence (title > annotations.title > name), the
first line of the description, a data: URI icon (remote icons are never
fetched), and annotation badges with the spec's defaults applied. Tools with a
duplicate name or without a valid inputSchema are flagged, never hidden; after
`notifications/tools/list_changed` new tools are marked "new" and vanished ones
stay listed, struck through, until the next list.
"""

from __future__ import annotations

import base64
import binascii
import collections
import urllib.parse
from typing import Any, Iterable

from PySide6.QtCore import QModelIndex, QRect, QSize, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPixmap, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QLabel, QLineEdit, QListView, QStyle,
                               QStyledItemDelegate, QStyleOptionViewItem, QVBoxLayout, QWidget)

from . import theme
from ._text import plain_tooltip, visible
from ..protocol.tasks import task_support

TOOL_ROLE = Qt.UserRole + 1
BADGES_ROLE = Qt.UserRole + 2
FLAGS_ROLE = Qt.UserRole + 3
CHANGE_ROLE = Qt.UserRole + 4
SEARCH_ROLE = Qt.UserRole + 5
DESCRIPTION_ROLE = Qt.UserRole + 6
NAME_ROLE = Qt.UserRole + 7

HINTS_NOTE = "Annotations are hints from the server, not guarantees."
# (badge, annotation key, spec default)
HINTS = (("read-only", "readOnlyHint", False), ("destructive", "destructiveHint", True),
         ("idempotent", "idempotentHint", False), ("open-world", "openWorldHint", True))
ICON_DATA_LIMIT = 512 * 1024
ICON_SIZE = 20


# ---------------------------------------------------------------------- pure helpers
def display_name(tool: dict[str, Any]) -> str:
    title = tool.get("title")
    if isinstance(title, str) and title.strip():
        return title
    ann = tool.get("annotations")
    if isinstance(ann, dict) and isinstance(ann.get("title"), str) and ann["title"].strip():
        return ann["title"]
    name = tool.get("name")
    return name if isinstance(name, str) and name else "(no name)"


def hints(tool: dict[str, Any]) -> dict[str, tuple[bool, bool]]:
    """annotation key -> (value with the spec's default applied, whether the server said so)."""
    ann = tool.get("annotations")
    ann = ann if isinstance(ann, dict) else {}
    out = {}
    for _badge, key, default in HINTS:
        value = ann.get(key)
        out[key] = (value, True) if isinstance(value, bool) else (default, False)
    return out


def badges(tool: dict[str, Any]) -> list[str]:
    h = hints(tool)
    read_only = h["readOnlyHint"][0]
    out = []
    if read_only:
        out.append("read-only")
    elif h["destructiveHint"][0]:  # only meaningful when not read-only
        out.append("destructive")
    if h["idempotentHint"][0]:
        out.append("idempotent")
    if h["openWorldHint"][0]:
        out.append("open-world")
    return out


def hints_tooltip(tool: dict[str, Any]) -> str:
    lines = [HINTS_NOTE]
    for badge, key, _default in HINTS:
        value, said = hints(tool)[key]
        lines.append(f"{badge}: {'yes' if value else 'no'}" + ("" if said else " (spec default, not set by the server)"))
    if not hints(tool)["readOnlyHint"][0] and "destructive" not in badges(tool):
        lines.append("Not read-only: it may change things.")
    return "\n".join(lines)


def schema_problem(tool: dict[str, Any]) -> str | None:
    if "inputSchema" not in tool:
        return "no inputSchema"
    schema = tool["inputSchema"]
    if not isinstance(schema, dict):
        return "invalid inputSchema (not an object)"
    if schema.get("type") != "object":
        return 'invalid inputSchema (type is not "object")'
    return None


def flags(tool: Any, duplicates: set[str]) -> list[str]:
    if not isinstance(tool, dict):
        return ["not a tool object"]
    out = []
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        out.append("missing name")
    elif name in duplicates:
        out.append("duplicate name")
    if "x-spyglass-rejected" in tool:  # set aside by the client (e.g. broken x-mcp-header annotations)
        out.append("not callable: " + visible(tool["x-spyglass-rejected"], 200))
        return out
    problem = schema_problem(tool)
    if problem:
        out.append(problem)
    return out


def decode_data_uri(src: str) -> tuple[bytes, str] | None:
    """(bytes, mime type) of a data: URI, or None if it is not one (or is too big or broken)."""
    if not isinstance(src, str) or not src.startswith("data:") or "," not in src:
        return None
    head, payload = src[5:].split(",", 1)
    if len(payload) > ICON_DATA_LIMIT * 4 // 3 + 16:
        return None
    parts = head.split(";")
    mime = parts[0] or "text/plain"
    try:
        if "base64" in parts[1:]:
            data = base64.b64decode(payload, validate=False)
        else:
            data = urllib.parse.unquote_to_bytes(payload)
    except (binascii.Error, ValueError):
        return None
    return data, mime


_icon_cache: dict[str, QPixmap | None] = {}


def tool_icon(tool: dict[str, Any]) -> tuple[QPixmap | None, str | None]:
    """The tool's icon if it is a data: URI we can render; else (None, why not)."""
    icons = tool.get("icons")
    if not isinstance(icons, list) or not icons:
        return None, None
    want = "dark" if theme.is_dark() else "light"
    candidates = [i for i in icons if isinstance(i, dict) and isinstance(i.get("src"), str)]
    candidates.sort(key=lambda i: 0 if i.get("theme") == want else 1 if not i.get("theme") else 2)
    remote = None
    for icon in candidates:
        src = icon["src"]
        if not src.startswith("data:"):
            remote = remote or src
            continue
        if src in _icon_cache:
            pm = _icon_cache[src]
        else:
            decoded = decode_data_uri(src)
            pm = None
            if decoded is not None:
                data, mime = decoded
                fmt = {"image/svg+xml": "SVG", "image/png": "PNG", "image/jpeg": "JPG", "image/gif": "GIF",
                       "image/webp": "WEBP"}.get(mime)
                candidate = QPixmap()
                if candidate.loadFromData(data, fmt) if fmt else candidate.loadFromData(data):
                    pm = candidate.scaled(ICON_SIZE * 2, ICON_SIZE * 2, Qt.KeepAspectRatio, Qt.SmoothTransformation)
            if len(_icon_cache) > 500:
                _icon_cache.clear()
            _icon_cache[src] = pm
        if pm is not None:
            return pm, None
    if remote:
        return None, f"remote icon not loaded: {visible(remote, 120)}"
    return None, "icon could not be decoded"


# ---------------------------------------------------------------------- model
class ToolModel(QStandardItemModel):
    def set_tools(self, tools: Iterable[Any], appeared: set[str] = frozenset(),
                  vanished: Iterable[dict[str, Any]] = ()) -> None:
        tools = list(tools)
        names = [t.get("name") for t in tools if isinstance(t, dict)]
        duplicates = {n for n, c in collections.Counter(names).items() if c > 1 and isinstance(n, str)}
        self.clear()
        self._tools: list[Any] = []
        for tool in tools:
            self.appendRow(self._item(tool, duplicates, "new" if isinstance(tool, dict)
                                      and tool.get("name") in appeared else None))
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
        item.setData(badges(t) + (["task"] if support == "required" else ["task optional"] if support == "optional"
                                  else []), BADGES_ROLE)
        problems = flags(tool, duplicates)
        item.setData(problems, FLAGS_ROLE)
        item.setData(change, CHANGE_ROLE)
        item.setData(visible(name, 200), NAME_ROLE)
        item.setData(visible(first, 300), DESCRIPTION_ROLE)
        title = t.get("title") if isinstance(t.get("title"), str) else ""
        ann = t.get("annotations") if isinstance(t.get("annotations"), dict) else {}
        ann_title = ann.get("title") if isinstance(ann.get("title"), str) else ""
        item.setData(" ".join([name, title, ann_title, desc]).casefold(), SEARCH_ROLE)
        pm, icon_note = tool_icon(t)
        item.setData(pm if pm is not None else theme.tool_glyph(ICON_SIZE), Qt.DecorationRole)
        tip = [shown] + ([f"name: {visible(name, 200)}"] if visible(name, 200) != shown else [])
        if problems:
            tip.append("⚠ " + "; ".join(problems))
        if change == "new":
            tip.append("New: appeared after the server said its tool list changed.")
        elif change == "removed":
            tip.append("Removed: no longer offered by the server.")
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
class ToolDelegate(QStyledItemDelegate):
    PAD = 6

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        fm = QFontMetrics(option.font)
        return QSize(200, fm.height() * 2 + self.PAD * 2 + 4)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        opt.icon = type(opt.icon)()
        style = opt.widget.style() if opt.widget else None
        painter.save()
        if style:
            style.drawControl(QStyle.CE_ItemViewItem, opt, painter, opt.widget)
        selected = bool(option.state & QStyle.State_Selected)
        pal = option.palette
        text_colour = pal.highlightedText().color() if selected else pal.text().color()
        muted = text_colour if selected else theme.colour("muted")
        change = index.data(CHANGE_ROLE)
        r = option.rect.adjusted(self.PAD, self.PAD, -self.PAD, -self.PAD)
        fm = QFontMetrics(option.font)
        line_h = fm.height()
        # icon
        deco = index.data(Qt.DecorationRole)
        if isinstance(deco, QPixmap) and not deco.isNull():
            target = QRect(r.left(), r.top() + (line_h * 2 + 4 - ICON_SIZE) // 2, ICON_SIZE, ICON_SIZE)
            if change == "removed":
                painter.setOpacity(0.4)
            painter.drawPixmap(target, deco)
            painter.setOpacity(1.0)
        x = r.left() + ICON_SIZE + 8
        # badges, right-aligned on the first line
        small = QFont(option.font)
        small.setPointSizeF(max(6.5, option.font.pointSizeF() * 0.82))
        sfm = QFontMetrics(small)
        chips = [(b, b) for b in index.data(BADGES_ROLE) or []]
        chips = [(f, "warning") for f in index.data(FLAGS_ROLE) or []] + chips
        if change:
            chips.insert(0, (change, change))
        right = r.right()
        painter.setFont(small)
        min_title = 90
        for label, key in reversed(chips):
            w = sfm.horizontalAdvance(label) + 10
            if right - w < x + min_title:
                break
            chip = QRect(right - w, r.top() + (line_h - sfm.height()) // 2 - 1, w, sfm.height() + 2)
            c = theme.colour(key)
            painter.setRenderHint(QPainter.Antialiasing)
            fill = type(c)(c)
            fill.setAlpha(40 if not selected else 90)
            painter.setPen(c if not selected else text_colour)
            painter.setBrush(fill)
            painter.drawRoundedRect(chip.adjusted(0, 0, -1, -1), 4, 4)
            painter.drawText(chip, Qt.AlignCenter, label)
            right = chip.left() - 4
        # title (bold), then the raw name if it differs
        bold = QFont(option.font)
        bold.setBold(True)
        bold.setStrikeOut(change == "removed")
        painter.setFont(bold)
        bfm = QFontMetrics(bold)
        title = index.data(Qt.DisplayRole) or ""
        avail = max(10, right - x - 4)
        shown = bfm.elidedText(title, Qt.ElideRight, avail)
        painter.setPen(muted if change == "removed" else text_colour)
        painter.drawText(QRect(x, r.top(), avail, line_h), Qt.AlignLeft | Qt.AlignVCenter, shown)
        name = index.data(NAME_ROLE) or ""
        used = bfm.horizontalAdvance(shown)
        if name and name != title and used + 40 < avail:
            painter.setFont(small)
            painter.setPen(muted)
            name_rect = QRect(x + used + 8, r.top(), avail - used - 8, line_h)
            painter.drawText(name_rect, Qt.AlignLeft | Qt.AlignVCenter,
                             sfm.elidedText(name, Qt.ElideRight, name_rect.width()))
        # description
        painter.setFont(option.font)
        painter.setPen(muted)
        desc = index.data(DESCRIPTION_ROLE) or ""
        if not desc and change != "removed":
            desc = "(no description)"
        line2 = QRect(x, r.top() + line_h + 4, r.right() - x, line_h)
        painter.drawText(line2, Qt.AlignLeft | Qt.AlignVCenter, fm.elidedText(desc, Qt.ElideRight, line2.width()))
        painter.restore()


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
        self.message = QLabel(self)
        self.message.setObjectName("toolListMessage")
        self.message.setTextFormat(Qt.PlainText)
        self.message.setWordWrap(True)
        self.message.hide()
        self.view = QListView(self)
        self.view.setObjectName("toolList")
        self.view.setModel(self.proxy)
        self.view.setItemDelegate(ToolDelegate(self.view))
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
        lay.addWidget(self.message)
        lay.addWidget(self.view, 1)

    def set_tools(self, tools: list[Any], *, appeared: set[str] = frozenset(),
                  vanished: list[dict[str, Any]] = (), message: str | None = None, error: bool = False) -> None:
        keep = self.selected_name()
        self.model.set_tools(tools, appeared, vanished)
        total = len(tools)
        extra = []
        if appeared:
            extra.append(f"{len(appeared)} new")
        if vanished:
            extra.append(f"{len(vanished)} removed")
        self.count.setText(f"{total} tool{'s' if total != 1 else ''}" + (f" ({', '.join(extra)})" if extra else ""))
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
