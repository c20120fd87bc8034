"""The room the answer gets, measured as a person would see it (in the suite's shipped font): on a
1366x768 and a 1920x1080 screen, the result of a one-field tool takes at least half of the window's
height, in one scroll area."""

from __future__ import annotations

import asyncio

import pytest
from calling import call, connected, select_tool
from PySide6.QtWidgets import QPlainTextEdit, QScrollArea
from uikit import demo_cmd, find, shot, until

from inspector.config import ServerSpec
from inspector.ui.window import layout

SCREENS = {"1366x768": (1366, 768 - 48), "1920x1080": (1920, 1080 - 40)}  # the area under a panel
LONG_ANSWER = "\n".join(f"{n:03d} commit {n * 7919 % 100000:05x} Fix the layout of part {n}" for n in range(140))


def first_start(window, screen: str) -> tuple[int, int]:
    size = layout.first_size_in(*SCREENS[screen])
    window.layout_state.arrange(*size)
    window.layout_state.shown()
    return size


@pytest.mark.parametrize("screen", sorted(SCREENS))
async def test_the_answer_takes_half_the_window_in_one_scroll_area(screen, open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await connected(conn)
        width, height = first_start(window, screen)
        await until(lambda: (window.width(), window.height()) == (width, height), 5, f"the window at {width}x{height}")
        rec = await call(window, "echo", {"message": LONG_ANSWER})
        assert len(rec.result["content"][0]["text"]) > 5_000
        scroll = find(window, QScrollArea, "resultScroll")
        await asyncio.sleep(0.2)  # the splitters settle
        text = [e for e in scroll.findChildren(QPlainTextEdit, "resultText") if e.isVisibleTo(scroll)]
        assert len(text) == 1

        def seen() -> int:  # of the answer's text, the pixels one can read: its box, within the viewport
            box = text[0].viewport()
            top = box.mapTo(scroll.viewport(), box.rect().topLeft()).y()
            return min(scroll.viewport().height(), top + box.height()) - max(0, top)
        await shot(window, f"room-{screen}")
        await until(lambda: scroll.viewport().height() >= height // 2, 5,
                    f"the result's viewport to take half of {height} px, not {scroll.viewport().height()}")
        await until(lambda: seen() >= height // 2 - 60, 5,
                    f"the answer's text to fill that room, not {seen()} px of it")
        # one scroll area: the text scrolls, the page around it does not
        assert scroll.verticalScrollBar().maximum() == 0, "the result page scrolls around a text that scrolls"
        await shot(window, f"room-{screen}")


TEXT_SIZES = {"100%": 0, "150%": 14, "200%": 18}  # Preferences → Text size, in points (the suite's font is 9 pt)


@pytest.mark.parametrize("text_size", list(TEXT_SIZES))
async def test_the_traffic_message_is_readable_at_every_text_size(text_size, qapp, open_window):
    from PySide6.QtWidgets import QTableView

    from inspector.ui.window.preferences import apply_font

    apply_font(qapp, TEXT_SIZES[text_size])  # as the app does at start with the saved preference
    try:
        async with open_window() as window:
            conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
            await connected(conn)
            first_start(window, "1920x1080")
            pane, store = window.traffic_pane, window.store
            await until(lambda: any(store.method(pane.model.record_at(r)) == "tools/list"
                                    for r in range(pane.model.rowCount())), 5, "the tools/list request")
            request = next(pane.model.record_at(r) for r in range(pane.model.rowCount())
                           if store.method(pane.model.record_at(r)) == "tools/list")
            answer = store.record(request).pair  # its answer: a long message, shown once the pane's next batch is in
            await until(lambda: answer is not None and pane.select_record(answer), 5, "the answer's row")
            pretty = find(window, QPlainTextEdit, "trafficDetailPretty")
            raw = find(window, QPlainTextEdit, "trafficDetailRaw")
            table = find(window, QTableView, "trafficView")
            await asyncio.sleep(0.3)

            def lines(edit) -> int:
                return edit.viewport().height() // edit.fontMetrics().lineSpacing()
            await shot(window, f"traffic-text-{text_size.rstrip('%')}")
            await until(lambda: lines(pretty) >= 8 and lines(raw) >= 8, 5,
                        f"8 lines of the message at {text_size}, not {lines(pretty)} formatted and {lines(raw)} raw")
            assert pretty.toPlainText().count("\n") > 8
            # Wireshark's three panes: the list, the message and its bytes, each roughly a third
            widths = [table.width(), pretty.width(), raw.width()]
            assert min(widths) >= sum(widths) / 5, widths
            if text_size == "100%":  # what a row is read by is in sight without scrolling: its method and id
                from inspector.ui.traffic.model import COL_ID, COL_METHOD

                hh = table.horizontalHeader()
                for col in (COL_METHOD, COL_ID):
                    assert hh.sectionViewportPosition(col) + hh.sectionSize(col) <= table.viewport().width(), col
            await shot(window, f"traffic-text-{text_size.rstrip('%')}")
    finally:
        apply_font(qapp, 0)



@pytest.mark.parametrize("screen", sorted(SCREENS))
async def test_a_one_field_form_takes_what_its_field_needs(screen, open_window):
    from PySide6.QtWidgets import QPushButton, QTabWidget

    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await connected(conn)
        first_start(window, screen)
        select_tool(window, "echo")
        panel = window.tool_detail
        tabs = find(window, QTabWidget, "toolTabs")
        button = find(window, QPushButton, "callButton")

        def gap() -> int:  # between the form's last field and the Call button
            bottom = tabs.mapTo(panel, tabs.rect().bottomLeft()).y()
            return button.mapTo(panel, button.rect().topLeft()).y() - bottom
        needs = tabs.tabBar().sizeHint().height() + panel.form.natural_height() + 12
        await until(lambda: tabs.height() <= needs and gap() <= 16, 5,
                    f"the form to take the {needs} px its field needs with Call under it, not {tabs.height()} px "
                    f"and {gap()} px of space before Call")
