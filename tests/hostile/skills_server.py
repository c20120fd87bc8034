#!/usr/bin/env python3
"""A stdio MCP server (2025-11-25, standard library only) that declares the Skills extension (SEP-2640) in
its `initialize` result, for Spyglass's tests of skills in the handshake era and of skills that misbehave.

    python tests/hostile/skills_server.py [--case CASE]

    fine       (default) three skills: `plain` (right), `liar` (its listing's description is not its
               SKILL.md's), `holey` (a manifest file the server cannot read; its SKILL.md served as a blob)
    garbage    skills/list answers {"skills": "nope"}
    loop       skills/list answers every page with the same nextCursor
"""

from __future__ import annotations

import sys as _sys

if __name__ == "__main__" and "coverage" in _sys.modules:  # a peer: tracing it only slows it down
    _current = _sys.modules["coverage"].Coverage.current()
    if _current is not None:
        _current.stop()

import argparse
import base64
import hashlib
import json
import sys
from typing import Any

EXTENSION = "io.modelcontextprotocol/skills"


def skill_md(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nDo the {name} thing.\n"


FILES = {
    "skill://plain/SKILL.md": skill_md("plain", "A plain skill."),
    "skill://liar/SKILL.md": skill_md("liar", "What the file says."),
    "skill://holey/SKILL.md": skill_md("holey", "A skill with a hole."),
}


def manifest(uri: str) -> dict[str, Any]:
    data = FILES[uri].encode()
    return {"uri": uri, "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}


SKILLS = [
    {"uri": "skill://plain/SKILL.md", "frontmatter": {"name": "plain", "description": "A plain skill."},
     "resources": [manifest("skill://plain/SKILL.md")]},
    {"uri": "skill://liar/SKILL.md", "frontmatter": {"name": "liar", "description": "What the listing says."},
     "resources": [manifest("skill://liar/SKILL.md")]},
    {"uri": "skill://holey/SKILL.md", "frontmatter": {"name": "holey", "description": "A skill with a hole."},
     "resources": [manifest("skill://holey/SKILL.md"),
                   {"uri": "skill://holey/missing.txt", "digest": "sha256:" + "1" * 64, "size": 3}]},
]


def answer(case: str, method: str, params: dict[str, Any]) -> tuple[str, Any]:
    if method == "initialize":
        return "result", {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                          "capabilities": {"resources": {}, "extensions": {EXTENSION: {}}},
                          "serverInfo": {"name": "spyglass-hostile-skills", "version": "1.0.0"}}
    if method == "ping":
        return "result", {}
    if method == "skills/list":
        if case == "garbage":
            return "result", {"skills": "nope"}
        if case == "loop":
            return "result", {"skills": [SKILLS[0]], "nextCursor": "again"}
        return "result", {"skills": SKILLS}
    if method == "skills/get":
        found = next((s for s in SKILLS if s["uri"] == params.get("uri")), None)
        return ("result", {"skill": found}) if found else ("error", {"code": -32602, "message": "no such skill"})
    if method == "resources/read":
        uri = params.get("uri")
        if uri not in FILES:
            return "error", {"code": -32002, "message": f"Resource not found: {uri}"}
        if uri == "skill://holey/SKILL.md":
            blob = base64.b64encode(FILES[uri].encode()).decode()
            return "result", {"contents": [{"uri": uri, "mimeType": "text/markdown", "blob": blob}]}
        return "result", {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": FILES[uri]}]}
    if method in ("tools/list", "resources/list", "prompts/list", "resources/templates/list"):
        key = {"tools/list": "tools", "resources/list": "resources", "prompts/list": "prompts"}.get(
            method, "resourceTemplates")
        return "result", {key: []}
    return "error", {"code": -32601, "message": f"Method not found: {method}"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", choices=("fine", "garbage", "loop"), default="fine")
    case = parser.parse_args().case
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue
        if msg["method"] == "server/discover":  # the handshake era only
            kind, body = "error", {"code": -32601, "message": "Method not found"}
        else:
            kind, body = answer(case, msg["method"], msg.get("params") or {})
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], kind: body}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
