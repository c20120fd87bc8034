"""`callHistory`: the calls made to one server (newest first): tool, who made it, outcome, duration, arguments.

The "by" column says who made a call on an agent's server: `agent` (with the agent's name when its MCP session
gave one: `agent: Claude Code`), or `you` for this window's user (empty on the window's own servers).
"Open in the tool panel" (`historyOpenButton`) shows the call's tool with its form filled with the call's
arguments, to edit and call again by hand (on an agent's server too: the call then goes through the
background process, as yours).

Selecting one shows it in the result view; "Re-run" (`rerunButton`) calls it again with the same
arguments; "Pin" (`historyPinButton`) marks it to run again after each restart of a watched server
(when its watch re-runs pinned calls; a pinned call is never dropped from the history); "Save to
collection…" (`historySaveButton`) keeps it as a step of a collection file; "Edit and resend…"
(`historyResendButton`) opens its request in an editor to send again by hand; "Copy as" (`copyAsButton`)
puts it on the clipboard as a `spyglass --cli` command, the JSON-RPC request, or a `curl` command
(HTTP servers), secrets masked.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ... import replay
from ...session import CANCELLED, FAILED, OK, REJECTED, RUNNING, TIMEOUT, TOOL_ERROR, CallRecord
from ..base import theme
from ..base.text import visible

_COLOUR = {OK: "connected", TOOL_ERROR: "error", REJECTED: "error", CANCELLED: "warning", TIMEOUT: "warning",
           FAILED: "error", RUNNING: "connecting"}
RECORD_ROLE = Qt.UserRole + 1


def copy_text(rec: CallRecord, conn: Any, kind: str) -> str:
    """The call as `cli`, `jsonrpc` or `curl` text (secrets masked)."""
    args = rec.arguments if isinstance(rec.arguments, dict) else None
    task = rec.task_id is not None or rec.as_task is True
    if kind == "cli":
        mode = getattr(conn, "mode", None)
        return replay.cli_command(conn.spec, rec.tool, args, protocol=mode if mode != "auto" else None, task=task)
    version = getattr(conn, "protocol_version", None)
    if kind == "jsonrpc":
        return replay.jsonrpc_request(rec.tool, args, protocol_version=version, task=task)
    if kind == "curl":
        session = None
        client = getattr(conn, "client", None)
        transport = getattr(client, "transport", None)
        session = getattr(transport, "session_id", None)
        return replay.curl_command(conn.spec, rec.tool, args, protocol_version=version,
                                   session_id=session if isinstance(session, str) else None, task=task)
    raise ValueError(kind)


class CallHistory(QWidget):
    recordSelected = Signal(object)  # CallRecord
    rerunRequested = Signal(object)  # CallRecord
    saveRequested = Signal(object)  # CallRecord: *Save to collection…*
    pinRequested = Signal(object, bool)  # CallRecord, pinned
    resendRequested = Signal(object)  # CallRecord: *Edit and resend…*
    openRequested = Signal(object)  # CallRecord: *Open in the tool panel*

    def __init__(self, connection: Callable[[], Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("callHistoryPane")
        self.connection = connection
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("callHistory")
        self.tree.setHeaderLabels(["time", "tool", "by", "outcome", "duration", "arguments"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.currentItemChanged.connect(self._current)
        self.tree.itemDoubleClicked.connect(lambda item, _c: self.rerunRequested.emit(item.data(0, RECORD_ROLE)))
        self.rerun = QPushButton("Re-run", self)
        self.rerun.setObjectName("rerunButton")
        self.rerun.setToolTip("Call the same tool again with the same arguments")
        self.rerun.clicked.connect(lambda: self.selected() and self.rerunRequested.emit(self.selected()))
        self.save = QPushButton("Save to collection…", self)
        self.save.setObjectName("historySaveButton")
        self.save.setToolTip("Keep this call as a step of a collection file, with what came back as its expectation")
        self.save.clicked.connect(lambda: self.selected() and self.saveRequested.emit(self.selected()))
        self.pin = QPushButton("Pin", self)
        self.pin.setObjectName("historyPinButton")
        self.pin.setCheckable(True)
        self.pin.setToolTip("Run this call again after each restart of a watched server (Server → Watch settings…, "
                            "run again: the pinned calls), its answer shown beside this one")
        self.pin.clicked.connect(lambda on: self.selected() and self.pinRequested.emit(self.selected(), on))
        self.resend = QPushButton("Edit and resend…", self)
        self.resend.setObjectName("historyResendButton")
        self.resend.setToolTip("Open this call's request as JSON, edit it and send it again with a fresh id "
                               "(the answer is paired in the traffic pane)")
        self.resend.clicked.connect(lambda: self.selected() and self.resendRequested.emit(self.selected()))
        self.open = QPushButton("Open in the tool panel", self)
        self.open.setObjectName("historyOpenButton")
        self.open.setToolTip("Show this call's tool with its form filled with the call's arguments, to edit and "
                             "call it yourself")
        self.open.clicked.connect(lambda: self.selected() and self.openRequested.emit(self.selected()))
        self.copy = QToolButton(self)
        self.copy.setObjectName("copyAsButton")
        self.copy.setText("Copy as")
        self.copy.setPopupMode(QToolButton.InstantPopup)
        menu = QMenu(self.copy)
        self.copy_actions = {}
        for kind, text in (("cli", "spyglass --cli command"), ("jsonrpc", "JSON-RPC request"),
                           ("curl", "curl command (HTTP servers)")):
            a = menu.addAction(text)
            a.setObjectName(f"copyAs_{kind}")
            a.triggered.connect(lambda _=False, k=kind: self.copy_as(k))
            self.copy_actions[kind] = a
        self.copy.setMenu(menu)
        self.note = QLabel(self)
        self.note.setObjectName("historyNote")
        self.note.setTextFormat(Qt.PlainText)
        row = QHBoxLayout()  # two lines of buttons: the History tab fits the answer's column beside the form
        row.addWidget(self.rerun)
        row.addWidget(self.save)
        row.addWidget(self.pin)
        row.addStretch(1)
        row2 = QHBoxLayout()
        row2.addWidget(self.resend)
        row2.addWidget(self.open)
        row2.addWidget(self.copy)
        row2.addWidget(self.note, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.tree, 1)
        lay.addLayout(row)
        lay.addLayout(row2)
        self._items: dict[int, QTreeWidgetItem] = {}
        self._update_buttons()

    def set_records(self, records: list[CallRecord]) -> None:
        self.tree.clear()
        self._items = {}
        for rec in records:
            self.add(rec, select=False)
        self._update_buttons()

    def add(self, rec: CallRecord, select: bool = True) -> None:
        item = QTreeWidgetItem()
        item.setData(0, RECORD_ROLE, rec)
        self.tree.insertTopLevelItem(0, item)
        self._items[rec.id] = item
        self.refresh(rec)
        if select:
            self.tree.blockSignals(True)
            self.tree.setCurrentItem(item)
            self.tree.blockSignals(False)
            self._update_buttons()

    def refresh(self, rec: CallRecord) -> None:
        item = self._items.get(rec.id)
        if item is None:
            return
        try:
            args = json.dumps(rec.arguments, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError):
            args = repr(rec.arguments)
        item.setText(0, time.strftime("%H:%M:%S", time.localtime(rec.wall)))
        item.setText(1, ("📌 " if rec.pinned else "") + visible(rec.tool, 80)
                     + (" (again)" if rec.again_of is not None else ""))
        item.setText(2, visible(rec.caller, 80) if rec.caller else "")
        item.setToolTip(2, f"made by {visible(rec.caller, 200)}" if rec.caller else "made in this window")
        item.setText(3, rec.outcome)
        item.setText(4, f"{rec.elapsed:.2f} s")
        item.setText(5, visible(args, 200))
        item.setForeground(3, theme.colour(_COLOUR.get(rec.outcome, "muted")))
        if item is self.tree.currentItem():
            self._update_buttons()  # a call that ended can be saved now, or was pinned

    def selected(self) -> CallRecord | None:
        item = self.tree.currentItem()
        return item.data(0, RECORD_ROLE) if item is not None else None

    def _current(self, item: QTreeWidgetItem | None, _prev: Any) -> None:
        self._update_buttons()
        if item is not None:
            self.recordSelected.emit(item.data(0, RECORD_ROLE))

    def _update_buttons(self) -> None:
        rec = self.selected()
        conn = self.connection()
        self.rerun.setEnabled(rec is not None)
        self.save.setEnabled(rec is not None and not rec.running)
        self.pin.setEnabled(rec is not None)
        self.pin.setChecked(rec is not None and rec.pinned)
        self.resend.setEnabled(rec is not None)
        self.open.setEnabled(rec is not None)
        self.copy.setEnabled(rec is not None)
        self.copy_actions["curl"].setEnabled(bool(conn is not None and getattr(conn.spec, "url", None)))

    def copy_as(self, kind: str) -> str | None:
        rec, conn = self.selected(), self.connection()
        if rec is None or conn is None:
            return None
        try:
            text = copy_text(rec, conn, kind)
        except ValueError as exc:
            self.note.setText(str(exc))
            return None
        QGuiApplication.clipboard().setText(text)
        self.note.setText({"cli": "Command line copied.", "jsonrpc": "JSON-RPC request copied.",
                           "curl": "curl command copied."}[kind])
        return text
