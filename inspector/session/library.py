"""A server's resources and prompts in use: reading, subscribing, getting a prompt, completing an argument.

Subscriptions are the legacy `resources/subscribe`, or (2026-07-28) the URIs in the session's
`subscriptions/listen` filter, with what the server acknowledged and what it refused;
`notifications/resources/updated` marks a resource until it is read again. Results whose shape the
protocol fixes are checked by the client already; completion keeps at most the 100 values the
protocol allows, saying so.
"""

from __future__ import annotations

import os
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import errors as E

if TYPE_CHECKING:
    from .server import ServerSession

COMPLETION_LIMIT = 100


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
    """A completion/complete result as shown: at most 100 values, with a note saying why when cut."""
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
    total = comp.get("total")
    return Completion(values, total if isinstance(total, int) and not isinstance(total, bool) else None,
                      comp.get("hasMore") is True, "; ".join(notes) or None)


class Library:
    """Resources and prompts of one server, in use."""

    def __init__(self, session: ServerSession) -> None:
        self.session = session
        self.reset()

    def reset(self) -> None:
        self.subscribed: set[str] = set()
        self.updated: dict[str, float] = {}  # uri -> wall time of the last update notice
        self.granted: dict[str, Any] | None = None  # what the listen stream's acknowledgement granted
        self.refused: list[str] = []
        self.listen_error: str | None = None
        self.read_cache: dict[str, tuple[Any, Any]] = {}  # uri -> (ttlMs, cacheScope) of the last read

    @property
    def can_subscribe(self) -> bool:
        res = self.session.capability("resources")
        return self.session.modern or (isinstance(res, dict) and res.get("subscribe") is True)

    @property
    def can_complete(self) -> bool:
        return self.session.capability("completions") is not None

    # ------------------------------------------------------------------ resources
    async def read(self, uri: str) -> dict[str, Any]:
        result = await self.session.need_client().read_resource(uri)
        if "ttlMs" in result or "cacheScope" in result:
            self.read_cache[uri] = (result.get("ttlMs"), result.get("cacheScope"))
            self.session.changed.emit("health")
        self.updated.pop(uri, None)
        return result

    def resource_updated(self, params: Any) -> None:
        uri = params.get("uri") if isinstance(params, dict) else None
        if isinstance(uri, str):
            self.updated[uri] = time.time()
            self.session.resource_updated.emit(uri)

    async def subscribe(self, uri: str, on: bool = True) -> None:
        client = self.session.need_client()
        if self.session.modern:
            before = set(self.subscribed)
            (self.subscribed.add if on else self.subscribed.discard)(uri)
            try:
                await self.session.relisten()
            except Exception:
                self.subscribed = before
                raise
        elif on:
            await client.subscribe(uri)
            self.subscribed.add(uri)
        else:
            self.subscribed.discard(uri)
            await client.unsubscribe(uri)
        self.session.changed.emit("subscriptions")

    def listen_filter(self) -> dict[str, Any]:
        """The modern subscriptions/listen filter: list_changed for what the server offers, plus URIs."""
        wanted: dict[str, Any] = {}
        for cap, key in (("tools", "toolsListChanged"), ("prompts", "promptsListChanged"),
                         ("resources", "resourcesListChanged")):
            value = self.session.capability(cap)
            if isinstance(value, dict) and value.get("listChanged") is True:
                wanted[key] = True
        if self.subscribed:
            wanted["resourceSubscriptions"] = sorted(self.subscribed)
        return wanted

    def listening(self, granted: dict[str, Any] | None, refused: list[str]) -> None:
        self.granted, self.refused, self.listen_error = granted, list(refused), None
        self.session.changed.emit("subscriptions")

    def listen_failed(self, message: str) -> None:
        self.listen_error = message
        self.session.changed.emit("subscriptions")

    # ------------------------------------------------------------------ prompts and completion
    async def get_prompt(self, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        return await self.session.need_client().get_prompt(name, arguments)

    async def complete(self, ref: dict[str, Any], name: str, value: str,
                       context: dict[str, str] | None = None) -> Completion:
        client = self.session.need_client()
        return check_completion(await client.complete(ref, {"name": name, "value": value}, context or None))


def lists_change(capabilities: Any) -> bool:
    """Whether the server says any of its lists can change (worth a modern listen stream)."""
    caps = capabilities if isinstance(capabilities, dict) else {}
    return any(isinstance(caps.get(k), dict) and caps[k].get("listChanged") is True
               for k in ("tools", "prompts", "resources"))
