"""The person in charge of the agents' servers: who made each call, taking a call over, disconnecting.

- Who made a call: the background process says who asks for each call before the call's first frame reaches
  the window (a `call` event: `by` — `agent`, or `person` — and `client`, the agent's MCP clientInfo or
  `spyglass do`); `Callers` marks the record the frames make with it (`CallRecord.caller`, e.g.
  `agent: Claude Code`), which History shows in its "by" column.
- Taking a call over: on an agent's server the tool panel calls too (`PersonCalls`): the call goes through the
  background process as the person's (`spyglass_call` with `by: person`, let through: the window asked its own
  confirmation first), marked `you`, and the frames it causes then follow that record (`TappedSession.adopt`).
  History's "Open in the tool panel" (`historyOpenButton`) shows a call's tool with the form filled with its
  arguments, to edit and call (`TakeOver.open_call`). Cancelling it cancels the request in the background
  process (`Remote.request` sends `{"cancel": ID}`), which cancels the call on the wire: the server is sent
  `notifications/cancelled`.
- Disconnecting: Server → Disconnect the agent's server (`actionAgentDisconnect`) closes the selected agent's
  server in the background process (its process group stopped); the agent is told it is gone when it next asks.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from ...agent.errors import AgentError
from ...agent.remote import Remote
from ...session import CANCELLED, FAILED, OK, CallRecord, Status
from ...session.calls import CallBook
from ..base.tasks import spawn
from ..base.text import visible

if TYPE_CHECKING:
    from .main_window import MainWindow

YOU = "you"
WINDOW_CLIENT = "Spyglass window"


class PersonCalls(CallBook):
    """The calls of an agent's server as the window sees them: the agent's (made from the frames) and the
    person's own (sent through the background process, then followed by the frames)."""

    def __init__(self, server_id: str, server_name: Callable[[], str], new_id: Callable[[], int]) -> None:
        super().__init__(server_id, lambda: None, server_name)
        self.new_id = new_id
        self.remote: Callable[[], Remote | None] = lambda: None
        self.awaiting: list[CallRecord] = []  # the person's calls whose tools/call frame has not come yet
        # cancelled before their frame came: the frame may still come (the background process had started the
        # call), and is theirs only when the background process announced a person's call of that tool first
        self.given_up: deque[CallRecord] = deque(maxlen=16)
        self.announced: deque[tuple[str, str]] = deque(maxlen=64)  # person's calls started, frame not yet seen

    def call(self, tool: str, arguments: Any, tool_def: dict[str, Any] | None = None, *,
             anyway: bool = False, as_task: bool | None = None, again_of: int | None = None) -> CallRecord:
        rec = CallRecord(self.new_id(), self.server_id, tool, arguments, tool_def, validated_anyway=anyway,
                         again_of=again_of, caller=YOU)
        self.history.append(rec)
        self.awaiting.append(rec)
        rec.job = asyncio.ensure_future(self._through_agent(rec))
        rec.job.add_done_callback(lambda t: t.cancelled() or t.exception())
        rec.job.add_done_callback(lambda t: self._never_sent(rec, t))
        self.started.emit(rec)
        return rec

    def _never_sent(self, rec: CallRecord, job: asyncio.Future[Any]) -> None:
        """A call cancelled before its task ran at all (its `except` never ran): it ends all the same."""
        if job.cancelled() and rec.running:
            if rec in self.awaiting:
                self.awaiting.remove(rec)
            self._end(rec, CANCELLED, error_text="cancelled by you before it was sent")

    def claim(self, tool: str, arguments: Any) -> CallRecord | None:
        """The person's call a `tools/call` frame carries, if it is one (the oldest such of that tool)."""
        key = _key(tool, arguments)
        announced = key in self.announced
        if announced:
            self.announced.remove(key)
        for rec in self.awaiting:
            if _key(rec.tool, rec.arguments) == key:
                self.awaiting.remove(rec)
                return rec
        for rec in self.given_up if announced else ():
            if _key(rec.tool, rec.arguments) == key:
                self.given_up.remove(rec)
                return rec
        return None

    def told(self, event: dict[str, Any]) -> None:
        """A person's call the background process started (its frame follows) or finished (no frame follows
        any more)."""
        key = _key(str(event.get("tool")), event.get("arguments"))
        if event.get("phase") == "started":
            self.announced.append(key)
        elif key in self.announced:
            self.announced.remove(key)

    async def _through_agent(self, rec: CallRecord) -> None:
        try:
            remote = self.remote()
            if remote is None:
                raise AgentError("the window no longer watches the agents: Server → Watch agents", "closed")
            reply = await remote.request("spyglass_call", {
                "server": self._name(), "tool": rec.tool, "validate": False,
                "arguments": rec.arguments if isinstance(rec.arguments, dict) else {}},
                allow_writes=True, by="person", client=WINDOW_CLIENT)
        except asyncio.CancelledError:
            if rec.running:  # `Remote.request` told the background process, which cancels the call on the wire
                self._end(rec, CANCELLED, error_text="cancelled by you; the server was told to stop")
            raise
        except AgentError as exc:
            if rec.running:
                self._end(rec, FAILED, error_text=exc.message)
        else:
            if rec.running:  # the frames did not settle it (a frame cut short, or none reached this window)
                rec.result = reply.get("result")
                outcome = reply.get("outcome")
                self._end(rec, outcome if isinstance(outcome, str) else OK, error_text=str(reply.get("error") or ""))
        finally:
            if rec in self.awaiting:
                self.awaiting.remove(rec)
                if rec.outcome == CANCELLED:
                    self.given_up.append(rec)


def _key(tool: str, arguments: Any) -> tuple[str, str]:
    return tool, json.dumps({} if arguments is None else arguments, sort_keys=True, default=str)


def caller_of(event: dict[str, Any]) -> str:
    """How History names who made a call, from the background process's `call` event."""
    if event.get("by") == "person":
        return YOU
    client = event.get("client")
    return f"agent: {visible(client, 80)}" if isinstance(client, str) and client else "agent"


class Callers:
    """The `call` events of one agent's server, waiting for the records its frames make."""

    def __init__(self, calls: PersonCalls) -> None:
        self.calls = calls
        self.told: deque[dict[str, Any]] = deque(maxlen=256)
        calls.started.connect(self._started)

    def told_of(self, event: dict[str, Any]) -> None:
        if event.get("by") == "person":  # the person's own are claimed
            self.calls.told(event)
        elif event.get("phase") == "started":
            self.told.append(event)

    def _started(self, rec: CallRecord) -> None:
        if rec.caller is not None:
            return
        event = next((e for e in self.told if e.get("tool") == rec.tool and e.get("arguments") == rec.arguments),
                     None) or next((e for e in self.told if e.get("tool") == rec.tool), None)
        if event is not None:
            self.told.remove(event)
        rec.caller = caller_of(event or {})  # a call on an agent's server that nobody announced is still an agent's
        self.calls.updated.emit(rec)


class TakeOver(QObject):
    """The window's side: the Disconnect action and History's "Open in the tool panel"."""

    def __init__(self, window: MainWindow, remote: Callable[[], Remote | None],
                 is_agents: Callable[[Any], bool]) -> None:
        super().__init__(window)
        self.window = window
        self.remote = remote
        self.is_agents = is_agents
        self.closed_by_you: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.act_disconnect = QAction("Disconnect the agent's server", window)
        self.act_disconnect.setObjectName("actionAgentDisconnect")
        self.act_disconnect.setToolTip("Close the selected agent's server in the background process (a stdio "
                                       "server is stopped); the agent is told it is gone when it next asks")
        self.act_disconnect.triggered.connect(self.disconnect_selected)
        self.act_disconnect.setEnabled(False)
        menu = window.findChild(QMenu, "serverMenu")
        if menu is not None:
            menu.addAction(self.act_disconnect)
        window.selectionChanged.connect(self._selection)
        window.tool_detail.history.openRequested.connect(self.open_call)

    def _selection(self) -> None:
        conn = self.window.selected_connection()
        self.act_disconnect.setEnabled(conn is not None and self.is_agents(conn.session)
                                       and conn.session.status is not Status.EXITED)

    def disconnect_selected(self) -> asyncio.Task[Any] | None:
        conn = self.window.selected_connection()
        remote = self.remote()
        if conn is None or not self.is_agents(conn.session) or remote is None:
            self._say("Select an agent's server to disconnect it.")
            return None
        name = conn.session.server_name
        self.closed_by_you.add(name)

        async def close() -> None:
            await remote.request("spyglass_disconnect", {"server": name}, by="person", client=WINDOW_CLIENT)
            self._say(f"Disconnected the agent's server {name}.")

        def failed(exc: BaseException) -> None:
            self.closed_by_you.discard(name)
            self._say(f"Could not disconnect {name}: {getattr(exc, 'message', exc)}")

        return spawn(close(), self._tasks, failed, "disconnecting an agent's server")

    def open_call(self, rec: CallRecord) -> bool:
        """Show `rec`'s tool in the tool panel with its form filled with `rec`'s arguments (to edit and call)."""
        w = self.window
        conn = w.selected_connection()
        if rec is None or conn is None or conn.server_id != rec.server_id:
            return False
        if not w.tool_panel.select(rec.tool):
            self._say(f"{visible(conn.name, 80)} does not list {visible(rec.tool, 80)} now (or the search hides it).")
            return False
        panel = w.tool_detail
        if panel.form is None or panel.tool is None or panel.tool.get("name") != rec.tool:
            return False
        if isinstance(rec.arguments, dict):
            panel.form.set_value(rec.arguments)
        panel.form.setFocus()
        whose = f" (made by {rec.caller})" if rec.caller else ""
        self._say(f"{visible(rec.tool, 80)}{whose} is in the tool panel with its arguments: edit them and Call.")
        return True

    def _say(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 8000)
