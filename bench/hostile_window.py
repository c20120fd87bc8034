"""Benchmark: every hostile case in the real main window (offscreen).

For each case of tests/hostile/expectations.py the server is added to a real
MainWindow; when the case is about a call, the call runs through the window's
connection. Measured per case: how it ended (the server's status line, or the
call's error), the longest event-loop stall (a 10 ms heartbeat QTimer), and
whether anything reached the excepthook or the loop's exception handler.
Goals: stall <= 100 ms in every case, no internal error, no process left.

    QT_QPA_PLATFORM=offscreen python bench/hostile_window.py [CASE ...]   (default: every case)
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "hostile"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from expectations import EXPECTATIONS  # noqa: E402

HOSTILE = ROOT / "tests" / "hostile" / "server.py"
STALL_GOAL_MS = 100.0


def call_of(args: tuple[str, ...]) -> tuple[str, dict] | None:
    """The tool call a case's CLI arguments describe, if any."""
    import json

    if "--tool-name" not in args:
        return None
    name = args[args.index("--tool-name") + 1]
    arguments: dict = {}
    if "--tool-args-json" in args:
        arguments = json.loads(args[args.index("--tool-args-json") + 1])
    for i, a in enumerate(args):
        if a == "--tool-arg":
            key, _, value = args[i + 1].partition("=")
            arguments[key] = value
    return name, arguments


async def run_case(window, name: str, expect, heartbeat) -> tuple[str, float]:
    from inspector import errors as E
    from inspector.config import ServerSpec

    heartbeat.start()
    conn = window.add_server(ServerSpec(name=name, command=[sys.executable, str(HOSTILE), *expect.cases]),
                             mode="auto", timeout=5)
    await conn.session.wait_settled(30)
    outcome = conn.session.status_text()
    call = call_of(expect.args)
    if call is not None and conn.session.client is not None:
        try:
            result = await conn.session.client.call_tool(*call, timeout=5 if "--timeout" not in expect.args else 1,
                                                 task=True if "--task" in expect.args else None)
            outcome += " | call: " + ("isError" if result.get("isError") else "ok")
        except E.SpyglassError as exc:
            outcome += f" | call: {exc.kind}: {exc.message[:90]}"
    await asyncio.sleep(0.3)  # let the views catch up
    heartbeat.stop()
    await conn.session.disconnect()
    window.remove_connection(conn)
    return outcome, heartbeat.max_stall_ms


def main() -> int:
    import psutil
    import qasync
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication
    from traffic_flood import Heartbeat, compile_package

    compile_package()
    from inspector.app import ErrorReporter
    from inspector.ui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)
    tmp = tempfile.TemporaryDirectory(prefix="spyglass-hostile-")
    window = MainWindow(settings=QSettings(str(Path(tmp.name) / "s.ini"), QSettings.IniFormat),
                        store_path=str(Path(tmp.name) / "traffic.sqlite"))
    window.persist = False
    window.resize(1400, 900)
    window.show()
    reporter = ErrorReporter()
    reporter.window = window
    heartbeat = Heartbeat()
    rows = []

    async def all_cases() -> None:
        chosen = set(sys.argv[1:])
        for name, expect in sorted(EXPECTATIONS.items()):
            if chosen and name not in chosen:
                continue
            started = time.monotonic()
            outcome, stall = await run_case(window, name, expect, heartbeat)
            rows.append((name, outcome, stall, time.monotonic() - started))

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    reporter.install(loop)
    with loop:
        loop.run_until_complete(all_cases())
        loop.run_until_complete(window.shutdown())
    reporter.uninstall()
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if str(HOSTILE) in " ".join(p.info["cmdline"] or [])]
    for name, outcome, stall, took in rows:
        mark = "ok " if stall <= STALL_GOAL_MS else "SLOW"
        print(f"{mark} {name:<20} stall {stall:6.1f} ms  {took:5.1f} s  {outcome[:110]}")
    worst = max(rows, key=lambda r: r[2])
    print(f"\ncases: {len(rows)}; worst stall: {worst[2]:.1f} ms ({worst[0]}) (goal <= {STALL_GOAL_MS:.0f} ms)")
    print(f"internal errors reported: {reporter.count}")
    print(f"processes left behind: {len(left)}")
    tmp.cleanup()
    return 0 if worst[2] <= STALL_GOAL_MS and reporter.count == 0 and not left else 1


if __name__ == "__main__":
    sys.exit(main())
