"""Benchmark: MCP Apps in the real window (Qt WebEngine, offscreen), on the npm example servers.

For each of N calls of `get-time` (server-basic-vanillajs) and `debug-tool` (server-debug), one app is opened
as a user would see it (the call shown, its app made): measured are the time from the call's start to its
result, from the call's start to the app's `ui/notifications/initialized`, and the figure asked for, from the
call's result to `initialized` (negative: the app was ready before the result came; the result is held for it).
Then `LIVE` apps are kept open at once and the memory they cost is measured: the proportional set size (PSS,
shared pages split between the processes that map them) of each app's renderer process, and the growth of the
window's own process (RSS) from before the first app to `LIVE` open.

    QT_QPA_PLATFORM=offscreen python bench/apps.py [N]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QTWEBENGINE_CHROMIUM_FLAGS", "--disable-gpu --no-sandbox")


def pss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def until(predicate, timeout: float = 60.0):
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise TimeoutError("timed out")
        await asyncio.sleep(0.005)


async def run(window, n: int) -> dict[str, list[float]]:
    from support import app_cmd

    from inspector.config import ServerSpec
    from inspector.session import Status

    figures: dict[str, list[float]] = {"result_ms": [], "initialized_ms": [], "result_to_init_ms": [],
                                       "renderer_pss_mb": [], "window_rss_mb": []}
    for name, tool, args in (("vanilla", "get-time", {}), ("debug", "debug-tool", {"contentType": "text"})):
        conn = window.add_server(ServerSpec(name=name, command=app_cmd("basic-vanillajs" if name == "vanilla"
                                                                       else "debug")))
        await until(lambda c=conn: c.session.status is Status.CONNECTED and c.session.tools.loaded)
        window.tool_panel.select(tool)
        await asyncio.sleep(0.2)
        for _ in range(n):
            rec = window.calls.call(conn, tool, args, window.tool_detail.tool)
            await until(lambda r=rec: window.apps.blocks.get((r.server_id, r.id)) is not None)
            block = window.apps.blocks[(rec.server_id, rec.id)]
            await until(lambda b=block, r=rec: not r.running and b.app is not None and b.app.initialized_at)
            init = block.app.initialized_at
            figures["result_ms"].append((rec.ended - rec.started) * 1000)
            figures["initialized_ms"].append((init - rec.started) * 1000)
            figures["result_to_init_ms"].append((init - rec.ended) * 1000)
            await asyncio.sleep(0.3)
    # memory: LIVE apps open at once (the newest ones; the older were closed to make room)
    from inspector.ui.apps.host import LIVE

    open_blocks = [b for b in window.apps.blocks.values() if b.page is not None][-LIVE:]
    figures["renderer_pss_mb"] = [pss_mb(b.page.renderProcessPid()) for b in open_blocks]
    figures["window_rss_mb"] = [rss_mb(os.getpid())]
    return figures


def main() -> int:
    import qasync
    from PySide6.QtCore import QSettings

    from inspector.ui.apps.engine import prepare

    prepare()
    from PySide6.QtWidgets import QApplication

    from inspector.app import ErrorReporter
    from inspector.ui.window.main_window import MainWindow

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)
    tmp = tempfile.TemporaryDirectory(prefix="spyglass-apps-")
    window = MainWindow(settings=QSettings(str(Path(tmp.name) / "s.ini"), QSettings.IniFormat),
                        store_path=str(Path(tmp.name) / "traffic.sqlite"))
    window.persist = False
    window.resize(1400, 1000)
    window.show()
    reporter = ErrorReporter()
    reporter.window = window
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    reporter.install(loop)
    before = rss_mb(os.getpid())
    with loop:
        figures = loop.run_until_complete(run(window, n))
        loop.run_until_complete(window.shutdown())
    reporter.uninstall()
    tmp.cleanup()

    def line(label: str, values: list[float], unit: str) -> str:
        return (f"{label:<44} median {statistics.median(values):8.1f} {unit}  min {min(values):8.1f}  "
                f"max {max(values):8.1f}  (n={len(values)})")

    print(line("call start -> result", figures["result_ms"], "ms"))
    print(line("call start -> app initialized", figures["initialized_ms"], "ms"))
    print(line("result -> app initialized (<0: app was first)", figures["result_to_init_ms"], "ms"))
    print(line("renderer PSS per open app", figures["renderer_pss_mb"], "MB"))
    grown = figures["window_rss_mb"][0] - before
    live = len(figures["renderer_pss_mb"])
    print(f"window process RSS: {before:.0f} MB before any app, {figures['window_rss_mb'][0]:.0f} MB with "
          f"{live} apps open ({grown / max(live, 1):.1f} MB per app, WebEngine's start included)")
    per_app = statistics.median(figures["renderer_pss_mb"]) + grown / max(live, 1)
    print(f"memory per open app (renderer PSS + the window's share): about {per_app:.0f} MB")
    print(f"internal errors reported: {reporter.count}")
    return 0 if reporter.count == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
