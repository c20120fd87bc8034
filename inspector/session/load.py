"""Load testing one tool: the same call made again and again, several at once, paced and bounded, with its
latency and errors summed up while it runs. Shared by `spyglass --cli --load` and the window's Load tab.

The bounds are the official inspector's (`--load-concurrency`, `--load-duration`, `--load-requests`,
`--load-rate`), and so is the scheduler: `concurrency` workers take turns to claim the right to start a call;
a claim fails once `requests` calls have started or the duration is over, and with a rate the starts are
spread evenly, `1 / rate` seconds apart (a start made late by the loop's timers is caught up, within
`CATCH_UP_S`; a longer stall is not made up in a burst). Calls in flight
when a bound is reached still finish. The summary has the official fields (`requests`, `ok`,
`toolErrors`, `errors`, `errorRate`, `elapsedMs`, `throughput`, `latencyMs`, `errorMessages`) with the
official rounding and percentile rule, plus errors by kind and a latency histogram.

While a run goes on, `LoadRun.snapshot()` is cheap to ask at any moment (the window asks ten times a
second): what each call adds is counted as it ends, in half-second buckets (latency p50 / p90 / max, calls
and errors) and in fixed latency bins (ten per decade), never by sorting everything seen so far.
"""

from __future__ import annotations

import asyncio
import math
import time
from array import array
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import errors as E

if TYPE_CHECKING:
    from .server import ServerSession

DEFAULT_CONCURRENCY = 10
DEFAULT_DURATION_S = 10.0
MAX_ERROR_MESSAGES = 10  # distinct messages kept; the rest are counted as "(other)", as the official CLI does
OTHER_ERRORS = "(other)"
BUCKET_S = 0.5  # the live timeline's resolution
BINS_PER_DECADE = 10  # latency histogram: bin i holds latencies in [10^(i/10), 10^((i+1)/10)) ms
MIN_BIN = -30  # 1 µs: anything faster counts here
# A start this late (or one interval, if longer) still keeps to the rate's grid, so the next ones catch up: the
# event loop's timers are a millisecond late at best, which at 500 calls/s (2 ms apart) would otherwise lose a
# third of the starts, and on a busy machine the process itself waits its turn for tens of milliseconds. Later
# than that, the grid starts again from now (a long stall is not made up in a burst).
CATCH_UP_S = 0.1

OK, TOOL_ERROR = "ok", "tool_error"
# errors after which no call can succeed: the run stops starting calls (those in flight end as they do)
GONE = frozenset({"connect", "server_exited", "closed", "session_expired", "auth_required"})

Call = Callable[[], Awaitable[str]]  # one call: returns OK or TOOL_ERROR, raises for anything else


@dataclass(frozen=True)
class LoadOptions:
    """How many calls at once, and what ends the run (at least one of `duration_s`, `requests`)."""

    concurrency: int = DEFAULT_CONCURRENCY
    duration_s: float | None = DEFAULT_DURATION_S
    requests: int | None = None
    rate: float | None = None

    @classmethod
    def resolve(cls, concurrency: int | None = None, duration_s: float | None = None,
                requests: int | None = None, rate: float | None = None) -> LoadOptions:
        """The official defaults: 10 at once; 10 seconds unless a number of requests is given."""
        for name, value in (("concurrency", concurrency), ("duration", duration_s), ("requests", requests),
                            ("rate", rate)):
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise E.UsageError(f"the load {name} must be positive, got {value}")
        if duration_s is None and requests is None:
            duration_s = DEFAULT_DURATION_S
        return cls(concurrency or DEFAULT_CONCURRENCY, duration_s, requests, rate)

    def most_calls(self) -> int | None:
        """The most calls the run can make (None: as many as the tool answers in the time)."""
        bounds = []
        if self.requests is not None:
            bounds.append(self.requests)
        if self.rate is not None and self.duration_s is not None:
            bounds.append(math.ceil(self.rate * self.duration_s))
        return min(bounds) if bounds else None

    def describe(self) -> str:
        """In words: "200 calls, 10 at once", "for 10 s at 50 calls/s (at most 500 calls), 10 at once"."""
        most = self.most_calls()
        parts = []
        if self.requests is not None and most == self.requests:
            parts.append(f"{self.requests} call{'s' if self.requests != 1 else ''}")
        if self.duration_s is not None:
            parts.append(f"for {self.duration_s:g} s")
        if self.rate is not None:
            parts.append(f"at {self.rate:g} calls/s")
        if most is not None and (self.requests is None or most != self.requests):
            parts.append(f"(at most {most} calls)")
        if most is None:
            parts.append("(as many calls as the tool answers in that time)")
        return " ".join(parts) + f", {self.concurrency} at once"


@dataclass(frozen=True)
class Bucket:
    """What ended in half a second of the run: calls, their latencies, and the errors among them."""

    start_s: float
    width_s: float
    calls: int
    ok: int
    tool_errors: int
    errors: int
    p50_ms: float | None
    p90_ms: float | None
    max_ms: float | None

    @property
    def per_second(self) -> float:
        return self.calls / self.width_s if self.width_s > 0 else 0.0

    @property
    def failed_per_second(self) -> float:
        return (self.tool_errors + self.errors) / self.width_s if self.width_s > 0 else 0.0


@dataclass(frozen=True)
class Snapshot:
    """A run as it stands: counts, throughput so far, approximate percentiles (from the bins), the closed
    timeline buckets and the histogram."""

    elapsed_s: float
    started: int
    in_flight: int
    completed: int
    ok: int
    tool_errors: int
    errors: int
    throughput: float
    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    buckets: tuple[Bucket, ...]
    histogram: tuple[tuple[float, float, int], ...]
    errors_by_kind: dict[str, int]
    running: bool


def percentile(ordered: list[float], p: float) -> float:
    """The official rule: the value at rank ceil(p% of n), ranks counted from 1 and clamped to [1, n]."""
    rank = math.ceil(p / 100 * len(ordered))
    return ordered[min(max(rank, 1), len(ordered)) - 1]


def _round(value: float, places: int = 2) -> float:
    """Rounded as the official CLI rounds, and a whole number written as one (`10000`, not `10000.0`), as
    JavaScript writes it."""
    out = round(value, places) + 0.0  # no -0.0
    return int(out) if out.is_integer() else out


def _bin(ms: float) -> int:
    return max(MIN_BIN, math.floor(math.log10(ms) * BINS_PER_DECADE)) if ms > 0 else MIN_BIN


def _edge(i: int) -> float:
    return float(f"{10 ** (i / BINS_PER_DECADE):.3g}")


def error_kind(exc: BaseException) -> str:
    if isinstance(exc, E.SpyglassError):
        return exc.kind
    if isinstance(exc, TimeoutError):
        return "timeout"
    return "internal"


def error_message(exc: BaseException) -> str:
    if isinstance(exc, E.SpyglassError):
        return exc.message
    return str(exc) or type(exc).__name__


@dataclass
class LoadStats:
    """Every ended call, counted as it ends."""

    latencies: array[float] = field(default_factory=lambda: array("d"))  # ms, in the order the calls ended
    ok: int = 0
    tool_errors: int = 0
    errors: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    messages: dict[str, int] = field(default_factory=dict)
    other_messages: int = 0
    max_ms: float | None = None
    bins: Counter[int] = field(default_factory=Counter)
    buckets: list[Bucket] = field(default_factory=list)
    _open: list[tuple[float, str]] = field(default_factory=list)  # the current bucket's (latency, outcome)

    @property
    def completed(self) -> int:
        return self.ok + self.tool_errors + self.errors

    def add(self, at_s: float, latency_ms: float, outcome: str, exc: BaseException | None = None) -> None:
        self.roll(at_s)
        self.latencies.append(latency_ms)
        if self.max_ms is None or latency_ms > self.max_ms:
            self.max_ms = latency_ms
        self.bins[_bin(latency_ms)] += 1
        self._open.append((latency_ms, outcome))
        if outcome == OK:
            self.ok += 1
        elif outcome == TOOL_ERROR:
            self.tool_errors += 1
            self.kinds[TOOL_ERROR] += 1
        else:
            assert exc is not None
            self.errors += 1
            self.kinds[error_kind(exc)] += 1
            message = error_message(exc)
            if message in self.messages:
                self.messages[message] += 1
            elif len(self.messages) < MAX_ERROR_MESSAGES:
                self.messages[message] = 1
            else:
                self.other_messages += 1

    def roll(self, now_s: float) -> None:
        """Close every bucket that ended before `now_s` (empty ones too: nothing ended then)."""
        while (len(self.buckets) + 1) * BUCKET_S <= now_s:
            self._close(BUCKET_S)

    def close_last(self, now_s: float) -> None:
        """The run is over: the last, partial bucket is closed with its real width."""
        self.roll(now_s)
        if self._open:
            self._close(max(now_s - len(self.buckets) * BUCKET_S, 1e-3))

    def _close(self, width: float) -> None:
        lat = sorted(ms for ms, _ in self._open)
        outcomes = Counter(o for _, o in self._open)
        self.buckets.append(Bucket(
            len(self.buckets) * BUCKET_S, width, len(self._open), outcomes[OK], outcomes[TOOL_ERROR],
            len(self._open) - outcomes[OK] - outcomes[TOOL_ERROR],
            percentile(lat, 50) if lat else None, percentile(lat, 90) if lat else None, lat[-1] if lat else None))
        self._open = []

    def histogram(self, max_rows: int | None = None) -> list[tuple[float, float, int]]:
        """(from ms, to ms, count) from the fastest call's bin to the slowest's, empty bins included;
        with `max_rows`, neighbouring bins are merged until there are no more rows than that."""
        if not self.bins:
            return []
        lo, hi = min(self.bins), max(self.bins)
        step = 1
        if max_rows is not None:
            while (hi - lo) // step + 1 > max_rows:
                step *= 2
        lo -= (lo - MIN_BIN) % step  # bins of a merged histogram start at multiples of the step
        return [(_edge(i), _edge(i + step), sum(self.bins.get(j, 0) for j in range(i, i + step)))
                for i in range(lo, hi + 1, step)]

    def approx_percentile(self, p: float) -> float | None:
        """From the bins: the upper edge of the bin holding the rank (live figures; the summary is exact)."""
        n = self.completed
        if n == 0:
            return None
        rank, seen = min(max(math.ceil(p / 100 * n), 1), n), 0
        for i in sorted(self.bins):
            seen += self.bins[i]
            if seen >= rank:
                return _edge(i + 1)
        return None  # pragma: no cover - the bins hold every call

    def error_messages(self) -> list[dict[str, Any]]:
        out = [{"message": m, "count": c} for m, c in sorted(self.messages.items(), key=lambda kv: -kv[1])]
        if self.other_messages:
            out.append({"message": OTHER_ERRORS, "count": self.other_messages})
        return out


class LoadRun:
    """One load run: `await run()` returns the summary; `stop()` ends it early (the calls in flight finish),
    `cancel()` also cancels those (the server is told, as for any cancelled call)."""

    def __init__(self, call: Call, options: LoadOptions, *, tool: str = "",
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.call = call
        self.options = options
        self.tool = tool
        self.clock = clock
        self.stats = LoadStats()
        self.started = 0
        self.in_flight = 0
        self.began: float | None = None
        self.ended: float | None = None
        self.stopped = False  # by stop() or cancel(), before a bound ended the run
        self.gone: str | None = None  # why the run stopped by itself: the server went away
        self._stop = asyncio.Event()
        self._turn = asyncio.Lock()
        self._next = 0.0
        self._workers: list[asyncio.Future[None]] = []
        self._cancelling = False

    @property
    def running(self) -> bool:
        return self.began is not None and self.ended is None

    def stop(self) -> None:
        if self.running and not self._stop.is_set():
            self.stopped = True
            self._stop.set()

    def cancel(self) -> None:
        self.stop()
        self._cancelling = True
        for w in self._workers:
            w.cancel()

    async def run(self) -> dict[str, Any]:
        if self.began is not None:
            raise RuntimeError("a LoadRun runs once")
        self.began = self._next = self.clock()
        self._workers = [asyncio.ensure_future(self._worker()) for _ in range(self.options.concurrency)]
        try:
            await asyncio.gather(*self._workers, return_exceptions=True)
        finally:
            self.ended = self.clock()
            self.stats.close_last(self.ended - self.began)
        return self.summary()

    async def _claim(self) -> bool:
        """The right to start one more call, when the bounds allow it (waiting for the rate's next slot)."""
        o = self.options
        interval = 1.0 / o.rate if o.rate else 0.0
        assert self.began is not None
        deadline = self.began + o.duration_s if o.duration_s is not None else math.inf
        async with self._turn:
            while True:
                if self._stop.is_set() or (o.requests is not None and self.started >= o.requests):
                    return False
                now = self.clock()
                start = max(self._next, now)
                if now >= deadline or start >= deadline:
                    return False
                if start <= now:
                    self.started += 1
                    on_time = now - self._next < max(interval, CATCH_UP_S)
                    self._next = self._next + interval if on_time else now + interval
                    return True
                if start - now < 0.05:
                    await asyncio.sleep(start - now)
                    continue
                try:
                    await asyncio.wait_for(self._stop.wait(), start - now)  # a long wait ends early on stop()
                except TimeoutError:
                    pass

    async def _worker(self) -> None:
        assert self.began is not None
        while await self._claim():
            t0 = self.clock()
            self.in_flight += 1
            outcome: str = "error"
            exc: BaseException | None = None
            try:
                outcome = await self.call()
                if outcome not in (OK, TOOL_ERROR):
                    exc = E.InvalidResponse(f"the call ended as {outcome!r}")
            except asyncio.CancelledError:
                if not self._cancelling:
                    raise
                exc = E.Cancelled("cancelled with the load run")
            except Exception as error:
                exc = error
            finally:
                self.in_flight -= 1
            t1 = self.clock()
            self.stats.add(t1 - self.began, (t1 - t0) * 1000, outcome if exc is None else "error", exc)
            if self._cancelling:
                return
            if exc is not None and error_kind(exc) in GONE and not self._stop.is_set():
                self.gone = error_message(exc)
                self._stop.set()
            if exc is not None:
                await asyncio.sleep(0)  # a call that fails at once must not keep the loop from turning

    def snapshot(self) -> Snapshot:
        s = self.stats
        now = (self.ended if self.ended is not None else self.clock()) - (self.began or self.clock())
        if self.ended is None:
            s.roll(now)
        done = s.completed
        return Snapshot(
            elapsed_s=now, started=self.started, in_flight=self.in_flight, completed=done, ok=s.ok,
            tool_errors=s.tool_errors, errors=s.errors, throughput=done / now if now > 0 else 0.0,
            p50_ms=s.approx_percentile(50), p90_ms=s.approx_percentile(90), p99_ms=s.approx_percentile(99),
            max_ms=s.max_ms,
            buckets=tuple(s.buckets), histogram=tuple(s.histogram()), errors_by_kind=dict(s.kinds),
            running=self.running)

    def summary(self) -> dict[str, Any]:
        """The official summary's fields, in its order, then Spyglass's: `errorsByKind`, `histogram`."""
        o, s = self.options, self.stats
        elapsed_ms = ((self.ended or self.clock()) - (self.began or self.clock())) * 1000
        done = s.completed
        out: dict[str, Any] = {"tool": self.tool, "concurrency": o.concurrency}
        if o.duration_s is not None:
            out["durationMs"] = _round(o.duration_s * 1000)
        if o.requests is not None:
            out["requestLimit"] = o.requests
        if o.rate is not None:
            out["rate"] = _round(o.rate, 6)
        out.update(requests=done, ok=s.ok, toolErrors=s.tool_errors, errors=s.errors,
                   errorRate=_round((s.tool_errors + s.errors) / done, 4) if done else 0,
                   elapsedMs=_round(elapsed_ms),
                   throughput=_round(done * 1000 / elapsed_ms) if elapsed_ms > 0 else 0,
                   latencyMs=latency_summary(s.latencies), errorMessages=s.error_messages(),
                   errorsByKind=dict(sorted(s.kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
                   histogram=[{"fromMs": a, "toMs": b, "count": n} for a, b, n in s.histogram()])
        if self.stopped:
            out["stopped"] = True
        if self.gone is not None:
            out["stoppedBecause"] = self.gone
        return out


def aligned_histograms(a: LoadStats, b: LoadStats, max_rows: int) -> tuple[list[float], list[int], list[int]]:
    """Two runs' latency bins on the same edges (for comparing them): lower edges, counts of `a`, of `b`."""
    both = set(a.bins) | set(b.bins)
    if not both:
        return [], [], []
    lo, hi = min(both), max(both)
    step = 1
    while (hi - lo) // step + 1 > max_rows:
        step *= 2
    lo -= (lo - MIN_BIN) % step
    starts = range(lo, hi + 1, step)
    return ([_edge(i) for i in starts], [sum(a.bins.get(j, 0) for j in range(i, i + step)) for i in starts],
            [sum(b.bins.get(j, 0) for j in range(i, i + step)) for i in starts])


def latency_summary(latencies: Sequence[float]) -> dict[str, float] | None:
    if not latencies:
        return None
    ordered = sorted(latencies)
    return {"min": _round(ordered[0]), "mean": _round(sum(ordered) / len(ordered)),
            "p50": _round(percentile(ordered, 50)), "p90": _round(percentile(ordered, 90)),
            "p99": _round(percentile(ordered, 99)), "max": _round(ordered[-1])}


def tool_call(session: ServerSession, tool: str, arguments: dict[str, Any] | None, *,
              timeout: float | None = None, task: bool | None = None) -> Call:
    """One call of `tool` through `session`'s current connection (a reconnect mid-run is used as it comes;
    no connection is an error of kind `connect`). Its frames reach the session's traffic like any call's.
    `task`: run each call as a task (None: when the tool requires it, as a single call does)."""
    args = arguments if arguments is not None else {}
    options: dict[str, Any] = {"task": task}
    if timeout is not None:
        options["timeout"] = timeout

    async def call() -> str:
        result = await session.need_client().call_tool(tool, args, **options)
        return TOOL_ERROR if isinstance(result, dict) and result.get("isError") is True else OK
    return call
