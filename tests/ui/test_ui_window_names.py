"""The server list shows its servers' names whole at every text size on a 1366x768 laptop and a 1920x1080 desktop,
at the width it starts with: at least the name without a note in brackets ("demo" of "demo (built-in)"), measured
with the bold font the list draws names in against the room a row leaves them."""

from __future__ import annotations

import pytest
from calling import connected
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QListView
from uikit import demo_cmd, find, shot, until

from inspector.config import ServerSpec
from inspector.ui.servers.catalog_link import DEMO_NAME
from inspector.ui.servers.sidebar import ServerDelegate
from inspector.ui.window import layout
from inspector.ui.window.preferences import apply_font

PANEL = 48
SCREENS = {"1366x768": (1366, 768 - PANEL), "1920x1080": (1920, 1080 - PANEL)}
TEXT_SIZES = {"100": 0, "150": 14, "200": 18}  # Preferences → Text size, in points (the suite's font is 9 pt)
ICON_ROOM = getattr(ServerDelegate, "ICON_ROOM", 22)  # a row's status icon and the gap after it
NAMES = {DEMO_NAME: "demo", "everything": "everything"}  # a name, and what of it must show at least


@pytest.mark.parametrize("screen", sorted(SCREENS))
@pytest.mark.parametrize("text_size", list(TEXT_SIZES))
async def test_the_server_list_shows_each_name_whole_at(text_size, screen, qapp, open_window):
    apply_font(qapp, TEXT_SIZES[text_size])
    try:
        async with open_window() as window:
            conns = [window.add_server(ServerSpec(name=name, command=demo_cmd())) for name in NAMES]
            for conn in conns:
                await connected(conn)
            width, height = layout.first_size_in(*SCREENS[screen])
            window.layout_state.arrange(width, height)  # a first start on that screen
            window.layout_state.shown()
            view = find(window, QListView, "serverList")
            bold = QFont(view.font())
            bold.setBold(True)
            fm = QFontMetrics(bold)
            model = view.model()

            def rooms():
                """Per row: its name and the px a row leaves the name (after its margins and status icon)."""
                return [(str(model.index(row, 0).data()),
                         view.visualRect(model.index(row, 0)).width() - 2 * ServerDelegate.PAD - ICON_ROOM)
                        for row in range(model.rowCount())]

            def core_fits():
                return all(fm.horizontalAdvance(NAMES[name]) <= room for name, room in rooms())

            await until(lambda: view.isVisible() and view.width() > 0 and core_fits(), 5,
                        f"at {text_size} % on {screen} each name to have room, not "
                        + ", ".join(f"{n!r}: {fm.horizontalAdvance(NAMES[n])} px in {r}" for n, r in rooms()))
            delegate = view.itemDelegate()
            for name, room in rooms():
                if fm.horizontalAdvance(name) <= room:
                    continue  # whole
                # too long for its row: the list must draw the name without its note, not elide it
                shown = getattr(delegate, "name_shown", None)
                drawn = shown(view.font(), room + 2 * ServerDelegate.PAD + ICON_ROOM, name) \
                    if shown else fm.elidedText(name, Qt.ElideRight, room)
                assert drawn == NAMES[name], \
                    f"at {text_size} % on {screen} {name!r} needs {fm.horizontalAdvance(name)} px, its row leaves " \
                    f"{room}: drawn as {drawn!r}"
            await shot(window, f"server-names-{screen}-{text_size}")
    finally:
        apply_font(qapp, 0)
