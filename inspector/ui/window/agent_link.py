"""The person watching the agents: the window attaches to the background process of `spyglass mcp` and
`spyglass do` (Server → Watch agents, `actionWatchAgents`) as a watcher (`inspector.agent.watch`).

Each of the agents' servers joins the sidebar as a read-only server named "NAME (agent)" (a `TappedSession`
fed the frames the background process pushes: its tools, its traffic as it happens, the agent's calls in
History with their results). A call an agent asks for on a tool that may change things is held by the
background process until the person answers the dialog this link shows (`agentApproval`: the tool, its
annotations and the arguments, as the window's own confirmation shows them; Allow `agentAllow`, Deny
`agentDeny`). Closing the window detaches, and whatever still waits is refused. Who made each call, taking a
call over and disconnecting an agent's server are `agent_takeover`'s.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from ...agent.errors import AgentError
from ...agent.remote import Remote
from ...session import CallRecord
from ...tap.session import TappedSession
from ...traffic import Frame
from ..base.tasks import spawn
from ..calls.confirm import ConfirmDialog
from .agent_takeover import Callers, PersonCalls, TakeOver

if TYPE_CHECKING:
    from .main_window import MainWindow

log = logging.getLogger("spyglass.ui.agents")


class AgentSession(TappedSession):
    """An agent's server, as the window shows it: fed by the background process; the person's own calls go
    through it too (`PersonCalls`)."""

    takes_calls = True

    def __init__(self, server_id: str, definition: dict[str, Any]) -> None:
        super().__init__(server_id, definition)
        self.calls: PersonCalls = PersonCalls(server_id, lambda: self.server_name, lambda: next(self._ids))
        self.callers = Callers(self.calls)

    def adopt(self, tool: str, arguments: Any) -> CallRecord | None:
        return self.calls.claim(tool, arguments)

    @property
    def title(self) -> str:
        return f"{self.server_name} (agent)"

    def status_text(self) -> str:
        return super().status_text().replace("tapped", "the agent's", 1)


class AgentLink(QObject):
    def __init__(self, window: MainWindow, remote: Remote | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.remote = remote
        self.sessions: dict[str, AgentSession] = {}
        self.dialogs: dict[int, ConfirmDialog] = {}
        self.attached = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self.act_watch = QAction("Watch agents", window)
        self.act_watch.setObjectName("actionWatchAgents")
        self.act_watch.setToolTip("Show the servers that agents drive through `spyglass mcp` and `spyglass do`, "
                                  "their traffic as it happens, and ask you before a call that may change things")
        self.act_watch.triggered.connect(self.start)
        menu = window.findChild(QMenu, "serverMenu")
        if menu is not None:
            menu.addAction(self.act_watch)
        self.takeover = TakeOver(window, lambda: self.remote if self.attached else None,
                                 lambda s: isinstance(s, AgentSession))

    def start(self) -> asyncio.Task[Any] | None:
        if self.attached:
            return None
        return spawn(self.attach(), self._tasks, lambda exc: self._say(f"Cannot watch agents: {exc}"),
                     "watching agents")

    async def attach(self) -> None:
        remote = self.remote or Remote()
        self.remote = remote
        remote.on_event = self._event
        try:
            await remote.connect()
            seen = await remote.request("watch")
        except AgentError as exc:
            self._say(f"Cannot watch agents: {exc.message}")
            return
        self.attached = True
        self.act_watch.setEnabled(False)
        for server in seen.get("servers", []):
            self._server(str(server.get("name")), server)
        for event in seen.get("waiting", []):
            self._approve(event)
        self._say("Watching agents: their servers appear in the sidebar, and calls that may change things "
                  "wait for you.")

    async def close(self) -> None:
        for dialog in list(self.dialogs.values()):
            dialog.close()
        self.dialogs.clear()
        if self.remote is not None:
            await self.remote.close()
        self.attached = False

    # ------------------------------------------------------------------ events
    def _event(self, event: dict[str, Any]) -> None:
        if not shiboken6.isValid(self.window):
            return
        kind = event.get("event")
        try:
            if kind == "frame":
                self._frame(event)
            elif kind == "server":
                self._server_event(event)
            elif kind == "call":
                session = self.sessions.get(str(event.get("server")))
                if session is not None:
                    session.callers.told_of(event)
            elif kind == "approve":
                self._approve(event)
            elif kind == "decided":
                dialog = self.dialogs.pop(event.get("approval"), None)  # type: ignore[arg-type]
                if dialog is not None and shiboken6.isValid(dialog):
                    dialog.close()
        except Exception:  # one odd event must not stop the others
            log.exception("agent event %s", kind)

    def _server(self, name: str, described: dict[str, Any] | None) -> AgentSession:
        session = self.sessions.get(name)
        if session is not None:
            return session
        w = self.window
        definition: dict[str, Any] = {"name": name}
        target = (described or {}).get("target")
        if isinstance(target, str) and target.startswith(("http://", "https://")):
            definition["url"] = target
        elif isinstance(target, str):
            definition["command"] = target.split()
        session = AgentSession(w.unique_id(f"{name} (agent)"), definition)
        session.host = "agent"
        session.calls.remote = lambda: self.remote if self.attached else None
        self.sessions[name] = session
        first = not w.servers.connections
        w.add_server(session.spec, connect=False, select=first or w.selected_connection() is None,
                     session=session, save=False)
        said = described or {}  # a server open before the window came: what its handshake and listing said
        if said.get("status") == "connected" and isinstance(said.get("protocolVersion"), str):
            session.learn("initialize", {"protocolVersion": said["protocolVersion"], "serverInfo": said.get(
                "serverInfo"), "capabilities": said.get("capabilities")})
        if isinstance(said.get("toolList"), list):
            session.learn("tools/list", {"tools": said["toolList"]})
        return session

    def _server_event(self, event: dict[str, Any]) -> None:
        name = str(event.get("name"))
        what = event.get("what")
        if what == "opened":
            self._server(name, event.get("server"))
        elif what == "closed":
            session = self.sessions.pop(name, None)
            if session is not None:
                you = name in self.takeover.closed_by_you
                self.takeover.closed_by_you.discard(name)
                session.ended("disconnected by you" if you else "closed by the agent")
        elif what == "restarted" and name in self.sessions:
            self.sessions[name].log.note("restarted by the agent")
        elif what == "changed:tools" and name in self.sessions:  # the listing's answer may have come alone
            listed = (event.get("server") or {}).get("toolList")
            if isinstance(listed, list):
                self.sessions[name].learn("tools/list", {"tools": listed})

    def _frame(self, event: dict[str, Any]) -> None:
        session = self.sessions.get(str(event.get("server"))) or self._server(str(event.get("server")), None)
        text, raw = event.get("text"), event.get("base64")
        data = text.encode("utf-8") if isinstance(text, str) else base64.b64decode(raw) if isinstance(raw, str) else b""
        session.feed(Frame(str(event.get("dir")), data, float(event.get("mono") or 0.0),
                           float(event.get("wall") or 0.0), meta=event.get("meta")))

    # ------------------------------------------------------------------ approval
    def _approve(self, event: dict[str, Any]) -> ConfirmDialog:
        approval = event.get("approval")
        tool = event.get("definition") if isinstance(event.get("definition"), dict) else {"name": event.get("tool")}
        dialog = ConfirmDialog(tool, event.get("arguments"), self.window)
        dialog.setObjectName("agentApproval")
        dialog.setModal(False)
        dialog.setWindowTitle(f"An agent asks to call a tool of {event.get('server')}")
        dialog.call_button.setText("Allow")
        dialog.call_button.setObjectName("agentAllow")
        dialog.cancel_button.setText("Deny")
        dialog.cancel_button.setObjectName("agentDeny")
        dialog.accepted.connect(lambda: self.decide(approval, True))
        dialog.rejected.connect(lambda: self.decide(approval, False))
        self.dialogs[approval] = dialog  # type: ignore[index]
        dialog.show()
        dialog.raise_()
        return dialog

    def decide(self, approval: Any, allow: bool) -> None:
        if self.dialogs.pop(approval, None) is None or self.remote is None:
            return  # already decided (here, or in another window)
        remote = self.remote

        async def tell() -> None:
            await remote.request("decide", {"approval": approval, "allow": allow})

        spawn(tell(), self._tasks, lambda exc: self._say(f"Could not answer the agent: {exc}"), "answering an agent")

    def _say(self, text: str) -> None:
        if shiboken6.isValid(self.window):
            self.window.statusBar().showMessage(text, 8000)
