"""`spyglass test` as a user runs it: collections whose every step passes against the demo server, the SDK
server and server-everything; one built to fail in each way (wrong text, wrong structure, isError, a
JSON-RPC error, a timeout, snapshot drift); collections refused before anything is sent (with line and
column); a server that dies mid-run; the JUnit XML, snapshots, `--init`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from support import PY, ROOT, SDK_SERVER, SLOWDOWN, everything_cmd, hostile_cmd

from inspector.collection.load import CollectionError, load, parse
from inspector.collection.run import Unresolved, substitute

HERE = Path(__file__).parent


def spyglass(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None,
             timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "inspector", "test", *args], capture_output=True, text=True, cwd=str(cwd),
                          timeout=timeout * SLOWDOWN, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def copy(tmp_path: Path, name: str) -> Path:
    """A collection beside the test's files, its `python` this interpreter (a bare `python` may be another)."""
    target = tmp_path / name
    target.write_text((HERE / name).read_text().replace("[python, ", f"[{json.dumps(PY)}, "))
    return target


def test_every_kind_of_step_passes_against_the_demo_server(tmp_path):
    collection = copy(tmp_path, "demo_pass.yaml")
    junit = tmp_path / "junit.xml"
    run = spyglass(str(collection), "--junit", str(junit), env={"WHO": "tester"}, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"demo smoke test against {PY} -m inspector.demo"
    assert sum(1 for line in lines if line.startswith("✓ ")) == 10
    assert "10 passed, 0 failed" in lines[-1]
    assert "(written snapshot)" in run.stdout  # the first run stores the snapshot
    snapshots = json.loads((tmp_path / "demo_pass.snapshots.json").read_text())
    assert snapshots["stable answer"]["content"][0]["text"].startswith("10 / 4 = 2.5")
    assert "_meta" not in json.dumps(snapshots)
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("10", "0")
    again = spyglass(str(collection), env={"WHO": "tester"}, cwd=tmp_path)
    assert again.returncode == 0 and "written snapshot" not in again.stdout  # matched this time


def test_each_way_to_fail_is_reported_with_both_values(tmp_path):
    collection = copy(tmp_path, "demo_fail.yaml")
    (tmp_path / "demo_fail.snapshots.json").write_text(json.dumps({"drifted snapshot": {
        "content": [{"type": "text", "text": "10 / 5 = 3"}], "isError": False}}))
    junit = tmp_path / "junit.xml"
    run = spyglass(str(collection), "--junit", str(junit), cwd=tmp_path)
    assert run.returncode == 9, run.stdout + run.stderr
    out = run.stdout
    assert '✗ wrong text' in out and 'text contains: expected "goodbye", got "hello"' in out
    assert "✗ wrong structure" in out and "structured schema: expected" in out and "humidity_percent" in out
    assert "✗ a tool error not expected" in out and "isError: expected false, got true" in out
    assert "✗ a JSON-RPC error not expected" in out and "-32602" in out
    assert "✗ too slow" in out and "no answer within 2 s" in out
    assert "✗ drifted snapshot" in out and '/content/0/text: "10 / 5 = 3" → "10 / 5 = 2' in out
    assert "✓ still runs after failures" in out
    assert "1 passed, 6 failed" in out.splitlines()[-1]
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("7", "6")
    failures = {case.get("name"): case.find("failure") for case in suite.iter("testcase")}
    assert failures["still runs after failures"] is None
    wrong = failures["wrong text"]
    assert "expected: \"goodbye\"" in wrong.text and "actual:   \"hello\"" in wrong.text
    update = spyglass(str(collection), "--update-snapshots", "--step", "drifted snapshot", cwd=tmp_path)
    assert update.returncode == 0 and "updated snapshot" in update.stdout


def test_the_sdk_server_in_both_eras_and_a_saved_number_stays_a_number(tmp_path):
    collection = copy(tmp_path, "sdk_pass.yaml")
    for era in ("legacy", "modern"):
        run = spyglass(str(collection), "--protocol", era, "--", PY, str(SDK_SERVER))
        assert run.returncode == 0, era + run.stdout + run.stderr
        assert "6 passed, 0 failed" in run.stdout


def test_server_everything(tmp_path):
    collection = tmp_path / "everything.yaml"
    collection.write_text("""
name: everything
steps:
  - {name: tools, list: tools, expect: {listed: {present: [echo, get-sum]}}}
  - {name: echo, call: echo, arguments: {message: hi}, expect: {text: {contains: hi}}}
  - {name: sum, call: get-sum, arguments: {a: 2, b: 40}, expect: {text: {contains: "42"}, maxMs: 10000}}
  - {name: sampling, call: trigger-sampling-request, arguments: {prompt: "say hi", maxTokens: 20},
     sampling: {reply: "hi from the collection"}, expect: {text: {contains: hi from the collection}}}
""")
    run = spyglass(str(collection), "--", *everything_cmd())
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 passed, 0 failed" in run.stdout


BAD = {
    "yaml": ("steps:\n  - name: a\n    call: [unclosed\n", "not valid YAML", 4),
    "unknown key": ("steps:\n  - name: a\n    call: echo\n    expct: {text: x}\n", "unknown key 'expct' in step 1 "
                    "(did you mean 'expect'?)", 4),
    "no target": ("steps:\n  - name: a\n    arguments: {}\n", "a has no target", 2),
    "pointer": ("steps:\n  - name: a\n    call: echo\n    save: {x: content/0}\n", "is not a JSON pointer", 4),
    "regex": ("steps:\n  - name: a\n    call: echo\n    expect: {text: {matches: '(unclosed'}}\n",
              "does not compile", 4),
    "two targets": ("steps:\n  - {name: a, call: echo, read: x://y}\n", "more than one target", 2),
    "schema": ("steps:\n  - {name: a, call: echo, expect: {structured: {schema: {type: 12}}}}\n",
               "not a valid JSON Schema", 2),
    "duplicate": ("steps:\n  - {name: a, call: echo}\n  - {name: a, call: echo}\n", "two steps are named 'a'", 3),
}


@pytest.mark.parametrize("case", BAD)
def test_a_collection_that_is_not_valid_is_refused_with_line_and_column(case, tmp_path):
    text, words, line = BAD[case]
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(CollectionError) as caught:
        load(path)
    problem = caught.value.problems[0]
    assert words in problem.message and problem.line == line and problem.column >= 1, caught.value.problems
    run = spyglass(str(path), "--", PY, "-c", "raise SystemExit('must never start')")
    assert run.returncode == 1 and f"bad.yaml:{line}:" in run.stderr and words in run.stderr
    assert "Traceback" not in run.stderr


def test_every_problem_is_named_not_only_the_first(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("nme: x\nsteps:\n  - {name: a}\n  - {name: b, call: echo, save: {x: nope}}\n")
    with pytest.raises(CollectionError) as caught:
        load(path)
    assert [p.line for p in caught.value.problems] == [1, 3, 4]
    run = spyglass(str(path), "--", PY, "-c", "pass")
    assert run.returncode == 1 and run.stderr.count("bad.yaml:") == 3


def test_a_server_that_dies_mid_run_fails_the_rest_and_the_junit_is_written(tmp_path):
    collection = tmp_path / "dies.yaml"
    collection.write_text("steps:\n  - {name: first, call: echo, arguments: {message: hi}}\n"
                          "  - {name: second, call: echo, arguments: {message: bye}}\n"
                          "  - {name: third, call: echo, arguments: {message: never}}\n")
    junit = tmp_path / "junit.xml"
    run = spyglass(str(collection), "--junit", str(junit), "--", *hostile_cmd("exit-during-call"))
    assert run.returncode == 9, run.stdout + run.stderr
    assert "not run: the server went away" in run.stdout
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "3" and int(suite.get("failures")) >= 2


def test_substitution():
    saved = {"n": 5, "s": "text", "obj": {"a": 1}}
    assert substitute({"x": "${n}", "y": "n=${n}", "z": ["${obj}"], "w": "${s}!"}, saved, {}) == {
        "x": 5, "y": "n=5", "z": [{"a": 1}], "w": "text!"}
    assert substitute("${HOME_DIR}", {}, {"HOME_DIR": "/h"}) == "/h"
    with pytest.raises(Unresolved):
        substitute("${missing}", {}, {})


def test_init_writes_a_starter_collection_that_passes(tmp_path):
    run = spyglass("--init", "--", PY, "-m", "inspector.demo", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    path = tmp_path / "spyglass.collection.yaml"
    collection = load(path)
    assert collection.steps[0].kind == "list" and "echo" in collection.steps[0].expect["listed"]["present"]
    called = {s.target for s in collection.steps[1:]}
    assert "echo" in called and "delete_item" not in called  # read-only tools only
    assert "# A Spyglass collection" in path.read_text()
    again = spyglass("--init", "--", PY, "-m", "inspector.demo", cwd=tmp_path)
    assert again.returncode == 1 and "exists already" in again.stderr
    passes = spyglass(str(path), cwd=tmp_path)
    assert passes.returncode == 0, passes.stdout + passes.stderr


def test_the_json_schema_for_editors_accepts_the_examples_and_knows_every_key():
    import jsonschema

    from inspector.collection import load as loader

    schema = json.loads((Path(loader.__file__).with_name("schema.json")).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    for name in ("demo_pass.yaml", "demo_fail.yaml", "sdk_pass.yaml"):
        parsed = parse((HERE / name).read_text(), HERE / name, round_trip=True)
        from inspector.collection.load import plain

        jsonschema.validate(plain(parsed.document), schema)
    assert set(schema["properties"]) == loader.TOP_KEYS
    assert set(schema["$defs"]["step"]["properties"]) == loader.STEP_KEYS
    assert set(schema["$defs"]["step"]["properties"]["expect"]["properties"]) == loader.EXPECT_KEYS


def test_only_the_steps_named_run_and_an_unknown_one_is_refused(tmp_path):
    collection = copy(tmp_path, "demo_pass.yaml")
    run = spyglass(str(collection), "--step", "one quarter", "--step", "welcome text", "--format", "json",
                   cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert [s["name"] for s in report["steps"]] == ["one quarter", "welcome text"] and report["failed"] == 0
    nope = spyglass(str(collection), "--step", "no such step", cwd=tmp_path)
    assert nope.returncode == 1 and "no step named 'no such step'" in nope.stderr
    unset = tmp_path / "unset.yaml"
    unset.write_text(f"server: {{command: [{json.dumps(PY)}, -m, inspector.demo]}}\n"
                     "steps:\n  - {name: a, call: echo, arguments: {message: '${NOT_SET_ANYWHERE}'}}\n")
    missing = spyglass(str(unset), cwd=tmp_path)
    assert missing.returncode == 9 and "${NOT_SET_ANYWHERE} is neither saved" in missing.stdout
