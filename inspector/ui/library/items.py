"""List models for resources, resource templates and prompts, drawn like the tool list.

Rows carry the same roles as `toolList` rows (so `ItemDelegate` paints them):
`Qt.UserRole` is the identity (uri, uriTemplate or prompt name), `ITEM_ROLE`
the index of the item dict, badges from annotations or arguments, flags for
what is wrong, and a change mark (`new`, `removed`, `updated`).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QListView, QWidget

from ...templates import TemplateError, check
from ..base.items import BADGES_ROLE, CHANGE_ROLE, DESCRIPTION_ROLE, FLAGS_ROLE, NAME_ROLE, ItemDelegate, item_icon
from ..base.text import plain_tooltip, visible

ITEM_ROLE = Qt.UserRole + 20


def human_size(n: Any) -> str:
    if not isinstance(n, (int, float)) or isinstance(n, bool) or n < 0:
        return ""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return ""


def title_of(item: dict[str, Any], *keys: str) -> str:
    for key in ("title", "name", *keys):
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return "(no name)"


def annotation_badges(item: dict[str, Any]) -> list[str]:
    ann = item.get("annotations") if isinstance(item.get("annotations"), dict) else {}
    out = []
    audience = ann.get("audience")
    if isinstance(audience, list) and audience:
        out.append("for " + "+".join(visible(a, 20) for a in audience if isinstance(a, str)))
    priority = ann.get("priority")
    if isinstance(priority, (int, float)) and not isinstance(priority, bool):
        out.append(f"priority {priority:g}")
    return out


def annotation_lines(item: dict[str, Any]) -> list[str]:
    ann = item.get("annotations") if isinstance(item.get("annotations"), dict) else {}
    lines = []
    if isinstance(ann.get("audience"), list):
        lines.append("audience: " + ", ".join(visible(a, 40) for a in ann["audience"]))
    if ann.get("priority") is not None:
        lines.append(f"priority: {visible(ann.get('priority'), 40)}")
    if ann.get("lastModified") is not None:
        lines.append(f"last modified: {visible(ann.get('lastModified'), 60)}")
    return lines


def resource_line(item: dict[str, Any]) -> str:
    parts = [visible(item.get("uri"), 300)]
    if isinstance(item.get("mimeType"), str):
        parts.append(visible(item["mimeType"], 80))
    size = human_size(item.get("size"))
    if size:
        parts.append(size)
    return " · ".join(parts)


def template_problem(item: dict[str, Any]) -> str | None:
    try:
        check(item.get("uriTemplate"))  # type: ignore[arg-type]
    except TemplateError as exc:
        return f"invalid template: {exc}"
    return None


def prompt_args_line(item: dict[str, Any]) -> str:
    args = item.get("arguments") if isinstance(item.get("arguments"), list) else []
    names = []
    for a in args:
        if isinstance(a, dict) and isinstance(a.get("name"), str):
            names.append(visible(a["name"], 40) + ("*" if a.get("required") is True else ""))
    desc = item.get("description") if isinstance(item.get("description"), str) else ""
    first = next((line for line in desc.splitlines() if line.strip()), "")
    head = f"({', '.join(names)})" if names else "(no arguments)"
    return head + (" · " + visible(first, 300) if first else "")


def prompt_problems(item: dict[str, Any]) -> list[str]:
    out = []
    args = item.get("arguments")
    if args is not None and not isinstance(args, list):
        return ["arguments is not a list"]
    for a in args or []:
        if not isinstance(a, dict) or not isinstance(a.get("name"), str):
            out.append("an argument has no name")
        elif a.get("required") is True and not (isinstance(a.get("description"), str) and a["description"].strip()):
            out.append(f"required argument {visible(a['name'], 40)!r} is not described")
    return out


_DISPLAY, _USER, _TOOLTIP = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.UserRole, Qt.ItemDataRole.ToolTipRole
_DECORATION = Qt.ItemDataRole.DecorationRole
_ROW_ROLES = (_DISPLAY, ITEM_ROLE, NAME_ROLE, DESCRIPTION_ROLE, BADGES_ROLE, FLAGS_ROLE, CHANGE_ROLE, _DECORATION,
              _TOOLTIP)


class CatalogModel(QAbstractListModel):
    """Rows for one kind of item; `describe(item) -> (title, name, line2, badges, flags, tooltip)`. A list is
    taken in one reset and a row described the first time a view asks for it (the rows on screen), then kept:
    10,000 resources are listed at once, not built row by row."""

    def __init__(self, ident: str, describe: Callable[[dict[str, Any]], tuple], parent: Any = None) -> None:
        super().__init__(parent)
        self.ident = ident
        self.describe = describe
        self.items: list[dict[str, Any]] = []
        self._rows: list[tuple[dict[str, Any], str | None, list[str], bool]] = []  # item, change, flags, subscribed
        self._cache: dict[int, dict[int, Any]] = {}

    def set_items(self, items: Iterable[Any], appeared: set[str] = frozenset(), vanished: Iterable[dict] = (),
                  updated: set[str] = frozenset(), subscribed: set[str] = frozenset(),
                  changed: dict[str, str] | None = None) -> None:
        items = [i for i in items if isinstance(i, dict)]
        keys = [i.get(self.ident) for i in items]
        duplicates = {k for k, c in collections.Counter(keys).items() if c > 1 and isinstance(k, str)}
        changed = changed or {}
        self.beginResetModel()
        self._rows = []
        for item, key in zip(items, keys, strict=True):
            change = ("new" if key in appeared else "updated" if key in updated
                      else f"{changed[key]} changed" if key in changed else None)
            self._rows.append((item, change, ["duplicate " + self.ident] if key in duplicates else [],
                               key in subscribed))
        self._rows += [(item, "removed", [], False) for item in vanished if isinstance(item, dict)]
        self.items = [row[0] for row in self._rows]
        self._cache = {}
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = _DISPLAY) -> Any:
        row = index.row()
        if not index.isValid() or not 0 <= row < len(self._rows):
            return None
        if role == _USER:
            key = self._rows[row][0].get(self.ident)
            return key if isinstance(key, str) else ""
        if role not in _ROW_ROLES:
            return None
        cached = self._cache.get(row)
        if cached is None:
            cached = self._cache[row] = self._row(row)
        return cached.get(role)

    def row_of(self, key: str) -> int | None:
        """The first row whose identifier is `key`."""
        return next((r for r, item in enumerate(self.items) if item.get(self.ident) == key), None)

    def item_at(self, index: QModelIndex) -> dict[str, Any] | None:
        i = index.data(ITEM_ROLE) if index.isValid() else None
        return self.items[i] if isinstance(i, int) and 0 <= i < len(self.items) else None

    def _row(self, row: int) -> dict[int, Any]:
        item, change, extra_flags, subscribed = self._rows[row]
        title, name, line2, chips, problems, tip = self.describe(item)
        problems = extra_flags + problems
        out: dict[int, Any] = {_DISPLAY: visible(title, 200), ITEM_ROLE: row,
                               NAME_ROLE: visible(name, 200) if name and name != title else "",
                               DESCRIPTION_ROLE: line2, BADGES_ROLE: (["subscribed"] if subscribed else []) + chips,
                               FLAGS_ROLE: problems, CHANGE_ROLE: change}
        pm, icon_note = item_icon(item)
        if pm is not None:
            out[_DECORATION] = pm
        lines = [tip]
        if problems:
            lines.append("⚠ " + "; ".join(problems))
        if change == "new":
            lines.append("New: appeared after the server said the list changed.")
        elif change == "removed":
            lines.append("Removed: no longer offered by the server.")
        elif change == "updated":
            lines.append("Updated: the server said this resource changed (notifications/resources/updated).")
        elif change:
            lines.append(f"{change.capitalize()} since the server was last listed.")
        if icon_note:
            lines.append(icon_note)
        out[_TOOLTIP] = plain_tooltip("\n".join(x for x in lines if x))
        return out


def describe_resource(item: dict[str, Any]) -> tuple:
    desc = item.get("description") if isinstance(item.get("description"), str) else ""
    tip = "\n".join([visible(title_of(item, "uri"), 200), resource_line(item), *annotation_lines(item),
                     visible(desc, 600)])
    uri = item.get("uri")
    problems = [] if isinstance(uri, str) and uri else ["no uri"]
    return title_of(item, "uri"), item.get("name"), resource_line(item), annotation_badges(item), problems, tip


def describe_template(item: dict[str, Any]) -> tuple:
    desc = item.get("description") if isinstance(item.get("description"), str) else ""
    line = visible(item.get("uriTemplate"), 300) + (f" · {visible(item['mimeType'], 80)}"
                                                     if isinstance(item.get("mimeType"), str) else "")
    problem = template_problem(item)
    tip = "\n".join([visible(title_of(item, "uriTemplate"), 200), line, *annotation_lines(item), visible(desc, 600)])
    return title_of(item, "uriTemplate"), item.get("name"), line, annotation_badges(item), \
        [problem] if problem else [], tip


def describe_prompt(item: dict[str, Any]) -> tuple:
    desc = item.get("description") if isinstance(item.get("description"), str) else ""
    return title_of(item), item.get("name"), prompt_args_line(item), [], prompt_problems(item), \
        "\n".join([visible(title_of(item), 200), visible(desc, 800)])


def catalog_view(name: str, model: CatalogModel, parent: QWidget) -> QListView:
    view = QListView(parent)
    view.setObjectName(name)
    view.setModel(model)
    view.setItemDelegate(ItemDelegate(view))
    view.setUniformItemSizes(True)
    view.setSelectionMode(QAbstractItemView.SingleSelection)
    view.setEditTriggers(QAbstractItemView.NoEditTriggers)
    view.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
    return view


_SEARCHED = ("name", "title", "uri", "uriTemplate", "description", "mimeType")


class ListFilter:
    """What a list's search box shows: the rows whose name, title, URI, template, description or MIME type
    hold every typed word (case-folded), the others hidden in their view (no proxy: the panes read rows by
    their model's index). Applied again when the list is listed anew. `shown()` counts what is left."""

    def __init__(self, *pairs: tuple[QListView, CatalogModel]) -> None:
        self.pairs = pairs
        self.words: list[str] = []
        for view, model in pairs:
            model.modelReset.connect(lambda v=view, m=model: self._apply(v, m))

    def set_text(self, text: str) -> None:
        self.words = text.casefold().split()
        for view, model in self.pairs:
            self._apply(view, model)

    def _apply(self, view: QListView, model: CatalogModel) -> None:
        for row, item in enumerate(model.items):
            if self.words:
                hay = " ".join(str(item.get(k) or "") for k in _SEARCHED).casefold()
                view.setRowHidden(row, not all(w in hay for w in self.words))
            else:
                view.setRowHidden(row, False)

    def shown(self) -> int:
        return sum(1 for view, model in self.pairs for r in range(model.rowCount()) if not view.isRowHidden(r))
