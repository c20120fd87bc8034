"""The asyncio client over stdio against @modelcontextprotocol/server-everything."""

from __future__ import annotations

import asyncio

import pytest
from support import everything_cmd

from inspector import errors as E
from inspector.client import Client
from inspector.protocol.versions import Era
from inspector.transport.stdio import StdioTransport

PNG_MAGIC = "iVBORw0KGgo"

# Arguments a user would type for each tool; tools not listed here get their
# required properties filled from their schema.
ARGS = {
    "echo": {"message": "hello from spyglass"},
    "get-annotated-message": {"messageType": "success", "includeImage": True},
    "get-sum": {"a": 2, "b": 40},
    "get-structured-content": {"location": "Chicago"},
    "get-resource-links": {"count": 2},
    "get-resource-reference": {"resourceType": "Text", "resourceId": 2},
    # Never fetch a remote URL in tests: hand it a data: URL.
    "gzip-file-as-resource": {"name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8gd29ybGQ=",
                              "outputType": "resource"},
    "trigger-long-running-operation": {"duration": 0.4, "steps": 4},
    "simulate-research-query": {"topic": "otters"},
    "trigger-sampling-request": {"prompt": "say hi", "maxTokens": 20},
    "trigger-elicitation-request": {},
}


def fill_required(schema: dict) -> dict:
    out = {}
    for name in schema.get("required", []):
        prop = (schema.get("properties") or {}).get(name, {})
        if "enum" in prop:
            out[name] = prop["enum"][0]
        else:
            out[name] = {"string": "x", "number": 1, "integer": 1, "boolean": True, "array": [], "object": {}}.get(
                prop.get("type"), "x")
    return out


async def sampling(params, context=None):
    return {"role": "assistant", "content": {"type": "text", "text": "hi from a fake model"},
            "model": "spyglass-test", "stopReason": "endTurn"}


async def elicitation(params, context=None):
    schema = (params or {}).get("requestedSchema", {})
    content = {}
    for name, prop in (schema.get("properties") or {}).items():
        if "default" in prop:
            content[name] = prop["default"]
        elif prop.get("type") == "string" and prop.get("oneOf"):
            content[name] = prop["oneOf"][0]["const"]  # a titled single choice
        elif prop.get("type") == "string":
            content[name] = prop.get("enum", ["spyglass"])[0] if "enum" in prop else "spyglass"
        elif prop.get("type") in ("number", "integer"):
            content[name] = prop.get("minimum", 1)
        elif prop.get("type") == "boolean":
            content[name] = True
        elif prop.get("type") == "array":
            items = prop.get("items", {})
            choices = items.get("enum") or [o.get("const") for o in items.get("anyOf", []) if "const" in o]
            content[name] = choices[:1]
    return {"action": "accept", "content": content}


async def roots(params, context=None):
    return {"roots": [{"uri": "file:///tmp/spyglass-root", "name": "scratch"}]}


def make_client(**kw) -> Client:
    frames = kw.pop("frames", None)
    return Client(StdioTransport(everything_cmd()),
                  handlers={"sampling/createMessage": sampling, "elicitation/create": elicitation,
                            "roots/list": roots},
                  traffic=frames.append if frames is not None else None, timeout=30, **kw)


async def test_every_tool_is_listed_and_called():
    notes: list[tuple[str, dict]] = []
    async with make_client(on_notification=lambda m, p: notes.append((m, p))) as client:
        assert client.era is Era.LEGACY and client.protocol_version == "2025-11-25"
        assert client.hello.server_info["name"]
        tools = (await client.list_tools())["tools"]
        names = {t["name"] for t in tools}
        # the capabilities we declared unlock the server's client-feature tools
        assert {"echo", "get-sum", "get-tiny-image", "trigger-sampling-request",
                "trigger-elicitation-request", "get-roots-list"} <= names
        kinds_seen: set[str] = set()
        for tool in tools:
            args = ARGS.get(tool["name"], fill_required(tool.get("inputSchema", {})))
            progress = []
            result = await client.call_tool(tool["name"], args, on_progress=lambda *a: progress.append(a))
            assert result.get("isError") is not True, (tool["name"], result)
            if (tool.get("execution") or {}).get("taskSupport") == "required":
                # run as a task (2025-11-25): the result came through tasks/result
                assert "Research Report" in result["content"][0]["text"]
                assert result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]
            assert result["content"], tool["name"]
            kinds_seen |= {block["type"] for block in result["content"]}
            if tool["name"] == "get-sum":
                assert "42" in result["content"][0]["text"]
            if tool["name"] == "get-tiny-image":
                image = next(b for b in result["content"] if b["type"] == "image")
                assert image["data"].startswith(PNG_MAGIC) and image["mimeType"] == "image/png"
            if tool["name"] == "get-structured-content":
                assert "temperature" in result["structuredContent"]
            if tool["name"] == "trigger-long-running-operation":
                assert len(progress) >= 3, progress
            if tool["name"] == "trigger-sampling-request":
                assert "hi from a fake model" in str(result)
            if tool["name"] == "get-roots-list":
                assert "spyglass-root" in str(result)
        assert {"text", "image", "resource", "resource_link"} <= kinds_seen


async def test_resources_prompts_and_completion():
    async with make_client() as client:
        resources = (await client.list_resources())["resources"]
        assert len(resources) >= 5
        read = await client.read_resource(resources[0]["uri"])
        assert read["contents"][0]["uri"] == resources[0]["uri"]
        templates = (await client.list_resource_templates())["resourceTemplates"]
        assert templates
        prompts = (await client.list_prompts())["prompts"]
        names = {p["name"] for p in prompts}
        assert "simple-prompt" in names
        got = await client.get_prompt("simple-prompt")
        assert got["messages"][0]["role"] == "user"
        args_prompt = next(p for p in prompts if p.get("arguments"))
        completion = await client.complete({"type": "ref/prompt", "name": args_prompt["name"]},
                                           {"name": args_prompt["arguments"][0]["name"], "value": ""})
        assert isinstance(completion["completion"]["values"], list)
        assert await client.ping() < 5
        await client.set_log_level("debug")


async def test_traffic_hook_sees_every_frame_in_order():
    frames = []
    async with make_client(frames=frames) as client:
        await client.call_tool("echo", {"message": "traced"})
    outs = [f for f in frames if f.direction == "out"]
    ins = [f for f in frames if f.direction == "in"]
    assert b'"method":"server/discover"' in outs[0].data  # the auto probe
    assert any(b"initialize" in f.data for f in outs) and any(b"traced" in f.data for f in ins)
    assert all(a.mono <= b.mono for a, b in zip(frames, frames[1:]))


async def test_unknown_tool_is_reported_by_the_server():
    async with make_client() as client:
        result = await client.call_tool("no-such-tool", {})
        assert result.get("isError") is True  # server-everything reports it in the result


async def test_cancel_a_long_call_sends_cancelled_and_the_client_goes_on():
    frames = []
    async with make_client(frames=frames) as client:
        task = asyncio.create_task(client.call_tool("trigger-long-running-operation", {"duration": 30, "steps": 30}))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.1)
        assert any(b"notifications/cancelled" in f.data for f in frames if f.direction == "out")
        assert "traced" not in str(await client.call_tool("echo", {"message": "still alive"}))


async def test_timeout_cancels_and_says_so():
    frames = []
    async with make_client(frames=frames) as client:
        with pytest.raises(E.RequestTimeout) as info:
            await client.call_tool("trigger-long-running-operation", {"duration": 5, "steps": 1}, timeout=0.3)
        assert "0.3 s" in str(info.value)
        await asyncio.sleep(0.05)
        assert any(b"notifications/cancelled" in f.data for f in frames if f.direction == "out")


async def test_progress_resets_the_timeout():
    async with make_client() as client:
        progress = []
        # 12 steps over 3 s: each step comes well within the 1 s timeout, the whole call does not
        result = await client.call_tool("trigger-long-running-operation", {"duration": 3, "steps": 12},
                                        on_progress=lambda *a: progress.append(a), timeout=1.0)
        assert result.get("isError") is not True and len(progress) >= 11
