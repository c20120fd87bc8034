"""The window fits the screen at every text size (Preferences → Text size, 100 % to 200 %) on a 1366x768 laptop and
a 1920x1080 desktop, measured as a person would meet it (in the suite's shipped font): the least size it asks for
fits the area under the desktop's panel with its title bar, the answer of a one-field tool keeps half of the
window's height, and the tool list keeps room for its names, not a sliver."""

from __future__ import annotations

import pytest
from calling import call, connected, select_tool
from PySide6.QtWidgets import QListView, QPlainTextEdit, QScrollArea
from uikit import demo_cmd, find, shot, until

from inspector.config import ServerSpec
from inspector.ui.window import layout
from inspector.ui.window.preferences import apply_font

PANEL = 48  # a taskbar or top bar: the available area is what is left under it
SCREENS = {"1366x768": (1366, 768 - PANEL), "1920x1080": (1920, 1080 - PANEL)}
TEXT_SIZES = {"100": 0, "150": 14, "200": 18}  # Preferences → Text size, in points: the suite's font is 9 pt
NAME_LETTERS = 14  # the tool list shows this many average letters of a name at least ("markdown_repor")
LIST_ROWS = 5  # and this many tools at least
LONG_ANSWER = "\n".join(f"{n:03d} line of a long answer {n * 7919 % 100000:05x}" for n in range(120))


@pytest.mark.parametrize("screen", sorted(SCREENS))
@pytest.mark.parametrize("text_size", list(TEXT_SIZES))
async def test_the_window_fits_the_screen_and_the_answer_keeps_half_at(text_size, screen, qapp, open_window):
    area_w, area_h = SCREENS[screen]
    apply_font(qapp, TEXT_SIZES[text_size])  # as the app does at start with the saved preference
    try:
        async with open_window() as window:
            conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
            await connected(conn)
            width, height = layout.first_size_in(area_w, area_h)
            window.layout_state.arrange(width, height)  # a first start on that screen
            window.layout_state.shown()
            select_tool(window, "echo")
            limit = area_h - layout.FRAME_ALLOWANCE

            def least():
                return window.minimumSizeHint()
            await until(lambda: least().width() <= area_w and least().height() <= limit, 5,
                        f"the window at {text_size} % to ask for at most {area_w}x{limit}, not "
                        f"{least().width()}x{least().height()}")
            await until(lambda: (window.width(), window.height()) == (width, height), 5,
                        f"the window to keep its first size {width}x{height}, not {window.width()}x{window.height()}")
            await call(window, "echo", {"message": LONG_ANSWER})
            scroll = find(window, QScrollArea, "resultScroll")
            text = [e for e in scroll.findChildren(QPlainTextEdit, "resultText") if e.isVisibleTo(scroll)]
            assert len(text) == 1
            name = f"fit-{screen}-{text_size}"
            await shot(window, name)
            await until(lambda: scroll.viewport().height() >= window.height() // 2, 5,
                        f"the answer's viewport to take half of {window.height()} px at {text_size} %, not "
                        f"{scroll.viewport().height()}")
            assert window.width() <= area_w and window.height() <= limit
            view = find(window, QListView, "toolList")
            fm = view.fontMetrics()
            letters = view.viewport().width() / fm.averageCharWidth()
            rows = view.viewport().height() / view.sizeHintForRow(0)
            assert letters >= NAME_LETTERS, f"the tool list is {letters:.1f} letters wide at {text_size} %"
            assert rows >= LIST_ROWS, f"the tool list shows {rows:.1f} rows at {text_size} %"
    finally:
        apply_font(qapp, 0)
