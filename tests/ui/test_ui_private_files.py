"""What the window writes from Qt objects is readable by its user only, like every file Spyglass writes."""

from __future__ import annotations

import os
import stat


async def test_a_screenshot_is_readable_by_its_user_only(open_window, tmp_path):
    """`--screenshot` and the window's own screenshots: a PNG made 0600 whatever the umask (Qt's
    `QPixmap.save(path)` made it 0644)."""
    old = os.umask(0o022)
    try:
        async with open_window() as window:
            ok, where = window.save_screenshot(str(tmp_path / "shot.png"))
    finally:
        os.umask(old)
    assert ok, where
    path = tmp_path / "shot.png"
    assert path.read_bytes().startswith(b"\x89PNG") and stat.S_IMODE(path.stat().st_mode) == 0o600
