"""Benchmark: a million-frame session opened in the window, as a capture is opened in Wireshark.

A session of N frames (default 1,000,000: mostly log notifications, a tools/call and its answer every 50
frames, some stderr) is generated once as each kind of session file: the session database the window writes
and the portable `.mcpsession` exported from it. Each is then opened in the real main window (offscreen), as
*File → Open session* opens it, and measured:

- first rows: from the open until the session window's traffic view shows its first rows;
- whole session: until every frame is in the traffic view, the servers rebuilt (calls, log) and the frames
  judged: everything the window offers on a session (scroll, filter, select, the timeline) is there;
- the longest event-loop turn meanwhile (a 10 ms heartbeat: its longest gap minus 10 ms), and the same in CPU
  time of the window's thread, as the whole session's time is too (what other processes of a busy machine
  take is left out of those);
- memory: the process's peak RSS growth while it opens, against the file's size (a .mcpsession: against the
  size it unpacks to, since gzip'd JSON of a flood is a hundredth of what it holds);
- then the session used as the live pane is measured (`bench/traffic_flood.py`'s million rows,
  `bench/timeline_zoom.py`): four filters (the first screen, the longest turn while the filter spreads itself
  over turns, the whole), 50 jumps of the scroll bar with their repaint, selecting the last row, and the
  timeline fitted and zoomed in and out around a point, each step repainted.

The floor, in the same run: the standard library reading the same file (`sqlite3`: every row of the frames
table; `gzip`: every line of the .mcpsession, and every line through `json.loads`).

Goals: first rows <= 1 s, whole session <= 10 s, no turn over 50 ms, RSS growth <= 2x the file's size; in use,
every filter's first screen and longest turn, a scroll, the selection and a timeline step <= 50 ms.

    QT_QPA_PLATFORM=offscreen python bench/open_session.py [--frames 1000000] [--kind sqlite|mcpsession|both]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gzip
import json
import os
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from traffic_flood import Heartbeat, compile_package  # noqa: E402

GOALS = {"first_s": 1.0, "whole_s": 10.0, "turn_ms": 50.0, "rss_x": 2.0}


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def hwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def reset_hwm() -> None:
    try:  # Linux: "5" to clear_refs resets the peak RSS (VmHWM) to the current RSS
        Path(f"/proc/{os.getpid()}/clear_refs").write_text("5")
    except OSError:
        pass


def generate(folder: Path, frames: int) -> tuple[Path, Path]:
    """The session database and its .mcpsession, `frames` frames each (made in a child process, so that the
    making does not weigh on the measured process's memory)."""
    database, portable = folder / "big.sqlite", folder / "big.mcpsession"
    code = f"""
import sys
sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / 'bench')!r}]
from traffic_flood import synthetic_frames
from inspector.recording.files import export_session
from inspector.traffic import TrafficStore
store = TrafficStore({str(database)!r}, meta={{"server:big": '{{"name": "big", "command": ["big-server"]}}'}})
for frame in synthetic_frames({frames})():
    store.add("big", frame)
store.flush(wait=True)
export_session(store, {str(portable)!r})
store.close()
"""
    import subprocess

    subprocess.run([sys.executable, "-c", code], check=True)
    return database, portable


def floors(database: Path, portable: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    t = time.perf_counter()
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    rows = sum(1 for _ in conn.execute("SELECT * FROM frames ORDER BY n"))
    conn.close()
    out["sqlite3 rows"] = time.perf_counter() - t
    t = time.perf_counter()
    unpacked = 0
    with gzip.open(portable, "rb") as fh:
        lines = 0
        for line in fh:
            lines += 1
            unpacked += len(line)
    out["gzip lines"] = time.perf_counter() - t
    out["unpacked MB"] = unpacked / 1e6
    t = time.perf_counter()
    with gzip.open(portable, "rb") as fh:
        for line in fh:
            json.loads(line)
    out["gzip lines + json.loads"] = time.perf_counter() - t
    out["rows"], out["lines"] = rows, lines
    return out


SETTLE_S = 1.0  # the loop is still watched this long after the whole session is there: its last turns count


def thread_usage() -> tuple[int, int, int, int]:
    """This thread's page faults (major, minor) and context switches (voluntary, involuntary) so far."""
    u = resource.getrusage(getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF))
    return u.ru_majflt, u.ru_minflt, u.ru_nvcsw, u.ru_nivcsw


class Watchdog(threading.Thread):
    """While the loop's heartbeat is late (over `late` s), samples the window thread's Python stack every 20 ms:
    where a long turn is spent, waiting included. A sample that comes late itself says the interpreter was held."""

    def __init__(self, beat: Any, late: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.beat, self.late, self.main = beat, late, threading.main_thread().ident
        self.stacks: collections.Counter[str] = collections.Counter()
        self.held = 0.0  # the longest this thread waited for the interpreter (a sample due in 20 ms)
        self.running = True

    def run(self) -> None:
        while self.running:
            t = time.perf_counter()
            time.sleep(0.02)
            self.held = max(self.held, time.perf_counter() - t - 0.02)
            if time.perf_counter() - self.beat.last > self.late:
                frame = sys._current_frames().get(self.main)
                where = []
                while frame is not None and len(where) < 6:
                    code = frame.f_code
                    where.append(f"{Path(code.co_filename).name}:{frame.f_lineno} {code.co_name}")
                    frame = frame.f_back
                self.stacks[" < ".join(where)] += 1


async def open_in_window(window: Any, path: Path, frames: int, watch: bool = False) -> dict[str, Any]:
    """Open `path` as File → Open session does; time its first rows and the whole session, and watch the loop
    SETTLE_S more."""
    from inspector.recording.files import SUFFIX  # noqa: F401  (the package is imported before timing)

    beat = Heartbeat()
    cpu_gaps: list[float] = []
    last_cpu = [time.thread_time()]
    last_use = [thread_usage()]
    # the long turns: (at s, wall ms, cpu ms, frames read, phase, (major faults, minor faults, waits, preempted))
    turns: list[tuple[float, float, float, int, str, tuple[int, ...]]] = []
    state: dict[str, Any] = {}

    def cpu_tick() -> None:  # the same beat in CPU time of this thread: the window's work, not the machine's load
        now = time.thread_time()
        cpu = now - last_cpu[0]
        cpu_gaps.append(cpu)
        last_cpu[0] = now
        use = thread_usage()
        used = tuple(x - y for x, y in zip(use, last_use[0], strict=True))
        last_use[0] = use
        wall = beat.gaps[-1] - beat.interval if beat.gaps else 0.0
        if wall * 1000 > GOALS["turn_ms"] or cpu * 1000 > GOALS["turn_ms"]:
            win = state.get("win")
            read = len(win.opened.store) if win is not None else 0
            phase = ("opening" if win is None else "reading" if getattr(win, "loading", False) else
                     "shown" if not state.get("whole") else "after")
            turns.append((time.perf_counter() - start, wall * 1000, cpu * 1000, read, phase, used))
    beat.timer.timeout.connect(cpu_tick)
    watchdog = Watchdog(beat) if watch else None
    before = rss_mb()
    reset_hwm()
    sessions = window.sessions
    had = len(sessions.windows)
    beat.start()
    if watchdog is not None:
        watchdog.start()
    last_cpu[0] = time.thread_time()
    last_use[0] = thread_usage()
    start = time.perf_counter()
    cpu0 = time.thread_time()
    process0 = time.process_time()
    use0 = thread_usage()
    sessions.open_file(path)
    first = whole = None
    whole_cpu = whole_process = float("nan")
    while time.perf_counter() - start < 600:
        win = sessions.windows[-1] if len(sessions.windows) > had else None
        state["win"] = win
        if win is not None:
            model = win.traffic.model
            if first is None and model.rowCount() > 0:
                first = time.perf_counter() - start
            if model.complete and model.rowCount() == frames and loaded(win):
                whole = time.perf_counter() - start
                whole_cpu = time.thread_time() - cpu0
                whole_process = time.process_time() - process0
                state["use"] = tuple(x - y for x, y in zip(thread_usage(), use0, strict=True))
                state["whole"] = True
                break
        await asyncio.sleep(0.005)
    await asyncio.sleep(SETTLE_S)
    beat.stop()
    cpu_tick()
    if watchdog is not None:
        watchdog.running = False
        watchdog.join()
    win = sessions.windows[-1]
    used = use_session(win)
    figures = {"first rows s": first if first is not None else float("nan"),
               "whole session s": whole if whole is not None else float("nan"), "whole session cpu s": whole_cpu,
               "whole session process cpu s": whole_process,
               "longest turn ms": beat.max_stall_ms, "longest turn cpu ms": max(cpu_gaps, default=0) * 1000,
               "rows": win.traffic.model.rowCount(),
               "rss growth MB": hwm_mb() - before, "file MB": path.stat().st_size / 1e6,
               "turns": turns, "ticks": len(beat.gaps), "use": state.get("use", (0, 0, 0, 0)),
               "stacks": watchdog.stacks if watchdog is not None else None,
               "held ms": watchdog.held * 1000 if watchdog is not None else 0.0, "used": used}
    win.close()
    await asyncio.sleep(0.2)
    return figures


def use_session(win: Any) -> dict[str, float]:
    """The opened session used as the live pane is (`bench/traffic_flood.py`'s million rows, and
    `bench/timeline_zoom.py`): filters applied (the first rows on screen, the longest turn while the filter
    spreads itself over turns, the whole), scrolling, selecting the last row, and the timeline fitted and zoomed
    in and out around a point (each step with its repaint). Milliseconds."""
    from PySide6.QtWidgets import QAbstractItemView, QApplication

    from inspector.traffic import TrafficFilter

    app = QApplication.instance()
    pane, model = win.traffic, win.traffic.model
    view = pane.view
    out: dict[str, float] = {}
    for label, flt in (("text 'row 99999'", TrafficFilter.make(text="row 99999")),
                       ("kind=response", TrafficFilter.make(kinds={"response"})),
                       ("dir=in + text", TrafficFilter.make(directions={"in"}, text="call")),
                       ("none", TrafficFilter())):
        t0 = time.perf_counter()
        model.set_filter(flt)
        view.viewport().repaint()
        first = longest = time.perf_counter() - t0
        while not model.complete:
            t1 = time.perf_counter()
            app.processEvents()
            longest = max(longest, time.perf_counter() - t1)
        out[f"filter {label}: first ms"] = first * 1000
        out[f"filter {label}: longest turn ms"] = longest * 1000
        out[f"filter {label}: whole ms"] = (time.perf_counter() - t0) * 1000
    rng = random.Random(1)
    times = []
    for _ in range(50):
        t = time.perf_counter()
        view.scrollTo(model.index(rng.randrange(model.rowCount()), 0), QAbstractItemView.ScrollHint.PositionAtCenter)
        view.viewport().repaint()
        times.append(time.perf_counter() - t)
    out["scroll + repaint median ms"] = statistics.median(times) * 1000
    out["scroll + repaint max ms"] = max(times) * 1000
    t = time.perf_counter()
    pane.select_record(len(win.opened.store) - 1)
    out["select the last row ms"] = (time.perf_counter() - t) * 1000
    canvas = win.timeline.canvas
    steps = []
    for step in [lambda: win.timeline.fit(), *[lambda: canvas.zoom(2.0, canvas.width() / 3)] * 8,
                 *[lambda: canvas.zoom(0.5, canvas.width() / 2)] * 8]:
        t = time.perf_counter()
        step()
        canvas.repaint()
        steps.append(time.perf_counter() - t)
    out["timeline fit and zoom: median step ms"] = statistics.median(steps) * 1000
    out["timeline fit and zoom: longest step ms"] = max(steps) * 1000
    return out


def loaded(win: Any) -> bool:
    """Everything of the session window is there: the frames, the servers, the findings."""
    return not getattr(win, "loading", False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--kind", choices=("sqlite", "mcpsession", "both"), default="both")
    parser.add_argument("--folder", help="keep the generated files here (made once, reused)")
    parser.add_argument("--stacks", action="store_true",
                        help="sample the window thread's stack while a turn is long (where it waits)")
    args = parser.parse_args(argv)
    compile_package()
    tmp = tempfile.TemporaryDirectory(prefix="spyglass-open-")
    folder = Path(args.folder or tmp.name)
    folder.mkdir(parents=True, exist_ok=True)
    database, portable = folder / "big.sqlite", folder / "big.mcpsession"
    stamp = folder / f"frames-{args.frames}"
    if not (stamp.exists() and database.exists() and portable.exists()):
        for p in (database, portable):
            p.unlink(missing_ok=True)
        t = time.perf_counter()
        generate(folder, args.frames)
        stamp.write_text("")
        print(f"generated {args.frames:,} frames in {time.perf_counter() - t:.1f} s: {database.name} "
              f"{database.stat().st_size / 1e6:.0f} MB, {portable.name} {portable.stat().st_size / 1e6:.0f} MB")

    import qasync
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from inspector.ui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)
    settings = QSettings(str(folder / "settings.ini"), QSettings.IniFormat)
    window = MainWindow(settings=settings, store_path=":memory:")
    window.persist = False
    window.resize(1400, 900)
    window.show()
    kinds = [("sqlite", database), ("mcpsession", portable)]
    if args.kind != "both":
        kinds = [k for k in kinds if k[0] == args.kind]
    failed = False
    results: list[tuple[str, dict[str, float], dict[str, Any]]] = []

    async def run() -> None:
        for kind, path in kinds:
            floor = floors(database, portable)
            got = await open_in_window(window, path, args.frames, args.stacks)
            results.append((kind, floor, got))

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(run())
    print(f"a session of {args.frames:,} frames opened in the main window (offscreen)")
    for kind, floor, got in results:
        base = floor["sqlite3 rows"] if kind == "sqlite" else floor["gzip lines"]
        name = "sqlite3 rows" if kind == "sqlite" else "gzip lines"
        size = (database if kind == "sqlite" else portable).stat().st_size / 1e6
        if kind == "mcpsession":
            got["file MB"] = floor["unpacked MB"]  # gzip'd JSON: its memory is held against what it unpacks to
        print(f"  {kind}: {size:.0f} MB file ({got['file MB']:.0f} MB for the memory goal); standard library: "
              f"{name} {base:.2f} s"
              + (f", gzip lines + json.loads {floor['gzip lines + json.loads']:.2f} s" if kind != "sqlite" else ""))
        print(f"    first rows {got['first rows s']:.2f} s (goal <= {GOALS['first_s']:.0f} s), whole session "
              f"{got['whole session s']:.2f} s ({got['whole session cpu s']:.2f} s of the window thread's CPU, "
              f"{got['whole session process cpu s']:.2f} s of the process's) = "
              f"{got['whole session s'] / base:.1f}x the standard library "
              f"(goal <= {GOALS['whole_s']:.0f} s), longest turn {got['longest turn ms']:.0f} ms "
              f"({got['longest turn cpu ms']:.0f} ms of CPU; goal <= {GOALS['turn_ms']:.0f} ms), {got['rows']:,} "
              f"rows, RSS growth {got['rss growth MB']:.0f} MB = {got['rss growth MB'] / got['file MB']:.1f}x "
              f"(goal <= {GOALS['rss_x']:.0f}x)")
        use = got["use"]
        print(f"    the window thread until the whole session: {use[2]:,} waits (it blocked), {use[3]:,} times "
              f"preempted (the machine's other work ran), page faults {use[0]} major, {use[1]:,} minor")
        print(f"    turns over {GOALS['turn_ms']:.0f} ms (wall or CPU) of {got['ticks']:,} heartbeats, until "
              f"{SETTLE_S:.0f} s after the whole session: {len(got['turns'])}"
              + "".join(f"\n      at {at:6.2f} s: {wall:6.0f} ms wall, {cpu:4.0f} ms CPU, {read:>9,} frames read, "
                        f"{phase}; page faults {use[0]} major, {use[1]:,} minor; {use[2]} waits, {use[3]} preempted"
                        for at, wall, cpu, read, phase, use in sorted(got["turns"], key=lambda t: -t[1])[:8]))
        if got["stacks"] is not None:
            print(f"    the window thread's stack while the heartbeat was over 100 ms late (20 ms samples; the "
                  f"sampler waited at most {got['held ms']:.0f} ms for the interpreter):")
            for where, count in got["stacks"].most_common(8):
                print(f"      {count:4d} x {where}")
        used = got["used"]
        print("    the session used as the live pane is (ms): " + "; ".join(
            f"{k} {v:.1f}" for k, v in used.items()))
        slow = [k for k, v in used.items() if ("longest" in k or "max" in k or "first" in k or "select" in k)
                and v > GOALS["turn_ms"]]
        print(f"    every filter's first screen and longest turn, scroll, select and timeline step <= "
              f"{GOALS['turn_ms']:.0f} ms: " + ("met" if not slow else "NOT met: " + ", ".join(slow)))
        missed = bool(slow) or (not got["first rows s"] <= GOALS["first_s"]
                                or not got["whole session s"] <= GOALS["whole_s"]
                                or got["longest turn ms"] > GOALS["turn_ms"] or got["rows"] != args.frames
                                or got["rss growth MB"] > GOALS["rss_x"] * got["file MB"])
        failed = failed or missed
    window.hide()
    tmp.cleanup()
    print("goals:", "met" if not failed else "NOT met")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
