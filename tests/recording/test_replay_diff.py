"""`spyglass replay` and `spyglass diff` as a user runs them, against real servers: a recording replayed
against the server that made it has no differences (both eras, the server's questions answered from the
recording), against its next build every change is reported at its path; two servers that differ in one
schema differ there and nowhere else. Plus the structural diff itself."""

from __future__ import annotations

import json

import pytest
from recordings import SDK, record_sdk, spyglass

from inspector.recording.compare import MISSING, Change, diff_values, valid_pointer
from inspector.recording.files import open_session
from inspector.recording.replay import RecordedAnswers, requests_of


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("replay")
    return {era: record_sdk(folder / f"sdk-{era}.sqlite", era) for era in ("legacy", "modern")}


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_replay_against_the_same_server_has_no_differences(recorded, era):
    run = spyglass("replay", str(recorded[era]), "--protocol", era, "--format", "json", "--", *SDK)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["same"] is True and report["counts"]["different"] == 0
    labels = [s["method"] + (" " + s["target"] if s["target"] else "") for s in report["steps"]]
    assert labels == ["tools/list", "tools/call add", "tools/call echo", "tools/call fail", "tools/call ask_name",
                      "resources/list", "resources/read sdk://hello", "prompts/list", "tools/call no-such-tool"]
    ask = report["steps"][4]
    # the question the call asks (elicitation in 2025-11-25, an MRTR round in 2026-07-28) answered as recorded
    assert ask["replayed"]["result"]["content"][0]["text"] == "Hello, Ada!"
    assert "declined" not in run.stderr


def test_replay_across_eras_compares_what_the_server_said_not_the_era(recorded):
    run = spyglass("replay", str(recorded["legacy"]), "--protocol", "modern", "--", *SDK)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "(2025-11-25) against" in run.stdout and "(2026-07-28)" in run.stdout


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_replay_against_the_next_build_reports_each_change_at_its_path(recorded, era):
    run = spyglass("replay", str(recorded[era]), "--protocol", era, "--format", "json", "--", *SDK, "--changed")
    assert run.returncode == 9, run.stdout + run.stderr
    steps = {s["method"] + (" " + s["target"] if s["target"] else ""): s for s in json.loads(run.stdout)["steps"]}
    echo = steps["tools/call echo"]
    assert echo["status"] == "different"
    assert {c["path"]: (c["a"], c["b"]) for c in echo["changes"]} == {
        "/content/0/text": ("hello", "HELLO"), "/structuredContent/result": ("hello", "HELLO")}
    listed = {c["path"]: c for c in steps["tools/list"]["changes"]}
    add = next(p for p in listed if p.endswith("/description") and listed[p]["a"] == "Add two integers.")
    assert listed[add]["b"] == "Add two or three integers."
    assert any(p.endswith("/inputSchema/properties/c") and c["kind"] == "added" for p, c in listed.items())
    assert any(c["kind"] == "added" and c["b"].get("name") == "version" for c in listed.values())
    assert len(listed) == 3  # matched by name: the new tool is one addition, not a shift of every later tool
    for same in ("tools/call add", "tools/call fail", "resources/read sdk://hello", "prompts/list"):
        assert steps[same]["status"] == "same", same
    text = spyglass("replay", str(recorded[era]), "--protocol", era, "--", *SDK, "--changed").stdout
    assert '✗   3  tools/call echo' in text and '/content/0/text: "hello" → "HELLO"' in text


def test_ignored_paths_are_not_compared(recorded):
    run = spyglass("replay", str(recorded["legacy"]), "--protocol", "legacy", "--format", "json",
                   "--ignore", "/content/0/text", "--ignore", "/structuredContent", "--", *SDK, "--changed")
    steps = {s["method"] + (" " + s["target"] if s["target"] else ""): s for s in json.loads(run.stdout)["steps"]}
    assert steps["tools/call echo"]["status"] == "same"
    assert run.returncode == 9  # the tool list still differs
    bad = spyglass("replay", str(recorded["legacy"]), "--ignore", "content/0", "--", *SDK)
    assert bad.returncode == 1 and "not a JSON pointer" in bad.stderr


def test_replay_without_a_server_uses_the_recorded_one(recorded):
    run = spyglass("replay", str(recorded["modern"]), "--protocol", "modern")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "replaying against sdk as recorded" in run.stderr


def test_replay_that_cannot_run_says_why(recorded, tmp_path):
    not_a_session = tmp_path / "notes.txt"
    not_a_session.write_text("hello")
    run = spyglass("replay", str(not_a_session), "--", *SDK)
    assert run.returncode == 1 and "is not a Spyglass session" in run.stderr and "Traceback" not in run.stderr
    gone = spyglass("replay", str(recorded["legacy"]), "--", "/no/such/server-binary")
    assert gone.returncode == 4 and "Traceback" not in gone.stderr


def test_the_recorded_answers_are_taken_in_order_and_then_declined(recorded):
    surface = open_session(recorded["legacy"]).surface()
    answers = RecordedAnswers(surface)
    import asyncio

    first = asyncio.run(answers.elicit(None, {}, None))
    assert first == {"action": "accept", "content": {"name": "Ada"}}
    assert asyncio.run(answers.elicit(None, {}, None)) == {"action": "decline"}
    assert answers.declined == ["elicitation/create"]
    assert all(x.method not in ("initialize", "server/discover") for x in requests_of(surface))


def test_diff_of_two_servers_that_differ_in_one_schema():
    run = spyglass("diff", "--format", "json", "--a", " ".join(SDK), "--b", "--", *SDK, "--changed")
    assert run.returncode == 9, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["tools"]["added"] == ["version"] and report["tools"]["removed"] == []
    assert {c["path"] for c in report["tools"]["changed"]["add"]} == {"/description", "/inputSchema/properties/c"}
    assert list(report["tools"]["changed"]) == ["add"]
    assert report["revision"] is None and report["capabilities"] == []
    same = spyglass("diff", "--a", " ".join(SDK), "--b", "--", *SDK)
    assert same.returncode == 0 and "No differences" in same.stdout


def test_diff_of_a_session_file_and_a_live_server(recorded):
    run = spyglass("diff", str(recorded["legacy"]), "--protocol", "legacy", "--b", "--", *SDK, "--changed")
    assert run.returncode == 9, run.stderr
    assert "+ version" in run.stdout and "~ add" in run.stdout
    assert "Resource templates: not compared (A never listed them)" in run.stdout
    both = spyglass("diff", str(recorded["legacy"]), str(recorded["legacy"]))
    assert both.returncode == 0 and "No differences" in both.stdout
    one = spyglass("diff", str(recorded["legacy"]))
    assert one.returncode == 1 and "give two servers" in one.stderr


def test_structural_diff():
    assert diff_values({"a": 1, "_meta": {"x": 1}}, {"a": 1, "_meta": {"x": 2}}) == []
    assert diff_values({"a/b": [1, 2]}, {"a/b": [1, 3, 4]}) == [Change("/a~1b/1", 2, 3), Change("/a~1b/2", MISSING, 4)]
    assert diff_values({"at": "2026-01-01T10:00:00Z"}, {"at": "2026-12-01T11:30:00.5+01:00"}) == []
    assert diff_values({"n": 1}, {"n": 1.0}) == [] and diff_values({"b": True}, {"b": 1}) == [Change("/b", True, 1)]
    tools_a = [{"name": "x", "d": 1}, {"name": "y"}]
    tools_b = [{"name": "new"}, {"name": "x", "d": 2}, {"name": "y"}]
    assert diff_values(tools_a, tools_b) == [Change("/0", MISSING, {"name": "new"}), Change("/1/d", 1, 2)]
    assert diff_values({"content": [{"text": "a"}]}, {"content": [{"text": "b"}]}, ["/content/0/text"]) == []
    assert diff_values({"content": [{"text": "a"}]}, {"content": [{"text": "b"}]}, ["/content/0/tex"]) != []
    assert Change("/x", MISSING, 1).kind == "added" and Change("/x", 1, MISSING).kind == "removed"
    assert valid_pointer("") and valid_pointer("/a~0b/~1") and not valid_pointer("a") and not valid_pointer("/a~2")
    deep_a: dict = {}
    deep_b: dict = {}
    cur_a, cur_b = deep_a, deep_b
    for _ in range(2000):  # deeper than a recursion would go: compared as a whole, no crash
        cur_a["k"] = {}
        cur_b["k"] = {}
        cur_a, cur_b = cur_a["k"], cur_b["k"]
    cur_b["v"] = 1
    assert len(diff_values(deep_a, deep_b)) == 1
