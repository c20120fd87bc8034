"""Dividers: the server list as wide as its names need, and every divider where the user left it after
the window is closed and opened again (QSettings)."""

from __future__ import annotations

import pytest
from calling import connected, select_tool
from PySide6.QtWidgets import QListView, QSplitter
from uikit import demo_cmd, find, until

from inspector.config import ServerSpec
from inspector.ui.window import layout

LONG = "analytics-warehouse-production-eu-west-replica"


async def test_the_server_list_is_as_wide_as_its_names(open_window):
    async with open_window() as window:
        window.layout_state.arrange(*layout.first_size_in(1920, 1040))
        main = find(window, QSplitter, "mainSplitter")
        view = find(window, QListView, "serverList")
        window.add_server(ServerSpec(name="demo", command=demo_cmd()), connect=False)
        await until(lambda: main.sizes()[0] <= window.sidebar.comfortable_width() + 4, 5,
                    f"the list to take what 'demo' and its buttons need, not {main.sizes()[0]} px")
        short = main.sizes()[0]
        assert short < 1689 // 5  # was a fifth of the window: 337 px for one short name
        window.add_server(ServerSpec(name=LONG, command=demo_cmd()), connect=False)
        name = view.fontMetrics().horizontalAdvance(LONG)
        await until(lambda: view.viewport().width() >= name, 5,
                    f"the list to widen for {name} px of name, not {view.viewport().width()}")
        assert main.sizes()[0] > short
        # collapsible: dragged to the edge, the servers are out of the way
        assert main.isCollapsible(0) and not main.isCollapsible(1)
        main.setSizes([0, sum(main.sizes())])
        assert main.sizes()[0] == 0


@pytest.mark.parametrize("name", ["mainSplitter", "toolsSplitter", "toolCallSplitter", "trafficSplitter",
                                  "trafficDetailSplitter"])
async def test_a_divider_is_where_it_was_left_after_a_restart(name, open_window, settings):
    async with open_window(settings=settings) as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), save=False)
        await connected(conn)
        select_tool(window, "echo")
        window.resize(window.screen().availableGeometry().width(), window.height())  # what the test screen holds
        split = find(window, QSplitter, name)
        await until(lambda: min(split.sizes()) > 40, 5, f"{name} to be laid out: {split.sizes()}")
        total = sum(split.sizes())
        moved = [total // 3 + 17, total - total // 3 - 17] if len(split.sizes()) == 2 else None
        assert moved is not None, split.sizes()
        split.setSizes(moved)
        split.splitterMoved.emit(moved[0], 1)  # as a drag says it
        left = split.sizes()
        dock_height = window.traffic_dock.height()
    async with open_window(settings=settings) as again:
        conn = again.add_server(ServerSpec(name="demo", command=demo_cmd()), save=False)
        await connected(conn)
        select_tool(again, "echo")
        split = find(again, QSplitter, name)
        await until(lambda: abs(split.sizes()[0] - left[0]) <= 2, 5,
                    f"{name} at {left}, where it was left, not {split.sizes()}")
        assert abs(again.traffic_dock.height() - dock_height) <= 2
