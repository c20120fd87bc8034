"""A big value judged a slice at a time gives the whole validator's answer, and is sliced where it can be."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest

from inspector.forms.big_check import SPLIT_MIN, valid_in_steps

ROW = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
       "required": ["id"]}
PLAIN = {"type": "object", "properties": {"rows": {"type": "array", "items": ROW, "maxItems": 50_000},
                                          "total": {"type": "integer"}}, "required": ["rows", "total"]}
NESTED = {"type": "object", "properties": {"page": {"type": "object", "properties": {
    "rows": {"type": "array", "items": {"$ref": "#/$defs/row"}, "minItems": 1}}}}, "$defs": {"row": ROW},
    "additionalProperties": False}


def rows(n: int, bad_at: int | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"id": i, "name": f"r{i}"} for i in range(n)]
    if bad_at is not None:
        out[bad_at] = {"id": "not a number"}
    return out


N = SPLIT_MIN * 3 + 7
CASES = [
    ("plain, valid", PLAIN, {"rows": rows(N), "total": N}, 4),
    ("a bad row at the end", PLAIN, {"rows": rows(N, bad_at=N - 1), "total": N}, 4),
    ("a bad row first", PLAIN, {"rows": rows(N, bad_at=0), "total": N}, 1),
    ("the rest is wrong", PLAIN, {"rows": rows(N), "total": "many"}, 0),
    ("required missing", PLAIN, {"rows": rows(N)}, 0),
    ("too many rows", PLAIN, {"rows": rows(50_001), "total": 1}, 0),
    ("rows not an array", PLAIN, {"rows": {"a": 1}, "total": 1}, 1),
    ("nested with a $ref", NESTED, {"page": {"rows": rows(N)}}, 4),
    ("nested, a bad row", NESTED, {"page": {"rows": rows(N, bad_at=SPLIT_MIN * 2)}}, 3),
    ("nested, an extra key", NESTED, {"page": {"rows": rows(N)}, "extra": 1}, 0),
    ("an identifier: whole", {**PLAIN, "$id": "https://example.com/s"}, {"rows": rows(N), "total": N}, 1),
    ("allOf: whole", {**PLAIN, "allOf": [{"required": ["total"]}]}, {"rows": rows(N), "total": N}, 1),
    ("unique items: whole", {"type": "object", "properties": {"rows": {"type": "array", "uniqueItems": True}}},
     {"rows": [1] * N}, 1),
    ("a short array: whole", PLAIN, {"rows": rows(10), "total": 10}, 1),
    ("not an object", PLAIN, [1, 2, 3], 1),
]


@pytest.mark.parametrize(("case", "schema", "value", "steps"), CASES, ids=[c[0] for c in CASES])
def test_the_answer_is_the_whole_validators(case, schema, value, steps):
    walk = valid_in_steps(schema, value, chunk=SPLIT_MIN)
    taken = 0
    while True:
        try:
            next(walk)
        except StopIteration as done:
            answer = done.value
            break
        taken += 1
    assert answer == jsonschema_rs.validator_for(schema).is_valid(value)
    assert taken == steps  # sliced where the schema allows it; judged whole (one step) where not
