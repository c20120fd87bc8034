"""Locust's CSV statistics (`locust --csv PREFIX`) read back: the figures of a local `--load` run's summary, the
Load tab's plots, and a comparison of the two.

Locust writes `PREFIX_stats.csv` (one row per request name, then `Aggregated`: counts, response times, the
percentiles 50 % … 100 %), `PREFIX_failures.csv` (method, name, error, occurrences) and
`PREFIX_stats_history.csv` (a row a second: users, requests and failures a second, the percentiles of the last
seconds, running totals). The MCP user puts a failure's kind first in its error (`tool_error: …`,
`rpc_error -32602: …`), which is how the failures are counted by kind here.

Locust rounds response times (to the millisecond under 100 ms, then to 10 ms, then to 100 ms) before it takes
percentiles; the latency histogram here is drawn from those percentiles, so it is as coarse as they are.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import errors as E
from ..session.load import TOOL_ERROR, Bucket, LoadStats, Snapshot

PERCENTILES = ("50%", "66%", "75%", "80%", "90%", "95%", "98%", "99%", "99.9%", "99.99%", "100%")
AGGREGATED = "Aggregated"
KIND = re.compile(r"^(?P<kind>[a-z_]+)(?: (?P<code>-?\d+))?: ")
WRAPPED = re.compile(r"^CatchResponseError\((?P<q>['\"])(?P<text>.*)(?P=q)\)$", re.S)
HISTORY_S = 1.0  # Locust writes a history row a second


@dataclass(frozen=True)
class Row:
    """One line of PREFIX_stats.csv."""

    type: str
    name: str
    requests: int
    failures: int
    median_ms: float | None
    mean_ms: float | None
    min_ms: float | None
    max_ms: float | None
    per_second: float
    percentiles: dict[str, float | None]


@dataclass(frozen=True)
class Failure:
    """One line of PREFIX_failures.csv, its kind and code read from the MCP user's error text."""

    method: str
    name: str
    error: str
    occurrences: int
    kind: str
    code: int | None


@dataclass
class LocustRun:
    """A Locust run as its CSV files give it."""

    prefix: str
    rows: list[Row]
    aggregated: Row
    failures: list[Failure]
    history: list[dict[str, str]] = field(default_factory=list)

    def row(self, name: str | None) -> Row:
        """The row of one request name (`tools/call echo`), or the aggregate of every request."""
        if name is None:
            return self.aggregated
        found = [r for r in self.rows if r.name == name]
        if not found:
            known = ", ".join(sorted({r.name for r in self.rows})) or "none"
            raise E.UsageError(f"{self.prefix}_stats.csv has no row for {name!r} (its requests: {known})")
        if len(found) == 1:
            return found[0]
        return _merge(name, found)

    def summary(self, name: str | None = None) -> dict[str, Any]:
        """The figures of a local run's summary (docs/load.md), for one request name or for all of them."""
        row = self.row(name)
        failures = [f for f in self.failures if name is None or f.name == name]
        kinds: dict[str, int] = {}
        for f in failures:
            kinds[f.kind] = kinds.get(f.kind, 0) + f.occurrences
        tool_errors = kinds.get(TOOL_ERROR, 0)
        errors = max(row.failures - tool_errors, 0)
        elapsed_ms = row.requests / row.per_second * 1000 if row.per_second > 0 else 0.0
        p = row.percentiles
        latency = None if not row.requests else {
            "min": _num(row.min_ms), "mean": _num(row.mean_ms), "p50": _num(p.get("50%")), "p90": _num(p.get("90%")),
            "p99": _num(p.get("99%")), "max": _num(row.max_ms)}
        messages: dict[str, int] = {}
        for f in failures:
            if f.kind != TOOL_ERROR:
                messages[f.error] = messages.get(f.error, 0) + f.occurrences
        return {"tool": name or AGGREGATED, "source": f"locust {self.prefix}", "users": self.users(),
                "requests": row.requests, "ok": row.requests - row.failures, "toolErrors": tool_errors,
                "errors": errors, "errorRate": _num(row.failures / row.requests, 4) if row.requests else 0,
                "elapsedMs": _num(elapsed_ms), "throughput": _num(row.per_second), "latencyMs": latency,
                "errorMessages": [{"message": m, "count": c} for m, c in
                                  sorted(messages.items(), key=lambda kv: -kv[1])],
                "errorsByKind": dict(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
                "histogram": [{"fromMs": a, "toMs": b, "count": n} for a, b, n in self.stats(name).histogram()]}

    def users(self) -> int | None:
        counts = [_int(h.get("User Count")) for h in self.history]
        return max(counts) if counts else None

    def stats(self, name: str | None = None) -> LoadStats:
        """The Load tab's figures: latency bins drawn from the percentiles, and a bucket per history row."""
        row = self.row(name)
        stats = LoadStats()
        done = 0
        for key in PERCENTILES:
            value = row.percentiles.get(key)
            upto = round(float(key.rstrip("%")) / 100 * row.requests)
            if value is None or upto <= done:
                continue
            stats.bins[_bin_of(value)] += upto - done  # calls of that latency, as Locust's percentiles see them
            done = upto
        stats.max_ms = row.max_ms
        tool_errors = sum(f.occurrences for f in self.failures if f.kind == TOOL_ERROR and f.name in (name, None)
                          ) if name is not None else sum(f.occurrences for f in self.failures if f.kind == TOOL_ERROR)
        stats.ok, stats.tool_errors = row.requests - row.failures, min(tool_errors, row.failures)
        stats.errors = row.failures - stats.tool_errors
        stats.buckets = self.buckets(name)
        return stats

    def timeline_of(self, name: str | None = None) -> str:
        """Whose requests the history (the timeline) holds: `name`'s when Locust wrote rows for it (it does only
        with --csv-full-history), else every request's (AGGREGATED)."""
        if name is not None and any((h.get("Name") or "") == name for h in self.history):
            return name
        return AGGREGATED

    def buckets(self, name: str | None = None) -> list[Bucket]:
        """A bucket a history row: the requests and failures of that second, the percentiles Locust gave, of
        `timeline_of(name)`."""
        whose = self.timeline_of(name)
        rows = [h for h in self.history if (h.get("Name") or "") == whose]
        out: list[Bucket] = []
        seen = failed = 0
        for i, h in enumerate(rows):
            total, total_failed = _int(h.get("Total Request Count")), _int(h.get("Total Failure Count"))
            calls, fails = max(total - seen, 0), max(total_failed - failed, 0)
            seen, failed = max(seen, total), max(failed, total_failed)
            out.append(Bucket(i * HISTORY_S, HISTORY_S, calls, calls - fails, 0, fails, _float(h.get("50%")),
                              _float(h.get("90%")), _float(h.get("100%"))))
        return out

    def snapshot(self, name: str | None = None) -> Snapshot:
        """What the Load tab's plots show, for a finished Locust run."""
        stats = self.stats(name)
        summary = self.summary(name)
        buckets = tuple(stats.buckets)
        elapsed = buckets[-1].start_s + buckets[-1].width_s if buckets else summary["elapsedMs"] / 1000
        lat = summary["latencyMs"] or {}
        return Snapshot(elapsed_s=elapsed, started=summary["requests"], in_flight=0, completed=summary["requests"],
                        ok=summary["ok"], tool_errors=summary["toolErrors"], errors=summary["errors"],
                        throughput=float(summary["throughput"]), p50_ms=lat.get("p50"), p90_ms=lat.get("p90"),
                        p99_ms=lat.get("p99"), max_ms=lat.get("max"), buckets=buckets,
                        histogram=tuple(stats.histogram()), errors_by_kind=dict(summary["errorsByKind"]),
                        running=False)


def read(prefix: str) -> LocustRun:
    """Read PREFIX_stats.csv, PREFIX_failures.csv and, when there, PREFIX_stats_history.csv; a file that is
    missing or not Locust's is a UsageError naming it."""
    stats_rows = _table(f"{prefix}_stats.csv", ("Type", "Name", "Request Count", "Failure Count"))
    rows = [_row(r, f"{prefix}_stats.csv", i + 2) for i, r in enumerate(stats_rows)]
    aggregated = [r for r in rows if r.name == AGGREGATED and not r.type]
    if not aggregated:
        raise E.UsageError(f"{prefix}_stats.csv has no Aggregated row: is it a whole Locust CSV file?")
    failures_path = f"{prefix}_failures.csv"
    failures = [_failure(r, failures_path, i + 2) for i, r in enumerate(
        _table(failures_path, ("Method", "Name", "Error", "Occurrences")))] if Path(failures_path).exists() else []
    history_path = f"{prefix}_stats_history.csv"
    history = _table(history_path, ("Timestamp", "User Count", "Name")) if Path(history_path).exists() else []
    return LocustRun(prefix, [r for r in rows if r is not aggregated[0]], aggregated[0], failures, history)


def error_kind(error: str) -> tuple[str, int | None, str]:
    """The kind, code and text of a failure as Locust wrote it (`CatchResponseError('rpc_error -32602: …')`);
    an error the MCP user did not write (a connection refused, a timeout) is of kind `locust`."""
    text = error.strip()
    wrapped = WRAPPED.match(text)
    if wrapped:
        text = wrapped.group("text").encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")
    match = KIND.match(text)
    if match is None:
        return "locust", None, text
    code = match.group("code")
    return match.group("kind"), int(code) if code else None, text


def _table(path: str, needed: tuple[str, ...]) -> list[dict[str, str]]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in needed if c not in (reader.fieldnames or [])]
            if missing:
                raise E.UsageError(f"{path} is not one of Locust's CSV files (no column {', '.join(missing)})")
            return list(reader)
    except FileNotFoundError:
        raise E.UsageError(f"{path} does not exist: give the prefix Locust was given with --csv") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise E.UsageError(f"cannot read {path}: {exc}") from None


def _row(r: dict[str, str], path: str, line: int) -> Row:
    try:
        return Row(r.get("Type") or "", r.get("Name") or "", int(r["Request Count"]), int(r["Failure Count"]),
                   _float(r.get("Median Response Time")), _float(r.get("Average Response Time")),
                   _float(r.get("Min Response Time")), _float(r.get("Max Response Time")),
                   _float(r.get("Requests/s")) or 0.0, {k: _float(r.get(k)) for k in PERCENTILES})
    except (TypeError, ValueError):
        raise E.UsageError(f"{path}, line {line}: a count that is not a whole number") from None


def _failure(r: dict[str, str], path: str, line: int) -> Failure:
    kind, code, text = error_kind(r.get("Error") or "")
    try:
        occurrences = int(r["Occurrences"])
    except (TypeError, ValueError):
        raise E.UsageError(f"{path}, line {line}: Occurrences is not a whole number") from None
    return Failure(r.get("Method") or "", r.get("Name") or "", text, occurrences, kind, code)


def _merge(name: str, rows: list[Row]) -> Row:
    """Rows of one name under several HTTP methods: counts added, times from the busiest row."""
    busiest = max(rows, key=lambda r: r.requests)
    total = sum(r.requests for r in rows)
    mins = [r.min_ms for r in rows if r.min_ms is not None]
    maxes = [r.max_ms for r in rows if r.max_ms is not None]
    return Row("", name, total, sum(r.failures for r in rows), busiest.median_ms, busiest.mean_ms,
               min(mins) if mins else None, max(maxes) if maxes else None, sum(r.per_second for r in rows),
               busiest.percentiles)


def _float(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "", "N/A") else None
    except ValueError:
        return None
    return value if value is None or math.isfinite(value) else None


def _int(text: str | None) -> int:
    value = _float(text)
    return int(value) if value is not None else 0


def _num(value: float | None, places: int = 2) -> float | int | None:
    if value is None:
        return None
    out = round(value, places) + 0.0
    return int(out) if out.is_integer() else out


def _bin_of(ms: float) -> int:
    stats = LoadStats()
    stats.add(0.0, ms, "ok")
    return next(iter(stats.bins))

# the figures a comparison shows: (label, key in a summary, lower is better: True, higher: False, neither: None)
FIGURES = [("calls", "requests", None), ("ok", "ok", None), ("tool errors", "toolErrors", True),
           ("errors", "errors", True), ("error rate", "errorRate", True), ("elapsed, ms", "elapsedMs", None),
           ("throughput, calls/s", "throughput", False),
           *[(f"latency {k}, ms", f"latencyMs.{k}", True) for k in ("min", "mean", "p50", "p90", "p99", "max")]]


def figure(summary: dict[str, Any], key: str) -> Any:
    head, _, rest = key.partition(".")
    value = summary.get(head)
    return (value or {}).get(rest) if rest else value


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """Two summaries figure by figure: each one's value, B's change against A in per cent, and whether that change
    is better, worse or neither."""
    out = []
    for label, key, lower in FIGURES:
        va, vb = figure(a, key), figure(b, key)
        change = None
        if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and va:
            change = _num((vb - va) / va * 100, 1)
        verdict = None
        if change and lower is not None:
            verdict = "better" if (change < 0) == lower else "worse"
        out.append({"figure": label, "a": va, "b": vb, "changePercent": change, "verdict": verdict})
    return out
