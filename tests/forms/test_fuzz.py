"""Any schema, any value: the form never raises, and whatever it is given it gives back.

Schemas are random trees of JSON Schema keywords (valid or not); values are random JSON.
Parts of a value the form cannot show in its widgets go to raw JSON editors, never lost."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QCoreApplication, QEvent

KEYS = st.sampled_from(["a", "b", "kind", "", "x/y", "~0"])
TYPES = st.sampled_from(["object", "array", "string", "number", "integer", "boolean", "null", "strange"])
SCALARS = (st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8))
JSON = st.recursive(SCALARS, lambda c: st.lists(c, max_size=4) | st.dictionaries(KEYS, c, max_size=4), max_leaves=12)


def flush_deletes() -> None:
    """Delete the widgets the form let go of (deleteLater needs an event loop; tests have none)."""
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)


def schemas():
    leaf = st.one_of(
        st.fixed_dictionaries({"type": TYPES | st.lists(TYPES, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"enum": st.lists(SCALARS, min_size=1, max_size=4)}),
        st.fixed_dictionaries({"const": SCALARS}),
        st.fixed_dictionaries({"type": st.just("string")}, optional={
            "format": st.sampled_from(["date", "date-time", "email", "uuid", "uri", "bogus"]),
            "maxLength": st.integers(0, 1000), "x-hint": st.sampled_from(["textarea", "password", "raw", "?"])}),
        st.fixed_dictionaries({"$ref": st.sampled_from(["#", "#/$defs/n", "#/$defs/missing", "#/properties/a",
                                                        "http://x/y"])}),
        st.booleans(),
        st.just({}),
    )

    def extend(children):
        return st.one_of(
            st.fixed_dictionaries({"type": st.just("object"),
                                   "properties": st.dictionaries(KEYS, children, max_size=3)},
                                  optional={"required": st.lists(KEYS, max_size=3),
                                            "additionalProperties": st.booleans() | children,
                                            "patternProperties": st.dictionaries(st.sampled_from(["^a", "b$"]),
                                                                                 children, max_size=2)}),
            st.fixed_dictionaries({"type": st.just("array")}, optional={
                "items": children | st.lists(children, max_size=2), "prefixItems": st.lists(children, max_size=2),
                "uniqueItems": st.booleans(), "maxItems": st.integers(0, 3)}),
            st.fixed_dictionaries({"oneOf": st.lists(children, min_size=1, max_size=3)}),
            st.fixed_dictionaries({"anyOf": st.lists(children, min_size=1, max_size=3)}),
            st.fixed_dictionaries({"allOf": st.lists(children, min_size=1, max_size=3)}),
            st.fixed_dictionaries({"anyOf": st.tuples(children, st.just({"type": "null"})).map(list)}),
        )

    tree = st.recursive(leaf, extend, max_leaves=10)
    return st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(KEYS, tree, max_size=4)},
                                  optional={"$defs": st.fixed_dictionaries({"n": tree}),
                                            "required": st.lists(KEYS, max_size=2)})


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(schemas(), st.lists(JSON, min_size=1, max_size=3))
def test_any_schema_any_value(qtbot, schema, values):
    from inspector.forms import SchemaForm

    form = SchemaForm(schema)
    qtbot.addWidget(form)
    form.value()
    form.errors()
    form.fallback_pointers()
    for v in values:
        form.set_value(v)
        got = form.value()
        assert json.dumps(got, sort_keys=True) == json.dumps(v, sort_keys=True), (schema, v, got)
        form.errors()
    form.refresh()
    form.set_raw_mode(True)
    form.set_raw_mode(False)
    flush_deletes()
