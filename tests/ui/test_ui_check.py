"""The window judges what servers send: the Check tab, the traffic pane's Expert column and filter, the
sidebar's count, the tool list's marks, Server info's summary; against the planted-defects server, its
clean twin and a flood."""

from __future__ import annotations

import sys
from pathlib import Path

from calling import call, select_tool
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QLabel, QListView, QPushButton, QTreeWidget
from uikit import demo_cmd, find, hostile_cmd, row_of, shot, until

from inspector.config import ServerSpec
from inspector.session import Status
from inspector.ui.base.items import FLAGS_ROLE
from inspector.ui.servers.sidebar import STATUS_TEXT_ROLE
from inspector.ui.traffic import model as tm

PLANTED = [sys.executable, str(Path(__file__).resolve().parent.parent / "checks" / "planted_server.py")]


async def connected(conn, timeout=30):
    await until(lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, timeout,
                f"{conn.name} to connect and list its tools")


def tree_rows(tree: QTreeWidget) -> list[tuple[str, str]]:
    out = []
    for i in range(tree.topLevelItemCount()):
        head = tree.topLevelItem(i)
        for j in range(head.childCount()):
            out.append((head.child(j).text(0), head.child(j).text(1)))
    return out


async def test_the_check_tab_judges_the_live_session_and_opens_what_a_finding_is_about(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="planted", command=PLANTED))
        await connected(conn)
        window.tabs.setCurrentWidget(window.checks.view)
        tree = find(window, QTreeWidget, "checkFindings")
        await until(lambda: {("capability-undeclared", "frame:"), ("schema-violation", "frame:")}
                    <= {(r, t[:6]) for r, t in tree_rows(tree)}, 10,
                    "the undeclared list_changed and the broken resources/list to be judged")
        found = tree_rows(tree)
        assert ("tool-name-invalid", "tool:get weather!") in found and ("description-vague", "tool:fetch_data") in found
        assert ("schema-violation", "frame:") in {(r, t[:6]) for r, t in found}  # resources/list, as listed
        assert "list-order-unstable" not in {r for r, _t in found}  # only a full check lists twice
        summary = find(window, QLabel, "checkSummary").text()
        assert "error" in summary and "warning" in summary
        # the tool list marks the tools with findings, the sidebar counts them, Server info sums them up
        tool_list = find(window, QListView, "toolList")
        assert any("finding" in flag for flag in row_of(tool_list, "fetch_data").data(FLAGS_ROLE))
        assert "tokens" in row_of(tool_list, "weather").data(Qt.ToolTipRole)
        status = find(window, QListView, "serverList").model().index(0, 0).data(STATUS_TEXT_ROLE)
        assert status.startswith("⚠ ") and "connected" in status
        assert "error" in window.info_view.labels["check"].text()
        await shot(window, "check-tab-light")
        # the full check: each list twice, the unknown tool, the read-only tools
        find(window, QCheckBox, "checkCallReadOnly").setChecked(True)
        find(window, QPushButton, "checkRun").click()
        await until(lambda: find(window, QLabel, "checkStatus").text().startswith("Full check done"), 30,
                    "the full check")
        found = {r for r, _t in tree_rows(tree)}
        assert {"list-order-unstable", "pagination-cursor-loop", "unknown-tool-not-protocol-error",
                "structured-content-missing", "tool-error-as-protocol-error"} <= found
        # a finding about a tool opens the tool; one about a frame selects it in the traffic pane
        window.checks.open_target("tool:fetch_data")
        assert window.tabs.currentIndex() == 0 and window.tool_panel.selected_name() == "fetch_data"
        # the tool's header says what its finding is, whole, not only that there is one
        flags = find(window, QLabel, "toolFlags")
        assert flags.isVisible() and "description-vague" in flags.text(), flags.text()
        frame = next(t for _r, t in tree_rows(tree) if t.startswith("frame:"))
        pane = window.traffic.pane
        pane.expert_button.setChecked(True)
        window.checks.open_target(frame)
        assert pane.selected_record() == int(frame[6:])
        assert pane.detail.problem.isVisible() and "[" in pane.detail.problem.text()


async def test_the_expert_column_and_filter_in_the_traffic_pane(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="planted", command=PLANTED))
        await connected(conn)
        pane = window.traffic.pane
        model = pane.model
        await until(lambda: window.traffic.store.flags, 10, "a frame to be flagged")
        n = next(iter(window.traffic.store.flags))
        await until(lambda: model.row_of(n) is not None, 5, "the flagged row to be shown")
        row = model.row_of(n)
        index = model.index(row, tm.COL_EXPERT)
        assert model.data(index, Qt.ItemDataRole.DecorationRole) is not None
        assert "[" in model.data(index, Qt.ItemDataRole.ToolTipRole)
        assert model.data(model.index(row, tm.COL_EXPERT), Qt.ItemDataRole.DisplayRole) == ""
        everything = model.rowCount()
        pane.expert_button.setChecked(True)
        await until(lambda: 0 < model.rowCount() < everything, 5, "the expert filter")
        assert all(model.record_at(r) in window.traffic.store.flags for r in range(model.rowCount()))
        await shot(window, "traffic-expert-light")
        pane.expert_button.setChecked(False)
        await until(lambda: model.rowCount() >= everything, 5, "every row again")


async def test_a_clean_server_has_no_findings_and_says_so(open_window):
    async with open_window("dark") as window:
        conn = window.add_server(ServerSpec(name="clean", command=[*PLANTED, "--clean"]))
        await connected(conn)
        window.tabs.setCurrentWidget(window.checks.view)
        window.traffic.judge()
        assert conn.live.findings() == []
        assert find(window, QLabel, "checkSummary").text() == "No findings"
        assert find(window, QLabel, "checkEmpty").isVisible()
        assert "⚠" not in find(window, QListView, "serverList").model().index(0, 0).data(STATUS_TEXT_ROLE)
        await shot(window, "check-tab-clean-dark")


async def test_the_demo_server_is_clean_in_the_window(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await connected(conn)
        window.traffic.judge()
        # one warning by design: create_event's nullable enum (`type: ["string", "null"]`, schema-unportable)
        assert [(f.rule, f.target, f.severity) for f in conn.live.findings()] == [
            ("schema-unportable", "tool:create_event", "warning")]


async def test_a_flood_is_judged_without_stalling_and_the_window_answers(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="flood", command=hostile_cmd("flood=20000")))
        await connected(conn)
        await conn.session.need_client().call_tool("echo", {"message": "x"})
        await until(lambda: len(window.traffic.store) > 20000, 60, "the flood to be recorded (and judged)")
        window.traffic.judge()
        # 20,000 well-formed log lines of a server that declares logging: all judged, nothing to say
        assert window.traffic.store.flags == {} and conn.live.judge.findings == []
        assert window.status_card is not None and conn.session.status is Status.CONNECTED


async def test_findings_that_came_while_the_tab_was_hidden_are_listed_when_it_is_shown(open_window):
    async with open_window() as window:
        window.tabs.setCurrentIndex(0)
        conn = window.add_server(ServerSpec(name="planted", command=PLANTED))
        await connected(conn)
        await until(lambda: (window.traffic.judge() or True) and len(conn.live.findings()) >= 4, 10, "findings")
        view = window.checks.view
        assert not view.isVisible() and view.tree.topLevelItemCount() == 0  # not made for a hidden tab
        expected = sorted((f.rule, f.target) for f in conn.live.findings())
        window.tabs.setCurrentWidget(view)  # shown: made there and then, before any new finding
        assert sorted(tree_rows(view.tree)) == expected


async def test_reconnecting_starts_a_new_judge(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="planted", command=PLANTED))
        await connected(conn)
        await until(lambda: conn.live.judge.findings, 10, "findings")
        first = conn.live.judge
        await conn.session.restart()
        await connected(conn)
        assert conn.live.judge is not first and conn.live.judge.revision == "2025-11-25"


async def test_a_finding_is_read_whole_under_the_list_at_any_width(open_window):
    """'What to change' was cut at the window's edge with no way to read it: the selected finding is said whole
    under the list (the first one selected from the start), every line of it shown."""
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="planted", command=PLANTED))
        await connected(conn)
        window.resize(1366, 768)
        window.tabs.setCurrentWidget(window.checks.view)
        tree = find(window, QTreeWidget, "checkFindings")
        detail = find(window, QLabel, "checkDetail")
        await until(lambda: tree_rows(tree) and detail.isVisible(), 10, "the findings")
        for j in range(tree.topLevelItem(0).childCount()):
            tree.setCurrentItem(tree.topLevelItem(0).child(j))
            item = tree.currentItem()
            message, rule = item.text(2).rstrip("…"), item.text(0)
            assert message in detail.text(), (message, detail.text())
            assert "What to change:" in detail.text() and rule in detail.text()
            await until(lambda: detail.heightForWidth(detail.width()) <= detail.height() + 1, 5,
                        f"every line of the finding to be shown ({detail.height()} px)")  # after a layout pass
            assert tree.currentItem().text(0) == rule  # a refill of the list keeps the finding picked
        head = tree.topLevelItem(0)
        wide = max((head.child(j) for j in range(head.childCount())), key=lambda it: len(it.text(2)))
        assert tree.fontMetrics().horizontalAdvance(wide.text(2)) > tree.columnWidth(2)  # the column cuts it...
        tree.setCurrentItem(wide)
        assert wide.text(2).rstrip("…") in detail.text()  # ...and the detail does not


async def test_the_tool_header_says_a_finding_an_observed_call_brought_at_once(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="planted", command=PLANTED))
        await connected(conn)
        flags = find(window, QLabel, "toolFlags")
        select_tool(window, "stats")  # declares an outputSchema; its answer here has no structuredContent
        assert "structured-content-missing" not in flags.text()
        await call(window, "stats")
        # the call's answer is judged; the header of the tool on screen says so without selecting it again
        await until(lambda: "structured-content-missing" in flags.text(), 10,
                    f"the tool's header to say what its call showed, not {flags.text()!r}")
        assert flags.isVisible() and window.tool_detail.tool["name"] == "stats"
