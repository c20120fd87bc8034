"""A big MCP server for speed work: many tools with realistic schemas and descriptions, many resources.
Standard library only, stdio, protocol 2025-11-25; every tool answers with a short text.

    python tests/peers/big_server.py [--tools N] [--resources M]   (defaults: 2,000 tools, 10,000 resources)

The tools are made from a handful of shapes seen in real servers (a search with filters and paging, a record
with nested fields and a list of objects, an enum-heavy action, a dated event, a free-form payload), each with
descriptions of a few sentences, so a list of 2,000 weighs about what a big real server's does (~4 MB)."""

from __future__ import annotations

import json
import sys

WORDS = ("Returns the matching records with their identifiers, owners and last change. Use the filters to narrow "
         "the search; results are paged, newest first. Fails when the account cannot read the collection.")


def arg(name: str, default: int) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def shape(i: int) -> dict:
    kind = i % 5
    if kind == 0:
        props = {"query": {"type": "string", "description": "What to look for", "minLength": 1},
                 "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20,
                           "description": "How many results to return"},
                 "cursor": {"type": "string", "description": "Where the previous page ended"},
                 "sort": {"type": "string", "enum": ["newest", "oldest", "relevance"], "default": "newest"},
                 "include_archived": {"type": "boolean", "default": False}}
        return {"type": "object", "properties": props, "required": ["query"]}
    if kind == 1:
        person = {"type": "object", "properties": {"name": {"type": "string"}, "email": {"type": "string",
                                                                                       "format": "email"}},
                  "required": ["name"]}
        props = {"title": {"type": "string", "maxLength": 200, "description": "The record's title"},
                 "owner": person, "watchers": {"type": "array", "items": person, "maxItems": 50},
                 "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                 "priority": {"type": "integer", "minimum": 0, "maximum": 4}}
        return {"type": "object", "properties": props, "required": ["title", "owner"]}
    if kind == 2:
        props = {"action": {"type": "string", "enum": ["start", "stop", "restart", "scale", "drain", "inspect"],
                            "description": "What to do with the service"},
                 "service": {"type": "string", "pattern": "^[a-z][a-z0-9-]{1,62}$"},
                 "replicas": {"type": "integer", "minimum": 0, "maximum": 500},
                 "region": {"type": "string", "enum": [f"region-{r}" for r in range(12)]}}
        return {"type": "object", "properties": props, "required": ["action", "service"]}
    if kind == 3:
        props = {"summary": {"type": "string"}, "starts": {"type": "string", "format": "date-time"},
                 "ends": {"type": "string", "format": "date-time"},
                 "reminder": {"oneOf": [{"type": "object", "title": "Email", "properties": {"email": {
                     "type": "string", "format": "email"}}, "required": ["email"]},
                     {"type": "object", "title": "Popup", "properties": {"minutes": {"type": "integer"}},
                      "required": ["minutes"]}]}}
        return {"type": "object", "properties": props, "required": ["summary", "starts"]}
    return {"type": "object", "properties": {"payload": {"type": "object", "additionalProperties": True,
                                                         "description": "Sent on as it is"},
                                             "dry_run": {"type": "boolean"}}}


def tools(n: int) -> list[dict]:
    return [{"name": f"tool_{i:05d}", "title": f"Tool number {i}",
             "description": f"{WORDS} Variant {i} of shape {i % 5}.", "inputSchema": shape(i),
             "annotations": {"readOnlyHint": i % 3 == 0, "openWorldHint": False}} for i in range(n)]


def resources(m: int) -> list[dict]:
    return [{"uri": f"file:///data/records/{i:06d}.json", "name": f"record {i}", "mimeType": "application/json",
             "description": f"Record {i} of the archive, as JSON."} for i in range(m)]


def main() -> None:
    listed = {"tools": tools(arg("--tools", 2000)), "resources": resources(arg("--resources", 10000))}
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue
        method = msg["method"]
        if method == "initialize":
            result: dict = {"protocolVersion": "2025-11-25", "serverInfo": {"name": "big", "version": "1"},
                            "capabilities": {"tools": {}, "resources": {}}}
        elif method in ("tools/list", "resources/list"):
            key = method.split("/")[0]
            result = {key: listed[key]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "done"}]}
        elif method in ("resources/templates/list", "prompts/list"):
            result = {"resourceTemplates": []} if method.startswith("resources") else {"prompts": []}
        elif method == "ping":
            result = {}
        else:
            out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
                "code": -32601, "message": f"Method not found: {method}"}}).encode() + b"\n")
            out.flush()
            continue
        out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
