"""The server `bench/agent_calls.py` measures against: an MCP server over stdio (standard library only,
2025-11-25) with two read-only tools, `echo` (answers at once: the floor) and `work` (waits `ms`
milliseconds, 2 by default, before answering: a tool that does something, as reading a file, asking a
database or calling a service does; it waits rather than spins, so it takes no core from the others).

    python bench/work_server.py
"""

from __future__ import annotations

import json
import sys
import time

SCHEMA = {"type": "object", "properties": {"message": {"type": "string"}, "ms": {"type": "number"}}}
TOOLS = [{"name": name, "description": text, "annotations": {"readOnlyHint": True}, "inputSchema": SCHEMA}
         for name, text in (("echo", "Echoes its message at once"),
                            ("work", "Works ms milliseconds (default 2), then echoes its message"))]


def answer(request: dict) -> dict | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None
    if method == "initialize":
        result: dict = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                        "serverInfo": {"name": "bench-work", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        args = params.get("arguments") or {}
        if params.get("name") == "work":
            time.sleep(float(args.get("ms", 2)) / 1000)
        result = {"content": [{"type": "text", "text": str(args.get("message", ""))}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": f"no {method}"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> int:
    for line in sys.stdin:
        try:
            reply = answer(json.loads(line))
        except (ValueError, AttributeError):
            continue
        if reply is not None:
            sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
