"""What a server lists: tools, resources, resource templates and prompts, one `Listing` per kind.

Each listing is fetched whole (every page), remembers whether the answer came from the client's cache
(results the server marked cacheable with `ttlMs`, 2026-07-28), and, when the server said the list
changed, what appeared and what vanished since the previous fetch. A server that does not declare the
capability gets a note instead of a request. Refreshes of one kind never run twice at once: a change
announced while one is under way makes it fetch once more when it ends.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import errors as E
from ..protocol import jsonrpc as rpc

if TYPE_CHECKING:
    from ..client import Client

log = logging.getLogger("spyglass.session.listing")


@dataclass(frozen=True)
class ListKind:
    method: str
    key: str  # the list's member in the result
    ident: str  # what names an item
    capability: str


KINDS: dict[str, ListKind] = {
    "tools": ListKind("tools/list", "tools", "name", "tools"),
    "resources": ListKind("resources/list", "resources", "uri", "resources"),
    "templates": ListKind("resources/templates/list", "resourceTemplates", "uriTemplate", "resources"),
    "prompts": ListKind("prompts/list", "prompts", "name", "prompts"),
}
LIBRARY = ("resources", "templates", "prompts")

# which listings a list_changed notification makes stale
LIST_CHANGED: dict[str, tuple[str, ...]] = {
    "notifications/tools/list_changed": ("tools",),
    "notifications/resources/list_changed": ("resources", "templates"),
    "notifications/prompts/list_changed": ("prompts",),
}

REJECTED = "x-spyglass-rejected"  # marks a tool the client set aside, with why


@dataclass
class Listing:
    """One list as last fetched."""

    items: list[dict[str, Any]] = field(default_factory=list)
    loaded: bool = False
    error: str | None = None
    note: str | None = None
    appeared: set[str] = field(default_factory=set)
    vanished: list[dict[str, Any]] = field(default_factory=list)
    # items still there whose definition changed, and what changed: "schema", "description", "definition"
    changed: dict[str, str] = field(default_factory=dict)
    ttl_ms: Any = None
    cache_scope: Any = None
    fetched_at: float | None = None  # wall time of the last request that reached the server
    from_cache: bool = False

    def names(self, ident: str) -> list[str]:
        return [i[ident] for i in self.items if isinstance(i.get(ident), str)]

    def cache_note(self, method: str) -> str:
        """"resources/list · cacheable for 60 s, public · fetched 10:01:02" ("" before it is listed).
        `cacheScope` is the server's text: make it visible before showing it."""
        if not self.loaded or self.error:
            return ""
        when = time.strftime("%H:%M:%S", time.localtime(self.fetched_at)) if self.fetched_at else "?"
        ttl = self.ttl_ms
        if isinstance(ttl, (int, float)) and not isinstance(ttl, bool) and ttl > 0:
            scope = f", {self.cache_scope}" if self.cache_scope is not None else ""
            src = " · reused from the cache" if self.from_cache else ""
            return f"{method} · cacheable for {ttl / 1000:g} s{scope} · fetched {when}{src}"
        return f"{method} · fetched {when}"


def diff(old: Listing, items: list[dict[str, Any]], ident: str) -> tuple[set[str], list[dict[str, Any]]]:
    """What appeared in `items` and what vanished from `old`, by identity."""
    before = {i.get(ident): i for i in old.items}
    now = {i.get(ident) for i in items}
    appeared = {n for n in now if n not in before and isinstance(n, str)}
    vanished = [i for n, i in before.items() if n not in now]
    return appeared, vanished


SCHEMA_KEYS = ("inputSchema", "outputSchema", "arguments")  # what a tool or a prompt takes and gives
DESCRIPTION_KEYS = ("description", "title")


def redefined(old: Listing, items: list[dict[str, Any]], ident: str) -> dict[str, str]:
    """Items in both whose definition differs, with what differs: "schema", "description", both, or
    "definition" (annotations, _meta, a MIME type...)."""
    before = {i.get(ident): i for i in old.items if isinstance(i.get(ident), str)}
    out: dict[str, str] = {}
    for item in items:
        name = item.get(ident)
        was = before.get(name) if isinstance(name, str) else None
        if was is None or was == item:
            continue
        assert isinstance(name, str)
        what = [label for label, keys in (("schema", SCHEMA_KEYS), ("description", DESCRIPTION_KEYS))
                if any(was.get(k) != item.get(k) for k in keys)]
        out[name] = " and ".join(what) or "definition"
    return out


def change_note(kind: str, appeared: set[str], vanished: list[dict[str, Any]], ident: str,
                changed: dict[str, str] | None = None) -> str:
    what = "tool list" if kind == "tools" else kind
    return f"{what} changed: " + ", ".join([f"+{n}" for n in sorted(appeared)]
                                           + [f"-{i.get(ident)}" for i in vanished]
                                           + [f"~{n} ({c})" for n, c in sorted((changed or {}).items())])


class Listings:
    """The four listings of one server, and the fetching of them."""

    def __init__(self, client: Callable[[], Client | None], capabilities: Callable[[], Any],
                 changed: Callable[[str], None], note: Callable[[str], None]) -> None:
        self._client = client
        self._capabilities = capabilities
        self._changed = changed
        self._note = note
        self.lists: dict[str, Listing] = {k: Listing() for k in KINDS}
        self._running: dict[str, asyncio.Future[None]] = {}
        self._again: dict[str, bool] = {}

    def __getitem__(self, kind: str) -> Listing:
        return self.lists[kind]

    def reset(self) -> None:
        self.lists = {k: Listing() for k in KINDS}
        for kind in KINDS:
            self._changed(kind)

    def unmark(self) -> None:
        """Forget the marks of the last change (the lists stay, to be compared with the next fetch)."""
        for listing in self.lists.values():
            listing.appeared, listing.vanished, listing.changed = set(), [], {}

    def _offered(self, capability: str) -> bool:
        caps = self._capabilities()
        return not isinstance(caps, dict) or capability in caps

    async def load(self, kind: str, *, refresh: bool = False, mark: bool = False) -> None:
        """List `kind` (every page). With `mark`, remember what appeared and vanished. A load already under
        way is not started twice: it runs once more when it ends (marking the changes)."""
        running = self._running.get(kind)
        if running is not None and not running.done():
            self._again[kind] = True
            await asyncio.shield(running)
            return
        job = asyncio.ensure_future(self._load_until_settled(kind, refresh, mark))
        self._running[kind] = job
        await asyncio.shield(job)

    async def settled(self, kind: str) -> None:
        """Wait for a load of `kind` under way (one a list_changed notification started), if there is one."""
        running = self._running.get(kind)
        if running is not None and not running.done():
            await asyncio.shield(running)

    async def load_all(self, kinds: tuple[str, ...] = tuple(KINDS), *, refresh: bool = False,
                       mark: bool = False) -> None:
        await asyncio.gather(*(self.load(k, refresh=refresh, mark=mark) for k in kinds))

    async def _load_until_settled(self, kind: str, refresh: bool, mark: bool) -> None:
        while True:
            self._again[kind] = False
            await self._load_once(kind, refresh, mark)
            if not self._again.get(kind):
                return
            refresh, mark = True, True

    async def _load_once(self, kind: str, refresh: bool, mark: bool) -> None:
        spec = KINDS[kind]
        client = self._client()
        if client is None:
            return
        listing = self.lists[kind]
        if not self._offered(spec.capability):
            self.lists[kind] = Listing(loaded=True, note=f"This server does not offer {spec.capability} "
                                                         f"(no {spec.capability} capability).")
            self._changed(kind)
            return
        from_cache = not refresh and kind != "tools" and client.cache_fresh(spec.method)
        try:
            if kind == "tools":
                result = await client.list_tools(refresh=True)
            else:
                result = await client.list_all(spec.method, spec.key, refresh=refresh)
        except E.SpyglassError as exc:
            if client is not self._client():
                return
            if kind == "templates" and isinstance(exc, E.RemoteError) and exc.code == rpc.METHOD_NOT_FOUND:
                self.lists[kind] = Listing(loaded=True, note="The server does not implement "
                                                             "resources/templates/list.")
            else:
                self.lists[kind] = Listing(items=listing.items, loaded=True, error=exc.message,
                                           appeared=listing.appeared, vanished=listing.vanished,
                                           changed=listing.changed)
            self._changed(kind)
            return
        if client is not self._client():
            return
        raw = result.get(spec.key, [])
        items = [i for i in raw if isinstance(i, dict)]
        new = Listing(items=items, loaded=True, ttl_ms=result.get("ttlMs"), cache_scope=result.get("cacheScope"),
                      fetched_at=listing.fetched_at if from_cache else time.time(), from_cache=from_cache)
        if len(items) != len(raw):
            new.note = f"{len(raw) - len(items)} entries that are not objects were left out"
        if kind == "tools":
            # tools the client set aside (e.g. broken x-mcp-header annotations): flagged, not hidden
            for name, why in client.rejected_tools:
                new.items.append({"name": name, REJECTED: why})
        if mark and listing.loaded:
            new.appeared, new.vanished = diff(listing, new.items, spec.ident)
            new.changed = redefined(listing, new.items, spec.ident)
            if new.appeared or new.vanished or new.changed:
                self._note(change_note(kind, new.appeared, new.vanished, spec.ident, new.changed))
        self.lists[kind] = new
        self._changed(kind)
