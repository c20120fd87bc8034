"""Tools that show off the kinds of content a tool result can carry."""

from __future__ import annotations

import hashlib
import json
import math

from .. import media, resources
from ..wire import JsonObject
from .base import READ_ONLY, ArgError, ToolContext, arg_num, arg_str, error_result, result, text, tool

EXAMPLE_REQUEST = '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'

REPORTS = {
    "mcp": ("Model Context Protocol", "a JSON-RPC protocol that connects AI applications to tools and data",
            [("Tools", "actions the model can call"), ("Resources", "data the client can read"),
             ("Prompts", "reusable message templates")]),
    "json-rpc": ("JSON-RPC 2.0", "a tiny remote-procedure-call protocol encoded as JSON",
                 [("Request", "has an id and expects a response"), ("Notification", "has no id"),
                  ("Response", "carries result or error")]),
    "spyglass": ("Spyglass", "a desktop inspector for MCP servers",
                 [("Tools tab", "call tools with generated forms"), ("Resources tab", "browse and read"),
                  ("Log pane", "watch every message on the wire")]),
}


@tool("echo", title="Echo", icons=[{"src": media.svg_data_uri(), "mimeType": "image/svg+xml",
                                      "sizes": ["any"]}],
      description="Repeats your message back as plain text.",
      input_schema={"type": "object",
                    "properties": {"message": {"type": "string", "description": "Text to echo back"}},
                    "required": ["message"]},
      annotations=READ_ONLY)
async def echo(args: JsonObject, ctx: ToolContext) -> JsonObject:
    return result(text(arg_str(args, "message")))


@tool("markdown_report", title="Markdown report",
      description="Writes a short Markdown report with headings, a list, a table, code and a link.",
      input_schema={"type": "object",
                    "properties": {"topic": {"type": "string", "enum": list(REPORTS), "default": "mcp",
                                             "description": "What the report is about"}}},
      annotations=READ_ONLY)
async def markdown_report(args: JsonObject, ctx: ToolContext) -> JsonObject:
    topic = arg_str(args, "topic", default="mcp", choices=list(REPORTS))
    name, summary, parts = REPORTS[topic]
    rows = "\n".join(f"| **{part}** | {what} |" for part, what in parts)
    bullets = "\n".join(f"- {part}" for part, _ in parts)
    report = (f"# Report: {name}\n\n{name} is {summary}.\n\n## Key parts\n\n{bullets}\n\n"
              f"## At a glance\n\n| Part | What it is |\n|---|---|\n{rows}\n\n"
              f"## Example\n\n```json\n{EXAMPLE_REQUEST}\n```\n\n"
              f"Read more at [modelcontextprotocol.io](https://modelcontextprotocol.io).\n")
    return result(text(report))


@tool("render_chart", title="Render a bar chart",
      description="Draws the given numbers as a small PNG bar chart.",
      input_schema={"type": "object",
                    "properties": {
                        "values": {"type": "array", "items": {"type": "number"}, "minItems": 1,
                                   "maxItems": 12, "description": "Bar heights (negative values go down)"},
                        "colour": {"type": "string", "enum": list(media.PALETTES), "default": "blue",
                                   "description": "Colour of the bars"}},
                    "required": ["values"]},
      annotations=READ_ONLY)
async def render_chart(args: JsonObject, ctx: ToolContext) -> JsonObject:
    values = args.get("values")
    if not isinstance(values, list) or not 1 <= len(values) <= 12:
        raise ArgError("'values' must be an array of 1 to 12 numbers")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        raise ArgError("'values' must contain only finite numbers")
    numbers = [float(v) for v in values]
    colour = arg_str(args, "colour", default="blue", choices=list(media.PALETTES))
    png = media.bar_chart_png(numbers, colour)
    return result({"type": "image", "data": media.b64(png), "mimeType": "image/png"},
                  text(f"A {colour} bar chart of {len(numbers)} value(s), 160x100 pixels."))


@tool("play_tone", title="Play a tone",
      description="Generates a WAV clip of a pure sine tone.",
      input_schema={"type": "object",
                    "properties": {
                        "frequency": {"type": "number", "minimum": 50, "maximum": 2000, "default": 440,
                                      "description": "Pitch in hertz"},
                        "duration_ms": {"type": "integer", "minimum": 100, "maximum": 3000, "default": 500,
                                        "description": "Length in milliseconds"}}},
      annotations=READ_ONLY)
async def play_tone(args: JsonObject, ctx: ToolContext) -> JsonObject:
    frequency = arg_num(args, "frequency", default=440, minimum=50, maximum=2000)
    duration = arg_num(args, "duration_ms", default=500, minimum=100, maximum=3000, integer=True)
    wav = media.sine_wav(frequency, duration)
    return result({"type": "audio", "data": media.b64(wav), "mimeType": "audio/wav"},
                  text(f"A {frequency:g} Hz sine tone, {duration} ms long."))


@tool("get_config_file", title="Get the config file",
      description="Returns the app configuration as an embedded resource, plus the logo as a blob.",
      input_schema={"type": "object", "properties": {}},
      annotations=READ_ONLY)
async def get_config_file(args: JsonObject, ctx: ToolContext) -> JsonObject:
    config = resources.read("demo://config/app.json")[0]
    logo = resources.read("demo://images/logo.png")[0]
    return result(
        {"type": "text", "text": "Here is the current configuration and the logo it refers to.",
         "annotations": {"audience": ["user", "assistant"], "priority": 0.5}},
        {"type": "resource", "resource": config},
        {"type": "resource", "resource": logo})


@tool("find_document", title="Find a document",
      description="Looks up the best-matching demo resource and returns a link to it.",
      input_schema={"type": "object",
                    "properties": {"query": {"type": "string",
                                             "description": "Words to look for, e.g. 'logo'"}},
                    "required": ["query"]},
      annotations=READ_ONLY)
async def find_document(args: JsonObject, ctx: ToolContext) -> JsonObject:
    words = arg_str(args, "query").lower().split()
    listed = resources.list_resources()

    def score(entry: JsonObject) -> int:
        haystack = " ".join(str(entry.get(k, "")) for k in ("uri", "name", "title", "description")).lower()
        return sum(word in haystack for word in words)

    best = max(listed, key=score)
    link: JsonObject = {"type": "resource_link", **{k: best[k] for k in
                                                    ("uri", "name", "title", "description", "mimeType", "size")
                                                    if k in best}}
    found = "Best match" if score(best) else "Nothing matched, so here is the welcome note"
    return result(text(f"{found}: {best['title']}"), link)


CONDITIONS = ["sunny", "partly cloudy", "cloudy", "rain", "snow", "fog", "thunderstorm"]
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {
        "temperature": {"type": "number", "description": "In the requested units"},
        "conditions": {"type": "string", "enum": CONDITIONS},
        "humidity": {"type": "integer", "minimum": 0, "maximum": 100, "description": "Percent"},
    },
    "required": ["temperature", "conditions", "humidity"],
}


@tool("weather", title="Weather (made up)",
      description="Reports invented but repeatable weather for a city, as structured content.",
      input_schema={"type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "Any city name"},
                        "units": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius",
                                  "description": "Temperature scale"}},
                    "required": ["city"]},
      output_schema=WEATHER_SCHEMA, annotations=READ_ONLY)
async def weather(args: JsonObject, ctx: ToolContext) -> JsonObject:
    city = arg_str(args, "city", min_len=1)
    units = arg_str(args, "units", default="celsius", choices=["celsius", "fahrenheit"])
    seed = hashlib.sha256(city.strip().lower().encode()).digest()
    celsius = round(-5 + seed[0] / 255 * 40, 1)
    report = {
        "temperature": celsius if units == "celsius" else round(celsius * 9 / 5 + 32, 1),
        "conditions": CONDITIONS[seed[1] % len(CONDITIONS)],
        "humidity": 20 + seed[2] % 75,
    }
    return result(text(json.dumps(report)), structured=report)


@tool("divide", description="Divides a by b. Dividing by zero returns a friendly tool error.",
      input_schema={"type": "object",
                    "properties": {"a": {"type": "number", "description": "Dividend"},
                                   "b": {"type": "number", "description": "Divisor"}},
                    "required": ["a", "b"]},
      annotations={"title": "Divide two numbers", **READ_ONLY})
async def divide(args: JsonObject, ctx: ToolContext) -> JsonObject:
    a, b = arg_num(args, "a"), arg_num(args, "b")
    if b == 0:
        return error_result(f"Cannot divide {a:g} by zero. Try any other divisor!")
    return result(text(f"{a:g} / {b:g} = {a / b:g}"))
