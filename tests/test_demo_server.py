"""The built-in demo server, through our own client, in both eras; every result
checked against the official schema of the revision in use."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from support import demo_cmd, spec_validator

from inspector import errors as E
from inspector.client import Client
from inspector.protocol.versions import Era
from inspector.transport.stdio import StdioTransport

CALLS = {
    "echo": {"message": "hi"},
    "markdown_report": {},
    "render_chart": {"values": [3, 1, 4, 1, 5]},
    "play_tone": {"frequency": 440, "duration_ms": 200},
    "get_config_file": {},
    "find_document": {"query": "readme"},
    "weather": {"city": "Oslo"},
    "divide": {"a": 1, "b": 4},
    "log_demo": {},
    "delete_item": {"id": "item-1", "confirm": True},
    "search_web": {"query": "otters"},
    "create_event": {"title": "Stand-up", "when": "2026-12-01T09:00:00Z",
                     "attendees": [{"name": "Ada", "email": "ada@example.org"}], "priority": None,
                     "all_day": False, "duration_minutes": 15, "location": {"room": "A", "floor": 2},
                     "reminder": {"minutes_before": 5}},
    "ask_user": {},
    "toggle_bonus_tool": {},
    "long_task": {"steps": 3, "step_ms": 20},
}


async def answer_form(params, context=None):
    return {"action": "accept", "content": {"name": "Ada", "colour": "blue"}}


def demo(mode: str, env: dict | None = None, frames=None, notes=None) -> Client:
    return Client(StdioTransport(demo_cmd(), env=env or {}), mode=mode, timeout=20,
                  handlers={"elicitation/create": answer_form}, log_level="debug" if mode != "legacy" else None,
                  traffic=frames.append if frames is not None else None,
                  on_notification=(lambda m, p: notes.append((m, p))) if notes is not None else None)


def fill(schema: dict) -> dict:
    return {k: "x" for k in schema.get("required", [])}


@pytest.mark.parametrize("mode, revision", [("auto", "2026-07-28"), ("legacy", "2025-11-25"),
                                            ("2025-06-18", "2025-06-18"), ("2024-11-05", "2024-11-05")])
async def test_every_tool_in_every_era_validates_against_the_spec(mode, revision):
    notes = []
    async with demo(mode, notes=notes) as c:
        assert c.protocol_version == revision
        assert c.hello.instructions
        if c.era is Era.LEGACY:
            await c.set_log_level("debug")
        listed = await c.list_tools()
        spec_validator(revision, "ListToolsResult").validate(listed)
        tools = listed["tools"]
        names = [t["name"] for t in tools]
        assert set(CALLS) <= set(names), set(CALLS) - set(names)
        kinds = set()
        for name in names:
            result = await c.call_tool(name, CALLS.get(name, fill(next(t for t in tools if t["name"] == name)
                                                                 ["inputSchema"])))
            spec_validator(revision, "CallToolResult").validate(result)
            if name == "ask_user" and revision < "2025-06-18":  # no elicitation before 2025-06-18
                assert "2025-06-18" in result["content"][0]["text"]
                continue
            assert result.get("isError") is not True, (name, result)
            kinds |= {b["type"] for b in result["content"]}
        expected = {"text", "image", "resource"}
        if revision >= "2025-03-26":
            expected.add("audio")
        if revision >= "2025-06-18":
            expected.add("resource_link")
        assert expected <= kinds
        if revision >= "2025-06-18":
            ask = await c.call_tool("ask_user", {})
            assert "Ada" in json.dumps(ask)
        error = await c.call_tool("divide", {"a": 1, "b": 0})
        assert error["isError"] is True
        for method, kw in [("resources/list", {}), ("resources/templates/list", {}), ("prompts/list", {})]:
            result = await c.request(method, kw or None)
            type_name = {"resources/list": "ListResourcesResult", "resources/templates/list":
                         "ListResourceTemplatesResult", "prompts/list": "ListPromptsResult"}[method]
            spec_validator(revision, type_name).validate(result)
        resources = (await c.list_resources())["resources"]
        for res in resources:
            read = await c.read_resource(res["uri"])
            spec_validator(revision, "ReadResourceResult").validate(read)
        prompt = await c.get_prompt("greeting", {"name": "Ada", "style": "pirate"})
        spec_validator(revision, "GetPromptResult").validate(prompt)
        if revision >= "2025-03-26":
            done = await c.complete({"type": "ref/prompt", "name": "greeting"}, {"name": "style", "value": "p"})
            assert "pirate" in done["completion"]["values"]
    logs = [p for m, p in notes if m == "notifications/message"]
    assert logs, "no log notifications arrived"


async def test_image_and_audio_are_real_media():
    async with demo("legacy") as c:
        chart = await c.call_tool("render_chart", {"values": [1, 2, 3]})
        png = base64.b64decode(next(b for b in chart["content"] if b["type"] == "image")["data"])
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        tone = await c.call_tool("play_tone", {"frequency": 440, "duration_ms": 300})
        wav = base64.b64decode(next(b for b in tone["content"] if b["type"] == "audio")["data"])
        assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE"


async def test_pagination_collects_every_page():
    frames = []
    async with demo("legacy", env={"SPYGLASS_DEMO_PAGE_SIZE": "2"}, frames=frames) as c:
        tools = (await c.list_tools())["tools"]
    pages = [f for f in frames if f.direction == "out" and b'"tools/list"' in f.data]
    assert len(tools) >= 15 and len(pages) == -(-len(tools) // 2)
    assert len({t["name"] for t in tools}) == len(tools)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_cancelling_a_long_task_stops_it(mode):
    frames = []
    async with demo(mode, frames=frames) as c:
        progress = []
        task = asyncio.create_task(c.call_tool("long_task", {"steps": 50, "step_ms": 100},
                                               on_progress=lambda *a: progress.append(a)))
        while len(progress) < 2:
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.4)
        assert (await c.call_tool("echo", {"message": "after"}))["content"][0]["text"].endswith("after")
    cancelled = [json.loads(f.data) for f in frames if b"notifications/cancelled" in f.data]
    assert cancelled and cancelled[0]["params"]["requestId"]
    assert len(progress) < 50


async def test_unknown_tool_is_a_json_rpc_error():
    async with demo("auto") as c:
        with pytest.raises(E.RemoteError) as info:
            await c.call_tool("nope", {})
        assert info.value.code == -32602
