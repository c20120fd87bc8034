#!/usr/bin/env python3
"""A misbehaving MCP server over HTTP, for the HTTP-specific bad-input tests.

Standard library only. Binds 127.0.0.1 on the given port (0 = any free one) and
prints "READY <url>" on stderr once it listens.

    python tests/hostile/http_server.py CASE [--port N]

It is a small legacy Streamable HTTP server (sessions, tools `echo` and
`add`) unless the case says otherwise:

html-500        every POST answers 500 with an HTML error page
html-reply      every POST answers 200 with Content-Type text/html
auth            every request answers 401 with a WWW-Authenticate challenge
forget-session  after one request of a session, answers 404 (session forgotten)
cut-sse         tools/call answers with an SSE stream that sends one event (id,
                retry 100 ms) and is cut before the answer; GET with
                Last-Event-ID resumes it with the answer (legacy resumption)
cut-sse-modern  a 2026-07-28 server: the first tools/call's SSE stream is cut
                before the answer; a re-issued call (new id) is answered
bad-headers     a 2026-07-28 server whose tools/list has one tool with an invalid
                x-mcp-header (on an array item) next to a valid one; tools/call
                checks the Mcp-Param-* headers and answers -32020 on a mismatch
"""

from __future__ import annotations

import sys as _sys

if __name__ == "__main__" and "coverage" in _sys.modules:
    # a peer, not Spyglass: the suite measures coverage in every Python subprocess it starts, and tracing a
    # peer only slows it down (every call of its code passes through the tracer)
    _current = _sys.modules["coverage"].Coverage.current()
    if _current is not None:
        _current.stop()

import base64
import json
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CASE = ""
LOCK = threading.Lock()
SESSIONS: dict[str, int] = {}
CALLS = {"tools/call": 0}
MODERN = "2026-07-28"

TOOLS = [
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}},
                                     "required": ["message"]}},
    {"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"},
                                                                     "b": {"type": "number"}}}},
]
HEADER_TOOLS = [
    {"name": "regional", "inputSchema": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "shard": {"type": "integer", "x-mcp-header": "Shard"},
        "query": {"type": "string"}}, "required": ["region", "query"]}},
    {"name": "broken", "inputSchema": {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}}}}},
]


def result_for(msg: dict) -> dict:
    method = msg.get("method")
    params = msg.get("params") or {}
    modern = CASE in ("cut-sse-modern", "bad-headers")
    extra = {"resultType": "complete"} if modern else {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-11-25"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile-http", "version": "1"}}
    if method == "server/discover":
        return {"resultType": "complete", "supportedVersions": [MODERN], "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hostile-http", "version": "1"}}}
    if method == "tools/list":
        return {"tools": HEADER_TOOLS if CASE == "bad-headers" else TOOLS, **extra}
    if method == "tools/call":
        args = params.get("arguments") or {}
        if params.get("name") == "add":
            text = str(args.get("a", 0) + args.get("b", 0))
        else:
            text = json.dumps(args, sort_keys=True)
        return {"content": [{"type": "text", "text": text}], **extra}
    if method == "ping":
        return {}
    return {"content": [], **extra}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, obj: dict, status: int = 200, headers: dict | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", headers)

    def _sse_open(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

    def _event(self, data: str | None = None, event_id: str | None = None, retry: int | None = None) -> None:
        out = ""
        if event_id:
            out += f"id: {event_id}\n"
        if retry is not None:
            out += f"retry: {retry}\n"
        if data is not None:
            out += f"data: {data}\n"
        self.wfile.write((out + "\n").encode())
        self.wfile.flush()

    def do_DELETE(self) -> None:
        self._send(200, b"", "text/plain")

    def do_GET(self) -> None:
        if CASE == "auth":
            return self._unauthorized()
        last = self.headers.get("Last-Event-ID")
        if CASE == "cut-sse" and last:
            pending = last.split(":", 1)[1]
            self._sse_open()
            answer = {"jsonrpc": "2.0", "id": json.loads(pending), "result": {
                "content": [{"type": "text", "text": "resumed"}]}}
            self._event(json.dumps(answer), event_id="e2")
            self.close_connection = True
            return
        self._send(405, b"", "text/plain")

    def _unauthorized(self) -> None:
        self._send(401, b'{"error":"unauthorized"}', "application/json", {
            "WWW-Authenticate": 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource", '
                                'scope="mcp:tools"'})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if CASE == "auth":
            return self._unauthorized()
        if CASE == "html-500":
            return self._send(500, b"<html><body><h1>Internal Server Error</h1><p>Traceback: boom</p></body></html>",
                              "text/html")
        if CASE == "html-reply":
            return self._send(200, b"<html><body>Welcome to nginx!</body></html>", "text/html")
        try:
            msg = json.loads(body)
        except ValueError:
            return self._json({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}, 400)
        if "method" not in msg or "id" not in msg:
            return self._send(202, b"", "text/plain")
        modern_case = CASE in ("cut-sse-modern", "bad-headers")
        meta = (msg.get("params") or {}).get("_meta") or {}
        if modern_case and meta.get("io.modelcontextprotocol/protocolVersion") != MODERN:
            return self._json({"jsonrpc": "2.0", "id": msg["id"], "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": [MODERN],
                         "requested": meta.get("io.modelcontextprotocol/protocolVersion")}}}, 400)
        if not modern_case and msg["method"] == "server/discover":
            return self._json(
                {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}, 404
            )
        headers = {}
        if msg["method"] == "initialize":
            sid = uuid.uuid4().hex
            with LOCK:
                SESSIONS[sid] = 0
            headers["Mcp-Session-Id"] = sid
        elif not modern_case:
            sid = self.headers.get("Mcp-Session-Id")
            with LOCK:
                if sid not in SESSIONS:
                    return self._json(
                        {
                            "jsonrpc": "2.0",
                            "id": msg["id"],
                            "error": {"code": -32600, "message": "Bad Request: no valid session"},
                        },
                        400,
                    )
                SESSIONS[sid] += 1
                count = SESSIONS[sid]
            if CASE == "forget-session" and count > 1:
                return self._send(404, b"session not found", "text/plain")
        if msg["method"] == "tools/call":
            with LOCK:
                CALLS["tools/call"] += 1
                nth = CALLS["tools/call"]
            if CASE == "cut-sse" or (CASE == "cut-sse-modern" and nth == 1):
                self._sse_open()
                self._event(event_id=f"e1:{json.dumps(msg['id'])}", retry=100)
                self.close_connection = True
                return  # the stream ends without the answer
            if CASE == "bad-headers":
                problem = check_param_headers(msg, self.headers)
                if problem:
                    return self._json(
                        {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32020, "message": problem}}, 400
                    )
        self._json({"jsonrpc": "2.0", "id": msg["id"], "result": result_for(msg)}, headers=headers)


def check_param_headers(msg: dict, headers) -> str | None:
    args = (msg.get("params") or {}).get("arguments") or {}
    for key, header in (("region", "Mcp-Param-Region"), ("shard", "Mcp-Param-Shard")):
        got = headers.get(header)
        if key not in args or args[key] is None:
            if got is not None:
                return f"Header mismatch: {header} sent without a value in the body"
            continue
        if got is None:
            return f"Header mismatch: {header} is missing"
        if got.startswith("=?base64?") and got.endswith("?="):
            got = base64.b64decode(got[9:-2]).decode("utf-8")
        want = str(args[key]).lower() if isinstance(args[key], bool) else str(args[key])
        if got != want:
            return f"Header mismatch: {header} is {got!r}, body has {want!r}"
    if headers.get("Mcp-Name") != msg["params"]["name"]:
        return "Header mismatch: Mcp-Name"
    return None


def main() -> int:
    global CASE
    args = sys.argv[1:]
    port = 0
    if "--port" in args:
        i = args.index("--port")
        port = int(args[i + 1])
        del args[i : i + 2]
    CASE = args[0] if args else ""
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"READY http://127.0.0.1:{server.server_address[1]}/mcp", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
