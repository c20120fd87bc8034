"""Benchmark: a notification flood through the traffic store, model and pane.

A flood server whose own cost is negligible (`bench/flood_server.py`: every line made before the call, written
in chunks of 2,000 lines) sends N `notifications/message` during one tools/call (`--server hostile`: the
hostile test server's `flood N` instead, which builds each line as it writes it and so hides part of the
reader's cost behind its own). Spyglass's `Client` feeds a `TrafficStore`
(a real SQLite session file, flushed by the pane's timer), shown by a
`TrafficPane` offscreen under a qasync loop. In the same run, each in a process of its own, a synchronous
reader and an asyncio one read and parse the same stream.

Measured: every frame reached the store, the model and the log; the longest event-loop
stall (a 10 ms heartbeat QTimer: the longest gap minus 10 ms); peak RSS; call-to-result time against the
issue's floor: a synchronous reader in its own process (readline and json.loads) run right before AND right
after each flood, the flood's ratio taken against the mean of the two (the machine's speed drifts by up to 2x
within a minute: a floor taken a few seconds away says little). A round whose two floors differ by more than
15% is marked noisy; the medians are given over every round and over the steady ones, and the verdict is
taken over every round (never easier for a noisy machine). An asyncio reader of the same flood, in a process
of its own, is run before each bracket, for reference. The first flood after the window starts (cold: code
paths run for the first time) and the later ones (warm) are reported apart: the first is one sample, so its
window-thread CPU is printed beside the warm ones' (a first flood slow in wall time but not in CPU was the
machine). Then
1,000,000 synthetic rows: time to add them, for the view to take them in, to filter them, and to scroll.

Goals: stall <= 50 ms, peak RSS <= 400 MB, ratio <= 2x on the first flood and on the warm ones (median;
1.5x the mark).

    QT_QPA_PLATFORM=offscreen python bench/traffic_flood.py [N] [--rows 1000000] [--rounds 7] [--server hostile]

By default the floods run in the real main window (`--pane` runs the bare
traffic pane instead): the flood server is added to the window as a server,
its notifications reach the traffic store, the traffic view AND the log pane,
and the call is made by clicking the window's Call button, timed until the result is shown.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

HOSTILE = ROOT / "tests" / "hostile" / "server.py"
FLOOD_SERVER = ROOT / "bench" / "flood_server.py"
GOALS = {"stall_ms": 50.0, "peak_mb": 400.0, "ratio": 2.0}
STABLE = 0.15  # a round is steady when its two floors differ by at most this much of their mean
SERVER = {"server": "prebuilt"}


def flood_cmd(n: int) -> list[str]:
    if SERVER["server"] == "hostile":
        return [sys.executable, str(HOSTILE), "flood", str(n)]
    return [sys.executable, str(FLOOD_SERVER), str(n)]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def sink_peak_mb(store: Any) -> float:
    """Peak RSS of the store's session-writer process (0 when it writes from a thread)."""
    proc = getattr(getattr(store, "_writer", None), "proc", None)
    try:
        for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (AttributeError, OSError, ValueError):
        pass
    return 0.0


def compile_package() -> None:
    """Write the package's bytecode first, as an installed copy has it: with PYTHONDONTWRITEBYTECODE=1 (some
    build machines) a module first imported during a measured step is compiled there, in its turn."""
    import compileall

    compileall.compile_dir(str(ROOT / "inspector"), quiet=1)


# ---------------------------------------------------------------------- heartbeat
def pump(app, until, limit_s: float = 120.0) -> float:
    """Runs the Qt event loop (no asyncio) until `until()` or `limit_s`; returns how long it ran."""
    from PySide6.QtCore import QEventLoop

    started = time.perf_counter()
    while not until() and time.perf_counter() - started < limit_s:
        app.processEvents(QEventLoop.AllEvents, 5)
    return time.perf_counter() - started


def settle(app, seconds: float) -> None:
    """Runs the Qt event loop for `seconds`."""
    end = time.perf_counter() + seconds
    pump(app, lambda: time.perf_counter() > end)


class Heartbeat:
    """A 10 ms QTimer; `max_stall` is the longest gap between ticks minus 10 ms."""

    def __init__(self, interval_ms: int = 10) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.interval = interval_ms / 1000
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.last = 0.0
        self.gaps: list[float] = []

    def start(self) -> None:
        self.gaps.clear()
        self.last = time.perf_counter()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()
        self._tick()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self.last)
        self.last = now

    @property
    def max_stall_ms(self) -> float:
        return max(0.0, (max(self.gaps, default=0.0) - self.interval) * 1000)

    def p99_stall_ms(self) -> float:
        if not self.gaps:
            return 0.0
        gaps = sorted(self.gaps)
        return max(0.0, (gaps[int(len(gaps) * 0.99) - 1 if len(gaps) > 1 else 0] - self.interval) * 1000)


# ---------------------------------------------------------------------- the floors
SYNC_FLOOR = r"""
import json, subprocess, sys, time
proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(obj):
    proc.stdin.write(json.dumps(obj).encode() + b"\n")
    proc.stdin.flush()
def until(rid):
    notes = 0
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("the flood server closed its stdout")
        msg = json.loads(line)
        if msg.get("id") == rid:
            return notes
        notes += 1
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
      "capabilities": {}, "clientInfo": {"name": "floor", "version": "0"}}})
until(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
start = time.perf_counter()
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "x"}}})
notes = until(2)
elapsed = time.perf_counter() - start
proc.stdin.close()
proc.wait()
print(elapsed, notes)
"""


async def sync_floor(n: int) -> tuple[float, int]:
    """The floor the issue measures against: a synchronous reader in its own process writes the call and reads
    each line with readline() and json.loads until the answer (its own clock, from the write to the answer)."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", SYNC_FLOOR, *flood_cmd(n),
                                                stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    elapsed, notes = out.split()
    return float(elapsed), int(notes)


ASYNC_FLOOR = r"""
import asyncio, json, sys, time
async def main(cmd):
    proc = await asyncio.create_subprocess_exec(*cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.DEVNULL)
    buffer, notes = b"", 0
    async def until(rid):
        nonlocal buffer, notes
        while True:
            lines = buffer.split(b"\n")
            buffer = lines.pop()
            for k, line in enumerate(lines):
                msg = json.loads(line)
                if msg.get("id") == rid:
                    buffer = b"\n".join(lines[k + 1:] + [buffer])
                    return msg
                notes += 1
            chunk = await proc.stdout.read(256 * 1024)
            if not chunk:
                raise SystemExit("the flood server closed its stdout")
            buffer += chunk
    def send(obj):
        proc.stdin.write(json.dumps(obj).encode() + b"\n")
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
          "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    await until(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    start = time.perf_counter()
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "x"}}})
    await proc.stdin.drain()
    await until(2)
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    await proc.wait()
    print(elapsed, notes)
asyncio.run(main(sys.argv[1:]))
"""


async def raw_flood(n: int) -> tuple[float, int]:
    """For reference: an asyncio reader (handshake, then one tools/call timed while every line is read and parsed),
    in its own process: run in the window's, its 100,000 parsed lines made the window's next flood slower (by
    about 100 ms of the window thread's CPU)."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", ASYNC_FLOOR, *flood_cmd(n),
                                                stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    elapsed, notes = out.split()
    return float(elapsed), int(notes)


# ---------------------------------------------------------------------- through Spyglass
@dataclass
class FloodResult:
    call_s: float
    settle_s: float  # until the model shows every frame
    frames: int
    notifications: int
    model_rows: int
    stall_ms: float
    p99_stall_ms: float
    inserts: int
    extra: dict[str, Any] = field(default_factory=dict)


async def flood_through(model: Any, store: Any, n: int, heartbeat: Heartbeat, server_id: str = "flood") -> FloodResult:
    """One flood of `n` notifications into `store`; `model` (a TrafficModel or None)
    must end up showing every frame."""
    from inspector.client import Client
    from inspector.transport.stdio import StdioTransport

    first = len(store)
    inserts = model.inserts if model is not None else 0
    client = Client(StdioTransport(flood_cmd(n)), mode="legacy", timeout=300, traffic=store.hook(server_id))
    await client.connect()
    heartbeat.start()
    start = time.perf_counter()
    result = await client.call_tool("echo", {"message": "x"})
    call_s = time.perf_counter() - start
    assert result["content"][0]["text"].endswith("x"), result
    while model is not None and not (model.complete and model.rowCount() == len(store)):
        await asyncio.sleep(0.01)
    settle_s = time.perf_counter() - start
    heartbeat.stop()
    await client.close()
    notes = sum(1 for k in range(first, len(store)) if store.method(k) == "notifications/message")
    return FloodResult(call_s, settle_s, len(store) - first, notes, model.rowCount() if model is not None else -1,
                       heartbeat.max_stall_ms, heartbeat.p99_stall_ms(),
                       (model.inserts - inserts) if model is not None else 0)


async def flood_in_window(window: Any, n: int, heartbeat: Heartbeat) -> FloodResult:
    """One flood through a server added to the real main window, driven as a person does: select the tool, fill
    its form, click Call (`callButton`); timed from the click until the result is shown (`result:text`). The
    heartbeat runs from the server's connection to the end (the tool's first selection included)."""
    from PySide6.QtWidgets import QListView, QPushButton, QWidget

    from inspector.config import ServerSpec

    store, model = window.store, window.traffic_pane.model
    first = len(store)
    inserts = model.inserts
    logged = {"before": 0}
    conn = window.add_server(ServerSpec(name="flood", command=flood_cmd(n)), mode="legacy", timeout=300)
    if not await conn.session.wait_settled(60) or conn.session.client is None:
        raise RuntimeError(f"the flood server did not connect: {conn.session.status_text()}")
    heartbeat.start()
    tools = window.findChild(QListView, "toolList")
    while not conn.session.tools.loaded:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    rows = tools.model()
    echo = next(rows.index(r, 0) for r in range(rows.rowCount()) if rows.index(r, 0).data(0x0100) == "echo")
    tools.setCurrentIndex(echo)
    await asyncio.sleep(0.05)
    window.tool_detail.form.set_value({"message": "x"})
    view = window.findChild(QWidget, "resultView")
    before = {id(w) for w in view.findChildren(QWidget, "result:text")}

    def shown() -> bool:
        return any(id(w) not in before and w.isVisibleTo(view) for w in view.findChildren(QWidget, "result:text"))

    logged["before"] = conn.session.log.total
    start, cpu = time.perf_counter(), time.thread_time()
    window.findChild(QPushButton, "callButton").click()
    while not shown():
        await asyncio.sleep(0.002)
    call_s = time.perf_counter() - start
    cpu = time.thread_time() - cpu  # the window thread's own work, which a loaded machine stretches less
    rec = window.calls.records(conn.server_id)[-1]
    assert rec.outcome == "ok" and rec.result["content"][0]["text"].endswith("x"), rec.result
    while not (model.complete and model.rowCount() == len(store)):
        await asyncio.sleep(0.01)
    settle_s = time.perf_counter() - start
    heartbeat.stop()
    log = conn.session.log
    flood_lines = sum(1 for e in log if e.logger == "flood")
    newest = f"flood {n}/{n}"
    waited = time.perf_counter()
    while newest not in window.log_pane.toPlainText()[-200:] and time.perf_counter() - waited < 10:
        await asyncio.sleep(0.01)  # the log pane shows the newest line on its own timer
    last_shown = window.log_pane.toPlainText().rsplit("\n", 1)[-1]
    await conn.session.disconnect()
    window.remove_connection(conn)
    notes = sum(1 for k in range(first, len(store)) if store.method(k) == "notifications/message")
    return FloodResult(call_s, settle_s, len(store) - first, notes, model.rowCount(), heartbeat.max_stall_ms,
                       heartbeat.p99_stall_ms(), model.inserts - inserts,
                       {"logged": log.total - logged["before"], "log_kept": flood_lines, "log_last": last_shown,
                        "cpu_s": cpu})


# ---------------------------------------------------------------------- a million rows
def synthetic_frames(count: int, start: float = 0.0) -> Callable[[], Any]:
    """Frames like a real session: mostly notifications, some calls and answers, a little junk."""
    from inspector.protocol import jsonrpc as rpc
    from inspector.traffic import Frame

    def gen():
        for i in range(count):
            mono = start + i * 1e-5
            r = i % 50
            if r == 0:
                data = ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":'
                        '{"message":"m%d"}}}' % (i, i)).encode()
                yield Frame("out", data, mono, 1.7e9 + mono)
            elif r == 1:
                data = ('{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"m%d"}]}}'
                        % (i - 1, i)).encode()
                yield Frame("in", data, mono, 1.7e9 + mono, None, rpc.Response(i - 1, None))
            elif r == 2:
                yield Frame("err", b"WARN something odd %d" % i, mono, 1.7e9 + mono)
            else:
                data = ('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info",'
                        '"logger":"synthetic","data":"row %d of the big session"}}' % i).encode()
                yield Frame("in", data, mono, 1.7e9 + mono, None,
                            rpc.Notification("notifications/message", None))
    return gen


def million_rows(app: Any, pane: Any, count: int) -> dict[str, float]:
    from PySide6.QtWidgets import QAbstractItemView

    from inspector.traffic import TrafficFilter

    store = pane.store
    model = pane.model
    frames = synthetic_frames(count, start=(store.mono(len(store) - 1) + 1) if len(store) else 0.0)()
    figures: dict[str, float] = {}
    before = len(store)
    add_s = 0.0
    while True:  # made 100,000 at a time so that the bench itself does not weigh on the RSS
        chunk = [f for _, f in zip(range(100_000), frames)]
        if not chunk:
            break
        t = time.perf_counter()
        for f in chunk:
            store.add("big", f)
        add_s += time.perf_counter() - t
    figures["add_s"] = add_s
    figures["add_us_per_row"] = add_s / count * 1e6
    del chunk
    t = time.perf_counter()
    while not (model.complete and model.rowCount() == len(store)):
        app.processEvents()
    figures["view_catch_up_s"] = time.perf_counter() - t
    assert model.rowCount() == len(store) == before + count
    t = time.perf_counter()
    store.flush(wait=True)
    figures["flush_wait_s"] = time.perf_counter() - t

    def timed_filter(flt: TrafficFilter) -> tuple[float, float, float, int]:
        """(first rows on screen, longest event-loop turn, complete, rows) in seconds,
        the filter spreading itself over event-loop turns as in the app."""
        t0 = time.perf_counter()
        model.set_filter(flt)
        view.viewport().repaint()
        first = time.perf_counter() - t0
        longest = first
        while not model.complete:
            t1 = time.perf_counter()
            app.processEvents()
            longest = max(longest, time.perf_counter() - t1)
        return first, longest, time.perf_counter() - t0, model.rowCount()

    view = pane.view

    for label, flt in [("text 'row 99999'", TrafficFilter.make(text="row 99999")),
                       ("text 'echo' (dense)", TrafficFilter.make(text="echo")),
                       ("kind=response", TrafficFilter.make(kinds={"response"})),
                       ("server+dir+text", TrafficFilter.make(servers={"big"}, directions={"in"}, text="synthetic")),
                       ("none", TrafficFilter())]:
        first, longest, total, rows = timed_filter(flt)
        figures[f"filter {label}: first tick ms"] = first * 1000
        figures[f"filter {label}: longest tick ms"] = longest * 1000
        figures[f"filter {label}: complete s"] = total
        figures[f"filter {label}: rows"] = rows
    rng = random.Random(1)
    times = []
    for _ in range(50):
        row = rng.randrange(model.rowCount())
        t = time.perf_counter()
        view.scrollTo(model.index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)
        view.viewport().repaint()
        times.append(time.perf_counter() - t)
    figures["scroll+repaint median ms"] = statistics.median(times) * 1000
    figures["scroll+repaint max ms"] = max(times) * 1000
    t = time.perf_counter()
    pane.select_record(len(store) - 1)
    figures["select last row ms"] = (time.perf_counter() - t) * 1000
    return figures


# ---------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=100_000, help="notifications in the flood")
    parser.add_argument("--rows", type=int, default=1_000_000, help="synthetic rows for the size test (0: skip)")
    parser.add_argument("--rounds", type=int, default=7,
                        help="flood rounds (each: the asyncio reader, then the floor, Spyglass, the floor again)")
    parser.add_argument("--pane", action="store_true", help="the bare traffic pane instead of the main window")
    parser.add_argument("--server", choices=("prebuilt", "hostile"), default="prebuilt",
                        help="the flood server: bench/flood_server.py (default) or tests/hostile/server.py")
    args = parser.parse_args(argv)
    SERVER["server"] = args.server
    compile_package()

    import qasync
    from PySide6.QtWidgets import QApplication

    from inspector.traffic import TrafficStore
    from inspector.ui.traffic.pane import TrafficPane

    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)
    tmp = tempfile.TemporaryDirectory(prefix="spyglass-bench-")
    window = None
    if args.pane:
        store = TrafficStore(Path(tmp.name) / "flood.sqlite")
        pane = TrafficPane(store)
        pane.resize(1400, 900)
        pane.show()
    else:
        from PySide6.QtCore import QSettings

        from inspector.ui.calls import confirm
        from inspector.ui.window.main_window import MainWindow

        settings = QSettings(str(Path(tmp.name) / "settings.ini"), QSettings.IniFormat)
        settings.setValue(confirm.SETTING, confirm.NEVER)  # the hostile server's echo is not marked read-only
        window = MainWindow(settings=settings, store_path=str(Path(tmp.name) / "flood.sqlite"))
        window.persist = False
        window.resize(1400, 900)
        window.show()
        store, pane = window.store, window.traffic_pane
    heartbeat = Heartbeat()
    brackets: list[tuple[float, float]] = []  # the synchronous floor right before and right after each flood
    async_times: list[float] = []
    runs: list[FloodResult] = []

    async def floor() -> float:
        elapsed, notes = await sync_floor(args.n)
        assert notes == args.n, notes
        return elapsed

    async def floods() -> None:
        for _ in range(args.rounds):
            elapsed, notes = await raw_flood(args.n)
            assert notes == args.n, notes
            async_times.append(elapsed)
            before = await floor()
            if window is not None:
                runs.append(await flood_in_window(window, args.n, heartbeat))
            else:
                runs.append(await flood_through(pane.model, store, args.n, heartbeat))
            brackets.append((before, await floor()))

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(floods())
    store.flush(wait=True)
    flood_peak = peak_rss_mb()

    server = "bench/flood_server.py (pre-built lines)" if args.server == "prebuilt" else "tests/hostile/server.py"
    print(f"flood of {args.n:,} notifications during one tools/call, {args.rounds} round(s), "
          f"{'bare traffic pane' if window is None else 'real main window'}, server {server}")
    floors = [(a + b) / 2 for a, b in brackets]
    steady = [abs(a - b) / ((a + b) / 2) <= STABLE for a, b in brackets]
    ratios = [run.call_s / f for f, run in zip(floors, runs)]
    for k, ((a, b), aio, run, ratio) in enumerate(zip(brackets, async_times, runs, ratios), 1):
        log = (f" | log: {run.extra['logged']:,} appended, {run.extra['log_kept']:,} kept, newest shown "
               f"{'yes' if f'flood {args.n}/{args.n}' in run.extra['log_last'] else 'NO'}") if run.extra else ""
        print(f"  round {k} ({'first flood after start' if k == 1 else 'warm'}): floor {a * 1000:.0f} ms before, "
              f"{b * 1000:.0f} ms after{'' if steady[k - 1] else ' (noisy)'} | spyglass "
              f"{'click to result' if window is not None else 'call'} {run.call_s * 1000:.0f} ms "
              + (f"({run.extra['cpu_s'] * 1000:.0f} ms of the window thread's CPU) " if run.extra else "") +
              f"= {ratio:.2f}x the floor ({run.call_s / aio:.2f}x the asyncio reader's {aio * 1000:.0f} ms), "
              f"model settled {run.settle_s * 1000:.0f} ms | "
              f"frames {run.frames:,} (notifications {run.notifications:,}) | "
              f"longest turn {run.stall_ms:.1f} ms, p99 {run.p99_stall_ms:.1f} ms | "
              f"{run.inserts} beginInsertRows{log}")
    # each round waited until the view showed every record of the store (model rows == store size)
    ok_frames = all(r.notifications == args.n and r.model_rows >= r.frames for r in runs)
    ok_log = all(not r.extra or (r.extra["logged"] >= args.n and f"flood {args.n}/{args.n}" in r.extra["log_last"])
                 for r in runs)
    cold = ratios[0]
    warm_ratios = ratios[1:]
    warm = statistics.median(warm_ratios) if warm_ratios else None
    steady_warm = [r for r, ok in zip(warm_ratios, steady[1:]) if ok]
    every = [t for pair in brackets for t in pair]
    print(f"  the floor: {min(every) * 1000:.0f}-{max(every) * 1000:.0f} ms, "
          f"median {statistics.median(every) * 1000:.0f}; "
          f"{sum(steady)} of {len(steady)} rounds steady (their two floors within {STABLE:.0%})")
    print(f"  every frame in the store and the model: {'yes' if ok_frames else 'NO'} "
          f"({len(store):,} records, {pane.model.rowCount():,} rows); in the log: "
          f"{'yes' if ok_log else 'NO'}" + (" (not measured: bare pane)" if window is None else ""))
    if window is not None:
        cpus = [run.extra["cpu_s"] * 1000 for run in runs]
        print(f"  the window thread's CPU from click to result: first flood {cpus[0]:.0f} ms; warm "
              + (f"median {statistics.median(cpus[1:]):.0f} ms ({min(cpus[1:]):.0f}-{max(cpus[1:]):.0f})"
                 if len(cpus) > 1 else "not measured"))
    print(f"  FIRST flood after start: {cold:.2f}x the floor, longest turn {runs[0].stall_ms:.1f} ms"
          + ("" if steady[0] else " (a noisy round)"))
    if warm is not None:
        print(f"  WARM floods: median {warm:.2f}x the floor ({min(warm_ratios):.2f}-{max(warm_ratios):.2f}, "
              f"{len(warm_ratios)} rounds); steady rounds only: "
              + (f"median {statistics.median(steady_warm):.2f}x ({len(steady_warm)})" if steady_warm else "none")
              + f"; longest turn {max(r.stall_ms for r in runs[1:]):.1f} ms")
    else:
        print("  WARM floods: not measured (one round)")
    aio_ratio = statistics.median([run.call_s / aio for aio, run in zip(async_times, runs)])
    worst_stall = max(r.stall_ms for r in runs)
    sink = sink_peak_mb(store)
    ratio = max(cold, warm if warm is not None else cold)
    print(f"  goal <= {GOALS['ratio']}x on the first flood and the warm ones' median: "
          f"{'met' if ratio <= GOALS['ratio'] else 'NOT met'}; the 1.5x mark: "
          f"{'reached' if ratio <= 1.5 else 'not reached'}; against the asyncio reader {aio_ratio:.2f}x (median)")
    print(f"  longest event-loop turn: {worst_stall:.1f} ms (goal <= {GOALS['stall_ms']:.0f} ms)")
    print(f"  peak RSS after the floods: app {flood_peak:.0f} MB + session writer {sink:.0f} MB "
          f"(goal <= {GOALS['peak_mb']:.0f} MB)")
    flood_peak += sink

    if args.rows:
        print(f"{args.rows:,} synthetic rows into the same store and pane")
        figures = million_rows(app, pane, args.rows)
        for key, value in figures.items():
            print(f"  {key}: {value:,.3f}" if isinstance(value, float) else f"  {key}: {value:,}")
        print(f"  peak RSS with {len(store):,} records: app {peak_rss_mb():.0f} MB, "
              f"session writer {sink_peak_mb(store):.0f} MB")
    (window or pane).hide()
    store.close()
    tmp.cleanup()
    failed = (worst_stall > GOALS["stall_ms"] or flood_peak > GOALS["peak_mb"] or ratio > GOALS["ratio"]
              or not ok_frames or not ok_log)
    print("goals:", "met" if not failed else "NOT met")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
