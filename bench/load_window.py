"""Benchmark: a load run in the real main window, at a fixed rate, while the Load tab plots it live.

server-everything's `echo` is load-tested from the window's Load tab (the same `LoadRun` as `spyglass --cli
--load`), every call going through the session into the traffic store and the traffic pane. Measured: the
calls a second the run kept against the rate asked, the longest event-loop turn meanwhile (the benches'
heartbeat: a 10 ms QTimer, its longest gap minus 10 ms; also in CPU time of the loop's thread, which leaves out
the time other processes of a busy machine took), the window's CPU share, and whether the traffic store saw every
call.

Goal: at 500 calls a second, the rate kept (>= 97 %) and no loop turn over 50 ms.

    QT_QPA_PLATFORM=offscreen python bench/load_window.py [--rate 500] [--seconds 4] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from traffic_flood import Heartbeat  # noqa: E402

EVERYTHING = ROOT / "tests" / "peers" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / \
    "index.js"
GOALS = {"turn_ms": 50.0, "rate_kept": 0.97}


async def run(window, rate: float, seconds: float, concurrency: int) -> dict[str, float]:
    import shutil

    from PySide6.QtWidgets import QDoubleSpinBox, QListView, QSpinBox

    from inspector.config import ServerSpec
    from inspector.session import Status

    conn = window.add_server(ServerSpec(name="everything", command=[shutil.which("node") or "node", str(EVERYTHING),
                                                                    "stdio"]), mode="legacy")
    while not (conn.session.status is Status.CONNECTED and conn.session.tools.loaded):
        await asyncio.sleep(0.05)
    view = window.findChild(QListView, "toolList")
    model = view.model()
    row = next(r for r in range(model.rowCount()) if model.index(r, 0).data(256) == "echo")
    view.setCurrentIndex(model.index(row, 0))
    window.tool_detail.form.set_value({"message": "x" * 64})
    load = window.tool_detail.load_view
    window.tool_detail.result_tabs.setCurrentWidget(load)
    window.findChild(QSpinBox, "loadConcurrency").setValue(concurrency)
    window.findChild(QDoubleSpinBox, "loadDuration").setValue(seconds)
    window.findChild(QDoubleSpinBox, "loadRate").setValue(rate)
    await asyncio.sleep(0.5)
    beat = Heartbeat()
    cpu_gaps: list[float] = []
    last_cpu = [time.thread_time()]

    def cpu_tick() -> None:  # the same beat in CPU time of this thread: our work, not the machine's other load
        now = time.thread_time()
        cpu_gaps.append(now - last_cpu[0])
        last_cpu[0] = now
    beat.timer.timeout.connect(cpu_tick)
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    beat.start()
    last_cpu[0] = time.thread_time()
    load.start()
    while load.running:
        await asyncio.sleep(0.05)
    beat.stop()
    cpu_share = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    summary = load.run.summary()
    window.traffic.flush()
    store = window.store
    sent = {n for n in range(len(store)) if store.direction(n) == "out" and store.method(n) == "tools/call"}
    answered = sum(1 for n in range(len(store)) if store.direction(n) == "in" and store.pair(n) in sent)
    await conn.session.disconnect()
    return {"calls": summary["requests"], "calls/s": summary["throughput"],
            "rate kept": summary["requests"] / (rate * seconds), "errors": summary["errors"],
            "p50 ms": summary["latencyMs"]["p50"], "p99 ms": summary["latencyMs"]["p99"],
            "longest turn ms": beat.max_stall_ms, "p99 turn ms": beat.p99_stall_ms(),
            "longest turn ms (CPU)": max(0.0, (max(cpu_gaps, default=0.0) - 0.010) * 1000),
            "CPU of the window, share of a core": cpu_share,
            "tools/call in the store": len(sent), "answers in the store": answered}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=500)
    parser.add_argument("--seconds", type=float, default=4)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--profile", action="store_true", help="print the 25 costliest functions (cProfile)")
    args = parser.parse_args()

    import qasync
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from inspector.ui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)
    tmp = tempfile.TemporaryDirectory(prefix="spyglass-bench-load-")
    window = MainWindow(settings=QSettings(str(Path(tmp.name) / "s.ini"), QSettings.IniFormat),
                        store_path=str(Path(tmp.name) / "s.sqlite"))
    window.persist = False
    window.resize(1400, 900)
    window.show()
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    with loop:
        figures = loop.run_until_complete(run(window, args.rate, args.seconds, args.concurrency))
    if profiler is not None:
        import pstats

        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
    print(f"load run of server-everything's echo in the main window: {args.rate:g} calls/s for {args.seconds:g} s, "
          f"{args.concurrency} at once")
    for key, value in figures.items():
        print(f"  {key:<26} {value:,.2f}" if isinstance(value, float) else f"  {key:<26} {value:,}")
    failed = figures["longest turn ms"] > GOALS["turn_ms"] or figures["rate kept"] < GOALS["rate_kept"] \
        or figures["tools/call in the store"] != figures["calls"]
    print("goals:", "met" if not failed else "NOT met", GOALS)
    window.store.close()
    window.hide()
    tmp.cleanup()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
