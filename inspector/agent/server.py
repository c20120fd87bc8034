"""`spyglass mcp`'s server: the official Python SDK's low-level server (both protocol eras, its own
conformance) serving the tool table of `tools.py` over the hub's operations.

A tool's answer is its `structuredContent` and the same JSON as text; a refusal or failure is a tool error
(`isError`) whose text is the `AgentError`'s sentence, never a traceback. Over HTTP the server binds loopback
only and every request must carry `Authorization: Bearer TOKEN` (compared in constant time), the token printed
at start. The SDK is imported here only, so nothing else in Spyglass pays for it.
"""

from __future__ import annotations

import hmac
import json
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from .. import __version__
from .. import errors as E
from .errors import AgentError
from .hub import error_of
from .ops import Ops
from .tools import TOOLS, definitions, run

log = logging.getLogger("spyglass.agent")

INSTRUCTIONS = ("Spyglass inspects MCP servers for you: spyglass_connect one (a command, URL or catalog name), "
                "then spyglass_list, spyglass_call, spyglass_traffic to see the frames, spyglass_check for "
                "findings, spyglass_restart after editing it, spyglass_rerun to compare. Connections stay open "
                "between calls. `spyglass mcp --skill` prints the whole debugging loop.")


def result_of(value: dict[str, Any]) -> types.CallToolResult:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=value)


def error_result(error: AgentError) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=error.message)], is_error=True)


def client_name(ctx: Any) -> str | None:
    """The agent's name as its MCP session gave it (clientInfo: the title, else the name), for the window."""
    params = getattr(getattr(ctx, "session", None), "client_params", None)  # either era: the SDK makes it
    info = getattr(params, "client_info", None)
    name = getattr(info, "title", None) or getattr(info, "name", None)
    return name[:200] if isinstance(name, str) and name else None


Runner = Callable[[str, Any, str | None], Awaitable[dict[str, Any]]]  # tool, arguments, the client's name


def runner_of(ops: Ops) -> Runner:
    """Run the tools on a hub of this process's own (`spyglass mcp --private`)."""
    return lambda name, arguments, _client: run(ops, name, arguments)


def build(runner: Runner) -> Server[Any]:
    tools = [types.Tool.model_validate(d) for d in definitions()]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in TOOLS:  # an unknown tool is a protocol error, not a tool's failure
            raise MCPError(types.INVALID_PARAMS, f"Spyglass has no tool named {params.name!r}; its tools: "
                           f"{', '.join(TOOLS)}")
        try:
            return result_of(await runner(params.name, params.arguments, client_name(ctx)))
        except AgentError as exc:
            return error_result(exc)
        except Exception as exc:  # a bug of ours: still an answer the agent can read, and logged
            log.exception("tool %s failed", params.name)
            return error_result(error_of(exc))

    return Server("spyglass", version=__version__, title="Spyglass", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(runner: Runner) -> None:
    from mcp.server.stdio import stdio_server

    server = build(runner)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


class BearerGate:
    """An ASGI wrapper: a request without `Authorization: Bearer TOKEN` gets 401 and reaches nothing."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
            if not hmac.compare_digest(given, self.expected):
                body = b'{"error": "a bearer token is required: the one spyglass mcp printed when it started"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="spyglass"')]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def bind_loopback(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise E.UsageError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    return sock


async def serve_http(runner: Runner, sock: socket.socket, token: str, announce: Any) -> None:
    import uvicorn

    server = build(runner)
    app = BearerGate(server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1"), token)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    uv = uvicorn.Server(config)
    import asyncio

    async def ready() -> None:
        while not uv.started:
            if uv.should_exit:
                return
            await asyncio.sleep(0.01)
        announce()

    waiter = asyncio.ensure_future(ready())
    try:
        await uv.serve(sockets=[sock])
    finally:
        waiter.cancel()
