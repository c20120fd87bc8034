"""The window fits the screen at every text size (Preferences → Text size, 100 % to 200 %) on a 1366x768 laptop and
a 1920x1080 desktop, measured as a person would meet it (in the suite's shipped font): the least size it asks for
fits the area under the desktop's panel with its title bar, the answer of a one-field tool keeps half of the
window's height, and the tool list keeps room for its names, not a sliver."""

from __future__ import annotations

import pytest
from calling import call, connected, select_tool
from PySide6.QtWidgets import QLabel, QListView, QPlainTextEdit, QScrollArea
from uikit import demo_cmd, find, shot, until

from inspector.config import ServerSpec
from inspector.ui.window import layout
from inspector.ui.window.preferences import apply_font

PANEL = 48  # a taskbar or top bar: the available area is what is left under it
SCREENS = {"1366x768": (1366, 768 - PANEL), "1920x1080": (1920, 1080 - PANEL)}
TEXT_SIZES = {"100": 0, "150": 14, "200": 18}  # Preferences → Text size, in points: the suite's font is 9 pt
NAME_LETTERS = 14  # the tool list shows this many average letters of a name at least ("markdown_repor")
LIST_ROWS = 5  # and this many tools at least
METHOD_LETTERS = 10  # the traffic list shows this many letters of a row's method ("tools/call") at least


def whole(label) -> bool:
    """Whether a label shows all of its text: on one line as wide as the text, or wrapped into lines (no word
    wider than the label) that its height holds."""
    fm = label.fontMetrics()
    if not label.wordWrap():
        return fm.horizontalAdvance(label.text()) <= label.width()
    words = label.text().split()
    return all(fm.horizontalAdvance(w) <= label.width() for w in words) \
        and label.heightForWidth(label.width()) <= label.height()


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


@pytest.mark.parametrize("screen", sorted(SCREENS))
@pytest.mark.parametrize("text_size", list(TEXT_SIZES))
async def test_the_traffic_dock_opened_is_readable_and_the_window_still_fits_at(text_size, screen, qapp,
                                                                                  open_window):
    """The traffic dock as the user opens it (View → Traffic, Ctrl+Shift+T; on a laptop at 150 % and 200 % it starts
    closed): the selected message and its bytes show 8 lines each, the window stays within the screen, and once the
    dock is closed again the answer has its half."""
    from PySide6.QtWidgets import QApplication, QDockWidget

    area_w, area_h = SCREENS[screen]
    limit = area_h - layout.FRAME_ALLOWANCE
    apply_font(qapp, TEXT_SIZES[text_size])
    try:
        async with open_window() as window:
            conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
            await connected(conn)
            width, height = layout.first_size_in(area_w, area_h)
            window.layout_state.arrange(width, height)
            window.layout_state.shown()
            select_tool(window, "echo")
            await until(lambda: (window.width(), window.height()) == (width, height), 5, "the first size")
            dock = window.traffic_dock
            for d in window.findChildren(QDockWidget):  # as the user leaves them: all closed
                if d.toggleViewAction().isChecked():  # (a dock behind another's tab is open, not visible)
                    d.toggleViewAction().trigger()
            await until(lambda: not dock.isVisible(), 5, "the docks closed")
            dock.toggleViewAction().trigger()  # View → Traffic
            pane, store = window.traffic_pane, window.store
            await until(lambda: any(store.method(pane.model.record_at(r)) == "tools/list"
                                    for r in range(pane.model.rowCount())), 5, "the tools/list request")
            request = next(pane.model.record_at(r) for r in range(pane.model.rowCount())
                           if store.method(pane.model.record_at(r)) == "tools/list")
            answer = store.record(request).pair
            await until(lambda: answer is not None and pane.select_record(answer), 5, "the answer's row")
            pretty = find(window, QPlainTextEdit, "trafficDetailPretty")
            raw = find(window, QPlainTextEdit, "trafficDetailRaw")

            def lines(edit) -> int:
                return edit.viewport().height() // edit.fontMetrics().lineSpacing()

            def least():
                QApplication.sendPostedEvents(None, 0)
                return window.minimumSizeHint()
            try:
                await until(lambda: lines(pretty) >= 8 and lines(raw) >= 8, 5,
                            f"8 lines of the message at {text_size} % on {screen}, not {lines(pretty)} formatted and "
                            f"{lines(raw)} raw")
                await until(lambda: least().width() <= area_w and least().height() <= limit
                            and window.width() <= area_w and window.height() <= limit, 5,
                            f"the window with the traffic open at {text_size} % to fit {area_w}x{limit}: it asks for "
                            f"{least().width()}x{least().height()} and is {window.width()}x{window.height()}")
                # the message's header is whole beside its buttons ("#15 ·" was all of it at 200 %): the text's
                # width against the label's, or its wrapped lines' height against the label's height
                header = find(window, QLabel, "trafficDetailHeader")
                await until(lambda: whole(header), 5,
                            f"the traffic header whole at {text_size} % on {screen}: {header.text()!r} needs "
                            f"{header.fontMetrics().horizontalAdvance(header.text())} px, "
                            f"{header.heightForWidth(header.width())} px tall wrapped, in "
                            f"{header.width()}x{header.height()}")
                await until(lambda: lines(pretty) >= 8 and lines(raw) >= 8, 5,
                            f"8 lines of the message under its header at {text_size} % on {screen}, not "
                            f"{lines(pretty)} formatted and {lines(raw)} raw")
            finally:
                await shot(window, f"fit-traffic-{screen}-{text_size}")
            # what a row is read by, its method, is in sight without scrolling the list sideways ("tools/call")
            from PySide6.QtWidgets import QTableView

            from inspector.ui.traffic.model import COL_METHOD

            table = find(window, QTableView, "trafficView")
            hh = table.horizontalHeader()
            shown = min(hh.sectionSize(COL_METHOD), table.viewport().width() - hh.sectionViewportPosition(COL_METHOD))
            letters = shown / table.fontMetrics().averageCharWidth()
            assert letters >= METHOD_LETTERS, f"the list shows {letters:.1f} letters of a method at {text_size} %"
            dock.toggleViewAction().trigger()  # closed again: the answer has its room back
            await call(window, "echo", {"message": LONG_ANSWER})
            scroll = find(window, QScrollArea, "resultScroll")
            await until(lambda: scroll.viewport().height() >= window.height() // 2, 5,
                        f"the answer's viewport to take half of {window.height()} px with the traffic closed, not "
                        f"{scroll.viewport().height()}")
    finally:
        apply_font(qapp, 0)


@pytest.mark.parametrize("text_size", ["200"])
async def test_an_image_answer_is_as_wide_as_the_result_at(text_size, qapp, open_window):
    """The demo server's chart at 200 % on a laptop: the image scaled down to the result's width (aspect kept, its
    100 % button shows it whole), the result page never scrolling sideways."""
    from calling import result_widgets
    from PySide6.QtWidgets import QLabel, QWidget

    from inspector.ui.render.media import ImageView

    area_w, area_h = SCREENS["1366x768"]
    apply_font(qapp, TEXT_SIZES[text_size])
    try:
        async with open_window() as window:
            conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
            await connected(conn)
            window.layout_state.arrange(*layout.first_size_in(area_w, area_h))
            window.layout_state.shown()
            await call(window, "render_chart", {"values": [3, 1, 4, 1, 5, 9, 2, 6]})
            scroll = find(window, QScrollArea, "resultScroll")
            await until(lambda: result_widgets(window, "image"), 5, "the image block")
            block = result_widgets(window, "image")[0]
            label = block.findChild(QLabel, "imageLabel")
            await until(lambda: label.pixmap() is not None and not label.pixmap().isNull(), 5, "the image drawn")

            def right(w: QWidget) -> int:
                return w.mapTo(scroll.viewport(), w.rect().topRight()).x()
            try:
                await until(lambda: right(label) <= scroll.viewport().width()
                            and scroll.horizontalScrollBar().maximum() == 0, 5,
                            f"the image within the result's {scroll.viewport().width()} px: it ends at {right(label)} "
                            f"px, the page scrolls {scroll.horizontalScrollBar().maximum()} px sideways")
            finally:
                await shot(window, f"fit-image-{text_size}")
            pm, image = label.pixmap(), block.findChild(ImageView).image
            assert abs(pm.width() / pm.height() - image.width() / image.height()) < 0.02  # its aspect kept
    finally:
        apply_font(qapp, 0)


@pytest.mark.parametrize("tool,args", [("markdown_report", {"topic": "spyglass"}), ("weather", {"city": "Oslo"})])
async def test_a_text_or_structured_answer_never_scrolls_sideways_at_200_on_a_laptop(tool, args, qapp, open_window):
    """At 200 % on a 1366x768 laptop the answer's column is narrow (the form's column beside it): the answer stays
    within its column and the window (no button of the result's header or of a block past the right edge), and the
    result page never scrolls sideways."""
    from PySide6.QtWidgets import QAbstractButton, QWidget

    area_w, area_h = SCREENS["1366x768"]
    apply_font(qapp, TEXT_SIZES["200"])
    try:
        async with open_window() as window:
            conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
            await connected(conn)
            window.layout_state.arrange(*layout.first_size_in(area_w, area_h))
            window.layout_state.shown()
            await call(window, tool, args)
            await shot(window, f"fit-answer-{tool}-200")  # (the answer laid out and drawn)
            scroll = find(window, QScrollArea, "resultScroll")
            view = find(window, QWidget, "resultView")

            def cut() -> list[str]:  # a button of the answer past the window's right edge or the result's
                edge = scroll.mapTo(window, scroll.rect().topRight()).x()
                right = min(window.width() - 1, edge)
                return [f"{b.objectName() or b.text()} ends at {b.mapTo(window, b.rect().topRight()).x()}"
                        for b in view.findChildren(QAbstractButton) if b.isVisibleTo(view)
                        and b.mapTo(window, b.rect().topRight()).x() > right]
            await until(lambda: scroll.horizontalScrollBar().maximum() == 0 and not cut(), 5,
                        f"the {tool} answer within the window ({window.width()} px): the page scrolls "
                        f"{scroll.horizontalScrollBar().maximum()} px sideways, cut: {cut()}")
            assert window.width() <= area_w, f"the window is {window.width()} px wide on a {area_w} px screen"
    finally:
        apply_font(qapp, 0)
