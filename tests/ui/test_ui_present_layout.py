"""Presentation mode measured at the sizes it exists for (stages of 1366x768 and 1920x1080, text at 100, 150 and
200 %), against the demo server: the cards reflow (fewer columns as the text grows, every title and description
wrapped at whole words inside its card, the grid centred); the answer is large type; a structured answer's labels
never overlap their values; the Text size menu is readable; the form's messages are worded well, come at Run
and go with the fix, and Run stays where it is. Everything is measured against what is laid out, with the fonts
of the machine, never against fixed pixel numbers."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFontMetrics
from test_ui_present import present
from uikit import demo_cmd, shot, until

from inspector.ui.present import cards as cards_module

STAGES = ((1366, 768), (1920, 1080))
ZOOMS = (100, 150, 200)


async def stage(window, view, size, zoom):
    """The window at `size` (not full screen: the offscreen screen is smaller) with the text at `zoom` %."""
    window.setWindowState(Qt.WindowNoState)
    window.resize(*size)
    view.set_zoom(zoom)
    await until(lambda: window.width() == size[0] and view.width() > 0, 5, "the window's size")
    for _ in range(3):  # layouts settle in turns
        await shot(window, f"present-layout-{size[0]}-{zoom}")


def fits(fm: QFontMetrics, rect: QRect, text: str) -> list[str]:
    """What does not fit: a word wider than `rect`, or wrapped lines taller than it."""
    out = [f"the word {w!r} ({fm.horizontalAdvance(w)} px) is wider than {rect.width()} px"
           for w in text.split() if fm.horizontalAdvance(w) > rect.width()]
    need = fm.boundingRect(QRect(0, 0, rect.width(), 1 << 20), int(Qt.TextWordWrap), text).height()
    if text and need > rect.height():
        out.append(f"{text!r} needs {need} px of height, has {rect.height()}")
    return out


def card_geometry(view):
    """For each card shown: its item rectangle in the viewport, and the rectangles its texts are drawn in."""
    grid = view.cards.view
    out = []
    for r in range(grid.model().rowCount()):
        index = grid.model().index(r, 0)
        rect = grid.visualRect(index)
        out.append((index, rect, cards_module.parts(grid.font(), rect, str(index.data()))))
    return out


async def test_the_cards_reflow_at_every_size(open_window):
    async with open_window() as window:
        conn, view = await present(window, demo_cmd(), "demo")
        grid = view.cards.view
        for size in STAGES:
            columns = []
            for zoom in ZOOMS:
                await stage(window, view, size, zoom)
                shown = card_geometry(view)
                assert len(shown) >= 10
                fm, problems = QFontMetrics(grid.font()), []
                for index, rect, p in shown:
                    title, _, rest = str(index.data()).partition("\n")
                    tfm = QFontMetrics(p.title_font)
                    problems += fits(tfm, p.title, title) + fits(fm, p.body, rest)
                    for part in (p.title, p.body, p.icon):
                        if not p.card.contains(part):
                            problems.append(f"{title!r}: a part {part} outside its card {p.card}")
                    if p.title.left() < p.icon.right():
                        problems.append(f"{title!r}: the title runs into the icon")
                assert not problems, f"{size} at {zoom} %:\n" + "\n".join(problems)
                # the columns: the cards of the first row
                top = shown[0][1].top()
                row = [rect for _, rect, _ in shown if rect.top() == top]
                columns.append(len(row))
                # centred: the margins left and right of the first row within a few pixels
                viewport = grid.viewport().mapTo(view, grid.viewport().rect().topLeft())
                left = viewport.x() + row[0].left() + cards_module.GAP // 2
                right = view.width() - (viewport.x() + row[-1].right() + 1 - cards_module.GAP // 2)
                bar = grid.verticalScrollBar()
                right -= bar.width() if bar.isVisible() else 0
                assert abs(left - right) <= 4, f"{size} at {zoom} %: margins {left} and {right} px"
            # fewer columns as the text grows (never more), and fewer at 200 % than at 100 %
            assert columns == sorted(columns, reverse=True) and columns[0] > columns[2], \
                f"{size}: the columns at 100, 150 and 200 %: {columns}"
