"""The window's gallery → docs/images/gallery/: every state a user meets, at two screen sizes, in the light, dark
and high-contrast themes, at text sizes 100 %, 150 % and 200 %, as docs/window.md and docs/present.md show them.

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/gallery.py            # the variants the docs show
    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/gallery.py --all      # every size x theme x text size
    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/gallery.py --only tool-text,traffic

Runs Spyglass's own main window in this process on the built-in demo server (and, for the MCP App, the
`@modelcontextprotocol/server-basic-vanillajs` example the tests install in tests/peers), with private settings
and an unsaved catalog: nothing of the user's is read or changed. Each picture is saved with 256 colours where
ImageMagick is installed (docs stay small); a state that cannot be reached is said on stderr, and the others are
still taken.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "gallery"
SCREENS = {"1366x768": (1366, 768 - 48), "1920x1080": (1920, 1080 - 40)}  # the area under a desktop's panel
THEMES = ("light", "dark", "high-contrast")
TEXT = (100, 150, 200)
# what the docs show: both sizes in light at 100 %, the other themes and text sizes at the laptop size
SHOWN = [("1366x768", "light", 100), ("1920x1080", "light", 100), ("1366x768", "dark", 100),
         ("1366x768", "high-contrast", 100), ("1366x768", "light", 150), ("1366x768", "light", 200)]
APP_SERVER = ROOT / "tests" / "peers" / "node_modules" / "@modelcontextprotocol" / "server-basic-vanillajs"


async def settle(seconds: float = 0.4) -> None:
    await asyncio.sleep(seconds)  # never processEvents() from a coroutine: it would run other tasks inside it


async def until(predicate: Callable[[], Any], seconds: float, what: str) -> Any:
    for _ in range(int(seconds / 0.05)):
        got = predicate()
        if got:
            return got
        await asyncio.sleep(0.05)
    raise TimeoutError(f"waited {seconds:g} s for {what}")


def save(pixmap: Any, name: str) -> Path:
    path = OUT / f"{name}.png"
    if not pixmap.save(str(path), "PNG"):
        raise SystemExit(f"cannot write {path}")
    if shutil.which("convert"):  # 256 colours keep the docs small (ImageMagick, where it is installed)
        subprocess.run(["convert", str(path), "-colors", "256", "-strip", f"PNG8:{path}"], check=False)
    os.chmod(path, 0o644)  # a picture for the docs, meant to be shared
    print(path.relative_to(ROOT), flush=True)
    return path


def fit_to_screen(window: Any, dialog: Any) -> None:
    """`dialog` sized as on the screen pictured (the window fills its area under the panel, less a title bar), not
    as on the offscreen platform's 800x800 screen."""
    from PySide6.QtCore import QRect

    from inspector.ui.base import fit

    fit.fit_to_available(dialog, QRect(0, 0, window.width(), window.height() + fit.FRAME_ALLOWANCE))


def over(window: Any, widget: Any) -> Any:
    """The window, dimmed, with a dialog drawn centred on it (offscreen, a dialog is a window of its own)."""
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QColor, QPainter, QPen

    base = window.grab()
    top = widget.grab()
    p = QPainter(base)
    p.fillRect(base.rect(), QColor(0, 0, 0, 90))
    at = QPoint((base.width() - top.width()) // 2, max(0, (base.height() - top.height()) // 2))
    p.drawPixmap(at, top)
    p.setPen(QPen(QColor(0, 0, 0, 140), 1))
    p.drawRect(at.x() - 1, at.y() - 1, top.width() + 1, top.height() + 1)
    p.end()
    return base


async def call(window: Any, name: str, args: Any = None) -> Any:
    from PySide6.QtWidgets import QPushButton

    window.tool_panel.search.clear()
    window.tool_panel.select(name)
    await settle(0.2)
    if args is not None:
        window.tool_detail.form.set_value(args)
    sid = window.selected_connection().server_id
    before = len(window.calls.records(sid))
    window.findChild(QPushButton, "callButton").click()
    try:
        rec = await until(lambda: len(window.calls.records(sid)) > before and window.calls.records(sid)[-1], 10,
                          f"the call of {name}")
    except TimeoutError:
        from PySide6.QtWidgets import QLabel

        status = window.findChild(QLabel, "callStatus")
        raise TimeoutError(f"the call of {name} did not start: {status.text() if status else '?'}") from None
    await until(lambda: not rec.running, 60, f"{name} to answer")
    await settle(0.6)
    return rec


class Gallery:
    def __init__(self, only: set[str] | None) -> None:
        self.only = only
        self.failed: list[str] = []

    def wants(self, state: str) -> bool:
        return self.only is None or state in self.only

    async def shoot(self, state: str, variant: str, take: Callable[[], Awaitable[Any]]) -> None:
        if not self.wants(state):
            return
        try:
            pixmap = await take()
            save(pixmap, f"{state}-{variant}")
        except Exception as exc:  # a state that cannot be reached: said, and the others are still taken
            self.failed.append(f"{state}-{variant}: {type(exc).__name__}: {exc}")
            print(f"not taken: {state}-{variant}: {exc}", file=sys.stderr, flush=True)

    async def variant(self, screen: str, mode: str, text: int) -> None:
        from PySide6.QtCore import QSettings
        from PySide6.QtWidgets import QApplication

        from inspector.config import ServerSpec
        from inspector.session import Status
        from inspector.ui.base import theme
        from inspector.ui.window import layout
        from inspector.ui.window.main_window import MainWindow, demo_spec
        from inspector.ui.window.preferences import apply_font

        app = QApplication.instance()
        name = f"{screen}-{mode}-{text}"
        theme.apply_theme(app, mode)
        base = app.font().pointSizeF() if text == 100 else None
        apply_font(app, 0)
        if text != 100:
            apply_font(app, round(app.font().pointSizeF() * text / 100))
        tmp = Path(tempfile.mkdtemp(prefix="spyglass-gallery-"))
        settings = QSettings(str(tmp / "s.ini"), QSettings.IniFormat)
        settings.setValue("confirmPolicy", "never")  # the pictures show answers, not the question before them
        window = MainWindow(settings=settings, store_path=":memory:")
        window.persist = False
        size = layout.first_size_in(*SCREENS[screen])
        window.show()
        window.layout_state.arrange(*size)  # as a first start on that screen does, once the window is shown
        window.layout_state.shown()
        try:
            await settle()
            await self.shoot("first-start", name, lambda: asyncio.sleep(0, window.grab()))
            conn = window.add_server(demo_spec())
            await until(lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30,
                        "the demo server")
            await settle()
            window.tabs.setCurrentIndex(0)

            async def text_answer() -> Any:
                await call(window, "markdown_report", {"topic": "spyglass"})
                return window.grab()
            await self.shoot("tool-text", name, text_answer)

            async def structured() -> Any:
                await call(window, "weather", {"city": "Oslo"})
                return window.grab()
            await self.shoot("tool-structured", name, structured)

            async def image() -> Any:
                await call(window, "render_chart", {"values": [3, 1, 4, 1, 5, 9, 2, 6]})
                return window.grab()
            await self.shoot("tool-image", name, image)

            async def resources() -> Any:
                window.tabs.setCurrentWidget(window.resources_pane)
                await settle()
                pane = window.resources_pane
                first = pane.resource_view.model().index(0, 0)
                if first.isValid():
                    pane.resource_view.setCurrentIndex(first)
                    task = pane.read()
                    if task is not None:
                        await task
                await settle(0.6)
                return window.grab()
            await self.shoot("resources", name, resources)

            async def prompts() -> Any:
                window.tabs.setCurrentWidget(window.prompts_pane)
                await settle()
                pane = window.prompts_pane
                first = pane.model.index(0, 0)
                if first.isValid():
                    pane.view.setCurrentIndex(first)
                    await settle(0.2)
                    pane.form.set_values({"name": "Ada", "style": "pirate"})  # the demo's greeting, filled in
                    task = pane.get()
                    if task is not None:
                        await task
                await settle(0.6)
                return window.grab()
            await self.shoot("prompts", name, prompts)

            async def traffic() -> Any:
                window.tabs.setCurrentIndex(0)
                window.traffic_dock.show()
                window.traffic_dock.raise_()
                pane, store = window.traffic_pane, window.store
                rows = range(pane.model.rowCount())
                calls = [pane.model.record_at(r) for r in rows if store.method(pane.model.record_at(r)) ==
                         "tools/call" and store.kind(pane.model.record_at(r)) == "request"]
                if calls:
                    pane.select_record(calls[0])
                await settle(0.6)
                return window.grab()
            await self.shoot("traffic", name, traffic)

            async def check() -> Any:
                window.tabs.setCurrentWidget(window.checks.view)
                await settle(0.6)
                return window.grab()
            await self.shoot("check", name, check)

            async def add_dialog() -> Any:
                window.tabs.setCurrentIndex(0)
                dialog = window.edits.add_dialog()
                fit_to_screen(window, dialog)
                await settle(0.6)
                try:
                    return over(window, dialog)
                finally:
                    dialog.reject()
            await self.shoot("add-dialog", name, add_dialog)

            async def edit_dialog() -> Any:
                dialog = window.edits.edit(conn)
                if dialog is None:
                    raise RuntimeError("the demo server offers no Edit")
                fit_to_screen(window, dialog)
                await settle(0.6)
                try:
                    return over(window, dialog)
                finally:
                    dialog.reject()
            await self.shoot("edit-dialog", name, edit_dialog)

            if APP_SERVER.is_dir() and self.wants("tool-app"):
                async def app_answer() -> Any:
                    cmd = ["node", str(APP_SERVER / "dist" / "index.js"), "--stdio"]
                    other = window.add_server(ServerSpec(name="basic app", command=cmd), save=False)
                    await until(lambda: other.session.status is Status.CONNECTED and other.session.tools.loaded,
                                30, "the app server")
                    tool = next(t["name"] for t in other.session.tools.items if isinstance(t, dict))
                    await call(window, tool, None)
                    await settle(3.0)  # the app's page loads and reports its size
                    return window.grab()
                await self.shoot("tool-app", name, app_answer)
                window.select_connection(conn)

            async def present(step: str) -> Any:
                view = window.present.enter() if not window.present.active else window.present.view
                await settle(0.6)
                if step == "form":
                    view.open_tool("weather", {"city": "Oslo"})
                elif step == "answer":
                    view.open_tool("weather", {"city": "Oslo"})
                    await settle(0.3)
                    rec = view.run()
                    if rec is not None:
                        await until(lambda: not rec.running, 30, "the answer")
                await settle(0.8)
                return window.grab()
            for step in ("cards", "form", "answer"):
                await self.shoot(f"present-{step}", name, lambda step=step: present(step))
                if window.present.active:
                    window.present.view.show_cards()
            if window.present.active:
                window.present.leave()
        finally:
            await window.shutdown()
            window.close()
            window.deleteLater()
            await settle(0.2)
            if base is None:
                apply_font(app, 0)


def run() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="every screen size x theme x text size")
    parser.add_argument("--only", default="", help="states to take, comma-separated (first-start, tool-text...)")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("QTWEBENGINE_CHROMIUM_FLAGS", "--disable-gpu --no-sandbox")
    os.environ.setdefault("SPYGLASS_CONFIG_DIR", tempfile.mkdtemp(prefix="spyglass-gallery-config-"))
    sys.path.insert(0, str(ROOT))
    import qasync
    from PySide6.QtWidgets import QApplication

    from inspector.ui.apps.engine import prepare

    prepare()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    OUT.mkdir(parents=True, exist_ok=True)
    gallery = Gallery({s for s in args.only.split(",") if s} or None)
    variants = ([(s, m, t) for s in SCREENS for m in THEMES for t in TEXT] if args.all else SHOWN)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        for screen, mode, text in variants:
            loop.run_until_complete(gallery.variant(screen, mode, text))
    finally:
        loop.close()
        asyncio.set_event_loop(None)
    for line in gallery.failed:
        print(f"not taken: {line}", file=sys.stderr)
    return 1 if gallery.failed else 0


if __name__ == "__main__":
    sys.exit(run())
