"""The window fits a 768-pixel screen in every common desktop font the repository can ship, at the
largest size a desktop uses by default (tests/ui/fonts.py): the least size it asks for with a server
connected and a tool on screen, and the first size it takes on such a screen."""

from __future__ import annotations

import fonts
import pytest
from calling import connected, select_tool
from uikit import demo_cmd, shot, until

from inspector.config import ServerSpec
from inspector.ui.window import layout

SCREEN = (1366, 768)
PANEL = 48  # a taskbar or top bar: the available area is what is left under it
AVAILABLE = (SCREEN[0], SCREEN[1] - PANEL)


def test_a_small_screen_gets_a_first_size_it_holds():
    width, height = layout.first_size_in(*AVAILABLE)
    assert width <= AVAILABLE[0] and height >= 600
    assert height + layout.FRAME_ALLOWANCE <= AVAILABLE[1]  # title bar included, nothing under the panel
    assert layout.first_size_in(1920, 1040) == (1689, 915)  # a large screen: most of it, as before


@pytest.mark.parametrize("family", sorted(fonts.FILES))
async def test_the_window_fits_a_768_pixel_screen_in(family, qapp, open_window):
    points = fonts.DESKTOP_POINTS
    with fonts.using(qapp, family, points):
        async with open_window() as window:
            conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
            await connected(conn)
            select_tool(window, "echo")
            width, height = layout.first_size_in(*AVAILABLE)
            window.resize(width, height)
            limit = AVAILABLE[1] - layout.FRAME_ALLOWANCE

            def least():
                return window.minimumSizeHint()
            # docks hold their size as their least for a moment after they are placed: wait for it to settle
            await until(lambda: least().height() <= limit and least().width() <= AVAILABLE[0], 5,
                        f"the window in {family} {points} pt to ask for at most {AVAILABLE[0]}x{limit}")

            def takes_it():  # a resize while the docks still held their old least was cut short: ask again
                if (window.width(), window.height()) != (width, height):
                    window.resize(width, height)
                    return False
                return True
            await until(takes_it, 5, f"the window to take {width}x{height}, not {window.width()}x{window.height()}")
            await shot(window, f"fits-768-{family.replace(' ', '-').lower()}")
