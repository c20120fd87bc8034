"""Every server's calls as one list for the window: the tool panel, the Tasks tab and the running marks
follow calls on all servers at once, while each server's `CallBook` (inspector.session) owns its own."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from ...session import CallRecord
from ..servers.connection import Connection


class WindowCalls(QObject):
    started = Signal(object)  # CallRecord
    updated = Signal(object)  # CallRecord (progress, a question, a task state)
    finished = Signal(object)  # CallRecord

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._connections: dict[str, Connection] = {}

    def attach(self, conn: Connection) -> None:
        self._connections[conn.server_id] = conn
        conn.callStarted.connect(self.started.emit)
        conn.callUpdated.connect(self.updated.emit)
        conn.callFinished.connect(self.finished.emit)

    def detach(self, conn: Connection) -> None:
        if self._connections.get(conn.server_id) is conn:
            del self._connections[conn.server_id]
        for signal, slot in ((conn.callStarted, self.started.emit), (conn.callUpdated, self.updated.emit),
                             (conn.callFinished, self.finished.emit)):
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError):
                pass

    # ------------------------------------------------------------------ queries
    def running(self, server_id: str | None = None, tool: str | None = None) -> list[CallRecord]:
        conns = [self._connections[server_id]] if server_id in self._connections else (
            [] if server_id is not None else list(self._connections.values()))
        return [r for c in conns for r in c.session.calls.running(tool)]

    def last(self, server_id: str, tool: str | None = None) -> CallRecord | None:
        conn = self._connections.get(server_id)
        return conn.session.calls.last(tool) if conn is not None else None

    def records(self, server_id: str) -> list[CallRecord]:
        conn = self._connections.get(server_id)
        return conn.session.calls.records() if conn is not None else []

    # ------------------------------------------------------------------ calling
    def call(self, conn: Connection, tool: str, arguments: object, tool_def: dict | None = None, *,
             anyway: bool = False, as_task: bool | None = None) -> CallRecord:
        return conn.session.calls.call(tool, arguments, tool_def, anyway=anyway, as_task=as_task)

    def pin(self, rec: CallRecord, on: bool) -> None:
        """Pin a call (to run again after each restart of a watched server), or unpin it."""
        conn = self._connections.get(rec.server_id)
        if conn is not None:
            conn.session.calls.pin(rec, on)
        else:
            rec.pinned = on
            self.updated.emit(rec)

    def cancel(self, rec: CallRecord) -> None:
        conn = self._connections.get(rec.server_id)
        if conn is not None:
            conn.session.calls.cancel(rec)

    def cancel_all(self) -> None:
        for conn in self._connections.values():
            conn.session.calls.cancel_all()
