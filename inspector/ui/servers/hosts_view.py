"""The Check tab's Hosts page: will the selected server work in Claude, ChatGPT, Cursor, VS Code…?

A matrix of the server's tools (and a first row for the server as a whole) against the hosts chosen in
`hostsPick`, a verdict per cell (works, degraded, blocked) as `spyglass check --host` gives it
(inspector.checks.hosts: the shipped profiles and the project's `.spyglass/hosts`); the selected cell's
reasons with their fixes, and the tool as that host's model receives it beside what the server sent.
What the server's calls needed (images, elicitation, sampling…) comes from the live check's observer, so a
call made in the window counts as in a check. Made when the page is shown, as the findings' list is.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...checks.hosts import profile as host_profiles
from ...checks.hosts.seen import BLOCKED, DEGRADED, WORKS, Reason, Seen
from ...checks.hosts.verdict import HostVerdict, SeenCache, Server, cached, judge, seen_of
from ...errors import SpyglassError
from ...session import Status
from ..base import design
from ..base.text import plain_tooltip, visible
from ..base.theme import severity_icon
from .connection import Connection

HOST_ROLE = Qt.ItemDataRole.UserRole  # the host's id
TOOL_ROLE = Qt.ItemDataRole.UserRole + 1  # the tool's name; "" for the server's row
SERVER_ROW = "(server)"
ICONS = {BLOCKED: 0, DEGRADED: 1}
AT_ONCE = 400  # tools × hosts looked at in one go; more are looked at a slice at a time, the loop turning
SLICE_S = 0.008


def server_of(conn: Connection, only: str | None = None) -> Server:
    """The connection's server as the host verdicts judge it; with `only`, that one tool alone."""
    session = conn.session
    spec = session.spec
    tools = [t for t in session.tools.items if isinstance(t, dict)]
    if only is not None:
        tools = [t for t in tools if t.get("name") == only]
    hello = session.hello
    counts = {k: len(session.listings[k].items) for k in ("resources", "templates", "prompts")}
    return Server(name=conn.name, transport="stdio" if spec.url is None else
                  ("sse" if spec.transport == "sse" else "http"),
                  protocol=session.protocol_version, tools=tools, instructions=bool(hello and hello.instructions),
                  observed=conn.live.observer.seen, **({} if only is not None else counts))


def reason_text(r: Reason) -> str:
    return f"{r.level}: {visible(r.target, 200)} — {visible(r.message, 1000)}\n    fix: {visible(r.fix, 600)}"


def seen_text(seen: Seen) -> str:
    sent = seen.tool
    lines = ["As the server sent it:", f"  name: {visible(sent.get('name'), 300)}",
             f"  description: {visible(sent.get('description') or '', 2000)}",
             "  inputSchema: " + visible(json.dumps(sent.get("inputSchema"), ensure_ascii=False), 2000), "",
             "As the host's model receives it:"]
    if seen.name is None:
        lines.append("  (not offered)")
    else:
        lines += [f"  name: {visible(seen.name, 300)}", f"  description: {visible(seen.description, 2000)}",
                  "  inputSchema: " + visible(json.dumps(seen.schema, ensure_ascii=False), 2000)]
    lines += ["", "Differences:"] + [f"  ~ {visible(c, 600)}" for c in seen.changes] if seen.changes \
        else ["", "No differences."]
    return "\n".join(lines)


class HostsView(QWidget):
    chosenChanged = Signal()  # the hosts picked changed (the tool panel's header says them)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("hostsView")
        self.conn: Connection | None = None
        self.profiles: dict[str, host_profiles.Profile] = {}
        self.problem = ""
        self.chosen: list[str] = []
        self.verdicts: dict[str, HostVerdict] = {}
        self._seen: SeenCache = {}  # each tool as each host sees it, while its definition stays the same
        self._warming: asyncio.Future[None] | None = None
        self.destroyed.connect(lambda *_: self._warming is not None and self._warming.cancel())
        self._stale = True
        self.pick = QToolButton(self)
        self.pick.setObjectName("hostsPick")
        self.pick.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.pick.setMenu(QMenu(self.pick))
        self.summary = QLabel(self)
        self.summary.setObjectName("hostsSummary")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.matrix = QTableWidget(self)
        self.matrix.setObjectName("hostsMatrix")
        self.matrix.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.matrix.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.matrix.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.matrix.currentCellChanged.connect(lambda *_: self._show_detail())
        self.detail = QPlainTextEdit(self)
        self.detail.setObjectName("hostsDetail")
        self.detail.setReadOnly(True)
        self.empty = QLabel(self)
        self.empty.setObjectName("hostsEmpty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.pick)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("none", "s", "none", "none"))
        lay.addLayout(top)
        lay.addWidget(self.matrix, 3)
        lay.addWidget(self.detail, 2)
        lay.addWidget(self.empty, 1)
        self.load_profiles()

    # ------------------------------------------------------------------ hosts
    def load_profiles(self, folder: Any = None) -> None:
        """The shipped profiles and the project's (the current folder's `.spyglass/hosts`); a broken project
        file is said in the summary, and the shipped profiles are used."""
        try:
            self.profiles = host_profiles.load(folder)
            self.problem = ""
        except SpyglassError as exc:
            self.profiles = host_profiles.shipped()
            self.problem = f"Project host profiles not used: {exc.message}"
        self._seen.clear()
        self.chosen = [h for h in self.chosen if h in self.profiles] or list(self.profiles)
        menu = self.pick.menu()
        menu.clear()
        for pid, profile in self.profiles.items():
            action = QAction(profile.name, menu)
            action.setObjectName(f"hostPick:{pid}")
            action.setCheckable(True)
            action.setChecked(pid in self.chosen)
            action.setData(pid)
            action.toggled.connect(self._picked)
            menu.addAction(action)
        self._label_pick()
        self.refresh()

    def choose(self, ids: list[str]) -> None:
        for action in self.pick.menu().actions():
            action.blockSignals(True)
            action.setChecked(action.data() in ids)
            action.blockSignals(False)
        self._picked()

    def _picked(self, _checked: bool = False) -> None:
        self.chosen = [a.data() for a in self.pick.menu().actions() if a.isChecked()]
        self._label_pick()
        self.refresh()
        self.chosenChanged.emit()

    def _label_pick(self) -> None:
        n = len(self.chosen)
        self.pick.setText("Hosts: all" if n == len(self.profiles) else f"Hosts: {n} of {len(self.profiles)}")

    # ------------------------------------------------------------------ server
    def show_connection(self, conn: Connection | None) -> None:
        if conn is not self.conn:
            self._seen.clear()
        self.conn = conn
        self.refresh()

    def refresh(self) -> None:
        if self.isVisible():
            self._fill()
        else:
            self._stale = True

    def showEvent(self, event: QShowEvent) -> None:
        if self._stale:
            self._fill()
        super().showEvent(event)

    def _fill(self) -> None:
        self._stale = False
        conn = self.conn
        tools = [t for t in conn.session.tools.items if isinstance(t, dict)] if conn is not None else []
        ready = conn is not None and (conn.session.status is Status.CONNECTED or bool(tools))
        chosen = [self.profiles[h] for h in self.chosen if h in self.profiles]
        keep = (self.matrix.currentRow(), self.matrix.currentColumn())
        if conn is None or not ready:
            self.verdicts = {}
        else:
            server = server_of(conn)
            todo = [(t, p) for p in chosen for t in server.tools if not cached(t, p, server.name, self._seen)]
            if len(todo) > AT_ONCE:  # (5,000 tools for 10 hosts: two seconds in one go)
                self.verdicts = {}
                self.matrix.setRowCount(0)
                self._warm(todo, server.name)
                return
            self.verdicts = {p.id: judge(server, p, self._seen) for p in chosen}
        self.matrix.setVisible(ready and bool(chosen))
        self.detail.setVisible(ready and bool(chosen))
        self.empty.setVisible(not (ready and chosen))
        if conn is None:
            self.empty.setText("Select a server to see which hosts it works in.")
        elif not ready:
            self.empty.setText("Connect to see which hosts this server works in.")
        elif not chosen:
            self.empty.setText("Pick at least one host (Hosts ▾).")
        words = [f"{v.profile.name}: {v.verdict}" for v in self.verdicts.values()]
        self.summary.setText(" · ".join(words) + (f"\n{self.problem}" if self.problem else "")
                             if words or self.problem else "")
        names = [str(t.get("name")) for t in tools]
        self.matrix.clear()
        self.matrix.setColumnCount(len(chosen))
        self.matrix.setRowCount(len(names) + 1 if self.verdicts else 0)
        self.matrix.setHorizontalHeaderLabels([p.id for p in chosen])  # short: the names are in the tooltips
        for col, profile in enumerate(chosen):
            header = self.matrix.horizontalHeaderItem(col)
            if header is not None:
                header.setToolTip(f"{profile.name} (profile {profile.version})")
        self.matrix.setVerticalHeaderLabels([SERVER_ROW] + [visible(n, 80) for n in names])
        for col, profile in enumerate(chosen):
            verdict = self.verdicts.get(profile.id)
            if verdict is None:
                continue
            for row, name in enumerate([""] + names):
                level, reasons = (verdict.verdict, verdict.reasons) if not name else verdict.tool_verdict(name)
                item = QTableWidgetItem(level)
                item.setData(HOST_ROLE, profile.id)
                item.setData(TOOL_ROLE, name)
                if level in ICONS:
                    item.setIcon(severity_icon(ICONS[level]))
                item.setToolTip(plain_tooltip("\n".join(reason_text(r) for r in reasons) or "works"))
                self.matrix.setItem(row, col, item)
        self.matrix.resizeColumnsToContents()
        if self.matrix.rowCount() and self.matrix.columnCount():
            row, col = keep
            self.matrix.setCurrentCell(row if 0 <= row < self.matrix.rowCount() else 0,
                                       col if 0 <= col < self.matrix.columnCount() else 0)
        self._show_detail()

    def _warm(self, todo: list[tuple[dict[str, Any], host_profiles.Profile]], server: str) -> None:
        """Look at many tools for the hosts a slice at a time, then fill the page."""
        self.summary.setText(f"Looking at {len(todo) // max(len(self.chosen), 1):,} tools as each host sees them…")
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()

        async def steps() -> None:
            i = 0
            while i < len(todo):
                until = time.monotonic() + SLICE_S
                while i < len(todo) and time.monotonic() < until:
                    tool, profile = todo[i]
                    seen_of(tool, profile, server, self._seen)
                    i += 1
                await asyncio.sleep(0)
            self.refresh()

        self._warming = asyncio.ensure_future(steps())
        self._warming.add_done_callback(lambda t: t.cancelled() or t.exception())

    def _show_detail(self) -> None:
        item = self.matrix.currentItem()
        if item is None:
            self.detail.setPlainText("Select a cell to read why, and to see the tool as that host's model does.")
            return
        verdict = self.verdicts.get(item.data(HOST_ROLE))
        name = item.data(TOOL_ROLE)
        if verdict is None:
            return
        head = f"{verdict.profile.name} (profile {verdict.profile.version})"
        if not name:
            reasons = verdict.reasons
            body = [f"{head}: the server {verdict.verdict}."]
        else:
            level, reasons = verdict.tool_verdict(name)
            body = [f"{head}: {visible(name, 200)} {level}."]
        body += [reason_text(r) for r in reasons] or ["Nothing the profile knows of is lost."]
        if name and name in verdict.tools:
            body += ["", seen_text(verdict.tools[name])]
        self.detail.setPlainText("\n".join(body))

    # ------------------------------------------------------------------ the tool panel's header
    def tool_words(self, conn: Connection | None, name: str) -> list[str]:
        """On which chosen hosts the tool is degraded or blocked, in a few words (for the tool's header)."""
        if conn is None or not self.chosen:
            return []
        server = server_of(conn, only=name)
        if not server.tools:
            return []
        said: dict[str, list[str]] = {BLOCKED: [], DEGRADED: []}
        for pid in self.chosen:
            profile = self.profiles.get(pid)
            if profile is None:
                continue
            level, _reasons = judge(server, profile).tool_verdict(name)
            if level != WORKS:
                said[level].append(profile.name)
        parts = [f"{level} on {', '.join(hosts)}" for level, hosts in said.items() if hosts]
        return [f"hosts: {'; '.join(parts)} (Check → Hosts says why)"] if parts else []
