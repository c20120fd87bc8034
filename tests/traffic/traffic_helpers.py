"""Real traffic for the traffic tests: our client against the demo server and the
hostile server, every frame captured through the client's `traffic` hook."""

from __future__ import annotations

import asyncio
import sys
from functools import cache
from pathlib import Path

from inspector import errors as E
from inspector.client import Client
from inspector.traffic import Frame, TrafficStore
from inspector.transport.stdio import StdioTransport

Captured = tuple[tuple[str, Frame], ...]

# Not `from conftest import ...`: another folder's conftest.py can take that module name.
ROOT = Path(__file__).resolve().parents[2]


def demo_cmd() -> list[str]:
    return [sys.executable, "-m", "inspector.demo"]


def hostile_cmd(*cases: str) -> list[str]:
    return [sys.executable, str(ROOT / "tests" / "hostile" / "server.py"), *cases]


async def _answer_form(params, context=None):
    return {"action": "accept", "content": {"name": "Ada", "colour": "blue"}}


async def _demo(frames: list) -> None:
    client = Client(StdioTransport(demo_cmd()), mode="legacy", timeout=20,
                    handlers={"elicitation/create": _answer_form},
                    traffic=lambda f: frames.append(("demo", f)))
    async with client as c:
        await c.set_log_level("debug")
        await c.list_tools()
        await c.call_tool("echo", {"message": "hello traffic"})
        await c.call_tool("divide", {"a": 1, "b": 4})
        try:
            await c.call_tool("nope", {})
        except E.RemoteError:
            pass
        await c.call_tool("log_demo", {})
        await c.call_tool("long_task", {"steps": 3, "step_ms": 10}, on_progress=lambda *a: None)
        await c.call_tool("ask_user", {})
        await c.list_resources()
        await c.list_prompts()
        await c.ping()


async def _hostile(frames: list) -> None:
    client = Client(StdioTransport(hostile_cmd("noise", "server-pings", "2")), mode="legacy", timeout=20,
                    traffic=lambda f: frames.append(("hostile", f)))
    async with client as c:
        await c.call_tool("echo", {"message": "through the noise"})
    client = Client(StdioTransport(hostile_cmd("exit-during-call")), mode="legacy", timeout=20,
                    traffic=lambda f: frames.append(("hostile", f)))
    async with client as c:
        try:
            await c.call_tool("echo", {"message": "bye"})
        except E.SpyglassError:
            pass


@cache
def real_frames() -> Captured:
    """Frames of a demo-server session then of two hostile-server sessions."""
    frames: list[tuple[str, Frame]] = []

    async def run() -> None:
        await _demo(frames)
        await _hostile(frames)

    asyncio.run(run())
    return tuple(frames)


def filled_store(path: str = ":memory:") -> TrafficStore:
    store = TrafficStore(path)
    for server, frame in real_frames():
        store.add(server, frame)
    return store
