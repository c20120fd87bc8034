"""Benchmark: the session timeline with 100,000 frames, zoomed and panned step by step, offscreen.

A synthetic session (three servers; tools/call and resources/read with lognormal latencies, a few slow ones,
errors, tool errors, unanswered requests, a heartbeat, notifications, in bursts) goes into a `TrafficStore`, a
`TimelineView` (1280x400) shows it. Measured:

- taking the session in: `Timeline.update()` at once, and the longest slice of the view's time-budgeted refresh;
- each step of zooming in (the wheel, around a point), panning (the arrow keys) and zooming out: the event,
  then one repaint of the canvas into a QImage (`render`), so the figure is a whole turn of the loop;
- live growth: 20,000 more frames appended in bursts of 500, one `refresh()` per burst.

Baselines, measured in the same run: painting one rectangle per span of the session, naively (what a paint
costs that walks every frame), and one repaint of the traffic pane's table on the same store. Goal: no step
over 50 ms. Timings are printed, never asserted.

    QT_QPA_PLATFORM=offscreen python bench/timeline_zoom.py [--frames 100000] [--steps 30]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

GOAL_MS = 50.0


def synthetic_frames(count: int, seed: int = 3, start: float = 50.0):
    """(server, Frame) of a busy session, in the order a client would report them."""
    from inspector.traffic import Frame

    rng = random.Random(seed)
    t, rid, waiting, out = start, 0, [], []
    servers = ("filesystem", "github", "a-server-with-a-rather-long-name")
    while len(out) < count:
        phase = (t % 40) / 40
        t += rng.expovariate(1 / (0.001 if phase < 0.15 else 0.02 if phase < 0.3 else 0.004))
        server = rng.choice(servers)
        if waiting and (rng.random() < 0.5 or len(waiting) > 20):
            due = min(waiting)
            if due[0] <= t or len(waiting) > 20:
                waiting.remove(due)
                when, s, i, outcome = due
                body = ({"id": i, "error": {"code": -32603, "message": "boom"}} if outcome == "error"
                        else {"id": i, "result": {"content": [], "isError": outcome == "tool error"}})
                out.append((s, Frame("in", json.dumps({"jsonrpc": "2.0", **body}).encode(), max(t, when), t)))
                continue
        roll = rng.random()
        if roll < 0.1:
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
            out.append((server, Frame("in", json.dumps(note).encode(), t, t)))
            continue
        rid += 1
        background = roll < 0.15
        method = "ping" if background else rng.choice(("tools/call", "tools/call", "resources/read"))
        params = {"name": rng.choice(("read_file", "search", "list_dir")), "arguments": {}} if method == "tools/call" \
            else {"uri": "file:///x"}
        msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        out.append((server, Frame("out", json.dumps(msg).encode(), t, t,
                                  meta={"background": "heartbeat"} if background else None)))
        if rng.random() < 0.0005:
            continue
        pick = rng.random()
        outcome = "error" if pick < 0.02 else "tool error" if pick < 0.05 and method == "tools/call" else "ok"
        latency = rng.lognormvariate(-5, 1) if rng.random() > 0.01 else rng.uniform(1, 8)
        waiting.append((t + latency, server, rid, outcome))
    return out


def figures(samples: list[float]) -> tuple[float, float, float]:
    ms = sorted(s * 1000 for s in samples)
    return ms[-1], ms[max(0, int(len(ms) * 0.95) - 1)], statistics.median(ms)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
    from PySide6.QtGui import QColor, QImage, QKeyEvent, QPainter, QWheelEvent
    from PySide6.QtWidgets import QApplication

    from inspector.traffic import TrafficStore
    from inspector.traffic.timeline import Timeline
    from inspector.ui.base import theme
    from inspector.ui.traffic.pane import TrafficPane
    from inspector.ui.traffic.timeline import TimelineView

    app = QApplication.instance() or QApplication([])
    theme.apply_theme(app, "light")
    frames = synthetic_frames(args.frames + 20_000)
    store = TrafficStore(":memory:")
    started = time.perf_counter()
    for server, frame in frames[:args.frames]:
        store.add(server, frame)
    add_s = time.perf_counter() - started

    started = time.perf_counter()
    whole = Timeline(store)
    whole.update()
    build_s = time.perf_counter() - started

    view = TimelineView(store)
    view.resize(1280, 400)
    view.show()
    slices = []
    while not view.timeline.complete:
        started = time.perf_counter()
        view.refresh()
        slices.append(time.perf_counter() - started)
    app.processEvents()
    canvas = view.canvas
    image = QImage(canvas.size(), QImage.Format.Format_ARGB32_Premultiplied)

    def repaint() -> None:
        image.fill(0)
        canvas.render(image)

    def wheel(delta: int, x: int) -> None:
        pos = QPoint(x, 80)
        QApplication.sendEvent(canvas, QWheelEvent(QPointF(pos), QPointF(canvas.mapToGlobal(pos)), QPoint(0, 0),
                                                   QPoint(0, delta), Qt.MouseButton.NoButton,
                                                   Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase,
                                                   False))

    def key(k: Qt.Key) -> None:
        QApplication.sendEvent(canvas, QKeyEvent(QEvent.Type.KeyPress, k, Qt.KeyboardModifier.NoModifier))

    def step(action) -> float:
        started = time.perf_counter()
        action()
        repaint()
        return time.perf_counter() - started

    repaint()  # warm
    rng = random.Random(5)
    phases: dict[str, list[float]] = {"fit": [step(canvas.fit) for _ in range(5)]}
    phases["zoom in"] = [step(lambda: wheel(120, rng.randint(200, 1200))) for _ in range(args.steps)]
    keys = [Qt.Key.Key_Right if i % 4 else Qt.Key.Key_Left for i in range(args.steps)]
    phases["pan"] = [step(lambda k=k: key(k)) for k in keys]
    phases["zoom out"] = [step(lambda: wheel(-120, rng.randint(200, 1200))) for _ in range(args.steps)]
    for level in (1.0, 4.0, 16.0, 64.0, 256.0, 1024.0):  # pan at several depths
        canvas.fit()
        canvas.zoom(level)
        phases.setdefault("pan at depths", []).extend(step(lambda: key(Qt.Key.Key_Right)) for _ in range(6))
    steps = [s for name, samples in phases.items() for s in samples]

    # baselines: every span painted, naively; the traffic table's repaint
    tl = view.timeline
    naive = QImage(canvas.size(), QImage.Format.Format_ARGB32_Premultiplied)
    width = canvas.width() - 140
    span = tl.end or 1.0
    baseline = []
    for _ in range(5):
        started = time.perf_counter()
        naive.fill(0)
        p = QPainter(naive)
        colour = QColor("#2f6fdd")
        for i in range(len(tl)):
            a = 132 + tl.span_start[i] / span * width
            p.fillRect(int(a), 60 + 48 * tl.span_lane[i], max(1, int((tl.span_until(i) - tl.span_start[i]) / span
                                                                   * width)), 16, colour)
        p.end()
        baseline.append(time.perf_counter() - started)
    pane = TrafficPane(store)
    pane.resize(1280, 400)
    pane.show()
    app.processEvents()
    table = pane.view.viewport()
    table_image = QImage(table.size(), QImage.Format.Format_ARGB32_Premultiplied)
    table_paints = []
    for row in range(0, 5000, 500):
        pane.view.scrollTo(pane.view.model().index(row, 0))
        started = time.perf_counter()
        table.render(table_image)
        table_paints.append(time.perf_counter() - started)

    # live: bursts appended while the view is shown
    live = []
    for b in range(args.frames, args.frames + 20_000, 500):
        for server, frame in frames[b:b + 500]:
            store.add(server, frame)
        started = time.perf_counter()
        view.refresh()
        repaint()
        live.append(time.perf_counter() - started)

    naive_worst, _naive_p95, naive_median = figures(baseline)
    table_worst, _t95, table_median = figures(table_paints)
    print(f"timeline of {args.frames:,} frames ({len(tl):,} requests, {len(tl.lanes)} servers), 1280x400 offscreen")
    print(f"  store.add: {add_s:.2f} s; Timeline.update at once: {build_s * 1000:.0f} ms "
          f"({build_s / args.frames * 1e6:.1f} µs a frame); the view's slices: {len(slices)}, "
          f"longest {max(slices) * 1000:.1f} ms")
    print(f"  baseline, every span painted naively: median {naive_median:.1f} ms, worst {naive_worst:.1f} ms")
    print(f"  baseline, the traffic table's repaint: median {table_median:.1f} ms, worst {table_worst:.1f} ms")
    print(f"  {'step':<15}{'n':>4}{'worst ms':>10}{'p95 ms':>9}{'median':>9}{'÷ naive':>10}{'÷ table':>9}")
    for name, samples in phases.items():
        worst, p95, median = figures(samples)
        print(f"  {name:<15}{len(samples):>4}{worst:>10.1f}{p95:>9.1f}{median:>9.1f}"
              f"{median / naive_median:>10.2f}{median / table_median:>9.2f}")
    worst, p95, median = figures(live)
    print(f"  {'live +500':<15}{len(live):>4}{worst:>10.1f}{p95:>9.1f}{median:>9.1f}"
          f"{median / naive_median:>10.2f}{median / table_median:>9.2f}")
    worst_all = max(max(steps), max(live), max(slices)) * 1000
    print(f"  worst of every step, slice and live turn: {worst_all:.1f} ms; goal <= {GOAL_MS:.0f} ms: "
          f"{'met' if worst_all <= GOAL_MS else 'NOT met'}")
    pane.close()
    view.close()
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
