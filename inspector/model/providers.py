"""One streamed turn with a model, through the providers' own clients: `openai` for any OpenAI-compatible
chat-completions endpoint (Ollama, LM Studio, llama.cpp, vLLM, OpenRouter, OpenAI), `anthropic` for the
Messages API. Both speak through an httpx2 client whose transport records the traffic (`wire.py`), make
no retries of their own (a person is waiting, and a retry would hide what happened), and turn whatever
goes wrong into a `ModelError` that says it in a sentence: a refused key, a timeout, an endpoint that
cannot be reached, an answer that is not what the API promises."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any, Protocol

import httpx2

from ..secrets import MASK
from .types import (
    ANTHROPIC,
    Finished,
    Message,
    ModelConnection,
    ModelError,
    TextDelta,
    ToolCall,
    ToolCallSeen,
    ToolSpec,
    Usage,
    clip,
)
from .wire import Record, RecordingTransport

Event = TextDelta | ToolCallSeen | Usage | Finished
MAX_TOKENS = 4096  # the Messages API needs a ceiling; a tool call or a short answer is far below it
NO_KEY = "no-key"  # local endpoints (Ollama, LM Studio) take any key; the clients insist on one
_KEYISH = re.compile(r"\b(?:sk|key|api)[-_][A-Za-z0-9_*-]{8,}")


class ChatModel(Protocol):
    connection: ModelConnection

    def stream(self, messages: list[Message], tools: list[ToolSpec]) -> AsyncIterator[Event]: ...

    async def models(self) -> list[str]: ...

    async def aclose(self) -> None: ...


def open_chat(connection: ModelConnection, key: str | None, record: Record | None = None) -> ChatModel:
    """A chat with `connection`'s model; `record` gets every frame of its traffic."""
    inner = httpx2.AsyncHTTPTransport(proxy=proxy_for(connection.base_url))
    # the proxy is chosen here (not by httpx2 from the environment) so that every exchange passes the recorder
    http = httpx2.AsyncClient(transport=RecordingTransport(record, inner), timeout=connection.timeout,
                              trust_env=False)
    if connection.api == ANTHROPIC:
        return AnthropicChat(connection, key, http)
    return OpenAIChat(connection, key, http)


def proxy_for(url: str) -> str | None:
    """The environment's proxy for `url` (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY; NO_PROXY respected), or None."""
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
        return None
    return proxy


def _where(connection: ModelConnection) -> str:
    return f"the model endpoint {connection.base_url}"


def scrub(text: str, key: str | None) -> str:
    """`text` with the key, and anything shaped like a key (an endpoint may echo part of it), masked."""
    if key:
        text = text.replace(key, MASK)
    return _KEYISH.sub(MASK, text)


def failure(connection: ModelConnection, exc: BaseException, key: str | None = None) -> ModelError:
    """What went wrong, in a sentence (both clients' errors have the same names); never the key."""
    said = _failure(connection, exc)
    said.message = scrub(said.message, key)
    said.args = (said.message,)
    return said


def _failure(connection: ModelConnection, exc: BaseException) -> ModelError:
    where = _where(connection)
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    if isinstance(exc, ModelError):
        return exc
    if name == "APITimeoutError" or isinstance(exc, (TimeoutError, httpx2.TimeoutException)):
        return ModelError(f"{where} did not answer within {connection.timeout:g} s", "timeout")
    if name == "AuthenticationError" or status in (401, 403):
        return ModelError(f"{where} refused the API key (HTTP {status}): {_said(exc)}", "auth", status)
    if name == "APIConnectionError" or isinstance(exc, httpx2.TransportError):
        cause = exc.__cause__ or exc.__context__ or exc
        return ModelError(f"cannot reach {where}: {type(cause).__name__}: {cause}".rstrip(": "), "connect")
    if isinstance(status, int):
        return ModelError(f"{where} answered HTTP {status}: {_said(exc)}", "refused", status)
    return ModelError(f"{where} sent something that could not be read ({name}: {clip(str(exc), 300)})",
                      "garbage")


def _said(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if isinstance(message, str) and message:
            return clip(message, 300)
    return clip(getattr(exc, "message", None) or str(exc), 300)


# ---------------------------------------------------------------------- OpenAI-compatible
class _Chat:
    """What both providers' chats share: the connection, its key, the provider's client and its model list."""

    client: Any

    def __init__(self, connection: ModelConnection, key: str | None) -> None:
        self.connection = connection
        self.key = key

    async def aclose(self) -> None:
        await self.client.close()

    async def models(self) -> list[str]:
        try:
            page = await self.client.models.list()
            return sorted(str(m.id) for m in page.data)
        except Exception as exc:
            raise failure(self.connection, exc, self.key) from None


class OpenAIChat(_Chat):
    def __init__(self, connection: ModelConnection, key: str | None, http: httpx2.AsyncClient) -> None:
        import openai

        super().__init__(connection, key)
        self.usage_asked = True  # stream_options.include_usage, until the endpoint refuses the option
        self.client = openai.AsyncOpenAI(api_key=key or NO_KEY, base_url=connection.base_url, max_retries=0,
                                         timeout=connection.timeout, http_client=http)

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        """The streamed request; an endpoint that refuses `stream_options` (older llama.cpp and vLLM servers)
        is asked again without it, and from then on (it reports no token counts)."""
        try:
            return await self.client.chat.completions.create(**kwargs)
        except Exception as exc:
            if "stream_options" not in kwargs or getattr(exc, "status_code", None) not in (400, 422) or \
                    "stream_options" not in str(exc):
                raise
            self.usage_asked = False
            del kwargs["stream_options"]
            return await self.client.chat.completions.create(**kwargs)

    @staticmethod
    def wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for m in messages:
            if m.role == "tool":
                out.append({"role": "tool", "tool_call_id": m.tool_call_id,
                            "content": ("ERROR: " if m.is_error else "") + m.text})
            elif m.role == "assistant":
                said: dict[str, Any] = {"role": "assistant", "content": m.text or None}
                if m.tool_calls:
                    said["tool_calls"] = [{"id": c.id, "type": "function",
                                           "function": {"name": c.name, "arguments": c.raw or "{}"}}
                                          for c in m.tool_calls]
                out.append(said)
            else:
                out.append({"role": m.role, "content": m.text})
        return out

    async def stream(self, messages: list[Message], tools: list[ToolSpec]) -> AsyncIterator[Event]:
        kwargs: dict[str, Any] = {"model": self.connection.model, "messages": self.wire_messages(messages),
                                  "stream": True}
        if self.usage_asked:
            kwargs["stream_options"] = {"include_usage": True}
        if tools:
            kwargs["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                                 "parameters": t.input_schema}} for t in tools]
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        stop: str | None = None
        usage: Usage | None = None
        try:
            chunks = await self._create(kwargs)
            async for chunk in chunks:
                if getattr(chunk, "usage", None) is not None:
                    u = chunk.usage
                    usage = Usage(getattr(u, "prompt_tokens", None), getattr(u, "completion_tokens", None))
                    yield usage
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None and delta.content:
                        text.append(delta.content)
                        yield TextDelta(delta.content)
                    for part in (delta.tool_calls if delta is not None else None) or []:
                        index = part.index if isinstance(part.index, int) else len(calls)
                        slot = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
                        if part.id:
                            slot["id"] = part.id
                        fn = part.function
                        if fn is not None and fn.name:
                            if not slot["name"]:
                                yield ToolCallSeen(fn.name)
                            slot["name"] += fn.name if not slot["name"] else ""
                        if fn is not None and fn.arguments:
                            slot["arguments"] += fn.arguments
                    if choice.finish_reason:
                        stop = choice.finish_reason
        except Exception as exc:
            raise failure(self.connection, exc, self.key) from None
        made = [ToolCall.of(slot["id"] or f"call_{i}", slot["name"], slot["arguments"])
                for i, slot in sorted(calls.items())]
        nameless = [c for c in made if not c.name]
        if nameless:
            raise ModelError(f"{_where(self.connection)} streamed a tool call without a name", "garbage")
        if stop is None and not text and not made:
            raise ModelError(f"{_where(self.connection)} ended its answer with nothing in it (no text, no tool "
                             f"call, no finish reason)", "garbage")
        yield Finished("".join(text), made, stop, usage)


# ---------------------------------------------------------------------- Anthropic Messages
class AnthropicChat(_Chat):
    def __init__(self, connection: ModelConnection, key: str | None, http: httpx2.AsyncClient) -> None:
        import anthropic

        super().__init__(connection, key)
        self.client = anthropic.AsyncAnthropic(api_key=key or NO_KEY, base_url=connection.base_url, max_retries=0,
                                               timeout=connection.timeout, http_client=http)

    @staticmethod
    def wire_messages(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
        system = "\n\n".join(m.text for m in messages if m.role == "system") or None
        out: list[dict[str, Any]] = []
        for m in messages:
            if m.role == "system":
                continue
            if m.role == "tool":
                block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.text or "(empty)",
                         "is_error": m.is_error}
                if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                    out[-1]["content"].append(block)  # the results of one turn's calls go back together
                else:
                    out.append({"role": "user", "content": [block]})
            elif m.role == "assistant":
                content: list[dict[str, Any]] = [{"type": "text", "text": m.text}] if m.text else []
                content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments or {}}
                            for c in m.tool_calls]
                out.append({"role": "assistant", "content": content or [{"type": "text", "text": "(no text)"}]})
            else:
                out.append({"role": "user", "content": m.text})
        return system, out

    async def stream(self, messages: list[Message], tools: list[ToolSpec]) -> AsyncIterator[Event]:
        system, wire = self.wire_messages(messages)
        kwargs: dict[str, Any] = {"model": self.connection.model, "messages": wire, "max_tokens": MAX_TOKENS,
                                  "stream": True}
        if system:
            kwargs["system"] = system
        if tools:
            kwargs["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                               for t in tools]
        text: list[str] = []
        blocks: dict[int, dict[str, str]] = {}
        stop: str | None = None
        tokens_in: int | None = None
        tokens_out: int | None = None
        try:
            events = await self.client.messages.create(**kwargs)
            async for event in events:
                kind = getattr(event, "type", None)
                if kind == "message_start":
                    u = getattr(event.message, "usage", None)
                    tokens_in = getattr(u, "input_tokens", None)
                elif kind == "content_block_start":
                    block = event.content_block
                    if getattr(block, "type", None) == "tool_use":
                        blocks[event.index] = {"id": block.id, "name": block.name, "arguments": ""}
                        yield ToolCallSeen(block.name)
                    elif getattr(block, "type", None) == "text" and getattr(block, "text", ""):
                        text.append(block.text)
                        yield TextDelta(block.text)
                elif kind == "content_block_delta":
                    delta = event.delta
                    if getattr(delta, "type", None) == "text_delta":
                        text.append(delta.text)
                        yield TextDelta(delta.text)
                    elif getattr(delta, "type", None) == "input_json_delta" and event.index in blocks:
                        blocks[event.index]["arguments"] += delta.partial_json
                elif kind == "message_delta":
                    stop = getattr(event.delta, "stop_reason", None) or stop
                    u = getattr(event, "usage", None)
                    tokens_out = getattr(u, "output_tokens", None)
                elif kind == "error":
                    error = getattr(event, "error", None)
                    raise ModelError(f"{_where(self.connection)} reported an error in its stream: "
                                     f"{getattr(error, 'message', None) or error}", "refused")
        except Exception as exc:
            raise failure(self.connection, exc, self.key) from None
        usage = Usage(tokens_in, tokens_out) if tokens_in is not None or tokens_out is not None else None
        if usage is not None:
            yield usage
        made = [ToolCall.of(b["id"], b["name"], b["arguments"]) for _i, b in sorted(blocks.items())]
        if stop is None and not text and not made:
            raise ModelError(f"{_where(self.connection)} ended its answer with nothing in it", "garbage")
        yield Finished("".join(text), made, stop, usage)


def describe_arguments(call: ToolCall) -> str:
    if call.arguments is not None:
        return json.dumps(call.arguments, ensure_ascii=False, indent=2)
    return call.raw
