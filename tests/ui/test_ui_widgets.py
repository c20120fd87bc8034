"""Widgets on their own: the tool model's rules, secret masking, plain-text display."""

from __future__ import annotations

import base64
import os

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QImage, QPixmap
from PySide6.QtWidgets import QApplication, QLineEdit

from inspector.config import ServerSpec
from inspector.session.tools import HINTS_NOTE, badges, display_name
from inspector.ui.base.items import BADGES_ROLE, FLAGS_ROLE
from inspector.ui.base.text import MASK, visible
from inspector.ui.calls.tool_list import ToolListPanel, ToolModel
from inspector.ui.servers.add_dialog import AddServerDialog, describe_spec


def png_data_uri() -> str:
    img = QImage(8, 8, QImage.Format_ARGB32)
    img.fill(QColor("red"))
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.WriteOnly)
    img.save(buf, "PNG")
    return "data:image/png;base64," + base64.b64encode(bytes(data)).decode()


def items(model):
    return {model.index(r, 0).data(Qt.UserRole): model.index(r, 0) for r in range(model.rowCount())}


def test_display_name_precedence():
    assert display_name({"name": "n", "title": "T", "annotations": {"title": "A"}}) == "T"
    assert display_name({"name": "n", "annotations": {"title": "A"}}) == "A"
    assert display_name({"name": "n", "title": ""}) == "n"
    assert display_name({}) == "(no name)"


def test_badges_apply_the_spec_defaults():
    # no annotations: may destroy (the spec's default, badged as not declared), open world
    assert badges({"name": "x"}) == ["may change things (not declared)", "open-world"]
    assert badges({"annotations": {"readOnlyHint": True}}) == ["read-only", "open-world"]
    assert badges({"annotations": {"readOnlyHint": True, "destructiveHint": True}}) == ["read-only", "open-world"]
    assert badges({"annotations": {"destructiveHint": False, "openWorldHint": False}}) == []
    assert badges({"annotations": {"idempotentHint": True, "openWorldHint": False}}) == [
        "may change things (not declared)", "idempotent"]
    assert badges({"annotations": {"destructiveHint": True, "openWorldHint": False}}) == ["destructive"]
    # not booleans: the defaults, not whatever truthiness the server sent
    assert badges({"annotations": {"readOnlyHint": "yes", "openWorldHint": 0}}) == [
        "may change things (not declared)", "open-world"]


def test_model_flags_duplicates_and_bad_schemas_without_hiding(qapp):
    model = ToolModel()
    tools = [{"name": "a", "inputSchema": {"type": "object"}},
             {"name": "a", "title": "Second a", "inputSchema": {"type": "object"}},
             {"name": "noschema"},
             {"name": "badschema", "inputSchema": {"type": "string"}},
             {"name": "notdict", "inputSchema": []},
             "not even an object"]
    model.set_tools(tools)
    assert model.rowCount() == len(tools)  # nothing hidden
    flags = [model.index(r, 0).data(FLAGS_ROLE) for r in range(model.rowCount())]
    assert flags[0] == ["duplicate name"] and flags[1] == ["duplicate name"]
    assert flags[2] == ["no inputSchema"]
    assert "invalid inputSchema" in flags[3][0] and "invalid inputSchema" in flags[4][0]
    assert flags[5] == ["not a tool object"]
    tip = model.index(0, 0).data(Qt.ToolTipRole)
    assert HINTS_NOTE in tip and "spec default" in tip


def test_bidi_controls_are_made_visible(qapp):
    model = ToolModel()
    model.set_tools(
        [{"name": "evil\u202etxt.exe", "title": "Safe \u2066tool\u2069", "inputSchema": {"type": "object"}}]
    )
    idx = model.index(0, 0)
    assert idx.data(Qt.DisplayRole) == "Safe ⟨U+2066⟩tool⟨U+2069⟩"
    assert idx.data(Qt.UserRole) == "evil\u202etxt.exe"  # the real name, for calling it
    assert "\u202e" not in idx.data(Qt.ToolTipRole)
    assert visible("a\u200fb\nc") == "a⟨U+200F⟩b c"


def test_icons_data_uri_rendered_remote_not_fetched(qapp):
    model = ToolModel()
    model.set_tools(
        [
            {
                "name": "local",
                "icons": [{"src": png_data_uri(), "mimeType": "image/png"}],
                "inputSchema": {"type": "object"},
            },
            {
                "name": "remote",
                "icons": [{"src": "https://example.invalid/icon.png"}],
                "inputSchema": {"type": "object"},
            },
        ]
    )
    rows = items(model)
    local = rows["local"].data(Qt.DecorationRole)
    assert isinstance(local, QPixmap) and not local.isNull()
    assert local.toImage().pixelColor(local.width() // 2, local.height() // 2) == QColor("red")
    assert "remote icon not loaded" in rows["remote"].data(Qt.ToolTipRole)


def test_search_box_filters(qapp):
    panel = ToolListPanel()
    panel.set_tools(
        [
            {"name": "alpha", "description": "first letter", "inputSchema": {"type": "object"}},
            {"name": "beta", "title": "Second", "inputSchema": {"type": "object"}},
            {"name": "gamma", "annotations": {"title": "Third one"}, "inputSchema": {"type": "object"}},
        ]
    )
    assert panel.view.objectName() == "toolList"
    panel.search.setText("LETTER")
    assert panel.proxy.rowCount() == 1 and panel.proxy.index(0, 0).data(Qt.UserRole) == "alpha"
    panel.search.setText("second")
    assert panel.proxy.index(0, 0).data(Qt.UserRole) == "beta"
    panel.search.setText("third")
    assert panel.proxy.index(0, 0).data(Qt.UserRole) == "gamma"
    panel.search.setText("")
    assert panel.proxy.rowCount() == 3
    assert panel.proxy.index(1, 0).data(BADGES_ROLE) == ["may change things (not declared)", "open-world"]


def test_add_server_dialog_masks_secrets(qapp):
    spec = ServerSpec(
        name="svc",
        command=["node", "server.js", "--flag", "a b"],
        env={"GITHUB_TOKEN": "ghp_secret", "API_KEY": "k", "DB_PASSWORD": "pw", "REGION": "eu"},
        cwd="/tmp",
    )
    dialog = AddServerDialog(spec=spec)
    dialog.pin.setText(" weather.pin.json ")  # kept whole: a window started elsewhere finds it (it was kept relative)
    assert dialog.spec().pin == os.path.join(os.getcwd(), "weather.pin.json")
    dialog.pin.setText("~/pins/w.json")
    assert dialog.spec().pin == os.path.join(os.path.expanduser("~"), "pins", "w.json")
    dialog.pin.setText("")
    assert dialog.spec().pin is None
    shown = {dialog.env.table.item(r, 0).text(): dialog.env.displayed(r) for r in range(dialog.env.table.rowCount())}
    assert shown == {"GITHUB_TOKEN": MASK, "API_KEY": MASK, "DB_PASSWORD": MASK, "REGION": "eu"}
    out = dialog.spec()
    assert out.command == spec.command and out.env == spec.env and out.cwd == "/tmp"
    # the editor of a secret value is a password field
    delegate = dialog.env.table.itemDelegateForColumn(1)
    from PySide6.QtWidgets import QStyleOptionViewItem

    editor = delegate.createEditor(
        dialog.env.table.viewport(), QStyleOptionViewItem(), dialog.env.table.model().index(0, 1)
    )
    assert isinstance(editor, QLineEdit) and editor.echoMode() == QLineEdit.Password
    # settings never get the secret values
    saved = describe_spec(out)
    assert saved["env"]["GITHUB_TOKEN"] == "" and saved["env"]["REGION"] == "eu"
    dialog.deleteLater()


def test_add_server_dialog_url_headers_and_token(qapp):
    dialog = AddServerDialog(
        spec=ServerSpec(
            name="remote", url="https://example.invalid/mcp", headers={"Authorization": "Basic abc", "X-Trace": "1"}
        )
    )
    assert dialog.tabs.currentIndex() == 1
    shown = {
        dialog.headers.table.item(r, 0).text(): dialog.headers.displayed(r)
        for r in range(dialog.headers.table.rowCount())
    }
    assert shown == {"Authorization": MASK, "X-Trace": "1"}
    assert dialog.token.echoMode() == QLineEdit.Password
    dialog.token.setText("tok")
    out = dialog.spec()
    assert out.url == "https://example.invalid/mcp" and out.headers["Authorization"] == "Bearer tok"
    dialog.url.setText("ftp://nope")
    with pytest.raises(ValueError):
        dialog.spec()
    for bad, words in (("http://[::1/mcp", "Invalid IPv6 URL"), ("http://127.0.0.1:99999/mcp", "Port out of range")):
        dialog.url.setText(bad)  # (taken, the connection failed later with a traceback in the log)
        with pytest.raises(ValueError, match=words):
            dialog.spec()
    dialog.deleteLater()


def test_guess_name_prefers_the_script_over_the_interpreter():
    from inspector.ui.servers.add_dialog import guess_name

    assert guess_name(["/usr/bin/python3", "tests/hostile/server.py", "die-at-start"]) == "server.py"
    assert guess_name(["python", "-m", "inspector.demo"]) == "inspector.demo"
    assert guess_name(["npx", "-y", "@modelcontextprotocol/server-everything"]) == "server-everything"
    assert guess_name(["/opt/bin/my-server", "--port", "1"]) == "my-server"
    assert guess_name([]) == "server"


@pytest.mark.parametrize("width", [320, 640, 1200])
@pytest.mark.parametrize("scale", [1.0, 1.5, 2.0])
def test_an_empty_states_sentence_is_shown_whole_at_every_width_and_text_size(qtbot, width, scale):
    """The Collections tab's empty text was cut at "A collection keeps calls with": a word-wrapped label laid out
    at its size hint. Every line of the sentence must fit the label, and the lines stay a readable measure."""
    from PySide6.QtGui import QFontMetrics

    from inspector.ui.base.empty import MEASURE_CHARS, EmptyState

    words = ("A collection keeps calls with what they should answer, in a YAML file beside your server's code. "
             "Open one, or make one with Save to collection… after a call in the Tools tab.")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    before = app.font()
    font = app.font()
    font.setPointSizeF(font.pointSizeF() * scale)  # as the text-size setting does: for the whole application
    app.setFont(font)
    try:
        page = EmptyState(None, "someEmpty", "Nothing here", words, [("Open…", "someEmptyOpen", lambda: None)])
        qtbot.addWidget(page)
        page.resize(width, 600)
        page.show()
        qtbot.waitExposed(page)
        QApplication.processEvents()
        label = page.text
        assert label.heightForWidth(label.width()) <= label.height(), (label.width(), label.height())
        lines = label.height() // QFontMetrics(label.font()).lineSpacing()
        assert lines >= 2  # it wraps instead of running on
        assert label.font().pointSizeF() == pytest.approx(font.pointSizeF())
        assert label.width() <= QFontMetrics(font).averageCharWidth() * (MEASURE_CHARS + 4)
        assert page.buttons["someEmptyOpen"].isVisible() and page.title.isVisible()
    finally:
        app.setFont(before)


def test_icons_only_where_a_server_gives_one(qtbot):
    """Every tool wore the same generic glyph: now a list where no tool has an icon keeps no room for one (the
    name starts at the row's left), and among tools with icons one without keeps an empty place (names line up)."""
    from inspector.ui.base.items import ICON_SIZE

    def first_ink_x(panel: ToolListPanel, row: int) -> int:
        view = panel.view
        rect = view.visualRect(panel.proxy.index(row, 0))
        image = view.viewport().grab().toImage()
        base = image.pixelColor(rect.right() - 1, rect.bottom() - 1)
        top = rect.top() + 4
        return min((x for x in range(rect.left(), rect.left() + 200) for y in range(top, top + 14)
                    if image.pixelColor(x, y) != base), default=9999)

    plain = ToolListPanel()
    qtbot.addWidget(plain)
    plain.resize(420, 300)
    plain.set_tools([{"name": "alpha", "inputSchema": {"type": "object"}},
                     {"name": "beta", "inputSchema": {"type": "object"}}])
    plain.show()
    qtbot.waitExposed(plain)
    assert plain.model.index(0, 0).data(Qt.DecorationRole) is None
    assert first_ink_x(plain, 0) < ICON_SIZE  # the name, where the glyph used to be
    mixed = ToolListPanel()
    qtbot.addWidget(mixed)
    mixed.resize(420, 300)
    mixed.set_tools([{"name": "local", "icons": [{"src": png_data_uri(), "mimeType": "image/png"}],
                      "inputSchema": {"type": "object"}},
                     {"name": "bare", "inputSchema": {"type": "object"}}])
    mixed.show()
    qtbot.waitExposed(mixed)
    bare = mixed.proxy.index(1, 0)
    assert isinstance(bare.data(Qt.DecorationRole), QPixmap) and bare.data(Qt.DecorationRole).isNull()
    assert first_ink_x(mixed, 1) >= ICON_SIZE  # an empty place: its name lines up with the one beside an icon


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_the_add_dialogs_sandbox_choice_is_read_whole_at_its_first_size(qtbot, scale):
    # (its sentence ran past the dialog's edge: "…writes only to" and the rest cut off)
    from PySide6.QtWidgets import QCheckBox

    font = QApplication.font()
    big = QFont(font)
    big.setPointSizeF(font.pointSizeF() * scale)
    QApplication.setFont(big)
    try:
        dialog = AddServerDialog(spec=ServerSpec(name="s", command=["python", "server.py"]))
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitExposed(dialog)
        box = dialog.findChild(QCheckBox, "serverSandbox")
        right = box.mapTo(dialog, box.rect().topLeft()).x() + box.sizeHint().width()
        assert box.width() >= box.sizeHint().width() and right <= dialog.width(), (box.width(), box.sizeHint())
        assert "writes only to a temporary folder" in box.toolTip()
    finally:
        QApplication.setFont(font)
