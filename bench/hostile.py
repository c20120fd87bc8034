"""Benchmark: every hostile case through `spyglass --cli --timeout 5`.

Prints how many behaved as documented (exit code and message, see
tests/hostile/expectations.py), the slowest case, and any process left behind
(goal: all, under 10 s each, none). Usage: python bench/hostile.py
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "hostile" / "server.py"
sys.path.insert(0, str(HOSTILE.parent))
from expectations import EXPECTATIONS  # noqa: E402


def leftovers() -> list[str]:
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = proc.info.get("cmdline") or []
        if any(str(HOSTILE) == part for part in cmd):
            found.append(f"{proc.info['pid']}: {' '.join(cmd)[:100]}")
    return found


def main() -> int:
    behaved, rows = 0, []
    for name, expect in sorted(EXPECTATIONS.items()):
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "inspector", "--cli", "--timeout", "5", *expect.args,
                               "--", sys.executable, str(HOSTILE), *expect.cases],
                              capture_output=True, text=True, cwd=str(ROOT), timeout=120)
        elapsed = time.monotonic() - started
        output = proc.stdout + proc.stderr
        ok = (proc.returncode == expect.exit_code and "Traceback" not in proc.stderr
              and all(words in output for words in expect.says))
        behaved += ok
        rows.append((elapsed, name, proc.returncode, ok))
        print(f"{'ok ' if ok else 'BAD'} {name:<20} exit {proc.returncode}  {elapsed:5.2f} s")
    slowest = max(rows)
    left = leftovers()
    print(f"\nbehaved as documented: {behaved}/{len(rows)}")
    print(f"slowest: {slowest[1]} ({slowest[0]:.2f} s)")
    print(f"processes left behind: {len(left)}" + "".join(f"\n  {line}" for line in left))
    return 0 if behaved == len(rows) and not left else 1


if __name__ == "__main__":
    sys.exit(main())
