"""Screenshots of the real window for the README and the AppStream metainfo → resources/screenshots/.

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/screenshots.py

Runs Spyglass's own main window in this process on the built-in demo server, with private
settings and an unsaved catalog (nothing of the user's is read or changed).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "resources" / "screenshots"
SAMPLE = ROOT / "tests" / "data" / "configs" / "vscode_mcp.json"


async def settle(seconds: float = 0.3) -> None:
    await asyncio.sleep(seconds)  # never processEvents() from a coroutine: it would run other tasks inside this one


def save(pixmap, name: str) -> None:
    path = OUT / name
    if not pixmap.save(str(path), "PNG"):
        raise SystemExit(f"cannot write {path}")
    print(path.relative_to(ROOT))


def over(window, widget, *, centre: bool = True):
    """The window, dimmed, with `widget` (a dialog) drawn on it: centred, or where it sits."""
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QColor, QPainter, QPen

    base = window.grab()
    top = widget.grab()
    p = QPainter(base)
    if centre:
        p.fillRect(base.rect(), QColor(0, 0, 0, 90))
        at = QPoint((base.width() - top.width()) // 2, (base.height() - top.height()) // 2)
    else:
        at = window.mapFromGlobal(widget.mapToGlobal(QPoint(0, 0)))
    p.drawPixmap(at, top)
    p.setPen(QPen(QColor(0, 0, 0, 140), 1))
    p.drawRect(at.x() - 1, at.y() - 1, top.width() + 1, top.height() + 1)
    p.end()
    return base


async def main() -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from inspector.ui.base import theme
    from inspector.ui.servers.connection import Status
    from inspector.ui.window import desktop
    from inspector.ui.window.about import app_icon
    from inspector.ui.window.main_window import MainWindow, demo_spec

    app = QApplication.instance()
    app.setWindowIcon(app_icon())
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="spyglass-shots-"))
    for mode in ("light", "dark"):
        theme.apply_theme(app, mode)
        window = MainWindow(settings=QSettings(str(tmp / f"{mode}.ini"), QSettings.IniFormat), store_path=":memory:")
        window.persist = False
        window.resize(1280, 820)
        window.show()
        conn = window.add_server(demo_spec())
        for _ in range(300):
            if conn.session.status is Status.CONNECTED and conn.session.tools.loaded:
                break
            await asyncio.sleep(0.05)
        window.tool_panel.select("weather")
        await settle(0.6)
        save(window.grab(), f"main-window-{mode}.png")
        if mode == "light":
            dialog = desktop.import_file(window, str(SAMPLE))
            await settle()
            save(over(window, dialog), "import-preview.png")
            dialog.reject()
            palette = desktop.open_command_palette(window)
            palette.input.setText("")
            await settle()
            save(over(window, palette, centre=False), "command-palette.png")
            palette.close()
            from inspector.ui.window.preferences import show_preferences

            prefs = show_preferences(window)
            await settle()
            save(over(window, prefs), "preferences.png")
            prefs.reject()
        await window.shutdown()
        window.close()
        window.deleteLater()
        await settle(0.1)


def run() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("SPYGLASS_CONFIG_DIR", tempfile.mkdtemp(prefix="spyglass-shots-config-"))
    sys.path.insert(0, str(ROOT))
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)  # the loop, not the last window, decides when to stop
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
        asyncio.set_event_loop(None)
    return 0


if __name__ == "__main__":
    sys.exit(run())
