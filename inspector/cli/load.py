"""`spyglass --cli --load`: call one tool again and again, several at once, and print a summary of latency and
errors instead of a result: the official inspector's flags and summary fields, plus percentiles, errors by kind
and a latency histogram in text. Never imports Qt, nor asyncio at import time (`--cli` starts a stdio server
before asyncio is imported).

The scheduler and the figures are the session layer's (`inspector.session.load`), which the window's Load tab
runs too; every call goes through the session, so `--trace` and `--session` keep each one.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, TextIO

from .. import errors as E
from . import official
from .common import visible
from .output import print_result

FLAGS = ("--load-concurrency", "--load-duration", "--load-requests", "--load-rate", "--locust")
BAR = 40  # characters of the histogram's longest bar
HISTOGRAM_ROWS = 16
PROGRESS_S = 0.5  # how often a terminal's progress line is rewritten


def _positive_int(flag: str) -> Any:
    def parse(text: str) -> int:
        if not text.strip().isdigit() or int(text) <= 0:
            raise argparse.ArgumentTypeError(f"{flag} must be a positive integer.")
        return int(text)
    return parse


def _positive_number(flag: str) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"{flag} must be a positive number.")
        return value
    return parse


def add_load_arguments(p: argparse.ArgumentParser) -> None:
    """The official CLI's load-testing flags, with its meanings and defaults."""
    g = p.add_argument_group("load testing (docs/load.md)")
    g.add_argument("--load", action="store_true",
                   help="load-test one tool: call it repeatedly and concurrently, then print a latency and "
                        "error-rate summary instead of a result (with --tool-name); bounded by --load-duration "
                        "(default 10 s) and/or --load-requests")
    g.add_argument("--load-concurrency", type=_positive_int("--load-concurrency"), metavar="N",
                   help="with --load: most calls in flight at once (default 10)")
    g.add_argument("--load-duration", type=_positive_number("--load-duration"), metavar="SECONDS",
                   help="with --load: stop starting calls after this many seconds; calls in flight still finish "
                        "(default 10 when --load-requests is not given)")
    g.add_argument("--load-requests", type=_positive_int("--load-requests"), metavar="N",
                   help="with --load: stop after starting this many calls")
    g.add_argument("--load-rate", type=_positive_number("--load-rate"), metavar="N",
                   help="with --load: start at most N calls per second, spread evenly (default: no limit)")
    g.add_argument("--locust", metavar="FILE",
                   help="with --load: write a locustfile with the same tool, arguments, rate and concurrency instead "
                        "of running the load here (an HTTP server; docs/load.md#locust)")
    g.add_argument("--load-compare", nargs=2, metavar=("LOCUST_PREFIX", "RUN_JSON"),
                   help="compare a Locust run (the prefix given to locust --csv) with a local --load run (the "
                        "summary it printed, --format json or text), figure by figure; no server is started")


def check_load_arguments(args: argparse.Namespace) -> None:
    """The combinations the official CLI refuses, refused the same way (exit 1)."""
    if not getattr(args, "load", False):
        for flag in FLAGS:
            if getattr(args, flag[2:].replace("-", "_"), None) is not None:
                raise E.UsageError(f"{flag} requires --load.")
        return
    if args.method != "tools/call":
        raise E.UsageError("--load requires --method tools/call.")
    if not args.tool_name:
        raise E.UsageError("--load requires --tool-name.")


def options_of(args: argparse.Namespace) -> Any:
    from ..session.load import LoadOptions

    return LoadOptions.resolve(args.load_concurrency, args.load_duration, args.load_requests, args.load_rate)


async def run_load(session: Any, args: argparse.Namespace, arguments: dict[str, Any], out: TextIO) -> int:
    """Load-test `args.tool_name` through `session` with `arguments`; print the summary; exit 0 when the run
    completed, whatever its calls answered (as the official CLI does)."""
    import asyncio

    from ..session.load import LoadRun, tool_call

    client = session.need_client()
    if args.tool_name not in client.tools:
        await client.list_tools()
    if args.tool_name not in client.tools:
        raise official.ToolNotFound(f"Tool '{args.tool_name}' not found on server.", tool=args.tool_name)
    if args.locust:
        return write_locustfile(session, args, arguments, out)
    run = LoadRun(tool_call(session, args.tool_name, arguments, task=args.task), options_of(args), tool=args.tool_name)
    ticker = asyncio.ensure_future(_progress(run)) if sys.stderr.isatty() else None
    try:
        summary = await run.run()
    finally:
        if ticker is not None:
            ticker.cancel()
            print(file=sys.stderr, flush=True)
    if args.format == "human":
        out.write(summary_text(summary))
    else:
        print_result(summary, args, out)
    return E.EXIT_OK


def write_locustfile(session: Any, args: argparse.Namespace, arguments: dict[str, Any], out: TextIO) -> int:
    """`--locust FILE`: the load run the flags describe, as a locustfile; says how to run it."""
    from ..loadtest import load_scenario, write

    if session.spec.url is None:
        raise E.UsageError("--locust needs a server reached over HTTP (its URL): Locust's users cannot start a "
                           "stdio server")
    options = options_of(args)
    version = session.need_client().protocol_version or "2025-11-25"
    scenario = load_scenario(session.spec.url, version, args.tool_name, arguments, concurrency=options.concurrency,
                             duration_s=options.duration_s, requests=options.requests, rate=options.rate,
                             headers=dict(session.spec.headers or {}),
                             source=f"spyglass --cli --load --tool-name {args.tool_name} … --locust {args.locust}")
    try:
        write(args.locust, scenario)
    except OSError as exc:
        raise E.UsageError(f"cannot write {args.locust}: {exc.strerror or exc}") from None
    print(f"spyglass: wrote {visible(args.locust)}: {scenario.users} users, {options.describe()}; "
          f"run it with: locust -f {visible(args.locust)} --headless -u {scenario.users} -r {scenario.users}"
          + (f" -t {options.duration_s:g}s" if options.duration_s else ""), file=out)
    return E.EXIT_OK


async def _progress(run: Any) -> None:
    import asyncio

    while True:
        await asyncio.sleep(PROGRESS_S)
        s = run.snapshot()
        print(f"\rspyglass: load {s.completed} calls, {s.in_flight} in flight, {s.tool_errors + s.errors} "
              f"errors, {s.throughput:.0f} calls/s, {s.elapsed_s:.1f} s", end="", file=sys.stderr, flush=True)


def _ms(value: Any) -> str:
    return f"{value:.2f} ms" if isinstance(value, (int, float)) else "-"


def summary_text(summary: dict[str, Any]) -> str:
    """`--format human`: the summary for a person, every field of the JSON, then the histogram."""
    bounds = [f"{summary['concurrency']} at once"]
    if "durationMs" in summary:
        bounds.append(f"for {summary['durationMs'] / 1000:g} s")
    if "requestLimit" in summary:
        bounds.append(f"at most {summary['requestLimit']} calls")
    if "rate" in summary:
        bounds.append(f"at most {summary['rate']:g} calls/s")
    lines = [f"Load test of {visible(summary['tool'])}: " + ", ".join(bounds)
             + (f" (stopped: {visible(summary['stoppedBecause'])})" if summary.get("stoppedBecause") else ""),
             f"  requests    {summary['requests']} in {summary['elapsedMs'] / 1000:.2f} s "
             f"({summary['throughput']:g} calls/s)",
             f"  ok          {summary['ok']}",
             f"  toolErrors  {summary['toolErrors']}",
             f"  errors      {summary['errors']}",
             f"  errorRate   {summary['errorRate'] * 100:.2f} %"]
    lat = summary.get("latencyMs")
    if lat:
        lines.append("  latency     " + "  ".join(f"{k} {_ms(lat[k])}" for k in ("min", "mean", "p50", "p90", "p99",
                                                                               "max")))
    if summary.get("errorsByKind"):
        lines.append("  by kind     " + ", ".join(f"{k} {n}" for k, n in summary["errorsByKind"].items()))
    for item in summary.get("errorMessages") or []:
        lines.append(f"  {item['count']:>9}× {visible(item['message'])[:200]}")
    rows = histogram_rows(summary.get("histogram") or [])
    if rows:
        lines.append("Latency histogram (ms):")
        lines.extend(rows)
    return "\n".join(lines) + "\n"


def histogram_rows(histogram: list[dict[str, Any]], max_rows: int = HISTOGRAM_ROWS) -> list[str]:
    """One line per bin: its range, a bar and the count (neighbouring bins merged to at most `max_rows`)."""
    bins = [(h["fromMs"], h["toMs"], h["count"]) for h in histogram]
    while len(bins) > max_rows:
        bins = [(bins[i][0], bins[min(i + 1, len(bins) - 1)][1],
                 bins[i][2] + (bins[i + 1][2] if i + 1 < len(bins) else 0)) for i in range(0, len(bins), 2)]
    top = max((n for _, _, n in bins), default=0)
    width = max((len(f"{a:g}") for a, _, _ in bins), default=1)
    width_to = max((len(f"{b:g}") for _, b, _ in bins), default=1)
    return [f"  {a:>{width}g} – {b:<{width_to}g} {'█' * (math.ceil(n * BAR / top) if n else 0):<{BAR}} {n}"
            for a, b, n in bins]
