"""A server's resources, templates, prompts, subscriptions, log level, ping and roots (issue 7).

`Features` hangs off a `Connection` (`conn.features`) and keeps what the panes
show: the three lists (all pages, marks after list_changed, the `ttlMs` and
`cacheScope` of cacheable results), the subscribed resource URIs (legacy
`resources/subscribe`, modern `subscriptions/listen` with the acknowledged
filter and what the server refused), `notifications/resources/updated` marks,
the log level, ping round trips (legacy) or a periodic `server/discover`
(modern), and the roots offered to the server. Client calls run as asyncio
tasks; failures become state or `E.SpyglassError` for the caller, never a crash.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from .. import errors as E
from ..protocol.versions import Era

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Connection

log = logging.getLogger("spyglass.ui.features")

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
COMPLETION_LIMIT = 100
HEARTBEAT_S = 15.0

# kind -> (list method, result key, identity key, capability)
KINDS = {"resources": ("resources/list", "resources", "uri", "resources"),
         "templates": ("resources/templates/list", "resourceTemplates", "uriTemplate", "resources"),
         "prompts": ("prompts/list", "prompts", "name", "prompts")}


@dataclass
class Listing:
    """One list as last fetched."""

    items: list[Any] = field(default_factory=list)
    loaded: bool = False
    error: str | None = None
    note: str | None = None
    appeared: set[str] = field(default_factory=set)
    vanished: list[dict[str, Any]] = field(default_factory=list)
    ttl_ms: Any = None
    cache_scope: Any = None
    fetched_at: float | None = None  # wall time of the last request that reached the server
    from_cache: bool = False


@dataclass
class Completion:
    values: list[str]
    total: int | None = None
    has_more: bool = False
    note: str | None = None


def path_to_root(path: str) -> dict[str, str]:
    """A folder as an MCP root: a file:// URI plus its base name."""
    absolute = os.path.abspath(os.path.expanduser(path))
    uri = "file://" + urllib.request.pathname2url(absolute)
    return {"uri": uri, "name": os.path.basename(absolute.rstrip(os.sep)) or absolute}


def root_to_path(uri: str) -> str:
    parsed = urllib.parse.urlparse(uri)
    return urllib.request.url2pathname(parsed.path) if parsed.scheme == "file" else uri


def check_completion(result: Any) -> Completion:
    """Validate a completion/complete result; at most 100 values are kept, with a note saying why."""
    comp = result.get("completion") if isinstance(result, dict) else None
    if not isinstance(comp, dict) or not isinstance(comp.get("values"), list):
        raise E.InvalidResponse("completion/complete: the result has no completion.values list")
    values = [v for v in comp["values"] if isinstance(v, str)]
    notes = []
    if len(values) != len(comp["values"]):
        notes.append(f"{len(comp['values']) - len(values)} value(s) that are not strings were left out")
    if len(values) > COMPLETION_LIMIT:
        notes.append(f"the server sent {len(values)} values; the protocol allows at most {COMPLETION_LIMIT}, "
                     f"so only the first {COMPLETION_LIMIT} are shown")
        values = values[:COMPLETION_LIMIT]
    total = comp.get("total") if isinstance(comp.get("total"), int) and not isinstance(comp.get("total"), bool) \
        else None
    return Completion(values, total, comp.get("hasMore") is True, "; ".join(notes) or None)


class Features(QObject):
    resourcesChanged = Signal()   # resources or templates listed again
    promptsChanged = Signal()
    resourceUpdated = Signal(str)  # notifications/resources/updated
    subscriptionsChanged = Signal()
    healthChanged = Signal()      # ping / discover / log level / cache info
    rootsChanged = Signal()

    def __init__(self, conn: "Connection") -> None:
        super().__init__(conn)
        self.conn = conn
        self.roots: list[dict[str, str]] = []
        self.roots_loaded = False  # the window fills them from its settings once
        self.auto_reread = False
        self.heartbeat_s = HEARTBEAT_S
        self._heartbeat: asyncio.Task[None] | None = None
        self.reset()

    def reset(self) -> None:
        self.lists: dict[str, Listing] = {k: Listing() for k in KINDS}
        self.subscribed: set[str] = set()
        self.updated: dict[str, float] = {}  # uri -> wall time of the last update notice
        self.granted: dict[str, Any] | None = None
        self.refused: list[str] = []
        self.listen_error: str | None = None
        self.log_level: str | None = None
        self.last_rtt: float | None = None
        self.last_ping_at: float | None = None
        self.ping_error: str | None = None
        self.reachable: bool | None = None
        self.read_cache: dict[str, tuple[Any, Any]] = {}  # uri -> (ttlMs, cacheScope) of the last read

    # ------------------------------------------------------------------ helpers
    @property
    def client(self) -> Any:
        return self.conn.client

    @property
    def modern(self) -> bool:
        return bool(self.conn.hello and self.conn.hello.era is Era.MODERN)

    def capability(self, name: str) -> Any:
        caps = self.conn.hello.capabilities if self.conn.hello else None
        return caps.get(name) if isinstance(caps, dict) else None

    def _has(self, name: str) -> bool:
        caps = self.conn.hello.capabilities if self.conn.hello else None
        return not isinstance(caps, dict) or name in caps

    def _need_client(self) -> Any:
        client = self.client
        if client is None:
            raise E.ConnectError("not connected")
        return client

    # ------------------------------------------------------------------ lifecycle (called by Connection)
    def connected(self, client: Any) -> None:
        self.stop()
        self.reset()
        self.resourcesChanged.emit()
        self.promptsChanged.emit()
        self.healthChanged.emit()
        self.conn._spawn(self.load_all())
        if self.modern:
            self._heartbeat = asyncio.ensure_future(self._beat(client))

    def stop(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            self._heartbeat = None

    def on_notification(self, method: str, params: Any) -> None:
        if method == "notifications/resources/list_changed":
            self.conn._spawn(self.load("resources", mark=True))
            self.conn._spawn(self.load("templates", mark=True))
        elif method == "notifications/prompts/list_changed":
            self.conn._spawn(self.load("prompts", mark=True))
        elif method == "notifications/resources/updated":
            uri = params.get("uri") if isinstance(params, dict) else None
            if isinstance(uri, str):
                self.updated[uri] = time.time()
                self.resourceUpdated.emit(uri)

    def listen_filter(self) -> dict[str, Any]:
        """The modern subscriptions/listen filter: list_changed for what the server offers, plus URIs."""
        wanted: dict[str, Any] = {}
        for cap, key in (("tools", "toolsListChanged"), ("prompts", "promptsListChanged"),
                         ("resources", "resourcesListChanged")):
            value = self.capability(cap)
            if isinstance(value, dict) and value.get("listChanged") is True:
                wanted[key] = True
        if self.subscribed:
            wanted["resourceSubscriptions"] = sorted(self.subscribed)
        return wanted

    def listening(self, sub: Any) -> None:
        self.granted, self.refused, self.listen_error = sub.granted, list(sub.refused), None
        self.subscriptionsChanged.emit()

    def listen_failed(self, message: str) -> None:
        self.listen_error = message
        self.subscriptionsChanged.emit()

    # ------------------------------------------------------------------ lists
    async def load_all(self, *, refresh: bool = False, mark: bool = False) -> None:
        await asyncio.gather(*(self.load(k, refresh=refresh, mark=mark) for k in KINDS))

    async def load(self, kind: str, *, refresh: bool = False, mark: bool = False) -> None:
        method, key, ident, cap = KINDS[kind]
        listing = self.lists[kind]
        client = self.client
        if client is None:
            return
        signal = self.promptsChanged if kind == "prompts" else self.resourcesChanged
        if not self._has(cap):
            self.lists[kind] = Listing(loaded=True, note=f"This server does not offer {cap} (no {cap} capability).")
            signal.emit()
            return
        cached = getattr(client, "_cache", {}).get(method)
        from_cache = bool(cached and not refresh and cached[0] > time.monotonic())
        try:
            result = await client.list_all(method, key, refresh=refresh)
        except E.SpyglassError as exc:
            if client is not self.client:
                return
            if kind == "templates" and getattr(exc, "code", None) == -32601:  # resources without templates
                self.lists[kind] = Listing(loaded=True, note="The server does not implement resources/templates/list.")
            else:
                listing.error, listing.loaded = exc.message, True
            signal.emit()
            return
        if client is not self.client:
            return
        items = [i for i in result.get(key, []) if isinstance(i, dict)]
        new = Listing(items=items, loaded=True, ttl_ms=result.get("ttlMs"), cache_scope=result.get("cacheScope"),
                      fetched_at=listing.fetched_at if from_cache else time.time(), from_cache=from_cache)
        if len(items) != len(result.get(key, [])):
            new.note = f"{len(result.get(key, [])) - len(items)} entries that are not objects were left out"
        if mark and listing.loaded:
            old = {i.get(ident): i for i in listing.items}
            names = {i.get(ident) for i in items}
            new.appeared = {n for n in names if n not in old and isinstance(n, str)}
            new.vanished = [i for n, i in old.items() if n not in names]
            if new.appeared or new.vanished:
                self.conn._note(f"{kind} changed: " + ", ".join(
                    [f"+{n}" for n in sorted(new.appeared)] + [f"-{i.get(ident)}" for i in new.vanished]))
        self.lists[kind] = new
        signal.emit()
        self.healthChanged.emit()

    # ------------------------------------------------------------------ resources
    async def read(self, uri: str) -> dict[str, Any]:
        result = await self._need_client().read_resource(uri)
        if not isinstance(result, dict) or not isinstance(result.get("contents"), list):
            raise E.InvalidResponse("resources/read: the result has no contents list")
        if "ttlMs" in result or "cacheScope" in result:
            self.read_cache[uri] = (result.get("ttlMs"), result.get("cacheScope"))
            self.healthChanged.emit()
        self.updated.pop(uri, None)
        return result

    async def subscribe(self, uri: str, on: bool = True) -> None:
        client = self._need_client()
        if self.modern:
            before = set(self.subscribed)
            (self.subscribed.add if on else self.subscribed.discard)(uri)
            try:
                await self.conn.relisten()
            except Exception:
                self.subscribed = before
                raise
        else:
            if on:
                await client.subscribe(uri)
                self.subscribed.add(uri)
            else:
                self.subscribed.discard(uri)
                await client.unsubscribe(uri)
        self.subscriptionsChanged.emit()

    @property
    def can_subscribe(self) -> bool:
        res = self.capability("resources")
        return self.modern or (isinstance(res, dict) and res.get("subscribe") is True)

    # ------------------------------------------------------------------ prompts and completion
    async def get_prompt(self, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        result = await self._need_client().get_prompt(name, arguments)
        if not isinstance(result, dict) or not isinstance(result.get("messages"), list):
            raise E.InvalidResponse("prompts/get: the result has no messages list")
        return result

    @property
    def can_complete(self) -> bool:
        return self.capability("completions") is not None

    async def complete(self, ref: dict[str, Any], name: str, value: str,
                       context: dict[str, str] | None = None) -> Completion:
        client = self._need_client()
        return check_completion(await client.complete(ref, {"name": name, "value": value}, context or None))

    # ------------------------------------------------------------------ logging, ping
    async def set_log_level(self, level: str) -> None:
        await self._need_client().set_log_level(level)
        self.log_level = level
        self.conn._note(f"log level set to {level}" + (" (sent in _meta of every request)" if self.modern
                                                         else " (logging/setLevel)"))
        self.healthChanged.emit()

    async def ping(self) -> float:
        client = self._need_client()
        try:
            rtt = await client.ping()
        except E.SpyglassError as exc:
            if client is self.client:
                self.ping_error, self.reachable, self.last_ping_at = exc.message, False, time.time()
                self.healthChanged.emit()
            raise
        self.last_rtt, self.ping_error, self.reachable, self.last_ping_at = rtt, None, True, time.time()
        self.healthChanged.emit()
        return rtt

    async def _beat(self, client: Any) -> None:
        """Modern era: server/discover every `heartbeat_s` seconds shows whether the server is reachable."""
        while client is self.client and client.closed is None:
            try:
                await self.ping()
            except E.SpyglassError:
                pass  # shown as unreachable
            except Exception:  # a bug of ours must not end the checks silently
                log.exception("server/discover heartbeat of %s", self.conn.name)
            await asyncio.sleep(self.heartbeat_s)

    # ------------------------------------------------------------------ roots
    async def set_roots(self, roots: list[dict[str, str]]) -> None:
        self.roots = list(roots)
        self.rootsChanged.emit()
        client = self.client
        if client is not None and client.closed is None:
            await client.set_roots(self.roots)
