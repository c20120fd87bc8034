"""The window's MCP Apps host: one `AppBlock` per call of a tool with an app, made when the call is shown.

At most `LIVE` apps stay open (each is a renderer process): the oldest one not on screen is torn down
(`ui/resource-teardown`, awaited) and shown again, read anew, if its call is shown again. The host also
keeps what all apps share: the host context the user emulates (`HostSettings`; the theme follows
Spyglass's unless the user picks one), the permissions allowed per server, the profiles (engine.py), and
how links open (`opener`, the system browser; tests replace it).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QLocale, QObject, QTimeZone, QUrl
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ...protocol import apps
from ...session import CallRecord
from ...session.apps import INIT_TIMEOUT, HostSettings
from ..base import design, opening, theme
from .block import HUNG_AFTER, AppBlock

log = logging.getLogger("spyglass.ui.apps")

LIVE = 4


SEMANTIC = {k: v for k, v in design.COLOURS.items() if k.startswith("--")}  # (light, dark), design tokens


def style_variables(dark: bool) -> dict[str, str]:
    """The spec's CSS variables, from Spyglass's light or dark palette (a subset: hosts may pass any)."""
    pal = theme.dark_palette() if dark else theme.light_palette()
    sans = QGuiApplication.font().family()
    mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()
    out = {
        "--color-background-primary": pal.base().color().name(),
        "--color-background-secondary": pal.window().color().name(),
        "--color-background-tertiary": pal.alternateBase().color().name(),
        "--color-background-inverse": pal.text().color().name(),
        "--color-text-primary": pal.text().color().name(),
        "--color-text-inverse": pal.base().color().name(),
        "--color-border-primary": pal.mid().color().name(),
        "--color-border-secondary": pal.midlight().color().name(),
        "--color-ring-primary": pal.highlight().color().name(),
        "--font-sans": f'"{sans}", system-ui, sans-serif',
        "--font-mono": f'"{mono}", ui-monospace, monospace',
        **design.APP_RADII,
    }
    out.update({key: pair[1 if dark else 0] for key, pair in SEMANTIC.items()})
    return out


class AppHost(QObject):
    def __init__(self, parent: QWidget, *, dialog_parent: Callable[[], QWidget] | None = None) -> None:
        super().__init__(parent)
        from .engine import Profiles

        self.settings = HostSettings(locale=QLocale.system().bcp47Name() or "en-US",
                                     time_zone=bytes(QTimeZone.systemTimeZoneId().data()).decode() or "UTC")
        if self.settings.locale in ("c", "C"):
            self.settings.locale = "en-US"
        self.theme_source = "spyglass"  # or "light" / "dark": an emulated host
        self.settings_stream = False  # stream the arguments (tool-input-partial) when an app opens
        self.init_timeout = INIT_TIMEOUT
        slowdown = 3.0 if sys.gettrace() is not None else 1.0  # a traced run (coverage) is slower
        self.hung_after = HUNG_AFTER * slowdown  # seconds an app's frame may stay busy before it is said
        self.opener: Callable[[QUrl], bool] = lambda url: opening.system_open(url.toString(QUrl.FullyEncoded))
        self.profiles = Profiles(self._request_refused, self)
        self.blocks: OrderedDict[tuple[str, int], AppBlock] = OrderedDict()
        self._granted: dict[str, set[str]] = {}
        self._views = itertools.count(1)
        self._dialog_parent = dialog_parent or (lambda: parent)
        self._closing: set[asyncio.Future[Any]] = set()

    def attach(self, panel: Any, calls: Any) -> None:
        """Show the apps in `panel`'s results (a ToolCallPanel), fed the calls' progress and outcomes."""
        panel.app_for = self.block_for
        calls.updated.connect(self.record_changed)
        calls.finished.connect(self.record_changed)

    # ------------------------------------------------------------------ what blocks ask
    def unavailable(self) -> str | None:
        from .engine import unavailable

        return unavailable()

    def next_view_id(self) -> str:
        return f"v{next(self._views)}"

    def dialog_parent(self) -> QWidget:
        return self._dialog_parent()

    def granted(self, server_id: str, asked: tuple[str, ...]) -> tuple[str, ...]:
        """What the user allowed of what an app asked, for its server."""
        allowed = self._granted.get(server_id, set())
        return tuple(f for f in asked if f in allowed)

    def set_granted(self, server_id: str, feature: str, on: bool) -> None:
        allowed = self._granted.setdefault(server_id, set())
        if (feature in allowed) == on:
            return
        (allowed.add if on else allowed.discard)(feature)
        for (sid, _n), block in list(self.blocks.items()):
            if sid == server_id and block.app is not None and feature in block.app.document.permissions:
                block.reload()

    def current_settings(self) -> HostSettings:
        """The settings with the theme applied and the style variables of that theme."""
        s = self.settings
        dark = theme.is_dark() if self.theme_source == "spyglass" else self.theme_source == "dark"
        s.theme = "dark" if dark else "light"
        s.styles = style_variables(dark)
        return HostSettings(**{**s.__dict__, "styles": dict(s.styles)})

    def set_theme_source(self, source: str) -> None:
        if source != self.theme_source:
            self.theme_source = source
            self.settings_changed(None)

    def settings_changed(self, origin: AppBlock | None) -> None:
        for block in self.blocks.values():
            if block is not origin:
                block.context_panel.load()
            block.settings_changed()

    def theme_changed(self) -> None:
        """Spyglass's theme changed: apps that follow it hear it."""
        if self.theme_source == "spyglass":
            for block in self.blocks.values():
                block.send_context()

    def devtools_window(self, page: Any, title: str) -> QWidget:
        from PySide6.QtWebEngineCore import QWebEngineProfile
        from PySide6.QtWebEngineWidgets import QWebEngineView

        window = QWidget(None)
        window.setObjectName("appDevTools")
        window.setWindowTitle(f"Developer tools — {title}")
        lay = QVBoxLayout(window)
        lay.setContentsMargins(0, 0, 0, 0)
        view = QWebEngineView(window)
        view.setObjectName("appDevToolsView")
        profile = QWebEngineProfile(window)  # off the record too
        from PySide6.QtWebEngineCore import QWebEnginePage

        tools_page = QWebEnginePage(profile, view)
        view.setPage(tools_page)
        page.setDevToolsPage(tools_page)
        lay.addWidget(view)
        window.resize(900, 600)
        return window

    def _request_refused(self, server_id: str, url: str, why: str) -> None:
        shown = [b for (sid, _n), b in self.blocks.items() if sid == server_id and b.page is not None]
        for block in shown[-1:]:  # the profile is the server's: said in its newest open app
            block.refused_request(url, why)

    # ------------------------------------------------------------------ blocks
    def block_for(self, conn: Any, rec: CallRecord) -> AppBlock | None:
        """The app of this call (made, and opened, on first show); None for a tool without one."""
        if conn is None or not apps.has_app(rec.tool_def):
            return None
        key = (rec.server_id, rec.id)
        block = self.blocks.get(key)
        if block is None:
            block = AppBlock(self, conn, rec, dict(rec.tool_def or {}))
            self.blocks[key] = block
            block.start()
            self._evict(keep=block)
        else:
            self.blocks.move_to_end(key)
        return block

    def _evict(self, keep: AppBlock) -> None:
        live = [(k, b) for k, b in self.blocks.items() if not b.closed]
        for key, block in live[: max(0, len(live) - LIVE)]:
            if block is keep or block.isVisible():
                continue
            del self.blocks[key]
            self._spawn(self._retire(block))

    @staticmethod
    async def _retire(block: AppBlock) -> None:
        try:
            await block.close("closed to make room for newer apps")
        finally:
            block.deleteLater()

    def record_changed(self, rec: CallRecord) -> None:
        block = self.blocks.get((rec.server_id, rec.id))
        if block is not None:
            block.record_changed(rec)

    async def close_server(self, server_id: str) -> None:
        """A server leaves the window: its apps are torn down, then its profile goes."""
        gone = [(k, b) for k, b in self.blocks.items() if k[0] == server_id]
        await asyncio.gather(*(b.close("its server was removed") for _k, b in gone), return_exceptions=True)
        for key, block in gone:
            self.blocks.pop(key, None)
            block.deleteLater()
        self.profiles.forget_server(server_id)

    async def close(self) -> None:
        """The window closes: every app is torn down (awaited, each bounded by its teardown timeout)."""
        blocks = list(self.blocks.values())
        await asyncio.gather(*(b.close("the window closed") for b in blocks), return_exceptions=True)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
        # the profiles go with the window, after its views (a profile deleted before its pages' views crashes)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
