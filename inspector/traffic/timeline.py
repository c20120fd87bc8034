"""The timeline of a traffic session: requests as spans, notifications as ticks, latency per method.

Qt-free, standard library only. `Timeline(store)` reads the store's columns; `update()` takes in the rows appended
since the last call, at most `limit` of them or for about `seconds` (as `FilteredView.update`). Times are seconds
since the session's first record (`store.t0`).

One lane per server, in the order the servers first appear, with two tracks of spans, our requests ("out") and the
server's requests to us ("in"), and ticks: notifications either way, the server's requests, malformed frames. A span
runs from the request to its answer and ends ok, error (a JSON-RPC error response), tool error (a tools/call result
with `isError: true`), cancelled (a notifications/cancelled went the request's way while it was unanswered) or
unanswered (no answer yet, or never). Background frames (the heartbeat, `store.columns.background`) are flagged so a
view can dim them.

A view draws 100,000 frames without one Python step per frame: tracks and ticks are `Marks`, sorted by time (bisect
finds what is visible), with prefix counts per code built lazily at C speed (`bytes.translate`,
`itertools.accumulate`), so the size and the most notable code of a time bucket cost two bisects and a few
subtractions. A span that started before the visible range is found through its duration class (powers of two from 1
ms, each sorted by start, none of its spans longer than the class's bound).

`method_stats` keeps, per (direction, method, tool), counters and the latencies of the answered requests in an
`array`; percentiles are nearest-rank over a sorted copy that takes in the new ones by a merge (C speed)."""

from __future__ import annotations

import json
import math
import re
import time
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import accumulate, compress
from operator import le
from typing import TYPE_CHECKING, Any

from .columns import D_IN, D_OUT, HEAD_MAX, K_ERROR, K_MALFORMED, K_NOTIFICATION, K_REQUEST, K_RESPONSE, WIDE

if TYPE_CHECKING:  # pragma: no cover - a type only
    from .store import TrafficStore

OK, CANCELLED, UNANSWERED, TOOL_ERROR, ERROR = range(5)  # span outcomes, the worse the higher
OUTCOMES = ("ok", "cancelled", "unanswered", "tool error", "error")
NOTE_IN, NOTE_OUT, SERVER_REQUEST, MALFORMED = range(4)  # tick kinds, the more notable the higher
TICKS = ("notification", "our notification", "server request", "malformed")
DIM = 8  # added to a code: a background frame (the session's heartbeat)
SPAN_ORDER = (ERROR, TOOL_ERROR, UNANSWERED, CANCELLED, OK) + tuple(c + DIM for c in (4, 3, 2, 1, 0))
TICK_ORDER = (MALFORMED, SERVER_REQUEST, NOTE_OUT, NOTE_IN) + tuple(c + DIM for c in (3, 2, 1, 0))

HOLD = 10.0  # seconds an unanswered request keeps its level (one never answered must not take it for good)
BASE = 0.001  # seconds: spans shorter than this are duration class 0, then one class per doubling
CHUNK = 65536
STEP = 512  # rows per slice when the caller gives a time budget
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri", "resources/subscribe": "uri",
         "resources/unsubscribe": "uri", "skills/get": "uri"}  # the parameter that names what a request is about
CANCELLED_METHOD = "notifications/cancelled"
_WANTED = bytes(1 if k in (K_REQUEST, K_RESPONSE, K_ERROR, K_NOTIFICATION, K_MALFORMED) else 0 for k in range(256))
_ONE = [bytes(1 if i == code else 0 for i in range(256)) for code in range(256)]
# What names a request, when it is the first parameter (as our client writes them) and has no escapes: read
# without parsing the frame (any other shape is parsed). In valid JSON these quotes cannot be inside a string.
_FIRST_PARAM = re.compile(rb'"params"\s*:\s*\{\s*"(name|uri)"\s*:\s*"([^"\\]*)"')
_IS_ERROR = re.compile(rb'"isError"\s*:\s*true')
METHOD_COLUMNS = ("Method", "Tool", "Count", "Errors", "Cancelled", "Unanswered", "p50 ms", "p95 ms", "Max ms")
METHOD_TIPS = ("JSON-RPC method (← a request the server sent us)", "The tool called (tools/call)", "Requests",
               "JSON-RPC errors and tool errors (isError: true)", "Requests cancelled (notifications/cancelled)",
               "Requests with no answer (yet)", "Median latency of the answered requests",
               "95th percentile latency (nearest rank)", "The slowest answer (double-click a row to see it)")


def duration_class(seconds: float) -> int:
    """0 below `BASE`; class k >= 1 holds durations in [BASE * 2**(k-1), BASE * 2**k)."""
    if seconds < BASE:
        return 0
    return math.frexp(seconds / BASE)[1]


def class_bound(k: int) -> float:
    """No span of class `k` lasts this long."""
    return BASE * 2.0 ** k


def nearest_rank(ordered: list[float], q: float) -> float:
    """The q-quantile (0 < q <= 1) of an ascending, non-empty list, by the nearest-rank method."""
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


# ---------------------------------------------------------------------- labels, for a view of any toolkit
def nice_step(raw: float) -> float:
    """The smallest 1, 2 or 5 × 10^k at least `raw`."""
    if raw <= 0:
        return 1.0
    base = 10.0 ** math.floor(math.log10(raw))
    return next(m * base for m in (1, 2, 5, 10) if m * base >= raw * (1 - 1e-9))


def format_time(t: float, step: float, until: float) -> str:
    """An axis label: ms while the whole view is under a second, then seconds, then m:ss past ten minutes."""
    if abs(t) < step * 1e-6:
        return "0"
    if until < 1.0:
        return f"{t * 1000:.{max(0, -math.floor(math.log10(step * 1000) + 1e-9))}f} ms"
    if until >= 600 and step >= 1:
        minutes, seconds = divmod(round(t), 60)
        return f"{minutes}:{seconds:02d}"
    return f"{t:.{max(0, -math.floor(math.log10(step) + 1e-9))}f} s"


def format_ms(ms: float | None) -> str:
    if ms is None:
        return ""
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 10 else f"{ms:.1f}" if ms < 10000 else f"{ms:,.0f}"


def format_duration(seconds: float) -> str:
    ms = seconds * 1000
    return f"{format_ms(ms)} ms" if ms < 10000 else f"{seconds:.2f} s"


class Marks:
    """Marks sorted by time: (time, id, code), with prefix counts per code for bucket queries."""

    __slots__ = ("times", "ids", "codes", "_prefix", "_clean", "present")

    def __init__(self) -> None:
        self.times = array("d")
        self.ids = array("I")
        self.codes = bytearray()
        self._prefix: dict[int, array[int]] = {}  # code -> marks of that code before each position
        self._clean = 0  # the prefix counts are right for positions below this
        self.present: set[int] = set()

    def __len__(self) -> int:
        return len(self.times)

    def add(self, t: float, ident: int, code: int) -> None:
        times = self.times
        if not times or t >= times[-1]:
            times.append(t)
            self.ids.append(ident)
            self.codes.append(code)
        else:  # frames of two servers can arrive a hair out of order
            i = bisect_right(times, t)
            times.insert(i, t)
            self.ids.insert(i, ident)
            self.codes.insert(i, code)
            self._clean = min(self._clean, i)
        self.present.add(code)

    def extend(self, times: list[float], first: int, code: int) -> None:  # `add` of rows first… (in order)
        self.times.extend(times)
        self.ids.extend(range(first, first + len(times)))
        self.codes.extend(bytes((code,)) * len(times))
        self.present.add(code)

    def position(self, t: float, ident: int) -> int:
        i = bisect_left(self.times, t)
        ids = self.ids
        while ids[i] != ident:
            i += 1
        return i

    def set_code(self, t: float, ident: int, code: int) -> None:
        i = self.position(t, ident)
        if self.codes[i] != code:
            self.codes[i] = code
            self._clean = min(self._clean, i)
            self.present.add(code)

    def remove(self, t: float, ident: int) -> None:
        i = self.position(t, ident)
        del self.times[i]
        del self.ids[i]
        del self.codes[i]
        self._clean = min(self._clean, i)

    def range(self, t0: float, t1: float) -> tuple[int, int]:
        """Positions [a, z) of the marks with t0 <= time <= t1."""
        return bisect_left(self.times, t0), bisect_right(self.times, t1)

    def count(self, t0: float, t1: float) -> int:
        a, z = self.range(t0, t1)
        return z - a

    def _settle(self) -> None:
        size = len(self.codes)
        if self._clean >= size and len(self._prefix) == len(self.present):
            return
        for code in self.present:
            pf = self._prefix.get(code)
            if pf is None:
                pf = self._prefix[code] = array("I", [0])
            start = min(self._clean, len(pf) - 1)
            if start >= size and len(pf) == size + 1:
                continue
            tail = accumulate(self.codes[start:].translate(_ONE[code]), initial=pf[start])
            next(tail)
            del pf[start + 1:]
            pf.extend(tail)
        self._clean = size

    def buckets(self, t0: float, step: float, n: int, order: Iterable[int]) -> list[tuple[int, int, int]]:
        """The non-empty ones of `n` buckets of `step` seconds from `t0`: (bucket, marks, most notable code,
        the first of `order` found in it)."""
        times = self.times
        a, z = bisect_left(times, t0), bisect_left(times, t0 + n * step)
        if z <= a:
            return []
        codes = self.codes
        ranked = {code: rank for rank, code in enumerate(order)}
        if z - a <= 2 * n:  # sparse: walk the marks
            out: list[tuple[int, int, int]] = []
            last, count, best = -1, 0, -1
            for i in range(a, z):
                b = min(n - 1, int((times[i] - t0) / step))
                code = codes[i]
                if b != last:
                    if count:
                        out.append((last, count, best))
                    last, count, best = b, 0, code
                elif ranked.get(code, 99) < ranked.get(best, 99):
                    best = code
                count += 1
            if count:
                out.append((last, count, best))
            return out
        self._settle()
        arrays = [(code, self._prefix[code]) for code in order if code in self._prefix]
        out = []
        lo = a
        for b in range(n):
            hi = bisect_left(times, t0 + (b + 1) * step, lo, z) if b < n - 1 else z
            if hi > lo:
                best = -1
                for code, pf in arrays:
                    if pf[hi] != pf[lo]:
                        best = code
                        break
                out.append((b, hi - lo, best))
                lo = hi
        return out


class Track:
    """One lane's spans of one direction: all of them by start, and the finished ones by duration class."""

    __slots__ = ("lane", "direction", "marks", "classes", "open", "busy", "holder")

    def __init__(self, lane: int, direction: str) -> None:
        self.lane = lane
        self.direction = direction  # "out": our requests; "in": the server's requests to us
        self.marks = Marks()  # every span: (start, span, outcome + DIM if background)
        self.classes: dict[int, Marks] = {}  # duration class -> spans with an end
        self.open: set[int] = set()  # spans without an end yet
        # levels, so that spans in flight at once are drawn one above the other: when each one is free again
        # (`HOLD` after the request while it is unanswered) and the span that took it last
        self.busy: list[float] = []
        self.holder: list[int] = []


@dataclass(slots=True)
class Lane:
    server: str
    out: Track
    inward: Track  # the server's requests to us
    ticks: Marks  # (time, record, tick kind + DIM if background)


@dataclass(frozen=True, slots=True)
class Span:
    index: int
    row: int  # the request's record number
    response: int | None
    cancel: int | None  # the notifications/cancelled sent for it
    server: str
    direction: str  # "out": ours; "in": the server's request to us
    method: str
    name: str | None  # the tool (tools/call), prompt or resource it is about
    start: float
    end: float | None  # None: unanswered
    outcome: str
    background: bool

    @property
    def latency(self) -> float | None:
        return None if self.end is None or self.response is None else self.end - self.start


@dataclass(frozen=True, slots=True)
class Tick:
    row: int
    server: str
    time: float
    kind: str  # one of TICKS
    method: str | None
    background: bool


@dataclass(frozen=True, slots=True)
class MethodStats:
    direction: str  # "out": our requests; "in": the server's
    method: str
    name: str | None  # the tool, for tools/call
    count: int
    errors: int  # JSON-RPC errors and tool errors
    tool_errors: int
    cancelled: int
    unanswered: int
    p50_ms: float | None  # of the answered requests that were not cancelled
    p95_ms: float | None
    max_ms: float | None
    slowest: int | None  # the request row of the slowest answer

    def cells(self) -> list[tuple[str, Any]]:
        """(text, sort key) of each of `METHOD_COLUMNS`."""
        method, name = self.method, self.name or ""
        return ([(("← " if self.direction == "in" else "") + method, method.lower()), (name, name.lower())]
                + [(f"{v:,}", float(v)) for v in (self.count, self.errors, self.cancelled, self.unanswered)]
                + [(format_ms(v), -1.0 if v is None else v) for v in (self.p50_ms, self.p95_ms, self.max_ms)])


class _Stat:
    __slots__ = ("key", "counts", "latencies", "slowest", "worst", "ordered")

    def __init__(self, key: tuple[int, int, int]) -> None:
        self.key = key
        self.counts = [0] * 5  # per outcome; unanswered is what the others leave
        self.latencies = array("d")
        self.slowest = -1
        self.worst = -1.0
        self.ordered: list[float] = []


class Timeline:
    """Spans, ticks and per-method statistics of a `TrafficStore`, taken in incrementally."""

    def __init__(self, store: TrafficStore) -> None:
        self.store = store
        self.scanned = 0  # rows taken in
        self.end = 0.0  # time of the last row taken in
        self.lanes: list[Lane] = []  # by the store's server number
        # the spans, in the order of their requests (so `span_row` is ascending)
        self.span_row = array("I")
        self.span_start = array("d")
        self.span_end = array("d")  # NaN: no end yet
        self.span_response = array("i")  # -1: none
        self.span_outcome = bytearray()
        self.span_flags = bytearray()  # 1: background; 2: the server's request
        self.span_lane = array("I")
        self.span_name = array("I")  # index into `names`; 0: none
        self.span_stat = array("I")
        self.span_level = array("H")  # the first level free when the request went out
        self.cancels: dict[int, int] = {}  # span -> the notifications/cancelled row
        self.names: list[str] = [""]
        self._name_code: dict[str, int] = {"": 0}
        self._waiting: dict[tuple[int, int, Any], int] = {}  # (lane, direction, id) -> unanswered span
        self._stats: list[_Stat] = []
        self._stat_of: dict[tuple[int, int, int], int] = {}

    def __len__(self) -> int:
        return len(self.span_row)

    @property
    def t0(self) -> float:
        return self.store.t0 or 0.0

    @property
    def complete(self) -> bool:
        return self.scanned >= len(self.store)

    # ------------------------------------------------------------------ taking rows in
    def update(self, limit: int | None = None, seconds: float | None = None) -> int:
        """Take in up to `limit` rows appended since the last call, stopping once `seconds` have passed
        (checked every `STEP` rows); returns how many rows were taken in."""
        total = len(self.store)
        first = lo = self.scanned
        hi = total if limit is None else min(total, lo + limit)
        step = CHUNK if seconds is None else STEP
        deadline = None if seconds is None else time.perf_counter() + seconds
        while lo < hi:
            top = min(hi, lo + step)
            self._take(lo, top)
            lo = self.scanned = top
            if deadline is not None and time.perf_counter() >= deadline:
                break
        return self.scanned - first

    def _take(self, lo: int, hi: int) -> None:
        c = self.store.columns
        t0 = self.t0
        kinds, dirs, mono, pair, methods = c.kind, c.dir, c.mono, c.pair, c.method
        background = c.background
        while len(self.lanes) < len(c.servers):
            code = len(self.lanes)
            self.lanes.append(Lane(c.servers[code], Track(code, "out"), Track(code, "in"), Marks()))
        lanes = self.lanes
        cancel_code = c.method_code.get(CANCELLED_METHOD, -1)
        named = {c.method_code[m]: key for m, key in NAMED.items() if m in c.method_code}
        call_code = c.method_code.get("tools/call", -1)
        if ((k := hi - lo) > 1 and kinds.count(K_NOTIFICATION, lo, hi) == k and dirs.count(D_IN, lo, hi) == k
                and (srv := c.srv[lo]) != WIDE and c.srv.count(srv, lo, hi) == k and cancel_code not in methods[lo:hi]
                and background.isdisjoint(range(lo, hi))):
            ticks, times = lanes[srv].ticks, [m - t0 for m in mono[lo:hi]]
            if (not ticks.times or times[0] >= ticks.times[-1]) and all(map(le, times, times[1:])):
                ticks.extend(times, lo, NOTE_IN)  # in one step, as the loop below would one by one
                lo = hi
        for n in compress(range(lo, hi), kinds[lo:hi].translate(_WANTED)):
            kind = kinds[n]
            if kind == K_RESPONSE or kind == K_ERROR:
                p = pair[n]
                if 0 <= p < n:
                    self._answer(p, n, kind == K_ERROR, methods[p] == call_code)
                continue
            lane = c.server_of(n)
            d = dirs[n]
            t = mono[n] - t0
            dim = DIM if n in background else 0
            if kind == K_REQUEST:
                if d == D_OUT or d == D_IN:
                    self._request(n, lane, d, t, dim, methods[n], named, methods[n] == call_code)
                    if d == D_IN:
                        lanes[lane].ticks.add(t, n, SERVER_REQUEST + dim)
            elif kind == K_NOTIFICATION:
                lanes[lane].ticks.add(t, n, (NOTE_OUT if d == D_OUT else NOTE_IN) + dim)
                if methods[n] == cancel_code:
                    self._cancel(n, lane, d, t)
            else:
                lanes[lane].ticks.add(t, n, MALFORMED + dim)
        if hi > 0:
            self.end = max(self.end, mono[hi - 1] - t0)

    def _request(self, n: int, lane: int, d: int, t: float, dim: int, method: int, named: dict[int, str],
                 call: bool) -> None:
        i = len(self.span_row)
        name = 0
        key = named.get(method)
        if key is not None:
            c = self.store.columns
            found = _FIRST_PARAM.search(c.buf, c.off[n], c.off[n + 1])
            value = found[2].decode("utf-8", "replace") if found and found[1].decode() == key else self._param(n, key)
            name = self._name(value if isinstance(value, str) else None)
        self.span_row.append(n)
        self.span_start.append(t)
        self.span_end.append(math.nan)
        self.span_response.append(-1)
        self.span_outcome.append(UNANSWERED)
        self.span_flags.append((1 if dim else 0) | (2 if d == D_IN else 0))
        self.span_lane.append(lane)
        self.span_name.append(name)
        skey = (d, method, name if call else 0)
        s = self._stat_of.get(skey)
        if s is None:
            s = self._stat_of[skey] = len(self._stats)
            self._stats.append(_Stat(skey))
        self._stats[s].counts[UNANSWERED] += 1
        self.span_stat.append(s)
        track = self._track(lane, d)
        track.marks.add(t, i, UNANSWERED + dim)
        track.open.add(i)
        busy = track.busy
        level = 0 if busy and busy[0] <= t else next((k for k, free in enumerate(busy) if free <= t), len(busy))
        if level == len(busy):
            track.busy.append(0.0)
            track.holder.append(i)
        track.busy[level], track.holder[level] = t + HOLD, i
        self.span_level.append(min(level, 65535))
        rid = self.store.columns.ids.get(n)
        if rid is not None:
            self._waiting[(lane, d, rid)] = i

    def _track(self, lane: int, d: int) -> Track:
        entry = self.lanes[lane]
        return entry.out if d == D_OUT else entry.inward

    def _param(self, n: int, key: str) -> Any:
        """`params[key]` of frame n (a request or a notification); None if it has none (or is huge)."""
        c = self.store.columns
        try:
            params = json.loads(c.buf[c.off[n]:c.off[n + 1]]).get("params") if c.size[n] <= HEAD_MAX else None
        except (ValueError, AttributeError):
            return None
        return params.get(key) if isinstance(params, dict) else None

    def _name(self, name: str | None) -> int:
        if not name:
            return 0
        code = self._name_code.get(name)
        if code is None:
            code = self._name_code[name] = len(self.names)
            self.names.append(name)
        return code

    def _tool_error(self, n: int) -> bool:
        """A tools/call result with `isError: true` (only results that say so somewhere are parsed)."""
        c = self.store.columns
        if not _IS_ERROR.search(c.buf, c.off[n], c.off[n + 1]) and c.size[n] <= HEAD_MAX:
            return False
        raw = self.store.raw(n)
        if not _IS_ERROR.search(raw):
            return False
        try:
            result = json.loads(raw).get("result")
        except (ValueError, AttributeError):
            return False
        return isinstance(result, dict) and result.get("isError") is True

    def _answer(self, p: int, n: int, error: bool, call: bool) -> None:
        i = self.span_of_request(p)
        if i is None or self.span_response[i] >= 0:
            return
        c = self.store.columns
        self.span_response[i] = n
        d = D_IN if self.span_flags[i] & 2 else D_OUT
        rid = c.ids.get(p)
        lane = self.span_lane[i]
        if rid is not None and self._waiting.get((lane, d, rid)) == i:
            del self._waiting[(lane, d, rid)]
        end = max(self.span_start[i], c.mono[n] - self.t0)
        stat = self._stats[self.span_stat[i]]
        if self.span_outcome[i] == CANCELLED:
            self._set_end(i, end, CANCELLED)
            return
        outcome = ERROR if error else TOOL_ERROR if call and self._tool_error(n) else OK
        stat.counts[UNANSWERED] -= 1
        stat.counts[outcome] += 1
        latency = end - self.span_start[i]
        stat.latencies.append(latency)
        if latency > stat.worst:
            stat.worst, stat.slowest = latency, p
        self._set_end(i, end, outcome)

    def _cancel(self, n: int, lane: int, d: int, t: float) -> None:
        rid = self._param(n, "requestId")
        if isinstance(rid, bool) or not isinstance(rid, (int, str)):
            return
        i = self._waiting.pop((lane, d, rid), None)
        if i is None or self.span_outcome[i] != UNANSWERED:
            return
        self.cancels[i] = n
        stat = self._stats[self.span_stat[i]]
        stat.counts[UNANSWERED] -= 1
        stat.counts[CANCELLED] += 1
        self._set_end(i, max(self.span_start[i], t), CANCELLED)

    def _set_end(self, i: int, end: float, outcome: int) -> None:
        track = self._track(self.span_lane[i], D_IN if self.span_flags[i] & 2 else D_OUT)
        start = self.span_start[i]
        old = self.span_end[i]
        if old == old:  # it had an end (a cancelled request answered after all): leave its class
            track.classes[duration_class(old - start)].remove(start, i)
        else:
            track.open.discard(i)
        self.span_end[i] = end
        self.span_outcome[i] = outcome
        level = self.span_level[i]
        if level < len(track.busy):
            track.busy[level] = end if track.holder[level] == i else max(track.busy[level], end)
        dim = DIM if self.span_flags[i] & 1 else 0
        track.marks.set_code(start, i, outcome + dim)
        k = duration_class(end - start)
        marks = track.classes.get(k)
        if marks is None:
            marks = track.classes[k] = Marks()
        marks.add(start, i, outcome)

    # ------------------------------------------------------------------ reading
    def span_of_request(self, row: int) -> int | None:
        """The span of the request recorded at `row`."""
        rows = self.span_row
        i = bisect_left(rows, row)
        return i if i < len(rows) and rows[i] == row else None

    def span_of(self, row: int) -> int | None:
        """The span a record belongs to: a request, its response, or the notifications/cancelled sent for it."""
        if not 0 <= row < self.scanned:
            return None
        c = self.store.columns
        kind = c.kind[row]
        if kind == K_REQUEST:
            return self.span_of_request(row)
        if kind == K_RESPONSE or kind == K_ERROR:
            p = c.pair[row]
            return self.span_of_request(p) if 0 <= p < row else None
        return next((i for i, n in self.cancels.items() if n == row), None) if kind == K_NOTIFICATION else None

    def tick_at(self, row: int) -> tuple[int, int] | None:
        """(lane, position in its ticks) of a record drawn as a tick."""
        if not 0 <= row < self.scanned:
            return None
        c = self.store.columns
        lane = c.server_of(row)
        if lane >= len(self.lanes):
            return None
        ticks = self.lanes[lane].ticks
        t = c.mono[row] - self.t0
        a, z = ticks.range(t, t)
        return next(((lane, i) for i in range(a, z) if ticks.ids[i] == row), None)

    def track(self, lane: int, inward: bool = False) -> Track:
        entry = self.lanes[lane]
        return entry.inward if inward else entry.out

    def span_until(self, i: int) -> float:
        """Where span `i` ends on screen: its end, or the last frame's time while unanswered."""
        end = self.span_end[i]
        return end if end == end else max(self.end, self.span_start[i])

    def span(self, i: int) -> Span:
        c = self.store.columns
        row = self.span_row[i]
        end = self.span_end[i]
        response = self.span_response[i]
        flags = self.span_flags[i]
        return Span(i, row, response if response >= 0 else None, self.cancels.get(i),
                    self.lanes[self.span_lane[i]].server, "in" if flags & 2 else "out", c.methods[c.method[row]],
                    self.names[self.span_name[i]] or None, self.span_start[i], end if end == end else None,
                    OUTCOMES[self.span_outcome[i]], bool(flags & 1))

    def tick(self, lane: int, position: int) -> Tick:
        ticks = self.lanes[lane].ticks
        row = ticks.ids[position]
        code = ticks.codes[position]
        c = self.store.columns
        return Tick(row, self.lanes[lane].server, ticks.times[position], TICKS[code % DIM],
                    c.methods[c.method[row]] or None, code >= DIM)

    def describe_span(self, i: int) -> list[str]:
        """Lines for a tooltip: what, how it ended and how long it took, which records."""
        s = self.span(i)
        title = s.method + (f" · {s.name}" if s.name else "")
        lines = [f"← {title} (the server's request)" if s.direction == "in" else title,
                 s.outcome + (f" · {format_duration(s.latency)}" if s.latency is not None else ""),
                 f"#{s.row}" + (f" → #{s.response}" if s.response is not None else "")
                 + f" · sent at {format_duration(s.start)} · {s.server}"]
        if s.cancel is not None:
            lines.append(f"cancelled by #{s.cancel}")
        if s.background:
            lines.append("background traffic (the heartbeat)")
        return lines

    def describe_tick(self, row: int) -> list[str]:
        where = self.tick_at(row)
        if where is None:
            return []
        tick = self.tick(*where)
        lines = [tick.method or tick.kind, f"{tick.kind} · #{tick.row} at {format_duration(tick.time)}"]
        if tick.kind == "malformed":
            lines.append(self.store.malformed(row) or "")
        return lines

    def spans_in(self, track: Track, t0: float, t1: float, min_duration: float = 0.0,
                 cap: int | None = None) -> list[int]:
        """The spans of `track` that overlap [t0, t1] and last at least `min_duration` (the unanswered ones
        always), by start. `cap`: skip a duration class with more candidates than that (a zoomed-out view
        draws those as buckets)."""
        found: list[int] = []
        starts, ends = self.span_start, self.span_end
        for k, marks in track.classes.items():
            bound = class_bound(k)
            if bound <= min_duration:
                continue
            a, z = marks.range(t0 - bound, t1)
            if cap is not None and z - a > cap:
                continue
            for i in marks.ids[a:z]:
                end = ends[i]
                if end >= t0 and end - starts[i] >= min_duration:
                    found.append(i)
        found.extend(i for i in track.open if starts[i] <= t1)
        found.sort(key=starts.__getitem__)
        return found

    def summary(self, marks: Marks, t0: float, t1: float, buckets: int, *, ticks: bool = False
                ) -> list[tuple[int, int, int]]:
        """Level of detail for a zoomed-out view: [t0, t1] cut into `buckets`; for each non-empty one
        (bucket, how many spans start or ticks fall in it, the worst outcome or most notable tick kind,
        + DIM when all of them are background)."""
        if buckets <= 0 or t1 <= t0:
            return []
        return marks.buckets(t0, (t1 - t0) / buckets, buckets, TICK_ORDER if ticks else SPAN_ORDER)

    def method_stats(self) -> list[MethodStats]:
        """One entry per (direction, method, tool name), in the order they first appeared."""
        c = self.store.columns
        out = []
        for stat in self._stats:
            d, method, name = stat.key
            lat = stat.latencies
            ordered = stat.ordered
            if len(ordered) != len(lat):  # two sorted runs: Timsort merges them in linear time
                ordered.extend(sorted(lat[len(ordered):]))
                ordered.sort()
            counts = stat.counts
            p50, p95, top = ((nearest_rank(ordered, 0.5) * 1000, nearest_rank(ordered, 0.95) * 1000, ordered[-1] * 1000)
                             if ordered else (None, None, None))
            out.append(MethodStats("in" if d == D_IN else "out", c.methods[method], self.names[name] or None,
                                   sum(counts), counts[ERROR] + counts[TOOL_ERROR], counts[TOOL_ERROR],
                                   counts[CANCELLED], counts[UNANSWERED], p50, p95, top,
                                   stat.slowest if stat.slowest >= 0 else None))
        return out
