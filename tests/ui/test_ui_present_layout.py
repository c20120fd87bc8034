"""Presentation mode measured at the sizes it exists for (stages of 1366x768 and 1920x1080, text at 100, 150 and
200 %), against the demo server: the cards reflow (fewer columns as the text grows, every title and description
wrapped at whole words inside its card, the grid centred); the answer is large type; a structured answer's labels
never overlap their values; the Text size menu is readable; the form's messages are worded well, come at Run
and go with the fix, and Run stays where it is. Everything is measured against what is laid out, with the fonts
of the machine, never against fixed pixel numbers."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QLabel, QLineEdit, QWidget
from test_ui_present import present
from uikit import demo_cmd, shot, until

from inspector.ui.present import cards as cards_module
from inspector.ui.present import words

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
        icon = index.data(Qt.DecorationRole)
        out.append((index, rect, cards_module.parts(grid.font(), rect, str(index.data()),
                                                    icon is not None and not icon.isNull())))
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
                        if not part.isEmpty() and not p.card.contains(part):
                            problems.append(f"{title!r}: a part {part} outside its card {p.card}")
                    if not p.icon.isEmpty() and p.title.left() < p.icon.right():
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


def where(widget: QWidget) -> QPoint:
    """Where `widget` is on the screen (what the pointer would be over)."""
    return widget.mapToGlobal(QPoint(0, 0))


def problems_shown(view) -> dict[str, str]:
    return {w.objectName(): w.text() for w in view.form.findChildren(QLabel)
            if w.objectName().startswith("problem:") and w.isVisible()}


def test_a_lists_problems_in_words_for_one_and_many():
    values = {"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 12}
    assert words.problem("[] should be non-empty", "Values", values) == "Please add at least one value."
    assert words.problem("'values' is a required property", "Values", values) == "Please add at least one value."
    assert words.problem("[1] is too short", "Entries", {"type": "array", "minItems": 3}) == \
        "Please add at least 3 entries."
    assert words.problem("[1, 2] is too long", "Boxes", {"type": "array", "maxItems": 1}) == \
        "Please keep at most one box."
    assert words.problem("this item has no value", "Item 2", {"type": "number"}) == "Please fill in item 2."
    assert words.problem("'ab' is too long", "Code", {"maxLength": 1}) == "Please use at most 1 character."
    assert words.problem("'a' is too short", "Code", {"minLength": 2}) == "Please enter at least 2 characters."
    assert words.singular("Values") == "Values"[:-1] and words.singular("entries") == "entry"
    assert words.singular("address") == "address" and words.singular("status") == "status"


async def test_the_forms_messages_come_at_run_go_with_the_fix_and_move_nothing(open_window):
    async with open_window() as window:
        conn, view = await present(window, demo_cmd(), "demo")
        for size in STAGES:
            await stage(window, view, size, 200)
            assert view.open_tool("render_chart")
            await until(lambda: view.run_button.isVisible() and view.form.isVisible(), 5, "the form")
            await shot(window, "present-layout-form-200")
            run_at = where(view.run_button)
            view.run_button.click()  # nothing filled in: problems, said in words
            await until(lambda: problems_shown(view), 5, "the problems")
            assert problems_shown(view) == {"problem:/values": "⚠ Please add at least one value."}
            assert view.form_note.isVisible() and "Please fix what is marked above" in view.form_note.text()
            await shot(window, "present-layout-problem-200")
            assert where(view.run_button) == run_at, "Run moved when the messages came"
            # a new, empty item is no mistake yet: no problem for it until Run (or until it is edited)
            add = view.form.findChild(QAbstractButton, "add:/values")
            add.click()
            await until(lambda: view.form.findChild(QLineEdit, "field:/values/0") is not None and
                        view.form.findChild(QLineEdit, "field:/values/0").isVisible(), 5, "the new item")
            view.form.refresh()
            await asyncio.sleep(0.2)  # a problem's label added to a shown row is shown a turn later
            assert "problem:/values/0" not in problems_shown(view), problems_shown(view)
            view.run_button.click()
            await until(lambda: "problem:/values/0" in problems_shown(view), 5, "the item's problem at Run")
            assert problems_shown(view)["problem:/values/0"] in ("⚠ Please enter a number.", "⚠ Please fill in item 1.")
            assert where(view.run_button) == run_at
            # the fix: the field's problem and the note go as soon as it is made, and Run stays where it is
            item = view.form.findChild(QLineEdit, "field:/values/0")
            item.setFocus()
            QTest.keyClicks(item, "3")
            await until(lambda: not view.form_note.isVisible() and not problems_shown(view), 5,
                        "the messages gone after the fix")
            assert where(view.run_button) == run_at, "Run moved when the messages went"
            view.show_cards()


async def run_it(view, name: str, **values: str):
    assert view.open_tool(name)
    for key, text in values.items():
        view.form.findChild(QLineEdit, f"field:/{key}").setText(text)
    view.run_button.click()
    assert not view.form_note.isVisible(), view.form_note.text()
    await until(lambda: view.card is not None and view.card.isVisible(), 20, f"the answer of {name}")
    for _ in range(2):
        await asyncio.sleep(0.1)  # laid out
    return view.card


async def test_the_answer_is_large_type(open_window):
    async with open_window() as window:
        conn, view = await present(window, demo_cmd(), "demo")
        for size in STAGES:
            for zoom in (100, 200):
                await stage(window, view, size, zoom)
                body = view.about.font().pointSizeF()
                short = await run_it(view, "echo", message="It is sunny in Lisbon")
                large = short.findChild(QWidget, "presentText").font().pointSizeF()
                assert 2 * body <= large <= 4 * body, (large, body)
                await shot(window, f"present-layout-answer-{size[0]}-{zoom}")
                longer = await run_it(view, "echo", message=" ".join(["A longer answer, in a few sentences."] * 8))
                font = longer.findChild(QWidget, "presentText").font().pointSizeF()
                assert 1.2 * body <= font < large
                # a structured answer: label/value rows, no label over its value
                card = await run_it(view, "weather", city="Lisbon")
                await shot(window, f"present-layout-fields-{size[0]}-{zoom}")
                labels = [w for w in card.findChildren(QLabel, "presentFieldLabel") if w.isVisible()]
                values = [w for w in card.findChildren(QLabel, "presentFieldValue") if w.isVisible()]
                assert len(labels) == len(values) == 3
                for label, value in zip(labels, values, strict=True):
                    a = QRect(label.mapTo(card, QPoint(0, 0)), label.size())
                    b = QRect(value.mapTo(card, QPoint(0, 0)), value.size())
                    assert not a.intersects(b), f"{label.text()!r} {a} runs into {value.text()!r} {b}"
                    fm = QFontMetrics(label.font())
                    assert fm.horizontalAdvance(label.text()) <= label.contentsRect().width(), label.text()
                    assert value.font().pointSizeF() >= 1.4 * body
                view.show_cards()


async def test_the_text_size_menu_is_readable(open_window):
    async with open_window() as window:
        conn, view = await present(window, demo_cmd(), "demo")
        await stage(window, view, STAGES[0], 100)
        for zoom in ZOOMS:
            view.set_zoom(zoom)
            menu = view.size_button.menu()
            menu.popup(view.size_button.mapToGlobal(view.size_button.rect().bottomLeft()))
            await until(lambda: menu.isVisible(), 5, "the menu")
            await asyncio.sleep(0.1)
            fm = QFontMetrics(menu.font())
            assert menu.font().pointSizeF() >= view.about.font().pointSizeF() * 0.99
            for action in menu.actions():
                room = menu.actionGeometry(action).width()
                # its words, a check mark's room and a margin on each side (less and Qt elides: "1…%")
                need = fm.horizontalAdvance(action.text()) + 2 * fm.height()
                assert room >= need, f"{action.text()!r} at {zoom} %: {room} px for {need}"
            menu.hide()


async def test_a_card_has_an_icon_only_where_the_server_gives_one_and_the_answer_no_empty_scroll_bar(open_window):
    """A tool that declares no icon gets no stand-in drawing: its card's title starts at the card's inner edge, the
    text taking the icon's room; a tool with an icon keeps it. The answer that fits shows no scroll bar."""
    async with open_window() as window:
        conn, view = await present(window, demo_cmd(), "demo")
        declared = {t["name"]: bool(t.get("icons")) for t in conn.session.tools.items}
        assert any(declared.values()) and not all(declared.values())
        for size in STAGES:
            for zoom in (100, 200):
                await stage(window, view, size, zoom)
                for index, rect, p in card_geometry(view):
                    name, icon = index.data(Qt.UserRole), index.data(Qt.DecorationRole)
                    has = icon is not None and not icon.isNull()
                    assert has == declared[name], f"{name}: icon shown {has}, declared {declared[name]}"
                    inner_left = p.card.left() + cards_module.PAD_X
                    if not has:  # the title and the description begin at the same edge: no room kept for an icon
                        assert p.title.left() == inner_left == p.body.left(), (name, p.title, p.body)
                    else:
                        assert p.title.left() > p.icon.right() >= inner_left, (name, p.title, p.icon)
                card = await run_it(view, "echo", message="It is sunny in Lisbon")
                await until(lambda: card.isVisible() and view.scroll.viewport().height() > 0, 5, "the answer")
                await asyncio.sleep(0.1)  # laid out
                await shot(window, f"present-layout-answer-bar-{size[0]}-{zoom}")
                bar = view.scroll.verticalScrollBar()
                assert not bar.isVisible(), \
                    f"{size} at {zoom} %: a scroll bar for {bar.maximum()} px beside an answer that fits"
                view.show_cards()
