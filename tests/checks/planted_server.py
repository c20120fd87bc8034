"""A stdio MCP server (protocol 2025-11-25, standard library only) that plants the defect of every rule of
`spyglass check` once — or, with --clean, none: the same surface, done right.

    python tests/checks/planted_server.py [--clean] [--tools N]

--tools N adds N plain, well-made tools (for the many-tools timing test).

Defects (target in brackets):
  schema-violation              resources/list: a resource whose size is a string [frame]
  tool-name-invalid             a tool named "get weather!" [tool:get weather!]
  tool-name-duplicate           two tools named "twice" [tool:twice]
  description-missing           "undescribed" has none [tool:undescribed]
  description-vague             "fetch_data": "Fetch data." [tool:fetch_data]
  param-description-missing     "convert" has a bare "value" [tool:convert]
  input-schema-invalid          "broken_schema" requires an undeclared "missing" [tool:broken_schema]
  annotations-contradict        "wipe_cache" is read-only and destructive [tool:wipe_cache]
  list-order-unstable           prompts/list turns its order round on every call [list:prompts]
  pagination-cursor-loop        resources/templates/list hands out the same cursor forever [list:templates]
  capability-undeclared         notifications/tools/list_changed without tools.listChanged [frame]
  structured-content-missing    "stats" has an outputSchema, answers without structuredContent [tool:stats]
  structured-content-mismatch   "forecast" answers {"temp": "warm"} for a number [tool:forecast]
  structured-text-missing       "forecast" carries no text copy of its data [tool:forecast]
  unknown-tool-not-protocol-error  an unknown tool gets an isError result [server]
  tool-error-as-protocol-error  "lookup" answers valid arguments with error -32603 [tool:lookup]
  tool-list-cost                "manual" is ~11,000 tokens [tool:manual] and so is the list [list:tools]
  schema-unportable             "pick_color" has a bare `true` as the schema of its list's items [tool:pick_color]
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

CLEAN = "--clean" in sys.argv
EXTRA = int(sys.argv[sys.argv.index("--tools") + 1]) if "--tools" in sys.argv else 0
VERSION = "2025-11-25"
READ_ONLY = {"readOnlyHint": True}
WORDS = ("Explains every option of the service in detail, with examples of when to use each one and what it "
         "returns. ")


def text_param(description: str | None) -> dict:
    return {"type": "string", **({"description": description} if description else {})}


def tool(name: str, description: str | None, props: dict | None = None, required: list | None = None,
         **extra: object) -> dict:
    out: dict = {"name": name}
    if description is not None:
        out["description"] = description
    out["inputSchema"] = {"type": "object", "properties": props or {}, **({"required": required} if required else {})}
    out.update(extra)
    return out


def tools() -> list[dict]:
    def good(name: str, what: str) -> dict:
        return tool(name, f"Returns {what} for the given city; use it when the user asks about {what}.",
                    {"city": text_param("The city, e.g. Lisbon")}, ["city"], annotations=READ_ONLY)

    out = [
        good("weather", "the weather"),
        tool("get_weather" if CLEAN else "get weather!", "Looks up the current weather for a city by its name.",
             {"city": text_param("The city")}, ["city"]),
        tool("twice", "Counts the words of a text and returns their number.", {"text": text_param("The text")}),
        tool("twice_more" if CLEAN else "twice", "Counts the lines of a text and returns their number.",
             {"text": text_param("The text")}),
        tool("undescribed", None if not CLEAN else "Sends a friendly greeting back to whoever calls it."),
        tool("fetch_data", "Fetch data." if not CLEAN else "Fetches the latest sales figures as a CSV table."),
        tool("convert", "Converts a temperature between Celsius and Fahrenheit and returns the result.",
             {"value": text_param("The temperature, e.g. 21C" if CLEAN else None)}, ["value"]),
        tool("broken_schema", "Deletes the named draft and returns whether it existed.",
             {"draft": text_param("The draft's name")}, ["draft"] if CLEAN else ["draft", "missing"]),
        tool("wipe_cache", "Clears the cache of computed reports and returns how many were removed.",
             annotations={"readOnlyHint": not CLEAN, "destructiveHint": True}),
        tool("stats", "Returns visitor statistics for today as structured data.", annotations=READ_ONLY,
             outputSchema={"type": "object", "properties": {"visits": {"type": "integer"}}, "required": ["visits"]}),
        tool("forecast", "Returns tomorrow's forecast temperature as structured data.", annotations=READ_ONLY,
             outputSchema={"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]}),
        tool("lookup", "Looks up a word in the dictionary and returns its meaning.",
             {"word": text_param("The word to look up")}, ["word"], annotations=READ_ONLY),
        # read-only, but a check cannot call them: one runs only as a task, one takes no valid argument
        tool("long_job", "Builds the yearly report and returns it when done.", annotations=READ_ONLY,
             execution={"taskSupport": "required"}),
        tool("pick_color", "Picks a color that goes with the given shades and returns its hex code.",
             {"shades": {"type": "array", "description": "The shades, e.g. teal",
                         "items": {"type": "string"} if CLEAN else True}}, ["shades"], annotations=READ_ONLY),
        tool("impossible", "Returns the code for a short name of 5 letters or more and at most 2.",
             {"code": {**text_param("The short name"), "minLength": 5, "maxLength": 2}}, ["code"],
             annotations=READ_ONLY),
    ]
    if not CLEAN:
        out.append(tool("manual", WORDS * 450, annotations=READ_ONLY))
    out += [good(f"extra_{i}", f"figure {i}") for i in range(EXTRA)]
    return out


def call(name: str, args: dict) -> dict:
    """A tools/call result, or {"error": ...} for a JSON-RPC error."""
    known = {t["name"] for t in tools()}
    if name not in known:
        if CLEAN:
            return {"error": {"code": -32602, "message": f"Unknown tool: {name}"}}
        return {"result": {"content": [{"type": "text", "text": f"no tool {name}"}], "isError": True}}
    if name == "stats":
        data = {"visits": 42}
        if CLEAN:
            return {"result": {"content": [{"type": "text", "text": json.dumps(data)}], "structuredContent": data}}
        return {"result": {"content": [{"type": "text", "text": "42 visits"}]}}
    if name == "forecast":
        data = {"temp": 21.5} if CLEAN else {"temp": "warm"}
        text = json.dumps(data) if CLEAN else "It will be warm."
        return {"result": {"content": [{"type": "text", "text": text}], "structuredContent": data}}
    if name == "lookup":
        if CLEAN:
            return {"result": {"content": [{"type": "text", "text": "no such word"}], "isError": True}}
        return {"error": {"code": -32603, "message": "dictionary offline"}}
    return {"result": {"content": [{"type": "text", "text": "ok"}]}}


PROMPTS = [{"name": n, "description": f"Writes a {n} note."} for n in ("thanks", "apology", "invitation")]
prompt_calls = 0


def handle(msg: dict) -> dict | None:
    global prompt_calls
    method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if rid is None:
        if method == "notifications/initialized" and not CLEAN:
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return None
    if method == "initialize":
        caps = {"tools": {"listChanged": True} if CLEAN else {}, "resources": {}, "prompts": {}}
        return {"protocolVersion": VERSION, "capabilities": caps,
                "serverInfo": {"name": "planted-clean" if CLEAN else "planted", "version": "1.0.0"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": tools()}
    if method == "tools/call":
        return call(params.get("name"), params.get("arguments") or {})
    if method == "resources/list":
        return {"resources": [{"uri": "file:///notes.txt", "name": "notes", "size": 120 if CLEAN else "large"}]}
    if method == "resources/templates/list":
        page = {"resourceTemplates": [{"uriTemplate": "file:///{name}", "name": "file"}]}
        return page if CLEAN else {**page, "nextCursor": "again"}
    if method == "prompts/list":
        prompt_calls += 1
        order = PROMPTS if CLEAN or prompt_calls % 2 else PROMPTS[::-1]
        return {"prompts": order}
    return {"error": {"code": -32601, "message": f"Method not found: {method}"}}


def send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        answer = handle(msg)
        if answer is None:
            continue
        if "error" in answer and set(answer) == {"error"}:
            send({"jsonrpc": "2.0", "id": msg["id"], "error": answer["error"]})
        elif "result" in answer and set(answer) == {"result"}:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": answer["result"]})
        else:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": answer})


if __name__ == "__main__":
    main()
