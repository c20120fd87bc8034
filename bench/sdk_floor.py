"""The floor of the `spyglass mcp` path (`bench/agent_calls.py`'s "SDK floor"): the official SDK's low-level
`Server` (the library `spyglass mcp` must be built on, the one `inspector/agent/server.py` builds) on the same
asyncio stdin/stdout pipes as `spyglass mcp` (`server.stdio_pipes`), with one tool, `forward`, that sends
`{"tool", "arguments"}` to the server with a minimal newline-JSON client on an open connection and returns its
result as `spyglass_call` does: structuredContent of the same shape and the same JSON as text, under the same
`outputSchema` (every Spyglass tool declares one, so the agent's SDK client validates each answer against it,
about 50 us a call: on both paths alike). No hub, no recording, no checks, no second process: what
`spyglass mcp` costs beyond this is Spyglass's own.

    python bench/sdk_floor.py SERVER-COMMAND...
"""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from inspector.agent.server import stdio_pipes
from inspector.agent.tools import CALL_OUT


async def main(command: list[str]) -> None:
    proc = await asyncio.create_subprocess_exec(*command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    ids = itertools.count(1)

    async def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        i = next(ids)
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method,  # type: ignore[union-attr]
                                     "params": params}).encode() + b"\n")
        while True:
            reply = json.loads(await proc.stdout.readline())  # type: ignore[union-attr]
            if reply.get("id") == i:
                return reply  # type: ignore[no-any-return]

    await ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "sdk-floor", "version": "0"}})
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    tool = types.Tool(name="forward", description="forwards a call", input_schema={"type": "object"},
                      output_schema=CALL_OUT)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        a = params.arguments or {}
        reply = await ask("tools/call", {"name": a["tool"], "arguments": a.get("arguments", {})})
        value = {"server": "bench", "tool": a["tool"], "outcome": "ok", "result": reply.get("result")}
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(value))],
                                    structured_content=value)

    server = Server("sdk-floor", on_list_tools=list_tools, on_call_tool=call_tool)
    pipes = await stdio_pipes()
    assert pipes is not None, "run it with pipes on stdin and stdout"
    async with stdio_server(*pipes) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
    proc.stdin.close()
    await proc.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
