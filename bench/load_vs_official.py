"""Benchmark: Spyglass's load generator against the official inspector's (`--cli --load`, 2.12.0), on the same tool.

Both command lines load-test server-everything's `echo` over stdio, one after the other, at 1, 10 and 50 calls
at once, each for the same duration; each prints its own summary, whose `throughput` (calls ended per second of
the run, the official definition) is compared. The runs alternate (Spyglass, official, Spyglass, ...) so that a
busy moment of the machine does not fall on one side only; the best round of each counts.

    python bench/load_vs_official.py [--seconds 3] [--rounds 2] [--official PATH/TO/cli/build/index.js]

The official CLI needs Node >= 22 (`node@22` in tests/peers) and the package `@modelcontextprotocol/inspector@2.12.0`
(by default looked for in tests/peers/node_modules; else `npm i @modelcontextprotocol/inspector@2.12.0` somewhere
and pass `--official`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "tests" / "peers" / "node_modules"
NODE22 = PEERS / ".bin" / "node"
EVERYTHING = PEERS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
OFFICIAL = PEERS / "@modelcontextprotocol" / "inspector" / "clients" / "cli" / "build" / "index.js"
CONCURRENCY = (1, 10, 50)


def server() -> list[str]:
    return [str(NODE22), str(EVERYTHING), "stdio"]


def spyglass(concurrency: int, seconds: float) -> dict:
    cmd = [sys.executable, "-m", "inspector", "--cli", "--protocol", "legacy", "--load", "--load-concurrency",
           str(concurrency), "--load-duration", str(seconds), "--tool-name", "echo", "--tool-arg", "message=hi",
           "--", *server()]
    return _summary(cmd, lambda out: json.loads(out))


def official(path: Path, concurrency: int, seconds: float) -> dict:
    cmd = [str(NODE22), str(path), "--load", "--load-concurrency", str(concurrency), "--load-duration", str(seconds),
           "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi", "--format", "json", "-q",
           "--", *server()]
    return _summary(cmd, lambda out: json.loads(out)["result"])


def _summary(cmd: list[str], read) -> dict:
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=str(ROOT), timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:3]} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return read(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--official", type=Path, default=OFFICIAL, help="the official CLI's build/index.js")
    args = parser.parse_args()
    for need, what in ((NODE22, "node@22 (make peers)"), (EVERYTHING, "server-everything (make peers)"),
                       (args.official, "@modelcontextprotocol/inspector@2.12.0 (see --official)")):
        if not need.exists():
            print(f"missing {what}: {need}", file=sys.stderr)
            return 2
    rows = []
    for c in CONCURRENCY:
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(spyglass(c, args.seconds))
            theirs.append(official(args.official, c, args.seconds))
        best_ours = max(ours, key=lambda s: s["throughput"])
        best_theirs = max(theirs, key=lambda s: s["throughput"])
        rows.append((c, best_ours, best_theirs))
    print(f"server-everything `echo` over stdio, {args.seconds:g} s per run, best of {args.rounds} "
          "(throughput = calls ended per second, from each tool's own summary)")
    print(f"{'at once':>8} {'Spyglass calls/s':>17} {'official calls/s':>17} {'ratio':>7}   "
          f"{'Spyglass p50/p99 ms':>20} {'official p50/p99 ms':>20}")
    for c, a, b in rows:
        ratio = a["throughput"] / b["throughput"] if b["throughput"] else float("inf")
        print(f"{c:>8} {a['throughput']:>17,.0f} {b['throughput']:>17,.0f} {ratio:>6.2f}x   "
              f"{a['latencyMs']['p50']:>9.2f} / {a['latencyMs']['p99']:<8.2f} "
              f"{b['latencyMs']['p50']:>9.2f} / {b['latencyMs']['p99']:<8.2f}")
        for name, s in (("Spyglass", a), ("official", b)):
            if s["errors"] or s["toolErrors"]:
                print(f"         {name}: {s['errors']} errors, {s['toolErrors']} tool errors", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
