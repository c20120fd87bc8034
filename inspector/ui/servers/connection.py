"""One server in the sidebar: the Qt face of a `ServerSession` (inspector.session).

The session owns the connection and everything known of it; `Connection` only turns the session's
callbacks into Qt signals, and keeps what belongs to the window alone: the catalog entry the server is
saved as, its authorization session, and the view options of its panes. Views read
the state from `conn.session` when a signal fires (signals carry no state, except the records of calls
and the URI of an updated resource).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from ...checks.live import LiveCheck
from ...session import CallRecord, ServerSession


class Connection(QObject):
    statusChanged = Signal()
    toolsChanged = Signal()
    resourcesChanged = Signal()  # resources or templates listed again
    promptsChanged = Signal()
    resourceUpdated = Signal(str)  # notifications/resources/updated
    subscriptionsChanged = Signal()
    healthChanged = Signal()  # ping, heartbeat, log level, cache notes
    rootsChanged = Signal()
    logAppended = Signal()  # at most once per event-loop turn
    callStarted = Signal(object)  # CallRecord
    callUpdated = Signal(object)  # CallRecord: progress, a question, a task state
    callFinished = Signal(object)  # CallRecord
    findingsChanged = Signal()  # what the live check found changed (conn.live)

    _SIGNALS = {"status": "statusChanged", "tools": "toolsChanged", "resources": "resourcesChanged",
                "templates": "resourcesChanged", "prompts": "promptsChanged",
                "subscriptions": "subscriptionsChanged", "health": "healthChanged", "roots": "rootsChanged"}

    def __init__(self, session: ServerSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.catalog_id: str | None = None  # the catalog entry this server is saved as (None: not saved)
        self.auth: Any = None  # the AuthSession of a URL server that signs in with OAuth
        self.auto_reread = False  # the Resources tab re-reads a subscribed resource when it is updated
        self.named_by_server = False  # the user gave no name: the next connection names it as the server does
        self.live = LiveCheck(session)  # every frame judged, the tool definitions reviewed (inspector.checks)
        self._hooks = ((session.changed, self._changed), (session.resource_updated, self._resource_updated),
                       (session.log.changed, self._log_changed), (session.calls.started, self._call_started),
                       (session.calls.updated, self._call_updated), (session.calls.finished, self._call_finished),
                       (self.live.changed, self.findingsChanged.emit))
        for hook, slot in self._hooks:
            hook.connect(slot)

    def release(self) -> None:
        """Stop relaying the session's callbacks (before this object is deleted: the session may outlive it)."""
        for hook, slot in self._hooks:
            hook.disconnect(slot)
        self.live.release()

    def _resource_updated(self, uri: str) -> None:
        self.resourceUpdated.emit(uri)

    def _log_changed(self) -> None:
        self.logAppended.emit()

    def _changed(self, what: str) -> None:
        name = self._SIGNALS.get(what)
        if name is not None:
            getattr(self, name).emit()

    def _call_started(self, rec: CallRecord) -> None:
        self.callStarted.emit(rec)

    def _call_updated(self, rec: CallRecord) -> None:
        self.callUpdated.emit(rec)

    def _call_finished(self, rec: CallRecord) -> None:
        self.callFinished.emit(rec)

    # the session's identity, read everywhere
    @property
    def name(self) -> str:
        return self.session.name

    @property
    def server_id(self) -> str:
        return self.session.server_id

    @property
    def spec(self) -> Any:
        return self.session.spec
