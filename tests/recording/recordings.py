"""Sessions recorded for the recording tests: a real ServerSession against a real peer, every frame into a
TrafficStore file, as the window records them (server definitions in the file's meta)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from support import PY, ROOT, SDK_SERVER, SLOWDOWN, everything_cmd

from inspector import errors as E
from inspector.config import ServerSpec
from inspector.recording.files import definition_of
from inspector.session import ServerSession, SessionOptions
from inspector.traffic import TrafficStore
from inspector.transport.factory import TransportOptions, open_transport


class Ada:
    """Answers every elicitation with the name Ada (an Answerer)."""

    async def elicit(self, session: Any, params: dict[str, Any], call: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    async def sample(self, session: Any, params: dict[str, Any], call: Any) -> dict[str, Any] | None:
        return {"role": "assistant", "content": {"type": "text", "text": "a recorded reply"}, "model": "test",
                "stopReason": "endTurn"}

    async def share_roots(self, session: Any, roots: list[dict[str, Any]], call: Any) -> bool:
        return True


async def _record(store: TrafficStore, spec: ServerSpec, mode: str, script: Any) -> None:
    store.set_meta(f"server:{spec.name}", json.dumps(definition_of(spec)))
    session = ServerSession(spec, spec.name, SessionOptions(mode=mode, timeout=30 * SLOWDOWN, load_lists=False,
                                                            listen=False, heartbeat_s=None),
                            answerer=Ada(), traffic=store.hook(spec.name))
    try:
        await session.open(open_transport(spec, TransportOptions()))
        await script(session.need_client())
    finally:
        await session.close()


async def sdk_script(client: Any) -> None:
    await client.list_tools()
    await client.call_tool("add", {"a": 2, "b": 3})
    await client.call_tool("echo", {"message": "hello"})
    await client.call_tool("fail", {})
    await client.call_tool("ask_name", {})
    await client.list_resources()
    await client.read_resource("sdk://hello")
    await client.list_prompts()
    try:
        await client.call_tool("no-such-tool", {})
    except E.RemoteError:
        pass


async def everything_script(client: Any) -> None:
    await client.list_tools()
    await client.call_tool("echo", {"message": "hello everything"})
    await client.call_tool("get-sum", {"a": 1, "b": 2})
    await client.list_resources()
    await client.list_prompts()


def sdk_spec(*flags: str) -> ServerSpec:
    return ServerSpec(name="sdk", command=[PY, str(SDK_SERVER), *flags], env={"SDK_API_TOKEN": "not-for-sharing"})


def record(path: Path, spec: ServerSpec, mode: str, script: Any) -> Path:
    store = TrafficStore(path)
    try:
        asyncio.run(_record(store, spec, mode, script))
    finally:
        store.close()
    return path


def record_sdk(path: Path, mode: str) -> Path:
    return record(path, sdk_spec(), mode, sdk_script)


def record_everything(path: Path) -> Path:
    return record(path, ServerSpec(name="everything", command=everything_cmd()), "auto", everything_script)


def spyglass(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "inspector", *args], capture_output=True, text=True, timeout=timeout * SLOWDOWN,
                          cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)})


SDK = [PY, str(SDK_SERVER)]
__all__ = ["SDK", "record_everything", "record_sdk", "spyglass", "sys"]
