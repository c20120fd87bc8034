"""The Check tab's Hosts page against the host-planted server: a verdict per tool and host, the reasons and
the tool as the host's model sees it on selection, the hosts picked, and the tool panel's header saying on
which picked hosts the selected tool is degraded or blocked; a call made in the window counts."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTableWidget, QTabWidget, QToolButton
from uikit import find, shot, until

from inspector.config import ServerSpec
from inspector.session import Status

PLANTED = [sys.executable, str(Path(__file__).resolve().parent.parent / "checks" / "hosts_planted_server.py")]


def cell(matrix: QTableWidget, tool: str, host: str) -> str:
    rows = [matrix.verticalHeaderItem(r).text() for r in range(matrix.rowCount())]
    cols = [matrix.horizontalHeaderItem(c).text() for c in range(matrix.columnCount())]
    return matrix.item(rows.index(tool), cols.index(host)).text()


async def test_the_hosts_page_and_the_tool_header(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="planted", command=PLANTED))
        await until(lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30,
                    "the planted server to connect")
        window.tabs.setCurrentWidget(window.checks.view)
        find(window, QTabWidget, "checkPages").setCurrentIndex(1)
        matrix = find(window, QTableWidget, "hostsMatrix")
        await until(lambda: matrix.rowCount() == 42, 10, "a row per tool and one for the server")
        assert matrix.columnCount() == 10
        assert cell(matrix, "records.lookup", "claude-desktop") == "blocked"
        assert cell(matrix, "records.lookup", "claude-code") == "blocked"  # either_or fails every request
        assert cell(matrix, "records.lookup", "vscode") == "degraded"
        assert cell(matrix, "report_01", "inspector") == "works"
        assert cell(matrix, "(server)", "chatgpt") == "blocked"  # stdio
        assert "VS Code (GitHub Copilot): degraded" in find(window, QLabel, "hostsSummary").text()
        # a cell's reasons, and the tool as that host's model receives it
        cols = [matrix.horizontalHeaderItem(c).text() for c in range(matrix.columnCount())]
        rows = [matrix.verticalHeaderItem(r).text() for r in range(matrix.rowCount())]
        matrix.setCurrentCell(rows.index("records.lookup"), cols.index("vscode"))
        detail = find(window, QPlainTextEdit, "hostsDetail").toPlainText()
        assert "records.lookup degraded" in detail and "fix: use only A-Z" in detail
        assert "As the host's model receives it:\n  name: mcp_planted_records_lookup" in detail
        await shot(window, "check-hosts")
        # the hosts picked: only VS Code and Zed
        view = window.checks.view.hosts
        view.choose(["vscode", "zed"])
        assert matrix.columnCount() == 2 and find(window, QToolButton, "hostsPick").text() == "Hosts: 2 of 10"
        # the tool panel's header says the picked hosts only
        window.tabs.setCurrentIndex(0)
        window.tool_panel.jump_to("show_board")
        flags = find(window, QLabel, "toolFlags")
        await until(lambda: "hosts: degraded on Zed (Check → Hosts says why)" in flags.text(), 10,
                    "the header to name the hosts where show_board is degraded")
        view.choose(["vscode"])
        await until(lambda: "hosts:" not in flags.text(), 10, "VS Code alone: nothing to say")
        # a call made in the window counts: snapshot answers an image, which Zed never shows its model
        view.choose(["zed"])
        window.tool_panel.jump_to("snapshot")
        assert "hosts:" not in flags.text()
        window.tool_detail.call_button.click()
        await until(lambda: "hosts: degraded on Zed" in flags.text(), 20, "the image answer to degrade Zed")
        assert conn.live.observer.seen.kinds == {"snapshot": {"image"}}
