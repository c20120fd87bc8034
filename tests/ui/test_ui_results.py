"""The content renderers and dialogs on their own: safety rules, bad input, structured content checks."""

from __future__ import annotations

import base64
import json
import struct
import zlib

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton, QWidget

from inspector import errors as E
from inspector.protocol.jsonrpc import code_name
from inspector.session import CallRecord
from inspector.ui.base.highlight import lexer_for
from inspector.ui.calls import confirm
from inspector.ui.calls.questions import ElicitationDialog, SamplingDialog, describe_sampling
from inspector.ui.render.result_view import ResultView, structured_widget, text_matches
from inspector.ui.render.results import ContentView, render_resource_contents
from inspector.ui.render.text import SafeMarkdown


def png(w: int, h: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\0" + b"\x20\x80\xd0" * w for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_every_kind_in_its_own_widget_in_order(qapp):
    v = ContentView()
    v.set_blocks([{"type": "text", "text": "a"}, {"type": "image", "data": b64(png(4, 3)), "mimeType": "image/png"},
                  {"type": "audio", "data": "!!", "mimeType": "audio/wav"},
                  {"type": "resource", "resource": {"uri": "x:a", "text": "t"}},
                  {"type": "resource_link", "uri": "x:b", "name": "b"}, {"type": "hologram"}, "not an object"])
    assert [w.objectName() for w in v.widgets] == ["result:text", "result:image", "result:audio", "result:resource",
                                                   "result:resource_link", "result:unknown", "result:unknown"]
    assert v.widgets[1].view.image.width() == 4
    assert "not valid base64" in v.widgets[2].findChild(QLabel, "mediaError").text()
    assert not v.widgets[4].read_button.isEnabled()  # no reader: nothing to read with
    v.set_blocks([])
    assert v.widgets == [] and v.empty.isVisibleTo(v)


def test_text_is_plain_json_pretty_and_markdown_safe(qapp):
    v = ContentView()
    v.set_blocks([{"type": "text", "text": "<b>bold?</b> ![x](https://example.com/track.png) [go](https://evil.example)"},
                  {"type": "text", "text": '{"a": [1, 2]}'}])
    plain, js = v.widgets
    edit = plain.findChild(QPlainTextEdit, "resultText")
    assert edit.toPlainText().startswith("<b>bold?</b>")  # shown literally
    assert js.is_json and js.view.text() == '{\n  "a": [\n    1,\n    2\n  ]\n}'
    plain.set_markdown(True)
    md = plain.findChild(SafeMarkdown)
    assert not md.openLinks() and not md.openExternalLinks()
    assert "<b>" in md.toPlainText()  # no HTML: the tag stays text
    assert md.loadResource(int(QTextDocument.ImageResource), QUrl("https://example.com/track.png")) is None
    md.anchorClicked.emit(QUrl("https://evil.example"))
    note = plain.findChild(QLabel, "linkTarget")
    assert note.isVisibleTo(plain) and "https://evil.example" in note.text() and "not opened" in note.text()
    md.anchorClicked.emit(QUrl("https://g\u043e\u043egle.com/x"))  # Cyrillic o's: said as the browser would show it
    assert note.text() == "Link (not opened): https://xn--ggle-55da.com/x"


def test_bidi_controls_in_results_are_visible(qapp):
    v = ContentView()
    v.set_blocks([{"type": "text", "text": "abc\u202edef"}])
    assert "⟨U+202E⟩" in v.widgets[0].view.text()


def test_big_text_shows_a_preview_at_once(qapp):
    v = ContentView()
    v.set_blocks([{"type": "text", "text": "x" * 3_000_000}])
    view = v.widgets[0].view
    assert not view.fully_shown() and len(view.text()) < 100_000
    assert view.more.isVisibleTo(v.widgets[0])


def test_images_refused_with_a_reason(qapp):
    v = ContentView()
    bomb = png(1, 1).replace(struct.pack(">II", 1, 1), struct.pack(">II", 60000, 60000), 1)
    v.set_blocks([{"type": "image", "data": b64(bomb), "mimeType": "image/png"},
                  {"type": "image", "data": b64(b"GIF00 not really"), "mimeType": "image/gif"},
                  {"type": "image", "data": b64(b"<svg xmlns='http://www.w3.org/2000/svg'/>"),
                   "mimeType": "image/svg+xml"}])
    errors = [w.view.error for w in v.widgets]
    assert "60000×60000" in errors[0] and "not an image format" in errors[1] and "SVG" in errors[2]
    assert all(w.view.image is None for w in v.widgets)


def test_resource_contents_text_by_mimetype_and_blobs(qapp):
    box = render_resource_contents([
        {"uri": "file:///a.py", "mimeType": "text/x-python", "text": "def f():\n    return 1\n"},
        {"uri": "x:img", "mimeType": "image/png", "blob": b64(png(5, 5))},
        {"uri": "x:bin", "mimeType": "application/octet-stream", "blob": b64(bytes(range(40)))},
        {"uri": "x:txt", "mimeType": "text/plain", "blob": b64("héllo".encode())},
        {"uri": "x:bad", "blob": "%%%"}])
    texts = [w.toPlainText() for w in box.findChildren(QPlainTextEdit, "resourceText")]
    assert texts[0].startswith("def f()") and texts[1] == "héllo"
    assert box.findChild(QWidget, "imageLabel") is not None
    assert "00000000  00 01 02" in box.findChild(QPlainTextEdit, "hexPreview").toPlainText()
    assert "not valid base64" in box.findChild(QLabel, "mediaError").text()
    assert lexer_for("text/x-python").name == "Python" and lexer_for("application/json").name == "JSON"
    assert lexer_for("text/plain") is None and lexer_for(None, "file:///x.rs").name == "Rust"


def test_structured_content_checked_against_the_output_schema(qapp):
    schema = {"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t", "u"]}
    w = structured_widget({"t": "hot"}, schema, [{"type": "text", "text": "it is hot"}])
    errors = w.findChild(QLabel, "structuredErrors").text()
    assert "'hot' is not of type 'number'" in errors and "'u' is a required property" in errors
    assert w.findChild(QLabel, "structuredTextWarning") is not None
    assert text_matches({"t": 1}, [{"type": "text", "text": '{"t": 1}'}])
    ok = structured_widget({"t": 1, "u": 2}, schema, [{"type": "text", "text": '{"t": 1, "u": 2}'}])
    assert ok.findChild(QLabel, "structuredValid") and ok.findChild(QLabel, "structuredTextWarning") is None


def _tree_rows(model, index=None) -> list:
    """Every value row under `index` (ranges opened), as (key, value, type)."""
    from PySide6.QtCore import QModelIndex

    index = index if index is not None else QModelIndex()
    out = []
    for r in range(model.rowCount(index)):
        child = model.index(r, 0, index)
        if model.is_range(child):
            out.extend(_tree_rows(model, child))
        else:
            out.append((child.data(), model.index(r, 1, index).data(), model.index(r, 2, index).data()))
    return out


def test_a_long_array_or_object_opens_in_ranges_with_every_item_reachable(qapp):
    from inspector.ui.render.json_tree import GROUP, json_tree

    value = {"rows": [{"id": i} for i in range(12_345)], "names": {f"k{i}": i for i in range(250)}, "n": None}
    tree = json_tree(value)
    model = tree.model()
    root = model.index(0, 0)
    assert (root.data(), model.index(0, 1).data(), model.index(0, 2).data()) == ("(root)", "{3 keys}", "object")
    rows = model.index(0, 0, root)
    assert tree.isExpanded(root) and tree.isExpanded(rows)
    # 12,345 records: ranges of 10,000 (no node shows more than GROUP rows), then of 100, then the items
    assert model.rowCount(rows) == 2 and model.index(0, 0, rows).data() == "[0 … 9999]"
    assert model.index(1, 0, rows).data() == "[10000 … 12344]" and model.index(1, 1, rows).data() == "2,345 items"
    assert not tree.isExpanded(model.index(0, 0, rows))  # ranges open when asked
    first = model.index(0, 0, rows)
    assert model.rowCount(first) == 100 and model.index(99, 0, first).data() == "[9900 … 9999]"
    records = _tree_rows(model, rows)
    assert [k for k, _v, _t in records] == [f"[{i}]" for i in range(12_345)]
    assert all(t == "object" for _k, _v, t in records)
    names = model.index(1, 0, root)
    assert model.rowCount(names) == 3 and model.index(2, 0, names).data() == "[200 … 249]"
    assert _tree_rows(model, names) == [(f"k{i}", str(i), "number") for i in range(250)]
    assert model.index(2, 1, root).data() == "null"
    assert model.rowCount(model.index(1, 0, rows)) == 24 <= GROUP  # [10000 … 10099] … [12300 … 12344]


def test_big_structured_content_is_checked_after_it_is_shown(qapp, qtbot):
    from inspector.ui.render import result_view

    schema = {"type": "object", "properties": {"rows": {"type": "array", "items": {
        "type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}}}
    rows = [{"id": i} for i in range(result_view.SYNC_CHECK_NODES)]
    text = json.dumps({"rows": rows}) + " " * 1_000_000
    w = structured_widget({"rows": rows}, schema, [{"type": "text", "text": text}])
    assert w.findChild(QLabel, "structuredChecking") is not None and w.findChild(QLabel, "structuredValid") is None
    # a text too long to parse here is said to be unchecked, not taken for a missing copy
    assert w.findChild(QLabel, "structuredTextUnchecked") is not None
    assert w.findChild(QLabel, "structuredTextWarning") is None
    qtbot.waitUntil(lambda: w.findChild(QLabel, "structuredValid") is not None, timeout=5000)
    assert w.problems == []
    bad = [dict(r) for r in rows]
    bad[7]["id"], bad[4000] = "seven", {}
    w = structured_widget({"rows": bad}, schema, [])
    qtbot.waitUntil(lambda: w.findChild(QLabel, "structuredErrors") is not None, timeout=5000)
    assert [p for p, _m in w.problems] == ["/rows/4000", "/rows/7/id"]
    errors = w.findChild(QLabel, "structuredErrors").text()
    assert "2 problems" in errors and '"seven" is not of type "integer"' in errors and "id" in errors
    checking = w.findChild(QLabel, "structuredChecking")
    assert checking is None or not checking.isVisible()


def test_tool_error_and_rpc_error_read_differently(qapp):
    view = ResultView()
    rec = CallRecord(1, "s", "t", {}, outcome="tool error",
                     result={"isError": True, "content": [{"type": "text", "text": "boom"}]})
    view.show_record(rec)
    err = view.findChild(QWidget, "result:error")
    assert err.property("errorKind") == "tool"
    assert err.findChild(QLabel, "errorTitle").text() == "The tool ran and failed"
    rec = CallRecord(
        2,
        "s",
        "t",
        {},
        outcome="rejected",
        error=E.RemoteError("tools/call", -32602, "Unknown tool: t", {"hint": "list again"}),
    )
    view.show_record(rec)
    err = view.findChild(QWidget, "result:error")
    assert err.property("errorKind") == "rejected"
    assert err.findChild(QLabel, "errorCode").text() == "-32602 Invalid params"
    assert '"hint"' in err.findChild(QPlainTextEdit, "errorData").toPlainText()
    assert code_name(-32601) == "Method not found" and code_name(-32050) == "Server error"
    assert code_name(42) == "Application error"


def test_url_elicitation_shows_the_full_host_and_opens_nothing_by_itself(qapp, monkeypatch):
    opened = []
    monkeypatch.setattr("inspector.ui.base.opening.system_open", lambda url: opened.append(url) or True)
    d = ElicitationDialog(
        "srv",
        {
            "mode": "url",
            "message": "Sign in",
            "url": "https://login.example.com.evil.test:8443/path?x=1",
            "elicitationId": "e1",
        },
    )
    assert d.findChild(QLabel, "elicitUrlHost").text() == "login.example.com.evil.test:8443"
    assert "https://login.example.com.evil.test:8443/path?x=1" in d.findChild(QLabel, "elicitUrl").text()
    assert opened == []
    d.findChild(QPushButton, "elicitOpenUrl").click()
    assert opened == ["https://login.example.com.evil.test:8443/path?x=1"]
    d.findChild(QPushButton, "elicitAccept").click()
    assert d.answer() == {"action": "accept"}
    bad = ElicitationDialog("srv", {"mode": "url", "message": "x", "url": "javascript:alert(1)"})
    assert not bad.findChild(QPushButton, "elicitOpenUrl").isEnabled()


def test_form_elicitation_answers_accept_decline_cancel(qapp):
    params = {
        "message": "Age?",
        "requestedSchema": {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]},
    }
    d = ElicitationDialog("srv", params)
    d.findChild(QPushButton, "elicitAccept").click()  # required age missing: refused, stays open
    assert d.action == "cancel" and "problem" in d.findChild(QLabel, "elicitProblem").text()
    d.form.set_value({"age": 36})
    d.findChild(QPushButton, "elicitAccept").click()
    assert d.answer() == {"action": "accept", "content": {"age": 36}}
    d = ElicitationDialog("srv", params)
    d.findChild(QPushButton, "elicitDecline").click()
    assert d.answer() == {"action": "decline"}
    d = ElicitationDialog("srv", params)
    d.reject()  # Escape
    assert d.answer() == {"action": "cancel"}


def test_sampling_dialog_shows_the_request_and_sends_the_reply(qapp):
    params = {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}],
        "systemPrompt": "Be brief",
        "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 0.5},
        "maxTokens": 50,
        "tools": [{"name": "lookup", "description": "Look things up"}],
    }
    text = describe_sampling(params)
    for part in ("Be brief", "user: Capital of France?", "claude", "maxTokens: 50", "lookup: Look things up"):
        assert part in text
    d = SamplingDialog("srv", params)
    assert d.findChild(QPlainTextEdit, "samplingRequest").toPlainText() == text
    d.findChild(QPlainTextEdit, "samplingReply").setPlainText("Paris")
    assert d.answer() == {
        "role": "assistant",
        "content": {"type": "text", "text": "Paris"},
        "model": "spyglass-user",
        "stopReason": "endTurn",
    }


def test_confirmation_policy(qapp, settings):
    destructive = {"name": "rm", "annotations": {"destructiveHint": True}}
    unmarked = {"name": "w"}
    read_only = {"name": "r", "annotations": {"readOnlyHint": True, "destructiveHint": True}}
    assert confirm.policy_from(settings) == confirm.DESTRUCTIVE
    assert confirm.needs_confirmation(destructive, confirm.DESTRUCTIVE)
    assert confirm.needs_confirmation(unmarked, confirm.DESTRUCTIVE)  # may destroy by the spec's default
    assert not confirm.needs_confirmation({"name": "w", "annotations": {"destructiveHint": False}},
                                          confirm.DESTRUCTIVE)
    assert not confirm.needs_confirmation(read_only, confirm.DESTRUCTIVE)
    assert confirm.needs_confirmation(unmarked, confirm.NOT_READ_ONLY)
    assert not confirm.needs_confirmation(destructive, confirm.NEVER)
    settings.setValue(confirm.SETTING, "bogus")
    assert confirm.policy_from(settings) == confirm.DESTRUCTIVE
    d = confirm.ConfirmDialog(destructive, {"path": "/"})
    assert d.cancel_button.isDefault() and '"/"' in d.findChild(QPlainTextEdit, "confirmArguments").toPlainText()


def test_a_big_text_of_one_long_line_shows_a_shorter_preview(qapp):
    from inspector.ui.render.text import LINE_PREVIEW_CHARS, PREVIEW_CHARS

    v = ContentView()
    v.set_blocks([{"type": "text", "text": "[" + "1," * 1_000_000 + "1]"},
                  {"type": "text", "text": "line\n" * 20_000},
                  {"type": "text", "text": "y" * (PREVIEW_CHARS - 1)}])
    one_line, lines, whole = (w.view for w in v.widgets)
    assert len(one_line.text()) == LINE_PREVIEW_CHARS and not one_line.fully_shown()
    assert len(lines.text()) > LINE_PREVIEW_CHARS and not lines.fully_shown()
    assert whole.fully_shown()  # a text short enough is shown whole, however long its line


def test_the_elicitation_buttons_stand_in_the_platforms_order(qapp):
    """Accept | Cancel | Decline was in no platform's order: Decline is the answer "no" and Cancel the dismissal,
    so the button box lays them out as the platform does (the style's SH_DialogButtonLayout)."""
    from PySide6.QtWidgets import QDialogButtonBox, QStyle

    params = {"message": "Age?", "requestedSchema": {"type": "object", "properties": {"age": {"type": "integer"}}}}
    d = ElicitationDialog("srv", params)
    d.show()
    qapp.processEvents()
    box = d.findChild(QDialogButtonBox)
    names = {"elicitAccept": QDialogButtonBox.AcceptRole, "elicitDecline": QDialogButtonBox.NoRole,
             "elicitCancel": QDialogButtonBox.RejectRole}
    for name, role in names.items():
        assert box.buttonRole(d.findChild(QPushButton, name)) == role, name
    order = [n for n in sorted(names, key=lambda n: d.findChild(QPushButton, n).x())]
    layout = d.style().styleHint(QStyle.SH_DialogButtonLayout)
    expected = {QDialogButtonBox.ButtonLayout.WinLayout: ["elicitAccept", "elicitDecline", "elicitCancel"],
                QDialogButtonBox.ButtonLayout.KdeLayout: ["elicitAccept", "elicitDecline", "elicitCancel"],
                QDialogButtonBox.ButtonLayout.GnomeLayout: ["elicitCancel", "elicitDecline", "elicitAccept"],
                QDialogButtonBox.ButtonLayout.MacLayout: ["elicitCancel", "elicitDecline", "elicitAccept"]}
    assert order == expected[QDialogButtonBox.ButtonLayout(layout)], (order, layout)
    d.close()


@pytest.mark.parametrize("text, markdown", [
    ("# Report\n\nSome text\n- a\n- b", True),  # a heading and a list
    ("| a | b |\n|---|---|\n| 1 | 2 |", True),  # a table above more text
    ("**bold** and [a link](https://example.com)", True),
    ("## Weather\nOslo: 12 °C\nWind: 3 m/s", True),
    ("plain sentence with a * star", False),
    ("/usr/bin/python\n/etc/passwd", False),
    ("2024-01-01 ERROR something\n2024-01-01 INFO x", False),
    ("Temperature: 12 C", False),
    ("- one\n- two", False),  # a list alone reads as well as text
    ("# a shell comment", False),
])
def test_markdown_is_told_from_plain_text(text, markdown):
    from inspector.ui.render.text import looks_like_markdown

    assert looks_like_markdown(text) is markdown


def test_a_markdown_text_is_rendered_by_default_and_a_plain_one_is_not(qapp):
    v = ContentView()
    v.set_blocks([{"type": "text", "text": "# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |"},
                  {"type": "text", "text": "just words, 3 * 4 = 12"}])
    md, plain = v.widgets
    assert md.md_button.isChecked() and md.markdown is not None and not md.view.isVisibleTo(md)
    assert not plain.md_button.isChecked() and plain.markdown is None
