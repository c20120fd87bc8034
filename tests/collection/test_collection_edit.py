"""Editing a collection file the way the window does (`inspector.collection.edit`), without Qt or a
server: what a person wrote by hand survives an edit byte for byte, a bad edit is refused with its
place in the text being edited, and the file is only ever written whole and when nobody else changed it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.test import spec_of_collection
from inspector.collection import edit
from inspector.collection.edit import StaleCollection
from inspector.collection.load import CollectionError, Step, load
from inspector.collection.run import StepAnswers
from inspector.config import ServerSpec
from inspector.errors import UsageError

HAND_WRITTEN = """\
# Seed tools, written by hand
name: "seed tools"
protocol: auto
server: {command: [python, server.py], env: {}}
timeout: 10
steps:
  - name: weather in Paris
    call: get_weather
    arguments: {location: 'Paris, France', units: "metric", days: 3}  # the usual city
    expect:
      isError: false  # must not fail
      text: {contains: "Paris"}
  # the listing comes last
  - list: tools
    name: 'tools'
"""

EDITED = """\
# Seed tools, written by hand
name: "seed tools"
protocol: auto
server: {command: [python, server.py], env: {}}
timeout: 10
steps:
  - name: weather in Paris
    call: get_weather
    arguments: {location: 'Lyon, France', units: "metric", lang: fr}  # the usual city
    expect:
      isError: false  # must not fail
      text: {contains: "Lyon"}
      maxMs: 2000
  # the listing comes last
  - list: tools
    name: 'tools'
  - name: weather in Paris (2)
    call: get_weather
    arguments: {location: Nice}
    expect:
      isError: false
"""


def write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems(caught: pytest.ExceptionInfo[CollectionError]) -> list[tuple[int, int, str]]:
    return [(p.line, p.column, p.message) for p in caught.value.problems]


# --- round trip ---------------------------------------------------------------------------------------


def test_an_edited_file_keeps_every_untouched_line_its_comments_and_quotes(tmp_path: Path) -> None:
    """The point of the round trip: a person's file comes back as they wrote it, only the edit differs."""
    path = write(tmp_path, HAND_WRITTEN)
    e = edit.open_editable(path)
    assert e.step_names() == ["weather in Paris", "tools"] and e.text() == HAND_WRITTEN
    edit.set_arguments(e, 0, {"location": "Lyon, France", "units": "metric", "lang": "fr"})
    text = edit.expect_text(e, 0)
    assert text.splitlines()[0].startswith("isError: false") and "# must not fail" in text
    assert text.splitlines()[1] == 'text: {contains: "Paris"}'
    edit.set_expect(e, 0, text.replace('"Paris"', '"Lyon"') + "maxMs: 2000\n")
    assert edit.add_step(e, "weather in Paris", "call", "get_weather", {"location": "Nice"},
                         {"isError": False}) == "weather in Paris (2)"
    was_dirty = e.dirty
    saved = edit.save(e)
    got = path.read_text(encoding="utf-8")
    assert got.splitlines() == EDITED.splitlines()
    assert got == EDITED
    assert was_dirty and not e.dirty and saved.document is e.document
    assert [s.name for s in saved.steps] == ["weather in Paris", "tools", "weather in Paris (2)"]

    loaded = load(path)
    assert loaded.name == "seed tools" and loaded.timeout == 10.0 and loaded.protocol == "auto"
    assert loaded.server == {"command": ["python", "server.py"], "env": {}}
    first, listing, added = loaded.steps
    assert (first.kind, first.target) == ("call", "get_weather")
    assert first.arguments == {"location": "Lyon, France", "units": "metric", "lang": "fr"}
    assert first.expect == {"isError": False, "text": {"contains": "Lyon"}, "maxMs": 2000}
    assert (listing.kind, listing.target, listing.arguments, listing.expect) == ("list", "tools", None, {})
    assert (added.name, added.arguments, added.expect) == ("weather in Paris (2)", {"location": "Nice"},
                                                           {"isError": False})


def test_saving_twice_needs_no_overwrite(tmp_path: Path) -> None:
    """After a save the editable knows the file as it is now: the next save is not taken for a stale one. A
    value replaced keeps its quotes, and the comment after it keeps its column."""
    path = write(tmp_path, HAND_WRITTEN)
    e = edit.open_editable(path)
    edit.set_arguments(e, 0, {"location": "Oslo"})
    edit.save(e)
    edit.set_arguments(e, 0, {"location": "Rome"})
    edit.save(e)
    assert load(path).steps[0].arguments == {"location": "Rome"}
    line = next(x for x in path.read_text(encoding="utf-8").splitlines() if "arguments" in x)
    assert line == "    arguments: {location: 'Rome'}" + " " * 37 + "# the usual city"  # quotes and column kept


def test_opening_a_file_that_is_not_a_collection(tmp_path: Path) -> None:
    with pytest.raises(CollectionError, match="no such file"):
        edit.open_editable(tmp_path / "absent.yaml")
    with pytest.raises(CollectionError) as caught:
        edit.open_editable(write(tmp_path, "name: x\nsteps:\n  - {name: s, call: echo, colour: red}\n"))
    assert problems(caught) == [(3, 27, "unknown key 'colour' in step 1 (known: arguments, ask, call, description, "
                                        "elicit, expect, list, name, prompt, read, sampling, save, timeout)")]


# --- arguments ----------------------------------------------------------------------------------------

ARGS = """\
name: a
steps:
  - name: s
    call: echo
    arguments:
      text: hi  # greeting
      opts: {a: 1, b: 2}
    expect: {isError: false}
"""


@pytest.mark.parametrize("empty", [None, {}])
def test_no_arguments_removes_the_key(empty: Any, tmp_path: Path) -> None:
    e = edit.open_editable(write(tmp_path, ARGS))
    edit.set_arguments(e, 0, empty)
    assert e.text() == "name: a\nsteps:\n  - name: s\n    call: echo\n    expect: {isError: false}\n"
    assert e.dirty


def test_no_arguments_on_a_step_without_any_changes_nothing(tmp_path: Path) -> None:
    text = "name: a\nsteps:\n  - name: s\n    call: echo\n"
    e = edit.open_editable(write(tmp_path, text))
    edit.set_arguments(e, 0, None)
    assert e.text() == text and not e.dirty


def test_nested_arguments_are_merged_in_place(tmp_path: Path) -> None:
    """A key kept keeps its comment; a nested mapping is edited, not replaced."""
    e = edit.open_editable(write(tmp_path, ARGS))
    edit.set_arguments(e, 0, {"text": "hi", "opts": {"a": 1, "c": 3}})
    assert e.text() == ARGS.replace("{a: 1, b: 2}", "{a: 1, c: 3}")


def test_an_unchanged_list_argument_keeps_its_layout_and_comments(tmp_path: Path) -> None:
    """Only what changed is rewritten: an equal value is left as the person wrote it."""
    text = ("steps:\n  - name: s\n    call: echo\n    arguments:\n"
            "      tags:\n        - a  # first\n        - b\n      n: 1\n")
    e = edit.open_editable(write(tmp_path, text))
    edit.set_arguments(e, 0, {"tags": ["a", "b"], "n": 2})
    assert e.text() == text.replace("n: 1", "n: 2")


@pytest.mark.parametrize("kind,target,arguments", [
    ("call", "echo", {"text": "hi"}),
    ("read", "'file:///notes.txt'", {"text": "hi"}),
    ("prompt", "greet", {"text": "hi"}),
    ("list", "tools", {"text": "hi"}),
])
def test_arguments_go_right_after_the_target(kind: str, target: str, arguments: dict[str, Any], tmp_path: Path) -> None:
    text = f"name: a\nsteps:\n  - name: s\n    {kind}: {target}\n    description: d\n"
    e = edit.open_editable(write(tmp_path, text))
    edit.set_arguments(e, 0, arguments)
    assert e.text() == (f"name: a\nsteps:\n  - name: s\n    {kind}: {target}\n    arguments: {{text: hi}}\n"
                        "    description: d\n")


def test_arguments_follow_the_target_when_it_comes_before_the_name(tmp_path: Path) -> None:
    """Three levels deep is too deep for one line: the outer mapping is a block, the inner ones inline."""
    e = edit.open_editable(write(tmp_path, "steps:\n  - call: echo\n    name: s\n"))
    edit.set_arguments(e, 0, {"n": 1, "deep": {"x": [1, 2]}})
    assert e.text() == "steps:\n  - call: echo\n    arguments:\n      n: 1\n      deep: {x: [1, 2]}\n    name: s\n"
    edit.set_arguments(e, 0, {"n": 1, "deep": {"x": 1}})
    assert e.text() == "steps:\n  - call: echo\n    arguments:\n      n: 1\n      deep: {x: 1}\n    name: s\n"


def test_long_arguments_are_written_as_a_block(tmp_path: Path) -> None:
    """Inline only when it reads on one line: a long value gets one key per line."""
    e = edit.open_editable(write(tmp_path, "steps:\n  - call: echo\n    name: s\n"))
    edit.set_arguments(e, 0, {"text": "x" * 70, "n": 1})
    assert e.text() == f"steps:\n  - call: echo\n    arguments:\n      text: {'x' * 70}\n      n: 1\n    name: s\n"


def test_a_step_that_is_not_there(tmp_path: Path) -> None:
    e = edit.open_editable(write(tmp_path, ARGS))
    for change in (lambda: edit.set_arguments(e, 1, {"a": 1}), lambda: edit.set_expect(e, -1, ""),
                   lambda: edit.expect_text(e, 3), lambda: edit.remove_step(e, 1)):
        with pytest.raises(IndexError, match="the collection has no step"):
            change()
    assert e.text() == ARGS and not e.dirty


# --- expectations -------------------------------------------------------------------------------------

EXPECTS = """\
name: x
steps:
  - name: s
    call: echo
    expect:
      isError: false
"""


@pytest.mark.parametrize("text,where", [
    ("isError: maybe\n", [(1, 10, "isError is true or false")]),
    ("text: {contains: x}\nmaxMS: 10\n", [(2, 1, "unknown key 'maxMS' in expect (did you mean 'maxMs'?)")]),
    ("isError: false\ntext:\n  matches: '(unclosed'\n",
     [(3, 12, "the regular expression does not compile: missing ), unterminated subpattern at position 0")]),
    ("isError: true\n  text: x\n", [(2, 7, "not valid YAML: mapping values are not allowed here")]),
    ("isError: false\ntext: {contains: x\n",
     [(3, 1, "not valid YAML: while parsing a flow mapping expected ',' or '}', but got '<stream end>'")]),
    ("5\n", [(1, 1, "expect is a mapping")]),
    ("error: {code: 1}\nisError: true\n", [(1, 1, "a step expects either a JSON-RPC error or a result, not both")]),
], ids=["bad value", "unknown key", "regex", "indentation", "unclosed flow", "not a mapping", "both"])
def test_a_refused_expectation_says_where_in_the_edited_text(text: str, where: list[tuple[int, int, str]],
                                                             tmp_path: Path) -> None:
    """The editor shows only the expectations: the place is counted in that text, not in the whole file."""
    with pytest.raises(CollectionError) as caught:
        edit.parse_expect(text, "call", "echo")
    assert problems(caught) == where
    assert all(p.file == "expectations" for p in caught.value.problems)
    e = edit.open_editable(write(tmp_path, EXPECTS))
    with pytest.raises(CollectionError) as again:
        edit.set_expect(e, 0, text)
    assert problems(again) == where
    assert e.text() == EXPECTS and not e.dirty


def test_expectations_are_checked_for_the_step_they_belong_to() -> None:
    """`messages` is for prompts, `listed` for listings: the step's kind decides what is allowed."""
    assert dict(edit.parse_expect("messages: {count: 2}\n", "prompt", "greet")) == {"messages": {"count": 2}}
    with pytest.raises(CollectionError) as caught:
        edit.parse_expect("messages: {count: 2}\n", "call", "echo")
    assert problems(caught) == [(1, 1, "messages is for prompt steps")]
    assert edit.parse_expect("listed: {present: [echo]}\n", "list", "tools")["listed"] == {"present": ["echo"]}
    assert edit.parse_expect("text: {contains: x}\n", "read", 'odd "uri": #x')["text"] == {"contains": "x"}


def test_a_comment_only_expectation_is_no_expectation(tmp_path: Path) -> None:
    """Comments alone say nothing to check: the step's `expect` goes, as with empty text."""
    assert dict(edit.parse_expect("# nothing yet\n", "call", "echo")) == {}
    e = edit.open_editable(write(tmp_path, EXPECTS))
    edit.set_expect(e, 0, "# nothing yet\n")
    assert e.text() == "name: x\nsteps:\n  - name: s\n    call: echo\n"


@pytest.mark.parametrize("empty", ["", "  \n\n"])
def test_empty_expectations_remove_the_key(empty: Any, tmp_path: Path) -> None:
    e = edit.open_editable(write(tmp_path, EXPECTS))
    edit.set_expect(e, 0, empty)
    assert e.text() == "name: x\nsteps:\n  - name: s\n    call: echo\n"
    assert e.dirty and edit.expect_text(e, 0) == ""


def test_new_expectations_go_after_the_arguments_or_the_target(tmp_path: Path) -> None:
    text = "steps:\n  - name: a\n    read: 'x://a'\n    arguments: {n: 1}\n    timeout: 5\n  - prompt: p\n    name: b\n"
    e = edit.open_editable(write(tmp_path, text))
    edit.set_expect(e, 0, "text: {contains: x}\n")
    edit.set_expect(e, 1, "messages: {count: 1}\n")
    assert e.text() == ("steps:\n  - name: a\n    read: 'x://a'\n    arguments: {n: 1}\n"
                        "    expect:\n      text: {contains: x}\n    timeout: 5\n"
                        "  - prompt: p\n    expect:\n      messages: {count: 1}\n    name: b\n")


def test_a_multi_line_text_expectation_survives(tmp_path: Path) -> None:
    """A block scalar with an empty line in it: the empty line must not break the indentation."""
    e = edit.open_editable(write(tmp_path, EXPECTS))
    edit.set_expect(e, 0, "text:\n  equals: |\n    one\n\n    three\n")
    edit.save(e)
    assert load(e.path).steps[0].expect == {"text": {"equals": "one\n\nthree\n"}}


# --- saving -------------------------------------------------------------------------------------------


def test_save_is_atomic_and_keeps_the_file_mode(tmp_path: Path) -> None:
    path = write(tmp_path, HAND_WRITTEN)
    os.chmod(path, 0o640)
    e = edit.open_editable(path)
    edit.set_arguments(e, 0, None)
    edit.save(e)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert load(path).steps[0].arguments is None


def test_a_document_that_is_no_collection_is_not_written(tmp_path: Path) -> None:
    """Edited behind the helpers' back (two targets): refused, with its place in the text it would write."""
    path = write(tmp_path, HAND_WRITTEN)
    before = path.stat()
    e = edit.open_editable(path)
    e.document["steps"][1]["read"] = "file:///x"
    with pytest.raises(CollectionError) as caught:
        edit.save(e)
    assert problems(caught) == [(14, 5, "tools has more than one target (read, list): one per step")]
    assert path.read_text(encoding="utf-8") == HAND_WRITTEN
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]
    del e.document["steps"][1]["read"]
    edit.save(e)  # the same editable can still be saved once it is right again
    assert path.read_text(encoding="utf-8") == HAND_WRITTEN


def test_a_file_changed_on_disk_is_not_overwritten(tmp_path: Path) -> None:
    path = write(tmp_path, HAND_WRITTEN)
    e = edit.open_editable(path)
    edit.set_arguments(e, 0, {"location": "Oslo"})
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    with pytest.raises(StaleCollection, match=r"c\.yaml changed on disk since it was opened"):
        edit.save(e)
    assert path.read_text(encoding="utf-8") == HAND_WRITTEN
    edit.save(e, overwrite=True)
    assert load(path).steps[0].arguments == {"location": "Oslo"}


def test_a_file_rewritten_or_removed_on_disk_is_not_overwritten(tmp_path: Path) -> None:
    path = write(tmp_path, HAND_WRITTEN)
    e = edit.open_editable(path)
    other = HAND_WRITTEN + "  - {name: theirs, list: prompts}\n"
    path.write_text(other, encoding="utf-8")
    with pytest.raises(StaleCollection, match="changed on disk"):
        edit.save(e)
    assert path.read_text(encoding="utf-8") == other
    path.unlink()
    with pytest.raises(StaleCollection, match="was removed on disk"):
        edit.save(e)
    assert not path.exists()


def test_a_new_collection_is_created_and_loads(tmp_path: Path) -> None:
    path = tmp_path / "new.yaml"
    e = edit.new_editable(path, "new one", {"command": ["python", "server.py"]})
    assert e.dirty and e.steps == [] and e.collection.steps == []
    edit.add_step(e, "tools", "list", "tools", None, {})
    edit.add_step(e, "echo", "call", "echo", {"text": "hi"}, {"isError": False, "text": {"contains": "hi"}})
    edit.save(e)
    assert path.read_text(encoding="utf-8") == (
        "name: new one\n"
        "# How to start the server (-- COMMAND or a URL on the command line wins)\n"
        "server: {command: [python, server.py]}\n"
        "steps:\n"
        "  - name: tools\n    list: tools\n"
        "  - name: echo\n    call: echo\n    arguments: {text: hi}\n"
        "    expect:\n      isError: false\n      text: {contains: hi}\n")
    c = load(path)
    assert c.name == "new one" and c.server == {"command": ["python", "server.py"]}
    assert [(s.name, s.method) for s in c.steps] == [("tools", "tools/list"), ("echo", "tools/call")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.yaml"]


def test_a_new_collection_does_not_replace_a_file_that_appeared(tmp_path: Path) -> None:
    path = tmp_path / "new.yaml"
    e = edit.new_editable(path, "mine")
    edit.add_step(e, "tools", "list", "tools", None, {})
    path.write_text("theirs\n", encoding="utf-8")
    with pytest.raises(StaleCollection, match=r"new\.yaml was created on disk since it was opened"):
        edit.save(e)
    assert path.read_text(encoding="utf-8") == "theirs\n"


def test_a_new_collection_without_steps_is_not_written(tmp_path: Path) -> None:
    e = edit.new_editable(tmp_path / "new.yaml", "empty")
    with pytest.raises(CollectionError, match="a collection needs a list of steps"):
        edit.save(e)
    assert list(tmp_path.iterdir()) == []


# --- names and steps ----------------------------------------------------------------------------------


def test_repeated_names_are_numbered(tmp_path: Path) -> None:
    e = edit.open_editable(write(tmp_path, "steps:\n  - {name: echo, call: echo}\n"))
    assert edit.unique_name(e, "other") == "other"
    assert edit.unique_name(e, "  echo  ") == "echo (2)"
    assert edit.unique_name(e, "   ") == "step"
    assert edit.add_step(e, "echo", "call", "echo", None, {}) == "echo (2)"
    assert edit.add_step(e, "echo", "call", "echo", None, {}) == "echo (3)"
    assert edit.add_step(e, "echo (2)", "call", "echo", None, {}) == "echo (2) (2)"
    assert [s["name"] for s in e.steps] == ["echo", "echo (2)", "echo (3)", "echo (2) (2)"]
    assert [s.name for s in edit.save(e).steps] == ["echo", "echo (2)", "echo (3)", "echo (2) (2)"]


def test_an_unknown_kind_of_step_is_refused(tmp_path: Path) -> None:
    e = edit.open_editable(write(tmp_path, EXPECTS))
    with pytest.raises(ValueError, match="^tool$"):
        edit.add_step(e, "x", "tool", "echo", None, {})
    assert e.text() == EXPECTS and not e.dirty


def test_removing_a_step(tmp_path: Path) -> None:
    path = write(tmp_path, HAND_WRITTEN)
    e = edit.open_editable(path)
    edit.remove_step(e, 1)
    assert e.dirty
    assert [s.name for s in edit.save(e).steps] == ["weather in Paris"]


# --- expectations from an answer ----------------------------------------------------------------------


def test_expectation_from_a_tool_answer() -> None:
    result = {"content": [{"type": "text", "text": "\n   \n  " + "w" * 100 + "  \nsecond line"},
                          {"type": "image", "data": "", "mimeType": "image/png"}],
              "structuredContent": {"temp": 20, "city": "Paris"}, "isError": False}
    assert edit.expectation_from("tools/call", result, None, 123, max_ms=True) == {
        "isError": False, "text": {"contains": "w" * 80}, "content": {"types": ["text", "image"]},
        "structured": {"schema": {"type": "object", "required": ["city", "temp"]}}, "maxMs": 1000}
    assert edit.expectation_from("tools/call", result, None, text=False, shape=False) == {"isError": False}


def test_expectation_from_a_tool_error_and_a_bare_answer() -> None:
    failed = {"content": [{"type": "text", "text": "boom: no such city"}], "isError": True}
    assert edit.expectation_from("tools/call", failed, None, 700, max_ms=True) == {
        "isError": True, "text": {"contains": "boom: no such city"}, "content": {"types": ["text"]}, "maxMs": 2800}
    assert edit.expectation_from("tools/call", {"content": []}, None, 700) == {"isError": False}
    assert edit.expectation_from("tools/call", None, None) == {"isError": False}


@pytest.mark.parametrize("ms,limit", [(0, 1000), (123, 1000), (249.99, 1000), (250.01, 1100), (700, 2800),
                                      (1234, 5000)])
def test_the_time_limit_is_four_times_the_answer_rounded_up(ms: float, limit: int) -> None:
    got = edit.expectation_from("tools/list", {"tools": []}, None, ms, max_ms=True)
    assert got == {"maxMs": limit} and type(got["maxMs"]) is int
    assert edit.expectation_from("tools/list", {"tools": []}, None, ms) == {}
    assert edit.expectation_from("tools/list", {"tools": []}, None, None, max_ms=True) == {}


def test_expectation_from_a_json_rpc_error() -> None:
    """An error answer is judged by its code only: the message is free to change."""
    error = {"code": -32602, "message": "unknown tool"}
    assert edit.expectation_from("tools/call", None, error, 5, max_ms=True) == {"error": {"code": -32602}}
    assert edit.expectation_from("tools/call", None, {"message": "odd"}) == {"error": {}}


def test_expectation_from_a_resource_and_a_prompt() -> None:
    read = {"contents": [{"uri": "x://a", "blob": "AA=="}, {"uri": "x://b", "text": "\nhello world\nmore"}]}
    assert edit.expectation_from("resources/read", read, None, 10) == {"text": {"contains": "hello world"}}
    prompt = {"messages": [{"role": "user", "content": {"type": "text", "text": "Say hi to Ada"}},
                           {"role": "assistant", "content": {"type": "text", "text": "Hi"}}]}
    assert edit.expectation_from("prompts/get", prompt, None) == {"text": {"contains": "Say hi to Ada"},
                                                                  "messages": {"count": 2}}
    assert edit.expectation_from("prompts/get", {"messages": []}, None) == {"messages": {"count": 0}}


def test_an_expectation_from_an_answer_is_one_the_collection_accepts(tmp_path: Path) -> None:
    e = edit.new_editable(tmp_path / "c.yaml", "c")
    result = {"content": [{"type": "text", "text": "it's 20°C: \"sunny\" # really"}], "structuredContent": {"t": 1}}
    edit.add_step(e, "w", "call", "weather", {}, edit.expectation_from("tools/call", result, None, 50, max_ms=True))
    step = edit.save(e).steps[0]
    assert step.arguments is None
    assert step.expect["text"] == {"contains": "it's 20°C: \"sunny\" # really"}
    assert step.expect["structured"] == {"schema": {"type": "object", "required": ["t"]}}


# --- the server of a collection -----------------------------------------------------------------------


def test_secrets_in_a_command_server_become_references(tmp_path: Path) -> None:
    (tmp_path / "srv").mkdir()
    spec = ServerSpec(name="w", command=["python", "server.py"],
                      env={"GITHUB_TOKEN": "ghp_x", "DEBUG": "1", "my-api-key": "k", "DB_PASSWORD": "p"},
                      cwd=str(tmp_path / "srv"))
    assert edit.server_of(spec, tmp_path) == {
        "command": ["python", "server.py"],
        "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "DEBUG": "1", "my-api-key": "${MY_API_KEY}",
                "DB_PASSWORD": "${DB_PASSWORD}"},
        "cwd": "srv"}


def test_the_working_folder_is_relative_only_inside_the_base(tmp_path: Path) -> None:
    inside = str(tmp_path / "a" / "b")
    assert edit.server_of(ServerSpec(name="w", command=["x"], cwd=inside), tmp_path)["cwd"] == "a/b"
    assert edit.server_of(ServerSpec(name="w", command=["x"], cwd=str(tmp_path)), tmp_path) == {"command": ["x"]}
    assert edit.server_of(ServerSpec(name="w", command=["x"], cwd="/elsewhere/srv"), tmp_path)["cwd"] == \
        "/elsewhere/srv"
    assert edit.server_of(ServerSpec(name="w", command=["x"], cwd=inside))["cwd"] == inside
    assert edit.server_of(ServerSpec(name="w", command=["x"])) == {"command": ["x"]}


def test_secrets_in_a_url_server_become_references() -> None:
    spec = ServerSpec(name="w", url="https://example.test/sse", transport="sse",
                      headers={"X-Api-Key": "k", "Authorization": "Bearer z", "Accept-Language": "fr"})
    assert edit.server_of(spec) == {
        "url": "https://example.test/sse", "transport": "sse",
        "headers": {"X-Api-Key": "${X_API_KEY}", "Authorization": "${AUTHORIZATION}", "Accept-Language": "fr"}}
    assert edit.server_of(ServerSpec(name="w", url="https://example.test/mcp", transport="http")) == {
        "url": "https://example.test/mcp"}


@pytest.mark.parametrize("name,env", [("X-Api-Key", "X_API_KEY"), ("GITHUB_TOKEN", "GITHUB_TOKEN"),
                                      ("api.key", "API_KEY"), ("", "SECRET")])
def test_env_name(name: str, env: str) -> None:
    assert edit.env_name(name) == env


def test_a_saved_server_runs_with_the_secret_from_the_environment(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The file holds `${NAME}`, never the secret; `spyglass test` reads it from the environment."""
    (tmp_path / "srv").mkdir()
    spec = ServerSpec(name="w", command=["python", "server.py"], env={"API_TOKEN": "s3cret", "DEBUG": "1"},
                      cwd=str(tmp_path / "srv"))
    path = tmp_path / "c.yaml"
    e = edit.new_editable(path, "c", edit.server_of(spec, tmp_path))
    edit.add_step(e, "tools", "list", "tools", None, {})
    edit.save(e)
    assert "s3cret" not in path.read_text(encoding="utf-8")
    assert "  env: {API_TOKEN: '${API_TOKEN}', DEBUG: '1'}\n" in path.read_text(encoding="utf-8")
    monkeypatch.setenv("API_TOKEN", "from-env")
    c = load(path)
    assert c.server is not None
    got = spec_of_collection(c.server, c.path.parent)
    assert got.command == ["python", "server.py"] and got.name == "python"
    assert got.env == {"API_TOKEN": "from-env", "DEBUG": "1"}
    assert got.cwd == str(tmp_path / "srv")


def test_a_saved_url_server_runs_with_its_header_from_the_environment(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    spec = ServerSpec(name="w", url="https://example.test/sse", transport="sse", headers={"X-Api-Key": "k"})
    path = tmp_path / "c.yaml"
    e = edit.new_editable(path, "c", edit.server_of(spec))
    edit.add_step(e, "tools", "list", "tools", None, {})
    edit.save(e)
    monkeypatch.setenv("X_API_KEY", "from-env")
    server = load(path).server
    assert server is not None
    got = spec_of_collection(server, tmp_path)
    assert (got.url, got.transport, got.headers) == ("https://example.test/sse", "sse", {"X-Api-Key": "from-env"})
    monkeypatch.delenv("X_API_KEY")
    with pytest.raises(UsageError, match=r"names \$\{X_API_KEY\}, which is not in the environment"):
        spec_of_collection(server, tmp_path)


# --- snapshots ----------------------------------------------------------------------------------------


def test_a_snapshot_is_stored_beside_the_collection_without_meta(tmp_path: Path) -> None:
    path = write(tmp_path, HAND_WRITTEN, "weather.yaml")
    (tmp_path / "weather.snapshots.json").write_text(json.dumps({"tools": {"tools": []}}), encoding="utf-8")
    e = edit.open_editable(path)
    answer = {"_meta": {"trace": 1},
              "content": [{"type": "text", "text": "20°C", "_meta": {"a": 1}}],
              "structuredContent": {"deep": {"_meta": "x", "list": [{"_meta": 2, "k": 3}]}}}
    edit.store_snapshot(e, "weather in Paris", answer)
    assert json.loads((tmp_path / "weather.snapshots.json").read_text(encoding="utf-8")) == {
        "tools": {"tools": []},
        "weather in Paris": {"content": [{"type": "text", "text": "20°C"}],
                             "structuredContent": {"deep": {"list": [{"k": 3}]}}}}
    assert answer["_meta"] == {"trace": 1}  # the answer shown in the window is not changed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["weather.snapshots.json", "weather.yaml"]
    edit.store_snapshot(e, "tools", {"tools": [{"name": "echo"}]})
    assert json.loads((tmp_path / "weather.snapshots.json").read_text(encoding="utf-8"))["tools"] == {
        "tools": [{"name": "echo"}]}


def test_the_first_snapshot_creates_the_file(tmp_path: Path) -> None:
    e = edit.open_editable(write(tmp_path, HAND_WRITTEN))
    edit.store_snapshot(e, "tools", {"tools": []})
    assert (tmp_path / "c.snapshots.json").read_text(encoding="utf-8") == '{\n  "tools": {\n    "tools": []\n  }\n}\n'


# --- answering the server during a step ---------------------------------------------------------------


def test_step_answers_say_which_questions_the_step_answers() -> None:
    """Only what the running step says is answered without asking the user."""
    answers = StepAnswers()
    assert not answers.answers("elicit") and not answers.answers("sampling")
    answers.step = Step(0, "plain", "call", "echo")
    assert not answers.answers("elicit") and not answers.answers("sampling")
    answers.step = Step(0, "form", "call", "echo", elicit={"accept": {"name": "Ada"}})
    assert answers.answers("elicit") and not answers.answers("sampling")
    answers.step = Step(0, "llm", "call", "echo", sampling={"reply": "hi"})
    assert answers.answers("sampling") and not answers.answers("elicit")
    answers.step = None
    assert not answers.answers("elicit") and not answers.answers("sampling")


# --- comments after a block belong to what follows; `list: true` --------------------------------------

TRAILING = """\
name: d
steps:
  - name: a
    call: x
    arguments:
      keep: 1
      drop: 2
    # why we expect this
    expect:
      isError: false
      text: "hi"
  # the listing
  - name: b
    list: true
"""


def test_removing_the_last_argument_keeps_the_comment_after_it(tmp_path: Path) -> None:
    e = edit.open_editable(write(tmp_path, TRAILING))
    edit.set_arguments(e, 0, {"keep": 1})
    assert "    # why we expect this\n" in e.text()


def test_removing_expectations_keeps_the_comment_before_the_next_step(tmp_path: Path) -> None:
    e = edit.open_editable(write(tmp_path, TRAILING))
    edit.set_expect(e, 0, "")
    assert "  # the listing\n" in e.text()


def test_expectations_of_a_list_true_step(tmp_path: Path) -> None:
    e = edit.open_editable(write(tmp_path, TRAILING))
    edit.set_expect(e, 1, "listed: {present: [x]}\n")
    assert edit.save(e).steps[1].expect == {"listed": {"present": ["x"]}}


def test_the_editor_shows_a_step_s_expectations_without_the_comment_of_the_next_step(tmp_path: Path) -> None:
    """`# the listing` is kept with `text:` by the YAML reader; it is the next step's, not the editor's."""
    e = edit.open_editable(write(tmp_path, TRAILING))
    assert edit.expect_text(e, 0) == 'isError: false\ntext: "hi"\n'
    assert e.text() == TRAILING  # showing it changed nothing
    edit.set_expect(e, 0, edit.expect_text(e, 0).replace('"hi"', '"ho"'))
    assert e.text() == TRAILING.replace('"hi"', '"ho"')
    edit.set_arguments(e, 0, {"keep": 2})
    assert e.text() == TRAILING.replace('"hi"', '"ho"').replace("keep: 1\n      drop: 2\n", "keep: 2\n")


def test_a_step_without_a_name_is_step_n_for_new_names(tmp_path: Path) -> None:
    e = edit.open_editable(write(tmp_path, "steps:\n  - call: echo\n"))
    assert edit.add_step(e, "step 1", "call", "echo", None, {}) == "step 1 (2)"
    assert [s.name for s in edit.save(e).steps] == ["step 1", "step 1 (2)"]


def test_an_environment_name_never_begins_with_a_digit() -> None:
    assert edit.env_name("1-token") == "_1_TOKEN"
    assert edit.env_name("x-api-key") == "X_API_KEY"


def test_content_that_is_not_blocks_gives_no_types_expectation() -> None:
    assert "content" not in edit.expectation_from("tools/call", {"content": ["odd", {"type": "text", "text": "a"}]},
                                                  None)
