"""Minimal shape checks of results, per method.

Only what a client relies on is checked (a list where a list must be, a name
where a name must be); everything else passes through for the user to see.
Each check returns None or a one-line description of the problem.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import skills

CONTENT_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})


def _list_of_named(result: Any, key: str, need: tuple[str, ...]) -> str | None:
    if not isinstance(result, dict):
        return f"result is {_kind(result)}, not an object"
    items = result.get(key)
    if not isinstance(items, list):
        return f'"{key}" is {_kind(items)}, not a list'
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            return f"{key}[{i}] is {_kind(item)}, not an object"
        for field in need:
            if not isinstance(item.get(field), str):
                return f'{key}[{i}] has no string "{field}"'
    cursor = result.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        return f'"nextCursor" is {_kind(cursor)}, not a string'
    return None


def _content_list(content: Any, where: str) -> str | None:
    if not isinstance(content, list):
        return f'"{where}" is {_kind(content)}, not a list'
    for i, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return f'{where}[{i}] is not a content block with a string "type"'
    return None


def _call_tool(result: Any) -> str | None:
    if not isinstance(result, dict):
        return f"result is {_kind(result)}, not an object"
    if "content" not in result and "structuredContent" in result:
        return None
    if "content" not in result and isinstance(result.get("task"), dict):
        return None  # a CreateTaskResult (2025-11-25 tasks); the client checks the task itself
    return _content_list(result.get("content"), "content")


def _read_resource(result: Any) -> str | None:
    if not isinstance(result, dict):
        return f"result is {_kind(result)}, not an object"
    contents = result.get("contents")
    if not isinstance(contents, list):
        return f'"contents" is {_kind(contents)}, not a list'
    for i, item in enumerate(contents):
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            return f'contents[{i}] has no string "uri"'
    return None


def _get_prompt(result: Any) -> str | None:
    if not isinstance(result, dict):
        return f"result is {_kind(result)}, not an object"
    messages = result.get("messages")
    if not isinstance(messages, list):
        return f'"messages" is {_kind(messages)}, not a list'
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            return f'messages[{i}] has no string "role"'
    return None


def _complete(result: Any) -> str | None:
    if not isinstance(result, dict) or not isinstance(result.get("completion"), dict):
        return 'result has no "completion" object'
    if not isinstance(result["completion"].get("values"), list):
        return '"completion.values" is not a list'
    return None


def _object(result: Any) -> str | None:
    return None if isinstance(result, dict) else f"result is {_kind(result)}, not an object"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _skills(parse: Callable[[Any], Any], result: Any) -> str | None:
    try:
        parse(result)
    except skills.SkillShapeError as exc:
        return str(exc)
    return None


CHECKS: dict[str, Callable[[Any], str | None]] = {
    "tools/list": lambda r: _list_of_named(r, "tools", ("name",)),
    "resources/list": lambda r: _list_of_named(r, "resources", ("uri", "name")),
    "resources/templates/list": lambda r: _list_of_named(r, "resourceTemplates", ("uriTemplate", "name")),
    "prompts/list": lambda r: _list_of_named(r, "prompts", ("name",)),
    "tools/call": _call_tool,
    "tasks/result": lambda r: _call_tool(r) if not (isinstance(r, dict) and "content" not in r and "task" in r)
    else 'the result of a task is a task again ("task" and no "content")',  # Spyglass fetches tools/call tasks only
    "resources/read": _read_resource,
    "prompts/get": _get_prompt,
    "completion/complete": _complete,
    skills.LIST_METHOD: lambda r: _skills(skills.parse_list, r),
    skills.GET_METHOD: lambda r: _skills(skills.parse_get, r),
}


def check_result(method: str, result: Any) -> str | None:
    """None when `result` has the shape `method` requires, else the problem."""
    try:
        return CHECKS.get(method, _object)(result)
    except Exception as exc:  # pragma: no cover - defensive
        return f"unreadable result ({type(exc).__name__})"
