"""`spyglass mcp`'s server: the official Python SDK's low-level server (both protocol eras, its own
conformance) serving the tool table of `tools.py` over the hub's operations.

A tool's answer is its `structuredContent` and the same JSON as text; a refusal or failure is a tool error
(`isError`) whose text is the `AgentError`'s sentence, never a traceback. Over HTTP the server binds loopback
only and every request must carry `Authorization: Bearer TOKEN` (compared in constant time), the token printed
at start. The SDK is imported here only, so nothing else in Spyglass pays for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import socket
import stat
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
from .remote import LINE_LIMIT
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
    pipes = await stdio_pipes()
    try:
        streams = stdio_server(*pipes) if pipes is not None else stdio_server()
        async with streams as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    except* (BrokenPipeError, ConnectionResetError):  # the agent went away: nobody is left to answer
        log.info("the agent closed its end of stdio: ending")
    finally:
        if pipes is not None:
            pipes[1].close()


class _Lines:
    """stdin as the SDK's `stdio_server` reads it (lines of text), from an asyncio pipe: the SDK's own reads
    each line in a worker thread, and writes and flushes each answer in two more, which cost more than
    everything else `spyglass mcp` does for a forwarded call."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self.reader.readline()
        except ValueError:  # a line over LINE_LIMIT: the agent's stream cannot be followed any further
            log.error("a request on stdin is over %d bytes: ending", LINE_LIMIT)
            raise StopAsyncIteration from None
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class _Out:
    """stdout as the SDK's `stdio_server` writes it, to an asyncio pipe (written at once, drained at flush)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()

    def close(self) -> None:
        self.writer.close()


async def stdio_pipes() -> tuple[Any, Any] | None:
    """The process's stdin and stdout as asyncio pipes, claimed as the SDK claims them (while serving, fd 0
    reads the null device and fd 1 goes to stderr, so a stray print or child cannot corrupt the wire).
    None where asyncio cannot watch them (a regular file, or Windows): the SDK's own threads serve then."""
    loop = asyncio.get_running_loop()
    try:
        if not all(_watchable(os.fstat(fd).st_mode) for fd in (0, 1)):
            return None
    except OSError:
        return None
    in_fd, out_fd = os.dup(0), os.dup(1)
    try:
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(in_fd, "rb", 0))
        transport, protocol = await loop.connect_write_pipe(lambda: asyncio.StreamReaderProtocol(
            asyncio.StreamReader()), os.fdopen(out_fd, "wb", 0))
    except (OSError, ValueError, NotImplementedError):
        for fd in (in_fd, out_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        return None
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return _Lines(reader), _Out(asyncio.StreamWriter(transport, protocol, None, loop))


def _watchable(mode: int) -> bool:
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class BearerGate:
    """An ASGI wrapper: a request without `Authorization: Bearer TOKEN` gets 401 and reaches nothing."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
            scheme, _, credentials = given.partition(b" ")  # the scheme's case is not significant (RFC 9110)
            if not (hmac.compare_digest(credentials, self.expected) and scheme.lower() == b"bearer"):
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
