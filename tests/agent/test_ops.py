"""The agent core without any MCP around it: a hub of named connections to the demo server, every operation
and its refusals, each a sentence an agent can act on."""

from __future__ import annotations

import json

import pytest
from support import demo_cmd

from inspector.agent.errors import AgentError
from inspector.agent.hub import Hub
from inspector.agent.ops import Ops, allow_all


@pytest.fixture
async def ops():
    hub = Hub(timeout=20)
    yield Ops(hub)
    await hub.close_all()


async def test_open_list_call_traffic_log(ops, tmp_path):
    opened = await ops.connect("demo", command=demo_cmd())
    assert opened["status"] == "connected" and opened["tools"] > 5
    assert [s["name"] for s in ops.servers()["servers"]] == ["demo"]
    tools = await ops.listing("demo", "tools")
    weather = next(t for t in tools["items"] if t["name"] == "weather")
    assert weather["annotations"]["readOnlyHint"] is True and weather["annotations"]["mayChangeThings"] is False
    delete = next(t for t in tools["items"] if t["name"] == "delete_item")
    assert delete["annotations"]["mayChangeThings"] is True
    for kind in ("resources", "templates", "prompts"):
        assert (await ops.listing("demo", kind))["count"] >= 1
    done = await ops.call("demo", "weather", {"city": "Oslo"})
    assert done["outcome"] == "ok" and "temperature" in str(done["result"])
    assert "welcome" in str(await ops.read("demo", "demo://docs/welcome.txt"))
    assert (await ops.prompt("demo", "greeting", {"name": "Ada"}))["result"]["messages"]
    page = ops.traffic("demo", 'method == "tools/call"', limit=1)
    assert page["matched"] == 2 and len(page["frames"]) == 1 and page["frames"][0]["dir"] == "out"
    rest = ops.traffic("demo", 'method == "tools/call"', cursor=page["nextCursor"])
    assert rest["frames"][0]["dir"] == "in" and rest["frames"][0]["latencyMs"] >= 0 and "nextCursor" not in rest
    assert rest["frames"][0]["pair"] == page["frames"][0]["n"]
    assert ops.log("demo")["entries"]
    saved = ops.save(str(tmp_path / "s.mcpsession"))
    assert saved["frames"] > 4 and (tmp_path / "s.mcpsession").exists()


async def test_refusals_are_sentences(ops):
    with pytest.raises(AgentError, match="no server named 'nope' is open") as info:
        await ops.call("nope", "weather", {})
    assert info.value.code == "unknown_server"
    await ops.connect("demo", catalog="demo")
    with pytest.raises(AgentError, match="has no tool named 'wether'.*weather"):
        await ops.call("demo", "wether", {})
    with pytest.raises(AgentError, match="do not fit its inputSchema: .*city") as info:
        await ops.call("demo", "weather", {"city": 5})
    assert info.value.details["errors"]
    with pytest.raises(AgentError, match="may change things.*--allow-writes") as info:
        await ops.call("demo", "delete_item", {"id": "item-1", "confirm": True})
    assert info.value.code == "refused"
    with pytest.raises(AgentError, match="does not parse") as info:
        ops.traffic("demo", 'method == "tools/call" &&')
    assert info.value.code == "bad_filter"
    with pytest.raises(AgentError, match="already open"):
        await ops.connect("demo", command=demo_cmd())
    with pytest.raises(AgentError, match="exactly one of"):
        await ops.connect("x", command=demo_cmd(), url="http://127.0.0.1:1/mcp")
    ops.gate = allow_all
    assert (await ops.call("demo", "delete_item", {"id": "item-1", "confirm": True}))["outcome"] in ("ok",
                                                                                                     "tool error")


async def test_a_server_that_does_not_start_stays_listed(ops):
    with pytest.raises(AgentError, match="did not connect.*spyglass_restart"):
        await ops.connect("bad", command=["python3", "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"])
    assert ops.servers()["servers"][0]["status"] in ("error", "exited")
    await ops.disconnect("bad")
    assert ops.servers()["servers"] == []


async def test_a_crash_a_hang_and_a_flood_are_reported_and_the_hub_lives_on(ops):
    from support import hostile_cmd

    ops.gate = allow_all
    await ops.connect("crash", command=hostile_cmd("exit-during-call"))
    crashed = await ops.call("crash", "echo", {"message": "x"})
    assert crashed["outcome"] == "failed" and crashed["error"]
    assert any("panic: boom" in e["text"] for e in ops.log("crash")["entries"])
    with pytest.raises(AgentError, match="fix it and call spyglass_restart"):
        await ops.call("crash", "echo", {"message": "x"})
    await ops.connect("hang", command=hostile_cmd("no-reply"))
    with pytest.raises(AgentError, match="gave no answer within 0.5 s; the call was cancelled"):
        await ops.call("hang", "echo", {"message": "x"}, timeout=0.5)
    assert ops.hub.get("hang").session.calls.history[-1].outcome == "timeout"  # the call's own timeout ends it
    await ops.connect("flood", command=hostile_cmd("flood", "3000"))
    assert (await ops.call("flood", "echo", {"message": "x"}))["outcome"] == "ok"
    page = ops.traffic("flood", 'method == "notifications/message"', limit=10, bodies=False)
    assert page["matched"] == 3000 and len(page["frames"]) == 10 and page["nextCursor"] > 0
    assert (await ops.call("flood", "echo", {"message": "again"}))["outcome"] == "ok"


async def test_a_listing_too_big_is_cut_to_whole_items(ops):
    from support import hostile_cmd

    from inspector.agent.ops import fitting

    kept, cut = fitting([{"name": "x" * 60_000}] * 3)
    assert len(kept) == 1 and cut is True  # whole items (the outputSchema says an array), never a cut string
    await ops.connect("big", command=hostile_cmd("big-schema"))
    listed = await ops.listing("big", "tools")
    assert isinstance(listed["items"], list) and listed["count"] >= 3
    names = [t["name"] for t in listed["items"]]
    left = [t["name"] for t in ops.hub.get("big").session.tools.items if t["name"] not in names]
    assert left and names[-1] == ops.hub.get("big").session.tools.items[-1]["name"]  # one too big, the next kept
    assert f"left out: {', '.join(left)}" in listed["note"] and "frame=n" in listed["note"]
    answers = ops.traffic("big", 'method == "tools/list" && dir == in', bodies=False)["frames"]
    text, offset = "", 0
    while offset is not None:  # the whole answer, page after page
        page = ops.traffic("big", frame=answers[-1]["n"], offset=offset)
        text += page["frames"][0]["text"]
        offset = page.get("nextOffset")
    assert {t["name"] for t in json.loads(text)["result"]["tools"]} >= set(left)


async def test_a_result_too_big_is_read_whole_from_its_frame(ops):
    from support import hostile_cmd

    ops.gate = allow_all
    await ops.connect("big", command=hostile_cmd("big-reply", "1"))
    done = await ops.call("big", "echo", {"message": "x"})
    assert done["result"]["truncated"] is True
    n = int(done["note"].split("frame=")[1].split()[0])
    text, offset, pages = "", 0, 0
    while offset is not None:
        page = ops.traffic(None, frame=n, offset=offset)
        text += page["frames"][0]["text"]
        offset, pages = page.get("nextOffset"), pages + 1
    assert pages > 10 and len(json.loads(text)["result"]["content"][0]["text"]) == 1024 * 1024
    for wrong in ({"frame": 10**6}, {"frame": n, "offset": -1}):
        with pytest.raises(AgentError) as caught:
            ops.traffic(None, **wrong)
        assert caught.value.code == "usage"


async def test_a_calls_own_timeout_decides_how_long_it_may_take(tmp_path):
    """spyglass_call's `timeout` (default 300 s), not the hub's per-request timeout: a tool that works longer
    than the hub's timeout answers when the call allows it, and one that outlasts its own is cancelled."""
    import sys
    from pathlib import Path

    hub = Hub(timeout=20)
    ops = Ops(hub)
    try:
        server = Path(__file__).with_name("cancel_server.py")
        await ops.connect("slow", command=[sys.executable, str(server), str(tmp_path / "record")])
        hub.connected("slow").client.timeout = 1.0  # the connection's per-request timeout, once connected
        slow = await ops.call("slow", "sleep", {"seconds": 1.6}, timeout=20)
        assert slow["outcome"] == "ok" and slow["elapsedMs"] > 1500
        with pytest.raises(AgentError, match="gave no answer within 0.5 s; the call was cancelled") as caught:
            await ops.call("slow", "sleep", {"seconds": 5}, timeout=0.5)
        assert caught.value.code == "timeout"
    finally:
        await hub.close_all()


async def test_a_call_after_the_tool_list_changed_sees_the_new_list(ops):
    """The server says its tool list changed: the next call is judged (found, and its annotations read for the
    approval) on the list as the server now gives it, not the one read before."""
    ops.gate = allow_all
    await ops.connect("demo", command=demo_cmd(), era="legacy")  # list_changed comes before the call's answer
    await ops.call("demo", "toggle_bonus_tool", {})
    found = await ops.call("demo", "bonus", {})
    assert found["outcome"] == "ok"


def test_a_tool_is_found_by_name_in_an_index_built_once_per_listing():
    from inspector.agent.ops import tool_index

    listing = [{"name": "a", "n": 1}, "not a tool", {"name": 7}, {"name": "b"}, {"name": "a", "n": 2}]
    index = tool_index(listing)
    assert index == {"a": {"name": "a", "n": 1}, "b": {"name": "b"}}  # the first of a name, as a scan finds it
    assert tool_index(listing) is index  # a call on a server of thousands of tools does not read them all
    listing.append({"name": "c"})  # never done to a listing, but an index does not go stale
    assert "c" in tool_index(listing)
    assert tool_index([{"name": "a", "n": 3}])["a"]["n"] == 3  # the next listing is its own
