"""Benchmark: `spyglass check` on a server with 5,000 tools, against `spyglass --cli` listing the same
tools (the baseline: the same process start, connection and tools/list, without any judging).

Both run as fresh processes, alternated, in one run; prints the medians, the ratio, and the check's
own wall time (goal: under 10 s). The server is the planted-defects server's clean twin with
5,000 extra well-made tools (tests/checks/planted_server.py --clean --tools 5000).

    python bench/check_many_tools.py [ROUNDS] [--tools N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "checks" / "planted_server.py"
GOAL_S = 10.0


def timed(cmd: list[str], ok: tuple[int, ...]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=str(ROOT))
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        raise SystemExit(f"run failed ({proc.returncode}): {' '.join(cmd[:5])}...\n{proc.stderr[-800:]}")
    return elapsed


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("rounds", nargs="?", type=int, default=5)
    p.add_argument("--tools", type=int, default=5000)
    a = p.parse_args()
    server = [sys.executable, str(SERVER), "--clean", "--tools", str(a.tools)]
    check = [sys.executable, "-m", "inspector", "check", "--format", "json", "--", *server]
    listing = [sys.executable, "-m", "inspector", "--cli", "--method", "tools/list", "--", *server]
    timed(check, (0, 9)), timed(listing, (0,))  # warm the OS caches
    checks, lists = [], []
    for _ in range(a.rounds):
        checks.append(timed(check, (0, 9)))
        lists.append(timed(listing, (0,)))
    m_check, m_list = statistics.median(checks), statistics.median(lists)
    print(f"rounds: {a.rounds}, tools: {a.tools + 14}")
    print(f"spyglass --cli tools/list  median {m_list:6.2f} s  (min {min(lists):.2f})")
    print(f"spyglass check             median {m_check:6.2f} s  (min {min(checks):.2f})  goal < {GOAL_S:.0f} s")
    print(f"ratio (check / list): {m_check / m_list:.2f}")
    return 0 if m_check < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
