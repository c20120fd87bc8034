"""The window's tap socket and another local user: a folder made first by another user, a folder of ours
left open, a symbolic link where the folder should be are refused with the reason in the banner (and
nothing listens there); a tap run by another uid that reaches the socket is closed and logged, and never
becomes a server in the sidebar."""

from __future__ import annotations

import asyncio
import json

from PySide6.QtWidgets import QLabel
from squat import (
    ROOT_ONLY,
    UNIX_ONLY,
    connect_as_another_uid,
    left_open,
    linked,
    reachable_by_another_uid,
    short_folder,
    squatted,
)
from uikit import find, shot

from inspector.ui.window.tap_link import TapLink

pytestmark = UNIX_ONLY


async def refused(open_window, expect_log, folder, says: str, picture: str | None = None) -> None:
    expect_log("spyglass.ui.tap", "taps are not received here")
    sock = folder / "tap.sock"
    async with open_window() as window:
        link = TapLink(window, sock)
        assert not await link.listen()
        assert link.server is None and not sock.exists()
        assert says in (link.problem or ""), link.problem
        banner = find(window, QLabel, "errorBannerText")
        assert banner.isVisible() and says in banner.text(), banner.text()
        if picture:
            await shot(window, picture)


@ROOT_ONLY
async def test_a_folder_made_first_by_another_user_is_refused(open_window, expect_log):
    with short_folder() as base:
        await refused(open_window, expect_log, squatted(base), "uid 65534), not to you")


async def test_a_folder_of_ours_open_to_others_is_refused(open_window, expect_log):
    with short_folder() as base:
        folder = left_open(base)
        await refused(open_window, expect_log, folder, f"{folder} is open to other users (mode 0755)")
        assert (folder.stat().st_mode & 0o777) == 0o755  # told, not changed behind the user's back


async def test_a_symbolic_link_for_a_folder_is_refused(open_window, expect_log):
    with short_folder() as base:
        folder = linked(base)
        await refused(open_window, expect_log, folder, f"{folder} is a symbolic link", "tap-socket-refused")


@ROOT_ONLY
async def test_a_tap_of_another_uid_is_closed(open_window, expect_log):
    expect_log("spyglass.ui.tap", "uid 65534), not to you")
    hello = {"tap": 1, "server": "intruder", "session": None, "frames": 0,
             "header": {"servers": [{"id": "intruder", "name": "intruder", "definition": {}, "tapped": True}]}}
    with short_folder() as base:
        sock = base / "tap.sock"
        async with open_window() as window:
            link = TapLink(window, sock)
            assert await link.listen()
            before = len(window.servers.connections)
            with reachable_by_another_uid(sock) as door:
                intruder = connect_as_another_uid(door, json.dumps(hello).encode())
                try:
                    out, _ = await asyncio.to_thread(intruder.communicate, timeout=30)
                finally:
                    if intruder.poll() is None:
                        intruder.kill()
                        intruder.wait(10)
            assert out.strip() == "closed"
            assert link.sessions == [] and len(window.servers.connections) == before
            await link.close()

