"""Presentation mode end to end against real peers: the seed tools (an SDK server, tests/peers/seed_server.py)
and the built-in demo server. Every state is read back as a person would see it — the text of every visible
widget of the window — and must carry no JSON, no method or tool name, no error code and no protocol word
unless Details is open; the accessible names are checked through QAccessible; screenshots of each state in
the three looks land in test-artifacts/."""

from __future__ import annotations

import base64
import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QDockWidget,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTableWidget,
    QTextEdit,
    QWidget,
)
from support import PEERS, PY
from uikit import demo_cmd, find, shot, until

from inspector.app import parse_args
from inspector.config import ServerSpec
from inspector.session import Status
from inspector.ui.present import words
from inspector.ui.present.friendly_form import FileField, FriendlyForm, bounds, file_kind, step_of

SEED = [PY, str(PEERS / "seed_server.py")]
SEED_NAMES = ("get_weather", "add_numbers", "count_words", "delete_user", "slow_report", "app_refresh", "write_poem",
              "count_folders")
PROTOCOL_WORDS = ("isError", "inputSchema", "outputSchema", "structuredContent", "jsonrpc", "tools/call",
                  "tools/list", "resources/read", "-32602", "-32601", "-32603", "mimeType", "input_required",
                  "elicitation")
JSON_LIKE = re.compile(r'[{\[]\s*"|"\s*:\s*[\[{"0-9tfn]')


def visible_texts(root: QWidget, skip: tuple[str, ...] = ()) -> list[str]:
    """What a person sees: the text of every visible widget under `root` (but those named in `skip`)."""
    out: list[str] = []
    for w in [root, *root.findChildren(QWidget)]:
        if not w.isVisible() or w.objectName() in skip:
            continue
        if isinstance(w, QLabel):
            out.append(w.text())
        elif isinstance(w, QAbstractButton):
            out.append(w.text())
        elif isinstance(w, QLineEdit):
            out += [w.text(), w.placeholderText()]
        elif isinstance(w, QComboBox):
            out += [w.itemText(i) for i in range(w.count())]
        elif isinstance(w, QAbstractSpinBox):
            out.append(w.text())
        elif isinstance(w, (QTextEdit, QPlainTextEdit)):
            out.append(w.toPlainText())
        if isinstance(w, QTableWidget):
            out += [w.horizontalHeaderItem(c).text() for c in range(w.columnCount())]
        if isinstance(w, QAbstractItemView) and w.model() is not None:
            m = w.model()
            out += [str(m.index(r, 0).data() or "") for r in range(m.rowCount())]
    return [t for t in out if t]


def assert_plain(window, *, names: tuple[str, ...] = (), skip: tuple[str, ...] = ()) -> str:
    text = "\n".join(visible_texts(window, skip))
    for word in PROTOCOL_WORDS:
        assert word not in text, f"{word!r} is shown:\n{text}"
    assert not JSON_LIKE.search(text), f"JSON is shown:\n{text}"
    for name in names:
        assert not re.search(rf"\b{re.escape(name)}\b", text), f"the raw name {name!r} is shown:\n{text}"
    return text


def accessible(widget: QWidget) -> tuple[str, str]:
    iface = QAccessible.queryAccessibleInterface(widget)
    assert iface is not None
    return iface.text(QAccessible.Name), iface.text(QAccessible.Description)


async def present(window, cmd, name):
    conn = window.add_server(ServerSpec(name=name, command=cmd), save=False)
    await until(lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30, "connected")
    window.present.enter()
    view = find(window, QWidget, "presentView")
    await until(lambda: view.cards.names(), 10, "the cards")
    return conn, view


async def assert_run_follows_form(view) -> None:
    """The form shows every field whole (no field cut off, also with the options open or folded), and Run sits
    in its bar right under the scrolling page, on screen, where it stays whatever the page shows."""
    from PySide6.QtWidgets import QAbstractSlider

    def fine() -> str:  # '' when fine (no processEvents here: a nested Qt loop inside a task step loses wakeups)
        page = view.form.parentWidget()
        shown = [w for w in view.form.root.findChildren(QWidget) if w.isVisible() and
                 isinstance(w, (QLabel, QLineEdit, QAbstractButton, QAbstractSpinBox, QAbstractSlider, QComboBox))]
        if not shown:
            return "not laid out yet"
        bottom = max(w.mapTo(page, w.rect().bottomLeft()).y() for w in shown)
        form_bottom = view.form.mapTo(page, view.form.rect().bottomLeft()).y()
        if bottom > form_bottom:
            return f"a field cut off by {bottom - form_bottom} px"
        scroll_bottom = view.scroll.mapTo(view, view.scroll.rect().bottomLeft()).y()
        run_top = view.run_button.mapTo(view, view.run_button.rect().topLeft()).y()
        if not view.run_button.isVisible() or not 0 <= run_top - scroll_bottom <= 36 or \
                view.run_button.mapTo(view, view.run_button.rect().bottomLeft()).y() > view.height():
            return f"Run at {run_top}, the page ends at {scroll_bottom}"
        return ""
    await until(lambda: not fine(), 5, f"the form whole and Run under it ({fine()})")
    if view.form.more is not None:
        view.form.show_more(True)
        await until(lambda: not fine(), 5, f"the open options whole ({fine()})")
        view.form.show_more(False)
        await until(lambda: not fine(), 5, f"the folded options whole ({fine()})")


def card_names(window) -> list[str]:
    view = find(window, QAbstractItemView, "presentCards")
    return [view.model().index(r, 0).data(Qt.UserRole) for r in range(view.model().rowCount())]


async def run_and_wait(view, timeout=20):
    find(view, QAbstractButton, "presentRun").click()
    assert not view.form_note.isVisible(), "the form has problems"
    # a widget added to a shown layout is shown a turn later (Qt queues it): wait for the card as a person sees it
    await until(lambda: view.card is not None and view.card.isVisible(), timeout, "the answer")
    return view.card


# ---------------------------------------------------------------------- the words (no Qt)
def test_words_say_things_plainly():
    assert words.words("user_id") == "User id" and words.words("maxResults") == "Max results"
    assert words.field_label({"title": "User Id"}, "user_id") == "User id"
    assert words.field_label({"title": "Where to"}, "city") == "Where to"
    assert words.first_sentence("Looks up the weather. Made up.") == "Looks up the weather."
    assert words.first_sentence("x" * 300).endswith("…") and words.first_sentence(None) == ""
    assert not words.for_people({"name": "a", "_meta": {"ui": {"visibility": ["app"]}}})
    assert words.for_people({"name": "a", "_meta": {"ui": {"visibility": ["model", "app"]}}})
    assert not words.for_people({"title": "no name"})
    assert words.tool_title({"name": "count_words"}) == "Count words"
    assert words.problem("'city' is a required property", "City") == "Please enter a city."
    assert words.problem("'' should be non-empty", "Text", {"minLength": 1}) == "Please enter a text."
    assert words.problem("'ab' is too short", "Code", {"minLength": 3}) == "Please enter at least 3 characters."
    assert words.problem("0 is less than the minimum of 1", "N", {"minimum": 1}) == "Please choose 1 or more."
    assert words.problem("11 is greater than the maximum of 10", "N", {"maximum": 10}) == "Please choose 10 or less."
    assert words.problem("'c' is not one of ['a']", "Units") == "Please choose one of the options."
    assert words.problem("'x' is not a number", "Age") == "Please enter a number."
    assert words.problem("'x' is too long", "Age", {"maxLength": 4}) == "Please use at most 4 characters."
    assert words.problem("1.5 is not of type 'integer'", "Age").startswith("Please enter")
    assert words.problem("'x' is not a 'email'... format", "Email") == "This doesn't look like an email."
    assert words.problem("something else", "Age") == "Please check the age."
    assert words.problem("'name' is a required property", "Your name") == "Please enter your name."
    assert words.value_text(True) == "Yes" and words.value_text(None) == "—" and words.value_text([]) == "none"
    assert words.value_text(1234567).replace(",", "").replace(".", "").replace("\u202f", "") == "1234567"
    assert words.value_text({"max_temp": 3}) == "Max temp: 3"
    assert words.value_text("2026-12-01") != "2026-12-01" or True  # the locale's date
    assert words.value_text("2026-12-01T10:00:00Z")
    assert words.table_of([{"a": 1}, {"b": "x"}]) == (["A", "B"], [["1", "—"], ["—", "x"]])
    assert words.table_of([1, 2]) is None
    assert words.failure_words("rejected", -32601) == "The tool isn't available on this server."
    assert words.failure_words("rejected", -32602) == "The server didn't accept what was filled in."
    assert words.failure_words("timeout") == "The server took too long to answer."
    assert words.failure_words("other") == "Something went wrong."
    tool = {"name": "delete_user", "title": "Delete a user", "annotations": {"destructiveHint": True}}
    assert words.destructive(tool) and words.destructive({"name": "x"})  # saying nothing may destroy (the spec)
    assert not words.destructive({"name": "x", "annotations": {"readOnlyHint": True}})
    assert not words.destructive({"name": "x", "annotations": {"destructiveHint": False}})
    assert words.destructive_words(tool) == "Changes or deletes data"
    assert words.destructive_words({"name": "x"}) == "May change or delete data (it does not say)"
    assert words.confirm_words(tool, {"user_id": 42}) == (
        "“Delete a user” (User id: 42) changes or deletes data, and it may not be possible to undo it. Continue?")
    # the server's questions in words
    assert words.asking(tool) == "“Delete a user” needs something from you"
    assert words.asking(None) == "The server needs something from you"
    assert words.page_host("https://a.example:8443/x") == ("a.example:8443", True)
    assert words.page_host("mailto:someone@example.com") == ("an address that doesn't work", False)
    assert words.page_host("http://[::1") == ("an address that doesn't work", False)
    assert words.conversation({"systemPrompt": " Be brief. ", "messages": [
        {"role": "user", "content": {"type": "text", "text": "Hi"}},
        {"role": "assistant", "content": [{"type": "audio"}, {"type": "tool_use"}]}, "junk"]}) == [
        ("How to answer", "Be brief."), ("Asked", "Hi"), ("Answered before", "(a sound)"),
        ("Answered before", "(something that can't be shown here)")]
    assert words.folders_text([{"uri": "file:///home/ada/My%20photos", "name": "Photos"},
                               {"uri": "file:///tmp"}]) == "• Photos (/home/ada/My photos)\n• /tmp"


def test_the_friendly_form_uses_the_schema_machinery(qapp):
    schema = {"type": "object", "required": ["city", "when", "count"], "properties": {
        "city": {"type": "string", "title": "City", "description": "Where", "examples": ["Lisbon"]},
        "when": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "time_of_day": {"type": "string", "format": "time"},
        "count": {"type": "integer", "minimum": 1, "maximum": 10},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "loud": {"type": "boolean"},
        "units": {"enum": ["celsius", "fahrenheit"]},
        "mood": {"oneOf": [{"const": "h", "title": "Happy"}, {"const": "s", "title": "Sad"}]},
        "tags": {"type": "array", "items": {"type": "string"}}}}
    form = FriendlyForm(schema)
    assert form.objectName() == "presentForm"
    city = form.findChild(QLineEdit, "field:/city")
    assert city.placeholderText() == "e.g. Lisbon" and accessible(city) == ("City", "Where")
    assert form.findChild(QWidget, "field:/when").metaObject().className() == "QDateEdit"
    assert form.findChild(QWidget, "field:/at").metaObject().className() == "QDateTimeEdit"
    assert form.findChild(QWidget, "field:/time_of_day").metaObject().className() == "QTimeEdit"
    assert form.findChild(QWidget, "field:/count").metaObject().className() == "QSpinBox"
    assert form.findChild(QWidget, "slider:/count") is not None
    ratio = form.findChild(QWidget, "field:/ratio")
    assert ratio.metaObject().className() == "QDoubleSpinBox" and form.findChild(QWidget, "slider:/ratio") is None
    assert ratio.singleStep() == pytest.approx(0.01) and ratio.decimals() == 2  # a decimal: a stepper, fine steps
    assert form.findChild(QWidget, "field:/count").singleStep() == 1
    units = form.findChild(QComboBox, "field:/units")
    assert [units.itemText(i) for i in range(units.count())] == ["(none)", "Celsius", "Fahrenheit"]
    mood = form.findChild(QComboBox, "field:/mood")
    assert [mood.itemText(i) for i in range(1, mood.count())] == ["Happy", "Sad"]
    assert form.findChild(QAbstractButton, "add:/tags").text() == "Add another"
    assert form.more is not None and form.more_body.isHidden()  # optional fields folded
    order = form.focus_widgets()
    assert order.index(form.more) == 3 and order[0] is city
    form.set_value({"city": "Porto", "when": "2026-12-24", "count": 3, "loud": True, "at": "2026-12-24T10:00:00Z",
                    "time_of_day": "08:30:00", "ratio": 0.5, "units": "celsius"})
    value = form.value()
    assert value["city"] == "Porto" and value["when"] == "2026-12-24" and value["count"] == 3
    assert value["loud"] is True and value["time_of_day"] == "08:30:00" and value["ratio"] == 0.5
    assert value["at"].startswith("2026-12-24T") and value["units"] == "celsius"
    form.findChild(QWidget, "slider:/count").setValue(7)
    assert form.value()["count"] == 7
    form.set_value({})
    assert form.value() == {"when": form.value()["when"], "count": 1}  # the required pickers always hold one
    city.setText("")
    assert form.reveal_problems() >= 1
    problem = form.findChild(QLabel, "problem:/city")
    assert problem is not None and problem.text() == "⚠ Please enter a city."
    assert bounds({"minimum": 1}) is None and bounds({"exclusiveMinimum": 0, "maximum": 2}) == (0.0, 2.0)
    assert step_of({}, 0, 1, False) == pytest.approx(0.01) and step_of({}, 0, 40, False) == pytest.approx(0.5)
    assert step_of({}, 0, 1000, False) == 1 and step_of({"multipleOf": 0.25}, 0, 1, False) == 0.25
    assert step_of({"multipleOf": 5}, 0, 100, True) == 5 and step_of({}, 0, 0.001, False) == pytest.approx(1e-5)
    form.deleteLater()


def test_bounded_numbers_get_a_slider_or_a_stepper(qapp):
    form = FriendlyForm({"type": "object", "required": ["n", "x"], "properties": {
        "n": {"type": "integer", "minimum": 0, "maximum": 100, "multipleOf": 5},
        "x": {"type": "number", "minimum": 0, "maximum": 0.01},
        "big": {"type": "integer", "minimum": 0, "maximum": 1_000_000},
        "free": {"type": "number"}}})
    n, slider = form.findChild(QWidget, "field:/n"), form.findChild(QWidget, "slider:/n")
    assert n.metaObject().className() == "QSpinBox" and slider is not None and slider.singleStep() == 5
    assert n.singleStep() == 5 and accessible(slider)[0] == "N"
    x = form.findChild(QWidget, "field:/x")
    assert x.metaObject().className() == "QDoubleSpinBox" and form.findChild(QWidget, "slider:/x") is None
    assert x.singleStep() == pytest.approx(0.0001) and x.decimals() == 4  # the decimals its step needs
    x.stepBy(3)
    assert form.value()["x"] == pytest.approx(0.0003)
    assert form.findChild(QWidget, "slider:/big") is None  # too many values for a slider: the stepper alone
    assert form.findChild(QWidget, "field:/big").metaObject().className() == "QSpinBox"
    assert form.findChild(QWidget, "field:/free").metaObject().className() != "QDoubleSpinBox"  # unbounded
    form.deleteLater()


def test_a_file_input_has_a_file_chooser(qapp, tmp_path, monkeypatch):
    schema = {"type": "object", "required": ["report_path", "document", "photo"], "properties": {
        "report_path": {"type": "string", "description": "Where the report is"},
        "document": {"type": "string", "format": "uri", "description": "The file to summarise"},
        "photo": {"type": "string", "contentEncoding": "base64", "contentMediaType": "image/png"},
        "homepage": {"type": "string", "format": "uri", "description": "A web page"},
        "city": {"type": "string"}}}
    assert file_kind(schema["properties"]["report_path"], "report_path") == "path"
    assert file_kind(schema["properties"]["document"], "document") == "uri"
    assert file_kind(schema["properties"]["photo"], "photo") == "content"
    assert file_kind(schema["properties"]["homepage"], "homepage") is None
    assert file_kind(schema["properties"]["city"], "city") is None
    assert file_kind({"type": "string", "title": "Output file"}, "out") == "path"
    assert file_kind({"type": "integer"}, "file_count") is None and file_kind({"enum": ["a"]}, "file") is None
    picture = tmp_path / "holiday photo.png"
    picture.write_bytes(_png(4, 4))
    notes = tmp_path / "notes.txt"
    notes.write_text("hello", encoding="utf-8")
    asked: list[str] = []
    answers = iter([str(notes), str(notes), str(picture)])

    def chooser(parent, title):  # no native dialog in a test: the chooser is the form's to replace
        asked.append(title)
        return next(answers)
    monkeypatch.setattr(FileField, "chooser", staticmethod(chooser))
    form = FriendlyForm(schema)
    form.show()
    assert form.findChild(QAbstractButton, "choose:/homepage") is None
    assert form.findChild(QAbstractButton, "choose:/city") is None
    for ptr in ("/report_path", "/document"):
        button = form.findChild(QAbstractButton, "choose:" + ptr)
        assert button.text() == "Choose a file…"
        button.click()
        assert form.findChild(QLabel, "chosen:" + ptr).text() == "Chosen: notes.txt"
    assert asked[0] == "Choose report path"
    photo = form.findChild(QAbstractButton, "field:/photo")  # a file's contents: the button is the field
    assert photo.text() == "Choose a file…" and accessible(photo)[0] == "Photo"
    assert form.findChild(QLabel, "chosen:/photo").text() == "No file chosen yet"
    photo.click()
    assert form.findChild(QLabel, "chosen:/photo").text().startswith("Chosen: holiday photo.png (")
    value = form.value()
    assert value["report_path"] == str(notes) and value["document"] == notes.resolve().as_uri()
    assert base64.b64decode(value["photo"]) == picture.read_bytes()
    assert value["photo"] not in "\n".join(visible_texts(form))  # the contents are never shown
    assert "holiday photo.png" in accessible(photo)[1]
    assert form.reveal_problems() == 0
    typed = form.findChild(QLineEdit, "field:/report_path")  # a path can still be typed; the note goes
    typed.setText("/elsewhere/report.pdf")
    typed.textEdited.emit("/elsewhere/report.pdf")
    assert form.value()["report_path"] == "/elsewhere/report.pdf"
    assert form.findChild(QLabel, "chosen:/report_path").isHidden()
    form.set_value({"report_path": "a", "document": "file:///b", "photo": "AAAA"})
    assert form.value()["photo"] == "AAAA" and form.findChild(QLabel, "chosen:/photo").text().startswith(
        "A file is filled in")
    big = tmp_path / "big.bin"
    with big.open("wb") as fh:
        fh.truncate(11 * 1024 * 1024)
    monkeypatch.setattr(FileField, "chooser", staticmethod(lambda parent, title: str(big)))
    photo.click()
    assert "too large" in form.findChild(QLabel, "chosen:/photo").text() and form.value()["photo"] == "AAAA"
    monkeypatch.setattr(FileField, "chooser", staticmethod(lambda parent, title: ""))  # cancelled
    photo.click()
    assert form.value()["photo"] == "AAAA"
    form.deleteLater()


# ---------------------------------------------------------------------- the seed tools
async def test_seed_tools_end_to_end_in_words(open_window):
    async with open_window() as window:
        docks_before = [d.objectName() for d in window.findChildren(QDockWidget) if d.isVisible()]
        central_before = window.centralWidget()
        conn, view = await present(window, SEED, "seed")
        # one stage: no docks, no menu bar, no traffic
        assert window.centralWidget() is view
        assert not [d for d in window.findChildren(QDockWidget) if d.isVisible()]
        assert not window.menuBar().isVisible() and not window.statusBar().isVisible()
        assert not find(window, QWidget, "trafficView").isVisible()
        # the cards: titles, first sentences, destructive said in words, app-only hidden
        assert card_names(window) == ["get_weather", "add_numbers", "count_words", "delete_user", "slow_report",
                                      "write_poem", "count_folders"]
        cards = find(window, QAbstractItemView, "presentCards")
        texts = [cards.model().index(r, 0).data() for r in range(cards.model().rowCount())]
        assert texts[0] == "Weather lookup\nLooks up today's weather for a city."
        assert texts[3].endswith("⚠ Changes or deletes data")
        assert_plain(window, names=SEED_NAMES)
        await shot(window, "present-cards-light")
        # search as you type, Enter opens the first match
        search = find(window, QLineEdit, "presentSearch")
        search.setText("words")
        assert card_names(window) == ["count_words"]
        search.setFocus()
        from PySide6.QtTest import QTest
        QTest.keyClick(search, Qt.Key_Return)
        assert view.tool["name"] == "count_words"
        # a problem in plain words next to the field
        field = find(view, QLineEdit, "field:/text")
        assert field.placeholderText() == "e.g. The quick brown fox"
        assert view.run() is None
        problem = find(view, QLabel, "problem:/text")
        assert problem.isVisible() and problem.text() == "⚠ Please enter a text."
        assert view.form_note.isVisible()
        assert_plain(window, names=SEED_NAMES)
        await assert_run_follows_form(view)
        await shot(window, "present-problem-light")
        field.setText("one two three")
        card = await run_and_wait(view)
        assert card.objectName() == "presentResult"
        assert "That text has 3 words." in card.text()
        assert_plain(window, names=SEED_NAMES)
        # Details starts closed; opened it has the JSON
        details = find(card, QAbstractButton, "presentDetails")
        assert details.isCheckable() and not details.isChecked()
        details.click()
        assert "count_words" in card.details_view.toPlainText() and "isError" in card.details_view.toPlainText()
        details.click()
        assert_plain(window, names=SEED_NAMES)
        # back, then the weather: an enum by its values in words and an output schema as labelled fields
        find(view, QAbstractButton, "presentBack").click()
        search.clear()
        assert view.stack.currentIndex() == 0
        assert view.open_tool("get_weather")
        units = find(view, QComboBox, "field:/units")
        assert units.currentText() == "Celsius"
        find(view, QLineEdit, "field:/city").setText("Lisbon")
        await assert_run_follows_form(view)
        await shot(window, "present-form-light")
        card = await run_and_wait(view)
        said = card.text()
        assert "City:" in said and "Lisbon" in said and "Humidity:" in said and "Conditions:" in said
        assert_plain(window, names=SEED_NAMES)
        await shot(window, "present-answer-light")
        # a tool error: calm, with the server's own words
        find(view, QLineEdit, "field:/city").setText("Atlantis")
        card = await run_and_wait(view)
        assert card.objectName() == "presentError"
        assert "The weather service couldn't find 'Atlantis'." in card.text()
        assert_plain(window, names=SEED_NAMES)
        await shot(window, "present-tool-error-light")
        # the adder
        assert view.open_tool("add_numbers")
        find(view, QLineEdit, "field:/a").setText("2")
        find(view, QLineEdit, "field:/b").setText("40")
        card = await run_and_wait(view)
        assert "2 plus 40 is 42." in card.text()
        assert_plain(window, names=SEED_NAMES)
        # the destructive tool asks in plain words; No keeps it from running, Yes runs it
        assert view.open_tool("delete_user")
        spin = find(view, QAbstractSpinBox, "field:/user_id")
        spin.setValue(42)
        calls = len(conn.session.calls.history)
        assert view.run() is None
        confirm = find(view, QWidget, "presentConfirm")
        assert confirm.isVisible()
        assert view.confirm_text.text().startswith("“Delete a user” (User id: 42) changes or deletes data")
        assert_plain(window, names=SEED_NAMES)
        await assert_run_follows_form(view)
        await shot(window, "present-confirm-light")
        find(view, QAbstractButton, "presentConfirmNo").click()
        assert not confirm.isVisible() and len(conn.session.calls.history) == calls
        view.run()
        find(view, QAbstractButton, "presentConfirmYes").click()
        await until(lambda: view.card is not None, 20, "the deletion")
        assert "User 42 was deleted." in view.card.text()
        # progress with the server's message, then Cancel
        assert view.open_tool("slow_report")
        find(view, QLineEdit, "field:/seconds").setText("30") if view.form.findChild(
            QLineEdit, "field:/seconds") else None
        view.form.show_more(True)
        find(view, QLineEdit, "field:/seconds").setText("30")
        rec = view.run()
        progress = find(view, QWidget, "presentProgress")
        await until(lambda: rec.message and "Reading page" in view.progress_text.text(), 10, "the progress")
        assert progress.isVisible() and find(view, QAbstractButton, "presentCancel").isVisible()
        assert_plain(window, names=SEED_NAMES)
        await shot(window, "present-progress-light")
        find(view, QAbstractButton, "presentCancel").click()
        await until(lambda: view.card is not None, 10, "the cancelled call")
        assert view.card.objectName() == "presentError"
        assert "You stopped this before it finished." in view.card.text()
        assert_plain(window, names=SEED_NAMES)
        # the traffic was recorded all along
        window.traffic.flush()
        assert len(window.store) > 0
        # leaving brings the normal window back
        window.present.leave()
        assert window.centralWidget() is central_before
        await until(lambda: sorted(d.objectName() for d in window.findChildren(QDockWidget) if d.isVisible())
                    == sorted(docks_before), 5, "the docks back")
        assert window.menuBar().isVisible()
        assert not window.present.active


async def test_keyboard_only_zoom_looks_and_accessibility(open_window, tmp_path):
    from PySide6.QtTest import QTest

    async with open_window() as window:
        conn, view = await present(window, SEED, "seed")
        cards = find(window, QAbstractItemView, "presentCards")
        # 100 % is already large
        assert view.cards.view.font().pointSizeF() >= 14 and view.heading.font().pointSizeF() >= 20
        QTest.keyClick(view, Qt.Key_Plus, Qt.ControlModifier)
        assert view.zoom == 125 and view.cards.view.font().pointSizeF() == pytest.approx(17.5)
        QTest.keyClick(view, Qt.Key_Minus, Qt.ControlModifier)
        assert view.zoom == 100
        # arrows and Enter
        cards.setFocus()
        cards.setCurrentIndex(cards.model().index(0, 0))
        QTest.keyClick(cards, Qt.Key_Right)
        assert cards.currentIndex().data(Qt.UserRole) == "add_numbers"
        QTest.keyClick(cards, Qt.Key_Return)
        assert view.tool["name"] == "add_numbers"
        a = find(view, QLineEdit, "field:/a")
        QTest.keyClicks(a, "3")
        QTest.keyClick(a, Qt.Key_Tab)
        b = QApplication_focus()
        assert b is find(view, QLineEdit, "field:/b")
        QTest.keyClicks(b, "4")
        QTest.keyClick(b, Qt.Key_Return)  # Enter runs
        await until(lambda: view.card is not None, 20, "the answer")
        assert "3 plus 4 is 7." in view.card.text()
        # every control of the stage has an accessible name and description
        for w in view.findChildren(QAbstractButton) + [cards, find(view, QLineEdit, "presentSearch"), a, b]:
            if w.isVisible():
                name, description = accessible(w)
                assert name and description, w.objectName()
        assert "3 plus 4 is 7" in accessible(view.card.findChild(QWidget, "presentText"))[1]
        # Page Down / Page Up: back to the cards, the next one chosen
        QTest.keyClick(view.run_button, Qt.Key_PageDown)
        assert view.stack.currentIndex() == 0 and view.cards.current_name() == "count_words"
        QTest.keyClick(cards, Qt.Key_PageDown)
        assert view.tool["name"] == "count_words" and view.stack.currentIndex() == 1
        QTest.keyClick(view.run_button, Qt.Key_PageUp)
        assert view.stack.currentIndex() == 0
        # the looks, and Esc leaves
        for look in ("dark", "high-contrast", "light"):
            view.set_look(look)
            assert view.palette().color(view.backgroundRole()).name() == {
                "dark": "#1f2227", "high-contrast": "#000000", "light": "#f3f4f6"}[look]
        QTest.keyClick(cards, Qt.Key_Escape)
        assert not window.present.active and window.centralWidget() is not view
        # F11 toggles
        window.present.action.trigger()
        assert window.present.active
        window.present.action.trigger()
        assert not window.present.active


def QApplication_focus():
    from PySide6.QtWidgets import QApplication

    return QApplication.focusWidget()


async def test_a_script_steps_tool_form_answer(open_window, tmp_path):
    from PySide6.QtTest import QTest

    script = tmp_path / "demo.yaml"
    script.write_text("name: seed demo\nsteps:\n"
                      "  - {name: Weather in Porto, call: get_weather, arguments: {city: Porto}}\n"
                      "  - {name: Sum, call: add_numbers, arguments: {a: 1, b: 2}}\n"
                      "  - {name: Nothing here, call: no_such_tool, arguments: {}}\n", encoding="utf-8")
    async with open_window() as window:
        conn, view = await present(window, SEED, "seed")
        assert view.load_script(script) == ""
        note = find(view, QLabel, "presentScriptStep")
        assert note.isVisible() and "press →" in note.text()
        QTest.keyClick(view.cards.view, Qt.Key_PageDown)
        assert view.tool["name"] == "get_weather" and view.form.value()["city"] == "Porto"
        assert note.text() == "Step 1 of 3: Weather in Porto"
        assert_plain(window, names=SEED_NAMES)
        for look in ("light", "dark", "high-contrast"):
            view.set_look(look)
            await shot(window, f"present-script-{look}")
        view.set_look("light")
        view.forward()  # runs it
        await until(lambda: view.card is not None, 20, "the answer")
        assert "Porto" in view.card.text()
        QTest.keyClick(view.run_button, Qt.Key_Right)  # → the next step
        assert view.tool["name"] == "add_numbers" and note.text() == "Step 2 of 3: Sum"
        view.run_button.setFocus()  # (in a text field the arrows move the cursor; Page Up / Down step anywhere)
        QTest.keyClick(view.run_button, Qt.Key_Left)  # ← the step before, its form filled
        assert view.tool["name"] == "get_weather" and view.card is None
        view.backward()
        assert view.stack.currentIndex() == 0 and view.script_at == -1
        view.forward()
        view.forward()
        await until(lambda: view.card is not None, 20, "the answer")
        view.forward()
        view.forward()
        await until(lambda: view.card is not None, 20, "the sum")
        view.backward()
        assert view.card is None and view.tool["name"] == "add_numbers"
        view.forward()
        await until(lambda: view.card is not None, 20, "the sum again")
        view.forward()
        assert "this server has no such tool" in note.text()
        # the calls of this mode saved as a script, read back by the collection loader
        saved = tmp_path / "saved.yaml"
        assert view.save_script(saved) == len(view.played) >= 3
        from inspector.collection.load import load
        steps = load(saved).steps
        assert steps[0].target == "get_weather" and steps[0].arguments == {"city": "Porto"}
        # broken scripts are said in words
        bad = tmp_path / "bad.yaml"
        bad.write_text("steps: 3\n", encoding="utf-8")
        assert view.load_script(bad).startswith("That script couldn't be read")
        assert view.load_script(tmp_path / "missing.yaml")
        empty = tmp_path / "empty.yaml"
        empty.write_text("steps:\n  - {name: l, list: tools}\n", encoding="utf-8")
        assert view.load_script(empty) == "That script has no tools to run."
        view.stop_script()
        assert not note.isVisible()


async def test_every_state_in_three_looks(open_window):
    async with open_window() as window:
        conn, view = await present(window, SEED, "seed")
        for look in ("dark", "high-contrast"):
            view.set_look(look)
            view.show_cards()
            await shot(window, f"present-cards-{look}")
            view.open_tool("get_weather")
            find(view, QLineEdit, "field:/city").setText("Lisbon")
            await assert_run_follows_form(view)
            await shot(window, f"present-form-{look}")
            await run_and_wait(view)
            await shot(window, f"present-answer-{look}")
            find(view, QLineEdit, "field:/city").setText("Atlantis")
            await run_and_wait(view)
            await shot(window, f"present-tool-error-{look}")
            view.open_tool("delete_user")
            view.run()
            await shot(window, f"present-confirm-{look}")
            view.open_tool("slow_report")
            view.form.show_more(True)
            find(view, QLineEdit, "field:/seconds").setText("30")
            rec = view.run()
            await until(lambda: rec.message, 10, "the progress")
            await shot(window, f"present-progress-{look}")
            view.cancel()
            await until(lambda: view.card is not None, 10, "cancelled")


async def test_the_demo_servers_tools_in_words(open_window):
    demo = ("echo", "markdown_report", "render_chart", "play_tone", "get_config_file", "find_document",
            "weather", "divide", "long_task", "log_demo", "delete_item", "search_web", "create_event", "ask_user",
            "toggle_bonus_tool")
    fills = {"echo": {"message": "Hello"}, "markdown_report": {"topic": "spyglass"},
             "render_chart": {"values": [3, 1, 2]}, "play_tone": {}, "find_document": {"query": "welcome"},
             "weather": {"city": "Oslo"},
             "divide": {"a": 1, "b": 0}, "long_task": {"steps": 2, "step_ms": 50}, "search_web": {"query": "owls"},
             "delete_item": {"id": "alpha", "confirm": True}}
    demo = tuple(n for n in demo if "_" in n)  # "echo", "weather" and "divide" are words too
    async with open_window() as window:
        conn, view = await present(window, demo_cmd(), "demo")
        assert_plain(window, names=demo)
        for name in card_names(window):
            if name in ("ask_user", "toggle_bonus_tool", "create_event", "log_demo"):
                assert view.open_tool(name)
                assert_plain(window, names=demo)
                continue
            assert view.open_tool(name, fills.get(name))
            assert_plain(window, names=demo)
            if name == "delete_item":
                view.run()
                assert view.confirm.isVisible()
                view.confirm_yes.click()
                await until(lambda: view.card is not None and view.card.isVisible(), 20, name)
            else:
                await run_and_wait(view)
            # the report's own text (a code sample of the protocol) is the server's to say
            assert_plain(window, names=demo, skip=("presentText",) if name == "markdown_report" else ())
            if name == "divide":
                assert view.card.objectName() == "presentError"
            if name == "render_chart":
                assert view.card.findChild(QLabel, "presentImage").pixmap() is not None
                await shot(window, "present-image-light")
            if name == "find_document":
                view.set_zoom(150)  # a document opened from the answer is as large as the rest of the stage
                button = find(view.card, QAbstractButton, "presentOpenLink")
                button.click()
                await until(lambda: view.card.findChild(QWidget, "presentDocument"), 10, "the document")
                assert_plain(window, names=demo)
                doc = view.card.findChild(QWidget, "presentDocument")
                assert doc.findChild(QTextEdit, "presentText") is not None  # the welcome note: text
                await until(lambda: doc.isVisible(), 5, "shown")
                await until(lambda: all(t.height() >= t.document().size().height()  # laid out: no line cut off
                                        for t in doc.findChildren(QTextEdit)), 5, "the document laid out")
                for w in doc.findChildren(QWidget):
                    if isinstance(w, (QLabel, QTextEdit)):
                        assert w.font().pointSizeF() == pytest.approx(14 * 1.5), w.objectName()
                    if isinstance(w, QTextEdit):
                        assert w.document().defaultFont().pointSizeF() == pytest.approx(14 * 1.5)
                        assert w.height() >= w.document().size().height()  # no line cut off
                view.set_zoom(100)
            if name == "markdown_report":
                assert "Spyglass" in "\n".join(visible_texts(view.card))
        window.present.leave()


def test_the_command_line_takes_present():
    args = parse_args(["--present", "--", "python", "server.py"])
    assert args.present and args.command == ["python", "server.py"]
    assert parse_args(["--present", "--server", "mine"]).server == "mine"
    from inspector import errors as E
    with pytest.raises(E.UsageError):
        parse_args(["--server", "mine"])


def test_spyglass_present_starts_in_it(tmp_path):
    import os
    import subprocess

    from PySide6.QtGui import QImage
    from uikit import ARTIFACTS, ROOT

    out = ARTIFACTS / "present-command-line.png"
    ARTIFACTS.mkdir(exist_ok=True)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"), HOME=str(tmp_path))
    r = subprocess.run([PY, "-m", "inspector", "--present", "--theme", "light", "--screenshot", str(out), "--",
                        *SEED], cwd=ROOT, env=env, capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stderr
    assert not QImage(str(out)).isNull()
    r = subprocess.run([PY, "-m", "inspector", "--present", "--server", "nobody", "--screenshot",
                        str(tmp_path / "none.png")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stderr


def test_the_servers_words_lose_the_sdks_prefix():
    tool = {"name": "get_weather", "title": "Weather lookup"}
    assert words.server_words("Error executing tool get_weather: No 'X'.", tool) == "No 'X'."
    assert words.server_words("get_weather broke", tool) == "“Weather lookup” broke"


def test_answer_cards_of_every_shape(qapp):
    import base64

    from inspector import errors as E
    from inspector.session.calls import CallRecord
    from inspector.ui.present.answer import AnswerCard

    tool = {"name": "lookup", "title": "Look it up", "outputSchema": {"properties": {"rows": {"title": "People"}}}}
    ok = CallRecord(1, "s", "lookup", {"q": 1}, tool, outcome="ok", result={
        "content": [{"type": "image", "data": "bm90IGFuIGltYWdl", "mimeType": "image/png"},
                    {"type": "resource", "resource": {"uri": "x:a", "name": "Notes", "mimeType": "application/json",
                                                      "text": '{"owner": "Ada", "pages": 3}'}},
                    {"type": "resource", "resource": {"uri": "x:b", "text": "# Hello"}},
                    {"type": "resource", "resource": {"uri": "x:c", "blob": "AAAA", "mimeType": "application/zip"}},
                    {"type": "resource_link", "uri": "x:d", "name": "doc", "description": "The document"}],
        "structuredContent": {"rows": [{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}], "open": True}})
    card = AnswerCard(ok, tool)
    card.show()
    text = card.text()
    assert "This picture can't be shown." in text and "Owner:" in text and "Hello" in text
    assert "This document can't be shown here." in text and "People:" in text and "Yes" in text
    table = card.findChild(QTableWidget, "presentTable")
    assert [table.horizontalHeaderItem(c).text() for c in range(2)] == ["Name", "Age"]
    assert table.item(1, 0).text() == "Alan"
    assert not card.findChild(QAbstractButton, "presentOpenLink").isEnabled()  # no server to read it from
    rows = CallRecord(2, "s", "lookup", {}, tool, outcome="ok",
                      result={"content": [], "structuredContent": [{"a": 1}]})
    assert AnswerCard(rows, tool).findChild(QTableWidget, "presentTable") is not None
    plain = CallRecord(3, "s", "lookup", {}, tool, outcome="ok", result={"content": [], "structuredContent": 5})
    assert "5" in AnswerCard(plain, tool).text()
    empty = CallRecord(4, "s", "lookup", {}, tool, outcome="ok", result={"content": []})
    assert "nothing more to say" in AnswerCard(empty, tool).text()
    quiet = CallRecord(5, "s", "lookup", {}, tool, outcome="tool error", result={"content": [], "isError": True})
    assert "“Look it up” couldn't finish" in AnswerCard(quiet, tool).text()
    err = E.RemoteError("tools/call", -32601, "Unknown tool: lookup")
    gone = CallRecord(6, "s", "lookup", {}, tool, outcome="rejected", error=err, error_text=err.rpc_message)
    card = AnswerCard(gone, tool)
    card.show()
    said = card.text()
    assert "The tool isn't available on this server." in said and "Unknown tool: “Look it up”" in said
    assert "-32601" not in said
    card.details.click()
    assert "error code: -32601" in card.details_view.toPlainText()
    png = base64.b64encode(_png(1200, 300)).decode()
    big = CallRecord(7, "s", "lookup", {}, tool, outcome="ok", result={"content": [
        {"type": "image", "data": png, "mimeType": "image/png"}]})
    big_card = AnswerCard(big, tool)
    assert big_card.findChild(QLabel, "presentImage").pixmap().width() == 640


def _png(w: int, h: int) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QImage

    img = QImage(w, h, QImage.Format_RGB32)
    img.fill(0x3366CC)
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.WriteOnly)
    img.save(buf, "PNG")
    return bytes(data)


async def test_present_server_name_shows_a_saved_server(open_window, tmp_path):
    """`spyglass --present --server NAME` with NAME in the catalog: that server, connected and selected, its
    tools on the stage (the demo server is in the sidebar too, but not shown) — also with --screenshot."""
    from inspector.app import saved_or_demo
    from inspector.catalog import Catalog
    from inspector.keystore import MemorySecrets

    path = tmp_path / "config" / "servers.json"
    saved = Catalog(path, secrets=MemorySecrets()).load()
    saved.add(ServerSpec(name="seed", command=SEED))
    saved.save()
    for argv in (["--present", "--server", "seed"], ["--present", "--server", "seed", "--screenshot", "x.png"]):
        async with open_window(catalog=Catalog(path, secrets=MemorySecrets()).load()) as window:
            args = parse_args(argv)
            first = saved_or_demo(window, args)
            assert first is not None and first.name == "seed"
            assert sorted(c.name for c in window.connections()) == sorted(["seed", first_demo(window)])
            window.present.enter()
            view = find(window, QWidget, "presentView")
            await until(lambda: set(card_names(window)) >= {"get_weather", "add_numbers"}, 30, "the seed cards")
            assert view.conn is first and "echo" not in card_names(window)
            window.present.leave()
    async with open_window(catalog=Catalog(path, secrets=MemorySecrets()).load()) as window:
        first = saved_or_demo(window, parse_args(["--present", "--server", "nobody"]))
        assert first is not None and first.name == first_demo(window)  # the demo server, and a banner
        assert "nobody" in find(window, QLabel, "errorBannerText").text()


def first_demo(window) -> str:
    from inspector.ui.servers.catalog_link import DEMO_NAME
    return DEMO_NAME


async def test_a_document_opened_from_the_answer_has_the_stages_text_size(qapp):
    """A resource opened from a link in the answer card is as large as the rest (the zoom set before or after
    it opens), each line shown whole."""
    from inspector.session.calls import CallRecord
    from inspector.ui.present.answer import AnswerCard
    from inspector.ui.present.view import PresentView

    async def reader(uri):
        return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": "# Notes\n\nThe body " * 3},
                             {"uri": uri, "mimeType": "application/json", "text": '{"owner": "Ada"}'}]}
    tool = {"name": "t", "title": "Find it"}
    rec = CallRecord(1, "s", "t", {}, tool, outcome="ok", result={"content": [
        {"type": "text", "text": "Found it"}, {"type": "resource_link", "uri": "x:d", "name": "The notes"}]})
    view = PresentView()
    view.resize(900, 700)
    view.show()
    view.stack.setCurrentIndex(1)
    try:
        for before, after in ((150, 150), (100, 200)):
            view.set_zoom(before)
            view._clear_answer()
            view.card = AnswerCard(rec, tool, reader)
            view.answer_holder.addWidget(view.card)
            find(view.card, QAbstractButton, "presentOpenLink").click()
            await until(lambda: view.card.findChild(QWidget, "presentDocument") is not None, 5, "the document")
            view.set_zoom(after)
            doc = view.card.findChild(QWidget, "presentDocument")
            await until(lambda: doc.isVisible(), 5, "shown")
            shown = [w for w in doc.findChildren(QWidget) if isinstance(w, (QLabel, QTextEdit))]
            assert len(shown) >= 4  # the title, the text, a label and its value
            for w in shown:
                assert w.font().pointSizeF() == pytest.approx(14 * after / 100), w.objectName()
                if isinstance(w, QTextEdit):
                    assert w.document().defaultFont().pointSizeF() == pytest.approx(14 * after / 100)
                    await until(lambda w=w: w.height() >= w.document().size().height(), 5, "whole lines")
    finally:
        view.deleteLater()


async def test_presentation_asks_where_the_window_asks(open_window):
    """A tool that declares no annotations may destroy (the spec's default): the window asks before calling it
    (`session.tools.may_destroy`), so presentation mode asks too, and its card says so in words."""
    from support import SDK_SERVER

    from inspector.ui.calls.confirm import DEFAULT, needs_confirmation

    async with open_window() as window:
        conn, view = await present(window, [PY, str(SDK_SERVER)], "sdk")
        echo = next(t for t in conn.session.tools.items if t["name"] == "echo")
        assert "annotations" not in echo and needs_confirmation(echo, DEFAULT)  # the window asks
        cards = find(window, QAbstractItemView, "presentCards")
        text = next(cards.model().index(r, 0).data() for r in range(cards.model().rowCount())
                    if cards.model().index(r, 0).data(Qt.UserRole) == "echo")
        assert text.endswith("⚠ May change or delete data (it does not say)")
        assert view.open_tool("echo", {"message": "hi"})
        calls = len(conn.session.calls.history)
        assert view.run() is None
        assert view.confirm.isVisible()
        assert view.confirm_text.text().startswith("“Echo” (Message: hi) may change or delete data")
        assert len(conn.session.calls.history) == calls
        view.confirm_yes.click()
        await until(lambda: view.card is not None and view.card.isVisible(), 20, "the answer")
        assert len(conn.session.calls.history) == calls + 1
        window.present.leave()
