"""The Resources tab: `resourceList`, `templateList`, a template form, Read, subscriptions.

Selecting a resource shows what the server says about it; `readButton` reads it
and the contents are rendered by `results.render_resource_contents`. A template
gets a form of its RFC 6570 variables with `completion/complete` suggestions
(earlier variables sent as context), and the expanded URI is what Read reads.
Subscribe uses `resources/subscribe` (legacy) or a `subscriptions/listen`
filter (modern, acknowledged filter and refusals shown). An update notice marks
the row and, with "Re-read on update", reads the shown resource again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPushButton, QSplitter, QVBoxLayout, QWidget

from ... import errors as E
from ...session import Status
from ...templates import TemplateError, check, expand
from ..base import design, theme
from ..base.layout import ListHeader, heading_label, plain_label, scrolled_page, scrolling_column, title_label
from ..base.tasks import spawn
from ..base.text import hidden_tooltip, visible, visible_block
from ..render.results import render_resource_contents
from ..render.text import fill_one_text
from ..servers.connection import Connection
from .arg_form import ArgumentForm, completer_for
from .items import (
    CatalogModel,
    ListFilter,
    annotation_lines,
    catalog_view,
    describe_resource,
    describe_template,
    human_size,
    title_of,
)

log = logging.getLogger("spyglass.ui.resources")

def _fallback_contents(contents: Any) -> QWidget:
    """Contents the renderers failed on, shown raw."""
    from PySide6.QtWidgets import QPlainTextEdit

    from ..base.text import pretty_json

    w = QPlainTextEdit()
    w.setObjectName("resourceContents")
    w.setReadOnly(True)
    w.setPlainText(pretty_json(contents))
    return w




_FILTER_WORDS = {"toolsListChanged": "tool list changes", "promptsListChanged": "prompt list changes",
                 "resourcesListChanged": "resource list changes"}


def granted_text(granted: dict[str, Any]) -> str:
    """The acknowledged subscriptions/listen filter in words (unknown keys as JSON)."""
    parts = []
    for key, value in granted.items():
        if key in _FILTER_WORDS and value is True:
            parts.append(_FILTER_WORDS[key])
        elif key == "resourceSubscriptions" and isinstance(value, list):
            parts.append("updates of " + (", ".join(visible(u, 120) for u in value) if value else "no resource"))
        else:
            parts.append(f"{visible(key, 60)}={visible(json.dumps(value, ensure_ascii=False), 120)}")
    return "; ".join(parts) if parts else "nothing"


class ResourcesPane(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resourcesPane")
        self.conn: Connection | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.current: dict[str, Any] | None = None
        self.current_kind: str | None = None  # "resource" or "template"
        self.shown_uri: str | None = None  # the URI whose contents are shown
        self.last_result: dict[str, Any] | None = None
        # ---- left: lists
        left = QWidget(self)
        head = ListHeader(left, refresh=("refreshResourcesButton", "List resources and templates again, bypassing "
                                         "cached results (ttlMs)", self.refresh),
                          count="resourceCount", cache="resourcesCache", message="resourceListMessage",
                          search=("resourceSearch", "Filter resources by name, URI or description",
                                  lambda text: self.list_filter.set_text(text)))
        self.search = head.search
        self.refresh_button, self.count, self.cache, self.message = head.refresh_button, head.count, head.cache, \
            head.message
        self.res_model = CatalogModel("uri", describe_resource, self)
        self.tpl_model = CatalogModel("uriTemplate", describe_template, self)
        self.resource_view = catalog_view("resourceList", self.res_model, left)
        self.template_view = catalog_view("templateList", self.tpl_model, left)
        self.list_filter = ListFilter((self.resource_view, self.res_model), (self.template_view, self.tpl_model))
        self.resource_view.selectionModel().currentChanged.connect(
            lambda cur, _p: self._selected(self.res_model.item_at(cur), "resource") if cur.isValid() else None)
        self.template_view.selectionModel().currentChanged.connect(
            lambda cur, _p: self._selected(self.tpl_model.item_at(cur), "template") if cur.isValid() else None)
        lists = QSplitter(Qt.Vertical, left)
        for title, view in (("Resources", self.resource_view), ("Templates", self.template_view)):
            box = QWidget(lists)
            b = QVBoxLayout(box)
            b.setContentsMargins(design.margins("none", "xs", "none", "none"))
            b.addWidget(heading_label(title, box))
            b.addWidget(view, 1)
            lists.addWidget(box)
        lists.setSizes([400, 180])
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        head.add_to(ll)
        ll.addWidget(lists, 1)
        # ---- right: detail
        right = QWidget(self)
        self.title = title_label(right, "resourceTitle")
        self.uri = plain_label(right, "resourceUriLabel", selectable=True)
        self.meta = plain_label(right, "resourceMeta", selectable=True)
        self.description = plain_label(right, "resourceDescription", selectable=True)
        self.form = ArgumentForm(right, name="templateForm")
        self.expanded = plain_label(right, "expandedUri", selectable=True)
        self.read_button = theme.mark_primary(QPushButton("Read", right))
        self.read_button.setObjectName("readButton")
        self.read_button.setToolTip("resources/read")
        self.read_button.clicked.connect(self.read)
        self.subscribe_button = QPushButton("Subscribe", right)
        self.subscribe_button.setObjectName("subscribeButton")
        self.subscribe_button.setCheckable(True)
        self.subscribe_button.clicked.connect(self._toggle_subscription)
        self.auto = QCheckBox("Re-read on update", right)
        self.auto.setObjectName("autoReread")
        self.auto.setToolTip("Read the shown resource again when the server says it was updated")
        self.auto.toggled.connect(self._auto_toggled)
        buttons = QHBoxLayout()
        buttons.addWidget(self.read_button)
        buttons.addWidget(self.subscribe_button)
        buttons.addWidget(self.auto)
        buttons.addStretch(1)
        self.subscriptions = plain_label(right, "subscriptionStatus", selectable=True)
        self.status = plain_label(right, "resourceStatus", selectable=True)
        self.status.hide()
        self.result_head = plain_label(right, "resourceResultHead", selectable=True)
        self.contents_host = QWidget(right)
        self.contents_host.setObjectName("resourceResult")
        self._contents_lay = QVBoxLayout(self.contents_host)
        self._contents_lay.setContentsMargins(0, 0, 0, 0)
        self.contents: QWidget | None = None
        self.placeholder = plain_label(right, "resourcePlaceholder")
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.setText("Select a resource or a template.")
        self.detail = QWidget(right)
        d = QVBoxLayout(self.detail)
        d.setContentsMargins(0, 0, 0, 0)
        for w in (self.title, self.uri, self.meta, self.description, self.form, self.expanded):
            d.addWidget(w)
        d.addLayout(buttons)
        d.addWidget(self.status)
        d.addWidget(self.result_head)
        d.addWidget(self.contents_host, 1)
        self.scroll = scrolling_column(right, "resourceScroll", self.placeholder, self.detail)
        rl = QVBoxLayout(right)
        rl.setContentsMargins(design.margins("m", "none", "none", "none"))
        rl.addWidget(self.subscriptions)
        rl.addWidget(self.scroll, 1)
        split = QSplitter(Qt.Horizontal, self)
        split.setObjectName("resourcesSplitter")
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([400, 560])
        lay = scrolled_page(self)
        lay.setContentsMargins(design.margins("none", "xs", "none", "none"))
        lay.addWidget(split)
        self.form.changed.connect(self._update_expanded)
        self._show_detail(None, None)

    # ------------------------------------------------------------------ connection
    def show_connection(self, conn: Connection | None) -> None:
        if conn is self.conn:
            self._show_lists()
            return
        if self.conn is not None:
            old = self.conn
            for sig, slot in ((old.resourcesChanged, self._show_lists), (old.subscriptionsChanged, self._show_lists),
                              (old.resourceUpdated, self._updated), (old.statusChanged, self._show_lists)):
                try:
                    sig.disconnect(slot)
                except (RuntimeError, TypeError):
                    pass
        self.conn = conn
        self._show_detail(None, None)
        self._set_contents(None)
        if conn is not None:
            conn.resourcesChanged.connect(self._show_lists)
            conn.subscriptionsChanged.connect(self._show_lists)  # the list's "subscribed" badges, and the button
            conn.resourceUpdated.connect(self._updated)
            conn.statusChanged.connect(self._show_lists)
            self.auto.setChecked(conn.auto_reread)
        self._show_lists()

    def _show_lists(self) -> None:
        conn = self.conn
        res_key = self._key(self.resource_view)
        tpl_key = self._key(self.template_view)
        if conn is None:
            self.res_model.set_items([])
            self.tpl_model.set_items([])
            self.count.setText("")
            self.cache.setText("")
            self.message.hide()
            self._show_subs()
            return
        library = conn.session.library
        res, tpl = conn.session.listings["resources"], conn.session.listings["templates"]
        updated = set(library.updated)
        for view in (self.resource_view, self.template_view):  # a reset must not change the shown item
            view.selectionModel().blockSignals(True)
        try:
            self.res_model.set_items(res.items, res.appeared, res.vanished, updated, set(library.subscribed),
                                     changed=res.changed)
            self.tpl_model.set_items(tpl.items, tpl.appeared, tpl.vanished, changed=tpl.changed)
        finally:
            for view in (self.resource_view, self.template_view):
                view.selectionModel().blockSignals(False)
        self._reselect(self.resource_view, res_key)
        self._reselect(self.template_view, tpl_key)
        parts = [f"{len(res.items)} resource{'s' if len(res.items) != 1 else ''}",
                 f"{len(tpl.items)} template{'s' if len(tpl.items) != 1 else ''}"]
        marks = []
        for lst in (res, tpl):
            if lst.appeared:
                marks.append(f"{len(lst.appeared)} new")
            if lst.vanished:
                marks.append(f"{len(lst.vanished)} removed")
            if lst.changed:
                marks.append(f"{len(lst.changed)} changed")
        self.count.setText(", ".join(parts) + (f" ({', '.join(marks)})" if marks else ""))
        self.cache.setText("\n".join(visible(t, 300) for t in (res.cache_note("resources/list"),
                                                            tpl.cache_note("resources/templates/list")) if t))
        message, error = None, False
        for lst, what in ((res, "resources/list"), (tpl, "resources/templates/list")):
            if lst.error:
                message, error = (lst.error if lst.error.startswith(what) else f"{what} failed: {lst.error}"), True
                break
        if message is None:
            if conn.session.status is Status.CONNECTING:
                message = "Connecting…"
            elif conn.session.status is not Status.CONNECTED and not res.items:
                message = "Not connected."
            elif conn.session.status is Status.CONNECTED and not (res.loaded and tpl.loaded):
                message = "Listing resources…"
            elif res.note or tpl.note:
                message = res.note or tpl.note
            elif res.loaded and not res.items and not tpl.items:
                message = "This server lists no resources."
        self.message.setText(message or "")
        self.message.setStyleSheet(f"color: {theme.colour('error').name()};" if error else "")
        self.message.setVisible(bool(message))
        self.refresh_button.setEnabled(conn.session.client is not None)
        self._show_subs()

    @staticmethod
    def _key(view: Any) -> str | None:
        idx = view.currentIndex()
        return idx.data(Qt.UserRole) if idx.isValid() else None

    @staticmethod
    def _reselect(view: Any, key: str | None) -> None:
        if not key:
            return
        model = view.model()
        row = model.row_of(key)
        if row is not None:
            view.selectionModel().blockSignals(True)
            view.setCurrentIndex(model.index(row, 0))
            view.selectionModel().blockSignals(False)

    def select(self, key: str) -> bool:
        """Select a resource (by uri) or a template (by uriTemplate)."""
        for view in (self.resource_view, self.template_view):
            model = view.model()
            for r in range(model.rowCount()):
                idx = model.index(r, 0)
                if idx.data(Qt.UserRole) == key:
                    view.setCurrentIndex(idx)
                    return True
        return False

    def refresh(self) -> None:
        if self.conn is not None and self.conn.session.client is not None:
            self._spawn(self.conn.session.listings.load_all(refresh=True))

    # ------------------------------------------------------------------ detail
    def _selected(self, item: dict[str, Any] | None, kind: str) -> None:
        other = self.template_view if kind == "resource" else self.resource_view
        other.selectionModel().blockSignals(True)
        other.setCurrentIndex(QModelIndex())
        other.selectionModel().blockSignals(False)
        self._show_detail(item, kind)

    def _show_detail(self, item: dict[str, Any] | None, kind: str | None) -> None:
        if item is not self.current:
            self._set_contents(None)  # contents of another resource would read as this one's
        self.current, self.current_kind = item, kind
        self.placeholder.setVisible(item is None)
        self.detail.setVisible(item is not None)
        self.status.hide()
        if item is None:
            self.form.set_arguments([])
            return
        self.title.setText(visible(title_of(item, "uri", "uriTemplate"), 200))
        desc = item.get("description") if isinstance(item.get("description"), str) else ""
        self.description.setText(visible_block(desc, 4000))
        self.description.setToolTip(hidden_tooltip(desc))
        self.description.setVisible(bool(desc))
        meta = []
        if isinstance(item.get("name"), str) and item["name"] != self.title.text():
            meta.append(f"name: {visible(item['name'], 200)}")
        if isinstance(item.get("mimeType"), str):
            meta.append(f"MIME type: {visible(item['mimeType'], 100)}")
        if human_size(item.get("size")):
            meta.append(f"size: {human_size(item['size'])} ({item['size']} bytes)")
        meta += annotation_lines(item)
        icons = item.get("icons")
        if isinstance(icons, list) and icons:
            meta.append(f"icons: {len(icons)} (" + ", ".join(
                visible(i.get("mimeType") or i.get("src", "")[:30], 40) for i in icons if isinstance(i, dict)) + ")")
        self.meta.setText("\n".join(meta))
        self.meta.setVisible(bool(meta))
        if kind == "template":
            template = item.get("uriTemplate")
            self.uri.setText(f"template: {visible(template, 400)}")
            try:
                names = check(template)  # type: ignore[arg-type]
            except TemplateError as exc:
                self.form.set_arguments([])
                self.form.empty.hide()
                self._say(f"This template is not valid RFC 6570, so it cannot be read: {exc}", "error")
                self.expanded.hide()
                self.read_button.setEnabled(False)
                self._show_subs()
                return
            self.form.set_arguments([{"name": n, "required": True,
                                      "description": "A variable of the URI template."} for n in names],
                                    completer_for(lambda: self.conn, {"type": "ref/resource", "uri": template})
                                    if self.conn and self.conn.session.library.can_complete
                                    else None)
            self.form.empty.setText("This template has no variables.")
            self.expanded.show()
            self._update_expanded()
        else:
            self.uri.setText(visible(item.get("uri"), 600))
            self.form.set_arguments([])
            self.form.empty.hide()
            self.expanded.hide()
            self.read_button.setEnabled(isinstance(item.get("uri"), str) and bool(item.get("uri")))
        self._show_subs()

    def target_uri(self) -> str | None:
        item = self.current
        if item is None:
            return None
        if self.current_kind == "resource":
            uri = item.get("uri")
            return uri if isinstance(uri, str) and uri else None
        try:
            return expand(item.get("uriTemplate"), self.form.values())  # type: ignore[arg-type]
        except (TemplateError, ValueError, TypeError):
            return None

    def _update_expanded(self) -> None:
        if self.current_kind != "template":
            return
        uri = self.target_uri()
        missing = self.form.missing()
        self.expanded.setText(f"URI: {visible(uri, 600)}" if uri else "URI: (invalid template)")
        if missing and self.form.fields:
            self.expanded.setText(self.expanded.text() + f"   (fill in: {', '.join(missing)})")
        self.read_button.setEnabled(uri is not None and not missing)
        self._show_subs()

    def _say(self, text: str, level: str = "muted") -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {theme.colour(level).name()};")
        self.status.setVisible(bool(text))

    # ------------------------------------------------------------------ read
    def read(self) -> asyncio.Task[Any] | None:
        uri = self.target_uri()
        if uri is None or self.conn is None:
            return None
        return self._spawn(self._read(uri))

    async def _read(self, uri: str) -> None:
        conn = self.conn
        if conn is None:
            return
        self.read_button.setEnabled(False)
        self._say(f"Reading {visible(uri, 300)}…")
        try:
            result = await conn.session.library.read(uri)
        except E.SpyglassError as exc:
            if conn is self.conn:
                self._say(f"resources/read failed: {exc.message}", "error")
            return
        finally:
            if conn is self.conn:
                self.read_button.setEnabled(self.target_uri() is not None)
        if conn is not self.conn:
            return
        self.shown_uri, self.last_result = uri, result
        self.status.hide()
        head = [f"{visible(uri, 400)} · read at {time.strftime('%H:%M:%S')}"]
        if "ttlMs" in result or "cacheScope" in result:
            head.append(f"ttlMs {visible(result.get('ttlMs'), 20)}, cacheScope {visible(result.get('cacheScope'), 20)}")
        self.result_head.setText(" · ".join(head))
        self._set_contents(result.get("contents"))
        self._show_lists()

    def _set_contents(self, contents: Any) -> None:
        if self.contents is not None:
            self.contents.hide()
            self.contents.deleteLater()
            self.contents = None
        if contents is None:
            self.result_head.setText("")
            self.shown_uri = None
            return
        try:
            self.contents = render_resource_contents(contents)
        except Exception as exc:  # a renderer bug: show it raw with the reason
            log.exception("rendering resource contents")
            self.contents = _fallback_contents(contents)
            self._say(f"Could not render the contents: {type(exc).__name__}: {exc}", "error")
        self.contents.setParent(self.contents_host)
        self._contents_lay.addWidget(self.contents)
        self.contents.show()
        QTimer.singleShot(0, self, self.fit_contents)

    def fit_contents(self) -> None:
        """Contents that are one text fill the column (its own scroll bar the only one)."""
        if self.contents is not None:
            fill_one_text(self.contents, self.scroll.viewport().height(), self.detail)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        QTimer.singleShot(0, self, self.fit_contents)

    # ------------------------------------------------------------------ subscriptions
    def _show_subs(self) -> None:
        conn = self.conn
        uri = self.target_uri()
        f = conn.session.library if conn is not None else None
        modern = conn is not None and conn.session.modern
        can = bool(f and conn.session.client is not None and f.can_subscribe and uri)
        self.subscribe_button.setEnabled(can)
        on = bool(f and uri in f.subscribed)
        self.subscribe_button.setChecked(on)
        self.subscribe_button.setText("Unsubscribe" if on else "Subscribe")
        if f is not None and not f.can_subscribe and conn.session.hello is not None:
            self.subscribe_button.setToolTip("This server does not offer resource subscriptions")
        else:
            self.subscribe_button.setToolTip("subscriptions/listen with this URI" if modern
                                             else "resources/subscribe / resources/unsubscribe")
        if f is None or conn.session.hello is None:
            self.subscriptions.setText("")
            self.subscriptions.hide()
            return
        lines = []
        if modern:
            if f.listen_error:
                lines.append(f"subscriptions/listen failed: {visible(f.listen_error, 300)}")
            elif f.granted is not None:
                lines.append("Listening (subscriptions/listen). The server acknowledged: " + granted_text(f.granted))
                if f.refused:
                    lines.append("Refused by the server: " + ", ".join(visible(r, 120) for r in f.refused))
            elif f.subscribed:
                lines.append("Waiting for the server to acknowledge subscriptions/listen…")
        elif f.subscribed:
            lines.append("Subscribed (resources/subscribe): "
                         + ", ".join(visible(u, 120) for u in sorted(f.subscribed)))
        self.subscriptions.setText("\n".join(lines))
        self.subscriptions.setStyleSheet(
            f"color: {theme.colour('warning' if f.refused or f.listen_error else 'muted').name()};"
        )
        self.subscriptions.setVisible(bool(lines))

    def _toggle_subscription(self) -> None:
        uri = self.target_uri()
        if uri is None or self.conn is None:
            return
        want = uri not in self.conn.session.library.subscribed
        self._spawn(self._subscribe(uri, want))

    async def _subscribe(self, uri: str, on: bool) -> None:
        conn = self.conn
        if conn is None:
            return
        self.subscribe_button.setEnabled(False)
        try:
            await conn.session.library.subscribe(uri, on)
        except E.SpyglassError as exc:
            if conn is self.conn:
                self._say(
                    f"{'Subscribing to' if on else 'Unsubscribing from'} {visible(uri, 200)} failed: {exc.message}",
                    "error",
                )
        finally:
            if conn is self.conn:
                self._show_lists()

    def _auto_toggled(self, on: bool) -> None:
        if self.conn is not None:
            self.conn.auto_reread = on

    def _updated(self, uri: str) -> None:
        self._show_lists()
        if uri == self.shown_uri and self.auto.isChecked() and self.conn is not None:
            self._spawn(self._read(uri))
        elif uri == self.shown_uri:
            self.result_head.setText(self.result_head.text().split("  ⟳")[0] + "  ⟳ updated on the server: Read again")

    # ------------------------------------------------------------------ tasks
    def _spawn(self, coro: Any) -> asyncio.Task[Any] | None:
        return spawn(coro, self._tasks, lambda exc: self._say(f"Internal error: {exc}", "error"), "resources pane task")
