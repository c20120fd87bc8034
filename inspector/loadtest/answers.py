"""What the Locust user makes of an answer, without Locust (so it is tested in any process): the JSON-RPC response
to a request read from a JSON body or an event stream, the result or the failure of its kind, the name a request is
reported under."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

SNIPPET = 200  # characters of a tool error's text or a body kept in the failure's message

# a check of an answer (the JSON-RPC response, the request's time in ms): None when it is as expected, else what was
# expected (inspector/loadtest/expectations.py makes one from a collection step's `expect`)
Check = Callable[[dict[str, Any], float], str | None]


class McpFailure(Exception):
    """Why an answer counts as a failure; the kind leads the message (`rpc_error -32602: …`)."""

    def __init__(self, kind: str, message: str, code: int | None = None) -> None:
        self.kind, self.code = kind, code
        head = f"{kind} {code}" if code is not None else kind
        super().__init__(f"{head}: {' '.join(message.split())[:SNIPPET]}")


def request_name(method: str, params: dict[str, Any] | None) -> str:
    """The name a request is reported under: its method, then the tool, prompt or resource it names."""
    for key in ("name", "uri"):
        if method in ("tools/call", "prompts/get", "resources/read") and isinstance((params or {}).get(key), str):
            return f"{method} {params[key]}"  # type: ignore[index]
    return method


def read_answer(body: bytes, content_type: str, request_id: int) -> dict[str, Any]:
    """The JSON-RPC response to `request_id`, from a JSON body or an event stream; McpFailure when there is none."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise McpFailure("invalid_response", "the answer is not UTF-8") from None
    if content_type.split(";")[0].strip().lower() == "text/event-stream":
        messages = [m for m in (_event_data(e) for e in text.replace("\r\n", "\n").split("\n\n")) if m is not None]
    else:
        messages = [text]
    for raw in messages:
        try:
            message = json.loads(raw)
        except ValueError:
            raise McpFailure("invalid_response", f"not JSON: {raw[:SNIPPET]}") from None
        if isinstance(message, dict) and message.get("id") == request_id and ("result" in message
                                                                              or "error" in message):
            return message
    raise McpFailure("invalid_response", f"no response to request {request_id} in the answer")


def _event_data(event: str) -> str | None:
    """The data of one server-sent event (its `data:` lines joined), None for an event without data."""
    lines = [line[5:].removeprefix(" ") for line in event.split("\n") if line.startswith("data:")]
    return "\n".join(lines) if lines else None


def judge(message: dict[str, Any]) -> dict[str, Any]:
    """The result of a response; McpFailure for a JSON-RPC error, a tool error or a result that is not an object."""
    error = message.get("error")
    if error is not None:
        code = error.get("code") if isinstance(error, dict) else None
        text = error.get("message") if isinstance(error, dict) else None
        raise McpFailure("rpc_error", str(text or error), code if isinstance(code, int) else None)
    result = message.get("result")
    if not isinstance(result, dict):
        raise McpFailure("invalid_response", f"the result is not an object: {json.dumps(result)[:SNIPPET]}")
    if result.get("isError") is True:
        content = result.get("content")
        texts = [str(b["text"]) for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)] \
            if isinstance(content, list) else []
        raise McpFailure("tool_error", " ".join(texts) or "isError: true")
    return result
