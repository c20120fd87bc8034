"""Rendering budgets, measured in the real window against tests/hostile/server.py: 36 PNGs of 7000x7000 (each
under the 50-megapixel limit, 1.7 gigapixels together) and a 100,000-character Markdown table. Memory and the
loop's turns stay within bounds; what is left undecoded says so and can be shown on demand."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from calling import call, connected, result_widgets
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QScrollArea, QWidget
from support import SLOWDOWN, hostile_cmd
from uikit import until

from inspector.config import ServerSpec
from inspector.ui.render import media as render_media

IMAGES = 36
RSS_GROWTH_MB = 700  # peak RSS growth while the 36 images are shown (about 7 GB before the budgets)
TURN_S = 0.05  # CPU time of the window's thread without a loop turn, rendering Markdown
IMAGES_TURN_S = 0.15  # the same while 36 image blocks are made, laid out and painted (56-94 ms here)


def status(field: str) -> int:
    """A field of /proc/self/status, in kB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)


class Heartbeat:
    """The benches' heartbeat (a 10 ms timer), read in CPU time of the window's thread: the longest stretch of
    work done without letting the loop turn (an image decoding in another thread is not counted)."""

    def __init__(self) -> None:
        self.gaps: list[tuple[float, float]] = []
        self.last = (time.thread_time(), time.perf_counter())
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self._tick)
        self.timer.start(10)

    def _tick(self) -> None:
        now = (time.thread_time(), time.perf_counter())
        self.gaps.append((now[0] - self.last[0], now[1] - self.last[1]))
        self.last = now

    def stop(self) -> tuple[float, float]:
        self._tick()  # a turn still going on counts too (one long turn has no tick at all)
        self.timer.stop()
        return max(self.gaps, default=(0.0, 0.0))


async def test_many_big_images_stay_within_the_pixel_budget(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="images", command=hostile_cmd("big-images", str(IMAGES))))
        await connected(conn)
        await asyncio.sleep(0.3)
        Path("/proc/self/clear_refs").write_text("5")  # the peak RSS starts again from here
        base = status("VmRSS")
        beat = Heartbeat()
        await call(window, "echo", {"message": "x"}, timeout=60)
        images = await until(lambda: len(result_widgets(window, "image")) == IMAGES and result_widgets(window, "image"),
                             30, "the image blocks")
        views = [w.view for w in images]
        area = views[0].parentWidget()
        while not isinstance(area, QScrollArea):
            area = area.parentWidget()
        for view in views[:4]:  # scrolled through, as a person would: each image is decoded once it is on screen
            area.ensureWidgetVisible(view)
            await asyncio.sleep(0.1)
        try:
            await until(lambda: any(v.image is not None for v in views) and any(v.deferred for v in views),
                        60 * SLOWDOWN, "images decoded and held back")
        finally:
            print([(v.image is not None, bool(v.deferred)) for v in views])
        await asyncio.sleep(0.5)
        worst, wall = beat.stop()
        decoded = [v for v in views if v.image is not None]
        held = [v for v in views if v.deferred]
        peak = (status("VmHWM") - base) / 1024
        print(f"36 images: peak RSS growth {peak:.0f} MB, longest turn {worst * 1000:.0f} ms CPU "
              f"({wall * 1000:.0f} ms wall), {len(decoded)} decoded")
        assert 1 <= len(decoded) <= render_media.RESULT_PIXELS // 49_000_000, len(decoded)
        assert all(max(v.image.width(), v.image.height()) <= render_media.KEPT_MAX for v in decoded)
        assert held, "every image below the first screen was decoded"
        assert "this result's images add up to more than 100 megapixels; this one is 7000×7000 (49.0 megapixels)" \
            in held[0].deferred
        assert peak < RSS_GROWTH_MB, f"peak RSS grew {peak:.0f} MB"
        assert worst < IMAGES_TURN_S * SLOWDOWN, f"a loop turn took {worst * 1000:.0f} ms ({wall * 1000:.0f} ms wall)"
        # one held back is shown on demand (its own limit is the 50-megapixel check)
        one = held[0]
        button = one.findChild(QWidget, "imageShowAnyway")
        assert button.isVisibleTo(one)
        button.click()
        await until(lambda: one.image is not None, 30 * SLOWDOWN, "the image shown anyway")
        assert one.findChild(QWidget, "imageLabel").pixmap() is not None and not one.deferred


async def test_a_big_markdown_table_renders_in_steps(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="markdown", command=hostile_cmd("big-markdown", "100000")))
        await connected(conn)
        await call(window, "echo", {"message": "x"}, timeout=30)
        [block] = await until(lambda: result_widgets(window, "text"), 10, "the text block")
        assert len(block.text) >= 100_000
        await asyncio.sleep(0.3)
        beat = Heartbeat()
        started = time.perf_counter()
        block.md_button.setChecked(True)
        await until(lambda: block.markdown is not None and block.markdown.done, 60 * SLOWDOWN, "the Markdown")
        took = time.perf_counter() - started
        worst, wall = beat.stop()
        print(f"100,000-character table: rendered in {took:.1f} s, longest turn {worst * 1000:.0f} ms CPU "
              f"({wall * 1000:.0f} ms wall)")
        last_row = block.text.rsplit("\n", 1)[1].split("|")[2].strip()
        assert last_row in block.markdown.toPlainText()  # all of it, as Markdown
        assert block.markdown.document().toPlainText().count("item ") > 2000
        assert worst < TURN_S * SLOWDOWN, f"a loop turn took {worst * 1000:.0f} ms ({wall * 1000:.0f} ms wall)"


def test_markdown_pieces_render_on_their_own():
    from inspector.ui.render.text import markdown_pieces

    table = "| a | b |\n|---|---|\n" + "".join(f"| {i} | {i} |\n" for i in range(400))
    code = "```python\n" + "x = 1\n" * 600 + "```\n"
    pieces = list(markdown_pieces("intro\n\n" + table + "\n" + code + "\nend", 1000))
    assert len(pieces) > 6 and all(len(p) < 1100 for p in pieces)
    rows = [p for p in pieces if "| 399 |" in p or "| 200 |" in p]
    assert rows and all(p.startswith("| a | b |\n|---|---|") for p in rows)  # a table cut in two keeps its header
    fenced = [p for p in pieces if "x = 1" in p]
    assert all(p.startswith("```python") and p.count("```") == 2 for p in fenced)  # closed, opened again
    assert "".join(pieces).count("| 137 | 137 |") == 1 and pieces[-1].endswith("end")
