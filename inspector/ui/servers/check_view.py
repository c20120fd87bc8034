"""The Check tab: what is wrong with the selected server, as `spyglass check` would say it.

Findings come from the connection's live check (`conn.live`, inspector.checks): every frame judged as it
goes by, the tool definitions reviewed whenever the list changes, observed calls as they happen. *Run full
check* adds what only asking can tell (each list twice for its order, a tool that cannot exist, and
optionally the read-only tools). A finding about a tool or a frame opens it on double-click or Enter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...checks.rules import SEVERITIES, Finding
from ...errors import SpyglassError
from ...session import Status
from ..base import design
from ..base.text import plain_tooltip, visible
from ..base.theme import severity_icon
from .connection import Connection
from .hosts_view import HostsView

HEADINGS = {"error": "Errors", "warning": "Warnings", "info": "Info"}
TARGET_ROLE = Qt.ItemDataRole.UserRole
FINDING_ROLE = Qt.ItemDataRole.UserRole + 1  # the finding's whole text, for the detail under the list


def detail_text(f: Finding) -> str:
    """A finding said whole: what, about what, what to change, where the rule comes from, how to go there."""
    about = visible(f.target, 300)
    go = " Double-click it (or press Enter) to open it." if f.target.startswith(("tool:", "frame:")) else ""
    return (f"{f.rule} ({f.severity}) — about {about}\n\nWhat to change: {visible(f.message, 4000)}\n\n"
            f"From: {f.spec}.{go}")


def summary_text(counts: dict[str, int]) -> str:
    if not any(counts.values()):
        return "No findings"
    return " · ".join(f"{counts[s]} {'info' if s == 'info' else s + ('s' if counts[s] != 1 else '')}"
                      for s in SEVERITIES)


class CheckView(QWidget):
    targetActivated = Signal(str)  # "tool:NAME" or "frame:N"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("checkView")
        self.conn: Connection | None = None
        self.spawn: Callable[[Any, str], Any] | None = None  # the window's task runner
        self._stale = False  # findings changed while the view was hidden: its list is made when it is shown
        self.summary = QLabel("Not connected", self)
        self.summary.setObjectName("checkSummary")
        f = self.summary.font()
        f.setBold(True)
        self.summary.setFont(f)
        self.cost = QLabel(self)
        self.cost.setObjectName("checkCost")
        self.cost.setTextFormat(Qt.TextFormat.PlainText)
        self.cost.setWordWrap(True)
        self.read_only = QCheckBox("Also call the read-only tools", self)
        self.read_only.setObjectName("checkCallReadOnly")
        self.read_only.setToolTip("Call every tool marked readOnlyHint (never one marked destructive) with "
                                  "arguments made up valid against its schema")
        self.run_button = QPushButton("Run full check", self)
        self.run_button.setObjectName("checkRun")
        self.run_button.setToolTip("List everything twice (is the order stable?) and call a tool that cannot "
                                   "exist (is it a protocol error?), besides what is judged all the time")
        self.run_button.clicked.connect(self.run)
        self.status = QLabel(self)
        self.status.setObjectName("checkStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("checkFindings")
        self.tree.setHeaderLabels(["Finding", "About", "What to change"])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setWordWrap(False)
        self.tree.itemActivated.connect(self._activated)
        self.tree.currentItemChanged.connect(lambda current, _old: self._show_detail(current))
        header = self.tree.header()
        header.setStretchLastSection(True)
        # the selected finding in full: the column is cut at the window's edge, this never is
        self.detail = QLabel(self)
        self.detail.setObjectName("checkDetail")
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setFrameShape(QLabel.Shape.StyledPanel)
        self.detail.setMargin(8)
        # the findings, and the Hosts page: will the server work in Claude, Cursor, VS Code…
        self.pages = QTabWidget(self)
        self.pages.setObjectName("checkPages")
        self.pages.setDocumentMode(True)
        findings = QWidget(self.pages)
        self.hosts = HostsView(self.pages)
        self.pages.addTab(findings, "Findings")
        self.pages.addTab(self.hosts, "Hosts")
        self.empty = QLabel(self)
        self.empty.setObjectName("checkEmpty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.read_only)
        top.addWidget(self.run_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("s"))
        lay.addLayout(top)
        lay.addWidget(self.cost)
        lay.addWidget(self.status)
        lay.addWidget(self.pages, 1)
        page = QVBoxLayout(findings)
        page.setContentsMargins(design.margins("none", "s", "none", "none"))
        page.addWidget(self.tree, 1)
        page.addWidget(self.detail)
        page.addWidget(self.empty, 1)
        self.show_connection(None)

    def show_connection(self, conn: Connection | None) -> None:
        old = self.conn
        if old is not None and old is not conn:
            old.findingsChanged.disconnect(self.refresh)
            for signal in (old.toolsChanged, old.callFinished, old.statusChanged):
                signal.disconnect(self.hosts.refresh)
        if conn is not old:
            self.status.setText("")
            if conn is not None:
                conn.findingsChanged.connect(self.refresh)
                for signal in (conn.toolsChanged, conn.callFinished, conn.statusChanged):
                    signal.connect(self.hosts.refresh)
        self.conn = conn
        self.hosts.show_connection(conn)
        self.refresh()

    def refresh(self) -> None:
        conn = self.conn
        connected = conn is not None and conn.session.status is Status.CONNECTED
        self.run_button.setEnabled(connected)
        found = conn.live.findings() if conn is not None else []
        self.summary.setText(summary_text(conn.live.summary()) if conn is not None and (found or connected)
                             else "Not connected")
        cost = conn.live.cost if conn is not None else None
        self.cost.setText(f"Tool list: {cost.count} tools, {cost.bytes:,} bytes, about {cost.tokens:,} tokens "
                          "for a model to read on every turn (estimate: bytes / 4)" if cost else "")
        self.cost.setVisible(cost is not None)
        self.status.setVisible(bool(self.status.text()))
        if self.isVisible():
            self._fill(found)
        else:  # (a big server's findings, a row each, took a 50 ms turn on a tab nobody looked at)
            self._stale = True
        self.tree.setVisible(bool(found))
        self.detail.setVisible(bool(found))
        self.empty.setVisible(not found)
        if conn is None:
            self.empty.setText("Select a server to see what is wrong with it.")
        elif not connected and not found:
            self.empty.setText("Connect to check this server.")
        else:
            self.empty.setText("No findings: nothing this server sent breaks its revision's schema or the rules "
                               "of spyglass check. Run a full check to ask it more.")

    def showEvent(self, event: QShowEvent) -> None:
        if self._stale:
            self._fill(self.conn.live.findings() if self.conn is not None else [])
        super().showEvent(event)

    def _fill(self, found: list[Finding]) -> None:
        self._stale = False
        current = self.tree.currentItem()
        keep = current.data(0, FINDING_ROLE) if current is not None else None  # the user's pick, kept
        self.tree.clear()
        again: QTreeWidgetItem | None = None
        for code, severity in enumerate(SEVERITIES):
            group = [f for f in found if f.severity == severity]
            if not group:
                continue
            head = QTreeWidgetItem(self.tree, [f"{HEADINGS[severity]} ({len(group)})"])
            head.setIcon(0, severity_icon(code))
            head.setFirstColumnSpanned(True)
            for f in group:
                item = QTreeWidgetItem(head, [f.rule, visible(f.target, 120), visible(f.message, 400)])
                item.setData(0, TARGET_ROLE, f.target)
                item.setData(0, FINDING_ROLE, detail_text(f))
                if again is None and keep is not None and item.data(0, FINDING_ROLE) == keep:
                    again = item
                item.setToolTip(2, plain_tooltip(f"{visible(f.message, 2000)}\n\nFrom: {f.spec}"))
                item.setToolTip(0, plain_tooltip(f"{f.rule} ({f.severity}): {f.spec}"))
            head.setExpanded(True)
        for col in (0, 1):
            self.tree.resizeColumnToContents(col)
        first = self.tree.topLevelItem(0)
        if again is not None:
            self.tree.setCurrentItem(again)
        elif first is not None and first.childCount():
            self.tree.setCurrentItem(first.child(0))
        self._show_detail(self.tree.currentItem())

    def _show_detail(self, item: QTreeWidgetItem | None) -> None:
        text = item.data(0, FINDING_ROLE) if item is not None else None
        self.detail.setText(text if isinstance(text, str) else "Select a finding to read it whole.")

    def _activated(self, item: QTreeWidgetItem, _column: int) -> None:
        target = item.data(0, TARGET_ROLE)
        if isinstance(target, str) and target.startswith(("tool:", "frame:")):
            self.targetActivated.emit(target)

    def run(self) -> None:
        conn = self.conn
        if conn is None or self.spawn is None or conn.session.client is None:
            return
        calls = "read-only" if self.read_only.isChecked() else "none"
        self.run_button.setEnabled(False)
        self.status.setText("Checking: listing everything twice, probing an unknown tool"
                            + (", calling the read-only tools…" if calls == "read-only" else "…"))
        self.status.show()
        self.spawn(self._run(conn, calls), f"checking {conn.name}")

    async def _run(self, conn: Connection, calls: str) -> None:
        try:
            report = await conn.live.run(calls=calls, timeout=conn.session.options.timeout)
        except SpyglassError as exc:  # the server went away, did not answer...: said here, not raised
            if conn is self.conn:
                self.status.setText(f"The check stopped: {visible(exc.message, 300)}")
                self.status.show()
            return
        finally:
            self.refresh()  # the button of whichever server is shown now
        if conn is self.conn:
            done = [f"Full check done: {summary_text(report.summary())}."]
            if report.called:
                done.append(f"Called {len(report.called)} read-only tools.")
            done += report.notes
            self.status.setText(" ".join(done))
            self.status.show()
