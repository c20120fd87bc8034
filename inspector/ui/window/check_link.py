"""What the live check of each server reaches in the window: the Check tab, the tool list's marks, the
Server info summary and the sidebar's count; and the way from a finding to what it is about (a tool in
the Tools tab, a frame in the traffic pane)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from ..servers.check_view import CheckView
from ..servers.connection import Connection

if TYPE_CHECKING:
    from .main_window import MainWindow


class CheckLink(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.view = CheckView(window)  # the window gives it its task runner (`view.spawn`)
        self.view.targetActivated.connect(self.open_target)
        self.view.hosts.chosenChanged.connect(self._hosts_chosen)
        self._tool_marks: dict[int, Any] = {}  # id(conn) -> what the tool list last showed of its findings

    def attach(self, conn: Connection) -> None:
        conn.findingsChanged.connect(lambda c=conn: self._changed(c))
        conn.live.others = lambda c=conn: {o.name: o.session.tools.items for o in self.window.servers.connections
                                           if o is not c and o.session.tools.items}
        conn.toolsChanged.connect(lambda c=conn: self._others_changed(c))
        # what a call was seen to need (an image, a question) may change the hosts the header names
        conn.callFinished.connect(lambda _record, c=conn: self._hosts_chosen() if c is self.window
                                  .selected_connection() else None)

    def _others_changed(self, conn: Connection) -> None:
        """A server's tools changed: the others' findings across servers may have (shadowing, look-alikes)."""
        for other in self.window.servers.connections:
            if other is not conn and other.session.tools.items:
                other.live.changed.emit()

    def show(self, conn: Connection | None) -> None:
        self.view.show_connection(conn)

    def tool_words(self, conn: Connection | None, name: str) -> list[str]:
        """What the tool panel's header says of a tool: its findings, and on which chosen hosts it is
        degraded or blocked (the Hosts page's choice)."""
        return tool_findings(conn).get(name, []) + self.view.hosts.tool_words(conn, name)

    def _hosts_chosen(self) -> None:
        """Other hosts were picked, or a call was seen: the selected tool's header says them anew."""
        panel = self.window.tool_detail
        if panel.tool is not None:  # the header only: the answer on screen stays as it is
            panel.show_header(panel.tool, panel.change)

    def _changed(self, conn: Connection) -> None:
        w = self.window
        w.server_view.viewport().update()  # the sidebar's count
        if conn is not w.selected_connection():
            return
        w.info_view.show_connection(conn)
        marks = tool_findings(conn)
        if marks != self._tool_marks.get(id(conn)):  # the list is rebuilt only when a tool's findings change
            self._tool_marks[id(conn)] = marks
            w.tool_panel.show_session(conn.session, marks, conn.live.cost)

    def open_target(self, target: str) -> None:
        w = self.window
        kind, _, what = target.partition(":")
        if kind == "tool":
            w.tabs.setCurrentIndex(0)
            w.tool_panel.jump_to(what)
        elif kind == "frame" and what.isdigit() and w.traffic.pane is not None:
            w.traffic_dock.show()
            w.traffic_dock.raise_()
            pane = w.traffic.pane
            if not pane.select_record(int(what)):  # hidden by the filter: show everything, then select it
                pane.filter_edit.clear()
                pane.expert_button.setChecked(False)
                pane.set_server_filter(None)
                pane.show_all()
                pane.model.refresh()
                pane.select_record(int(what))


def tool_findings(conn: Connection | None) -> dict[str, list[str]]:
    """Tool name -> the live check's findings about it, in words."""
    out: dict[str, list[str]] = {}
    if conn is None:
        return out
    for f in conn.live.findings():
        if f.target.startswith("tool:"):
            out.setdefault(f.target[5:], []).append(f"{f.rule}: {f.message}")
    return out
