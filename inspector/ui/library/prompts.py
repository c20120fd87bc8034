"""The Prompts tab: `promptList`, the argument form `promptForm`, `getPromptButton`, rendered messages.

The form marks required arguments, shows descriptions as help, and asks
`completion/complete` as the user types (debounced, earlier fields sent as
`context.arguments`). `prompts/get` messages are shown in order, one card per
message headed by its role, each content block rendered by `results.ContentView`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QSplitter, QVBoxLayout, QWidget

from ... import errors as E
from ...session import Status
from ..base import design, theme
from ..base.layout import ListHeader, heading_label, plain_label, scrolling_column, title_label
from ..base.tasks import spawn
from ..base.text import hidden_tooltip, visible, visible_block
from ..render.results import ContentView
from ..render.text import fill_one_text
from ..servers.connection import Connection
from .arg_form import ArgumentForm, completer_for
from .items import CatalogModel, ListFilter, catalog_view, describe_prompt, prompt_problems, title_of

log = logging.getLogger("spyglass.ui.prompts")

class MessageCard(QFrame):
    """One prompt message: its role, then its content block(s)."""

    def __init__(self, message: Any, reader: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.StyledPanel)
        m = message if isinstance(message, dict) else {}
        role = m.get("role") if isinstance(m.get("role"), str) else None
        self.role = role or "?"
        self.setObjectName(f"promptMessage:{self.role}")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("m", "s", "m", "m"))
        head = QLabel(visible(role, 40).capitalize() if role else "⚠ message without a role", self)
        head.setObjectName("promptRole")
        head.setTextFormat(Qt.PlainText)  # the role is the server's text
        f = head.font()
        f.setBold(True)
        head.setFont(f)
        colour = {"user": "idempotent", "assistant": "connected"}.get(role or "", "warning")
        head.setStyleSheet(f"color: {theme.colour(colour).name()};")
        lay.addWidget(head)
        content = m.get("content")
        blocks = content if isinstance(content, list) else [content] if content is not None else []
        self.view = ContentView(self)
        self.view.set_blocks(blocks, reader=reader)
        lay.addWidget(self.view)
        if not isinstance(message, dict):
            lay.addWidget(plain_label(self, "promptMessageProblem"))
            lay.itemAt(lay.count() - 1).widget().setText(f"⚠ Not a message object: {visible(repr(message), 200)}")


class PromptsPane(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("promptsPane")
        self.conn: Connection | None = None
        self.current: dict[str, Any] | None = None
        self.last_result: dict[str, Any] | None = None
        self.cards: list[MessageCard] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        left = QWidget(self)
        head = ListHeader(left, refresh=("refreshPromptsButton", "List prompts again, bypassing a cached result "
                                         "(ttlMs)", self.refresh),
                          count="promptCount", cache="promptsCache", message="promptListMessage",
                          search=("promptSearch", "Filter prompts by name, title or description",
                                  lambda text: self.list_filter.set_text(text)))
        self.search = head.search
        self.refresh_button, self.count, self.cache, self.message = head.refresh_button, head.count, head.cache, \
            head.message
        self.model = CatalogModel("name", describe_prompt, self)
        self.view = catalog_view("promptList", self.model, left)
        self.list_filter = ListFilter((self.view, self.model))
        self.view.selectionModel().currentChanged.connect(
            lambda cur, _p: self._show_prompt(self.model.item_at(cur)))
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        head.add_to(ll)
        ll.addWidget(self.view, 1)
        right = QWidget(self)
        self.title = title_label(right, "promptTitle")
        self.name = plain_label(right, "promptName", selectable=True)
        self.description = plain_label(right, "promptDescription", selectable=True)
        self.form = ArgumentForm(right, name="promptForm")
        self.form.changed.connect(self._update_button)
        self.get_button = theme.mark_primary(QPushButton("Get prompt", right))
        self.get_button.setObjectName("getPromptButton")
        self.get_button.setToolTip("prompts/get with these arguments")
        self.get_button.clicked.connect(self.get)
        self.get_button.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Fixed)
        self.status = plain_label(right, "promptStatus", selectable=True)
        self.status.hide()
        row = QHBoxLayout()
        row.addWidget(self.get_button)
        row.addWidget(self.status, 1)
        row.addStretch(0)  # the button at the left, as Call and Read are, also while the status is hidden
        self.result_head = plain_label(right, "promptResultHead", selectable=True)
        self.messages = QWidget(right)
        self.messages.setObjectName("promptMessages")
        self._msg_lay = QVBoxLayout(self.messages)
        self._msg_lay.setContentsMargins(0, 0, 0, 0)
        self._msg_lay.setSpacing(design.space("m"))
        self.placeholder = plain_label(right, "promptPlaceholder")
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.setText("Select a prompt.")
        self.detail = QWidget(right)
        d = QVBoxLayout(self.detail)
        d.setContentsMargins(0, 0, 0, 0)
        for w in (self.title, self.name, self.description):
            d.addWidget(w)
        d.addWidget(heading_label("Arguments", self.detail))
        d.addWidget(self.form)
        d.addLayout(row)
        d.addWidget(self.result_head)
        d.addWidget(self.messages)
        self.scroll = scrolling_column(right, "promptScroll", self.placeholder, self.detail)
        rl = QVBoxLayout(right)
        rl.setContentsMargins(design.margins("m", "none", "none", "none"))
        rl.addWidget(self.scroll)
        split = QSplitter(Qt.Horizontal, self)
        split.setObjectName("promptsSplitter")
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([380, 580])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("none", "xs", "none", "none"))
        lay.addWidget(split)
        self._show_prompt(None)

    # ------------------------------------------------------------------ connection
    def show_connection(self, conn: Connection | None) -> None:
        if conn is self.conn:
            self._show_list()
            return
        if self.conn is not None:
            for sig in (self.conn.promptsChanged, self.conn.statusChanged):
                try:
                    sig.disconnect(self._show_list)
                except (RuntimeError, TypeError):
                    pass
        self.conn = conn
        self._show_prompt(None)
        if conn is not None:
            conn.promptsChanged.connect(self._show_list)
            conn.statusChanged.connect(self._show_list)
        self._show_list()

    def _show_list(self) -> None:
        conn = self.conn
        idx = self.view.currentIndex()
        keep = idx.data(Qt.UserRole) if idx.isValid() else None
        if conn is None:
            self.model.set_items([])
            self.count.setText("")
            self.cache.setText("")
            self.message.hide()
            return
        lst = conn.session.listings["prompts"]
        self.view.selectionModel().blockSignals(True)  # a reset must not change the shown prompt
        try:
            self.model.set_items(lst.items, lst.appeared, lst.vanished, changed=lst.changed)
        finally:
            self.view.selectionModel().blockSignals(False)
        if keep:
            for r in range(self.model.rowCount()):
                i = self.model.index(r, 0)
                if i.data(Qt.UserRole) == keep:
                    self.view.selectionModel().blockSignals(True)
                    self.view.setCurrentIndex(i)
                    self.view.selectionModel().blockSignals(False)
                    break
        marks = ([f"{len(lst.appeared)} new"] if lst.appeared else []) + \
            ([f"{len(lst.vanished)} removed"] if lst.vanished else []) + \
            ([f"{len(lst.changed)} changed"] if lst.changed else [])
        n = len(lst.items)
        self.count.setText(f"{n} prompt{'s' if n != 1 else ''}" + (f" ({', '.join(marks)})" if marks else ""))
        self.cache.setText(visible(lst.cache_note("prompts/list"), 300))
        message, error = None, False
        if lst.error:
            message, error = (lst.error if lst.error.startswith("prompts/list") else
                              f"prompts/list failed: {lst.error}"), True
        elif conn.session.status is Status.CONNECTING:
            message = "Connecting…"
        elif conn.session.status is not Status.CONNECTED and not lst.items:
            message = "Not connected."
        elif conn.session.status is Status.CONNECTED and not lst.loaded:
            message = "Listing prompts…"
        elif lst.note:
            message = lst.note
        elif not lst.items:
            message = "This server lists no prompts."
        self.message.setText(message or "")
        self.message.setStyleSheet(f"color: {theme.colour('error').name()};" if error else "")
        self.message.setVisible(bool(message))
        self.refresh_button.setEnabled(conn.session.client is not None)
        self._update_button()

    def refresh(self) -> None:
        if self.conn is not None and self.conn.session.client is not None:
            self._spawn(self.conn.session.load("prompts", refresh=True))

    def select(self, name: str) -> bool:
        for r in range(self.model.rowCount()):
            idx = self.model.index(r, 0)
            if idx.data(Qt.UserRole) == name:
                self.view.setCurrentIndex(idx)
                return True
        return False

    # ------------------------------------------------------------------ detail
    def _show_prompt(self, prompt: dict[str, Any] | None) -> None:
        self.current = prompt
        self.placeholder.setVisible(prompt is None)
        self.detail.setVisible(prompt is not None)
        self._clear_messages()
        self.status.hide()
        if prompt is None:
            self.form.set_arguments([])
            return
        self.title.setText(visible(title_of(prompt), 200))
        name = prompt.get("name") if isinstance(prompt.get("name"), str) else ""
        self.name.setText(f"name: {visible(name, 200)}" if name and name != self.title.text() else "")
        self.name.setVisible(bool(self.name.text()))
        desc = prompt.get("description") if isinstance(prompt.get("description"), str) else ""
        self.description.setText(visible_block(desc, 4000))
        self.description.setToolTip(hidden_tooltip(desc))
        self.description.setVisible(bool(desc))
        can = self.conn is not None and self.conn.session.library.can_complete
        self.form.set_arguments(prompt.get("arguments") or [],
                                completer_for(lambda: self.conn, {"type": "ref/prompt", "name": name})
                                if can and name else None)
        problems = prompt_problems(prompt)
        if problems:
            self._say("⚠ " + "; ".join(problems) + ".", "warning")
        self._update_button()

    def _update_button(self) -> None:
        conn = self.conn
        ok = self.current is not None and conn is not None and conn.session.client is not None
        missing = self.form.missing() if self.current is not None else []
        self.get_button.setEnabled(ok and not missing)
        self.get_button.setToolTip("Fill in the required arguments: " + ", ".join(missing) if missing
                                   else "prompts/get with these arguments")

    def _say(self, text: str, level: str = "muted") -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {theme.colour(level).name()};")
        self.status.setVisible(bool(text))

    def _clear_messages(self) -> None:
        for card in self.cards:
            card.hide()
            card.deleteLater()
        self.cards = []
        self.result_head.setText("")
        self.result_head.hide()

    # ------------------------------------------------------------------ get
    def get(self) -> asyncio.Task[Any] | None:
        if self.current is None or self.conn is None or not isinstance(self.current.get("name"), str):
            return None
        return self._spawn(self._get(self.current["name"], self.form.values()))

    async def _get(self, name: str, arguments: dict[str, str]) -> None:
        conn = self.conn
        if conn is None:
            return
        self.get_button.setEnabled(False)
        self._say(f"Getting {visible(name, 100)}…")
        try:
            result = await conn.session.library.get_prompt(name, arguments)
        except E.SpyglassError as exc:
            if conn is self.conn:
                self._say(f"prompts/get failed: {exc.message}", "error")
            return
        finally:
            if conn is self.conn:
                self._update_button()
        if conn is not self.conn or self.current is None or self.current.get("name") != name:
            return
        self.status.hide()
        self._clear_messages()
        self.last_result = result
        desc = result.get("description") if isinstance(result.get("description"), str) else ""
        n = len(result["messages"])
        self.result_head.setText(f"{n} message{'s' if n != 1 else ''}" + (f" · {visible(desc, 300)}" if desc else ""))
        self.result_head.show()
        reader = conn.session.library.read if conn.session.client is not None else None
        for message in result["messages"]:
            card = MessageCard(message, reader, self.messages)
            self.cards.append(card)
            self._msg_lay.addWidget(card)
        QTimer.singleShot(0, self, self.fit_messages)

    def fit_messages(self) -> None:
        """A prompt of one text message lets it fill the column (its own scroll bar the only one)."""
        fill_one_text(self.messages, self.scroll.viewport().height(), self.detail)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        QTimer.singleShot(0, self, self.fit_messages)

    def _spawn(self, coro: Any) -> asyncio.Task[Any] | None:
        return spawn(coro, self._tasks, lambda exc: self._say(f"Internal error: {exc}", "error"), "prompts pane task")
