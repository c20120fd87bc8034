#!/usr/bin/env python3
"""A small stdio MCP server (2025-11-25, standard library only) whose resources and prompts are bad input.

    python tests/ui/bad_catalog_server.py [repeat-cursor]

- resources/list: `bad://blob` (its read returns a `blob` that is not base64) and `bad://text` (HTML and a
  right-to-left override in its title and description);
  with `repeat-cursor` every page answers the same `nextCursor`, forever.
- resources/templates/list: one template that is not RFC 6570 (`bad://{oops`) and one fine (`bad://item/{id}`).
- completion/complete: 150 values (the protocol allows 100).
- prompts/list: `undescribed`, whose required argument `x` has no description.
- prompts/get changes both lists (prompt `extra` and resource `bad://new` appear, `bad://text` goes) and
  sends notifications/prompts/list_changed and notifications/resources/list_changed first.
"""

from __future__ import annotations

import sys as _sys

if __name__ == "__main__" and "coverage" in _sys.modules:
    # a peer, not Spyglass: the suite measures coverage in every Python subprocess it starts, and tracing a
    # peer only slows it down (every call of its code passes through the tracer)
    _current = _sys.modules["coverage"].Coverage.current()
    if _current is not None:
        _current.stop()

import json
import sys

REPEAT = "repeat-cursor" in sys.argv[1:]
changed = False


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(req: dict, value: object) -> dict:
    return {"jsonrpc": "2.0", "id": req["id"], "result": value}


def handle(req: dict) -> dict | None:
    global changed
    method, params = req.get("method"), req.get("params") or {}
    if "id" not in req:
        return None
    if method == "initialize":
        return result(req, {"protocolVersion": "2025-11-25", "serverInfo": {"name": "bad-catalog", "version": "1"},
                            "capabilities": {"resources": {"subscribe": True, "listChanged": True},
                                             "prompts": {"listChanged": True}, "completions": {}}})
    if method == "ping":
        return result(req, {})
    if method == "resources/list":
        page = {"resources": [{"uri": "bad://blob", "name": "blob", "mimeType": "application/octet-stream"},
                              {"uri": "bad://new", "name": "new"} if changed else
                              {"uri": "bad://text", "name": "text", "mimeType": "text/plain",
                               "title": "<b>bold</b> \u202eevil", "description": "<img src='http://example.com/x.png'>"}]}
        if REPEAT:
            page["nextCursor"] = "again"
        return result(req, page)
    if method == "resources/templates/list":
        return result(req, {"resourceTemplates": [{"uriTemplate": "bad://{oops", "name": "broken"},
                                                  {"uriTemplate": "bad://item/{id}", "name": "item"}]})
    if method == "resources/read":
        uri = params.get("uri")
        if uri == "bad://blob":
            return result(req, {"contents": [{"uri": uri, "mimeType": "application/octet-stream",
                                              "blob": "!!! this is not base64 !!!"}]})
        return result(req, {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"read {uri}"}]})
    if method == "completion/complete":
        values = [f"value-{i:03d}" for i in range(150)]
        return result(req, {"completion": {"values": values, "total": 150, "hasMore": False}})
    if method == "prompts/list":
        prompts = [{"name": "undescribed", "arguments": [{"name": "x", "required": True}]}]
        return result(req, {"prompts": prompts + ([{"name": "extra", "description": "Appeared."}] if changed else [])})
    if method == "prompts/get":
        changed = True
        send({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"})
        send({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"})
        args = params.get("arguments") or {}
        return result(req, {"messages": [{"role": "user", "content": {"type": "text", "text": f"x={args.get('x')}"}}]})
    return {"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": f"Method not found: {method}"}}


def main() -> int:
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if isinstance(req, dict):
            reply = handle(req)
            if reply is not None:
                send(reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
