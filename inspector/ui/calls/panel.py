"""The selected tool, ready to call: header and badges, the generated form (`toolForm`), Call
(`callButton`, Ctrl+Enter) and Cancel (`cancelButton`), progress (`callProgress`, `callStatus`), the
result (`resultView`), the server's call history (`callHistory`) and the Load tab (`loadView`, load_view.py).

Calling: arguments are validated first (with problems the button offers "Call anyway"); tools that
may destroy ask first (confirm.py, QSettings `confirmPolicy`); the call runs as an asyncio task
(calls.py), so the window stays responsive and several calls run at once. The arguments of each
(server, tool) are remembered (forms.memory) and drafts survive switching tools.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...forms.memory import ArgumentMemory
from ...forms.validation import still_accepted
from ...protocol.tasks import TASKS_VERSION, task_support
from ...protocol.tasks import describe as describe_task
from ...session import CallRecord
from ...session.tools import HINTS_NOTE, app_summary, badges, display_name, flags, hints_tooltip, lists
from ..base import design, fit, theme
from ..base.badge import BadgeRow
from ..base.json_view import JsonView
from ..base.layout import title_label
from ..base.text import hidden_tooltip, plain_tooltip, visible, visible_block
from ..render.result_view import ResultView
from . import confirm
from .book import WindowCalls
from .history import CallHistory
from .load_view import LoadView
from .questions import run_dialog

log = logging.getLogger("spyglass.ui.tool_panel")

TICK_MS = 100
FORM_SHARE = 40  # of the panel's width, at first: the form's column; the answer gets the rest
_USER = Qt.ItemDataRole.UserRole  # a tool's name in the tool list, a server's id in the sidebar


class ToolCallPanel(QWidget):
    """Drop-in for the read-only ToolDetail: `show_tool(tool, change)`, `placeholder`, `tool`."""

    saveRequested = Signal(object)  # CallRecord: *Save to collection…* (here or from History)

    def __init__(self, parent: QWidget | None = None, *, calls: WindowCalls, connection: Callable[[], Any],
                 confirm_policy: Callable[[], str] = lambda: confirm.DEFAULT, memory: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolDetail")
        self.calls = calls
        self.connection = connection
        self.confirm_policy = confirm_policy
        self.memory = memory
        self.tool: dict[str, Any] | None = None
        self.change: str | None = None
        self.form: Any = None
        self._server_id: str | None = None
        self.findings: Callable[[str], list[str]] = lambda _name: []  # the live check's words about a tool
        self._anyway = False
        self._drafts: dict[tuple[str, str], Any] = {}
        self.dropped_arguments: list[str] = []  # what the last form left out of its draft (a changed schema)
        self.shown_record: CallRecord | None = None
        self._confirming = False
        self._task_box_tool: Any = None
        self._rounds_shown = self._trail_shown = -1
        self._build()
        self.calls.started.connect(self._call_started)
        self.calls.updated.connect(self._call_updated)
        self.calls.finished.connect(self._call_finished)
        self._ticker = QTimer(self)
        self._ticker.setObjectName("callTicker")
        self._ticker.setInterval(TICK_MS)
        self._ticker.timeout.connect(self._tick)
        self.repaint_views: list[QWidget] = []
        self._chips: dict[int, set[str]] = {}  # per view: the rows (tool names, server ids) last shown running
        # the interactive view of a call's tool, if it has one (MCP Apps): (connection, record) -> widget
        self.app_for: Callable[[Any, CallRecord], QWidget | None] | None = None
        self.show_tool(None)

    # ------------------------------------------------------------------ construction
    def _build(self) -> None:
        self.placeholder = QLabel("Select a tool to see what it does and what it takes.", self)
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.setObjectName("toolPlaceholder")
        # the form and the call beside the answer: the answer has the whole height, whatever the form's
        self.body = QSplitter(Qt.Horizontal, self)
        self.body.setObjectName("toolCallSplitter")
        self.body.setChildrenCollapsible(False)
        top = QWidget()  # in a column that scrolls where a short window (large text) cannot hold it
        t = QVBoxLayout(top)
        t.setContentsMargins(0, 0, 0, 0)
        t.setSpacing(design.space("hair"))
        self.title = title_label(top, "toolTitle")
        self.name = QLabel(top)
        self.name.setObjectName("toolName")
        self.name.setTextFormat(Qt.PlainText)
        self.name.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.badges = BadgeRow(top, name="toolBadges")  # filled, each with what it means
        self.flags = QLabel(top)
        self.flags.setObjectName("toolFlags")
        self.flags.setTextFormat(Qt.PlainText)
        self.flags.setWordWrap(True)
        self.description = QPlainTextEdit(top)
        self.description.setObjectName("toolDescription")
        self.description.setReadOnly(True)
        self.description.setMaximumHeight(80)
        for w in (self.title, self.name, self.badges, self.flags, self.description):
            t.addWidget(w)
        self.tabs = QTabWidget(top)
        self.tabs.setObjectName("toolTabs")
        self.tabs.setDocumentMode(True)
        self.form_host = QWidget(self.tabs)
        self.form_layout = QVBoxLayout(self.form_host)
        self.form_layout.setContentsMargins(design.margins("none", "xs", "none", "none"))
        self.tabs.addTab(self.form_host, "Arguments")
        schemas = QWidget(self.tabs)
        sl = QVBoxLayout(schemas)
        sl.setContentsMargins(design.margins("none", "xs", "none", "none"))
        sl.addWidget(QLabel("Input schema", schemas))
        self.schema = JsonView(schemas)
        self.schema.setObjectName("toolSchema")
        sl.addWidget(self.schema, 2)
        self.output_heading = QLabel("Output schema", schemas)
        sl.addWidget(self.output_heading)
        self.output_schema = JsonView(schemas)
        self.output_schema.setObjectName("toolOutputSchema")
        sl.addWidget(self.output_schema, 1)
        self.tabs.addTab(schemas, "Schema")
        self.tabs.currentChanged.connect(lambda _i: self._fit_form())
        t.addWidget(self.tabs, 1)
        # call row
        # wraps where the column is narrow (large text)
        row = fit.FlowLayout(spacing=design.space("s"), columns=6, fill=False)
        self.call_button = theme.mark_primary(QPushButton("Call", top))
        self.call_button.setObjectName("callButton")
        self.call_button.setToolTip("Call the tool with these arguments (Ctrl+Enter)")
        self.call_button.setDefault(True)
        self.call_button.clicked.connect(lambda: self.call())
        self.cancel_button = QPushButton("Cancel", top)
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.setToolTip("Cancel the call in flight (the server is told to stop)")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button = QPushButton("Save to collection…", top)
        self.save_button.setObjectName("saveCallButton")
        self.save_button.setToolTip("Keep the call shown as a step of a collection file, with what came back as "
                                    "its expectation")
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(
            lambda: self.shown_record is not None and self.saveRequested.emit(self.shown_record))
        self.task_box = QCheckBox("Run as a task", top)
        self.task_box.setObjectName("runAsTask")
        self.task_box.hide()
        self.progress = QProgressBar(top)
        self.progress.setObjectName("callProgress")
        self.progress.setTextVisible(True)
        self.progress.setMaximumWidth(220)
        self.progress.hide()
        self.call_status = QLabel(top)
        self.call_status.setObjectName("callStatus")
        self.call_status.setTextFormat(Qt.PlainText)
        self.call_status.setMinimumWidth(20)  # the words give way (their tooltip keeps them), not the answer's column
        row.addWidget(self.call_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.task_box)
        row.addWidget(self.progress)
        row.addWidget(self.call_status)
        row.addWidget(self.save_button)
        t.addLayout(row)
        self.problems = QLabel(top)
        self.problems.setObjectName("callProblems")
        self.problems.setTextFormat(Qt.PlainText)
        self.problems.setWordWrap(True)
        self.problems.hide()
        t.addWidget(self.problems)
        t.addStretch(0)  # what the form does not need stays under the call row, not inside the form
        # results
        self.result_tabs = QTabWidget(self.body)
        self.result_tabs.setObjectName("resultTabs")
        self.result_tabs.setDocumentMode(True)
        self.result_view = ResultView(self.result_tabs)
        self.history = CallHistory(self.connection_for_history, self.result_tabs)
        self.history.recordSelected.connect(self._history_selected)
        self.history.rerunRequested.connect(self.rerun)
        self.history.saveRequested.connect(self.saveRequested.emit)
        self.history.pinRequested.connect(self.calls.pin)
        self.result_tabs.addTab(self.result_view, "Result")
        self.result_tabs.addTab(self.history, "History")
        self.load_view = LoadView(self.result_tabs, connection=self.connection,
                                  confirm_policy=lambda: self.confirm_policy(),
                                  arguments=lambda: (self.form.value(), self.form.problem_count()) if self.form
                                  else ({}, 0), reveal_problems=lambda: self.form and self.form.reveal_problems())
        self.result_tabs.addTab(self.load_view, "Load")
        self.body.addWidget(fit.scroll_column(top, "toolColumn"))
        self.body.addWidget(self.result_tabs)
        self.body.setStretchFactor(0, 2)
        self.body.setStretchFactor(1, 3)  # the result gets the room; the divider moves (and is remembered)
        self.body.setSizes([FORM_SHARE, 100 - FORM_SHARE])
        self._body_sized = 0  # the width last shared out (unless a kept divider was restored, or it was moved)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("m", "none", "none", "none"))
        lay.addWidget(self.placeholder, 1)
        lay.addWidget(self.body, 1)

    def connection_for_history(self) -> Any:
        return self.connection()

    # ------------------------------------------------------------------ showing a tool
    def show_tool(self, tool: dict[str, Any] | None, change: str | None = None) -> None:
        conn = self.connection()
        sid = conn.server_id if conn is not None else None
        same_tool = tool is not None and self.tool is not None and tool.get("name") == self.tool.get("name") \
            and sid == self._server_id and self.form is not None
        # listed again (a restart, list_changed) with another schema: a new form, the values it still takes
        reshaped = same_tool and tool is not None and self.tool is not None \
            and tool.get("inputSchema") != self.tool.get("inputSchema")
        same = same_tool and not reshaped
        if not same:
            self._save_draft()
        self.tool, self.change = tool, change
        if sid != self._server_id:
            self._server_id = sid
            self.history.set_records(self.calls.records(sid) if sid else [])
        self.placeholder.setVisible(tool is None)
        self.body.setVisible(tool is not None)
        self.load_view.set_tool(tool)
        if tool is None:
            self._drop_form()
            self.shown_record = None
            self.result_view.show_above(None)
            self._update_call_row()
            return
        self.show_header(tool, change)
        if not same:
            self._build_form(tool, conn)
            if self.dropped_arguments:
                names = ", ".join(n or "the value" for n in self.dropped_arguments)
                text = self.flags.text()
                self.flags.setText((text + "; " if text else "⚠ ") + f"cleared {visible(names, 200)}: "
                                   "no longer fits the tool's schema")
                self.flags.show()
            rec = self.calls.last(sid, tool.get("name")) if sid else None
            if rec is not None:
                self.show_record(rec)
            else:
                self.shown_record = None
                self.result_view.clear()
                self.result_view.show_above(None)
        elif self.shown_record is not None:  # e.g. the theme changed: re-render with its colours
            self.show_record(self.shown_record)
        self._update_call_row()

    def server_changed(self) -> None:
        """Another server is selected: its tool list decides what is shown, so the tool of the server left
        goes (the list selects a tool of the same name again when the new server has one)."""
        conn = self.connection()
        sid = conn.server_id if conn is not None else None
        if sid != self._server_id:
            self._save_draft()
            self._server_id = sid
            self.history.set_records(self.calls.records(sid) if sid else [])
            if self.tool is not None:
                self.show_tool(None)

    def show_header(self, tool: dict[str, Any], change: str | None) -> None:  # (also when its findings change)
        self.title.setText(visible(display_name(tool), 300))
        support = task_support(tool)
        runs = {"required": " · runs only as a task (execution.taskSupport: required)",
                "optional": " · can run as a task (execution.taskSupport: optional)"}.get(support, "")
        self.name.setText(f"name: {visible(tool.get('name'), 300)}{runs}")
        self._show_task_box(tool)
        b = badges(tool)
        app = app_summary(tool)
        self.badges.set_badges([(x, x) for x in b], ("" if b else "No hints. ") + HINTS_NOTE
                               + (f"\n{visible(app, 400)}" if app else ""))
        self.badges.setToolTip(plain_tooltip(hints_tooltip(tool)))
        problems = flags(tool, set())
        if change == "removed":
            problems.insert(0, "removed: the server no longer lists this tool")
        elif change == "new":
            problems.insert(0, "new: appeared when the server said its tool list changed")
        elif change:
            problems.insert(0, f"{change} since the server was last listed")
        problems += [visible(f, 600) for f in self.findings(str(tool.get("name")))]  # the Check tab's, whole
        self.flags.setText("⚠ " + "; ".join(problems) if problems else "")
        self.flags.setVisible(bool(problems))
        self.flags.setStyleSheet(f"color: {theme.colour('warning').name()};")
        desc = tool.get("description")
        text = visible_block(desc) if isinstance(desc, str) and desc else "(no description)"
        self.description.setPlainText(text)
        self.description.setToolTip(hidden_tooltip(desc))
        fm = self.description.fontMetrics()
        lines = min(4, max(1, text.count("\n") + 1 + len(text) // 90))
        self.description.setFixedHeight(lines * fm.lineSpacing() + 14)
        if "inputSchema" in tool:
            self.schema.set_json(tool["inputSchema"])
        else:
            self.schema.setPlainText("(the server sent no inputSchema)")
        out = tool.get("outputSchema")
        self.output_heading.setVisible(out is not None)
        self.output_schema.setVisible(out is not None)
        if out is not None:
            self.output_schema.set_json(out)

    def _show_task_box(self, tool: dict[str, Any]) -> None:
        """"Run as a task": shown for tools that declare task support; ticked and fixed when it is required;
        disabled (saying why) when the connection's protocol has no tasks."""
        support = task_support(tool)
        conn = self.connection()
        client = conn.session.client if conn is not None else None
        box = self.task_box
        box.setVisible(support != "forbidden")
        if support == "forbidden":
            return
        if client is not None and not client.runs_tool_tasks:
            box.setChecked(False)
            box.setEnabled(False)
            box.setToolTip(f"Tasks exist only in protocol {TASKS_VERSION}; this connection uses "
                           f"{client.protocol_version or 'no protocol yet'}, so the tool is called plainly"
                           if not client.tasks_exist else
                           "The server does not declare tasks.requests.tools.call, so the tool is called plainly")
        elif support == "required":
            box.setChecked(True)
            box.setEnabled(False)
            box.setToolTip("This tool runs only as a task: the server answers with a task at once, Spyglass "
                           "follows it (tasks/get) and fetches the result (tasks/result); Cancel sends tasks/cancel")
        else:
            if not box.isEnabled() or self._task_box_tool != tool.get("name"):
                box.setChecked(False)
            box.setEnabled(True)
            box.setToolTip("Ask the server to run the call as a task: it answers at once, Spyglass follows the "
                           "task (tasks/get) and fetches the result (tasks/result); Cancel sends tasks/cancel")
        self._task_box_tool = tool.get("name")

    def _as_task(self, tool: dict[str, Any]) -> bool | None:
        """What the call asks for: None lets the client decide (a task when the tool requires one)."""
        if task_support(tool) == "optional" and not self.task_box.isHidden() and self.task_box.isEnabled():
            return self.task_box.isChecked()
        return None

    def _drop_form(self) -> None:
        if self.form is not None:
            self.form.hide()
            self.form.deleteLater()
            self.form = None

    def _build_form(self, tool: dict[str, Any], conn: Any) -> None:
        from ...forms import SchemaForm

        self._drop_form()
        schema = tool.get("inputSchema", {"type": "object"})
        self.form = SchemaForm(schema, self.form_host)
        self.form_layout.addWidget(self.form)
        key = (self._server_id or "", str(tool.get("name")))
        value = self._drafts.get(key)
        if value is None and self.memory is not None and conn is not None:
            value = self.memory.recall(self._memory_server(conn), key[1])
        self.dropped_arguments = []
        if value is not None:
            value, self.dropped_arguments = still_accepted(schema, value)
            try:
                self.form.set_value(value)
            except Exception:
                log.debug("could not restore arguments of %s", key, exc_info=True)
        self.form.submitted.connect(lambda: self.call())
        self.form.problemsChanged.connect(self._problems_changed)
        self._anyway = False
        self.problems.hide()
        self.call_button.setText("Call")
        self.tabs.setCurrentIndex(0)
        self.form.changed.connect(self._fit_form)
        QTimer.singleShot(0, self._fit_form)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        width = self.body.width()  # shared out again as the window's size changes, until the divider is moved
        if width not in (self._body_sized, 0) and self.body.isVisible() and not self.body.property("spyglassKept"):
            self._body_sized = width
            form = width * FORM_SHARE // 100
            self.body.setSizes([form, width - form])

    def _fit_form(self) -> None:
        """The form takes the height its fields need and no more: the call row follows its last field (a
        long form gets the column and scrolls; the Schema tab gets the column)."""
        if self.form is None:
            return
        if self.tabs.currentWidget() is not self.form_host:
            self.tabs.setMaximumHeight(16777215)
            return
        bar = self.tabs.tabBar().sizeHint().height()
        margins = self.form_layout.contentsMargins()
        self.tabs.setMaximumHeight(bar + margins.top() + margins.bottom() + self.form.natural_height() + 4)

    def _save_draft(self) -> None:
        if self.form is not None and self.tool is not None and self._server_id is not None:
            try:
                self._drafts[(self._server_id, str(self.tool.get("name")))] = self.form.value()
            except Exception:
                pass

    @staticmethod
    def _memory_server(conn: Any) -> str:
        return getattr(conn, "catalog_id", None) or conn.spec.name

    def _problems_changed(self, n: int) -> None:
        if n == 0:
            self._anyway = False
            self.call_button.setText("Call")
            self.problems.hide()
        elif self._anyway:
            self.problems.setText(self._problem_text(n))

    def _problem_text(self, n: int) -> str:
        return (f"{n} problem{'s' if n != 1 else ''} in the arguments (marked in the form). Fix them, or press "
                "“Call anyway” to send them as they are and see what the server's own validation says.")

    # ------------------------------------------------------------------ calling
    def call(self, anyway: bool = False) -> CallRecord | None:
        """Validate, confirm when the policy says so, then start the call. Returns the record when it
        started at once (None when it waits for a confirmation, or cannot start)."""
        tool, conn = self.tool, self.connection()
        if self._watched():
            return None
        if tool is None or self.form is None:
            return None
        if conn is None or (conn.session.client is None and not getattr(conn.session, "takes_calls", False)):
            self._say("Not connected: connect the server first.", "error")
            return None
        args = self.form.value()
        n = self.form.problem_count()
        if n and not (anyway or self._anyway):
            self.form.reveal_problems()
            self._anyway = True
            self.call_button.setText("Call anyway")
            self.problems.setText(self._problem_text(n))
            self.problems.setStyleSheet(f"color: {theme.colour('error').name()};")
            self.problems.show()
            return None
        anyway = bool(n)
        if confirm.needs_confirmation(tool, self.confirm_policy()):
            if not self._confirming:
                self._confirming = True
                task = asyncio.ensure_future(self._confirm_then_call(conn, tool, args, anyway))
                task.add_done_callback(lambda t: t.cancelled() or t.exception())
            return None
        return self._start(conn, tool, args, anyway)

    async def _confirm_then_call(self, conn: Any, tool: dict[str, Any], args: Any, anyway: bool,
                                 as_task: Any = ...) -> None:
        try:
            dialog = confirm.ConfirmDialog(tool, args, self.window())
            code = await run_dialog(dialog)
        finally:
            self._confirming = False
        if code == confirm.ConfirmDialog.Accepted:
            self._start(conn, tool, args, anyway, as_task)
        else:
            self._say("Not called: you cancelled the confirmation.", "muted")

    def not_here(self, conn: Any, tool: dict[str, Any]) -> str | None:
        """Why `tool` may not be called on `conn` now (None: it may): a call goes only to the selected server,
        and only with a tool that server lists (or listed: a removed one is still shown, struck through)."""
        if conn is None or conn is not self.connection() or conn.server_id != self._server_id:
            return "the selected server changed"
        if not lists(conn.session.tools, tool.get("name")):
            return f"{visible(conn.name, 80)} does not list the tool {visible(tool.get('name'), 80)}"
        return None

    def _start(self, conn: Any, tool: dict[str, Any], args: Any, anyway: bool,
               as_task: Any = ...) -> CallRecord | None:
        why = self.not_here(conn, tool)
        if why is not None:
            self._say(f"Not called: {why}.", "error")
            return None
        if self.memory is not None:
            try:
                self.memory.remember(self._memory_server(conn), str(tool.get("name")), args, tool.get("inputSchema"))
            except Exception:
                log.debug("remembering arguments", exc_info=True)
        rec = self.calls.call(conn, str(tool.get("name")), args, tool, anyway=anyway,
                              as_task=self._as_task(tool) if as_task is ... else as_task)
        return rec

    def rerun(self, rec: CallRecord | None) -> None:
        conn = self.connection()
        if rec is None or conn is None or rec.server_id != conn.server_id or conn.session.client is None \
                and not getattr(conn.session, "takes_calls", False):
            return
        tool = rec.tool_def or {"name": rec.tool}
        if confirm.needs_confirmation(tool, self.confirm_policy()):
            self._confirming = True
            task = asyncio.ensure_future(self._confirm_then_call(conn, tool, rec.arguments, rec.validated_anyway,
                                                                 rec.as_task))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            return
        self._start(conn, tool, rec.arguments, rec.validated_anyway, rec.as_task)

    def cancel(self) -> None:
        rec = self._running_here()
        if rec is not None:
            self.calls.cancel(rec)

    def _running_here(self) -> CallRecord | None:
        if self.shown_record is not None and self.shown_record.running:
            return self.shown_record
        if self.tool is None or self._server_id is None:
            return None
        run = self.calls.running(self._server_id, self.tool.get("name"))
        return run[-1] if run else None

    def reader_for(self, conn: Any) -> Callable[[str], Any] | None:
        """What a resource link's Read button calls: resources/read on that server."""
        return conn.session.library.read if conn is not None else None

    # ------------------------------------------------------------------ call events
    def _is_here(self, rec: CallRecord) -> bool:
        return self.tool is not None and rec.server_id == self._server_id and rec.tool == self.tool.get("name")

    def _call_started(self, rec: CallRecord) -> None:
        if rec.server_id == self._server_id:
            self.history.add(rec)
        if self._is_here(rec):
            self.show_record(rec)
            self.result_tabs.setCurrentWidget(self.result_view)
        self._update_call_row()
        # the mark may be painted before the ticker's first turn (a fast call): its end must repaint it away
        for v in self.repaint_views:
            self._chips.setdefault(id(v), set()).update({rec.server_id, rec.tool})
        if not self._ticker.isActive():
            self._ticker.start()

    def _call_updated(self, rec: CallRecord) -> None:
        if rec.server_id == self._server_id:
            self.history.refresh(rec)  # pinned, or a task's state
        if rec is self.shown_record:
            if (rec.rounds and len(rec.rounds) != self._rounds_shown) or len(rec.task_trail) != self._trail_shown:
                self.show_record(rec)
            self._update_call_row()

    def _call_finished(self, rec: CallRecord) -> None:
        self.history.refresh(rec)
        if rec is self.shown_record or (self._is_here(rec) and (self.shown_record is None
                                                                  or not self.shown_record.running)):
            self.show_record(rec)
        self._update_call_row()
        self._repaint_views()

    def show_record(self, rec: CallRecord) -> None:
        self.shown_record = rec
        self._rounds_shown = len(rec.rounds)
        self._trail_shown = len(rec.task_trail)
        conn = self.connection()
        reader = self.reader_for(conn) if conn is not None and conn.server_id == rec.server_id else None
        self.result_view.show_record(rec, reader)
        here = conn is not None and conn.server_id == rec.server_id
        self.result_view.show_above(self.app_for(conn, rec) if self.app_for is not None and here else None)
        if self._watched() and self.form is not None and isinstance(rec.arguments, dict) and self._is_here(rec):
            try:
                self.form.set_value(rec.arguments)  # what the host sent, to read (the call is the host's)
            except Exception:
                log.debug("the host's arguments do not fit the form of %s", rec.tool, exc_info=True)

    def _history_selected(self, rec: CallRecord) -> None:
        if rec is not None and rec is not self.shown_record:
            self.show_record(rec)
            self._update_call_row()

    def _tick(self) -> None:
        running = self.calls.running()
        if self.shown_record is not None and self.shown_record.running:
            self.result_view.update_status()
            self._update_call_row()
        for rec in running:
            if rec.server_id == self._server_id:
                self.history.refresh(rec)
        self._repaint_views()
        if not running:
            self._ticker.stop()

    def _repaint_views(self) -> None:
        """Repaint the rows of the tool list and the sidebar whose "running" chip ticks: only those (a row's
        delegate paints in Python, and a flood of notifications keeps the loop busy enough as it is); a view
        whose running rows went away is repainted once, whole."""
        running = self.calls.running()
        keys = {r.server_id for r in running} | {r.tool for r in running if r.server_id == self._server_id}
        for v in self.repaint_views:
            try:
                if self._chips.get(id(v), set()) - keys:
                    v.viewport().update()
                else:
                    self._repaint_rows(v, keys)
                self._chips[id(v)] = keys
            except RuntimeError:
                pass

    @staticmethod
    def _repaint_rows(view: Any, keys: set[str]) -> None:
        if not keys:
            return
        port = view.viewport()
        index = view.indexAt(QPoint(2, 2))
        bottom = port.height()
        while index.isValid():
            rect = view.visualRect(index)
            if rect.top() > bottom:
                break
            if index.data(_USER) in keys:
                port.update(rect)
            index = view.indexBelow(index) if hasattr(view, "indexBelow") else index.siblingAtRow(index.row() + 1)

    def _say(self, text: str, colour: str = "muted") -> None:
        self.call_status.setText(text)
        self.call_status.setToolTip(text)
        self.call_status.setStyleSheet(f"color: {theme.colour(colour).name()};")

    def _watched(self) -> bool:
        """A tapped server: its host makes the calls, Spyglass watches (an agent's takes yours: `takes_calls`)."""
        conn = self.connection()
        s = conn.session if conn is not None else None
        return s is not None and bool(getattr(s, "read_only", False)) and not getattr(s, "takes_calls", False)

    def _update_call_row(self) -> None:
        watched = self._watched()
        self.call_button.setEnabled(not watched)
        self.call_button.setToolTip("A tapped server: its host makes the calls; Spyglass only watches" if watched
                                    else "Call the tool with these arguments (Ctrl+Enter)")
        self.history.rerun.setEnabled(not watched and self.history.selected() is not None)
        rec = self._running_here()
        self.cancel_button.setEnabled(rec is not None)
        shown = self.shown_record
        self.save_button.setEnabled(shown is not None and self._is_here(shown) and not shown.running)
        if rec is None:
            self.progress.hide()
            shown = self.shown_record
            if shown is not None and self._is_here(shown) and not shown.running:
                self._say(f"Last call: {shown.summary()}", "muted")
            elif self.tool is not None:
                self._say("", "muted")
            others = [r for r in self.calls.running(self._server_id) if self.tool and r.tool != self.tool.get("name")] \
                if self._server_id else []
            if others:
                self._say(f"{len(others)} other call{'s' if len(others) != 1 else ''} running on this server",
                          "connecting")
            return
        self.progress.show()
        if rec.total and rec.progress is not None and rec.total > 0:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(max(0.0, min(1.0, rec.progress / rec.total)) * 1000))
            self.progress.setFormat(f"{rec.progress:g} / {rec.total:g}")
        else:
            self.progress.setRange(0, 0)  # busy
            self.progress.setFormat(f"{rec.progress:g}" if rec.progress is not None else "")
        text = f"Running · {rec.elapsed:.1f} s"
        if rec.task_status is not None:
            text += (
                f" · task {visible(describe_task({'status': rec.task_status, 'statusMessage': rec.task_message}), 200)}"
            )
        if rec.message:
            text += f" · {visible(rec.message, 200)}"
        if rec.rounds and not rec.rounds[-1].answered and rec.rounds[-1].error is None:
            text += " · the server is waiting for your answer"
        self._say(text, "connecting")


def argument_memory(settings: QSettings | None) -> ArgumentMemory:
    """The arguments remembered per server and tool, in a file beside the settings (in memory only when it
    cannot be used)."""
    try:
        return ArgumentMemory(argument_memory_path(settings))
    except Exception:
        log.warning("argument memory unavailable; arguments are remembered for this run only", exc_info=True)
        return ArgumentMemory(None)


def argument_memory_path(settings: QSettings | None) -> Path | None:
    """Where remembered arguments live: beside the settings file (None: in memory only)."""
    if settings is None:
        return None
    name = settings.fileName()
    if not name:
        return None
    return Path(name).resolve().parent / "spyglass-arguments.json"
