"""What a mock server answers, read from one server of a recorded session: the handshake as it was, and
every request the client made with its recorded answer and what the server did while it answered (the
notifications it sent, the questions it asked the client, and when, relative to the request).

Matching a new request to a recorded one (`Book.match`): the same method and params first (the params
without what a client adds per session: the era's `_meta`, a progress token), the recorded ones of the
same key served in the order they were recorded and the last one again after that; then, for a request
that names a tool, resource or prompt, the recorded request of the same method and name whose arguments
are closest (fewest differences), the differences reported; nothing else is guessed.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from ..recording.compare import Change, diff_values
from ..recording.replay import clean_params
from ..recording.surface import HANDSHAKE, NAME_PARAM, Exchange, ServerSurface
from ..traffic import TrafficStore


@dataclass
class Event:
    """Something the server did while it answered a request: a notification sent, or a question asked
    (the recorded exchange, whose answer the client's new one is checked against)."""

    offset: float  # seconds after the request arrived
    notification: dict[str, Any] | None = None
    question: Exchange | None = None


@dataclass
class Entry:
    """One recorded request and everything the mock needs to answer it again."""

    exchange: Exchange
    params: dict[str, Any] | None  # the params a match compares (clean_params)
    events: list[Event] = field(default_factory=list)
    latency: float = 0.0
    served: int = 0
    wire: str | None = None  # the recorded result as JSON text, made when first served

    @property
    def method(self) -> str:
        return self.exchange.method

    @property
    def target(self) -> str | None:
        return self.exchange.target

    @property
    def is_round(self) -> bool:
        p = self.exchange.params
        return isinstance(p, dict) and ("inputResponses" in p or "requestState" in p)

    def describe(self) -> str:
        args = _arguments(self.method, self.params)
        text = self.exchange.label
        if args not in (None, {}):
            shown = json.dumps(args, ensure_ascii=False, sort_keys=True)
            text += f" {shown if len(shown) <= 120 else shown[:117] + '...'}"
        return text


@dataclass
class Match:
    entry: Entry
    exact: bool
    changes: list[Change] = field(default_factory=list)


def key(method: str, params: dict[str, Any] | None) -> str:
    return method + "\x00" + json.dumps(params, sort_keys=True, ensure_ascii=False, default=str)


def _arguments(method: str, params: dict[str, Any] | None) -> Any:
    """What a fuzzy match compares: the tool's arguments, a prompt's arguments, else the params but the name."""
    if not isinstance(params, dict):
        return None
    if method in ("tools/call", "prompts/get"):
        return params.get("arguments")
    name = NAME_PARAM.get(method)
    return {k: v for k, v in params.items() if k != name and k not in ("cursor",)}


def target_of(method: str, params: dict[str, Any] | None) -> str | None:
    name = NAME_PARAM.get(method)
    value = params.get(name) if name and isinstance(params, dict) else None
    return value if isinstance(value, str) else None


def _is_round(params: dict[str, Any] | None) -> bool:
    return isinstance(params, dict) and ("inputResponses" in params or "requestState" in params)


class Book:
    """The answers of one recorded server."""

    def __init__(self, surface: ServerSurface, store: TrafficStore | None) -> None:
        """`store`: the frames the surface was read from (None: answers only, no notifications or questions)."""
        self.surface = surface
        self.entries: list[Entry] = []
        self.by_key: dict[str, list[Entry]] = {}
        self.handshake: dict[str, Entry] = {}
        questions = {q.n: q for q in surface.exchanges if q.direction == "in"}
        for x in surface.exchanges:
            if x.direction != "out" or x.answer is None or x.background and x.method not in HANDSHAKE:
                continue
            entry = Entry(x, clean_params(x.params) or {}, latency=x.latency or 0.0)
            entry.events = _events(store, x, questions) if store is not None else []
            if x.method in HANDSHAKE:
                self.handshake.setdefault(x.method, entry)  # the first handshake is the one the server gave
                continue
            self.entries.append(entry)
            self.by_key.setdefault(key(x.method, entry.params), []).append(entry)
        self.methods = {e.method for e in self.entries}

    @property
    def era(self) -> str | None:
        return self.surface.era

    def match(self, method: str, params: dict[str, Any] | None) -> Match | None:
        """The recorded answer for a request (params cleaned already), or None."""
        same = self.by_key.get(key(method, params))
        if same:
            entry = next((e for e in same if not e.served), same[-1])
            entry.served += 1
            return Match(entry, True)
        target = target_of(method, params)
        rounds = _is_round(params)
        if target is None and method in NAME_PARAM:
            return None  # a request that should name a tool, resource or prompt and does not
        candidates = [e for e in self.entries if e.method == method and e.target == target and e.is_round == rounds]
        if not candidates:
            return None
        if rounds and isinstance(params, dict):  # a round names its state: the recorded round it continues
            state = params.get("requestState")
            same_state = [e for e in candidates if isinstance(e.params, dict) and e.params.get("requestState") == state]
            candidates = same_state or candidates
        given = _arguments(method, params) if not rounds else (params or {}).get("inputResponses")
        best: Match | None = None
        for e in candidates:
            recorded = _arguments(method, e.params) if not rounds else (e.params or {}).get("inputResponses")
            changes = diff_values(recorded, given)
            if best is None or len(changes) < len(best.changes) or (
                    len(changes) == len(best.changes) and best.entry.served and not e.served):
                best = Match(e, False, changes)
        if best is not None:
            best.entry.served += 1
            if not best.changes:
                best.exact = True  # only what a match ignores differs (a round's new id, its own _meta)
        return best

    def closest(self, method: str, params: dict[str, Any] | None) -> Entry | None:
        """The recorded request most like an unmatched one: same method first, then the nearest label."""
        if not self.entries:
            return None
        target = target_of(method, params) or ""
        pool = [e for e in self.entries if e.method == method] or self.entries
        wanted = f"{method} {target}"
        return max(pool, key=lambda e: difflib.SequenceMatcher(None, wanted, f"{e.method} {e.target or ''}").ratio())


def _events(store: TrafficStore, x: Exchange, questions: dict[int, Exchange]) -> list[Event]:
    """The server's notifications and questions between a request and its answer, in order. When other
    requests were open at the same time, only what names this one is kept (its progress token, the HTTP
    stream that carried its answer): the rest cannot be told apart and is left out, never guessed."""
    if x.answer is None:
        return []
    final = x.answer
    server = store.server_id(x.n)
    start = store.mono(x.n)
    token = None
    if isinstance(x.params, dict) and isinstance(x.params.get("_meta"), dict):
        token = x.params["_meta"].get("progressToken")
    request_id = store.request_id(x.n)
    crowded = False
    found: list[Event] = []
    for n in range(x.n + 1, final):
        if store.server_id(n) != server:
            continue
        kind = store.kind(n)
        direction = store.direction(n)
        if direction == "out" and kind == "request":
            crowded = True
        if direction != "in" or kind not in ("notification", "request"):
            continue
        try:
            message = json.loads(store.raw(n))
        except (ValueError, RecursionError):
            continue
        if not isinstance(message, dict):
            continue
        meta = store.meta(n) or {}
        params = message.get("params")
        mine = (isinstance(params, dict) and token is not None and params.get("progressToken") == token) or (
            "request" in meta and meta.get("request") == request_id)
        if crowded and not mine:
            continue
        offset = max(0.0, store.mono(n) - start)
        if kind == "notification":
            found.append(Event(offset, notification=message))
        elif n in questions:
            found.append(Event(offset, question=questions[n]))
    return found
