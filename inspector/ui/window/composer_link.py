"""The raw composer in the window (*Server → Raw composer…*, Ctrl+Shift+E, the command palette) and
*Edit and resend…* (both in docs/devloop.md), on an outgoing request of the traffic pane (its context menu,
`trafficContextMenu`: `trafficResend`, `trafficToComposer`) and on a call in History
(`historyResendButton`). The dialogs are `ui/traffic/composer.py`'s; the frames go through the session
layer (`ServerSession.composer`), marked ✎ in the traffic pane."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QObject, QPoint, Qt
from PySide6.QtWidgets import QMenu

from ... import errors as E
from ...session import CallRecord, Composer
from ...traffic.columns import HANDMADE
from ..traffic.composer import FrameDialog
from . import menus

if TYPE_CHECKING:
    from .main_window import MainWindow


class ComposerLink(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.composer_dialog: FrameDialog | None = None
        self.resend_dialog: FrameDialog | None = None
        self._resend_to: Composer | None = None  # the connection the request being edited came from
        self.act_composer = menus.action(window, "Raw composer…", self.open_composer, "Ctrl+Shift+E",
                                         "actionRawComposer", "Send any text to the selected server as it is: "
                                         "invalid JSON, a batch, a response nobody asked for")
        server_menu = window.findChild(QMenu, "serverMenu")
        if server_menu is not None:
            menus.insert_after_group(server_menu, [self.act_composer])
        pane = window.traffic_pane
        if pane is not None:
            pane.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            pane.view.customContextMenuRequested.connect(self._context_menu_at)
        window.tool_detail.history.resendRequested.connect(self.resend_call)
        window.selectionChanged.connect(self._selected)
        window.servers.rowsInserted.connect(self._servers_added)

    # ------------------------------------------------------------------ where frames go
    def _composer_of(self, server_id: str) -> Composer | None:
        conn = next((c for c in self.window.servers.connections if c.server_id == server_id), None)
        return conn.session.composer if conn is not None else None

    def _selected_composer(self) -> Composer | None:
        conn = self.window.selected_connection()
        return conn.session.composer if conn is not None else None

    def _selected(self) -> None:
        if self.composer_dialog is not None and self.composer_dialog.isVisible():
            self.composer_dialog.retarget()

    def _servers_added(self, _parent: QModelIndex, first: int, last: int) -> None:
        for conn in self.window.servers.connections[first:last + 1]:
            conn.statusChanged.connect(lambda c=conn: self._status_changed(c))

    def _status_changed(self, conn: Any) -> None:
        """A server connected or went: the dialogs that send to it say so (and offer its revision's templates)."""
        if conn is self.window.selected_connection():
            self._selected()
        dialog = self.resend_dialog
        if dialog is not None and dialog.isVisible() and self._resend_to is conn.session.composer:
            dialog.retarget()

    # ------------------------------------------------------------------ the raw composer
    def open_composer(self, text: str | None = None) -> FrameDialog:
        if self.composer_dialog is None:
            self.composer_dialog = FrameDialog(self._selected_composer, raw=True, show_frame=self.show_frame,
                                               parent=self.window)
        dialog = self.composer_dialog
        dialog.retarget()
        if text is not None:
            dialog.load(text)
        _raise(dialog)
        return dialog

    # ------------------------------------------------------------------ Edit and resend
    def open_resend(self, composer: Composer, request: dict[str, Any]) -> FrameDialog:
        """The editor, holding `request` with a fresh id (and, in 2026-07-28, the session's `_meta`)."""
        if self.resend_dialog is None:
            self.resend_dialog = FrameDialog(lambda: self._resend_to, raw=False, show_frame=self.show_frame,
                                             parent=self.window)
        self._resend_to = composer
        dialog = self.resend_dialog
        try:
            prepared = composer.prepare_resend(request)
            note, role = f"A fresh id, {prepared['id']!r} (it was {request.get('id')!r})" + (
                ", and the _meta the session sends now" if composer.session.modern else ""), "muted"
        except E.SpyglassError as exc:  # not connected: it can still be read and edited
            prepared, note, role = dict(request), exc.message, "error"
        dialog.retarget()
        dialog.load(json.dumps(prepared, indent=2, ensure_ascii=False))
        dialog.say(note, role)
        _raise(dialog)
        return dialog

    def resend_record(self, n: int) -> FrameDialog | None:
        """*Edit and resend…* of traffic record `n` (an outgoing request)."""
        store = self.window.store
        composer = self._composer_of(store.server_id(n)) if store is not None else None
        if composer is None:
            return None
        try:
            request = json.loads(store.raw(n))
        except ValueError:
            return None
        return self.open_resend(composer, request) if isinstance(request, dict) else None

    def resend_call(self, rec: CallRecord) -> FrameDialog | None:
        """*Edit and resend…* of a call in History: its request as it went out, or one built from the call
        when the traffic does not have it (any more)."""
        composer = self._composer_of(rec.server_id)
        if composer is None:
            return None
        n = self._request_row(rec.server_id, rec.request_id)
        if n is not None:
            return self.resend_record(n)
        try:
            request = composer.call_request(rec.tool, rec.arguments)
        except E.SpyglassError:
            request = {"jsonrpc": "2.0", "id": 0, "method": "tools/call",
                       "params": {"name": rec.tool, "arguments": rec.arguments}}
        return self.open_resend(composer, request)

    def _request_row(self, server_id: str, request_id: Any) -> int | None:
        store = self.window.store
        if store is None or request_id is None:
            return None
        for n in reversed(store.columns.ids):
            if (store.columns.ids[n] == request_id and store.kind(n) == "request" and store.direction(n) == "out"
                    and store.server_id(n) == server_id):
                return n
        return None

    # ------------------------------------------------------------------ the traffic pane
    def context_menu(self, n: int) -> QMenu:
        """The traffic table's context menu for record `n`."""
        store = self.window.store
        menu = QMenu(self.window)
        menu.setObjectName("trafficContextMenu")
        resend = menu.addAction("Edit and resend…")
        resend.setObjectName("trafficResend")
        resend.setToolTip("Edit this request as JSON and send it again with a fresh id on the same connection")
        to_composer = menu.addAction("Open in the raw composer")
        to_composer.setObjectName("trafficToComposer")
        composer = self._composer_of(store.server_id(n))
        why = composer.unavailable() if composer is not None else f"{store.server_id(n)} is not in the sidebar"
        resend.setEnabled(store.direction(n) == "out" and store.kind(n) == "request" and why is None)
        if why is not None:
            resend.setToolTip(why)
        to_composer.setEnabled(store.direction(n) in ("out", "in"))
        resend.triggered.connect(lambda: self.resend_record(n))
        to_composer.triggered.connect(lambda: self.open_composer(store.raw(n).decode("utf-8", "backslashreplace")))
        return menu

    def _context_menu_at(self, pos: QPoint) -> None:
        pane = self.window.traffic_pane
        index = pane.view.indexAt(pos)
        if not index.isValid():
            return
        menu = self.context_menu(pane.model.record_at(index.row()))
        menu.aboutToHide.connect(menu.deleteLater)
        menu.popup(pane.view.viewport().mapToGlobal(pos))

    def show_frame(self, server_id: str, number: int) -> bool:
        """Select hand-made frame ✎`number` of `server_id` in the traffic pane."""
        store, pane = self.window.store, self.window.traffic_pane
        if store is None or pane is None:
            return False
        rows = sorted(store.columns.handmade, reverse=True)
        n = next((r for r in rows if store.server_id(r) == server_id
                  and (store.meta(r) or {}).get(HANDMADE) == number and store.direction(r) == "out"), None)
        if n is None:
            return False
        self.window.traffic_dock.show()
        self.window.traffic_dock.raise_()
        pane.model.refresh()
        return pane.select_record(n)


def _raise(dialog: FrameDialog) -> None:
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
