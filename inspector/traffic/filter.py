"""Filtered views of the traffic store, incremental and fast at a million rows.

A `FilteredView` is an ascending array of record numbers. `update(limit)` scans
the records appended since the last call (at most `limit` of them, so a UI can
spread a full re-filter over several timer ticks) and appends the matches.

Per chunk of rows the work is done at C speed: the one-byte columns
(direction, kind, server) become 0/1 masks with `bytes.translate`, masks are
combined as big integers, and the matching numbers come out of
`itertools.compress`. Free text is searched with `bytes.find` over the
contiguous raw buffer. The text matches the method (for responses the method of
their request), the malformed reason and the raw text of the frame (the first
`HEAD_MAX` bytes of huge frames); the one-line summary is derived from those.
Smart case: an all-lowercase needle ignores case (ASCII), any capital makes it
case-sensitive.
"""

from __future__ import annotations

import time
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import compress
from typing import TYPE_CHECKING, Any

from .columns import DIRECTIONS, K_MALFORMED, KINDS, WIDE

if TYPE_CHECKING:  # pragma: no cover - a type only: the store imports this module to make views
    from .store import TrafficStore

CHUNK = 65536
STEP = 8192  # records per slice when the caller gives a time budget


def _set(values: Iterable[str] | str | None) -> frozenset[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        return frozenset({values})
    return frozenset(values)


@dataclass(frozen=True)
class TrafficFilter:
    """`None` for a criterion means "any"; an empty set matches nothing."""

    text: str = ""
    directions: frozenset[str] | None = None  # out | in | err
    kinds: frozenset[str] | None = None  # request | response | notification | error | malformed | stderr
    servers: frozenset[str] | None = None  # server ids
    start: int = 0  # hide records numbered below this ("clear view")
    background: bool = False  # show the session's background traffic (its heartbeat), hidden by default
    expert: bool = False  # only the records with a finding (`TrafficStore.flags`)

    @classmethod
    def make(cls, text: str = "", directions: Iterable[str] | str | None = None,
             kinds: Iterable[str] | str | None = None, servers: Iterable[str] | str | None = None,
             start: int = 0, background: bool = False, expert: bool = False) -> TrafficFilter:
        return cls(text.strip(), _set(directions), _set(kinds), _set(servers), max(0, start), background, expert)

    def replace(self, **changes: Any) -> TrafficFilter:
        fields: dict[str, Any] = {"text": self.text, "directions": self.directions, "kinds": self.kinds,
                                  "servers": self.servers, "start": self.start, "background": self.background,
                                  "expert": self.expert}
        fields.update(changes)
        return TrafficFilter.make(**fields)

    @property
    def is_all(self) -> bool:
        return (not self.text and self.directions is None and self.kinds is None and self.servers is None
                and not self.expert)


def _and(a: bytes | bytearray | None, b: bytes | bytearray) -> bytes | bytearray:
    if a is None:
        return b
    size = len(b)
    return (int.from_bytes(a, "little") & int.from_bytes(b, "little")).to_bytes(size, "little")


def _table(codes: Iterable[int]) -> bytes:
    wanted = set(codes)
    return bytes(1 if i in wanted else 0 for i in range(256))


class FilteredView:
    """The record numbers of `store` that match `flt`, in ascending order."""

    def __init__(self, store: TrafficStore, flt: TrafficFilter) -> None:
        self.store = store
        self._columns = store.columns
        self.filter = flt
        self.rows = array("I")
        self.scanned = min(flt.start, len(store)) if flt.start else 0
        self._start = flt.start
        self._dir_table = _table(i for i, d in enumerate(DIRECTIONS) if d in flt.directions) \
            if flt.directions is not None else None
        self._kind_table = _table(i for i, k in enumerate(KINDS) if k in flt.kinds) \
            if flt.kinds is not None else None
        text = flt.text
        self._fold = text == text.lower()
        self._needle = (text.lower() if self._fold else text).encode("utf-8") if text else b""
        self._method_hits: set[int] = set()
        self._methods_seen = 0
        self._flags_seen = 0

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, row: int) -> int:
        return self.rows[row]

    def __iter__(self) -> Iterator[int]:
        return iter(self.rows)

    @property
    def complete(self) -> bool:
        """True when every record of the store has been looked at."""
        return max(self.scanned, self._start) >= len(self.store)

    def row_of(self, n: int) -> int | None:
        """The row at which record `n` is shown, or None if it is filtered out."""
        i = bisect_left(self.rows, n)
        return i if i < len(self.rows) and self.rows[i] == n else None

    def update(self, limit: int | None = None, seconds: float | None = None) -> int:
        """Take in up to `limit` records appended since the last call, stopping
        early once `seconds` have passed (checked every `STEP` records);
        returns how many rows were added to the view."""
        if self.filter.expert:
            return self._update_flagged()
        total = len(self.store)
        lo = max(self.scanned, self._start)
        hi = total if limit is None else min(total, lo + limit)
        before = len(self.rows)
        step = CHUNK if seconds is None else STEP
        deadline = None if seconds is None else time.perf_counter() + seconds
        while lo < hi:
            top = min(hi, lo + step)
            self._scan(lo, top)
            lo = top
            self.scanned = top
            if deadline is not None and time.perf_counter() >= deadline:
                break
        return len(self.rows) - before

    def _update_flagged(self) -> int:
        """An expert view: the flagged records (few, and flagged after they arrived) that match the rest
        of the filter, each looked at once, kept in ascending order."""
        order = self.store.flag_order
        fresh = [n for n in order[self._flags_seen:] if n >= self._start]
        self._flags_seen = len(order)
        self.scanned = len(self.store)
        if not fresh:
            return 0
        matched = array("I")
        rows, self.rows = self.rows, matched
        for n in fresh:
            self._scan(n, n + 1)
        self.rows = array("I", sorted({*rows, *matched}))
        return len(matched)

    # ------------------------------------------------------------------ internals
    def _scan(self, lo: int, hi: int) -> None:
        c = self._columns
        flt = self.filter
        mask: bytes | bytearray | None = None
        if self._dir_table is not None:
            mask = c.dir[lo:hi].translate(self._dir_table)
        if self._kind_table is not None:
            mask = _and(mask, c.kind[lo:hi].translate(self._kind_table))
        if flt.servers is not None:
            mask = _and(mask, self._server_mask(lo, hi))
        if self._needle:
            mask = _and(mask, self._text_mask(lo, hi))
        if not flt.background and c.background:
            hidden = [n - lo for n in c.background if lo <= n < hi]
            if hidden:
                mask = bytearray(mask) if mask is not None else bytearray(b"\x01" * (hi - lo))
                for i in hidden:
                    mask[i] = 0
        if mask is None:
            self.rows.extend(range(lo, hi))
        else:
            self.rows.extend(compress(range(lo, hi), mask))

    def _server_mask(self, lo: int, hi: int) -> bytearray:
        c = self._columns
        servers = self.filter.servers or ()
        codes = {c.server_code[s] for s in servers if s in c.server_code}
        mask = c.srv[lo:hi].translate(_table(min(code, WIDE) for code in codes))
        if any(code >= WIDE for code in codes):  # a session with more than 255 servers: check those rows one by one
            pos = mask.find(1)
            while pos >= 0:
                n = lo + pos
                if c.srv[n] == WIDE and c.wide.get(n) not in codes:
                    mask[pos] = 0
                pos = mask.find(1, pos + 1)
        return mask

    def _text_mask(self, lo: int, hi: int) -> bytearray:
        c = self._columns
        needle = self._needle
        fold = self._fold
        text = self.filter.text if not fold else self.filter.text.lower()
        mask = bytearray(hi - lo)
        # methods: check each new method name once
        methods = c.methods
        for code in range(max(1, self._methods_seen), len(methods)):
            name = methods[code].lower() if fold else methods[code]
            if text in name:
                self._method_hits.add(code)
        self._methods_seen = len(methods)
        if self._method_hits:
            hits = self._method_hits
            for i, code in enumerate(c.method[lo:hi]):
                if code in hits:
                    mask[i] = 1
        # malformed reasons (sparse): find the malformed rows through the kind column
        kinds = c.kind
        reasons = c.reasons
        pos = kinds.find(K_MALFORMED, lo, hi)
        while pos >= 0:
            reason = reasons.get(pos, "")
            if text in (reason.lower() if fold else reason):
                mask[pos - lo] = 1
            pos = kinds.find(K_MALFORMED, pos + 1, hi)
        # raw text, at C speed over the contiguous buffer
        off = c.off
        base = off[lo]
        segment = c.buf[base:off[hi]]
        if fold:
            segment = segment.lower()
        find = segment.find
        size = len(needle)
        pos = find(needle)
        while pos >= 0:
            row = bisect_right(off, base + pos, lo, hi + 1) - 1
            row_end = off[row + 1] - base
            if pos + size <= row_end:
                mask[row - lo] = 1
                pos = find(needle, row_end)
            else:  # the match spans two frames: not a match
                pos = find(needle, pos + 1)
        return mask
