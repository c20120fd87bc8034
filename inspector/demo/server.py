"""MCP method dispatch of the demo server, for both protocol eras.

A request is served in the modern era (2026-07-28, stateless) when its
``params._meta`` names that protocol version; otherwise it belongs to the
legacy session opened by ``initialize``. Transport details live in
:mod:`.jsonrpc`, the tools in :mod:`.tools`.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import SERVER_INFO, prompts, resources, tools
from .http import serve_http
from .jsonrpc import JsonRpcPeer, RemoteError, id_key, run_stdio, valid_id
from .wire import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    LATEST_LEGACY,
    LEGACY_VERSIONS,
    LOG_LEVELS,
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    METHOD_NOT_FOUND,
    MODERN_VERSION,
    RESOURCE_NOT_FOUND,
    SUPPORTED_VERSIONS,
    UNSUPPORTED_VERSION,
    JsonObject,
    RpcError,
    downlevel,
    open_state,
    paginate,
    seal_state,
)

log = logging.getLogger("spyglass-demo")

CAPABILITIES = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "logging": {},
    "completions": {},
}

INSTRUCTIONS = (
    "Hello! This is the Spyglass demo server: everything here is made up and harmless, so explore "
    "freely. Try echo and weather for simple results, render_chart and play_tone for an image and "
    "a sound, long_task to watch progress (and cancel it), log_demo to see every log level, and "
    "ask_user to answer a question. Subscribe to the live clock resource, and press Tab in prompt "
    "arguments for completions."
)

CLOCK_TICK_S = 5.0
LEGACY_ONLY = {"logging/setLevel": "set _meta io.modelcontextprotocol/logLevel on each request instead",
               "resources/subscribe": "use subscriptions/listen instead",
               "resources/unsubscribe": "cancel the subscriptions/listen request instead"}
NOT_INITIALIZED = ("Server not initialized: send 'initialize' first, or add "
                   f"io.modelcontextprotocol/protocolVersion '{MODERN_VERSION}' to params._meta")


@dataclass
class Request:
    id: Any
    method: str
    params: JsonObject
    modern: bool
    version: str

    @property
    def meta(self) -> JsonObject:
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}


@dataclass
class LegacySession:
    initialized: bool = False
    version: str = LATEST_LEGACY
    client_capabilities: JsonObject = field(default_factory=dict)
    client_info: JsonObject = field(default_factory=dict)
    log_level: str = "info"
    subscriptions: set[str] = field(default_factory=set)


@dataclass
class Listener:
    """An open modern-era ``subscriptions/listen`` stream."""

    id: Any
    filter: JsonObject


def _page_size() -> int | None:
    raw = os.environ.get("SPYGLASS_DEMO_PAGE_SIZE", "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    if raw:
        log.warning("ignoring SPYGLASS_DEMO_PAGE_SIZE=%r (want a positive integer)", raw)
    return None


class DemoServer(JsonRpcPeer):
    """The MCP demo server: one legacy session plus any number of modern requests."""

    def __init__(self, write: Callable[[bytes], None]) -> None:
        super().__init__(write)
        self.state = tools.DemoState()
        self.legacy = LegacySession()
        self._listeners: dict[str, Listener] = {}
        self._page_size = _page_size()
        self._methods = {
            "initialize": self._initialize, "ping": self._ping, "logging/setLevel": self._set_level,
            "server/discover": self._discover, "subscriptions/listen": self._listen,
            "tools/list": self._list_tools, "tools/call": self._call_tool,
            "resources/list": self._list_resources, "resources/templates/list": self._list_templates,
            "resources/read": self._read_resource, "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "prompts/list": self._list_prompts, "prompts/get": self._get_prompt,
            "completion/complete": self._complete,
        }

    async def serve(self, lines: asyncio.Queue[bytes | None]) -> None:
        ticker = asyncio.ensure_future(self._tick_clock())
        try:
            await super().serve(lines)
        finally:
            ticker.cancel()

    async def shutdown(self, grace: float = 0.5) -> None:
        for listener in list(self._listeners.values()):  # listen streams never end by themselves
            self.cancel_request(listener.id)
        await super().shutdown(grace)

    def handle_notification(self, method: str, params: JsonObject) -> None:
        if method == "notifications/cancelled":
            request_id = params.get("requestId")
            if self.cancel_request(request_id):
                log.info("cancelled request %r (%s)", request_id, params.get("reason", "no reason given"))
        elif method == "notifications/initialized":
            log.info("client finished initialization")
        else:
            log.debug("ignoring notification %s", method)

    def request_abandoned(self, request_id: str) -> None:
        self.notify("notifications/cancelled", {"requestId": request_id,
                                                "reason": "The tool call that asked was cancelled"})

    # ------------------------------------------------------------------ dispatch

    async def handle_request(self, request_id: Any, method: str, params: JsonObject) -> JsonObject:
        handler = self._methods.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        request = self._classify(request_id, method, params)
        return self._finish(request, await handler(request))

    def _classify(self, request_id: Any, method: str, params: JsonObject) -> Request:
        """Decide the request's era and version, enforcing what each era allows."""
        if method == "initialize":
            return Request(request_id, method, params, False, LATEST_LEGACY)
        given = params.get("_meta")
        meta = given if isinstance(given, dict) else {}
        requested = meta.get(META_PROTOCOL_VERSION)
        if requested is not None and requested not in SUPPORTED_VERSIONS:
            raise RpcError(UNSUPPORTED_VERSION, "Unsupported protocol version", {
                "supported": SUPPORTED_VERSIONS,
                "requested": requested if isinstance(requested, str) else json.dumps(requested)})
        if requested == MODERN_VERSION or method == "server/discover":
            if method in LEGACY_ONLY:
                raise RpcError(METHOD_NOT_FOUND, f"{method} does not exist in {MODERN_VERSION}: "
                                                 f"{LEGACY_ONLY[method]}")
            return Request(request_id, method, params, True, MODERN_VERSION)
        if method == "subscriptions/listen":
            raise RpcError(METHOD_NOT_FOUND, f"subscriptions/listen needs protocol {MODERN_VERSION}")
        if not self.legacy.initialized and method != "ping":
            raise RpcError(INVALID_REQUEST, NOT_INITIALIZED)
        return Request(request_id, method, params, False, self.legacy.version)

    def _finish(self, request: Request, result: JsonObject) -> JsonObject:
        if not request.modern:
            return downlevel(result, request.version)
        result = {"resultType": "complete", **result}
        result["_meta"] = {META_SERVER_INFO: dict(SERVER_INFO), **result.get("_meta", {})}
        return result

    @staticmethod
    def _cacheable(request: Request, result: JsonObject, ttl_ms: int) -> JsonObject:
        if request.modern:
            result.update(ttlMs=ttl_ms, cacheScope="public")
        return result

    # ------------------------------------------------------------------ lifecycle

    async def _initialize(self, request: Request) -> JsonObject:
        params = request.params
        requested = params.get("protocolVersion")
        version = requested if requested in LEGACY_VERSIONS else LATEST_LEGACY
        capabilities, info = params.get("capabilities"), params.get("clientInfo")
        self.legacy = LegacySession(True, version, capabilities if isinstance(capabilities, dict) else {},
                                    info if isinstance(info, dict) else {})
        request.version = version
        log.info("initialize: %s asked for %r, using %s", self.legacy.client_info.get("name", "client"),
                 requested, version)
        return {"protocolVersion": version, "capabilities": copy.deepcopy(CAPABILITIES),
                "serverInfo": dict(SERVER_INFO), "instructions": INSTRUCTIONS}

    async def _ping(self, request: Request) -> JsonObject:
        return {}

    async def _set_level(self, request: Request) -> JsonObject:
        level = request.params.get("level")
        if level not in LOG_LEVELS:
            raise RpcError(INVALID_PARAMS, f"Unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        self.legacy.log_level = level
        return {}

    async def _discover(self, request: Request) -> JsonObject:
        return {"supportedVersions": list(SUPPORTED_VERSIONS), "capabilities": copy.deepcopy(CAPABILITIES),
                "instructions": INSTRUCTIONS, "ttlMs": 60_000, "cacheScope": "public"}

    async def _listen(self, request: Request) -> JsonObject:
        wanted = request.params.get("notifications")
        if not isinstance(wanted, dict):
            raise RpcError(INVALID_PARAMS, "params.notifications must be an object")
        accepted: dict[str, Any] = {k: True for k in ("toolsListChanged", "promptsListChanged",
                                                      "resourcesListChanged") if wanted.get(k) is True}
        uris = wanted.get("resourceSubscriptions")
        if isinstance(uris, list):
            accepted["resourceSubscriptions"] = [u for u in uris
                                                 if isinstance(u, str) and resources.exists(u)]
        key = id_key(request.id)
        self._listeners[key] = Listener(request.id, accepted)
        self.notify("notifications/subscriptions/acknowledged",
                    {"_meta": {META_SUBSCRIPTION_ID: request.id}, "notifications": accepted})
        try:
            await asyncio.get_running_loop().create_future()  # open until cancelled
        finally:
            self._listeners.pop(key, None)
        return {}

    def _broadcast(self, flag: str | None, method: str, params: JsonObject | None = None,
                   uri: str | None = None) -> None:
        """Send a notification on every listen stream that opted in to it."""
        for listener in list(self._listeners.values()):
            wanted = listener.filter
            opted = uri in wanted.get("resourceSubscriptions", []) if uri else flag is not None and wanted.get(flag)
            if opted:
                self.notify(method, {**(params or {}), "_meta": {META_SUBSCRIPTION_ID: listener.id}})

    async def _tick_clock(self) -> None:
        while True:
            await asyncio.sleep(CLOCK_TICK_S)
            if self.legacy.initialized and resources.CLOCK_URI in self.legacy.subscriptions:
                self.notify("notifications/resources/updated", {"uri": resources.CLOCK_URI})
            self._broadcast(None, "notifications/resources/updated", {"uri": resources.CLOCK_URI},
                            uri=resources.CLOCK_URI)

    # ------------------------------------------------------------------ tools

    async def _list_tools(self, request: Request) -> JsonObject:
        page, next_cursor = paginate(tools.definitions(self.state), request.params.get("cursor"),
                                     self._page_size)
        result: dict[str, Any] = {"tools": page}
        if next_cursor:
            result["nextCursor"] = next_cursor
        return self._cacheable(request, result, 0)

    async def _call_tool(self, request: Request) -> JsonObject:
        name = request.params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "params.name must be a string")
        tool = tools.find(name, self.state)
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = request.params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "params.arguments must be an object")
        context = self._tool_context(request)
        if request.modern and "requestState" in request.params:
            context.request_state = open_state(request.params["requestState"], request.method, name)
            responses = request.params.get("inputResponses")
            context.input_responses = responses if isinstance(responses, dict) else {}
        try:
            outcome = await tool.handler(arguments, context)
        except tools.ArgError as exc:
            return tools.error_result(f"Invalid arguments for {name}: {exc}")
        if isinstance(outcome, tools.InputRequired):
            return {"resultType": "input_required", "inputRequests": outcome.requests,
                    "requestState": seal_state(request.method, name, outcome.state)}
        return outcome

    def _tool_context(self, request: Request) -> tools.ToolContext:
        meta = request.meta
        if request.modern:
            caps = meta.get(META_CLIENT_CAPABILITIES)
            capabilities = caps if isinstance(caps, dict) else {}
            threshold = meta.get(META_LOG_LEVEL) if meta.get(META_LOG_LEVEL) in LOG_LEVELS else None
        else:
            capabilities, threshold = self.legacy.client_capabilities, self.legacy.log_level
        token = meta.get("progressToken")
        return tools.ToolContext(
            request_id=request.id, modern=request.modern, version=request.version,
            client_capabilities=capabilities, progress_token=token if valid_id(token) else None,
            log_threshold=threshold, state=self.state, notify=self.notify,
            ask_client=self._ask_client, tools_changed=lambda: self._tools_changed(request))

    def _tools_changed(self, request: Request) -> None:
        if not request.modern and self.legacy.initialized:
            self.notify("notifications/tools/list_changed")
        self._broadcast("toolsListChanged", "notifications/tools/list_changed")

    async def _ask_client(self, method: str, params: JsonObject) -> Any:
        """Send a server-to-client request (legacy era) and wait for its result (whatever the client sent)."""
        try:
            return await self.request(method, params)
        except RemoteError as exc:
            raise tools.ClientRequestError(str(exc)) from None

    # ------------------------------------------------------------------ resources and prompts

    async def _list_resources(self, request: Request) -> JsonObject:
        return self._cacheable(request, {"resources": resources.list_resources()}, 60_000)

    async def _list_templates(self, request: Request) -> JsonObject:
        return self._cacheable(request, {"resourceTemplates": copy.deepcopy(resources.TEMPLATES)}, 60_000)

    async def _read_resource(self, request: Request) -> JsonObject:
        uri = self._uri(request)
        return self._cacheable(request, {"contents": resources.read(uri)}, resources.cache_ttl_ms(uri))

    async def _subscribe(self, request: Request) -> JsonObject:
        uri = self._uri(request)
        if not resources.exists(uri):
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri})
        self.legacy.subscriptions.add(uri)
        return {}

    async def _unsubscribe(self, request: Request) -> JsonObject:
        self.legacy.subscriptions.discard(self._uri(request))
        return {}

    @staticmethod
    def _uri(request: Request) -> str:
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, "params.uri must be a string")
        return uri

    async def _list_prompts(self, request: Request) -> JsonObject:
        return self._cacheable(request, {"prompts": copy.deepcopy(prompts.PROMPTS)}, 60_000)

    async def _get_prompt(self, request: Request) -> JsonObject:
        name = request.params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "params.name must be a string")
        return prompts.get_prompt(name, request.params.get("arguments") or {})

    async def _complete(self, request: Request) -> JsonObject:
        ref, argument = request.params.get("ref"), request.params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise RpcError(INVALID_PARAMS, "params.ref and params.argument must be objects")
        name, value = str(argument.get("name", "")), str(argument.get("value", ""))
        if ref.get("type") == "ref/prompt":
            values = prompts.complete(str(ref.get("name")), name, value)
        elif ref.get("type") == "ref/resource":
            values = resources.complete(str(ref.get("uri")), name, value)
        else:
            raise RpcError(INVALID_PARAMS, f"Unknown completion reference type {ref.get('type')!r}")
        if values is None:
            raise RpcError(INVALID_PARAMS, f"Nothing to complete for {ref.get('name') or ref.get('uri')}")
        return {"completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}}


# ---------------------------------------------------------------------- entry point

def main(argv: list[str] | None = None) -> int:
    """Serve MCP on stdin/stdout until stdin closes, or over HTTP with `--http` (see .http); log to stderr."""
    parser = argparse.ArgumentParser(prog="python -m inspector.demo", description="Spyglass's demo MCP server")
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="with --http: the address to listen on")
    parser.add_argument("--port", type=int, default=0, help="with --http: the port (0: any free one)")
    parser.add_argument("--sse", action="store_true", help="with --http: answer as event streams")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    level = os.environ.get("SPYGLASS_DEMO_LOG", "INFO").upper()
    if not isinstance(logging.getLevelName(level), int):
        level = "INFO"
    logging.basicConfig(stream=sys.stderr, level=level,
                        format="%(asctime)s spyglass-demo %(levelname)s %(message)s")
    if args.http:
        return serve_http(DemoServer, args.host, args.port, sse=args.sse)
    log.info("spyglass-demo %s ready on stdio (protocols: %s)", SERVER_INFO["version"],
             ", ".join(SUPPORTED_VERSIONS))
    status = run_stdio(DemoServer)
    log.info("stdin closed, bye")
    return status
