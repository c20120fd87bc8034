"""Bad schemas never crash or hang the form: it builds within 200 ms, or falls back to raw JSON
with a banner that explains why."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QToolButton
from support import SLOWDOWN

BUDGET_S = 0.200


def flush_deletes() -> None:
    """Delete the widgets the form let go of (deleteLater needs an event loop; tests have none)."""
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)


def nested(levels: int) -> dict:
    s = {"type": "string"}
    for _ in range(levels):
        s = {"type": "object", "properties": {"a": s}}
    return s


def nested_value(levels: int):
    v = "leaf"
    for _ in range(levels):
        v = {"a": v}
    return v


CASES = {
    # name: (schema, whole form falls back, pointers rendered as raw JSON)
    "list": ([1, 2], True, [""]),
    "string": ("object", True, [""]),
    "null": (None, True, [""]),
    "false": (False, True, [""]),
    "unknown_type_root": ({"type": "strange"}, True, [""]),
    "unknown_type": ({"type": "object", "properties": {"x": {"type": "strange"}, "y": {"type": "string"}}},
                     False, ["/x"]),
    "broken_ref": ({"type": "object", "properties": {"x": {"$ref": "#/$defs/nope"}}}, False, ["/x"]),
    "remote_ref": ({"type": "object", "properties": {"x": {"$ref": "https://example.com/s.json"}}}, False, ["/x"]),
    "cyclic_ref": ({"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                    "properties": {"x": {"$ref": "#/$defs/a"}}}, False, ["/x"]),
    "self_ref_root": ({"$ref": "#"}, True, [""]),
    "required_self": ({"$defs": {"A": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
                                       "required": ["a"]}}, "$ref": "#/$defs/A"}, False, []),
    "5000_properties": ({"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(5000)}},
                        True, [""]),
    "5000_nested": ({"type": "object", "properties": {"o": {"type": "object", "properties": {
        f"p{i}": {"type": "integer"} for i in range(5000)}}, "s": {"type": "string"}}}, False, ["/o"]),
    "200_levels": (nested(200), False, []),
    "1MB_enum": ({"type": "object", "properties": {"e": {"enum": [f"value-{i:07d}-{'x' * 20}" for i in range(30000)]}}},
                 False, []),
    "1MB_enum_objects": ({"type": "object", "properties": {"e": {"enum": [{"k": i, "pad": "x" * 30}
                                                                          for i in range(20000)]}}}, False, ["/e"]),
    "bad_properties": ({"type": "object", "properties": [1, 2]}, True, [""]),
    "bad_pattern": ({"type": "object", "patternProperties": {"[": {"type": "string"}}}, True, [""]),
    "allOf_conflict": ({"allOf": [{"type": "string"}, {"type": "integer"}]}, True, [""]),
    "type_not_string": ({"type": "object", "properties": {"x": {"type": 5}}}, False, ["/x"]),
    "enum_not_list": ({"type": "object", "properties": {"x": {"enum": "abc"}}}, False, ["/x"]),
    "items_garbage": ({"type": "object", "properties": {"x": {"type": "array", "items": 5}}}, False, []),
    "huge_anyOf": ({"type": "object", "properties": {"x": {"anyOf": [{"type": "object", "properties": {
        f"k{i}": {"const": i}}} for i in range(3000)]}}}, False, []),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_schema_builds_fast_or_falls_back(qtbot, name):
    from inspector.forms import SchemaForm

    schema, whole, pointers = CASES[name]
    best = None
    for _ in range(2):  # best of two: a shared CI machine may pause once
        start = time.perf_counter()
        form = SchemaForm(schema)
        took = time.perf_counter() - start
        qtbot.addWidget(form)
        best = took if best is None else min(best, took)
    assert best < BUDGET_S * SLOWDOWN, f"built in {best * 1000:.0f} ms"
    banner = form.findChild(QLabel, "formBanner")
    assert form.fallback_pointers() == pointers
    if whole:
        assert form.fallback_reason() and not banner.isHidden() and len(banner.text()) > 20
        assert isinstance(form.findChild(QPlainTextEdit, "field:"), QPlainTextEdit)
    elif name == "remote_ref":  # said at once: the reference is not followed, so the form cannot check it
        assert not banner.isHidden() and "https://example.com/s.json" in banner.text(), banner.text()
    else:
        assert banner.isHidden()
    for p in pointers:
        if p:
            notes = [lb.text() for lb in form.findChildren(QLabel, "fallbackNote")]
            assert notes and all(n.startswith("Edited as JSON: ") for n in notes)
    start = time.perf_counter()
    form.errors()  # never raises
    assert time.perf_counter() - start < 2.0 * SLOWDOWN
    form.show()
    form.refresh()


def test_deep_nesting_round_trips_and_expands(qtbot):
    from inspector.forms import SchemaForm

    form = SchemaForm(nested(200))
    qtbot.addWidget(form)
    value = nested_value(200)
    form.set_value(value)
    assert form.value() == value
    assert form.errors() == []
    # expand a few collapsed levels: one level at a time, value unchanged
    ptr = "/a" * 4  # built to depth 3; each expansion builds three more levels
    for _ in range(3):
        toggle = form.findChild(QToolButton, "field:" + ptr)
        assert toggle is not None, ptr
        assert form.findChild(QToolButton, "field:" + ptr + "/a") is None
        toggle.click()
        ptr += "/a" * 4
    assert form.value() == value


def test_huge_enum_gets_completion_and_validates(qtbot):
    from PySide6.QtWidgets import QLineEdit

    from inspector.forms import SchemaForm

    values = [f"value-{i:07d}" for i in range(30000)]
    form = SchemaForm({"type": "object", "properties": {"e": {"enum": values}}})
    qtbot.addWidget(form)
    edit = form.findChild(QLineEdit, "field:/e")
    assert edit.completer() is not None
    qtbot.keyClicks(edit, "value-0012345")
    assert form.value() == {"e": "value-0012345"} and form.errors() == []
    edit.setText("nope")
    edit.textEdited.emit("nope")
    (pointer, message), = form.errors()
    assert pointer == "/e" and len(message) <= 1000  # jsonschema quotes the whole enum: clipped


def test_set_value_with_garbage_never_raises(qtbot):
    from corpus_tools import corpus

    from inspector.forms import SchemaForm

    garbage = [None, 1, "x", [], [1, {"a": None}], {"message": 5}, {"a": {"b": []}},
               {"person": "nope", "pet": [1], "root": {"children": 5}}, {"": {"": {"": None}}}]
    for name, schema in corpus(unique=True)[:40]:
        form = SchemaForm(schema)
        qtbot.addWidget(form)
        for g in garbage:
            form.set_value(g)
            assert form.value() == g, (name, g)
            form.errors()
        flush_deletes()
