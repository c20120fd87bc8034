"""What each server of a recorded session was, rebuilt from its frames alone: the revision it spoke,
who it said it was, its capabilities, its tools, resources, templates and prompts as last listed, every
call with its answer, and its log. The window shows an opened session from this, `spyglass diff`
compares two of them, and `spyglass replay` takes its requests from the same reading.

Nothing here trusts the frames: a listing that is not a list, a page that never ended, an answer of the
wrong shape are kept as they were, with a note in `problems`, never an exception.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from ..protocol.jsonrpc import Notification, decode
from ..protocol.versions import META_PROTOCOL_VERSION
from ..traffic import TrafficStore

# the listings a server has, by the method that lists them: (the result's key, the key naming an entry)
LISTINGS = {"tools/list": ("tools", "name"), "resources/list": ("resources", "uri"),
            "resources/templates/list": ("resourceTemplates", "uriTemplate"), "prompts/list": ("prompts", "name")}
HANDSHAKE = ("initialize", "server/discover")
# what a call names: the tool, the resource or the prompt
NAME_PARAM = {"tools/call": "name", "resources/read": "uri", "prompts/get": "name", "resources/subscribe": "uri",
              "resources/unsubscribe": "uri", "skills/get": "uri"}


@dataclass
class Exchange:
    """One request and its answer (None while unanswered), read from the frames."""

    n: int  # the request's record number
    method: str
    params: dict[str, Any] | None
    direction: str  # "out": the client asked; "in": the server asked the client
    answer: int | None = None  # the answer's record number
    result: Any = None
    error: dict[str, Any] | None = None
    latency: float | None = None
    wall: float = 0.0
    background: bool = False  # the session's own traffic (its heartbeat), not something the user did
    # 2026-07-28 multi-round requests: the re-sends carrying `inputResponses` (in order), and on each of
    # them the first request they continue
    rounds: list[Exchange] = field(default_factory=list)
    first: Exchange | None = None

    @property
    def final(self) -> Exchange:
        """The exchange that holds the answer: the last round of a multi-round request, else this one."""
        return self.rounds[-1] if self.rounds else self

    @property
    def target(self) -> str | None:
        """The tool, resource or prompt the request names."""
        key = NAME_PARAM.get(self.method)
        value = self.params.get(key) if key and isinstance(self.params, dict) else None
        return value if isinstance(value, str) else None

    @property
    def outcome(self) -> str:
        if self.rounds:
            return self.rounds[-1].outcome
        if self.answer is None:
            return "unanswered"
        if self.error is not None:
            return "error"
        if isinstance(self.result, dict) and self.result.get("isError") is True:
            return "tool error"
        return "ok"

    @property
    def label(self) -> str:
        """How a report names it: the method, and what it names."""
        target = self.target
        return f"{self.method} {target}" if target else self.method


@dataclass(slots=True)
class LogEntry:
    n: int
    wall: float
    level: str
    logger: str | None
    data: Any


class LogLines(Sequence[LogEntry]):
    """A server's log lines, kept by column: a million of them in a big session take 40 bytes a line besides
    their data (a LogEntry each, with its number and time, took 130). A line read is a LogEntry; `add` keeps
    one without making it."""

    __slots__ = ("_n", "_wall", "_level", "_logger", "_data")

    def __init__(self, entries: Iterable[LogEntry] = ()) -> None:
        self._n = array("q")
        self._wall = array("d")
        self._level: list[str] = []
        self._logger: list[str | None] = []
        self._data: list[Any] = []
        for e in entries:
            self.append(e)

    def add(self, n: int, wall: float, level: str, logger: str | None, data: Any) -> None:
        self._n.append(n)
        self._wall.append(wall)
        self._level.append(level)
        self._logger.append(logger)
        self._data.append(data)

    def append(self, entry: LogEntry) -> None:
        self.add(entry.n, entry.wall, entry.level, entry.logger, entry.data)

    def __len__(self) -> int:
        return len(self._n)

    @overload
    def __getitem__(self, i: int) -> LogEntry: ...

    @overload
    def __getitem__(self, i: slice) -> list[LogEntry]: ...

    def __getitem__(self, i: int | slice) -> LogEntry | list[LogEntry]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        return LogEntry(self._n[i], self._wall[i], self._level[i], self._logger[i], self._data[i])

    def __iter__(self) -> Iterator[LogEntry]:
        return map(LogEntry, self._n, self._wall, self._level, self._logger, self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LogLines, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # (it changes, as a list does)

    def __repr__(self) -> str:
        return f"LogLines({list(self)!r})"


@dataclass
class ServerSurface:
    server_id: str
    definition: dict[str, Any] | None = None  # what the session file says of it (secrets masked)
    revision: str | None = None
    era: str | None = None  # "legacy" (initialize) or "modern" (server/discover)
    server_info: dict[str, Any] | None = None
    capabilities: dict[str, Any] | None = None
    instructions: str | None = None
    listings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by LISTINGS key, as last listed
    exchanges: list[Exchange] = field(default_factory=list)  # every request, in the order sent
    log: LogLines = field(default_factory=LogLines)
    stderr: list[str] = field(default_factory=list)
    frames: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        definition = self.definition or {}
        name = definition.get("name")
        return name if isinstance(name, str) and name else self.server_id

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.listings.get("tools", [])

    @property
    def resources(self) -> list[dict[str, Any]]:
        return self.listings.get("resources", [])

    @property
    def templates(self) -> list[dict[str, Any]]:
        return self.listings.get("resourceTemplates", [])

    @property
    def prompts(self) -> list[dict[str, Any]]:
        return self.listings.get("prompts", [])

    def calls(self) -> list[Exchange]:
        """The client's requests that did something (not the handshake, listings or the heartbeat)."""
        return [x for x in self.exchanges if x.direction == "out" and not x.background and x.first is None
                and x.method not in HANDSHAKE and x.method not in LISTINGS and x.method != "ping"]

    def as_json(self) -> dict[str, Any]:
        """The surface `spyglass diff` compares (and `--format json` prints)."""
        return {"server": self.name, "revision": self.revision, "era": self.era, "serverInfo": self.server_info,
                "capabilities": self.capabilities, "instructions": self.instructions,
                "tools": self.tools, "resources": self.resources, "resourceTemplates": self.templates,
                "prompts": self.prompts}


def _json(data: bytes) -> Any:
    """A frame's JSON, by the frames' own parser (the faster one when the client installed it), or None."""
    obj, problem = decode(data)
    return None if problem else obj


def definitions(store: TrafficStore) -> dict[str, dict[str, Any]]:
    """The server definitions a session file carries (`server:<id>` meta rows), by server id."""
    found: dict[str, dict[str, Any]] = {}
    for key, value in store.meta_items.items():
        if key.startswith("server:"):
            parsed = _json(value.encode("utf-8", "replace"))
            if isinstance(parsed, dict):
                found[key[len("server:"):]] = parsed
    return found


def surfaces(store: TrafficStore) -> dict[str, ServerSurface]:
    """Every server of the session, in the order it first appears."""
    builder = SurfacesBuilder(store)
    builder.take(len(store))
    return builder.finish()


class SurfacesBuilder:
    """`surfaces` a slice at a time, as a session is read: `take(end)` reads the frames up to `end` (the
    store may still be growing), `finish()` the servers once every frame was taken."""

    def __init__(self, store: TrafficStore) -> None:
        self.store = store
        self.known = definitions(store)
        self.out: dict[str, ServerSurface] = {}
        self.builders: dict[str, _Builder] = {}
        self.taken = 0

    def take(self, end: int) -> None:
        """(The messages the store parsed as it read the frames are taken as they are, not parsed again.)"""
        store, builders = self.store, self.builders
        first, read = store.last_read
        for n in range(self.taken, end):
            sid = store.server_id(n)
            builder = builders.get(sid)
            if builder is None:
                surface = self.out[sid] = ServerSurface(sid, self.known.get(sid))
                builder = builders[sid] = _Builder(surface)
            k = n - first
            builder.take(store, n, read[k][1].message if 0 <= k < len(read) else None)
        self.taken = max(self.taken, end)

    def finish(self) -> dict[str, ServerSurface]:
        for sid, definition in self.known.items():  # a server that never sent a frame is still part of it
            if sid not in self.out:
                self.out[sid] = ServerSurface(sid, definition)
                self.builders[sid] = _Builder(self.out[sid])
        for builder in self.builders.values():
            builder.finish()
        return self.out


class _Builder:
    """Reads one server's frames in order."""

    def __init__(self, surface: ServerSurface) -> None:
        self.s = surface
        self.open: dict[int, Exchange] = {}  # request row -> its exchange, until answered
        self.pages: dict[str, list[dict[str, Any]]] = {}  # a listing being paged through
        self.holds: dict[int, Exchange] = {}  # a tap's intercept: held requests by their number

    def take(self, store: TrafficStore, n: int, parsed: Any = None) -> None:
        """Frame `n`; `parsed`: what the store's parser made of it, if it is at hand."""
        s = self.s
        s.frames += 1
        kind = store.kind(n)
        direction = store.direction(n)
        said = (store.meta(n) or {}).get("intercept")
        if isinstance(said, dict) and said.get("state") in ("edited", "dropped"):
            self.superseded(said.get("hold"))
        if kind == "stderr":
            s.stderr.append(store.head(n).decode("utf-8", "replace"))
            return
        if kind not in ("request", "response", "error", "notification"):
            return
        if kind == "notification" and type(parsed) is Notification:  # most of a flood: as parsed
            if direction == "in" and parsed.method == "notifications/message":
                self.logged(store, n, parsed.params)
            return
        message = _json(store.raw(n))
        if not isinstance(message, dict):
            return
        if kind == "request":
            params = message.get("params")
            exchange = Exchange(n, str(message.get("method")), params if isinstance(params, dict) else None,
                                direction, wall=store.wall(n), background=n in store.columns.background)
            s.exchanges.append(exchange)
            self.open[n] = exchange
            if isinstance(said, dict) and said.get("state") == "held" and isinstance(said.get("hold"), int):
                self.holds[said["hold"]] = exchange
            if direction == "out" and exchange.params and ("inputResponses" in exchange.params
                                                           or "requestState" in exchange.params):
                self.continue_round(exchange)
            if direction == "out" and s.revision is None and isinstance(params, dict):
                meta = params.get("_meta")
                version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
                if isinstance(version, str):
                    s.revision, s.era = version, "modern"
        elif kind == "notification":
            if direction == "in" and message.get("method") == "notifications/message":
                self.logged(store, n, message.get("params"))
        else:
            request = store.pair(n)
            answered: Exchange | None = self.open.pop(request, None) if request is not None else None
            if answered is None:
                return
            exchange = answered
            exchange.answer = n
            exchange.latency = store.latency(n)
            if kind == "error":
                error = message.get("error")
                exchange.error = error if isinstance(error, dict) else {"code": None, "message": repr(error)}
            else:
                exchange.result = message.get("result")
            if direction == "in":
                self.answered(exchange)

    def logged(self, store: TrafficStore, n: int, params: Any) -> None:
        p = params if isinstance(params, dict) else {}
        logger, level = p.get("logger"), str(p.get("level", "info"))
        # one copy of each level and logger name (a million log lines name a few, 100 bytes a copy)
        self.s.log.add(n, store.wall(n), sys.intern(level) if len(level) < 64 else level,
                       (sys.intern(logger) if len(logger) < 64 else logger) if isinstance(logger, str) else None,
                       p.get("data"))

    def superseded(self, hold: Any) -> None:
        """A request a tap held, then edited (the edited one follows) or dropped: the peer never got it as
        it was, so it is no exchange of the conversation (replay does not send it)."""
        held = self.holds.pop(hold, None) if isinstance(hold, int) else None
        if held is not None and held.answer is None:
            self.s.exchanges.remove(held)
            self.open.pop(held.n, None)

    def continue_round(self, x: Exchange) -> None:
        """A re-send with the answers to a server's input requests: a round of the latest request of the
        same method and target that was answered `input_required`."""
        for earlier in reversed(self.s.exchanges[:-1]):
            if (earlier.direction == "out" and earlier.first is None and earlier.method == x.method
                    and earlier.target == x.target):
                last = earlier.final
                if isinstance(last.result, dict) and last.result.get("resultType") == "input_required":
                    earlier.rounds.append(x)
                    x.first = earlier
                return

    def answered(self, x: Exchange) -> None:
        """An answer to one of the client's requests: what it says of the server."""
        s = self.s
        result = x.result if isinstance(x.result, dict) else None
        if x.method in HANDSHAKE and result is not None:
            info = result.get("serverInfo")
            if isinstance(info, dict):
                s.server_info = info
            caps = result.get("capabilities")
            if isinstance(caps, dict):
                s.capabilities = caps
            if isinstance(result.get("instructions"), str):
                s.instructions = result["instructions"]
            if x.method == "initialize" and isinstance(result.get("protocolVersion"), str):
                s.revision, s.era = result["protocolVersion"], "legacy"
            return
        if result is not None and s.server_info is None:
            meta = result.get("_meta")
            info = meta.get("io.modelcontextprotocol/serverInfo") if isinstance(meta, dict) else None
            if isinstance(info, dict):
                s.server_info = info
        listing = LISTINGS.get(x.method)
        if listing is None or x.error is not None:
            return
        key, _name = listing
        if result is None:
            s.problems.append(f"{x.method} (record {x.answer}) answered {type(x.result).__name__}, not an object")
            return
        cursor = x.params.get("cursor") if isinstance(x.params, dict) else None
        if cursor is None:
            self.pages[key] = []  # a fresh listing starts
        entries = result.get(key)
        if not isinstance(entries, list):
            s.problems.append(f"{x.method} (record {x.answer}): {key!r} is not a list")
            entries = []
        page = self.pages.setdefault(key, [])
        page.extend(e for e in entries if isinstance(e, dict))
        if not isinstance(result.get("nextCursor"), str):
            s.listings[key] = page
            del self.pages[key]

    def finish(self) -> None:
        for key, page in self.pages.items():
            if key not in self.s.listings:  # only part of a listing was seen: better than nothing, said so
                self.s.listings[key] = page
                self.s.problems.append(f"the last {key} listing did not finish (its last page was never asked for)")


def exchanges(surface: ServerSurface, direction: str = "out") -> Iterator[Exchange]:
    return (x for x in surface.exchanges if x.direction == direction)
