"""Two scripted model endpoints on 127.0.0.1 (an ephemeral port each, a thread each, stopped by the test):
an OpenAI-compatible chat-completions server and an Anthropic Messages-compatible one. No model: each
answer is chosen by the words of the last user message (RULES), so a test knows what comes back —
streamed text in several chunks, a tool call (arguments streamed in pieces), a call of a tool that does
not exist, arguments that are not JSON, a refused key (401), an HTTP error, a stream of garbage, an answer
slower than the client's timeout. After a tool's result the model says what the tool answered. Every
request body is kept (`requests`) for the tests to read.

    with OpenAIPeer(key="good-key") as peer:   # peer.url is the base URL (…/v1)
        ...
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODELS = ["scripted-large", "scripted-small"]
SLOW_S = 10.0  # longer than any client timeout the tests set, and than a Stop takes

# words in the user's message -> what the model does: ("text", TEXT) | ("tool", NAME, ARGUMENTS as JSON text)
# | ("http", STATUS) | ("garbage",) | ("slow",) | ("alternate", [actions…]) | ("empty",)
RULES: list[tuple[str, tuple[Any, ...]]] = [
    ("weather", ("tool", "weather", '{"city": "Paris"}')),
    ("delete", ("tool", "delete_item", '{"id": "alpha", "confirm": true}')),
    ("echo", ("tool", "echo", '{"message": "hello from the model"}')),
    ("bad arguments", ("tool", "weather", '{"city": 42, "units": "kelvin"}')),
    ("unknown tool", ("tool", "launch_rockets", '{"count": 3}')),
    ("broken json", ("tool", "weather", '{"city": "Par')),
    ("garbage", ("garbage",)),
    ("server error", ("http", 500)),
    ("slow", ("slow",)),
    ("empty", ("empty",)),
    ("hesitate", ("alternate", [("tool", "weather", '{"city": "Oslo"}'), ("text", "Which city do you mean?")])),
    ("try sampling", ("tool", "trigger-sampling-request", '{"prompt": "write a poem", "maxTokens": 50}')),
    ("poem", ("text", "Roses are red, servers reply.")),
]
DEFAULT = ("text", "Hello! I am a scripted model. Ask me about the weather.")


def decide(last_user: str, counter: dict[str, int]) -> tuple[Any, ...]:
    low = last_user.lower()
    for words, action in RULES:
        if words in low:
            if action[0] == "alternate":
                n = counter.get(words, 0)
                counter[words] = n + 1
                return action[1][n % len(action[1])]
            return action
    return DEFAULT


def pieces(text: str, size: int = 7) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


class _Peer:
    kind = ""

    def __init__(self, key: str | None = None, *, strict: bool = False) -> None:
        self.key = key
        self.strict = strict  # refuse stream_options, as older llama.cpp and vLLM servers do
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.counter: dict[str, int] = {}
        peer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                peer.get(self)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                peer.headers.append({k.lower(): v for k, v in self.headers.items()})
                try:
                    data = json.loads(body)
                except ValueError:
                    data = {}
                peer.requests.append(data)
                try:
                    peer.post(self, data)
                except OSError:  # the client gave up first (a timeout, Stop): nothing to answer
                    self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name=f"{self.kind}-peer", daemon=True)

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def __enter__(self) -> _Peer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    # ---------------------------------------------------------------- helpers
    @staticmethod
    def send_json(h: BaseHTTPRequestHandler, status: int, value: Any) -> None:
        body = json.dumps(value).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    @staticmethod
    def start_stream(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True

    @staticmethod
    def event(h: BaseHTTPRequestHandler, data: Any, name: str | None = None) -> None:
        text = data if isinstance(data, str) else json.dumps(data)
        h.wfile.write(((f"event: {name}\n" if name else "") + f"data: {text}\n\n").encode())
        h.wfile.flush()

    def authorised(self, h: BaseHTTPRequestHandler) -> bool:
        raise NotImplementedError

    def get(self, h: BaseHTTPRequestHandler) -> None:
        raise NotImplementedError

    def post(self, h: BaseHTTPRequestHandler, data: dict[str, Any]) -> None:
        raise NotImplementedError

    def action_for(self, data: dict[str, Any]) -> tuple[Any, ...]:
        """The tool's result comes back: say it; otherwise decide by the last user message."""
        messages = data.get("messages") or []
        last = messages[-1] if messages else {}
        result = self.tool_result(last)
        if result is not None:
            return ("text", f"The tool answered: {result[:200]}")
        return decide(self.user_text(last), self.counter)

    def common(self, h: BaseHTTPRequestHandler, action: tuple[Any, ...]) -> bool:
        """The actions both APIs share; True when handled."""
        if action[0] == "http":
            self.send_json(h, action[1], {"error": {"message": "the scripted server failed on purpose",
                                                    "type": "server_error"}})
            return True
        if action[0] == "slow":
            time.sleep(SLOW_S)
            self.send_json(h, 200, {})
            return True
        if action[0] == "garbage":
            self.start_stream(h)
            h.wfile.write(b"data: {this is not json\n\ndata: \x00\xff\xfe garbage\n\n")
            h.wfile.flush()
            return True
        return False

    def tool_result(self, message: dict[str, Any]) -> str | None:
        raise NotImplementedError

    def user_text(self, message: dict[str, Any]) -> str:
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return " ".join(b.get("text", "") for b in content if isinstance(b, dict))
        return ""


class OpenAIPeer(_Peer):
    kind = "openai"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def authorised(self, h: BaseHTTPRequestHandler) -> bool:
        if self.key is None or h.headers.get("Authorization") == f"Bearer {self.key}":
            return True
        given = (h.headers.get("Authorization") or "")[7:]  # echoed, as OpenAI's own message does
        self.send_json(h, 401, {"error": {"message": f"Incorrect API key provided: {given}",
                                          "type": "invalid_request_error", "code": "invalid_api_key"}})
        return False

    def get(self, h: BaseHTTPRequestHandler) -> None:
        if not self.authorised(h):
            return
        if h.path.rstrip("/") == "/v1/models":
            self.send_json(h, 200, {"object": "list", "data": [{"id": m, "object": "model", "created": 0,
                                                                "owned_by": "spyglass-tests"} for m in MODELS]})
        else:
            self.send_json(h, 404, {"error": {"message": f"no route {h.path}"}})

    def tool_result(self, message: dict[str, Any]) -> str | None:
        return str(message.get("content")) if message.get("role") == "tool" else None

    def post(self, h: BaseHTTPRequestHandler, data: dict[str, Any]) -> None:
        if not self.authorised(h):
            return
        if h.path.rstrip("/") != "/v1/chat/completions":
            self.send_json(h, 404, {"error": {"message": f"no route {h.path}"}})
            return
        if self.strict and "stream_options" in data:
            self.send_json(h, 400, {"error": {"message": "Unrecognized request argument supplied: stream_options",
                                              "type": "invalid_request_error"}})
            return
        action = self.action_for(data)
        if self.common(h, action):
            return
        model = data.get("model", MODELS[0])
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])

        self.start_stream(h)
        if action[0] == "empty":
            self.event(h, "[DONE]")
            return
        self.event(h, chunk({"role": "assistant", "content": ""}))
        if action[0] == "text":
            for piece in pieces(action[1]):
                self.event(h, chunk({"content": piece}))
            self.event(h, chunk({}, "stop"))
        else:
            _, name, arguments = action
            self.event(h, chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                 "function": {"name": name, "arguments": ""}}]}))
            for piece in pieces(arguments, 5):
                self.event(h, chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
            self.event(h, chunk({}, "tool_calls"))
        if (data.get("stream_options") or {}).get("include_usage"):  # counts only when asked, as OpenAI does
            self.event(h, dict(base, choices=[], usage={"prompt_tokens": 42, "completion_tokens": 7,
                                                        "total_tokens": 49}))
        self.event(h, "[DONE]")


class AnthropicPeer(_Peer):
    kind = "anthropic"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def authorised(self, h: BaseHTTPRequestHandler) -> bool:
        # the Messages API's key header, or a bearer token (what newer clients send)
        if self.key is None or self.key in (h.headers.get("x-api-key"), (h.headers.get("Authorization") or "")[7:]):
            return True
        self.send_json(h, 401, {"type": "error", "error": {"type": "authentication_error",
                                                           "message": "invalid x-api-key"}})
        return False

    def get(self, h: BaseHTTPRequestHandler) -> None:
        if not self.authorised(h):
            return
        if h.path.split("?")[0].rstrip("/") == "/v1/models":
            data = [{"id": m, "type": "model", "display_name": m, "created_at": "2026-01-01T00:00:00Z"}
                    for m in MODELS]
            self.send_json(h, 200, {"data": data, "has_more": False, "first_id": MODELS[0], "last_id": MODELS[-1]})
        else:
            self.send_json(h, 404, {"type": "error", "error": {"type": "not_found_error", "message": h.path}})

    def tool_result(self, message: dict[str, Any]) -> str | None:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    inner = block.get("content")
                    return inner if isinstance(inner, str) else json.dumps(inner)
        return None

    def post(self, h: BaseHTTPRequestHandler, data: dict[str, Any]) -> None:
        if not self.authorised(h):
            return
        if h.path.split("?")[0].rstrip("/") != "/v1/messages":
            self.send_json(h, 404, {"type": "error", "error": {"type": "not_found_error", "message": h.path}})
            return
        action = self.action_for(data)
        if self.common(h, action):
            return
        self.start_stream(h)
        model = data.get("model", MODELS[0])
        message = {"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": [],
                   "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 31, "output_tokens": 1}}
        self.event(h, {"type": "message_start", "message": message}, "message_start")
        if action[0] == "empty":
            self.event(h, {"type": "message_stop"}, "message_stop")
            return
        if action[0] == "text":
            self.event(h, {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                       "content_block_start")
            for piece in pieces(action[1]):
                self.event(h, {"type": "content_block_delta", "index": 0,
                               "delta": {"type": "text_delta", "text": piece}}, "content_block_delta")
            stop = "end_turn"
        else:
            _, name, arguments = action
            self.event(h, {"type": "content_block_start", "index": 0,
                           "content_block": {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}},
                       "content_block_start")
            for piece in pieces(arguments, 5):
                self.event(h, {"type": "content_block_delta", "index": 0,
                               "delta": {"type": "input_json_delta", "partial_json": piece}}, "content_block_delta")
            stop = "tool_use"
        self.event(h, {"type": "content_block_stop", "index": 0}, "content_block_stop")
        self.event(h, {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                       "usage": {"output_tokens": 9}}, "message_delta")
        self.event(h, {"type": "message_stop"}, "message_stop")


def offered_tools(request: dict[str, Any]) -> dict[str, str]:
    """name -> description of the tools a request offered (either API)."""
    out = {}
    for tool in request.get("tools") or []:
        fn = tool.get("function", tool)
        out[fn["name"]] = fn.get("description", "")
    return out


def closing_port() -> int:
    """A loopback port where nothing listens (connection refused)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


__all__ = ["MODELS", "AnthropicPeer", "OpenAIPeer", "closing_port", "offered_tools"]
