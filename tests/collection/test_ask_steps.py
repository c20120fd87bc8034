"""`spyglass test` with ask steps, as CI runs it: the demo server's tools offered to a scripted model
endpoint (tests/model_peers.py, loopback), which tool it picks judged against `expect: {tool: …}` and
`expect: {arguments: {…}}`; a wrong choice fails the step (exit 9), an endpoint that cannot be reached is
exit 4 with the reason, a refused key exit 3; the key comes from SPYGLASS_MODEL_KEY and never shows."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from model_peers import AnthropicPeer, OpenAIPeer, closing_port
from support import PY, ROOT
from test_collections import spyglass

from inspector.collection.load import CollectionError, parse

KEY = "sk-ci-secret-77"
COLLECTION = f"""name: which tool
server: {{command: [{json.dumps(PY)}, -m, inspector.demo]}}
steps:
  - name: weather picks the weather tool
    ask: "What's the weather in Paris?"
    expect: {{tool: weather, arguments: {{city: Paris}}}}
  - name: small talk calls no tool
    ask: "hello there"
    expect: {{tool: none}}
  - name: a plain call still runs
    call: echo
    arguments: {{message: hi}}
    expect: {{text: hi}}
"""
WRONG = """  - name: deleting should not use the weather
    ask: "What's the weather in Oslo? then delete"
    expect: {tool: delete_item}
  - name: arguments the model did not choose
    ask: "weather in Paris"
    expect: {arguments: {city: Oslo}}
  - name: arguments that break the schema
    ask: "use bad arguments"
    expect: {tool: weather}
"""


@pytest.fixture(scope="module")
def peers():
    with OpenAIPeer(key=KEY) as openai_peer, AnthropicPeer(key=KEY) as anthropic_peer:
        yield openai_peer, anthropic_peer


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ask.yaml"
    path.write_text(text)
    return path


def test_ask_steps_pass_against_either_api(tmp_path, peers):
    path = write(tmp_path, COLLECTION)
    for peer, api in zip(peers, ("openai", "anthropic")):
        run = spyglass(str(path), "--model-url", peer.url, "--model", "scripted-small", "--model-api", api,
                       "--format", "json", env={"SPYGLASS_MODEL_KEY": KEY}, cwd=tmp_path)
        assert run.returncode == 0, run.stdout + run.stderr
        report = json.loads(run.stdout)
        assert [s["status"] for s in report["steps"]] == ["passed"] * 3
        assert KEY not in run.stdout + run.stderr
    offered = peers[0].requests[-1]
    assert "weather" in {t["function"]["name"] for t in offered["tools"]}


def test_the_key_comes_from_the_keyring_entry_the_window_keeps(tmp_path, peers):
    from inspector.model.types import key_name

    store = tmp_path / "keyring.json"
    store.write_text(json.dumps({f"spyglass/{key_name(peers[0].url)}": KEY}))
    env = {"PYTHON_KEYRING_BACKEND": "file_keyring.FileKeyring", "SPYGLASS_TEST_KEYRING": str(store),
           "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    run = spyglass(str(write(tmp_path, COLLECTION)), "--model-url", peers[0].url + "/", "--model", "scripted-small",
                   env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    store.write_text("{}")
    refused = spyglass(str(write(tmp_path, COLLECTION)), "--model-url", peers[0].url, "--model", "scripted-small",
                       env=env, cwd=tmp_path)
    assert refused.returncode == 3 and "refused the API key" in refused.stderr  # no key found: none sent


def test_a_wrong_choice_fails_its_step_with_exit_9(tmp_path, peers):
    path = write(tmp_path, COLLECTION + WRONG)
    run = spyglass(str(path), "--model-url", peers[0].url, "--model", "scripted-small",
                   env={"SPYGLASS_MODEL_KEY": KEY}, cwd=tmp_path)
    assert run.returncode == 9, run.stdout + run.stderr
    assert "3 passed, 3 failed" in run.stdout
    assert 'tool: expected "delete_item", got "weather"' in run.stdout
    assert "/city: expected 'Oslo', got 'Paris'" in run.stdout
    assert "arguments fit the inputSchema" in run.stdout and "/units" in run.stdout


def test_without_a_model_an_ask_step_fails_and_says_what_to_give(tmp_path):
    run = spyglass(str(write(tmp_path, COLLECTION)), cwd=tmp_path)
    assert run.returncode == 9
    assert "an ask step needs a model: spyglass test --model-url URL --model NAME (in the window" in run.stdout


def test_an_endpoint_that_cannot_be_used_ends_the_run_with_its_code(tmp_path, peers):
    path = write(tmp_path, COLLECTION)
    nowhere = f"http://127.0.0.1:{closing_port()}/v1"
    run = spyglass(str(path), "--model-url", nowhere, "--model", "m", cwd=tmp_path, env={"SPYGLASS_MODEL_KEY": KEY})
    assert run.returncode == 4, run.stdout + run.stderr
    assert f"spyglass test: cannot reach the model endpoint {nowhere}" in run.stderr
    assert "Traceback" not in run.stderr
    refused = spyglass(str(path), "--model-url", peers[0].url, "--model", "m", cwd=tmp_path,
                       env={"SPYGLASS_MODEL_KEY": "sk-wrong"})
    assert refused.returncode == 3 and "refused the API key (HTTP 401)" in refused.stderr
    assert "sk-wrong" not in refused.stderr
    half = spyglass(str(path), "--model-url", peers[0].url, cwd=tmp_path)
    assert half.returncode == 1 and "--model-url and --model go together" in half.stderr


def test_ask_steps_are_checked_with_line_and_column():
    bad = """steps:
  - name: a
    ask: ""
  - name: b
    ask: "hello"
    arguments: {x: 1}
    expect: {isError: false, tool: 3}
  - name: c
    call: echo
    expect: {tool: echo}
"""
    with pytest.raises(CollectionError) as caught:
        parse(bad, Path("ask.yaml"))
    said = str(caught.value)
    assert "ask.yaml:3:10: ask is a request in words" in said
    assert "ask.yaml:6:5: an ask step's model makes up the arguments" in said
    assert "an ask step expects tool, arguments or maxMs, not isError" in said
    assert "tool names the tool the model should call first, or none" in said
    assert "ask.yaml:10:14: tool is for ask steps" in said
    good = parse('steps:\n  - {name: a, ask: "hi", expect: {tool: none, maxMs: 500}}\n', Path("ok.yaml"))
    assert (good.steps[0].kind, good.steps[0].method, good.steps[0].target) == ("ask", "model/ask", "hi")
