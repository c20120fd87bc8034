"""Tools that exercise protocol behaviour: progress, cancellation, logging, elicitation,
list changes, destructive actions and rich input forms."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime
from typing import Any

from ..wire import LOG_LEVELS, JsonObject
from .base import (
    READ_ONLY,
    ArgError,
    ClientRequestError,
    InputRequired,
    ToolContext,
    arg_bool,
    arg_num,
    arg_str,
    error_result,
    result,
    text,
    tool,
)

EMAIL = r"[^@\s]+@[^@\s]+\.[^@\s]+"


@tool("long_task", title="Long-running task",
      description="Works through a number of steps, reporting progress and logging each one. "
                  "Cancel it to see it stop.",
      input_schema={"type": "object",
                    "properties": {
                        "steps": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10,
                                  "description": "How many steps to work through"},
                        "step_ms": {"type": "integer", "minimum": 10, "maximum": 2000, "default": 300,
                                    "description": "Milliseconds per step"}}},
      annotations=READ_ONLY)
async def long_task(args: JsonObject, ctx: ToolContext) -> JsonObject:
    steps = arg_num(args, "steps", default=10, minimum=1, maximum=50, integer=True)
    step_ms = arg_num(args, "step_ms", default=300, minimum=10, maximum=2000, integer=True)
    for step in range(1, steps + 1):
        await asyncio.sleep(step_ms / 1000)
        ctx.progress(step, steps, f"Step {step} of {steps}")
        ctx.log("info", f"long_task: finished step {step} of {steps}")
    return result(text(f"Done: {steps} steps of {step_ms} ms each."))


@tool("log_demo", title="Log at every level",
      description="Emits one log message per level, debug to emergency, filtered by the client's level.",
      input_schema={"type": "object", "properties": {}},
      annotations=READ_ONLY)
async def log_demo(args: JsonObject, ctx: ToolContext) -> JsonObject:
    def payload(level: str) -> str | JsonObject:  # data may be any JSON value; show a string and an object
        if level == "error":
            return {"message": "This is an error message", "code": 42, "retryable": False}
        return f"This is a {level} message from log_demo"

    sent = [level for level in LOG_LEVELS if ctx.log(level, payload(level))]
    if ctx.log_threshold is None:
        return result(text("No log messages sent: this request did not set "
                           "_meta io.modelcontextprotocol/logLevel."))
    return result(text(f"Sent {len(sent)} of {len(LOG_LEVELS)} messages (level {ctx.log_threshold} "
                       f"and above): {', '.join(sent) or 'none'}."))


@tool("delete_item", title="Delete an item",
      description="Deletes a demo item for good. Needs confirm=true; deleting twice is harmless.",
      input_schema={"type": "object",
                    "properties": {
                        "id": {"type": "string", "pattern": "^[a-z0-9-]+$",
                               "description": "Item id, e.g. alpha, beta, gamma, old-report, tmp-42"},
                        "confirm": {"type": "boolean", "default": False,
                                    "description": "Really delete?"}},
                    "required": ["id"]},
      annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
                   "openWorldHint": False})
async def delete_item(args: JsonObject, ctx: ToolContext) -> JsonObject:
    item = arg_str(args, "id", pattern=r"[a-z0-9-]+")
    items = ctx.state.items
    if not arg_bool(args, "confirm"):
        return result(text(f"Dry run: would delete '{item}'. Call again with confirm=true to delete it."))
    if item not in items:
        return result(text(f"'{item}' is already gone, nothing to do."))
    items.discard(item)
    return result(text(f"Deleted '{item}'. Remaining: {', '.join(sorted(items)) or 'none'}."))


@tool("search_web", title="Search the web (simulated)",
      description="Pretends to search the internet and returns invented results. No network is used.",
      input_schema={"type": "object",
                    "properties": {
                        "query": {"type": "string", "minLength": 1, "description": "What to search for"},
                        "max_results": {"type": "integer", "minimum": 1, "maximum": 5, "default": 3,
                                        "description": "How many results to return"}},
                    "required": ["query"]},
      annotations={"readOnlyHint": True, "openWorldHint": True})
async def search_web(args: JsonObject, ctx: ToolContext) -> JsonObject:
    query = arg_str(args, "query", min_len=1).strip()
    count = arg_num(args, "max_results", default=3, minimum=1, maximum=5, integer=True)
    slug = re.sub(r"[^a-z0-9]+", "-", query.lower()).strip("-") or "query"
    titles = ["An introduction to {}", "{} explained", "Ten things to know about {}",
              "The history of {}", "{}: frequently asked questions"]
    hits = [(t.format(query), f"https://example.com/{slug}/{i + 1}") for i, t in enumerate(titles[:count])]
    summary = "\n".join(f"{i}. [{title}]({url})" for i, (title, url) in enumerate(hits, 1))
    links = [{"type": "resource_link", "uri": url, "name": f"result-{i}", "title": title,
              "mimeType": "text/html"} for i, (title, url) in enumerate(hits, 1)]
    return result(text(f"Results for \"{query}\" (simulated):\n\n{summary}"), *links)


ATTENDEE = {"type": "object", "title": "Attendee",
            "properties": {"name": {"type": "string"}, "email": {"type": "string", "format": "email"}},
            "required": ["name", "email"]}

EVENT_SCHEMA = {
    "type": "object",
    "$defs": {"attendee": ATTENDEE},
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 80, "description": "What is it?"},
        "when": {"type": "string", "format": "date-time", "description": "Start, e.g. 2030-01-31T09:30:00Z"},
        "attendees": {"type": "array", "items": {"$ref": "#/$defs/attendee"}, "description": "Who is invited"},
        "priority": {"type": ["string", "null"], "enum": ["low", "normal", "high", None],
                     "default": "normal", "description": "How important it is"},
        "all_day": {"type": "boolean", "default": False, "description": "Takes the whole day"},
        "duration_minutes": {"type": "integer", "minimum": 5, "maximum": 480, "multipleOf": 5, "default": 30,
                             "description": "Length in minutes, in steps of 5"},
        "location": {"type": "object", "description": "Where it takes place",
                     "properties": {"room": {"type": "string"}, "floor": {"type": "integer"}}},
        "reminder": {"description": "How to be reminded", "oneOf": [
            {"type": "object", "title": "Email",
             "properties": {"email": {"type": "string", "format": "email"}}, "required": ["email"]},
            {"type": "object", "title": "Popup", "properties": {"minutes_before": {"type": "integer"}},
             "required": ["minutes_before"]},
        ]},
    },
    "required": ["title", "when"],
}


@tool("create_event", title="Create a calendar event",
      description="Creates a (pretend) calendar event. Its input uses every JSON Schema type.",
      input_schema=EVENT_SCHEMA,
      annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False,
                   "openWorldHint": False})
async def create_event(args: JsonObject, ctx: ToolContext) -> JsonObject:
    title = arg_str(args, "title", min_len=1, max_len=80)
    raw_when = arg_str(args, "when")
    try:
        when = datetime.fromisoformat(raw_when)
    except ValueError:
        raise ArgError("'when' must be an RFC 3339 date-time such as 2030-01-31T09:30:00Z") from None
    priority = args.get("priority", "normal")
    if priority not in ("low", "normal", "high", None):
        raise ArgError("'priority' must be low, normal, high or null")
    all_day = arg_bool(args, "all_day")
    minutes = arg_num(args, "duration_minutes", default=30, minimum=5, maximum=480, integer=True)
    if minutes % 5:
        raise ArgError("'duration_minutes' must be a multiple of 5")
    attendees = args.get("attendees") or []
    if not isinstance(attendees, list):
        raise ArgError("'attendees' must be an array of objects with name and email")
    people = [_attendee(a) for a in attendees]
    lines = [f"Created event \"{title}\"",
             f"- When: {when:%A %d %B %Y}" + ("" if all_day else f" at {when:%H:%M}, {minutes} min"),
             f"- Priority: {priority or 'none'}"]
    if people:
        lines.append("- Attendees: " + ", ".join(people))
    location = args.get("location")
    if isinstance(location, dict) and location:
        lines.append(f"- Location: room {location.get('room', '?')}, floor {location.get('floor', '?')}")
    reminder = args.get("reminder")
    if isinstance(reminder, dict) and "email" in reminder:
        lines.append(f"- Reminder: email to {reminder['email']}")
    elif isinstance(reminder, dict) and "minutes_before" in reminder:
        lines.append(f"- Reminder: popup {reminder['minutes_before']} min before")
    elif reminder is not None:
        raise ArgError("'reminder' must have either 'email' or 'minutes_before'")
    return result(text("\n".join(lines)))


def _attendee(value: Any) -> str:
    if not isinstance(value, dict):
        raise ArgError("each attendee must be an object with name and email")
    name = arg_str(value, "name")
    email = arg_str(value, "email")
    if not re.fullmatch(EMAIL, email):
        raise ArgError(f"'{email}' is not an email address")
    return f"{name} <{email}>"


COLOURS = ["red", "orange", "yellow", "green", "blue", "purple"]
ELICIT_KEY = "profile"


@tool("ask_user", title="Ask the user",
      description="Asks you for your name and favourite colour, in a form your app shows you.",
      input_schema={"type": "object",
                    "properties": {"question": {"type": "string", "description": "Optional custom message"}}},
      annotations={"readOnlyHint": True, "openWorldHint": False})
async def ask_user(args: JsonObject, ctx: ToolContext) -> JsonObject | InputRequired:
    question = arg_str(args, "question", default="Hello! Who are you, and what is your favourite colour?")
    params = {"message": question,
              "requestedSchema": {
                  "type": "object",
                  "properties": {"name": {"type": "string", "title": "Your name"},
                                 "colour": {"type": "string", "title": "Favourite colour", "enum": COLOURS}},
                  "required": ["name"]}}
    if ctx.modern or ctx.version >= "2025-11-25":
        params = {"mode": "form", **params}
    if ctx.modern:
        answer = (ctx.input_responses or {}).get(ELICIT_KEY) if ctx.request_state else None
        if answer is None:
            request = {"method": "elicitation/create", "params": params}
            return InputRequired({ELICIT_KEY: request}, {"round": 1, "asked": ELICIT_KEY})
        return _describe(answer)
    if ctx.version < "2025-06-18":
        return error_result(f"ask_user needs elicitation, which arrived in protocol 2025-06-18; "
                            f"this session negotiated {ctx.version}.")
    if not ctx.can_elicit():
        return error_result("This client did not declare the 'elicitation' capability in initialize, "
                            "so ask_user cannot ask you anything. Enable elicitation and reconnect.")
    try:
        return _describe(await ctx.ask_client("elicitation/create", params))
    except ClientRequestError as exc:
        return error_result(f"The client could not ask the question: {exc}")


def _describe(answer: Any) -> JsonObject:
    if not isinstance(answer, dict) or answer.get("action") not in ("accept", "decline", "cancel"):
        return error_result("The elicitation answer was not understood (expected an action).")
    if answer["action"] == "decline":
        return result(text("You declined to answer. No problem!"))
    if answer["action"] == "cancel":
        return result(text("The question was dismissed without an answer."))
    given = answer.get("content")
    content = given if isinstance(given, dict) else {}
    colour = content.get("colour")
    return result(text(f"Nice to meet you, {content.get('name', 'mystery guest')}!"
                       + (f" {str(colour).capitalize()} is a great colour." if colour else "")))


@tool("toggle_bonus_tool", title="Toggle the bonus tool",
      description="Adds or removes the 'bonus' tool and announces that the tool list changed.",
      input_schema={"type": "object", "properties": {}},
      annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False,
                   "openWorldHint": False})
async def toggle_bonus_tool(args: JsonObject, ctx: ToolContext) -> JsonObject:
    ctx.state.bonus_enabled = not ctx.state.bonus_enabled
    ctx.tools_changed()
    shown = "added" if ctx.state.bonus_enabled else "removed"
    how = ("subscribers to subscriptions/listen were notified" if ctx.modern
           else "notifications/tools/list_changed was sent")
    return result(text(f"The 'bonus' tool was {shown}; {how}. Refresh the tool list to see it."))


@tool("bonus", title="Bonus tool", hidden=True,
      description="Only listed after toggle_bonus_tool. Says hello.",
      input_schema={"type": "object", "properties": {}}, annotations=READ_ONLY)
async def bonus(args: JsonObject, ctx: ToolContext) -> JsonObject:
    return result(text("You found the bonus tool. Well done!"))
