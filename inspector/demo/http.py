"""The demo server over Streamable HTTP, for load tests from several processes or machines (Locust: docs/load.md).

    python -m inspector.demo --http [--host 127.0.0.1] [--port 0] [--sse]

One endpoint, ``/mcp``. A request of the 2026-07-28 era (its ``_meta`` names that version, or it is
``server/discover``) is answered on its own, with no session; ``initialize`` opens a legacy session, named by the
``Mcp-Session-Id`` header of the answer, and every later legacy request must carry it (400 without it, 404 for a
session this server does not know); DELETE ends a session. Answers are JSON, or one-event streams
(``text/event-stream``) with ``--sse`` when the client accepts them. A server-to-client request (sampling,
elicitation, roots) cannot be sent over this front (it has no GET stream): the tool that asks gets an error, as
when a client refuses. Notifications sent while a request runs are dropped.

It counts what it answered, by method and tool (``tools/call echo``, the names Locust reports): answers, tool
errors (``isError``) and JSON-RPC errors by code. With ``SPYGLASS_DEMO_COUNTS=FILE`` in its environment it writes
them to FILE as JSON when it stops (SIGTERM, SIGINT), so a test can hold a load tool's figures against the
server's own. It prints ``spyglass-demo listening on URL`` on stderr once it listens.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import signal
import sys
from collections.abc import Callable
from typing import Any

from .jsonrpc import JsonRpcPeer
from .wire import META_PROTOCOL_VERSION, MODERN_VERSION, JsonObject

log = logging.getLogger("spyglass-demo")

PATH = "/mcp"
MAX_BODY = 16 * 1024 * 1024
MAX_HEADERS = 100
SESSION_HEADER = "mcp-session-id"
REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           413: "Payload Too Large", 415: "Unsupported Media Type"}
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def request_name(method: str, params: Any) -> str:
    """How a request is counted: its method, and for a call, a prompt or a read, what it names."""
    key = NAMED.get(method)
    named = params.get(key) if key and isinstance(params, dict) else None
    return f"{method} {named}" if isinstance(named, str) else method


def _sink(data: bytes) -> None:
    """Where a peer's own messages go: notifications are dropped; a request cannot be sent (no GET stream)."""
    try:
        message = json.loads(data)
    except ValueError:
        return
    if isinstance(message, dict) and "method" in message and "id" in message:
        raise OSError("the demo over HTTP cannot send requests to the client")


class Counts:
    """What the server answered, by request name."""

    def __init__(self) -> None:
        self.by_name: dict[str, dict[str, Any]] = {}

    def add(self, name: str, response: JsonObject) -> None:
        entry = self.by_name.setdefault(name, {"answered": 0, "toolErrors": 0, "rpcErrors": {}})
        entry["answered"] += 1
        error = response.get("error")
        if isinstance(error, dict):
            code = str(error.get("code"))
            entry["rpcErrors"][code] = entry["rpcErrors"].get(code, 0) + 1
        elif isinstance(response.get("result"), dict) and response["result"].get("isError") is True:
            entry["toolErrors"] += 1

    def write(self, path: str) -> None:
        # readable by its user only (the demo stands on the standard library and `protocol`: no inspector.private)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(self.by_name, f, indent=2, sort_keys=True)


class HttpFront:
    """Streamable HTTP in front of demo peers: one for the stateless era, one per legacy session."""

    def __init__(self, make_peer: Callable[[Callable[[bytes], None]], JsonRpcPeer], *, sse: bool = False) -> None:
        self.make_peer = make_peer
        self.sse = sse
        self.modern = make_peer(_sink)
        self.sessions: dict[str, JsonRpcPeer] = {}
        self.counts = Counts()

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Requests of one connection, kept alive until the client closes it or asks to."""
        try:
            while True:
                try:
                    request = await read_request(reader)
                except BadRequest as exc:
                    writer.write(response_bytes(exc.status, {"Connection": "close"}, _error_body(str(exc))))
                    break
                if request is None:
                    break
                method, path, headers, body = request
                try:
                    status, extra, payload = await self.route(method, path, headers, body)
                except BadRequest as exc:
                    status, extra, payload = exc.status, {"Content-Type": "application/json"}, _error_body(str(exc))
                closing = headers.get("connection", "").lower() == "close"
                if closing:
                    extra["Connection"] = "close"
                writer.write(response_bytes(status, extra, payload))
                await writer.drain()
                if closing:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def route(self, method: str, path: str, headers: dict[str, str],
                    body: bytes) -> tuple[int, dict[str, str], bytes]:
        if path.split("?", 1)[0] != PATH:
            raise BadRequest(404, f"Not found: {path} (the endpoint is {PATH})")
        if method == "DELETE":
            if self.sessions.pop(headers.get(SESSION_HEADER, ""), None) is None:
                raise BadRequest(404, "No such session")
            return 200, {}, b""
        if method != "POST":
            raise BadRequest(405, "This server answers POST (and DELETE to end a session); it has no GET stream")
        try:
            message = json.loads(body)
        except ValueError as exc:
            raise BadRequest(400, f"Parse error: {exc}") from None
        if not isinstance(message, dict):
            raise BadRequest(400, "Expected one JSON-RPC message (this server takes no batches)")
        params = message.get("params")
        if "method" not in message or "id" not in message:  # a notification or a response
            peer = self.sessions.get(headers.get(SESSION_HEADER, ""))
            if peer is not None and isinstance(message.get("method"), str):
                peer.handle_notification(message["method"], params if isinstance(params, dict) else {})
            return 202, {}, b""
        rpc_method = message["method"]
        extra: dict[str, str] = {}
        if rpc_method == "initialize":
            sid = secrets.token_hex(16)
            peer = self.sessions[sid] = self.make_peer(_sink)
            extra["Mcp-Session-Id"] = sid
        elif _modern(rpc_method, params):
            peer = self.modern
        else:
            given = headers.get(SESSION_HEADER)
            if not given:
                raise BadRequest(400, "Bad Request: the Mcp-Session-Id header is required (initialize first)")
            found = self.sessions.get(given)
            if found is None:
                raise BadRequest(404, "Session not found")
            peer = found
        response = await peer.answer(message["id"], rpc_method if isinstance(rpc_method, str) else "", params)
        self.counts.add(request_name(str(rpc_method), params), response)
        data = json.dumps(response, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        if self.sse and "text/event-stream" in headers.get("accept", ""):
            extra["Content-Type"] = "text/event-stream"
            extra["Cache-Control"] = "no-cache"
            return 200, extra, b"event: message\ndata: " + data + b"\n\n"
        extra["Content-Type"] = "application/json"
        return 200, extra, data


def _modern(method: Any, params: Any) -> bool:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return method == "server/discover" or (isinstance(meta, dict) and meta.get(META_PROTOCOL_VERSION) == MODERN_VERSION)


def _error_body(message: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()


async def read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    """One HTTP/1.1 request: method, path, headers (lower-case names), body; None when the client closed."""
    line = await reader.readline()
    if not line:
        return None
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, "Not an HTTP/1.1 request line")
    headers: dict[str, str] = {}
    while True:
        raw = await reader.readline()
        if raw in (b"\r\n", b"\n", b""):
            break
        if len(headers) >= MAX_HEADERS:
            raise BadRequest(400, "Too many headers")
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise BadRequest(400, "Chunked request bodies are not supported: send Content-Length")
    length_text = headers.get("content-length", "0")
    if not length_text.isdigit():
        raise BadRequest(400, "Bad Content-Length")
    length = int(length_text)
    if length > MAX_BODY:
        raise BadRequest(413, f"A request body over {MAX_BODY} bytes")
    body = await reader.readexactly(length) if length else b""
    return parts[0].upper(), parts[1], headers, body


def response_bytes(status: int, headers: dict[str, str], body: bytes) -> bytes:
    head = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}", f"Content-Length: {len(body)}"]
    if body and "Content-Type" not in headers:
        headers = {**headers, "Content-Type": "application/json"}
    head += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


def serve_http(make_peer: Callable[[Callable[[bytes], None]], JsonRpcPeer], host: str, port: int, *,
               sse: bool = False) -> int:
    """Serve until SIGTERM or SIGINT; then write the counts (SPYGLASS_DEMO_COUNTS) and return 0."""
    front = HttpFront(make_peer, sse=sse)

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        server = await asyncio.start_server(front.connection, host, port)
        bound = server.sockets[0].getsockname()
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        print(f"spyglass-demo listening on http://{shown}:{bound[1]}{PATH} (answers as "
              f"{'event streams' if sse else 'JSON'})", file=sys.stderr, flush=True)
        async with server:
            await stop.wait()

    asyncio.run(serve())
    path = os.environ.get("SPYGLASS_DEMO_COUNTS")
    if path:
        front.counts.write(path)
    log.info("stopped; answered %d requests", sum(e["answered"] for e in front.counts.by_name.values()))
    return 0
