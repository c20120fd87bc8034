"""One design language (issue 34, point 4): the prompt form has the tool form's pattern, server-provided Markdown
resources are read rendered, badges are filled and explained, one accent colour per theme, and the window's
spacing, type sizes and colours come from one place (`inspector.ui.base.design`)."""

from __future__ import annotations

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
