"""The Check tab's Hosts page against the host-planted server: a verdict per tool and host, the reasons and
the tool as the host's model sees it on selection, the hosts picked, and the tool panel's header saying on
which picked hosts the selected tool is degraded or blocked; a call made in the window counts."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QComboBox, QLabel, QPlainTextEdit, QPushButton, QTableWidget, QTabWidget, QToolButton
from uikit import demo_cmd, find, shot, until

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


async def test_the_playground_offers_the_tools_as_a_host_would(open_window):
    from model_peers import OpenAIPeer

    from inspector.model import ModelConnection

    with OpenAIPeer(key="sk-hosts-1") as peer:
        async with open_window() as window:
            conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), mode="legacy")
            await until(lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30,
                        "the demo server to connect")
            window.playground.book.save([ModelConnection("scripted", peer.kind, peer.url, "scripted-small", 5.0)],
                                        {peer.url: "sk-hosts-1"})
            view = window.playground.view
            window.playground.show(view)
            await until(lambda: "weather" in {t.name for t in view.tools()}, 10, "the demo's tools offered")
            host = find(window, QComboBox, "playgroundHost")
            host.setCurrentIndex(host.findData("gemini-cli"))
            offered = find(window, QLabel, "playgroundOffered").text()
            assert "as Gemini CLI would offer them: " in offered and "mcp_demo_weather" in offered
            view.input.setPlainText("what is the weather in Paris?")
            find(window, QPushButton, "playgroundSend").click()
            await until(lambda: view.job is not None and view.job.done(), 20, "the turn")
            tools = {t["function"]["name"]: t["function"] for t in peer.requests[-1]["tools"]}
            assert "weather" not in tools and "mcp_demo_weather" in tools
            assert "$defs" in tools["mcp_demo_create_event"]["parameters"]  # Gemini CLI declares it as sent
            # the scripted model calls "weather", which Gemini CLI's model was never offered
            assert any("not one of the tools it was offered" in t for t in view.transcript.texts())
            host.setCurrentIndex(host.findData(""))
            assert "weather" in {t.name for t in view.tools()}
            # Tool choice asks with the tools as Codex offers them (mcp__server__tool), named back as listed
            choice = window.playground.choice
            window.playground.show(choice)
            choice.requests.setRowCount(0)
            choice.add_request("Say hello", "none")
            pick = find(window, QComboBox, "toolChoiceHost")
            pick.setCurrentIndex(pick.findData("codex"))
            find(window, QPushButton, "toolChoiceRun").click()
            await until(lambda: choice.job is not None and choice.job.done(), 20, "the run")
            offered = {t["function"]["name"]: t["function"] for t in peer.requests[-1]["tools"]}
            assert "mcp__demo__weather" in offered and "weather" not in offered
            assert "$defs" not in offered["mcp__demo__create_event"]["parameters"]  # Codex keeps few keywords
