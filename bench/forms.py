"""Benchmark: time to build the form of every tool schema in the corpus (tests/forms/corpus/).

Each schema is built ROUNDS times (after one warm-up build of the whole corpus); the figure per
schema is its median. Prints p50, p95 and max over the schemas (goal: p95 <= 30 ms), the slowest
schemas, and the same figures for build + first validation (what the user waits for before the
problem count appears) and for build + validation + show + first paint.
Usage: QT_QPA_PLATFORM=offscreen python bench/forms.py [ROUNDS]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
GOAL_P95_MS = 30.0


def corpus() -> list[tuple[str, dict]]:
    out = []
    for path in sorted((ROOT / "tests" / "forms" / "corpus").glob("*.json")):
        for tool in json.loads(path.read_text())["tools"]:
            out.append((f"{path.stem}:{tool['name']}", tool["inputSchema"]))
    return out


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def main(rounds: int) -> int:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from inspector.forms import SchemaForm

    tools = corpus()
    for _, schema in tools:  # warm-up: imports, fonts, style caches
        SchemaForm(schema).deleteLater()
    app.processEvents()
    build: dict[str, float] = {}
    ready: dict[str, float] = {}
    shown: dict[str, float] = {}
    for name, schema in tools:
        b, r, s = [], [], []
        for _ in range(rounds):
            start = time.perf_counter()
            form = SchemaForm(schema)
            b.append(time.perf_counter() - start)
            form.refresh()
            r.append(time.perf_counter() - start)
            form.resize(600, 700)
            form.show()
            app.processEvents()
            form.grab()  # layout and one full paint
            s.append(time.perf_counter() - start)
            form.hide()
            form.deleteLater()
        app.processEvents()
        build[name] = statistics.median(b) * 1000
        ready[name] = statistics.median(r) * 1000
        shown[name] = statistics.median(s) * 1000
    print(f"forms bench: {len(tools)} corpus schemas, median of {rounds} builds each")
    for label, data in (("build", build), ("build + first validation", ready), ("+ show and first paint", shown)):
        vals = list(data.values())
        print(
            f"  {label:25} p50 {percentile(vals, 0.5):6.2f} ms   p95 {percentile(vals, 0.95):6.2f} ms"
            f"   max {max(vals):6.2f} ms"
        )
    print(
        "  slowest builds:", ", ".join(f"{n} {v:.1f} ms" for n, v in sorted(build.items(), key=lambda kv: -kv[1])[:5])
    )
    p95 = percentile(list(build.values()), 0.95)
    print(f"  goal p95 <= {GOAL_P95_MS:.0f} ms: {'met' if p95 <= GOAL_P95_MS else 'NOT met'}")
    return 0 if p95 <= GOAL_P95_MS else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
