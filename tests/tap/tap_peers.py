#!/usr/bin/env python3
"""A small HTTP peer for the HTTP tap's tests, for what server-everything and the SDK peer do not do: exact
bytes to compare, a server that notices its client leaving, an HTTP+SSE server announcing its endpoint as
an absolute URL. Standard library only; binds 127.0.0.1 (port 0 = any free one) and prints "READY <origin>"
on stderr once it listens, and "GONE <path>" when a client left a stream it was writing.

    python tests/tap/tap_peers.py [--port N]

GET  /sse         HTTP+SSE (2024-11-05): `endpoint` is http://127.0.0.1:PORT/messages?session=…, in full;
                  answers to the posts come as `message` events (initialize, tools/list, tools/call echo)
POST /messages    202, the answer goes to the session's stream
GET  /fixed       an event stream of FIXED_PARTS, sent as chunks FIXED_PAUSE apart (CRLF, CR, comments,
                  retry, ids, a line and a CRLF cut between chunks)
GET  /forever     an event stream of comments every 50 ms, until the client leaves
POST /echo        201 "Made It": the request's headers and body, as JSON; a few headers of its own
GET  /gzip        a JSON-RPC answer, gzip'd (Content-Encoding: gzip)
GET  /short       says Content-Length 100, sends 10 bytes and closes
GET, POST /once   answers the first request of a connection (keeping it open); a later request on it gets
                  no answer: the connection is closed as it arrives (a kept connection closed under a client)
GET  /garbage     answers with bytes that are not HTTP
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import queue
import select
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

FIXED_PARTS = [
    b"retry: 250\r\nid: a1\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"one\"}\r\n\r\n: a comm",
    b"ent\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"method\":\"two\"}\rid: a2\r",
    b"\n\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"three\"}\n\n",
]
FIXED_PAUSE = 0.4
GZIPPED = {"jsonrpc": "2.0", "id": 7, "result": {"zipped": True}}
SESSIONS: dict[str, queue.Queue[str]] = {}
ORIGIN = ""


def answer(msg: dict) -> dict | None:
    if "id" not in msg or "method" not in msg:
        return None
    method, params = msg["method"], msg.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "tap-peer", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "inputSchema": {"type": "object", "properties": {
            "message": {"type": "string"}}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": (params.get("arguments") or {}).get("message", "")}]}
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str, headers: list | None = None, reason: str | None = None):
        self.send_response(status, reason)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers or []:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _stream_open(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _once(self) -> bool:
        """/once: True for the first request of this connection; later ones close it unanswered."""
        self.served = getattr(self, "served", 0) + 1
        if self.served > 1:
            self.close_connection = True
            return False
        self._send(200, b'{"once": true}', "application/json")
        return True

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/once":
            self._once()
        elif path == "/garbage":
            self.wfile.write(b"this is not HTTP at all\r\n\r\n")
            self.close_connection = True
        elif path == "/sse":
            sid = uuid.uuid4().hex
            SESSIONS[sid] = q = queue.Queue()
            self._stream_open()
            try:
                self._chunk(f"event: endpoint\ndata: {ORIGIN}/messages?session={sid}\n\n".encode())
                while True:
                    try:
                        self._chunk(f"event: message\ndata: {q.get(timeout=0.05)}\n\n".encode())
                    except queue.Empty:
                        self._chunk(b": idle\n\n")
            except OSError:
                print(f"GONE {path}", file=sys.stderr, flush=True)
            finally:
                SESSIONS.pop(sid, None)
        elif path == "/fixed":
            self._stream_open()
            for i, part in enumerate(FIXED_PARTS):
                if i:
                    time.sleep(FIXED_PAUSE)
                self._chunk(part)
            self._chunk(b"")
        elif path == "/forever":
            self._stream_open()
            try:
                while True:
                    self._chunk(b": still here\n\n")
                    time.sleep(0.05)
            except OSError:
                print(f"GONE {path}", file=sys.stderr, flush=True)
            self.close_connection = True
        elif path == "/gzip":
            self._send(200, gzip.compress(json.dumps(GZIPPED).encode()), "application/json",
                       [("Content-Encoding", "gzip")])
        elif path == "/short":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b'{"jsonrpc"')
            self.wfile.flush()
            self.close_connection = True
        else:
            self._send(404, b"no such page", "text/plain")

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            self._send(400, b"the tap should have sent a length", "text/plain")
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if parts.path == "/once":
            self._once()
            return
        if parts.path == "/echo":
            seen = {"headers": [[k, v] for k, v in self.headers.items()], "body": body.decode("utf-8", "replace"),
                    "target": self.path}
            self._send(201, json.dumps(seen).encode(), "application/json", [
                ("X-Reply", "yes"), ("Mcp-Session-Id", "sid-1"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"),
                ("Connection", "X-Hop-Reply"), ("X-Hop-Reply", "dropped"), ("Keep-Alive", "timeout=5")],
                reason="Made It")
            return
        q = SESSIONS.get((parse_qs(parts.query).get("session") or [""])[0])
        if parts.path != "/messages" or q is None:
            self._send(404, b"no such session", "text/plain")
            return
        try:
            reply = answer(json.loads(body))
        except ValueError:
            reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        self._send(202, b"Accepted", "text/plain")
        if reply is not None:
            q.put(json.dumps(reply))


def main() -> int:
    global ORIGIN
    port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    ORIGIN = f"http://127.0.0.1:{server.server_address[1]}"
    print(f"READY {ORIGIN}", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    return 0


# ---------------------------------------------------------------------------- used by the tests
class Peer:
    def __init__(self, proc: subprocess.Popen, origin: str) -> None:
        self.proc = proc
        self.origin = origin

    def wait_line(self, text: str, timeout: float = 5.0) -> bool:
        """Whether the peer says `text` on stderr within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stderr.fileno()
        buf = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            data = os.read(fd, 4096)
            if not data:
                return False
            buf += data
            if text.encode() in buf:
                return True
        return False


@contextlib.contextmanager
def running() -> Iterator[Peer]:
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve())], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        line = proc.stderr.readline().decode()
        assert line.startswith("READY "), f"the tap peer did not start: {line!r}"
        yield Peer(proc, line.split()[1])
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        proc.stderr.close()


if __name__ == "__main__":
    sys.exit(main())
