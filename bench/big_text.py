"""Benchmark: a very large text result (20 MB by default) in the result view.

Measured in a shown, offscreen window, with a 10 ms heartbeat QTimer:
- baseline: the whole text put into a QPlainTextEdit at once (what a naive viewer does): the stall;
- Spyglass's TextView: the stall while the preview appears, then while "Show all" appends the rest
  slice by slice, and how long the whole load takes.
Goals: preview and every "Show all" turn <= 100 ms of stall; the baseline is printed for the ratio.

    QT_QPA_PLATFORM=offscreen python bench/big_text.py [MEGABYTES]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

STALL_GOAL_MS = 100.0


def make_text(megabytes: int) -> str:
    line = "".join(chr(0x61 + i % 26) for i in range(79)) + "\n"
    return (line * (megabytes * 1024 * 1024 // len(line) + 1))[: megabytes * 1024 * 1024]


def main() -> int:
    from PySide6.QtWidgets import QApplication, QPlainTextEdit, QVBoxLayout, QWidget
    from traffic_flood import Heartbeat
    from traffic_flood import pump as run_until
    from traffic_flood import settle as run_for

    from inspector.ui.render.text import TextView

    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    app = QApplication.instance() or QApplication([])
    text = make_text(megabytes)
    page = QWidget()
    lay = QVBoxLayout(page)
    page.resize(1200, 800)
    page.show()
    beat = Heartbeat()

    def pump(until, limit_s: float = 120.0) -> float:
        return run_until(app, until, limit_s)

    def settle(seconds: float = 0.2) -> None:
        run_for(app, seconds)

    # baseline: everything at once
    naive = QPlainTextEdit(page)
    lay.addWidget(naive)
    settle()
    beat.start()
    started = time.perf_counter()
    naive.setPlainText(text)
    settle()
    beat.stop()
    baseline_ms, baseline_total = beat.max_stall_ms, time.perf_counter() - started - 0.2
    naive.hide()
    naive.deleteLater()
    settle()

    # Spyglass: preview, then "Show all"
    beat.start()
    view = TextView(text, page)
    lay.addWidget(view)
    settle()
    beat.stop()
    preview_ms = beat.max_stall_ms
    beat.start()
    view.show_all.click()
    took = pump(view.fully_shown)
    settle()
    beat.stop()
    show_all_ms = beat.max_stall_ms
    turns = len(beat.gaps)
    ok = view.edit.document().characterCount() >= len(text)

    print(f"text: {megabytes} MB, {text.count(chr(10)):,} lines")
    print(f"baseline, whole text at once: stall {baseline_ms:7.1f} ms (about {baseline_total:.2f} s in all)")
    print(f"Spyglass preview:             stall {preview_ms:7.1f} ms")
    print(f"Spyglass 'Show all':          worst stall {show_all_ms:7.1f} ms over {turns} heartbeats, "
          f"{took:.2f} s to load all")
    print(f"worst stall vs baseline: {max(preview_ms, show_all_ms) / max(baseline_ms, 0.1):.3f}x "
          f"(goal: each <= {STALL_GOAL_MS:.0f} ms); whole text shown: {ok}")
    return 0 if ok and max(preview_ms, show_all_ms) <= STALL_GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
