"""A flood server whose own cost is negligible: the floor `bench/traffic_flood.py` measures against.

    python bench/flood_server.py N [CHUNK]

An MCP server over stdio (standard library only, 2025-11-25) with one tool, `echo`. Before answering a
`tools/call` it writes N `notifications/message` lines, then the answer. Every line is made before the
server reads its first request, and joined in chunks of CHUNK lines (default 2,000), so that during the
flood the server does nothing but hand the pipe about 260 KB at a time: whatever the reader takes longer
than the pipe allows is the reader's own cost, not the server's (tests/hostile/server.py builds and
encodes each line as it writes it, and its floor varied by half from round to round).
"""

from __future__ import annotations

import json
import os
import sys


def flood_chunks(n: int, chunk: int) -> list[bytes]:
    lines = [b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood",'
             b'"data":"flood %d/%d"}}\n' % (i, n) for i in range(1, n + 1)]
    return [b"".join(lines[k:k + chunk]) for k in range(0, n, chunk)]


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def answer(rid: object, result: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}, separators=(",", ":")).encode() + b"\n"


TOOL = {"name": "echo", "description": "Floods, then echoes its message", "annotations": {"readOnlyHint": True},
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}}


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 100_000
    chunk = int(argv[1]) if len(argv) > 1 else 2000
    chunks = flood_chunks(n, chunk)
    out = sys.stdout.fileno()
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue  # a notification or an answer: nothing to say
        rid, method = msg["id"], msg["method"]
        if method == "initialize":
            write_all(out, answer(rid, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}, "logging": {}},
                                        "serverInfo": {"name": "flood", "version": "1"}}))
        elif method == "tools/list":
            write_all(out, answer(rid, {"tools": [TOOL]}))
        elif method == "tools/call":
            for block in chunks:
                write_all(out, block)
            message = ((msg.get("params") or {}).get("arguments") or {}).get("message", "")
            write_all(out, answer(rid, {"content": [{"type": "text", "text": f"flooded {n}: {message}"}]}))
        elif method in ("ping", "logging/setLevel"):
            write_all(out, answer(rid, {}))
        else:
            write_all(out, json.dumps({"jsonrpc": "2.0", "id": rid, "error": {
                "code": -32601, "message": f"method not found: {method}"}}).encode() + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
