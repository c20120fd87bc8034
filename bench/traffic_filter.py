"""Benchmark: display-filter expressions over a million traffic rows.

A store of N synthetic rows (default 1,000,000: tools/call requests naming one of five tools and their
answers with latencies from 0.1 ms to 2 s, resources/read calls, error answers, stderr lines, a
notification flood) is filtered by each expression the way the traffic pane does it: a `FilteredView`
taking slices of at most `SCAN_BUDGET` records or `SCAN_SECONDS` per event-loop turn (the model's
figures). Measured per filter: the work in total (the sum of the slices), the longest slice, the rows
matched. The baseline, measured in the same run over the same rows, is the plain-text search (the
filter bar before expressions). `tool ==` is measured cold (the first tool filter parses the tools/call
requests, once per store) and warm.

Goals: every filter <= 300 ms of work in total and no slice over 50 ms. Ratios are against the
baseline of this run; nothing is asserted.

    python bench/traffic_filter.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOALS = {"total_ms": 300.0, "slice_ms": 50.0}
SCAN_BUDGET = 200_000  # as inspector.ui.traffic.model: records per event-loop turn at most...
SCAN_SECONDS = 0.02  # ...and no longer than this
TOOLS = ("echo", "weather", "divide", "search", "translate")


def fill(store, rows: int) -> None:
    from inspector.protocol import jsonrpc as rpc
    from inspector.traffic import Frame

    mono = 0.0
    for i in range(rows):
        mono += 1e-5
        r = i % 50
        if r == 0:
            tool = TOOLS[(i // 50) % len(TOOLS)]
            city = "Oslo" if i % 5000 == 0 else "Lyon"
            data = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": tool, "arguments": {"city": city, "n": i}}}).encode()
            store.add("demo", Frame("out", data, mono, 1.7e9 + mono))
        elif r == 1:
            latency = ((i * 7919) % 20000) / 10000  # 0 to 2 s
            data = ('{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"ok %d"}]}}'
                    % (i - 1, i)).encode()
            store.add("demo", Frame("in", data, mono + latency, 1.7e9 + mono, None, rpc.Response(i - 1, None)))
        elif r == 2:
            store.add("demo", Frame("err", b"WARN something odd %d" % i, mono, 1.7e9 + mono))
        elif r == 3:
            data = ('{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"file:///r/%d"}}'
                    % (i, i)).encode()
            store.add("files", Frame("out", data, mono, 1.7e9 + mono))
        elif r == 4:
            data = '{"jsonrpc":"2.0","id":%d,"error":{"code":-32002,"message":"not found"}}' % (i - 1)
            store.add("files", Frame("in", data.encode(), mono + 0.003, 1.7e9 + mono, None,
                                     rpc.parse(data.encode())))
        else:
            data = ('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info",'
                    '"logger":"synthetic","data":"row %d of the big session"}}' % i).encode()
            store.add("demo", Frame("in", data, mono, 1.7e9 + mono, None, rpc.Notification("notifications/message",
                                                                                           None)))


def timed(store, flt) -> tuple[float, float, int, int]:
    """(total work, longest slice) in seconds, slices, rows matched."""
    from inspector.traffic import FilteredView

    view = FilteredView(store, flt)
    total = longest = 0.0
    slices = 0
    while not view.complete:
        t = time.perf_counter()
        view.update(SCAN_BUDGET, SCAN_SECONDS)
        spent = time.perf_counter() - t
        total += spent
        longest = max(longest, spent)
        slices += 1
    return total, longest, slices, len(view)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args(argv)

    from inspector.traffic import TrafficFilter, TrafficStore

    store = TrafficStore(":memory:")
    t = time.perf_counter()
    fill(store, args.rows)
    print(f"{len(store):,} rows made in {time.perf_counter() - t:.1f} s; slices of <= {SCAN_BUDGET:,} records "
          f"or {SCAN_SECONDS * 1000:.0f} ms, as the traffic pane takes them")
    baselines = {"plain text 'Oslo'": TrafficFilter.make(text="Oslo"),
                 "plain text 'tools/call'": TrafficFilter.make(text="tools/call")}
    cases = [
        ("method == \"tools/call\"", "method == \"tools/call\""),
        ("tool == \"weather\" (cold: parses the requests)", "tool == \"weather\""),
        ("tool == \"weather\" (warm)", "tool == \"weather\""),
        ("latency > 500ms", "latency > 500ms"),
        ("text contains \"Oslo\"", "text contains \"Oslo\""),
        ("text contains \"oslo\" (ignores case)", "text contains \"oslo\""),
        ("compound", "(tool == \"weather\" || kind == error) && !(dir == err) && latency > 100ms"),
        ("or of three", "method ~ \"^resources/\" || size > 200B || !(server == \"demo\")"),
        ("id == 4200", "id == 4200"),
        ("text ~ \"row 9+ of\"", "text ~ \"row 9+ of\""),
        ("text ~ \"odd \\d+2$\" (anchored at the end)", "text ~ \"odd \\d+2$\""),
        ("text ~ \"^WARN.*9$\" (anchored at the start)", "text ~ \"^WARN.*9$\""),
    ]
    base: dict[str, float] = {}
    print("baseline")
    for label, flt in baselines.items():
        total, longest, slices, rows = timed(store, flt)
        base[label] = total
        print(f"  {label:<48} total {total * 1000:7.1f} ms  longest slice {longest * 1000:5.1f} ms  "
              f"{slices:3} slices  {rows:,} rows")
    reference = base["plain text 'Oslo'"]
    print("expressions (ratio: total work against the plain-text search for 'Oslo')")
    failed = False
    for label, text in cases:
        flt = TrafficFilter.make(expr=text)
        total, longest, slices, rows = timed(store, flt)
        ok = total * 1000 <= GOALS["total_ms"] and longest * 1000 <= GOALS["slice_ms"]
        failed |= not ok
        print(f"  {label:<48} total {total * 1000:7.1f} ms  longest slice {longest * 1000:5.1f} ms  "
              f"{slices:3} slices  {rows:,} rows  ratio {total / reference:5.2f}x{'' if ok else '  OVER GOAL'}")
    print(f"goals (<= {GOALS['total_ms']:.0f} ms in total, <= {GOALS['slice_ms']:.0f} ms a slice):",
          "met" if not failed else "NOT met")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
