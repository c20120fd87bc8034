"""What an agent is told when it names a server or asks something the core cannot do: each refusal a
sentence with a stable code, never a traceback (issue 37, point 5)."""

from __future__ import annotations

import pytest
from support import demo_cmd

from inspector.agent.errors import AgentError
from inspector.agent.hub import Hub, error_of, spec_of
from inspector.agent.ops import Ops
from inspector.agent.tools import run
from inspector.catalog import Catalog
from inspector.config import ServerSpec
from inspector.errors import ConnectError
from inspector.keystore import MemorySecrets


@pytest.mark.parametrize(("given", "code", "words"), [
    ({}, "usage", "got none"),
    ({"command": ["python"], "url": "http://127.0.0.1:1/mcp"}, "usage", "got command, url"),
    ({"command": [1, 2]}, "usage", "non-empty list of strings"),
    ({"command": "   "}, "usage", "non-empty list of strings"),
    ({"url": "ftp://example.com/mcp"}, "usage", "must start with http:// or https://"),
    ({"command": ["python"], "cwd": "/no/such/folder"}, "usage", "is not a folder"),
])
def test_a_server_named_wrongly_is_refused_in_words(given, code, words):
    with pytest.raises(AgentError) as caught:
        spec_of("s", **given)
    assert caught.value.code == code and words in caught.value.message


def test_the_catalog_names_a_saved_server_or_says_which_there_are(tmp_path):
    path = tmp_path / "servers.json"
    catalog = Catalog(path, secrets=MemorySecrets())
    catalog.add(ServerSpec(name="git", command=["uvx", "mcp-server-git"], env={"A": "1"}), mode="legacy")
    catalog.save()
    spec, mode = spec_of("mine", catalog="git", env={"B": "2"}, headers={"X": "y"}, cwd=str(tmp_path),
                         catalog_path=str(path))
    assert (spec.name, spec.command, spec.env, spec.cwd, mode) == \
        ("mine", ["uvx", "mcp-server-git"], {"A": "1", "B": "2"}, str(tmp_path), "legacy")
    demo, none = spec_of("d", catalog="demo")
    assert demo.command and none is None
    with pytest.raises(AgentError) as caught:
        spec_of("x", catalog="nope", catalog_path=str(path))
    assert caught.value.code == "unknown_server" and "'nope'" in caught.value.message and "git" in caught.value.message
    spec, _ = spec_of("h", url="https://example.com/mcp", headers={"Authorization": "Bearer t"})
    assert spec.url == "https://example.com/mcp" and spec.headers == {"Authorization": "Bearer t"}


def test_a_value_too_long_for_an_answer_is_cut_with_its_size():
    from inspector.agent.ops import cut

    value, was_cut = cut({"text": "x" * 100}, limit=20)
    assert was_cut and value["truncated"] is True and value["chars"] > 100 and len(value["head"]) == 20
    assert cut({"a": 1}) == ({"a": 1}, False)


def test_any_failure_below_the_hub_becomes_an_agent_error():
    kept = AgentError("as it was", "refused")
    assert error_of(kept) is kept
    said = error_of(ConnectError("nothing listening"))
    assert "nothing listening" in said.message and said.code == ConnectError("x").kind
    odd = error_of(ValueError("odd"))
    assert (odd.message, odd.code) == ("ValueError: odd", "internal")


async def test_operations_refuse_what_cannot_be_asked(tmp_path):
    hub = Hub(timeout=20)
    ops = Ops(hub)
    try:
        with pytest.raises(AgentError) as caught:
            await ops.listing("nobody", "tools")
        assert caught.value.code == "unknown_server"
        with pytest.raises(AgentError) as caught:
            await hub.open("no spaces", command=demo_cmd())
        assert caught.value.code == "usage" and "must be 1-64 letters" in caught.value.message
        with pytest.raises(AgentError) as caught:
            await hub.open("old", command=demo_cmd(), era="1999-01-01")
        assert caught.value.code == "usage" and "era must be one of" in caught.value.message
        try:  # a command that is not there: said as the status, the same as the window says it
            gone = await hub.open("gone", command=["spyglass-no-such-command-here"])
            assert gone.session.reason and "not found" in gone.session.reason
        except AgentError as exc:
            assert "not found" in exc.message
        await ops.connect("demo", command=demo_cmd())
        with pytest.raises(AgentError) as caught:
            await hub.open("demo", command=demo_cmd())
        assert caught.value.code == "name_taken"
        with pytest.raises(AgentError) as caught:
            await ops.listing("demo", "widgets")
        assert caught.value.code == "usage" and "kind must be one of" in caught.value.message
        with pytest.raises(AgentError) as caught:
            await ops.prompt("demo", "greeting", {"name": 3})
        assert caught.value.code == "invalid_arguments"
        with pytest.raises(AgentError) as caught:
            await ops.complete("demo", "tool:echo", "message")
        assert caught.value.code == "usage" and "prompt:NAME or resource:URI-TEMPLATE" in caught.value.message
        done = await ops.complete("demo", "prompt:greeting", "name", "A")
        assert done["server"] == "demo" and isinstance(done["values"], list)
        with pytest.raises(AgentError):
            await ops.read("demo", "demo://no/such/resource")
        with pytest.raises(AgentError):
            await ops.prompt("demo", "no_such_prompt", {})
        with pytest.raises(AgentError) as caught:
            await ops.call("demo", "echo", ["not", "an", "object"])
        assert caught.value.code == "invalid_arguments" and "must be a JSON object, not list" in caught.value.message
        with pytest.raises(AgentError) as caught:
            ops.save(str(tmp_path / "kept.json"))
        assert caught.value.code == "usage" and "must end in .mcpsession" in caught.value.message
        with pytest.raises(AgentError) as caught:
            ops.save(str(tmp_path / "no" / "such" / "kept.mcpsession"))
        assert caught.value.code == "usage" and "does not exist" in caught.value.message
        for asked in ({"limit": 0}, {"cursor": -1}):
            with pytest.raises(AgentError) as caught:
                ops.traffic("demo", **asked)
            assert caught.value.code == "usage"
        kept = ops.save(str(tmp_path / "kept.mcpsession"), "demo")
        assert (tmp_path / "kept.mcpsession").stat().st_size > 0 and kept
    finally:
        await hub.close_all()


async def test_a_bad_filter_and_a_timeout_that_cannot_be_are_refused_before_anything_runs():
    ops = Ops(Hub())
    with pytest.raises(AgentError) as caught:
        ops.traffic(None, "tool == ")
    assert caught.value.code == "bad_filter"
    assert caught.value.message.startswith("the filter does not parse: '==' needs a value after it (characters "
                                           "6–7): tool ⟦==⟧. ")  # where it is, said once
    for timeout in (-1, 0):  # a call sent and cancelled at once, or one waiting the default: neither was asked for
        with pytest.raises(AgentError) as caught:
            await run(ops, "spyglass_call", {"server": "demo", "tool": "echo", "timeout": timeout})
        assert caught.value.code == "invalid_arguments" and "/timeout" in caught.value.message


async def test_a_refusal_says_what_the_tool_is_once():
    from inspector.agent.hub import Connection
    from inspector.agent.ops import refuse_writes

    with pytest.raises(AgentError) as caught:
        await refuse_writes(Connection("srv", None), {"name": "add"}, {})  # no annotations: the spec's defaults
    assert caught.value.message.startswith("tool 'add' of 'srv' may change things (not marked read-only, open-world);")
