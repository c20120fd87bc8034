"""The Tasks tab (`tasksPane`): the server's tasks (MCP 2025-11-25 `tasks/list`), each task's state,
`tasksCancel` (`tasks/cancel`) and `taskResultButton` (`tasks/result`, shown with the result renderers).

Only servers on protocol 2025-11-25 that declare `tasks.list` have a list; the pane says so otherwise.
While the tab is shown, the list is asked again when a call of this window runs as a task or changes
state, and every few seconds while a listed task is still running.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QSplitter, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from ... import errors as E
from ...protocol import tasks as T
from ...session import Status
from ..base import design, theme
from ..base.empty import EmptyState
from ..base.json_view import JsonView
from ..base.layout import heading_label, plain_label, scrolling_column
from ..base.tasks import spawn
from ..base.text import visible
from ..render.results import ContentView
from ..servers.connection import Connection

log = logging.getLogger("spyglass.ui.tasks")

REFRESH_MS = 2000  # the list is asked again this often while shown and a task is still running
COLUMNS = ("Task", "Status", "Message", "Created", "Updated", "TTL")
TASK_ROLE = Qt.UserRole + 1


def when(stamp: Any) -> str:
    """An ISO 8601 timestamp in local time, to the second (the text itself when it is not one)."""
    moment = T.parse_stamp(stamp)
    if moment is None:
        return visible(stamp, 40) if isinstance(stamp, str) else ""
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def ttl_text(task: dict[str, Any]) -> str:
    ttl = task.get("ttl")
    if not isinstance(ttl, int) or isinstance(ttl, bool):
        return "unlimited" if "ttl" in task and ttl is None else ""
    return f"{ttl / 1000:g} s" if ttl < 120_000 else f"{ttl / 60_000:g} min"


class TasksPane(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tasksPane")
        self.conn: Connection | None = None
        self.tasks: list[dict[str, Any]] = []
        self.result: dict[str, Any] | None = None
        self._jobs: set[asyncio.Task[Any]] = set()
        self._listing: Connection | None = None  # the connection a tasks/list is under way for
        self._statuses: dict[tuple[str, str], str | None] = {}  # (server, task) -> last status seen in a call
        self._waiting: str | None = None  # the task whose tasks/result is awaited
        top = QWidget(self)
        self.refresh_button = QPushButton("Refresh", top)
        self.refresh_button.setObjectName("tasksRefresh")
        self.refresh_button.setToolTip("Ask the server for its tasks again (tasks/list)")
        self.refresh_button.clicked.connect(self.refresh)
        self.cancel_button = QPushButton("Cancel task", top)
        self.cancel_button.setObjectName("tasksCancel")
        self.cancel_button.setToolTip("Ask the server to stop the selected task (tasks/cancel)")
        self.cancel_button.clicked.connect(self.cancel_selected)
        self.result_button = QPushButton("Get result", top)
        self.result_button.setObjectName("taskResultButton")
        self.result_button.setToolTip("Fetch the selected task's result (tasks/result); for a task still "
                                      "running, the server answers when it ends")
        self.result_button.clicked.connect(self.fetch_result)
        self.count = plain_label(top, "tasksCount", wrap=False)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for w in (self.refresh_button, self.cancel_button, self.result_button):
            row.addWidget(w)
        row.addWidget(self.count, 1)
        self.message = plain_label(top, "tasksMessage")
        self.message.hide()
        self.tree = QTreeWidget(top)
        self.tree.setObjectName("taskList")
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setColumnWidth(0, 260)
        self.tree.setColumnWidth(1, 110)
        self.tree.setColumnWidth(2, 300)
        self.tree.setColumnWidth(3, 150)
        self.tree.setColumnWidth(4, 150)
        self.tree.currentItemChanged.connect(lambda *_: self._show_selected())
        t = QVBoxLayout(top)
        t.setContentsMargins(design.margins("none", "xs", "none", "none"))
        t.addLayout(row)
        t.addWidget(self.message)
        t.addWidget(self.tree, 1)
        # the selected task: its JSON, then its result once fetched
        self.detail = JsonView(self)
        self.detail.setObjectName("taskDetail")
        self.detail.setMaximumHeight(150)
        self.result_note = plain_label(self, "taskResultNote", selectable=True)
        self.result_view = ContentView(self)
        self.result_view.setObjectName("taskResult")
        self.result_view.hide()
        bottom = scrolling_column(self, "taskDetailScroll", heading_label("Selected task", self), self.detail,
                                  self.result_note, self.result_view)
        split = QSplitter(Qt.Vertical, self)
        split.setChildrenCollapsible(False)
        split.addWidget(top)
        split.addWidget(bottom)
        split.setSizes([300, 300])
        self.empty = EmptyState(self, "tasksEmpty", actions=[("Refresh", "tasksEmptyRefresh", self.refresh)])
        self.split = split
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("s", "none", "none", "none"))
        lay.addWidget(split, 1)
        lay.addWidget(self.empty, 1)
        self._timer = QTimer(self)
        self._timer.setObjectName("tasksRefreshTimer")
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._tick)
        self.show_connection(None)

    # ------------------------------------------------------------------ connection
    def show_connection(self, conn: Connection | None) -> None:
        if conn is not self.conn:
            if self.conn is not None:
                try:
                    self.conn.statusChanged.disconnect(self._status_changed)
                except (RuntimeError, TypeError):
                    pass
            self.conn = conn
            self.tasks, self.result, self._waiting = [], None, None
            for job in list(self._jobs):  # the old server's list, result or cancel: of no use here
                job.cancel()
            if conn is not None:
                conn.statusChanged.connect(self._status_changed)
        self._status_changed()

    def available(self) -> tuple[bool, str]:
        """Whether the selected server has a task list, and if not, why (for the user)."""
        conn = self.conn
        if conn is None:
            return False, "Select a server to see its tasks."
        client = conn.session.client
        if client is None or conn.session.status is not Status.CONNECTED:
            return False, "Not connected."
        if not client.tasks_exist:
            return False, (f"Tasks exist in protocol {T.TASKS_VERSION}; this connection uses "
                           f"{client.protocol_version or 'another version'}, which has none.")
        if not client.server_can("list"):
            return False, ("This server does not list its tasks (no tasks.list capability). Tasks of calls "
                           "made here are followed in the call's result.")
        return True, ""

    def _status_changed(self) -> None:
        ok, why = self.available()
        self.refresh_button.setEnabled(ok)
        if not ok:
            self.tasks = []
            self._fill()  # the empty state says why
            self._say("", "muted")
        else:
            if self.message.text() and not self.message.text().startswith("tasks/"):
                self._say("", "muted")  # an earlier "Not connected." and the like
            if self.isVisible():
                self.refresh()
        self._update_buttons()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if self.available()[0]:
            self.refresh()
        self._timer.start()

    def hideEvent(self, event: Any) -> None:
        super().hideEvent(event)
        self._timer.stop()

    def call_updated(self, rec: Any) -> None:
        """A call of this window changed (CallManager.updated): when its task has a new status, and the
        list does not show it that way yet, list again."""
        task_id, status = rec.task_id, rec.task_status
        if task_id is None or self._statuses.get((rec.server_id, task_id), "") == status:
            return  # progress and the like: nothing new about the task
        self._statuses[(rec.server_id, task_id)] = status
        if (self.conn is None or self.conn.server_id != rec.server_id or not self.isVisible()
                or not self.available()[0]):
            return
        if not any(t.get("taskId") == task_id and t.get("status") == status for t in self.tasks):
            self.refresh()

    def _tick(self) -> None:
        if self.available()[0] and any(t.get("status") not in T.TERMINAL for t in self.tasks):
            self.refresh()

    # ------------------------------------------------------------------ listing
    def refresh(self) -> None:
        if self._listing is self.conn or not self.available()[0]:
            return
        self._listing = self.conn
        spawn(self._list(self.conn), self._jobs, self._failed, "tasks/list")

    async def _list(self, conn: Connection | None) -> None:
        try:
            result = await conn.session.client.list_tasks()
        except E.SpyglassError as exc:
            if conn is self.conn:
                self._say(f"tasks/list failed: {exc.message}", "error")
            return
        finally:
            if self._listing is conn:
                self._listing = None
        if conn is not self.conn:
            return
        self.tasks = result["tasks"]
        self._fill()
        if self.message.text().startswith("tasks/list failed"):
            self._say("", "muted")

    def _fill(self) -> None:
        selected = self.selected_id()
        self.tree.blockSignals(True)
        try:
            self.tree.clear()
            for task in self.tasks:
                status = str(task.get("status"))
                item = QTreeWidgetItem([visible(task.get("taskId"), 120), status.replace("_", " "),
                                        visible(task.get("statusMessage") or "", 300), when(task.get("createdAt")),
                                        when(task.get("lastUpdatedAt")), ttl_text(task)])
                item.setData(0, TASK_ROLE, task.get("taskId"))
                colour = {"completed": "connected", "failed": "error", "cancelled": "removed",
                          "input_required": "warning"}.get(status, "connecting")
                item.setForeground(1, theme.colour(colour))
                item.setToolTip(2, visible(task.get("statusMessage") or "", 2000))
                self.tree.addTopLevelItem(item)
                if task.get("taskId") == selected:
                    self.tree.setCurrentItem(item)
        finally:
            self.tree.blockSignals(False)
        running = sum(1 for t in self.tasks if t.get("status") not in T.TERMINAL)
        n = len(self.tasks)
        ok, why = self.available()
        self.count.setText(f"{n} task{'s' if n != 1 else ''}" + (f", {running} running" if running else "")
                           if ok else "")
        self._show_empty(ok, why)
        self._show_selected()

    def _show_empty(self, ok: bool, why: str) -> None:
        """No task to list: a sentence (why, and how a task starts) instead of an empty table and detail."""
        self.split.setVisible(bool(self.tasks))
        self.empty.setVisible(not self.tasks)
        if ok:
            self.empty.say("No tasks yet", "A task starts when a tool that supports tasks is called (the Tools "
                           "tab marks them); its status, message and result are shown here while it runs and "
                           "after it ends. Refresh asks the server for its list again.")
        else:
            self.empty.say("No task list", why)
        self.empty.buttons["tasksEmptyRefresh"].setVisible(ok)

    # ------------------------------------------------------------------ the selected task
    def selected_id(self) -> str | None:
        item = self.tree.currentItem()
        return item.data(0, TASK_ROLE) if item is not None else None

    def selected(self) -> dict[str, Any] | None:
        tid = self.selected_id()
        return next((t for t in self.tasks if t.get("taskId") == tid), None)

    def select(self, task_id: str) -> bool:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item.data(0, TASK_ROLE) == task_id:
                self.tree.setCurrentItem(item)
                return True
        return False

    def _show_selected(self) -> None:
        task = self.selected()
        if task is None:
            self.detail.setPlainText("")
        else:
            self.detail.set_json(task)
        if task is None or (self.result is not None and self.result.get("_task") != task.get("taskId")):
            self.result = None
            self.result_note.setText("")
            self.result_view.set_blocks([])
            self.result_view.hide()
        self._update_buttons()

    def _update_buttons(self) -> None:
        ok = self.available()[0]
        task = self.selected()
        running = task is not None and task.get("status") not in T.TERMINAL
        client = self.conn.session.client if self.conn is not None else None
        self.cancel_button.setEnabled(ok and running and bool(client and client.server_can("cancel")))
        self.result_button.setEnabled(ok and task is not None and self._waiting is None)
        self.result_button.setText("Wait for result" if running else "Get result")

    def cancel_selected(self) -> None:
        task = self.selected()
        if task is None or self.conn is None:
            return
        spawn(self._cancel(self.conn, str(task.get("taskId"))), self._jobs, self._failed, "tasks/cancel")

    async def _cancel(self, conn: Connection, tid: str) -> None:
        try:
            answer = await conn.session.client.cancel_task(tid)
        except E.SpyglassError as exc:
            if conn is self.conn:
                self._say(f"tasks/cancel {visible(tid, 80)} failed: {exc.message}", "error")
            return
        if conn is self.conn:
            status = answer.get("status") if isinstance(answer, dict) else None
            self._say(f"Task {visible(tid, 80)}: {status or 'cancel sent'}.", "muted")
            self.refresh()

    def fetch_result(self) -> None:
        task = self.selected()
        if task is None or self.conn is None or self._waiting is not None:
            return
        tid = str(task.get("taskId"))
        self._waiting = tid
        self.result_note.setText(
            f"Waiting for the result of task {visible(tid, 80)} (tasks/result)…"
            if task.get("status") not in T.TERMINAL
            else "Fetching the result…"
        )
        self._update_buttons()
        spawn(self._fetch(self.conn, tid), self._jobs, self._failed, "tasks/result")

    async def _fetch(self, conn: Connection, tid: str) -> None:
        try:
            result = await conn.session.client.task_result(tid)
        except E.RemoteError as exc:
            result, error = None, f"The server refused tasks/result: {exc.code} {exc.rpc_message}"
        except E.SpyglassError as exc:
            result, error = None, f"tasks/result failed: {exc.message}"
        else:
            error = None
        finally:
            if conn is self.conn:
                self._waiting = None
        if conn is not self.conn:
            return
        if self.selected_id() != tid:
            self.select(tid)
        if error is not None:
            self.result = {"_task": tid}
            self.result_note.setText(error)
            self.result_note.setStyleSheet(f"color: {theme.colour('error').name()};")
            self.result_view.set_blocks([])
            self.result_view.hide()
        else:
            self.result = {**result, "_task": tid}
            failed = result.get("isError") is True
            self.result_note.setText("The tool ran and failed:" if failed else "Result (tasks/result):")
            self.result_note.setStyleSheet(f"color: {theme.colour('error' if failed else 'muted').name()};")
            blocks = result.get("content")
            self.result_view.set_blocks(
                blocks if isinstance(blocks, list) else [], reader=conn.session.client.read_resource
            )
            self.result_view.show()
        self._update_buttons()
        self.refresh()

    # ------------------------------------------------------------------ messages
    def _say(self, text: str, level: str) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {theme.colour(level).name()};")
        self.message.setVisible(bool(text))

    def _failed(self, exc: BaseException) -> None:
        self._say(f"Internal error: {type(exc).__name__}: {exc}", "error")
