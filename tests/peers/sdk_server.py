"""A "real peer" for Spyglass's integration tests, built on the official MCP Python SDK.

    python tests/peers/sdk_server.py [--transport stdio|http] [--port N]
                                     [--stateless] [--json-response]
                                     [--legacy-only] [--log-level LEVEL]

Everything here is the SDK's own behaviour (``mcp`` 2.x, ``MCPServer``); the
point is to let our client talk to an implementation we did not write.

Surface
-------
tools
    ``add(a: int, b: int)``   -> text ``"5"`` plus structuredContent ``{"result": 5}``
    ``echo(message: str)``    -> text ``message``
    ``fail()``                -> ``isError: true`` result (a ``ToolError``)
    ``tone()``                -> one audio block: a 0.25 s silent WAV
    ``slow(seconds: float)``  -> sleeps, sending ``notifications/progress`` every
                                 0.1 s when the request carries a progressToken
    ``ask_name()``            -> asks the user for a name through elicitation and
                                 greets them (see "Protocol eras" below)
resources
    ``sdk://hello``           -> text ``"Hello from the SDK peer"``
    ``sdk://greet/{name}``    -> template, text ``"Hello, {name}!"``
prompts
    ``review(code: str)``     -> one user message asking to review ``code``

Protocol eras
-------------
mcp 2.3.0 speaks both eras on one server, without any switch:

* stdio: the client's *first request* decides, once per connection.
  ``initialize`` opens a handshake-era (2024-11-05 .. 2025-11-25) connection;
  a request whose ``params._meta`` carries
  ``io.modelcontextprotocol/protocolVersion`` (e.g. ``server/discover``) opens
  a 2026-07-28 ("modern", stateless) connection. The other era is then refused.
* http: each POST is routed by its ``MCP-Protocol-Version`` header; a value
  outside the handshake versions (``2026-07-28``) takes the SDK's single
  exchange modern path (no session id, no initialize), anything else the
  legacy Streamable HTTP path (stateful, or stateless with ``--stateless``).

``ask_name`` elicits with the SDK's resolver mechanism (``Resolve`` +
``Elicit``), so on a legacy connection it sends an ``elicitation/create``
request to the client mid-call, and on a modern one it answers with a
``resultType: "input_required"`` result (MRTR) that the client retries with
``inputResponses`` + ``requestState``. Either way the client must declare the
``elicitation`` capability, or the call fails with -32003-style
"missing required client capability".

``--legacy-only`` turns the modern era off, to mimic a pre-2026 SDK peer:
on stdio the handshake loop alone is served (``server/discover`` is then
-32601 Method not found); on http a POST whose ``MCP-Protocol-Version`` is not
a handshake version gets HTTP 400 with a JSON-RPC error.

Readiness
---------
stdio: ready as soon as the process runs (it reads stdin).
http:  binds 127.0.0.1 only; once it accepts connections it prints
       ``READY http://127.0.0.1:<port>/mcp`` on stderr (``--port 0``, the
       default, picks a free port, so read the port from that line).
"""

from __future__ import annotations

import sys as _sys

if __name__ == "__main__" and "coverage" in _sys.modules:
    # a peer, not Spyglass: the suite measures coverage in every Python subprocess it starts, and tracing a
    # peer only slows it down (every call of its code passes through the tracer)
    _current = _sys.modules["coverage"].Coverage.current()
    if _current is not None:
        _current.stop()

import argparse
import json
import socket
import sys
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Audio, Context, Elicit, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

SERVER_NAME = "spyglass-sdk-peer"
SERVER_VERSION = "1.0.0"
MCP_PATH = "/mcp"
PROGRESS_INTERVAL = 0.1


# Module level on purpose: the SDK evaluates the (postponed) annotations of tools
# and resolvers against the module globals.
class NameForm(BaseModel):
    name: str = Field(description="Your name")


def _silent_wav(seconds: float, rate: int = 8000) -> bytes:
    import io
    import wave

    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\0\0" * int(rate * seconds))
    return buf.getvalue()


def ask_for_name() -> Elicit[NameForm]:
    """Resolver for `ask_name`: the SDK turns this marker into an elicitation."""
    return Elicit("What is your name?", NameForm)


def build_server(log_level: str = "WARNING", changed: bool = False) -> MCPServer:
    """The peer's whole surface, independent of transport. `changed` is "the next build": `add` takes an
    optional third number, `echo` shouts, and a `version` tool is new (for replay and diff tests)."""
    server = MCPServer(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions="Test peer for Spyglass: tools add/echo/fail/slow/ask_name.",
        log_level=log_level,  # type: ignore[arg-type]
    )

    if changed:
        @server.tool(description="Add two or three integers.")
        def add(a: int, b: int, c: int = 0) -> int:
            return a + b + c

        @server.tool(description="Echo the message back.")
        def echo(message: str) -> str:
            return message.upper()

        @server.tool(description="The build of this server.")
        def version() -> str:
            return "2"
    else:
        @server.tool(description="Add two integers.")
        def add(a: int, b: int) -> int:
            return a + b

        @server.tool(description="Echo the message back.")
        def echo(message: str) -> str:
            return message

    @server.tool(description="Always fails with an isError result.")
    def fail() -> str:
        raise ToolError("deliberate failure from the SDK peer")

    @server.tool(description="Sleep for `seconds`, reporting progress every 0.1 s.")
    async def slow(seconds: float, ctx: Context) -> str:
        steps = max(1, round(seconds / PROGRESS_INTERVAL))
        for step in range(1, steps + 1):
            await anyio.sleep(PROGRESS_INTERVAL)
            # A no-op when the request carried no progressToken.
            await ctx.report_progress(step, steps, f"step {step}/{steps}")
        return f"slept {seconds:g}s"

    @server.tool(description="A short WAV clip of silence (audio content).")
    def tone() -> Audio:
        return Audio(data=_silent_wav(0.25), format="wav")

    @server.tool(description="Ask the user for their name (elicitation), then greet them.")
    async def ask_name(form: Annotated[NameForm, Resolve(ask_for_name)]) -> str:
        return f"Hello, {form.name}!"

    @server.resource("sdk://hello", name="hello", mime_type="text/plain", description="A fixed greeting.")
    def hello() -> str:
        return "Hello from the SDK peer"

    @server.resource("sdk://greet/{name}", name="greet", mime_type="text/plain", description="Greets {name}.")
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @server.prompt(description="Ask for a code review.")
    def review(code: str) -> str:
        return f"Please review this code:\n\n{code}"

    return server


# --- stdio ---------------------------------------------------------------------


async def _serve_stdio_legacy_only(server: MCPServer) -> None:
    """Handshake era only: the SDK's `serve_loop` instead of the dual-era `Server.run`."""
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream), low.lifespan(low) as state:
        await serve_loop(
            low,
            read_stream,
            write_stream,
            lifespan_state=state,
            init_options=low.create_initialization_options(),
        )


def run_stdio(server: MCPServer, legacy_only: bool) -> None:
    if legacy_only:
        anyio.run(_serve_stdio_legacy_only, server)
    else:
        server.run("stdio")


# --- Streamable HTTP ------------------------------------------------------------


class _LegacyOnlyGate:
    """ASGI wrapper answering modern-era POSTs the way a pre-2026 server would: 400."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            version = next(
                (v.decode("latin-1") for k, v in scope["headers"] if k == b"mcp-protocol-version"),
                None,
            )
            if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
                body = json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {
                            "code": -32600,
                            "message": f"Bad Request: Unsupported protocol version: {version}",
                        },
                    }
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 400,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _bind_loopback(port: int) -> socket.socket:
    """Bind 127.0.0.1 ourselves, so that --port 0 works and the real port is known up front."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        sys.exit(f"sdk_server: cannot listen on 127.0.0.1:{port}: {exc.strerror}")
    return sock


async def _serve_http(server: MCPServer, args: argparse.Namespace, sock: socket.socket) -> None:
    import uvicorn

    app: Any = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=args.stateless,
        json_response=args.json_response,
        host="127.0.0.1",
    )
    if args.legacy_only:
        app = _LegacyOnlyGate(app)

    port = sock.getsockname()[1]

    config = uvicorn.Config(app, log_level=args.log_level.lower(), lifespan="on", access_log=False)
    uv_server = uvicorn.Server(config)

    async def announce() -> None:
        while not uv_server.started:
            if uv_server.should_exit:
                return
            await anyio.sleep(0.01)
        print(f"READY http://127.0.0.1:{port}{MCP_PATH}", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await uv_server.serve(sockets=[sock])
        tg.cancel_scope.cancel()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--port", type=int, default=0, help="http only; 0 picks a free port")
    parser.add_argument("--stateless", action="store_true", help="http only: legacy path without sessions")
    parser.add_argument(
        "--json-response", action="store_true", help="http only: answer POSTs with JSON instead of SSE"
    )
    parser.add_argument(
        "--legacy-only", action="store_true", help="serve only the initialize-handshake era (no 2026-07-28)"
    )
    parser.add_argument(
        "--log-level", default="WARNING", choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
    )
    parser.add_argument("--changed", action="store_true",
                        help="the next build: add takes c, echo shouts, a version tool (replay and diff tests)")
    args = parser.parse_args(argv)

    server = build_server(args.log_level, args.changed)
    try:
        if args.transport == "stdio":
            run_stdio(server, args.legacy_only)
        else:
            anyio.run(_serve_http, server, args, _bind_loopback(args.port))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
