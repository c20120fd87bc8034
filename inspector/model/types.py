"""The provider-neutral shapes of a chat with a model: a connection, the tools it is offered, the
messages of a conversation, the events of one streamed turn, and the errors a model endpoint ends in
(each with the command line's exit code)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .. import errors as E

OPENAI, ANTHROPIC = "openai", "anthropic"
APIS = {OPENAI: "OpenAI-compatible (chat completions)", ANTHROPIC: "Anthropic Messages"}
KEY_PREFIX = "model-key:"  # the keyring entry of an endpoint's API key: KEY_PREFIX + its base URL
DEFAULT_TIMEOUT = 60.0
RESULT_TEXT_LIMIT = 20_000  # characters of a tool's result handed back to the model


@dataclass(frozen=True)
class ModelConnection:
    """One model endpoint the user added: never its key (that is in the OS keyring, by base URL)."""

    name: str
    api: str  # OPENAI | ANTHROPIC
    base_url: str
    model: str
    timeout: float = DEFAULT_TIMEOUT

    @property
    def key_name(self) -> str:
        return key_name(self.base_url)

    @property
    def label(self) -> str:
        return f"{self.name} · {self.model}" if self.model else self.name

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "api": self.api, "base_url": self.base_url, "model": self.model,
                "timeout": self.timeout}

    @staticmethod
    def from_json(data: Any) -> ModelConnection | None:
        """A saved connection, or None when `data` is not one (a hand-edited settings file)."""
        if not isinstance(data, dict):
            return None
        name, api, url, model = (data.get(k) for k in ("name", "api", "base_url", "model"))
        if not (isinstance(name, str) and name and api in APIS and isinstance(url, str) and url
                and isinstance(model, str)):
            return None
        timeout = data.get("timeout")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            timeout = DEFAULT_TIMEOUT
        return ModelConnection(name, str(api), url, model, float(timeout))


def key_name(base_url: str) -> str:
    return KEY_PREFIX + base_url.strip().rstrip("/")


@dataclass(frozen=True)
class ToolSpec:
    """A tool as a model is offered it: `name` is what the model sees (unique in one request), `tool` the
    server's own name, `server` the server's id (empty when there is one server)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    tool: str = ""
    server: str = ""
    definition: dict[str, Any] | None = None  # the server's whole tool definition (annotations…)

    @property
    def server_tool(self) -> str:
        return self.tool or self.name


_SAFE = re.compile(r"[^A-Za-z0-9_-]")


def offered_name(tool: str, server: str, taken: set[str]) -> str:
    """A name every provider accepts (letters, digits, _ and -, at most 64), unique among `taken`: the
    tool's own when it can be, else prefixed with its server."""
    base = _SAFE.sub("_", tool)[:64] or "tool"
    if base not in taken:
        return base
    prefixed = f"{_SAFE.sub('_', server)[:24]}__{base}"[:64]
    name, n = prefixed, 2
    while name in taken:
        name = f"{prefixed[:60]}_{n}"
        n += 1
    return name


def tool_specs(tools_by_server: dict[str, list[dict[str, Any]]],
               overrides: dict[str, str] | None = None) -> list[ToolSpec]:
    """The tools of the chosen servers as offered to a model; `overrides` replaces a tool's description
    (by the server's tool name; kept here, never sent to the server). Tools an app alone may call are left
    out, as a host leaves them out of a model's list."""
    from ..protocol.apps import app_only

    out: list[ToolSpec] = []
    taken: set[str] = set()
    for server, tools in tools_by_server.items():
        for tool in tools:
            name = tool.get("name")
            if not isinstance(name, str) or not name:
                continue
            if app_only(tool):
                continue
            offered = offered_name(name, server, taken)
            taken.add(offered)
            schema = tool.get("inputSchema")
            description = (overrides or {}).get(name, tool.get("description"))
            out.append(ToolSpec(offered, description if isinstance(description, str) else "",
                                schema if isinstance(schema, dict) else {"type": "object"}, name, server, tool))
    return out


@dataclass
class ToolCall:
    """A tool call the model made: its arguments as the model wrote them (`raw`), and parsed when they are
    a JSON object (`arguments`; `problem` says why not)."""

    id: str
    name: str
    raw: str
    arguments: dict[str, Any] | None = None
    problem: str | None = None

    @staticmethod
    def of(call_id: str, name: str, raw: str | dict[str, Any]) -> ToolCall:
        if isinstance(raw, dict):
            return ToolCall(call_id, name, json.dumps(raw, ensure_ascii=False), raw)
        text = raw.strip() or "{}"
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return ToolCall(call_id, name, raw, None, f"the arguments are not JSON ({exc.msg} at character "
                                                      f"{exc.pos}): {clip(raw, 200)}")
        except (ValueError, RecursionError) as exc:  # a hostile nesting and the like from a hostile nesting
            return ToolCall(call_id, name, raw, None, f"the arguments are not JSON ({exc}): {clip(raw, 200)}")
        if not isinstance(value, dict):
            return ToolCall(call_id, name, raw, None, f"the arguments are not a JSON object: {clip(raw, 200)}")
        return ToolCall(call_id, name, raw, value)


@dataclass
class Message:
    """One message of a conversation: the user's, the model's (text and tool calls), or a tool's result
    (`tool_call_id`), or the instructions (`system`)."""

    role: str  # system | user | assistant | tool
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str = ""
    tool_name: str = ""
    is_error: bool = False


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCallSeen:
    """The model began a tool call (its name known; the arguments still streaming)."""

    name: str


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None
    output_tokens: int | None


@dataclass(frozen=True)
class Finished:
    """The end of a turn: the text, the tool calls (in the order the model made them), why it stopped."""

    text: str
    tool_calls: list[ToolCall]
    stop_reason: str | None
    usage: Usage | None = None


class ModelError(E.SpyglassError):
    """A model endpoint that could not be used: `kind` says how (connect, auth, timeout, refused,
    garbage); the message is a sentence for the chat or stderr."""

    kind = "model"

    def __init__(self, message: str, kind: str = "connect", status: int | None = None) -> None:
        super().__init__(message, status=status)
        self.kind = kind
        self.exit_code = {"auth": E.EXIT_AUTH, "timeout": E.EXIT_TIMEOUT,
                          "garbage": E.EXIT_INVALID}.get(kind, E.EXIT_CONNECT)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def result_text(result: Any, error: str | None = None) -> tuple[str, bool]:
    """A tool's answer as the text handed back to the model, and whether it is an error."""
    if error is not None:
        return error, True
    if not isinstance(result, dict):
        return clip(json.dumps(result, ensure_ascii=False, default=str), RESULT_TEXT_LIMIT), True
    parts: list[str] = []
    for block in result.get("content") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} {block.get('mimeType', '')}]".replace(" ]", "]"))
        elif kind == "resource_link":
            parts.append(f"[resource link {block.get('uri', '')}]")
        elif kind == "resource":
            res = block.get("resource")
            res = res if isinstance(res, dict) else {}
            inner = res.get("text")
            parts.append(inner if isinstance(inner, str) else f"[resource {res.get('uri', '')}]")
    if "structuredContent" in result and not parts:
        parts.append(json.dumps(result["structuredContent"], ensure_ascii=False, default=str))
    return clip("\n".join(parts) or "(no content)", RESULT_TEXT_LIMIT), result.get("isError") is True
