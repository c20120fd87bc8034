"""The stub file of `spyglass mock --stubs`, pure: how a stub matches, how its templates fill, and every
problem of a file named at its line and column."""

from __future__ import annotations

import asyncio

import pytest

from inspector.collection.load import CollectionError
from inspector.mock.stubs import MISSING, contains, fill, load_stubs, resolve


def test_contains_is_a_substring_a_subset_or_an_item():
    assert contains("hello world", "lo w") and not contains("hello", "bye")
    assert contains({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": 2}}) and not contains({"a": 1}, {"a": 2})
    assert contains([1, {"x": "yes"}], {"x": "yes"}) and contains(["ab"], "b") and not contains([1], 2)
    assert not contains(5, 5)  # a number has nothing inside: equals is for that


def test_templates_take_the_request_values():
    params = {"uri": "a/b", "arguments": {"n": 3, "list": [1, 2], "k~/": "odd"}}
    assert fill({"n": "${/arguments/n}", "t": "n=${/arguments/n} ${/arguments/list}"}, params) == {
        "n": 3, "t": "n=3 [1, 2]"}
    assert fill(["${/arguments/k~0~1}", "${/nowhere}", "x ${/nowhere}"], params) == ["odd", "${/nowhere}",
                                                                                     "x ${/nowhere}"]
    assert resolve(params, "/arguments/list/5") is MISSING and resolve(params, "") is params


def load(tmp_path, text: str):
    path = tmp_path / "stubs.yaml"
    path.write_text(text)
    return load_stubs(path)


def test_a_stub_matches_by_method_and_pointers_and_answers_after_its_delay(tmp_path):
    [read, call] = load(tmp_path, "stubs:\n  - uri: x://a\n    method: resources/subscribe\n    result: {}\n"
                                  "  - method: tools/call\n"
                                  "    when: {/name: {equals: t}, /arguments/q: {contains: b}}\n"
                                  "    result: {content: [{type: text, text: '${/arguments/q}'}]}\n    delay: 0.001\n")
    assert read.method == "resources/subscribe" and read.matches("resources/subscribe", {"uri": "x://a"})
    assert not read.matches("resources/read", {"uri": "x://a"}) and not read.matches("resources/subscribe", {})
    assert call.matches("tools/call", {"name": "t", "arguments": {"q": "abc"}})
    assert not call.matches("tools/call", {"name": "t", "arguments": {"q": "xyz"}})
    assert not call.matches("tools/call", {"name": "u", "arguments": {"q": "abc"}})
    result, error = asyncio.run(call.answer({"name": "t", "arguments": {"q": "abc"}}))
    assert error is None and result["content"][0]["text"] == "abc"


@pytest.mark.parametrize("text,problems", [
    ("- a\n", ["1:1: a stub file is a mapping with a list of stubs"]),
    ("stubs: [1]\nextra: 2\n", ["2:1: unknown key 'extra' in the stub file", "1:9: stub 1 is not a mapping"]),
    ("stubs:\n  - method: 5\n    result: {}\n", ["2:13: method is a string"]),
    ("stubs:\n  - tool: [x]\n    result: {}\n", ["2:11: tool is a string"]),
    ("stubs:\n  - prompt: p\n    method: tools/call\n    result: {}\n",
     ["2:5: prompt goes with prompts/get, not tools/call"]),
    ("stubs:\n  - when: {/a: 1}\n    result: {}\n", ["2:5: stub 1 names no request"]),
    ("stubs:\n  - method: m\n    when: [1]\n    result: {}\n", ["3:11: when maps JSON pointers"]),
    ("stubs:\n  - method: m\n    when: {/a: {equals: 1, contains: 2}}\n    result: {}\n", ["3:16: one test a pointer"]),
    ("stubs:\n  - method: m\n    error: {code: x}\n", ["3:12: error is {code: INTEGER, message: TEXT}"]),
    ("stubs:\n  - method: m\n    result: {}\n    error: {code: 1, message: m}\n", ["2:5: stub 1 needs one answer"]),
    ("stubs:\n  - method: m\n    result: {}\n    delay: -1\n", ["4:12: delay is a number of seconds"]),
])
def test_every_problem_of_a_stub_file_is_named_at_its_place(tmp_path, text, problems):
    with pytest.raises(CollectionError) as caught:
        load(tmp_path, text)
    said = [str(p).split("stubs.yaml:", 1)[1] for p in caught.value.problems]
    for problem in problems:
        assert any(s.startswith(problem) for s in said), (problem, said)


def test_a_stub_file_that_cannot_be_read(tmp_path):
    with pytest.raises(CollectionError, match="no such file"):
        load_stubs(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(CollectionError, match="cannot be read"):
        load_stubs(bad)
