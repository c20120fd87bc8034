"""The form contract, as properties: for every instance x valid against a schema,
set_value(x) then value() == x exactly (true is not 1, 1 is not 1.0, big ints exact), with no
errors, and no part of the form swapped for raw JSON to hold it.

Instances come from hypothesis-jsonschema over the corpus of real tool schemas
(tests/forms/corpus/) and the hand-written feature schemas."""

from __future__ import annotations

import json

import hjs_compat
import pytest
from corpus_tools import corpus, for_generation
from feature_schemas import FEATURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from PySide6.QtCore import QCoreApplication, QEvent

from inspector.forms.validation import Checker

hjs_compat.install()

FORMATS = {"duration": st.sampled_from(["P1D", "PT2H", "P1Y2M3DT4H5M6S", "PT0.5S"])}
SETTINGS = settings(max_examples=int(__import__("os").environ.get("FORMS_EXAMPLES", "25")), deadline=None,
                    database=None, suppress_health_check=list(HealthCheck))

CASES = corpus(unique=True) + sorted(FEATURES.items())


def flush_deletes() -> None:
    """Delete the widgets the form let go of (deleteLater needs an event loop; tests have none)."""
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)


def exact(a, b) -> bool:
    """Equal as JSON, with types: True != 1, 1 != 1.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(exact(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(exact(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def check_round_trip(form, checker, x):
    if checker.errors(x):  # hypothesis-jsonschema approximates a few keywords and formats
        return
    form.set_value(x)
    got = form.value()
    assert exact(got, x), f"set_value then value differs:\n  in:  {json.dumps(x)[:500]}\n  out: {json.dumps(got)[:500]}"
    assert form.errors() == [], form.errors()
    assert form.fallback_pointers() == [], form.fallback_pointers()
    flush_deletes()


@pytest.mark.parametrize("name,schema", CASES, ids=[c[0] for c in CASES])
def test_round_trip(qtbot, name, schema):
    from inspector.forms import SchemaForm

    form = SchemaForm(schema)
    qtbot.addWidget(form)
    checker = Checker(schema)

    @SETTINGS
    @given(from_schema(for_generation(schema), custom_formats=FORMATS))
    def prop(x):
        check_round_trip(form, checker, x)

    prop()


OPEN = [c for c in CASES if c[0] in ("demo:create_event", "sdk_pydantic:register_person", "memory:create_entities",
                                     "nested", "choices")]


@pytest.mark.parametrize("name,schema", OPEN, ids=[c[0] for c in OPEN])
def test_round_trip_with_undeclared_keys(qtbot, name, schema):
    """Keys a schema does not declare (allowed when additionalProperties is absent) survive too,
    in the "other properties" JSON editor of their object."""
    from inspector.forms import SchemaForm

    form = SchemaForm(schema)
    qtbot.addWidget(form)
    checker = Checker(schema)

    @settings(SETTINGS, max_examples=10)
    @given(from_schema(for_generation(schema, closed=False), custom_formats=FORMATS))
    def prop(x):
        if checker.errors(x):
            return
        form.set_value(x)
        assert exact(form.value(), x)
        assert form.errors() == []
        flush_deletes()

    prop()


@pytest.mark.parametrize("value", [2 ** 53 + 1, -(2 ** 63) - 7, 10 ** 30, 0.1, 1.0, -0.0, 1e300, 5e-324, 3])
def test_numbers_survive_exactly(qtbot, value):
    from inspector.forms import SchemaForm

    form = SchemaForm({"type": "object", "properties": {"n": {"type": "number"}, "l": {"type": "array",
                                                                                      "items": {"type": "number"}}}})
    qtbot.addWidget(form)
    form.set_value({"n": value, "l": [value, value]})
    assert exact(form.value(), {"n": value, "l": [value, value]})


def test_true_is_not_one(qtbot):
    from inspector.forms import SchemaForm

    form = SchemaForm({"type": "object", "properties": {"e": {"enum": [1, True, 1.0, "1"]}}})
    qtbot.addWidget(form)
    for v in (1, True, 1.0, "1"):
        form.set_value({"e": v})
        assert exact(form.value(), {"e": v})
