"""pytest-qt: drive the generated widgets by object name, as users' automation does, and read value()."""

from __future__ import annotations

import json

import pytest
from corpus_tools import corpus
from feature_schemas import FEATURES
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QWidget,
)

CORPUS = dict(corpus())


@pytest.fixture
def make(qtbot):
    def make(schema):
        from inspector.forms import SchemaForm

        form = SchemaForm(schema)
        qtbot.addWidget(form)
        form.resize(600, 800)
        form.show()
        qtbot.waitExposed(form)
        return form

    return make


def field(form, pointer: str, cls=QWidget):
    w = form.findChild(cls, "field:" + pointer)
    assert w is not None, f"no field:{pointer} ({cls.__name__})"
    return w


def test_object_names_and_typing(qtbot, make):
    form = make(CORPUS["demo:create_event"])
    assert form.objectName() == "toolForm"
    qtbot.keyClicks(field(form, "/title", QLineEdit), "Standup")
    qtbot.keyClicks(field(form, "/when", QLineEdit), "2030-01-31T09:30:00Z")
    qtbot.keyClicks(field(form, "/location/room", QLineEdit), "B12")
    qtbot.keyClicks(field(form, "/location/floor", QLineEdit), "3")
    v = form.value()
    assert v["title"] == "Standup" and v["when"] == "2030-01-31T09:30:00Z"
    assert v["location"] == {"room": "B12", "floor": 3}
    assert v["priority"] == "normal" and v["duration_minutes"] == 30 and v["all_day"] is False  # defaults
    assert "reminder" not in v and "attendees" not in v  # optional, never touched
    assert form.errors() == []


def test_optional_unset_is_absent_and_empty_string_stays(qtbot, make):
    form = make({"type": "object", "properties": {"s": {"type": "string"}, "n": {"type": "number"},
                                                  "b": {"type": "boolean"}, "e": {"enum": ["x", "y"]}}})
    assert form.value() == {}
    s = field(form, "/s", QLineEdit)
    qtbot.keyClicks(s, "a")
    assert form.value() == {"s": "a"}
    qtbot.keyClick(s, Qt.Key_Backspace)
    assert form.value() == {}  # emptied by the user: not set again
    form.set_value({"s": ""})
    assert form.value() == {"s": ""}
    n = field(form, "/n", QLineEdit)
    qtbot.keyClicks(n, "12.5")
    assert form.value() == {"s": "", "n": 12.5}
    n.clear()
    assert "n" not in form.value()  # an empty optional number stays unset


def test_boolean_tristate_when_optional(qtbot, make):
    form = make({"type": "object", "properties": {"opt": {"type": "boolean"}, "req": {"type": "boolean"}},
                 "required": ["req"]})
    opt, req = field(form, "/opt", QCheckBox), field(form, "/req", QCheckBox)
    assert opt.isTristate() and not req.isTristate()
    assert form.value() == {"req": False}
    qtbot.mouseClick(opt, Qt.LeftButton)   # not set -> true
    qtbot.mouseClick(req, Qt.LeftButton)
    assert form.value() == {"opt": True, "req": True}
    qtbot.mouseClick(opt, Qt.LeftButton)   # true -> false
    assert form.value()["opt"] is False


def test_big_integers_typed(qtbot, make):
    form = make({"type": "object", "properties": {"i": {"type": "integer"}}})
    qtbot.keyClicks(field(form, "/i", QLineEdit), "123456789012345678901234567890")
    assert form.value() == {"i": 123456789012345678901234567890}
    assert form.errors() == []


def test_number_text_that_is_not_a_number(qtbot, make):
    form = make({"type": "object", "properties": {"n": {"type": "number"}}})
    qtbot.keyClicks(field(form, "/n", QLineEdit), "12x")
    assert ("/n", "'12x' is not a number") in form.errors()
    assert form.value() == {}


def test_enum_select_and_titled_enum(qtbot, make):
    form = make(FEATURES["enums"])
    titled = field(form, "/titled", QComboBox)
    assert [titled.itemText(i) for i in range(titled.count())][1:] == ["Small", "Large"]
    titled.setCurrentIndex(2)
    titled.activated.emit(2)
    legacy = field(form, "/legacy", QComboBox)
    assert legacy.itemText(1) == "Ex"
    legacy.setCurrentIndex(1)
    legacy.activated.emit(1)
    assert form.value() == {"titled": "l", "legacy": "x"}


def test_multiselect_keeps_order_of_picking(qtbot, make):
    form = make(FEATURES["enums"])
    lst = field(form, "/many", QListWidget)
    lst.item(2).setCheckState(Qt.Checked)
    lst.item(0).setCheckState(Qt.Checked)
    assert form.value() == {"many": ["b", "r"]}
    lst.item(2).setCheckState(Qt.Unchecked)
    assert form.value() == {"many": ["r"]}


def test_const_and_readonly_and_deprecated(qtbot, make):
    form = make({"type": "object", "required": ["kind"], "properties": {
        "kind": {"const": "circle"},
        "id": {"type": "string", "readOnly": True, "default": "srv-1"},
        "legacy": {"type": "string", "deprecated": True}}})
    assert form.value() == {"kind": "circle"}  # readOnly shown disabled and omitted
    assert not field(form, "/id").isEnabled()
    labels = [lb.text() for lb in form.findChildren(QLabel)]
    assert any("deprecated" in t for t in labels)


def test_nullable_toggle(qtbot, make):
    form = make(FEATURES["nullables"])
    null_a = form.findChild(QCheckBox, "null:/a")
    qtbot.mouseClick(null_a, Qt.LeftButton)
    assert form.value()["a"] is None
    assert not field(form, "/a").isEnabled()
    qtbot.mouseClick(null_a, Qt.LeftButton)
    qtbot.keyClicks(field(form, "/a", QLineEdit), "hi")
    assert form.value()["a"] == "hi"
    form.set_value({"a": None, "b": None, "c": None, "d": None, "e": 3})
    assert form.value() == {"a": None, "b": None, "c": None, "d": None, "e": 3}


def test_array_add_remove_reorder(qtbot, make):
    form = make(FEATURES["nested"])
    add = form.findChild(QPushButton, "add:/tags")
    for text in ("one", "two", "three"):
        qtbot.mouseClick(add, Qt.LeftButton)
        qtbot.keyClicks(field(form, f"/tags/{form.value().get('tags', []).__len__() - 1}", QLineEdit), text)
    assert form.value()["tags"] == ["one", "two", "three"]
    row2 = field(form, "/tags/2", QLineEdit).parentWidget().parentWidget()
    up = [b for b in row2.findChildren(QToolButton) if b.text() == "↑"][0]
    qtbot.mouseClick(up, Qt.LeftButton)
    assert form.value()["tags"] == ["one", "three", "two"]
    assert field(form, "/tags/1", QLineEdit).text() == "three"  # names follow the new order
    rm = [b for b in field(form, "/tags/0", QLineEdit).parentWidget().parentWidget().findChildren(QToolButton)
          if b.text() == "✕"][0]
    qtbot.mouseClick(rm, Qt.LeftButton)
    assert form.value()["tags"] == ["three", "two"]
    for _ in range(3):
        qtbot.mouseClick(add, Qt.LeftButton)
    assert not add.isEnabled()  # maxItems 5


def test_array_of_objects(qtbot, make):
    form = make(CORPUS["memory:create_entities"])
    qtbot.mouseClick(form.findChild(QPushButton, "add:/entities"), Qt.LeftButton)
    qtbot.keyClicks(field(form, "/entities/0/name", QLineEdit), "Ada")
    qtbot.keyClicks(field(form, "/entities/0/entityType", QLineEdit), "person")
    qtbot.mouseClick(form.findChild(QPushButton, "add:/entities/0/observations"), Qt.LeftButton)
    qtbot.keyClicks(field(form, "/entities/0/observations/0", QLineEdit), "wrote the first program")
    assert form.value() == {"entities": [{"name": "Ada", "entityType": "person",
                                          "observations": ["wrote the first program"]}]}
    assert form.errors() == []


def test_map_entries(qtbot, make):
    form = make(FEATURES["maps"])
    qtbot.mouseClick(form.findChild(QPushButton, "add:/labels"), Qt.LeftButton)
    key = form.findChild(QLineEdit, "key:/labels/0")
    qtbot.keyClicks(key, "env")
    qtbot.keyClicks(field(form, "/labels/env", QLineEdit), "prod")
    assert form.value() == {"labels": {"env": "prod"}}
    form.set_value({"scores": {"s_a": 1, "f_b": 2.5}})
    assert form.value() == {"scores": {"s_a": 1, "f_b": 2.5}}
    assert form.fallback_pointers() == []


def test_tuple(qtbot, make):
    form = make(CORPUS["sdk_pydantic:set_labels"])
    assert form.value()["point"] == [0, 0]  # default prefilled
    f0 = field(form, "/point/0", QLineEdit)
    f0.clear()
    qtbot.keyClicks(f0, "7")
    assert form.value()["point"] == [7, 0]


def test_choice_preselected_by_discriminator(qtbot, make):
    form = make(CORPUS["sdk_pydantic:adopt_pet"])
    form.set_value({"pet": {"kind": "dog", "good_boy": False}, "owner": "me"})
    combo = form.findChild(QComboBox, "variant:/pet")
    assert combo.currentText() == "Dog"
    assert form.value() == {"pet": {"kind": "dog", "good_boy": False}, "owner": "me"}
    combo.setCurrentIndex(0)
    combo.activated.emit(0)
    assert form.value()["pet"] == {"kind": "cat", "lives": 9}
    assert form.errors() == []


def test_choice_of_objects_without_discriminator(qtbot, make):
    form = make(CORPUS["demo:create_event"])
    combo = form.findChild(QComboBox, "variant:/reminder")
    assert [combo.itemText(i) for i in range(combo.count())] == ["Email", "Popup"]
    combo.setCurrentIndex(1)
    combo.activated.emit(1)
    qtbot.keyClicks(field(form, "/reminder/minutes_before", QLineEdit), "15")
    assert form.value()["reminder"] == {"minutes_before": 15}


def test_recursive_schema_expands_one_level_at_a_time(qtbot, make):
    form = make(CORPUS["sdk_pydantic:build_tree"])
    deep = {"label": "a", "children": [{"label": "b", "children": [{"label": "c", "children": []}]}]}
    form.set_value({"root": deep})
    assert form.value() == {"root": deep}
    # the TreeNode met again is a collapsed group: expanding it builds one more level only
    assert form.findChild(QLineEdit, "field:/root/children/0/label") is None
    toggle = form.findChild(QToolButton, "field:/root/children/0")
    qtbot.mouseClick(toggle, Qt.LeftButton)
    assert form.findChild(QLineEdit, "field:/root/children/0/label").text() == "b"
    assert form.findChild(QLineEdit, "field:/root/children/0/children/0/label") is None
    qtbot.mouseClick(form.findChild(QToolButton, "field:/root/children/0/children/0"), Qt.LeftButton)
    assert form.findChild(QLineEdit, "field:/root/children/0/children/0/label").text() == "c"
    assert form.value() == {"root": deep}


def test_live_validation_message_next_to_field(qtbot, make):
    form = make(CORPUS["demo:delete_item"])
    with qtbot.waitSignal(form.problemsChanged, timeout=2000):
        qtbot.keyClicks(field(form, "/id", QLineEdit), "Not Valid!")
    label = form.findChild(QLabel, "problem:/id")
    assert label is not None and label.isVisible()
    assert "does not match" in label.text()
    assert form.problem_count() == 1
    assert "1 problem" in form.findChild(QLabel, "formProblems").text()
    field(form, "/id", QLineEdit).clear()
    qtbot.keyClicks(field(form, "/id", QLineEdit), "old-report")
    qtbot.waitUntil(lambda: form.problem_count() == 0 and not label.isVisible(), timeout=2000)


def test_untouched_fields_show_their_problems_when_asked(qtbot, make):
    form = make(CORPUS["everything:get-sum"])
    form.refresh()
    assert form.findChild(QLabel, "problem:/a") is None  # nobody typed yet: count only
    assert form.problem_count() == 2
    assert form.reveal_problems() == 2
    assert form.findChild(QLabel, "problem:/a").text() == "required"


def test_raw_json_toggle_in_sync_both_ways(qtbot, make):
    form = make(CORPUS["demo:create_event"])
    qtbot.keyClicks(field(form, "/title", QLineEdit), "Lunch")
    qtbot.mouseClick(form.findChild(QToolButton, "jsonModeButton"), Qt.LeftButton)
    raw = form.findChild(QPlainTextEdit, "rawJson")
    assert raw.isVisible()
    assert json.loads(raw.toPlainText())["title"] == "Lunch"
    doc = json.loads(raw.toPlainText())
    doc["title"] = "Dinner"
    doc["attendees"] = [{"name": "Bo", "email": "bo@example.com"}]
    raw.setPlainText(json.dumps(doc))
    assert form.value()["title"] == "Dinner"
    raw.setPlainText('{"title": "broken",')  # invalid JSON: shown, not lost
    assert any("not valid" in m for _, m in form.errors())
    qtbot.mouseClick(form.findChild(QToolButton, "formModeButton"), Qt.LeftButton)
    assert form.is_raw_mode() and raw.toPlainText() == '{"title": "broken",'
    assert form.findChild(QLabel, "rawProblem").isVisible()
    raw.setPlainText(json.dumps(doc))
    qtbot.mouseClick(form.findChild(QToolButton, "formModeButton"), Qt.LeftButton)
    assert not form.is_raw_mode()
    assert field(form, "/title", QLineEdit).text() == "Dinner"
    assert field(form, "/attendees/0/email", QLineEdit).text() == "bo@example.com"


def test_value_that_does_not_fit_is_kept_as_json(qtbot, make):
    form = make(CORPUS["demo:echo"])
    form.set_value(["not", "an", "object"])
    assert form.value() == ["not", "an", "object"]
    assert form.is_raw_mode()
    assert form.errors()
    form.set_value({"message": "back"})
    assert not form.is_raw_mode() and form.value() == {"message": "back"}


def test_changed_signal(qtbot, make):
    form = make(CORPUS["demo:echo"])
    with qtbot.waitSignal(form.changed, timeout=1000):
        qtbot.keyClicks(field(form, "/message", QLineEdit), "x")
    with qtbot.waitSignal(form.changed, timeout=1000):
        form.set_value({"message": "y"})


def test_tab_order_follows_the_schema_and_first_field_has_focus(qtbot, make):
    form = make(CORPUS["demo:create_event"])
    qtbot.waitUntil(lambda: field(form, "/title").hasFocus(), timeout=2000)
    order = []
    w = field(form, "/title")
    for _ in range(40):
        name = w.objectName()
        if name.startswith("field:") and name not in order:
            order.append(name)
        w = w.nextInFocusChain()
    expected = ["field:/title", "field:/when", "field:/attendees", "field:/priority", "field:/all_day",
                "field:/duration_minutes", "field:/location", "field:/location/room", "field:/location/floor"]
    assert order[:len(expected)] == expected


def test_ctrl_enter_submits(qtbot, make):
    form = make(CORPUS["demo:echo"])
    form.activateWindow()
    qtbot.waitActive(form)
    field(form, "/message").setFocus()
    with qtbot.waitSignal(form.submitted, timeout=1000):  # through the window, as a real key press
        QTest.keyClick(form.windowHandle(), Qt.Key_Return, Qt.ControlModifier)


def test_defaults_and_examples(qtbot, make):
    form = make(FEATURES["annotations"])
    assert form.value() == {"title_only": "", "count": 3}
    assert field(form, "/title_only", QLineEdit).placeholderText() == "e.g. for example"
    labels = [lb.text() for lb in form.findChildren(QLabel)]
    assert "A nice title *" in labels and "Help text" in labels


def test_string_widgets(qtbot, make):
    form = make(FEATURES["strings"])
    assert isinstance(field(form, "/long"), QPlainTextEdit)
    assert isinstance(field(form, "/notes"), QPlainTextEdit)
    assert field(form, "/secret", QLineEdit).echoMode() == QLineEdit.Password
    assert field(form, "/pin", QLineEdit).echoMode() == QLineEdit.Password
    assert field(form, "/day", QLineEdit).placeholderText() == "YYYY-MM-DD"
    assert isinstance(field(form, "/hinted"), QPlainTextEdit)  # x-hint wins over type
    qtbot.keyClicks(field(form, "/long"), "line 1")
    qtbot.keyClick(field(form, "/long"), Qt.Key_Return)
    qtbot.keyClicks(field(form, "/long"), "line 2")
    assert form.value()["long"] == "line 1\nline 2"
    form.set_value({"short": "ab", "mail": "a@b.c", "v4": "10.0.0.1", "id": "0b9f5f0a-5a52-4f5b-9a39-4c7f3c2e1d00"})
    assert form.errors() == []
    form.set_value({"short": "ab", "mail": "nope", "v4": "999.1.1.1"})
    assert form.errors() == []  # formats are annotations: warnings next to the fields, not errors
    assert form.reveal_problems() == 0 and form.problems_label.text() == "No problems · 2 warnings"


def test_a_value_off_its_format_is_a_warning_and_the_call_stays_a_call(qtbot, make):
    """A pydantic `UUID | None` field holding any string is valid JSON Schema: a word, not "Call anyway"."""
    form = make({"type": "object", "properties": {
        "id": {"anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}], "default": None},
        "when": {"type": "string", "format": "date-time"}}, "required": ["when"]})
    form.set_value({"id": "order-17", "when": "tomorrow"})
    assert form.errors() == [] and form.reveal_problems() == 0
    assert form.problems_label.text() == "No problems · 2 warnings"
    label = form.findChild(QLabel, "problem:/when")
    assert label is not None and label.isVisibleTo(form) and label.text().startswith("warning: ")
    assert "b7791f" in label.styleSheet()  # amber, not the red of a problem
    form.set_value({"when": "2030-01-31T09:30:00Z"})
    assert form.reveal_problems() == 0 and form.problems_label.text() == "No problems"


def test_draft07_dialect_and_definitions(qtbot, make):
    form = make(FEATURES["tuple_draft7"])
    form.set_value({"point": [1.5, 2, "label"]})
    assert form.value() == {"point": [1.5, 2, "label"]}
    assert form.errors() == []


def test_if_then_else_is_validated(qtbot, make):
    form = make(FEATURES["choices"])
    form.set_value({"cond": {"country": "US", "zip": "abc"}})
    assert [p for p, _ in form.errors()] == ["/cond/zip"]
    form.set_value({"cond": {"country": "NL", "zip": "abc"}})
    assert form.errors() == []


def test_registry_can_be_overridden_per_tool(qtbot):
    from inspector.forms import Registry, SchemaForm
    from inspector.forms.widgets import RawField

    reg = Registry()
    reg.widgets["email"] = RawField
    form = SchemaForm(FEATURES["strings"], registry=reg)
    qtbot.addWidget(form)
    assert isinstance(field(form, "/mail"), QPlainTextEdit)
    form.set_value({"short": "ab", "mail": "x@y.z"})
    assert form.value() == {"short": "ab", "mail": "x@y.z"}


def test_registry_overrides_a_field_a_widget_and_templates_for_one_tool(qtbot):
    """Fields ask their registry for children, widgets and frames: replacing an entry reaches
    every place of that form, and no other form."""
    from inspector.forms import Registry, SchemaForm
    from inspector.forms.arrays import ArrayField
    from inspector.forms.templates import GroupFrame, Row
    from inspector.forms.widgets import RawField

    class TagArray(ArrayField):
        pass

    class ShoutingRow(Row):
        def __init__(self, field, label, help_text="", **kw):
            super().__init__(field, label.upper(), help_text, **kw)

    class FlatFrame(GroupFrame):
        def __init__(self, group, header):
            super().__init__(group, header)
            self.body.setObjectName("flatBody")
            self.body.setStyleSheet("")

    default = Registry()
    reg = default.copy()
    reg.fields["array"] = TagArray
    reg.widgets["integer"] = RawField
    reg.templates["row"] = ShoutingRow
    reg.templates["group"] = FlatFrame
    assert default.fields["array"] is ArrayField and default.templates["row"] is Row  # the original is untouched
    form = SchemaForm(FEATURES["nested"], registry=reg)
    qtbot.addWidget(form)
    value = {"options": {"units": "metric"}, "tags": ["a"], "people": [{"name": "Ada", "age": 36}],
             "matrix": [[1.5]], "pair": ["x", 2]}
    form.set_value(value)
    assert form.value() == value
    assert {f.ptr for f in form.findChildren(TagArray)} == {"/tags", "/people", "/matrix", "/matrix/0"}
    assert [type(f) for f in form.findChildren(ArrayField) if f.ptr == "/pair"] == [ArrayField]  # a tuple: its own kind
    assert isinstance(field(form, "/people/0/age"), QPlainTextEdit)  # the integer widget, also inside an array
    assert isinstance(field(form, "/pair/1"), QPlainTextEdit)
    assert "UNITS *" in [w.text() for w in form.findChildren(QLabel)]
    assert form.findChildren(QFrame, "flatBody") and not form.findChildren(QFrame, "groupBody")

    plain = SchemaForm(FEATURES["nested"])
    qtbot.addWidget(plain)
    assert not plain.findChildren(TagArray) and plain.findChildren(QFrame, "groupBody")
    assert "units *" in [w.text() for w in plain.findChildren(QLabel)]


def test_value_that_does_not_fit_a_field_is_raw_there_until_one_fits(qtbot, make):
    form = make(CORPUS["demo:create_event"])
    form.set_value({"title": 5, "when": "x", "reminder": "soon"})
    assert form.value() == {"title": 5, "when": "x", "reminder": "soon"}
    assert form.fallback_pointers() == ["/reminder", "/title"]
    assert isinstance(field(form, "/title"), QPlainTextEdit)
    form.set_value({"title": "ok", "when": "x", "reminder": {"email": "a@b.c"}})
    assert form.fallback_pointers() == []
    assert isinstance(field(form, "/title"), QLineEdit) and field(form, "/title").text() == "ok"
    assert form.value()["reminder"] == {"email": "a@b.c"}


def test_map_keys_survive_exactly(qtbot):
    """A key QLineEdit would normalise (U+FEFF) comes back as it was given."""
    from inspector.forms import SchemaForm

    form = SchemaForm({"type": "object", "properties": {"labels": {"type": "object",
                                                                   "additionalProperties": {"type": "string"}}}})
    qtbot.addWidget(form)
    value = {"labels": {"\ufeff": "", "a\u200bb": "x"}}
    form.set_value(value)
    assert form.value() == value
