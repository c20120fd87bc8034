"""The collection reader's rules and the expectations' verdicts, one by one, without a server: each bad
value is refused with its place and reason, each expectation fails when its answer does not meet it."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.collection.expect import judge, schema_problem, snapshot_misses, text_of
from inspector.collection.load import CollectionError, load, parse

STEP = "steps:\n  - name: s\n    call: echo\n"
BAD = [
    ("name: x\nprotocol: sideways\n" + STEP, "protocol must be"),
    ("timeout: -1\n" + STEP, "timeout is a number of seconds"),
    ("server: 5\n" + STEP, "server is a mapping"),
    ("server: {command: [a], url: 'http://x'}\n" + STEP, "exactly one of command"),
    ("server: {command: {}}\n" + STEP, "command is a list"),
    ("server: {url: ftp://x}\n" + STEP, "url must start with"),
    ("server: {command: [a], env: [1]}\n" + STEP, "env is a mapping"),
    ("server: {command: [a], transport: pigeon}\n" + STEP, "transport is stdio"),
    ("server: {command: [a], colour: red}\n" + STEP, "unknown key 'colour' in server"),
    ("steps: []\n", "needs a list of steps"),
    ("- just a list\n", "a collection is a mapping"),
    ("steps:\n  - 5\n", "is not a mapping"),
    ("steps:\n  - {name: s, list: everything}\n", "list is one of"),
    ("steps:\n  - {name: s, call: ''}\n", "call names a tool"),
    ("steps:\n  - {name: s, call: echo, arguments: [1]}\n", "arguments is a mapping"),
    ("steps:\n  - {name: s, prompt: p, arguments: {n: 1}}\n", "prompt arguments are text"),
    ("steps:\n  - {name: s, call: echo, expect: 5}\n", "expect is a mapping"),
    ("steps:\n  - {name: s, call: echo, save: [x]}\n", "save is a mapping"),
    ("steps:\n  - {name: s, call: echo, save: {'1x': /a}}\n", "a saved name is letters"),
    ("steps:\n  - {name: s, call: echo, elicit: {accept: 5}}\n", "accept is the content"),
    ("steps:\n  - {name: s, call: echo, elicit: {maybe: true}}\n", "elicit is one of"),
    ("steps:\n  - {name: s, call: echo, sampling: {text: hi}}\n", "sampling is {reply"),
    ("steps:\n  - {name: s, call: echo, timeout: fast}\n", "timeout is a number"),
    ("steps:\n  - {name: s, call: echo, expect: {isError: maybe}}\n", "isError is true or false"),
    ("steps:\n  - {name: s, call: echo, expect: {text: 5}}\n", "text is a text or a mapping"),
    ("steps:\n  - {name: s, call: echo, expect: {text: {contains: 5}}}\n", "contains takes a text"),
    ("steps:\n  - {name: s, call: echo, expect: {text: {has: x}}}\n", "unknown key 'has' in text"),
    ("steps:\n  - {name: s, call: echo, expect: {structured: {shape: 1}}}\n", "structured is {schema"),
    ("steps:\n  - {name: s, call: echo, expect: {structured: {schema: 5}}}\n", "schema is a JSON Schema"),
    ("steps:\n  - {name: s, call: echo, expect: {content: 3}}\n", "content is {count"),
    ("steps:\n  - {name: s, call: echo, expect: {content: {count: x}}}\n", "count is a whole number"),
    ("steps:\n  - {name: s, call: echo, expect: {content: {types: text}}}\n", "types is a list"),
    ("steps:\n  - {name: s, call: echo, expect: {maxMs: 0}}\n", "maxMs is a number"),
    ("steps:\n  - {name: s, call: echo, expect: {error: 5}}\n", "error is {code"),
    ("steps:\n  - {name: s, call: echo, expect: {error: {code: x}}}\n", "code is a JSON-RPC error code"),
    ("steps:\n  - {name: s, call: echo, expect: {error: {code: 1}, isError: true}}\n", "either a JSON-RPC error"),
    ("steps:\n  - {name: s, call: echo, expect: {messages: {count: 1}}}\n", "messages is for prompt steps"),
    ("steps:\n  - {name: s, prompt: p, expect: {messages: 2}}\n", "messages is {count"),
    ("steps:\n  - {name: s, call: echo, expect: {listed: {}}}\n", "listed is for list steps"),
    ("steps:\n  - {name: s, list: tools, expect: {listed: 5}}\n", "listed is {present"),
    ("steps:\n  - {name: s, list: tools, expect: {listed: {present: x}}}\n", "present is a list of names"),
    ("steps:\n  - {name: s, list: tools, expect: {listed: {count: x}}}\n", "count is a whole number"),
    ("steps:\n  - {name: s, call: echo, expect: {snapshot: yes please}}\n", "snapshot is true or false"),
]


@pytest.mark.parametrize("text,words", BAD, ids=[w for _, w in BAD])
def test_each_rule_is_said_with_its_place(text, words, tmp_path):
    with pytest.raises(CollectionError) as caught:
        parse(text, tmp_path / "c.yaml")
    assert any(words in p.message for p in caught.value.problems), caught.value.problems
    assert all(p.line >= 1 and p.column >= 1 for p in caught.value.problems)


def test_files_that_cannot_be_read(tmp_path):
    with pytest.raises(CollectionError, match="no such file"):
        load(tmp_path / "absent.yaml")
    (tmp_path / "binary.yaml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(CollectionError, match="cannot be read"):
        load(tmp_path / "binary.yaml")


def test_a_good_collection_keeps_its_document_only_for_writing_back(tmp_path):
    text = "# a comment\nname: c\ntimeout: 5\nsteps:\n  - {name: s, list: true}\n  - {name: t, read: 'x://y'}\n"
    fast = parse(text, Path(tmp_path / "c.yaml"))
    assert fast.document is None and fast.timeout == 5.0 and fast.steps[0].target == "tools"
    assert [s.method for s in fast.steps] == ["tools/list", "resources/read"]
    kept = parse(text, Path(tmp_path / "c.yaml"), round_trip=True)
    assert kept.document is not None and fast.snapshot_path.name == "c.snapshots.json"


def test_each_expectation_fails_when_its_answer_does_not_meet_it():
    result = {"content": [{"type": "text", "text": "hello"}, {"type": "image", "data": "", "mimeType": "x"}],
              "structuredContent": {"n": 1}, "isError": False}
    def misses(expect, **kw):
        return [m.what for m in judge("tools/call", expect, kw.get("result", result), kw.get("error"),
                                      kw.get("ms", 1.0), kw.get("listed"))]

    assert misses({"text": {"equals": "bye", "matches": "^x", "not_contains": "ell"}}) == [
        "text equals", "text does not contain", "text matches"]
    assert misses({"text": "hello"}) == []
    assert misses({"structured": {"equals": {"n": 2}}}) == ["structured equals"]
    assert misses({"content": {"count": 1, "types": ["text"]}}) == ["content count", "content types"]
    assert misses({"maxMs": 5}, ms=10) == ["maxMs"]
    assert misses({"isError": True}) == ["isError"]
    assert misses({"error": {"code": -1}}) == ["an error"]
    assert misses({}, error={"code": -32602, "message": "x"}) == ["an answer"]
    assert misses({"error": {"code": -1, "message": {"contains": "nope"}}}, error={"code": -2, "message": "x"}) == [
        "error code", "error message contains"]
    assert misses({"listed": {"present": ["a"], "absent": ["b"], "count": 3}}, listed=["b"]) == [
        "listed present", "listed absent", "listed count"]
    assert [m.what for m in judge("prompts/get", {"messages": {"count": 2}},
                                  {"messages": [{"role": "user", "content": {"type": "text", "text": "q"}}]}, None,
                                  1.0)] == ["messages count"]
    assert text_of("prompts/get", {"messages": [{"content": [{"type": "text", "text": "a"}]},
                                                {"content": {"type": "text", "text": "b"}}]}) == "a\nb"
    assert text_of("resources/read", {"contents": [{"uri": "u", "text": "t"}, {"uri": "v", "blob": ""}]}) == "t"
    assert text_of("tools/call", "not a result") == ""
    assert schema_problem({"type": "object", "required": ["n"]}, {}) is not None
    assert "cannot be used" in schema_problem({"type": 12}, {})
    assert snapshot_misses({"a": 1, "_meta": {"x": 1}}, {"a": 1, "_meta": {"x": 2}}) == []
    drift = snapshot_misses({"a": [1, 2, 3, 4, 5, 6, 7]}, {"a": [9, 9, 9, 9, 9, 9, 9]})
    assert "(+2 more)" in drift[0].line()
