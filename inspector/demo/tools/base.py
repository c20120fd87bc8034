"""Plumbing shared by the demo tools: registry, call context, argument checks, results."""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, overload

from ..wire import JsonObject, level_enabled

Handler = Callable[[JsonObject, "ToolContext"], Awaitable["JsonObject | InputRequired"]]
T = TypeVar("T")

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


@dataclass(frozen=True)
class Tool:
    name: str
    definition: JsonObject
    handler: Handler
    hidden: bool = False  # only listed while the bonus tool is switched on


REGISTRY: dict[str, Tool] = {}


def tool(name: str, *, description: str, input_schema: JsonObject, annotations: JsonObject,
         title: str | None = None, output_schema: JsonObject | None = None,
         icons: list[JsonObject] | None = None, hidden: bool = False) -> Callable[[Handler], Handler]:
    """Register the decorated coroutine as tool ``name`` with its MCP definition."""
    definition: dict[str, Any] = {"name": name}
    if title:
        definition["title"] = title
    definition.update(description=description, inputSchema=input_schema)
    if output_schema:
        definition["outputSchema"] = output_schema
    definition["annotations"] = annotations
    if icons:
        definition["icons"] = icons

    def register(handler: Handler) -> Handler:
        REGISTRY[name] = Tool(name, definition, handler, hidden)
        return handler
    return register


@dataclass
class DemoState:
    """Mutable state shared by all requests of one server process."""

    bonus_enabled: bool = False
    items: set[str] = field(default_factory=lambda: {"alpha", "beta", "gamma", "old-report", "tmp-42"})


@dataclass
class InputRequired:
    """Returned by a handler (modern era) to ask the client for input first (MRTR)."""

    requests: JsonObject
    state: JsonObject


class ArgError(ValueError):
    """Invalid tool arguments; reported to the caller as an ``isError`` result."""


class ClientRequestError(Exception):
    """The client answered a server-to-client request with an error."""


@dataclass
class ToolContext:
    """What a tool may know and do while running one ``tools/call``."""

    request_id: Any
    modern: bool
    version: str
    client_capabilities: JsonObject
    progress_token: Any
    log_threshold: str | None
    state: DemoState
    notify: Callable[[str, JsonObject], None]
    ask_client: Callable[[str, JsonObject], Awaitable[Any]]  # resolves to whatever the client answered
    tools_changed: Callable[[], None]
    input_responses: JsonObject | None = None
    request_state: JsonObject | None = None

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send ``notifications/progress`` if the caller asked for it."""
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message and self.version >= "2025-03-26":
            params["message"] = message
        self.notify("notifications/progress", params)

    def log(self, level: str, data: Any) -> bool:
        """Send ``notifications/message`` if ``level`` passes the caller's threshold."""
        if not level_enabled(level, self.log_threshold):
            return False
        self.notify("notifications/message", {"level": level, "logger": "demo", "data": data})
        return True

    def can_elicit(self) -> bool:
        """Legacy era: did the client negotiate and declare form elicitation?"""
        caps = self.client_capabilities.get("elicitation")
        return (self.version >= "2025-06-18" and isinstance(caps, dict)
                and (not caps or "form" in caps))


# --------------------------------------------------------------------------
# Argument checks
# --------------------------------------------------------------------------

_MISSING = object()  # no default: the argument is required


def _present(args: JsonObject, name: str, default: Any) -> Any:
    if name in args and args[name] is not None:
        return args[name]
    if default is _MISSING:
        raise ArgError(f"'{name}' is required")
    return default


# The overloads say what comes back: the checked value, or the default when the argument is absent.
@overload
def arg_str(args: JsonObject, name: str, *, choices: list[str] | None = ..., min_len: int = ...,
            max_len: int | None = ..., pattern: str | None = ...) -> str: ...
@overload
def arg_str(args: JsonObject, name: str, *, default: T, choices: list[str] | None = ..., min_len: int = ...,
            max_len: int | None = ..., pattern: str | None = ...) -> str | T: ...
def arg_str(args: JsonObject, name: str, *, default: Any = _MISSING, choices: list[str] | None = None,
            min_len: int = 0, max_len: int | None = None, pattern: str | None = None) -> Any:
    value = _present(args, name, default)
    if value is default:
        return value
    if not isinstance(value, str):
        raise ArgError(f"'{name}' must be a string")
    if choices is not None and value not in choices:
        raise ArgError(f"'{name}' must be one of: {', '.join(map(str, choices))}")
    if len(value) < min_len or (max_len is not None and len(value) > max_len):
        raise ArgError(f"'{name}' must be {min_len}..{max_len or 'any'} characters long")
    if pattern and not re.fullmatch(pattern, value):
        raise ArgError(f"'{name}' must match {pattern}")
    return value


@overload
def arg_num(args: JsonObject, name: str, *, minimum: float | None = ..., maximum: float | None = ...,
            integer: Literal[True]) -> int: ...
@overload
def arg_num(args: JsonObject, name: str, *, default: T, minimum: float | None = ..., maximum: float | None = ...,
            integer: Literal[True]) -> int | T: ...
@overload
def arg_num(args: JsonObject, name: str, *, minimum: float | None = ..., maximum: float | None = ...,
            integer: Literal[False] = ...) -> float: ...
@overload
def arg_num(args: JsonObject, name: str, *, default: T, minimum: float | None = ..., maximum: float | None = ...,
            integer: Literal[False] = ...) -> float | T: ...
def arg_num(args: JsonObject, name: str, *, default: Any = _MISSING, minimum: float | None = None,
            maximum: float | None = None, integer: bool = False) -> Any:
    value = _present(args, name, default)
    if value is default:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ArgError(f"'{name}' must be a finite number")
    if integer:
        if isinstance(value, float) and not value.is_integer():
            raise ArgError(f"'{name}' must be an integer")
        value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ArgError(f"'{name}' must be between {minimum} and {maximum}")
    return value


def arg_bool(args: JsonObject, name: str, default: bool = False) -> bool:
    value = _present(args, name, default)
    if not isinstance(value, bool):
        raise ArgError(f"'{name}' must be true or false")
    return value


# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------

def text(value: str) -> JsonObject:
    return {"type": "text", "text": value}


def result(*blocks: JsonObject, structured: Any = None, is_error: bool = False) -> JsonObject:
    out: dict[str, Any] = {"content": list(blocks)}
    if structured is not None:
        out["structuredContent"] = structured
    if is_error:
        out["isError"] = True
    return out


def error_result(message: str) -> JsonObject:
    return result(text(message), is_error=True)
