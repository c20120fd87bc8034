"""A stdio MCP server (2025-06-18, standard library only) that plants one defect per rule of the host
profiles, so that `spyglass check --host all --call read-only` gives every host a verdict known in advance
(tests/checks/test_hosts_cli.py pins them).

    python tests/checks/hosts_planted_server.py

What is planted, and the profile fact it meets:
- `summarise_the_quarterly_figures_for_every_region_now` (52 characters): with Claude Code's prefix
  `mcp__planted__` it is 66, over 64 (naming.max_length, too_long = reject-request); with Gemini CLI's
  `mcp_planted_` 64, over 63 (too_long = elide); with Codex's `mcp__planted__` 66 (too_long = hash)
- `records.lookup`: a dot (naming.pattern; refused, replaced or omitted per host)
- `long_manual`: a 2,100-character description (limits.description)
- `either_or`: anyOf at the top of inputSchema (schema.root_combinators)
- `strict_args`: additionalProperties false, `not`, `pattern` (schema.keywords / other)
- 41 tools in all (limits.tools: Cursor's 40)
- `batch_job`: runs only as a task (features.tasks)
- `show_board`: an MCP App (features.apps)
- a resource, a template, a prompt, instructions (features.resources / resource_templates / prompts /
  instructions)
- read-only tools whose calls need: `snapshot` an image, `beep` audio (content.*), `ask_name` a form
  elicitation, `summarise` sampling, `where_am_i` roots (features.*), `dump` a 120,000-byte answer
  (limits.result_tokens)
- it speaks stdio only (protocol.transports)
"""

from __future__ import annotations

import json
import sys
from typing import Any

RO = {"readOnlyHint": True}
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="
OBJ: dict[str, Any] = {"type": "object", "properties": {}}


def tool(name: str, description: str, schema: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": schema or OBJ, **extra}


TOOLS = [
    tool("summarise_the_quarterly_figures_for_every_region_now",
         "Summarise the quarterly sales figures of every region into one short table."),
    tool("records.lookup", "Look up one customer record by its id and return its fields."),
    tool("long_manual", "Explain every option of the reporting engine in detail. " + "Options are many. " * 115),
    tool("either_or", "Search orders either by customer or by date range, never both.",
         {"type": "object", "anyOf": [
             {"type": "object", "properties": {"customer": {"type": "string", "description": "a name"}}},
             {"type": "object", "properties": {"since": {"type": "string", "description": "a date"}}}]}),
    tool("strict_args", "Create a ticket with a code and a title; nothing else is accepted.",
         {"type": "object", "additionalProperties": False, "required": ["code"],
          "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$", "description": "ABC-123"},
                         "title": {"type": "string", "not": {"const": ""}, "description": "a title"}}}),
    tool("batch_job", "Run the nightly batch over every record; it takes minutes.",
         execution={"taskSupport": "required"}),
    tool("show_board", "Show the sales board as an interactive view, with the totals as text.",
         _meta={"ui": {"resourceUri": "ui://planted/board.html"}}),
    tool("snapshot", "Take a picture of the current sales board.", annotations=RO),
    tool("beep", "Play a short sound to get the team's attention.", annotations=RO),
    tool("ask_name", "Greet the user by the name they type when asked.", annotations=RO),
    tool("summarise", "Summarise the latest notes with the help of the host's model.", annotations=RO),
    tool("where_am_i", "Tell which folders the server may read, as the host shares them.", annotations=RO),
    tool("dump", "Return every record of the archive at once, as one long text.", annotations=RO),
]
TOOLS += [tool(f"report_{i:02d}", f"Print the sales report number {i} for the current month.")
          for i in range(1, 42 - len(TOOLS))]
assert len(TOOLS) == 41


def send(msg: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def ask(method: str, params: dict[str, Any]) -> None:
    """Send a request to the client and wait for its answer (whatever it is)."""
    send({"jsonrpc": "2.0", "id": f"ask-{method}", "method": method, "params": params})
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("id") == f"ask-{method}" and "method" not in msg:
            return


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def call(name: str) -> dict[str, Any]:
    if name == "snapshot":
        return {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}
    if name == "beep":
        return {"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}
    if name == "ask_name":
        ask("elicitation/create", {"message": "Your name?", "requestedSchema": {
            "type": "object", "properties": {"name": {"type": "string"}}}})
        return text("Hello!")
    if name == "summarise":
        ask("sampling/createMessage", {"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
                                       "maxTokens": 50})
        return text("Summary.")
    if name == "where_am_i":
        ask("roots/list", {})
        return text("No folders.")
    if name == "dump":
        return text("record " * 17_000)
    return text("done")


def answer(msg: dict[str, Any]) -> dict[str, Any] | None:
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": "2025-06-18", "serverInfo": {"name": "planted", "version": "1.0.0"},
                "instructions": "Prefer snapshot over dump.",
                "capabilities": {"tools": {}, "resources": {}, "prompts": {}}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "resources/list":
        return {"resources": [{"uri": "planted://readme", "name": "readme", "mimeType": "text/plain"}]}
    if method == "resources/templates/list":
        return {"resourceTemplates": [{"uriTemplate": "planted://records/{id}", "name": "record"}]}
    if method == "prompts/list":
        return {"prompts": [{"name": "weekly", "description": "Write the weekly sales summary."}]}
    if method == "tools/call":
        if not any(t["name"] == params.get("name") for t in TOOLS):
            raise LookupError(params.get("name"))
        return call(str(params.get("name")))
    raise KeyError(method)


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue
        try:
            result = answer(msg)
        except LookupError as exc:
            send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32602, "message": f"no tool {exc}"}})
        except KeyError:
            send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
        else:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": result})


if __name__ == "__main__":
    main()
