"""`result:app`: a call's MCP App, shown above the result's blocks.

The block reads the tool's `ui://` resource (`session.apps.read_document`), serves it in its own page
(page.py) and runs the host side of the bridge (`session.apps.AppSession`): the call's arguments go to
the app as `tool-input` and its outcome as `tool-result` (or `tool-cancelled`) once the app is
initialized. What cannot be shown — a missing or wrong resource, no Qt WebEngine, an app that never starts
its bridge — is said in the block (`appProblem`) and the rest of the result stays readable.

Bounded work: the app runs in Chromium's renderer process, never in the window's thread; nothing in the
window waits on it (the bridge is asynchronous; its page reads at most 100 messages a second and drops the
rest unread, and the bridge keeps the same pace). A watchdog asks the app's frame for a trivial answer
every 2 s: a frame busy for `HUNG_AFTER` seconds (a loop in its JavaScript) is said to be not responding,
and **Stop** (`appStop`) kills its renderer process and drops its page.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, QUrl
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...protocol import apps
from ...protocol.app_bridge import Ask, Note
from ...session import CANCELLED, OK, RUNNING, TOOL_ERROR, CallRecord
from ...session.apps import AppSession, host_context, read_document
from ..base import design, theme
from ..base.layout import text_label
from ..base.tasks import spawn
from ..base.text import visible
from . import asks
from .display import AppWindow
from .panels import AppMessages, HostContextPanel, SandboxPanel, preset_size

if TYPE_CHECKING:
    from .host import AppHost

log = logging.getLogger("spyglass.ui.apps")

MIN_HEIGHT, START_HEIGHT, MAX_HEIGHT = 80, 360, 2000
WATCH_MS, HUNG_AFTER = 2000, 6.0
MODES = (("inline", "Inline"), ("fullscreen", "Fullscreen"), ("pip", "Picture in picture"))


class AppBlock(QFrame):
    def __init__(self, host: AppHost, conn: Any, rec: CallRecord, tool: dict[str, Any],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("result:app")
        self.setFrameShape(QFrame.StyledPanel)
        self.host = host
        self.conn = conn
        self.rec = rec
        self.tool = tool
        ui = apps.tool_ui(tool)
        self.uri = ui.resource_uri if ui is not None else None
        self.app: AppSession | None = None
        self.page: Any = None
        self.view: Any = None
        self.view_id: str | None = None
        self.mode = "inline"
        self.window: AppWindow | None = None
        self.devtools: Any = None
        self.closed = False
        self.outcome_sent = False
        self.input_sent = False
        self.loaded_at: float | None = None
        self._height = START_HEIGHT
        self._pending_height: int | None = None
        self._ping_sent: float | None = None
        self._hung = False
        self._streaming: asyncio.Future[Any] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._build()
        self._size_timer = QTimer(self)
        self._size_timer.setSingleShot(True)
        self._size_timer.setInterval(50)
        self._size_timer.timeout.connect(self._apply_height)
        self._context_timer = QTimer(self)
        self._context_timer.setSingleShot(True)
        self._context_timer.setInterval(150)
        self._context_timer.timeout.connect(self.send_context)
        self._watch = QTimer(self)
        self._watch.setInterval(WATCH_MS)
        self._watch.timeout.connect(self._watchdog)

    # ------------------------------------------------------------------ construction
    def _build(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("s", "xs", "s", "s"))
        lay.setSpacing(design.space("xs"))
        head = QHBoxLayout()
        self.title = text_label(f"App · {visible(self.uri, 200)}", self, name="appTitle", wrap=False)
        f = self.title.font()
        f.setBold(True)
        self.title.setFont(f)
        self.state = text_label("loading…", self, name="appState", role="muted", wrap=False)
        for label in (self.title, self.state):  # long names shrink with the block instead of widening it
            label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        head.addWidget(self.title, 2)
        head.addWidget(self.state, 3)
        lay.addLayout(head)
        tools = QHBoxLayout()
        self.uri_label = text_label(visible(self.uri, 300), self, name="appUri", role="muted", wrap=False)
        self.uri_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        tools.addWidget(self.uri_label, 1)
        self.display = QComboBox(self)
        self.display.setObjectName("appDisplayMode")
        for value, text in MODES:
            self.display.addItem(text, value)
        self.display.setToolTip("Where the app is shown: in this block, fullscreen in its own window, or in a small "
                                "window that stays on top (the app hears the change)")
        self.display.activated.connect(lambda i: self.set_mode(str(self.display.itemData(i))))
        tools.addWidget(self.display)
        self.reload_button = self._tool("appReload", "Reload", "Close the app (ui/resource-teardown) and open it "
                                        "again: the resource read again, the call's input and result sent again")
        self.reload_button.clicked.connect(self.reload)
        self.devtools_button = self._tool("appDevTools", "DevTools", "Qt WebEngine's developer tools for this app")
        self.devtools_button.clicked.connect(self.open_devtools)
        self.side_button = self._tool("appSideToggle", "Side panel", "What the app would tell the conversation, the "
                                      "host it believes it runs in, and its sandbox")
        self.side_button.setCheckable(True)
        for b in (self.reload_button, self.devtools_button, self.side_button):
            tools.addWidget(b)
        lay.addLayout(tools)
        self.problem = text_label("", self, name="appProblem", role="error")
        self.problem.hide()
        lay.addWidget(self.problem)
        self.stop_button = self._tool("appStop", "Stop the app", "End the app's page and its renderer process")
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.hide()
        lay.addWidget(self.stop_button, 0, Qt.AlignLeft)
        self.body = QSplitter(Qt.Horizontal, self)
        self.body.setObjectName("appBody")
        self.body.setChildrenCollapsible(False)
        self.holder = QWidget(self.body)
        self.holder.setObjectName("appViewHolder")
        self.holder_layout = QVBoxLayout(self.holder)
        self.holder_layout.setContentsMargins(0, 0, 0, 0)
        self.placeholder = text_label("", self.holder, name="appPlaceholder", role="muted")
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.hide()
        self.holder_layout.addWidget(self.placeholder)
        self.side = QTabWidget(self.body)
        self.side.setObjectName("appSide")
        self.side.setDocumentMode(True)
        self.messages = AppMessages(self.side)
        self.context_panel = HostContextPanel(self.host.settings, lambda: self.host.theme_source, self.side)
        self.context_panel.changed.connect(self._context_edited)
        self.context_panel.stream.setChecked(self.host.settings_stream)
        self.context_panel.stream.toggled.connect(lambda on: setattr(self.host, "settings_stream", on))
        self.context_panel.theme.currentIndexChanged.connect(
            lambda _i: self.host.set_theme_source(self.context_panel.theme_choice()))
        self.sandbox = SandboxPanel(self.side)
        self.sandbox.permissionToggled.connect(self._permission_toggled)
        self.side.addTab(self.messages, "Messages")
        self.side.addTab(self.context_panel, "Host context")
        self.side.addTab(self.sandbox, "Sandbox")
        self.body.addWidget(self.holder)
        self.body.addWidget(self.side)
        self.body.setStretchFactor(0, 1)
        self.body.setStretchFactor(1, 0)
        self.side.setMinimumWidth(240)
        self.body.setSizes([640, 300])
        self.side_button.toggled.connect(self.side.setVisible)
        self.side.hide()  # shown on demand, and when the app says something for the conversation
        # The height is fixed on a plain box around the splitter: a splitter sets its own maximum size whenever
        # a pane of it is shown or hidden (the side panel, opened when the app says something), which undid a
        # height fixed on it, and the app's area grew past what the app asked for.
        self.box = QWidget(self)
        self.box.setObjectName("appBox")
        box = QVBoxLayout(self.box)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.body)
        lay.addWidget(self.box)
        self.box.setFixedHeight(START_HEIGHT)

    def _tool(self, name: str, text: str, tip: str) -> QToolButton:
        b = QToolButton(self)
        b.setObjectName(name)
        b.setText(text)
        b.setToolTip(tip)
        return b

    def _spawn(self, coro: Any, what: str) -> asyncio.Task[Any] | None:
        return spawn(coro, self._tasks, lambda exc: self.say_problem("Spyglass failed", f"{what}: {exc}"), what)

    # ------------------------------------------------------------------ opening
    def start(self) -> None:
        self._spawn(self._open(), "opening an app")

    async def _open(self) -> None:
        self.closed = False
        self.outcome_sent = self.input_sent = False
        self._set_state("reading the app resource…")
        why = self.host.unavailable()
        if why is not None:
            self.say_problem("The app cannot be shown", why)
            return
        if self.uri is None:
            self.say_problem("The app cannot be shown", "the tool names no ui:// resource")
            return
        try:
            document = await read_document(self.conn.session, self.uri)
        except apps.AppProblem as exc:
            self.say_problem(exc.title, exc.detail)
            return
        if self.closed:
            return
        self.view_id = self.host.next_view_id()
        granted = self.host.granted(self.conn.server_id, document.permissions)
        self.app = AppSession(self.conn.session, self.tool, self.view_id, self.context(), document=document,
                              granted=granted, post=self._post, on_note=self._note, on_ask=self._ask)
        self.app.init_timeout = self.host.init_timeout
        self.sandbox.show_document(csp=document.csp, outside=document.ui.csp.outside, asked=document.permissions,
                                   granted=set(granted), problems=document.ui.problems)
        self.conn.session.log.note(f"app {document.uri}: CSP {document.csp}")
        border = document.ui.prefers_border
        self.setFrameShape(QFrame.NoFrame if border is False else QFrame.StyledPanel)
        self._make_view(document, granted)
        if not self.host.settings_stream:
            self._send_input()
        self.record_changed(self.rec)

    def _make_view(self, document: apps.AppDocument, granted: tuple[str, ...]) -> None:
        from PySide6.QtWebEngineWidgets import QWebEngineView

        from .engine import Served, app_host
        from .page import AppPage, host_page

        assert self.view_id is not None
        server_id = self.conn.server_id
        host_url = f"spyglass-host://{self.view_id}/index.html"
        app_url = f"mcp-app://{app_host(server_id, document.uri)}/{self.view_id}/index.html"
        served = Served(b"", document.html.encode("utf-8"), document.csp, document.ui.csp.frame,
                        document.ui.csp.outside)
        profile = self.host.profiles.serve(server_id, self.view_id, served)
        self.page = AppPage(profile, host_url=host_url, app_url=app_url, frame_domains=document.ui.csp.frame,
                            granted=lambda: self.host.granted(server_id, document.permissions))
        served.host_page = host_page(nonce=self.page.nonce, src=app_url, title=str(self.tool.get("name") or "app"),
                                     allow=apps.allow_attribute(granted),
                                     background=self.palette().base().color().name())
        self.page.bridged.connect(self._bridged)
        self.page.consoled.connect(self._console)
        self.page.refused.connect(self._refused)
        self.page.loadFinished.connect(self._load_finished)
        self.page.renderProcessTerminated.connect(self._renderer_ended)
        self.view = QWebEngineView(self.holder)
        self.view.setObjectName("appView")
        self.page.setParent(self.view)  # deleted with the view
        self.view.setPage(self.page)
        self.view.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.NoContextMenu)
        self.placeholder.hide()
        self.holder_layout.addWidget(self.view)
        for control in (self.display, self.devtools_button):
            control.setEnabled(True)
        self._apply_preset()
        self._set_state("loading…")
        self.page.load(QUrl(host_url))

    # ------------------------------------------------------------------ the call
    def _send_input(self) -> None:
        if self.app is not None and not self.input_sent:
            self.input_sent = True
            self.app.tool_input(self.rec.arguments)

    def record_changed(self, rec: CallRecord) -> None:
        """The call moved on: its outcome goes to the app (once, after its input)."""
        self.rec = rec
        if self.app is None or rec.outcome == RUNNING or self.outcome_sent or not self.input_sent:
            return
        self.outcome_sent = True
        if rec.outcome in (OK, TOOL_ERROR) and isinstance(rec.result, dict):
            self.app.tool_result(rec.result)
        else:
            reason = rec.error_text or rec.outcome
            self.app.tool_cancelled(f"{rec.outcome}: {reason}" if rec.outcome != CANCELLED else reason)

    async def _stream_input(self) -> None:
        """Emulate a model streaming the arguments: one more key every 150 ms, then the whole input."""
        args = self.rec.arguments if isinstance(self.rec.arguments, dict) else {}
        partial: dict[str, Any] = {}
        for key, value in args.items():
            partial[key] = value
            if self.app is None or self.closed:
                return
            self.app.tool_input_partial(dict(partial))
            await asyncio.sleep(0.15)
        self._send_input()
        self.record_changed(self.rec)

    # ------------------------------------------------------------------ the bridge
    def _post(self, text: str) -> None:
        if self.page is not None:
            self.page.deliver(text)

    def _bridged(self, items: list[Any], dropped: int) -> None:
        app = self.app
        if app is None:
            return
        for item in items:
            if isinstance(item, str):
                app.from_view(item)
            elif isinstance(item, dict) and "big" in item:
                app.note_refused(f"sent a message of {item['big']:,} characters: dropped (at most 4 MiB)")
            else:
                app.note_refused("posted something that is not JSON: dropped")
        if dropped:
            app.dropped_by_view(dropped)

    def _note(self, note: Note) -> None:
        kind = note.kind
        if kind == "initialized":
            self._clear_problem()
            took = f" · {time.monotonic() - self.loaded_at:.2f} s after loading" if self.loaded_at else ""
            self._set_state(f"ready{took}")
            self._watch.start()
            if self.host.settings_stream and not self.input_sent:
                self._streaming = self._spawn(self._stream_input(), "streaming the arguments to an app")
        elif kind == "initialize":
            name = self.app.name if self.app is not None else None
            self.title.setText(f"App · {visible(name, 80)}")
        elif kind == "size":
            height = note.data.get("height") if isinstance(note.data, dict) else None
            if isinstance(height, (int, float)):
                self._pending_height = int(height)
                if not self._size_timer.isActive():
                    self._size_timer.start()
        elif kind == "message":
            self.messages.add_message(note.data.get("role"), note.data.get("content") or [])
            self._raise_side(self.messages)
        elif kind == "context":
            self.messages.set_context(note.data if isinstance(note.data, dict) else {})
            self._raise_side(self.messages)
        elif kind in ("refused", "dropped"):
            self.sandbox.add_refused(note.text)
        elif kind == "problem":
            self.say_problem("The app is not working", note.text)
        elif kind == "teardown-requested":
            self.sandbox.add_refused("the app asked to be closed (ui/notifications/request-teardown): closing it")
            self._spawn(self.close("the app asked to be closed"), "closing an app")
        elif kind in ("warning", "unknown"):
            self.conn.session.log.note(f"app {self.uri}: {note.text}", level="warning" if kind == "warning" else
                                       "spyglass")

    def _ask(self, ask: Ask) -> None:
        self._spawn(asks.answer(self, ask), f"answering an app's {ask.method}")

    def _console(self, level: str, text: str) -> None:
        from ...session.log import LogEntry

        self.conn.session.log.append(LogEntry(time.time(), level, text, f"app console · {self.uri}"))

    def _refused(self, text: str) -> None:
        if self.app is not None:
            self.app.note_refused(text)
        else:
            self.sandbox.add_refused(text)

    def refused_request(self, url: str, why: str) -> None:
        self._refused(f"tried {why}: {url}: refused")

    # ------------------------------------------------------------------ size and context
    def _apply_height(self) -> None:
        if self._pending_height is None:
            return
        fixed_w, fixed_h = preset_size(self.host.settings)
        limit = self.host.settings.dimensions(self.width()).get("maxHeight", MAX_HEIGHT)
        height = fixed_h if fixed_h is not None else max(MIN_HEIGHT, min(self._pending_height, limit, MAX_HEIGHT))
        self._pending_height = None
        if height != self._height:
            self._height = height
            if self.mode == "inline":
                self.box.setFixedHeight(height)

    def _apply_preset(self) -> None:
        if self.view is None:
            return
        width, height = preset_size(self.host.settings)
        if width is not None:
            self.view.setFixedWidth(width)
        else:
            self.view.setMinimumWidth(0)
            self.view.setMaximumWidth(16777215)
        if self.view.parent() is self.holder:
            self.holder_layout.setAlignment(self.view, Qt.AlignHCenter if width is not None else Qt.Alignment())
        if height is not None:
            self._height = height
            self.box.setFixedHeight(height)

    def context(self) -> dict[str, Any]:
        s = self.host.current_settings()
        s.display_mode = self.mode
        width = self.view.width() if self.view is not None else max(self.holder.width(), 300)
        modes = self.app.bridge.display_modes if self.app is not None else ("inline", "fullscreen", "pip")
        return host_context(s, block_width=width, tool=self.tool, call_id=self.rec.request_id, display_modes=modes)

    def send_context(self) -> None:
        if self.app is not None and not self.app.closed:
            context = self.context()
            self.app.set_context(context)
            self.context_panel.show_context(context)

    def _context_edited(self) -> None:
        self.host.settings_changed(self)

    def settings_changed(self) -> None:
        self.context_panel.load()
        self._apply_preset()
        self.send_context()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if abs(event.size().width() - event.oldSize().width()) > 8:
            self._context_timer.start()

    def _raise_side(self, widget: QWidget) -> None:
        self.side_button.setChecked(True)
        self.side.setCurrentWidget(widget)

    def _permission_toggled(self, feature: str, on: bool) -> None:
        self.host.set_granted(self.conn.server_id, feature, on)

    # ------------------------------------------------------------------ display modes
    def set_mode(self, mode: str) -> str:
        """Show the app inline, fullscreen or picture-in-picture; returns the mode in effect."""
        if self.view is None or mode == self.mode:
            self._show_mode()
            return self.mode
        if self.window is not None:
            window, self.window = self.window, None
            window.body.removeWidget(self.view)
            window.close_quietly()
            window.deleteLater()
        self.mode = mode
        if mode == "inline":
            self.placeholder.hide()
            self.holder_layout.addWidget(self.view)
            self.box.setFixedHeight(self._height)
        else:
            self.window = AppWindow(mode, self.app.name if self.app else str(self.uri), None)
            self.window.closedByUser.connect(lambda: self._back_inline())
            self.holder_layout.removeWidget(self.view)
            self.window.body.addWidget(self.view)
            self.placeholder.setText("The app is shown " + ("fullscreen, in its own window." if mode == "fullscreen"
                                                            else "in a small window that stays on top."))
            self.placeholder.show()
            self.box.setFixedHeight(80)
            self.window.place()
        self._show_mode()
        self.send_context()
        return self.mode

    def _back_inline(self) -> None:
        self.window = None
        self.set_mode("inline")

    def _show_mode(self) -> None:
        self.display.blockSignals(True)
        self.display.setCurrentIndex(max(0, self.display.findData(self.mode)))
        self.display.blockSignals(False)

    # ------------------------------------------------------------------ health
    def _load_finished(self, ok: bool) -> None:
        if not ok:
            self.say_problem("The app could not be loaded", "its page did not load")
            return
        self.loaded_at = time.monotonic()
        if self.app is not None and not self.app.bridge.ready:
            self._set_state("loaded · waiting for ui/initialize")
            self.app.loaded()

    def _watchdog(self) -> None:
        if self.page is None:
            return
        now = time.monotonic()
        if self._ping_sent is not None:
            if now - self._ping_sent >= self.host.hung_after and not self._hung:
                self._hung = True
                self.say_problem("The app is not responding", f"its JavaScript has been busy for "
                                 f"{now - self._ping_sent:.0f} s (the window is not: the app runs in its own "
                                 "process). Stop ends it; Reload starts it again.")
                self.stop_button.show()
            return
        frame = self.page.app_frame()
        target = frame if frame is not None else self.page
        self._ping_sent = now
        page = self.page

        def answered(_value: Any) -> None:
            if page is not self.page:  # a page that went (stopped, reloaded) answers as it goes
                return
            self._ping_sent = None
            if self._hung:
                self._hung = False
                self._clear_problem()
                self.stop_button.hide()
        try:
            target.runJavaScript("1", 0, answered)
        except (RuntimeError, TypeError):
            self._ping_sent = None

    def _renderer_ended(self, status: Any, code: int) -> None:
        if self.closed:
            return
        self.say_problem("The app's page ended", f"its renderer process stopped ({str(status).rsplit('.', 1)[-1]}, "
                         f"code {code}); Reload starts it again")

    def stop(self) -> None:
        """End a runaway app: its renderer process is killed (deleting a page whose renderer is busy would make
        the window wait for it), then its page goes."""
        self.stop_button.hide()
        self._watch.stop()
        self._ping_sent, self._hung = None, False
        self.closed = True
        if self.app is not None:
            self.app.stop()
        pid = self.page.renderProcessPid() if self.page is not None else 0
        if pid > 0:
            try:
                os.kill(pid, signal.SIGKILL)  # our own renderer (a child of Qt WebEngine's zygote)
            except OSError:
                log.debug("the renderer %s of %s was already gone", pid, self.uri)
        self._drop_view()
        self.say_problem("The app was stopped", "its renderer process was ended; Reload starts it again")
        self._set_state("stopped")

    # ------------------------------------------------------------------ closing
    def reload(self) -> None:
        async def again() -> None:
            await self.close("reloading")
            self.closed = False
            self._clear_problem()
            self.stop_button.hide()
            await self._open()
        self._spawn(again(), "reloading an app")

    async def close(self, why: str = "closed") -> None:
        """Teardown awaited (the app may still call its server meanwhile), then the view goes."""
        if self.closed:
            return
        self.closed = True
        self._watch.stop()
        if self._streaming is not None:
            self._streaming.cancel()
        app = self.app
        if app is not None and not app.closed:
            self._set_state("closing…")
            how = await app.close()
            self.sandbox.add_refused(f"closed ({why}): {how}")
        self._drop_view()
        self._set_state(f"closed ({why})")

    def _drop_view(self) -> None:
        self._watch.stop()
        if self.window is not None:
            self.window.close_quietly()
            self.window.deleteLater()
            self.window = None
            self.mode = "inline"
            self._show_mode()
        if self.devtools is not None:
            self.devtools.close()
            self.devtools.deleteLater()
            self.devtools = None
        view, self.view, self.page = self.view, None, None
        if view is not None:  # the page is the view's child: both go, and the page's renderer process ends
            view.hide()
            self.holder_layout.removeWidget(view)
            view.deleteLater()
        if self.view_id is not None:
            self.host.profiles.forget(self.conn.server_id, self.view_id)
        self.placeholder.setText("The app is closed. Reload opens it again.")
        self.placeholder.show()

    def open_devtools(self) -> None:
        if self.page is None:
            return
        if self.devtools is None:
            self.devtools = self.host.devtools_window(self.page, str(self.uri))
        self.devtools.show()
        self.devtools.raise_()

    # ------------------------------------------------------------------ words
    def _set_state(self, text: str) -> None:
        self.state.setText(text)

    def say_problem(self, title: str, detail: str) -> None:
        self.problem.setText(f"{title}: {detail}" if detail else title)
        self.problem.setStyleSheet(f"color: {theme.colour('error').name()};")
        self.problem.show()
        self._set_state(title)
        for control in (self.display, self.devtools_button):  # nothing to show or inspect without a view
            control.setEnabled(self.view is not None)
        if self.view is None and self.mode == "inline":
            self.placeholder.setText("The rest of the result is below.")
            self.placeholder.show()
            self.box.setFixedHeight(60)

    def _clear_problem(self) -> None:
        self.problem.hide()

    @property
    def problem_text(self) -> str:
        return self.problem.text() if not self.problem.isHidden() else ""

