"""Server info additions: ping or reachability, extensions, cacheable results, roots.

Legacy era: `pingButton` sends `ping` and shows the round-trip time. Modern era:
`server/discover` runs periodically (the session's heartbeat) and the label
says whether the server is reachable; the button checks now. Extensions come
from the capabilities (or the discover result). The cache section lists the
`ttlMs` and `cacheScope` of cacheable results, and `refreshListsButton` lists
everything again bypassing the cache. `RootsEditor` is the per-server list of
roots (folders picked with a file dialog, shown as file:// URIs).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ... import errors as E
from ...session import LIBRARY, path_to_root, root_to_path
from ..base import design, theme
from ..base.empty import EmptyState
from ..base.text import visible
from .connection import Connection


def _plain(parent: QWidget, name: str) -> QLabel:
    label = QLabel(parent)
    label.setObjectName(name)
    label.setTextFormat(Qt.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    return label


class ServerExtras(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("serverExtras")
        self.conn: Connection | None = None
        self.ping_button = QPushButton("Ping", self)
        self.ping_button.setObjectName("pingButton")
        self.ping_button.clicked.connect(self.ping)
        self.ping_result = _plain(self, "pingResult")
        self.extensions = _plain(self, "serverExtensions")
        self.cache = _plain(self, "serverCache")
        self.refresh_button = QPushButton("Refresh lists", self)
        self.refresh_button.setObjectName("refreshListsButton")
        self.refresh_button.setToolTip("List tools, resources, templates and prompts again, bypassing cached results")
        self.refresh_button.clicked.connect(self.refresh)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.ping_button)
        row.addWidget(self.ping_result, 1)
        row2 = QHBoxLayout()
        row2.setContentsMargins(0, 0, 0, 0)
        row2.addWidget(self.cache, 1)
        row2.addWidget(self.refresh_button, 0, Qt.AlignTop)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("none", "s", "none", "none"))
        lay.addLayout(row)
        lay.addWidget(self.extensions)
        lay.addLayout(row2)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.show_connection(None)

    def show_connection(self, conn: Connection | None) -> None:
        if conn is not self.conn:
            if self.conn is not None:
                try:
                    self.conn.healthChanged.disconnect(self._update)
                except (RuntimeError, TypeError):
                    pass
            if conn is not None:
                conn.healthChanged.connect(self._update)
            self.conn = conn
        self._update()

    def _update(self) -> None:
        conn = self.conn
        hello = conn.session.hello if conn is not None else None
        live = conn is not None and conn.session.client is not None and hello is not None
        self.ping_button.setEnabled(live)
        self.refresh_button.setEnabled(live)
        if conn is None or hello is None:
            self.ping_result.setText("")
            self.extensions.setText("")
            self.cache.setText("")
            return
        session = conn.session
        f = session.health
        modern = session.modern
        self.ping_button.setText("Check now" if modern else "Ping")
        self.ping_button.setToolTip("server/discover" if modern else "ping: measures the round-trip time")
        when = time.strftime("%H:%M:%S", time.localtime(f.last_ping_at)) if f.last_ping_at else None
        if f.ping_error:
            text = (f"Unreachable: server/discover failed at {when}: " if modern else f"Ping failed at {when}: ") \
                + visible(f.ping_error, 300)
            colour = "error"
        elif f.last_rtt is not None:
            ms = f.last_rtt * 1000
            text = (
                f"Reachable: server/discover answered in {ms:.1f} ms at {when} "
                f"(checked every {session.options.heartbeat_s or 0:g} s)"
                if modern
                else f"Round trip {ms:.1f} ms (ping at {when})"
            )
            colour = "connected" if modern else "muted"
        else:
            text = "Reachability is checked with server/discover…" if modern else "Not pinged yet."
            colour = "muted"
        self.ping_result.setText(text)
        self.ping_result.setStyleSheet(f"color: {theme.colour(colour).name()};")
        caps = hello.capabilities if isinstance(hello.capabilities, dict) else {}
        result = hello.result if isinstance(hello.result, dict) else {}
        ext = caps.get("extensions", result.get("extensions"))
        self.extensions.setText(
            "Extensions: " + (visible(json.dumps(ext, ensure_ascii=False), 600) if ext else "none declared")
        )
        lines = []
        if modern and ("ttlMs" in result or "cacheScope" in result):
            lines.append(
                f"server/discover: ttlMs {visible(result.get('ttlMs'), 20)}, "
                f"cacheScope {visible(result.get('cacheScope'), 20)}"
            )
        for kind, method in (
            ("resources", "resources/list"),
            ("templates", "resources/templates/list"),
            ("prompts", "prompts/list"),
        ):
            t = session.listings[kind].cache_note(method)
            if t:
                lines.append(visible(t, 300))
        for uri, (ttl, scope) in list(session.library.read_cache.items())[-5:]:
            lines.append(
                f"resources/read {visible(uri, 120)}: ttlMs {visible(ttl, 20)}, cacheScope {visible(scope, 20)}"
            )
        self.cache.setText("Cacheable results:\n" + "\n".join(lines) if lines else "No cacheable results yet.")

    def ping(self) -> asyncio.Task[Any] | None:
        conn = self.conn
        if conn is None:
            return None

        async def run() -> None:
            try:
                await conn.session.health.ping()
            except E.SpyglassError:
                pass  # shown by _update through healthChanged

        return self._spawn(run())

    def refresh(self) -> asyncio.Task[Any] | None:
        conn = self.conn
        if conn is None or conn.session.client is None:
            return None

        async def run() -> None:
            await asyncio.gather(
                conn.session.listings.load_all(LIBRARY, refresh=True), conn.session.refresh_tools(mark=True)
            )

        return self._spawn(run())

    def _spawn(self, coro: Any) -> asyncio.Task[Any] | None:
        try:
            task = asyncio.ensure_future(coro)
        except RuntimeError:
            coro.close()
            return None
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


class RootsEditor(QWidget):
    """`rootsList` of file:// URIs, Add folder… (`addRootButton`), Remove (`removeRootButton`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rootsEditor")
        self.conn: Connection | None = None
        self.on_changed: Any = None  # callable(conn): the window saves the roots in its settings
        intro = QLabel(
            "Folders this server may work in. They are answered to roots/list in either protocol era; "
            "a change is announced with notifications/roots/list_changed (2024-11-05 … 2025-11-25).",
            self,
        )
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.PlainText)
        self.view = QListWidget(self)
        self.view.setObjectName("rootsList")
        self.add_button = QPushButton("Add folder…", self)
        self.add_button.setObjectName("addRootButton")
        self.add_button.clicked.connect(self.choose_folder)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setObjectName("removeRootButton")
        self.remove_button.clicked.connect(self.remove_selected)
        self.note = _plain(self, "rootsNote")
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        self.empty = EmptyState(self, "rootsEmpty", "No root folders",
                                "This server is answered an empty list: it is told of no folder it may work in. "
                                "Add a folder to tell it where it may read and write; it is saved with the server.",
                                [("Add folder…", "rootsEmptyAdd", self.choose_folder)])
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addLayout(buttons)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.empty, 1)
        lay.addWidget(self.note)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._dialog: QFileDialog | None = None
        self.show_connection(None)

    def show_connection(self, conn: Connection | None) -> None:
        self.conn = conn
        self.view.clear()
        for root in conn.session.roots if conn is not None else []:
            item = QListWidgetItem(visible(root.get("uri"), 500))
            item.setData(Qt.UserRole, root.get("uri"))
            item.setToolTip(root_to_path(root.get("uri", "")))
            self.view.addItem(item)
        self.add_button.setEnabled(conn is not None)
        self.remove_button.setEnabled(conn is not None and self.view.count() > 0)
        self.view.setVisible(self.view.count() > 0)
        self.empty.setVisible(self.view.count() == 0)
        self.empty.buttons["rootsEmptyAdd"].setEnabled(conn is not None)
        self.note.setText("")

    def choose_folder(self) -> None:
        """A window-modal folder dialog (no nested event loop)."""
        dialog = QFileDialog(self, "Add a root folder")
        dialog.setFileMode(QFileDialog.Directory)
        dialog.setOption(QFileDialog.ShowDirsOnly, True)
        dialog.fileSelected.connect(self.add_folder)
        dialog.finished.connect(dialog.deleteLater)
        self._dialog = dialog
        dialog.open()

    def add_folder(self, path: str) -> asyncio.Task[Any] | None:
        conn = self.conn
        if conn is None or not path:
            return None
        root = path_to_root(path)
        if any(r.get("uri") == root["uri"] for r in conn.session.roots):
            return None
        return self._apply(conn, [*conn.session.roots, root])

    def remove_selected(self) -> asyncio.Task[Any] | None:
        conn = self.conn
        item = self.view.currentItem()
        if conn is None or item is None:
            return None
        uri = item.data(Qt.UserRole)
        return self._apply(conn, [r for r in conn.session.roots if r.get("uri") != uri])

    def _apply(self, conn: Connection, roots: list[dict[str, str]]) -> asyncio.Task[Any] | None:
        async def run() -> None:
            try:
                await conn.session.set_roots(roots)
            except E.SpyglassError as exc:
                if conn is self.conn:
                    self.note.setText(f"Could not tell the server: {exc.message}")
            if self.on_changed is not None:
                self.on_changed(conn)
            if conn is self.conn:
                note = self.note.text()
                self.show_connection(conn)
                self.note.setText(note)

        try:
            task = asyncio.ensure_future(run())
        except RuntimeError:
            return None
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
