"""Benchmark: `spyglass` to a shown, connected window on its built-in demo server, split into imports, window
and connect, against the floor of any Qt program on this machine (a Python process that imports QtWidgets and
shows one window), alternated in one run.

The app writes its milestones to the file named by SPYGLASS_START_REPORT (inspector/app.py) and closes once
its first server is connected and listed; times are wall clock from just before the process was started.

Goal (issue "speed"): connected <= 1.0 s.

    QT_QPA_PLATFORM=offscreen python bench/start.py [ROUNDS]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 1.0
FLOOR = ("import time, sys\nfrom PySide6.QtWidgets import QApplication, QLabel\napp = QApplication([])\n"
         "w = QLabel('floor'); w.show(); w.repaint(); print(time.time())")


def spyglass_once(env: dict[str, str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="spyglass-bench-start-") as tmp:
        report = Path(tmp) / "start.txt"
        home = {**env, "SPYGLASS_START_REPORT": str(report), "HOME": tmp, "XDG_CONFIG_HOME": tmp,
                "XDG_DATA_HOME": tmp}
        start = time.time()
        proc = subprocess.run([sys.executable, "-m", "inspector"], env=home, cwd=str(ROOT), capture_output=True,
                              timeout=120)
        if proc.returncode != 0 or not report.exists():
            raise SystemExit(f"spyglass failed ({proc.returncode}): {proc.stderr.decode()[-800:]}")
        marks = dict(line.split() for line in report.read_text().splitlines())
        return {k: float(v) - start for k, v in marks.items()}


def floor_once(env: dict[str, str]) -> float:
    start = time.time()
    out = subprocess.run([sys.executable, "-c", FLOOR], env=env, capture_output=True, timeout=60, check=True)
    return float(out.stdout.split()[-1]) - start


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    # An installed package has its bytecode compiled at install time; a checkout run with
    # PYTHONDONTWRITEBYTECODE=1 would recompile every module on every start (0.38 s of it), as in cli_oneshot.py.
    import compileall

    compileall.compile_dir(str(ROOT / "inspector"), quiet=1)
    spyglass_once(env), floor_once(env)  # warm the OS caches
    runs, floors = [], []
    for _ in range(rounds):
        runs.append(spyglass_once(env))
        floors.append(floor_once(env))
    med = {k: statistics.median(r[k] for r in runs) for k in ("imports", "window", "connected")}
    floor = statistics.median(floors)
    print(f"spyglass on its demo server, {rounds} runs alternated with the floor (a Qt window, nothing else)")
    print(f"  imports done      {med['imports']:.3f} s")
    print(f"  window shown      {med['window']:.3f} s  (+{med['window'] - med['imports']:.3f} s)")
    print(f"  connected, listed {med['connected']:.3f} s  (+{med['connected'] - med['window']:.3f} s)  "
          f"goal <= {GOAL_S:.1f} s")
    print(f"  floor: a Qt window {floor:.3f} s; spyglass connected / floor {med['connected'] / floor:.2f}x")
    return 0 if med["connected"] <= GOAL_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
