"""Subscriptions, roots, cached lists and templates, against the demo server and
server-everything (both eras)."""

from __future__ import annotations

import asyncio
import json

from support import demo_cmd, everything_cmd

from inspector.client import Client
from inspector.protocol.versions import Era
from inspector.transport.stdio import StdioTransport


def client(cmd, mode="auto", frames=None, notes=None, **kw) -> Client:
    return Client(StdioTransport(cmd), mode=mode, timeout=20, traffic=frames.append if frames is not None else None,
                  on_notification=(lambda m, p: notes.append((m, p))) if notes is not None else None, **kw)


async def wait_for(predicate, seconds=5.0):
    for _ in range(int(seconds / 0.02)):
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return False


async def test_modern_listen_is_acknowledged_delivers_and_closes():
    frames, notes = [], []
    async with client(demo_cmd(), frames=frames, notes=notes) as c:
        assert c.era is Era.MODERN
        sub = await c.listen({"toolsListChanged": True, "resourceSubscriptions": ["demo://live/clock"],
                              "promptsListChanged": True})
        assert sub.granted["toolsListChanged"] is True
        assert isinstance(sub.refused, list)
        await c.call_tool("toggle_bonus_tool", {})
        assert await wait_for(lambda: any(m == "notifications/tools/list_changed" for m, _ in notes))
        changed = next(p for m, p in notes if m == "notifications/tools/list_changed")
        assert changed["_meta"]["io.modelcontextprotocol/subscriptionId"] == sub.id
        assert "bonus" in {t["name"] for t in (await c.list_tools())["tools"]}
        await sub.close()
    cancels = [json.loads(f.data) for f in frames if f.direction == "out" and b"notifications/cancelled" in f.data]
    assert cancels and cancels[-1]["params"]["requestId"] == sub.id


async def test_legacy_subscribe_and_list_changed_invalidates_the_cache():
    notes = []
    async with client(demo_cmd(), mode="legacy", notes=notes) as c:
        assert await c.subscribe("demo://live/clock") == {}
        before = {t["name"] for t in (await c.list_tools())["tools"]}
        await c.call_tool("toggle_bonus_tool", {})
        assert await wait_for(lambda: any(m == "notifications/tools/list_changed" for m, _ in notes))
        after = {t["name"] for t in (await c.list_tools())["tools"]}
        assert after - before == {"bonus"}
        await c.unsubscribe("demo://live/clock")


async def test_cached_lists_are_reused_within_ttl_and_refresh_bypasses():
    frames = []
    async with client(demo_cmd(), frames=frames) as c:
        first = await c.list_resources()
        ttl = first.get("ttlMs")
        assert isinstance(ttl, int) and ttl > 0, first.keys()
        await c.list_resources()
        sent = lambda: sum(1 for f in frames if f.direction == "out" and b'"resources/list"' in f.data)
        assert sent() == 1  # served from the cache
        await c.list_resources(refresh=True)
        assert sent() == 2


async def test_roots_answered_and_changes_announced():
    frames = []
    roots = [{"uri": "file:///tmp/project", "name": "project"}]
    async with client(everything_cmd(), mode="legacy", frames=frames, roots=roots) as c:
        result = await c.call_tool("get-roots-list", {})
        assert "file:///tmp/project" in json.dumps(result)
        await c.set_roots([{"uri": "file:///tmp/other", "name": "other"}])
        await asyncio.sleep(0.3)
        result = await c.call_tool("get-roots-list", {})
        assert "file:///tmp/other" in json.dumps(result)
    assert any(b"notifications/roots/list_changed" in f.data for f in frames if f.direction == "out")


async def test_resource_template_read_through_expansion():
    from inspector.templates import check, expand

    async with client(demo_cmd(), mode="legacy") as c:
        template = (await c.list_resource_templates())["resourceTemplates"][0]["uriTemplate"]
        names = check(template)
        done = await c.complete({"type": "ref/resource", "uri": template}, {"name": names[0], "value": ""})
        value = done["completion"]["values"][0]
        read = await c.read_resource(expand(template, {names[0]: value}))
        assert read["contents"][0]["uri"].endswith(value)
