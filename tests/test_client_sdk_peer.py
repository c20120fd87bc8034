"""The client against a server written with the official Python SDK (`mcp` 2.x), both eras."""

from __future__ import annotations

import json

import pytest
from support import PY, SDK_SERVER, spec_validator

from inspector import errors as E
from inspector.client import Client
from inspector.protocol.versions import Era
from inspector.transport.stdio import StdioTransport


async def ask(params, context=None):
    assert "name" in json.dumps(params["requestedSchema"])
    return {"action": "accept", "content": {"name": "Ada"}}


def client(*flags: str, mode: str = "auto", frames=None, handlers=None) -> Client:
    return Client(StdioTransport([PY, str(SDK_SERVER), *flags]), mode=mode, timeout=30,
                  handlers={"elicitation/create": ask} if handlers is None else handlers,
                  traffic=frames.append if frames is not None else None)


@pytest.mark.parametrize("mode, flags, era", [
    ("auto", (), Era.MODERN),
    ("modern", (), Era.MODERN),
    ("legacy", (), Era.LEGACY),
    ("auto", ("--legacy-only",), Era.LEGACY),  # discover refused: falls back to initialize
    ("2025-06-18", (), Era.LEGACY),
])
async def test_both_eras_end_to_end(mode, flags, era):
    frames = []
    async with client(*flags, mode=mode, frames=frames) as c:
        assert c.era is era
        if mode == "2025-06-18":
            assert c.protocol_version == "2025-06-18"
        tools = {t["name"] for t in (await c.list_tools())["tools"]}
        assert {"add", "echo", "fail", "slow", "ask_name"} <= tools
        added = await c.call_tool("add", {"a": 2, "b": 3})
        assert added["structuredContent"] == {"result": 5}
        failed = await c.call_tool("fail", {})
        assert failed["isError"] is True
        progress = []
        await c.call_tool("slow", {"seconds": 0.3}, on_progress=lambda *a: progress.append(a))
        assert progress
        # elicitation: a server request in the legacy era, MRTR in the modern one
        greeting = await c.call_tool("ask_name", {})
        assert "Hello, Ada!" in json.dumps(greeting)
        assert (await c.read_resource("sdk://hello"))["contents"]
        assert "review" in {p["name"] for p in (await c.list_prompts())["prompts"]}
        with pytest.raises(E.RemoteError) if era is Era.MODERN else _no_error():
            await c.request("ping")  # ping does not exist in the modern era
    revision = "2026-07-28" if era is Era.MODERN else c.protocol_version
    request_type = "JSONRPCRequest"
    for frame in frames:
        if frame.direction == "out":
            msg = json.loads(frame.data)
            if "method" in msg and "id" in msg and msg["method"] != "server/discover":
                spec_validator(revision, request_type).validate(msg)
    if era is Era.MODERN:
        retries = [json.loads(f.data) for f in frames if f.direction == "out" and b"inputResponses" in f.data]
        assert retries and retries[0]["params"]["inputResponses"]
        first_state = next(json.loads(f.data)["result"]["requestState"] for f in frames
                           if f.direction == "in" and b'"input_required"' in f.data)
        assert retries[0]["params"]["requestState"] == first_state


class _no_error:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


async def test_modern_elicitation_without_the_capability_is_the_servers_error():
    async with client(handlers={}) as c:
        assert c.era is Era.MODERN
        with pytest.raises(E.RemoteError) as info:
            await c.call_tool("ask_name", {})
        assert info.value.code == -32021
