"""One design language (issue 34, point 4): the prompt form has the tool form's pattern, server-provided Markdown
resources are read rendered, badges are filled and explained, one accent colour per theme, and the window's
spacing, type sizes and colours come from one place (`inspector.ui.base.design`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QWidget
from test_ui_resources import ready
from uikit import demo_cmd, find, until

from inspector.config import ServerSpec


def _rect(widget: QWidget, window: QWidget):
    top_left = widget.mapTo(window, widget.rect().topLeft())
    return top_left.x(), top_left.y(), widget.width(), widget.height()


async def test_the_prompt_form_is_laid_out_as_the_tool_form(open_window):
    """Labels above their fields, left-aligned with them, and the primary button at the left edge of the form:
    on Prompts (Get prompt) exactly where Call stands on Tools."""
    async with open_window() as window:
        window.resize(1366, 768)
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), save=False)
        await ready(conn)
        # the tool form: echo's one field
        from calling import select_tool

        select_tool(window, "echo")
        tool_field = find(window, QWidget, "field:/message")
        call = find(window, QPushButton, "callButton")
        await until(lambda: tool_field.isVisible() and call.isVisible(), 5, "the tool form")
        tool_title = find(window, QLabel, "toolTitle")
        fx, fy, _, _ = _rect(tool_field, window)
        cx, cy, _, _ = _rect(call, window)
        assert cy > fy and abs(cx - fx) <= 4  # Call under the form, at its left
        tool_offset = cx - _rect(tool_title, window)[0]  # where Call stands in the detail column
        # the prompt form
        window.tabs.setCurrentWidget(window.prompts_pane)
        window.prompts_pane.select("greeting")
        form = find(window, QWidget, "promptForm")
        label = find(form, QLabel, "argLabel:name")
        edit = find(form, QLineEdit, "arg:name")
        get = find(window, QPushButton, "getPromptButton")
        await until(lambda: edit.isVisible() and get.isVisible(), 5, "the prompt form")
        lx, ly, _, lh = _rect(label, window)
        ex, ey, ew, _ = _rect(edit, window)
        gx, gy, _, _ = _rect(get, window)
        assert ly + lh <= ey, f"the label ({ly}+{lh}) is not above its field ({ey})"
        assert lx == ex, f"the label starts at x={lx}, its field at x={ex}"
        assert label.buddy() is edit
        assert gy > ey, "Get prompt stands under the form"
        assert abs(gx - ex) <= 4, f"Get prompt at {gx - ex} px from the fields' left edge"
        offset = gx - _rect(find(window, QLabel, "promptTitle"), window)[0]
        assert offset == tool_offset, f"Get prompt {offset} px into its column, Call {tool_offset} px into its own"
        style_edit = find(form, QLineEdit, "arg:style")
        assert _rect(style_edit, window)[0] == ex and style_edit.width() == ew  # every field in one column


async def test_markdown_resources_are_read_rendered_with_the_source_a_click_away(open_window):
    """The demo's style guide is text/markdown: it is shown rendered, and the Markdown switch (the tool result's)
    shows the text exactly as sent, and back."""
    from PySide6.QtWidgets import QAbstractButton, QPlainTextEdit, QTextEdit
    from test_ui_resources import read

    from inspector.demo.resources import STYLE_GUIDE

    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), save=False)
        await ready(conn)
        window.tabs.setCurrentWidget(window.resources_pane)
        shown = await read(window, "demo://docs/style-guide.md", "style guide")
        rendered = find(shown, QTextEdit, "markdownView")
        source = find(shown, QPlainTextEdit, "resourceText")
        switch = find(shown, QAbstractButton, "markdownToggle")
        await until(rendered.isVisible, 5, "the rendered Markdown")
        assert switch.isChecked() and not source.isVisible()
        assert "#" not in rendered.toPlainText().splitlines()[0]  # a heading, not its '#'
        switch.click()
        await until(source.isVisible, 5, "the source")
        assert not rendered.isVisible() and source.toPlainText() == STYLE_GUIDE
        switch.click()
        await until(rendered.isVisible, 5, "rendered again")


def test_which_resource_texts_are_rendered(qapp):
    """text/markdown always; a text of no type (or text/plain) when it looks like Markdown; JSON, code, a plain
    sentence never."""
    from PySide6.QtWidgets import QTextEdit

    from inspector.ui.render.results import render_resource_contents

    report = "# Report\n\nAll is well.\n\n- one\n- two\n"
    cases = [({"uri": "x:a", "mimeType": "text/markdown", "text": "just a line"}, True),
             ({"uri": "x:b", "mimeType": "text/plain", "text": report}, True),
             ({"uri": "x:c", "text": report}, True),
             ({"uri": "x:d.md", "text": "plain words"}, True),
             ({"uri": "x:e", "mimeType": "text/plain", "text": "A plain sentence, with a * in it."}, False),
             ({"uri": "x:f", "mimeType": "application/json", "text": '{"a": 1}'}, False),
             ({"uri": "x:g", "mimeType": "text/x-python", "text": "# a comment\n\n- 1\n"}, False)]
    for item, rendered in cases:
        box = render_resource_contents([item])
        assert (box.findChild(QTextEdit, "markdownView") is not None) is rendered, item


# ---------------------------------------------------------------------- the tokens, and nothing beside them
UI = Path(__file__).resolve().parents[2] / "inspector" / "ui"
TOKENS = UI / "base" / "design.py"
# Each entry: a file, and why it may hold what the tokens module otherwise holds alone. Keep it short.
ALLOWED: dict[str, str] = {}
COLOUR_LITERAL = re.compile(r"#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?(?:[0-9a-fA-F]{2})?\b")
PX_LITERAL = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?px\b")
LAYOUT_CALLS = {"setContentsMargins", "setSpacing", "setHorizontalSpacing", "setVerticalSpacing", "addSpacing"}
FONT_CALLS = {"setPointSize", "setPointSizeF", "setPixelSize"}
NAMED_COLOURS = {"white", "black", "red", "green", "blue", "yellow", "gray", "grey", "orange"}


def hard_coded(path: Path) -> list[str]:
    """What `path` writes that belongs to the tokens: colour literals, px sizes in style sheets, pixel margins
    and spacings, point sizes (as line: what)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if COLOUR_LITERAL.search(node.value) and not node.value.lstrip().startswith(("#!", "# ")):
                found.append(f"{node.lineno}: colour {COLOUR_LITERAL.search(node.value).group()}")
            if PX_LITERAL.search(node.value) and PX_LITERAL.search(node.value).group() not in ("0px", "-0px"):
                found.append(f"{node.lineno}: {PX_LITERAL.search(node.value).group()}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            args = [*node.args, *(k.value for k in node.keywords)]
            if name in LAYOUT_CALLS and any(isinstance(a, ast.Constant) and isinstance(a.value, (int, float))
                                            and a.value != 0 for a in args):
                found.append(f"{node.lineno}: {name} in pixels")
            if name in FONT_CALLS and any(isinstance(a, ast.Constant) or any(
                    isinstance(c, ast.Constant) and isinstance(c.value, float) for c in ast.walk(a)) for a in args):
                found.append(f"{node.lineno}: {name} with a number")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "QColor" and \
                node.args and isinstance(node.args[0], ast.Constant) and \
                str(node.args[0].value).lower() in NAMED_COLOURS:
            found.append(f"{node.lineno}: QColor({node.args[0].value!r})")
    return sorted(found, key=lambda f: int(f.split(":")[0]))


def test_spacing_type_and_colour_come_from_the_tokens():
    """No module of the window but `base/design.py` writes a colour, a px size, a pixel margin or spacing, or a
    point size: a new one fails here (use `design.space`, `design.margins`, `design.size`, `design.font`,
    `theme.colour` or a named colour in `design.COLOURS`)."""
    problems = []
    for path in sorted(UI.rglob("*.py")):
        if path == TOKENS or path.relative_to(UI).as_posix() in ALLOWED:
            continue
        problems += [f"{path.relative_to(UI)}:{line}" for line in hard_coded(path)]
    assert not problems, "hard-coded design values outside inspector/ui/base/design.py:\n" + "\n".join(problems)


def test_the_scan_finds_what_it_forbids(tmp_path):
    """The check above is not blind: each kind of value it forbids, written in a module, is found."""
    sample = tmp_path / "sample.py"
    sample.write_text('lay.setContentsMargins(8, 6, 8, 8)\nlay.setSpacing(4)\nw.setStyleSheet("color: #cf222e;")\n'
                      'f.setStyleSheet(f"border: 1px solid {c};")\nfont.setPointSizeF(font.pointSizeF() * 1.4)\n'
                      'p.setPen(QColor("white"))\nlay.setContentsMargins(0, 0, 0, 0)\nlay.addSpacing(8)\n')
    found = hard_coded(sample)
    assert [f.split(":")[0] for f in found] == ["1", "2", "3", "4", "5", "6", "8"], found


def test_the_scales_are_scales():
    from inspector.ui.base import design

    steps = list(design.SPACE.values())
    assert steps == sorted(steps) and steps[0] == 0 and {4, 8, 12, 16, 24} <= set(steps)
    sizes = [design.TYPE[r] for r in ("small", "body", "heading", "title", "display")]
    assert sizes == sorted(sizes) and design.TYPE["body"] == 1.0 and design.TYPE["display"] >= 2.0
    assert set(design.ACCENT) == set(design.ON_ACCENT) == {"light", "dark", "high-contrast"}
    try:
        design.set_text_scale(2.0)
        assert design.space("xl") == 24 and design.space("xxl") == 36  # framing grows with the text, half as fast
        assert design.space("m") == 8 and design.space("none") == 0  # the gaps within a pane stay
    finally:
        design.set_text_scale(1.0)
    assert design.space("m") == 8


# ---------------------------------------------------------------------- one accent, filled badges
def _close(a, b, tolerance: int = 40) -> bool:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) <= tolerance


def _dominant(widget: QWidget, rect=None):
    """The most frequent colour of what `widget` draws (in `rect`, its own coordinates)."""
    from collections import Counter

    from PySide6.QtGui import QColor

    image = widget.grab(rect if rect is not None else widget.rect()).toImage()
    ratio = image.devicePixelRatio()
    counts = Counter(image.pixel(x, y) for x in range(0, image.width(), 2) for y in range(0, image.height(), 2))
    assert counts, f"{widget.objectName()} drew nothing"
    del ratio
    return QColor.fromRgb(counts.most_common(1)[0][0])


async def test_primary_buttons_selection_links_and_focus_wear_the_themes_accent(open_window, qapp):
    """In each theme: Call, Read and Get prompt are filled with the accent, the selected tool's row is drawn in
    it, and links and the focus frame take it (the palette's Link and Highlight)."""
    from PySide6.QtCore import QItemSelectionModel
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QListView
    from uikit import row_of

    from inspector.ui.base import design, theme

    for look in ("light", "dark", "high-contrast"):
        async with open_window(look) as window:
            window.resize(1366, 768)
            accent = design.accent(look)
            palette = qapp.palette()
            assert palette.color(QPalette.Highlight) == accent and palette.color(QPalette.Link) == accent
            assert palette.color(QPalette.HighlightedText) == design.on_accent(look)
            conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), save=False)
            await ready(conn)
            from calling import select_tool

            select_tool(window, "echo")
            call = find(window, QPushButton, "callButton")
            await until(call.isVisible, 5, "Call")
            assert call.property("primary") and _close(_dominant(call), accent), (look, _dominant(call).name())
            plain = find(window, QPushButton, "cancelButton") if window.findChild(QPushButton, "cancelButton") \
                else None
            if plain is not None and plain.isVisible():
                assert not _close(_dominant(plain), accent)  # only the primary button is filled
            tools = find(window, QListView, "toolList")
            index = row_of(tools, "echo")
            tools.selectionModel().setCurrentIndex(index, QItemSelectionModel.ClearAndSelect)
            rect = tools.visualRect(index).intersected(tools.viewport().rect())
            assert _close(_dominant(tools.viewport(), rect), accent), look
            window.tabs.setCurrentWidget(window.prompts_pane)
            window.prompts_pane.select("greeting")
            find(window.prompts_pane.form, QLineEdit, "arg:name").setText("Ada")
            get = find(window, QPushButton, "getPromptButton")
            await until(lambda: get.isVisible() and get.isEnabled(), 5, "Get prompt")
            assert _close(_dominant(get), accent), look
            window.tabs.setCurrentWidget(window.resources_pane)
            window.resources_pane.select("demo://docs/welcome.txt")
            read = find(window, QPushButton, "readButton")
            await until(lambda: read.isVisible() and read.isEnabled(), 5, "Read")
            assert _close(_dominant(read), accent), look
            assert theme.accent() == accent


async def test_every_badge_is_filled_and_says_what_it_means(open_window):
    """The tool list's badges (annotations, findings, "may change things"), the tool header's, a result's
    annotation badges and the running mark: each filled with its colour (not coloured text on the row) and each
    with a tooltip that explains it."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QListView, QStyleOptionViewItem, QToolTip
    from uikit import row_of

    from inspector.ui.base import theme
    from inspector.ui.base.badge import Badge, badge_tip
    from inspector.ui.render.results import block_widget

    async with open_window() as window:
        window.resize(1920, 1080)
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()), save=False)
        await ready(conn)
        tools = find(window, QListView, "toolList")
        await until(lambda: tools.viewport().width() > 200, 5,
                    f"a list wide enough for its badges ({tools.width()} in {window.width()}x{window.height()})")
        delegate = tools.itemDelegate()
        seen = set()
        for name in ("echo", "delete_item", "create_event", "toggle_bonus_tool"):
            index = row_of(tools, name)
            option = QStyleOptionViewItem()
            tools.initViewItemOption(option)
            option.rect = tools.visualRect(index)
            for rect, label, key in delegate.badges_at(option, index):
                seen.add(label)
                inner = rect.adjusted(2, 2, -2, -2)
                # filled: the badge's colour is what most of its box is painted in (the label is small)
                assert _close(_dominant(tools.viewport(), inner), theme.colour(key), 60), (name, label)
                QToolTip.hideText()
                event = QHelpEvent(QEvent.ToolTip, rect.center(), tools.viewport().mapToGlobal(rect.center()))
                assert delegate.helpEvent(event, tools, option, index)
                await until(lambda: QToolTip.isVisible() and QToolTip.text(), 5, f"the tooltip of {label}")
                assert badge_tip(label, key) in QToolTip.text() or key == "warning", (label, QToolTip.text())
                assert len(QToolTip.text()) > len(label) + 10, f"{label!r}'s tooltip says nothing more"
        assert {"read-only", "destructive"} <= seen, seen
        QToolTip.hideText()
        # the header of a destructive tool
        from calling import select_tool

        select_tool(window, "delete_item")
        header = find(window, QWidget, "toolBadges")
        await until(header.isVisible, 5, "the header")
        badges = header.findChildren(Badge)
        assert [b.text() for b in badges][:1] == ["destructive"]
        for b in badges:
            await until(b.isVisible, 5, "shown")
            assert len(b.toolTip()) > len(b.text()) + 10
            assert _close(_dominant(b), b.fill(), 60), b.text()
        # a result's annotation badges
        block = block_widget({"type": "text", "text": "hi", "annotations": {"audience": ["user"], "priority": 0.5}})
        block.resize(400, 120)
        block.show()
        shown = block.findChildren(Badge)
        assert [b.text() for b in shown] == ["for user", "priority 0.5"]
        for b in shown:
            assert b.toolTip() and _close(_dominant(b), b.fill(), 60)
        block.close()


async def test_finding_undeclared_and_running_badges_are_filled_and_explained(qapp):
    """On any list drawn by the shared delegate: a finding's badge shows the finding's own words, the undeclared
    badge says what the specification assumes; the running mark is filled and says what it is."""
    from PySide6.QtCore import QEvent, QRect
    from PySide6.QtGui import QHelpEvent, QImage, QPainter, QStandardItem, QStandardItemModel
    from PySide6.QtWidgets import QListView, QStyleOptionViewItem, QToolTip

    from inspector.session.tools import UNDECLARED
    from inspector.ui.base import theme
    from inspector.ui.base.items import BADGES_ROLE, FLAGS_ROLE, ItemDelegate
    from inspector.ui.calls import indicators

    model = QStandardItemModel()
    item = QStandardItem("Wipe")
    item.setData([UNDECLARED], BADGES_ROLE)
    item.setData(["1 finding"], FLAGS_ROLE)
    item.setToolTip("Wipe\n⚠ The output schema is not an object schema (check: output-schema)")
    model.appendRow(item)
    view = QListView()
    view.setModel(model)
    delegate = ItemDelegate(view)
    view.setItemDelegate(delegate)
    view.resize(600, 200)
    view.show()
    await until(view.isVisible, 5, "the list")
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    index = model.index(0, 0)
    option.rect = view.visualRect(index)
    placed = delegate.badges_at(option, index)
    assert [(label, key) for _, label, key in placed] == [("1 finding", "warning"), (UNDECLARED, UNDECLARED)]
    tips = []
    for rect, label, key in placed:
        assert _close(_dominant(view.viewport(), rect.adjusted(2, 2, -2, -2)), theme.colour(key), 60), label
        QToolTip.hideText()
        assert delegate.helpEvent(QHelpEvent(QEvent.ToolTip, rect.center(), view.viewport().mapToGlobal(
            rect.center())), view, option, index)
        await until(lambda: QToolTip.isVisible() and QToolTip.text(), 5, f"the tooltip of {label}")
        tips.append(QToolTip.text())
    assert "The output schema is not an object schema" in tips[0]
    assert "assume it may destroy" in tips[1]
    QToolTip.hideText()
    view.close()
    # the running mark
    image = QImage(300, 60, QImage.Format_ARGB32)
    image.fill(0)
    option = QStyleOptionViewItem()
    option.rect = QRect(0, 0, 300, 60)
    option.font = qapp.font()
    painter = QPainter(image)
    indicators._chip(painter, option, "● running 1.0 s", 6, line=0)
    painter.end()
    chip = indicators._chip_rect(option, "● running 1.0 s", 6, 0)
    from collections import Counter

    from PySide6.QtGui import QColor

    counts = Counter(image.pixel(x, y) for x in range(chip.left() + 2, chip.right() - 2)
                     for y in range(chip.top() + 2, chip.bottom() - 2))
    assert _close(QColor.fromRgb(counts.most_common(1)[0][0]), theme.colour("connecting"), 60)
    assert "The mark ends when the call does" in indicators.RUNNING_TIP
