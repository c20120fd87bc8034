"""The host side of an MCP App's bridge (2026-01-26): a state machine, no IO, no clock of its own.

The view (the app's document, in a sandboxed frame) and the host exchange JSON-RPC 2.0 messages over
`postMessage`. Feed `receive(message, now)` each message the view sent (already parsed from JSON) and
tell it what the host does (`tool_input`, `tool_result`, `set_context`, `teardown`…); every call returns
the actions to take, in order:

- `Post(message)`: send this to the view;
- `Proxy(id, method, params)`: forward the view's request to the app's own server, then `answer(id, …)`;
- `Ask(id, method, params)`: the window decides (open a link, save a file, change the display mode),
  then `answer(id, …)`;
- `Cancel(id)`: the view gave up a request that was forwarded;
- `Note(kind, text, data)`: something to show: the handshake, a log line, a size, a message for the
  conversation, a refused attempt, dropped messages…

Rules kept here: nothing but answers goes to the view before `ui/notifications/initialized` (the tool's
input, result and context changes wait, in order); `tool-input` is sent at most once and before
`tool-result`; partial inputs stop once it is sent; a context change is sent as the keys that changed;
an app calls only its own server's tools that are visible to apps (`apps.refusal`); a method the host
does not offer is answered `-32601`; a view that floods the bridge is cut to `rate` messages a second
(the rest dropped, counted and said once a second) and to `MAX_IN_FLIGHT` requests waiting at once;
after teardown nothing more is sent or answered.
"""

from __future__ import annotations

import copy
import enum
import itertools
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import apps

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
REFUSED = -32000  # the spec's examples of a host refusing ("Link opening denied by user", "Policy violation")

RATE = 100.0  # messages a second the bridge handles from a view, sustained
BURST = 200.0  # and at once
MAX_IN_FLIGHT = 64  # requests of the view waiting for an answer
DISPLAY_MODES = ("inline", "fullscreen", "pip")
LINK_SCHEMES = ("http", "https", "mailto")
PROXIED = ("tools/call", "resources/read", "resources/list", "resources/templates/list", "tools/list")
ASKED = ("ui/open-link", "ui/download-file", "ui/request-display-mode")
TEARDOWN = "ui/resource-teardown"


class State(str, enum.Enum):
    LOADING = "loading"  # nothing heard yet
    INITIALIZING = "initializing"  # ui/initialize answered, waiting for initialized
    READY = "ready"
    CLOSING = "closing"  # teardown sent, its answer awaited
    CLOSED = "closed"


@dataclass(frozen=True)
class Post:
    message: dict[str, Any]


@dataclass(frozen=True)
class Proxy:
    id: Any
    method: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Ask:
    id: Any
    method: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Cancel:
    id: Any


@dataclass(frozen=True)
class Note:
    """kinds: initialize, initialized, log, size, message, context, refused, dropped, warning, unknown,
    teardown-requested, closed, app-tools-changed (and, from the session, problem)."""

    kind: str
    text: str
    data: Any = None


Action = Post | Proxy | Ask | Cancel | Note


def _request_id(value: Any) -> bool:
    return (isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))) and \
        len(str(value)) <= 200


def _short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def changed_keys(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """What `new` changes of `old`, key by key (a partial context, as host-context-changed carries)."""
    return {k: copy.deepcopy(v) for k, v in new.items() if k not in old or old[k] != v}


class Bridge:
    def __init__(self, *, host_info: dict[str, Any], host_capabilities: dict[str, Any],
                 host_context: dict[str, Any], tools: Callable[[], Mapping[str, Any]], now: float,
                 rate: float = RATE, burst: float = BURST) -> None:
        self.host_info = host_info
        self.host_capabilities = host_capabilities
        self.context: dict[str, Any] = copy.deepcopy(host_context)  # what the view was last told (or will be)
        self._tools = tools
        self.state = State.LOADING
        self.app_info: dict[str, Any] | None = None
        self.app_capabilities: dict[str, Any] = {}
        self.protocol_version: str | None = None
        self.initialize_count = 0
        self.received = 0
        self.dropped = 0  # all told
        self._dropped_unsaid = 0
        self._said_at = now
        self._rate, self._burst = rate, burst
        self._tokens, self._filled_at = burst, now
        self._waiting: list[dict[str, Any]] = []  # notifications held until initialized
        self._context_pending: dict[str, Any] = {}  # context changes held until initialized
        self._input: dict[str, Any] | None = None  # the tool's arguments, once known
        self._input_sent = False
        self._outcome_sent = False
        self._view_open: dict[Any, str] = {}  # the view's requests we owe an answer: id -> method
        self._host_open: dict[Any, str] = {}  # our requests to the view: id -> method
        self._ids = itertools.count(1)
        self.teardown_id: Any = None

    # ------------------------------------------------------------------ reading
    @property
    def ready(self) -> bool:
        return self.state is State.READY

    @property
    def closed(self) -> bool:
        return self.state is State.CLOSED

    @property
    def display_modes(self) -> tuple[str, ...]:
        """The modes this app accepts: what it declared, else every mode."""
        declared = self.app_capabilities.get("availableDisplayModes")
        if isinstance(declared, list):
            return tuple(m for m in DISPLAY_MODES if m in declared)
        return DISPLAY_MODES

    def initialize_result(self) -> dict[str, Any]:
        version = self.protocol_version if self.protocol_version == apps.BRIDGE_VERSION else apps.BRIDGE_VERSION
        return {"protocolVersion": version, "hostInfo": copy.deepcopy(self.host_info),
                "hostCapabilities": copy.deepcopy(self.host_capabilities), "hostContext": copy.deepcopy(self.context)}

    # ------------------------------------------------------------------ the host's side
    def tool_input_partial(self, arguments: dict[str, Any]) -> list[Action]:
        """Arguments as they stream; ignored once the complete input is known."""
        if self._input is not None or self._input_sent or self.closed:
            return []
        message = self._notification("ui/notifications/tool-input-partial", {"arguments": copy.deepcopy(arguments)})
        if self.ready:
            return [Post(message)]
        self._waiting = [m for m in self._waiting if m.get("method") != "ui/notifications/tool-input-partial"]
        self._waiting.append(message)  # only the latest partial matters to a view that is not ready yet
        return []

    def tool_input(self, arguments: dict[str, Any]) -> list[Action]:
        if self._input is not None or self.closed:
            return []
        self._input = copy.deepcopy(arguments)
        return self._send(self._notification("ui/notifications/tool-input", {"arguments": self._input}))

    def tool_result(self, result: dict[str, Any]) -> list[Action]:
        return self._outcome("ui/notifications/tool-result", result)

    def tool_cancelled(self, reason: str) -> list[Action]:
        return self._outcome("ui/notifications/tool-cancelled", {"reason": reason})

    def _outcome(self, method: str, params: dict[str, Any]) -> list[Action]:
        if self._outcome_sent or self.closed:
            return []
        actions = [] if self._input is not None else self.tool_input({})
        self._outcome_sent = True
        return actions + self._send(self._notification(method, copy.deepcopy(params)))

    def set_context(self, context: dict[str, Any]) -> list[Action]:
        """The host's whole context now; the view hears the keys that changed (once it is initialized)."""
        if self.closed:
            return []
        if self.state is State.LOADING:  # the initialize result will carry it whole
            self.context = copy.deepcopy(context)
            return []
        diff = changed_keys(self.context, context)
        self.context = copy.deepcopy(context)
        if not diff:
            return []
        if not self.ready:
            self._context_pending.update(diff)
            return []
        return [Post(self._notification("ui/notifications/host-context-changed", diff))]

    def teardown(self) -> list[Action]:
        """Ask the view to wind up (`ui/resource-teardown`); its answer (or `teardown_timed_out`) closes."""
        if self.state in (State.CLOSING, State.CLOSED):
            return []
        if not self.ready:  # never initialized: nothing may be sent to it
            self.state = State.CLOSED
            return [Note("closed", "closed before the app initialized: no teardown sent")]
        self.state = State.CLOSING
        self.teardown_id = self._next_id()
        self._host_open[self.teardown_id] = TEARDOWN
        return [Post({"jsonrpc": "2.0", "id": self.teardown_id, "method": TEARDOWN, "params": {}})]

    def teardown_timed_out(self, seconds: float) -> list[Action]:
        if self.state is not State.CLOSING:
            return []
        self.state = State.CLOSED
        return [Note("closed", f"the app did not answer ui/resource-teardown within {seconds:g} s; closed anyway")]

    def answer(self, request_id: Any, result: Any = None, error: tuple[int, str] | None = None) -> list[Action]:
        """The answer to a view's request that was proxied or asked."""
        if request_id not in self._view_open or self.closed:
            return []
        del self._view_open[request_id]
        if error is not None:
            return [Post({"jsonrpc": "2.0", "id": request_id, "error": {"code": error[0], "message": error[1]}})]
        return [Post({"jsonrpc": "2.0", "id": request_id, "result": result if result is not None else {}})]

    def answer_error(self, request_id: Any, error: dict[str, Any]) -> list[Action]:
        """A server's JSON-RPC error, passed on as it came (code, message, data)."""
        if request_id not in self._view_open or self.closed:
            return []
        del self._view_open[request_id]
        return [Post({"jsonrpc": "2.0", "id": request_id, "error": error})]

    def progress(self, token: Any, progress: Any, total: Any, message: Any) -> list[Action]:
        """A forwarded call's progress, under the view's own progress token."""
        if not self.ready or token is None:
            return []
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if isinstance(message, str):
            params["message"] = message
        return [Post(self._notification("notifications/progress", params))]

    def tick(self, now: float) -> list[Action]:
        """Say what was dropped since the last time (at most once a second)."""
        if self._dropped_unsaid and now - self._said_at >= 1.0:
            n, self._dropped_unsaid, self._said_at = self._dropped_unsaid, 0, now
            return [Note("dropped", f"the app sent more than {self._rate:g} messages a second: {n:,} dropped "
                                    f"({self.dropped:,} in all)", n)]
        return []

    # ------------------------------------------------------------------ the view's side
    def receive(self, message: Any, now: float) -> list[Action]:
        """One message from the view (the JSON value it posted)."""
        if self.closed:
            return []
        self._fill(now)
        if self._tokens < 1.0:
            self.dropped += 1
            self._dropped_unsaid += 1
            return self.tick(now)
        self._tokens -= 1.0
        self.received += 1
        actions = self._receive(message)
        return actions + self.tick(now)

    def _fill(self, now: float) -> None:
        self._tokens = min(self._burst, self._tokens + (now - self._filled_at) * self._rate)
        self._filled_at = now

    def _receive(self, m: Any) -> list[Action]:
        if not isinstance(m, dict) or m.get("jsonrpc") != "2.0":
            return [Note("warning", f"ignored a message that is not JSON-RPC 2.0: {_short(m)}")]
        method = m.get("method")
        has_id = "id" in m
        if method is None:
            if has_id and ("result" in m or "error" in m):
                return self._response(m)
            return [Note("warning", f"ignored a malformed message: {_short(m)}")]
        if not isinstance(method, str):
            return self._bad(m, INVALID_REQUEST, "method is not a string")
        params = m.get("params")
        if params is not None and not isinstance(params, dict):
            return self._bad(m, INVALID_PARAMS, "params is not an object")
        params = params or {}
        if not has_id:
            return self._notification_in(method, params)
        rid = m["id"]
        if not _request_id(rid):
            return [Note("warning", f"ignored {_short(method, 80)}: its id is not a string or an integer")]
        if rid in self._view_open:
            return [Note("warning", f"ignored {_short(method, 80)}: id {_short(rid, 40)} is still in use"),
                    *self._error(rid, INVALID_REQUEST, "id already in use")]
        if len(self._view_open) >= MAX_IN_FLIGHT:
            return [Note("refused", f"{_short(method, 80)} refused: {MAX_IN_FLIGHT} requests are already waiting"),
                    *self._error(rid, REFUSED, f"too many requests in flight (at most {MAX_IN_FLIGHT})")]
        self._view_open[rid] = method
        return self._request(rid, method, params)

    def _bad(self, m: dict[str, Any], code: int, why: str) -> list[Action]:
        rid = m.get("id")
        note = Note("warning", f"malformed message from the app: {why}")
        if _request_id(rid) and rid not in self._view_open:
            self._view_open[rid] = "?"
            return [note, *self._error(rid, code, why)]
        return [note]

    def _error(self, rid: Any, code: int, message: str) -> list[Action]:
        self._view_open.pop(rid, None)
        return [Post({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})]

    def _result(self, rid: Any, result: dict[str, Any]) -> list[Action]:
        self._view_open.pop(rid, None)
        return [Post({"jsonrpc": "2.0", "id": rid, "result": result})]

    def _request(self, rid: Any, method: str, params: dict[str, Any]) -> list[Action]:
        if method == "ui/initialize":
            return self._initialize(rid, params)
        if method == "ping":
            return self._result(rid, {})
        if self.state is State.LOADING:
            note = [Note("warning", f"{_short(method, 80)} came before ui/initialize")]
        else:
            note = []
        if method in PROXIED:
            return note + self._proxy(rid, method, params)
        if method == "ui/message":
            return note + self._message(rid, params)
        if method == "ui/update-model-context":
            return note + [*self._result(rid, {}), Note("context", "the app updated the model context", params)]
        if method == "ui/open-link":
            return note + self._open_link(rid, params)
        if method == "ui/download-file":
            contents = params.get("contents")
            if not isinstance(contents, list) or not contents or not all(isinstance(c, dict) for c in contents):
                return note + self._refuse(rid, INVALID_PARAMS, "ui/download-file", "Invalid content: no contents")
            return [*note, Ask(rid, method, params)]
        if method == "ui/request-display-mode":
            return note + self._display_mode(rid, params)
        return note + [Note("unknown", f"the app asked for {_short(method, 80)}, which Spyglass does not offer"),
                       *self._error(rid, METHOD_NOT_FOUND, f"Method not found: {_short(method, 80)}")]

    def _refuse(self, rid: Any, code: int, method: str, why: str) -> list[Action]:
        return [Note("refused", f"{method} refused: {why}"), *self._error(rid, code, why)]

    def _initialize(self, rid: Any, params: dict[str, Any]) -> list[Action]:
        self.initialize_count += 1
        info = params.get("appInfo")
        self.app_info = info if isinstance(info, dict) else None
        caps = params.get("appCapabilities")
        self.app_capabilities = caps if isinstance(caps, dict) else {}
        version = params.get("protocolVersion")
        self.protocol_version = version if isinstance(version, str) else None
        notes: list[Action] = []
        if self.initialize_count > 1:
            notes.append(Note("warning", "the app sent ui/initialize again; answered again"))
        if version != apps.BRIDGE_VERSION:
            notes.append(Note("warning", f"the app speaks bridge version {_short(version, 40)}; Spyglass answers "
                                         f"{apps.BRIDGE_VERSION}"))
        if self.state is State.LOADING:
            self.state = State.INITIALIZING
        name = self.app_info.get("name") if self.app_info else None
        note = Note("initialize", f"ui/initialize from {_short(name, 80) if isinstance(name, str) else 'the app'}",
                    params)
        return [note, *notes, *self._result(rid, self.initialize_result())]

    def _proxy(self, rid: Any, method: str, params: dict[str, Any]) -> list[Action]:
        if method in ("tools/call", "tools/list") and "serverTools" not in self.host_capabilities:
            return self._error(rid, METHOD_NOT_FOUND, f"Method not found: {method}")
        if method.startswith("resources/") and "serverResources" not in self.host_capabilities:
            return self._error(rid, METHOD_NOT_FOUND, f"Method not found: {method}")
        if method == "tools/call":
            why = apps.refusal(params.get("name"), self._tools())
            if why is not None:
                return self._refuse(rid, REFUSED, f"tools/call {_short(params.get('name'), 80)}", why)
            args = params.get("arguments")
            if args is not None and not isinstance(args, dict):
                return self._refuse(rid, INVALID_PARAMS, "tools/call", "arguments is not an object")
        if method == "resources/read" and not isinstance(params.get("uri"), str):
            return self._refuse(rid, INVALID_PARAMS, "resources/read", "no uri")
        return [Proxy(rid, method, params)]

    def _message(self, rid: Any, params: dict[str, Any]) -> list[Action]:
        content = params.get("content")
        if isinstance(content, dict):
            content = [content]  # the spec's prose shows one block, the SDK sends a list
        if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
            return self._refuse(rid, INVALID_PARAMS, "ui/message", "content is not a list of content blocks")
        role = params.get("role", "user")
        return [*self._result(rid, {}), Note("message", f"the app would say as {_short(role, 20)}",
                                             {"role": role, "content": content})]

    def _open_link(self, rid: Any, params: dict[str, Any]) -> list[Action]:
        url = params.get("url")
        if not isinstance(url, str) or not url.strip():
            return self._refuse(rid, INVALID_PARAMS, "ui/open-link", "Invalid URL: none given")
        try:
            parts = urllib.parse.urlsplit(url.strip())
        except ValueError:
            parts = None
        if parts is None or parts.scheme.lower() not in LINK_SCHEMES or (parts.scheme.lower() != "mailto"
                                                                          and not parts.hostname):
            return self._refuse(rid, INVALID_PARAMS, "ui/open-link",
                                f"Invalid URL: {_short(url, 200)} (only http, https and mailto links open)")
        out: list[Action] = [Ask(rid, "ui/open-link", {"url": url.strip()})]
        return out

    def _display_mode(self, rid: Any, params: dict[str, Any]) -> list[Action]:
        mode = params.get("mode")
        current = self.context.get("displayMode", "inline")
        host_modes = self.context.get("availableDisplayModes", list(DISPLAY_MODES))
        if mode not in DISPLAY_MODES:
            return self._refuse(rid, INVALID_PARAMS, "ui/request-display-mode", f"unknown mode {_short(mode, 40)}")
        if mode not in self.display_modes or mode not in host_modes:
            return [Note("refused", f"display mode {mode} refused: the app or the host does not offer it"),
                    *self._result(rid, {"mode": current})]
        if mode == current:
            return self._result(rid, {"mode": current})
        ask: list[Action] = [Ask(rid, "ui/request-display-mode", {"mode": mode})]
        return ask

    def _notification_in(self, method: str, params: dict[str, Any]) -> list[Action]:
        if method == "ui/notifications/initialized":
            return self._initialized()
        if method == "ui/notifications/size-changed":
            w, h = params.get("width"), params.get("height")
            size = {k: v for k, v in (("width", w), ("height", h))
                    if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0}
            return [Note("size", f"size {w} × {h}", size)] if size else []
        if method == "notifications/message":
            return [Note("log", "log", params)]
        if method == "ui/notifications/request-teardown":
            return [Note("teardown-requested", "the app asked to be closed")]
        if method == "notifications/tools/list_changed":
            return [Note("app-tools-changed", "the app's own tools changed")]
        if method == "notifications/cancelled":
            rid = params.get("requestId")
            if rid in self._view_open and self._view_open[rid] in PROXIED:
                del self._view_open[rid]
                return [Cancel(rid)]
            return []
        if method == "notifications/progress":
            return []
        return [Note("unknown", f"the app sent {_short(method, 80)}, which Spyglass does not know")]

    def _initialized(self) -> list[Action]:
        if self.state is State.READY:
            return [Note("warning", "the app sent ui/notifications/initialized again")]
        if self.state is State.LOADING:
            note = [Note("warning", "ui/notifications/initialized came before ui/initialize")]
        else:
            note = []
        self.state = State.READY
        out: list[Action] = [*note, Note("initialized", "the app is ready")]
        out.extend(Post(m) for m in self._waiting)
        self._waiting.clear()
        if self._context_pending:
            out.append(Post(self._notification("ui/notifications/host-context-changed", self._context_pending)))
            self._context_pending = {}
        return out

    def _response(self, m: dict[str, Any]) -> list[Action]:
        rid = m.get("id")
        method = self._host_open.pop(rid, None) if _request_id(rid) else None
        if method is None:
            return [Note("warning", f"the app answered a request Spyglass did not send (id {_short(rid, 40)})")]
        if method == TEARDOWN and self.state is State.CLOSING:
            self.state = State.CLOSED
            if "error" in m:
                err = m.get("error")
                text = err.get("message") if isinstance(err, dict) else None
                return [Note("closed", f"the app answered ui/resource-teardown with an error "
                                       f"({_short(text, 120)}); closed")]
            return [Note("closed", "the app wound up (ui/resource-teardown answered)")]
        return []

    # ------------------------------------------------------------------ helpers
    def _next_id(self) -> str:
        return f"spyglass-{next(self._ids)}"

    @staticmethod
    def _notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "method": method, "params": params}

    def _send(self, message: dict[str, Any]) -> list[Action]:
        if message.get("method") == "ui/notifications/tool-input":
            self._input_sent = True
        if self.ready:
            return [Post(message)]
        self._waiting.append(message)
        return []
