"""Taps in the window: the window listens on a local socket (`inspector.tap.record.socket_path()`: a Unix
socket, 0600, in a 0700 folder of the user's runtime directory; nothing on the network; a folder that is a
link, another user's or open to others is refused and the banner says why, and a tap run by another user
is closed: `inspector.private`), and each
`spyglass tap` that reaches it becomes a read-only server in the sidebar — "Claude Desktop → filesystem
(tapped)" — with its tools, traffic, log and the host's calls with their results.

A tap that started before the window says where its session file is and how many frames it holds: those
are read from the file first, then the rest arrives live. A second window finds the socket taken and
says so; a socket left by a window that crashed is taken over.

The socket is two-way for intercept (`inspector.tap.held`): a tapped server's Intercept tab (`InterceptPane`,
shown while a tapped server is selected) asks its tap to hold matching messages and forwards or drops them.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import logging
import os
import socket
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFrame, QMenu, QScrollArea

from ...private import NotPrivate, own_folder, own_socket, peer_problem
from ...recording.files import frame_of_line
from ...tap.held import KEYS as INTERCEPT_KEYS
from ...tap.held import InterceptLink
from ...tap.record import socket_path
from ...tap.session import TappedSession
from ...traffic import Frame
from ..base.dialogs import show_sheet
from ..base.tasks import spawn
from .intercept_pane import InterceptPane
from .tap_dialog import TapHostDialog

if TYPE_CHECKING:
    from .main_window import MainWindow

log = logging.getLogger("spyglass.ui.tap")

LINE_LIMIT = 256 * 1024 * 1024  # a tap's line holds one frame: as big as a message may be
CATCH_UP_BATCH = 500  # frames fed per loop turn while catching up from a file (the window stays live)


def read_frames(path: Path, count: int) -> tuple[list[Frame], str | None]:
    """The first `count` frames of a session file a tap is still writing (its last flush is whole lines
    up to a point: what is beyond is cut, never an error); a problem, said, when it could not be read."""
    frames: list[Frame] = []
    try:
        with gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape") as fh:
            for n, text in enumerate(fh):
                if n == 0 or len(frames) >= count:
                    if len(frames) >= count:
                        break
                    continue  # the header
                try:
                    item = json.loads(text)
                    if isinstance(item, dict) and "server" in item:
                        frames.append(frame_of_line(item)[1])
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut by the last flush
    except (OSError, EOFError, zlib.error) as exc:
        if len(frames) < count:
            return frames, f"{path.name}: {len(frames)} of the {count} frames so far could be read ({exc})"
    return frames, None


class TapLink(QObject):
    def __init__(self, window: MainWindow, path: str | Path | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.path = Path(path) if path is not None else socket_path()
        self.server: asyncio.AbstractServer | None = None
        self.sessions: list[TappedSession] = []
        self.problem: str | None = None  # why this window hears no taps
        self._tasks: set[asyncio.Task[Any]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.act_tap = QAction("Tap a host's server…", window)
        self.act_tap.setObjectName("actionTapHost")
        self.act_tap.setToolTip("Make Claude Desktop, Cursor, VS Code or Claude Code start one of its servers "
                                "through `spyglass tap`, to watch their conversation here")
        self.act_tap.triggered.connect(self.tap_dialog)
        menu = window.findChild(QMenu, "serverMenu")
        if menu is not None:
            actions = menu.actions()
            after = next((i for i, a in enumerate(actions) if a.objectName() == "actionAddDemo"), None)
            menu.insertAction(actions[after + 1] if after is not None and after + 1 < len(actions) else None,
                              self.act_tap)
        pane = window.tabs.findChild(InterceptPane, "interceptPane")  # one tab, however many links listen
        if pane is None:
            pane = InterceptPane(window.store, window.tabs)
            page = QScrollArea(window.tabs)  # scrolls in a small window: the tabs' least height stays the others'
            page.setObjectName("interceptPage")
            page.setWidgetResizable(True)
            page.setFrameShape(QFrame.NoFrame)
            page.setWidget(pane)
            pane.page = page
            tab = window.tabs.addTab(page, "Intercept")
            window.tabs.setTabToolTip(tab, "Hold the host's or the server's messages that match a filter, edit "
                                           "them, forward or drop them")
            window.tabs.setTabVisible(tab, False)
        self.intercept_pane: InterceptPane = pane
        window.selectionChanged.connect(self._selected)

    def _selected(self) -> None:
        """The Intercept tab is there for a tapped server only, showing its intercept."""
        w = self.window
        if not shiboken6.isValid(w):
            return
        conn = w.selected_connection()
        session = conn.session if conn is not None else None
        tapped = isinstance(session, TappedSession)
        tab = w.tabs.indexOf(self.intercept_pane.page)
        if not tapped and w.tabs.currentIndex() == tab:
            w.tabs.setCurrentIndex(0)
        w.tabs.setTabVisible(tab, tapped)
        self.intercept_pane.show_link(session.intercept if isinstance(session, TappedSession) else None)

    def show_intercept(self) -> InterceptPane:
        """Bring the selected tapped server's Intercept tab forward."""
        self.window.tabs.setCurrentIndex(self.window.tabs.indexOf(self.intercept_pane.page))
        return self.intercept_pane

    def tap_dialog(self) -> TapHostDialog:
        return show_sheet(TapHostDialog(self.window))

    # ------------------------------------------------------------------ listening
    def start(self) -> asyncio.Task[Any] | None:
        return spawn(self.listen(), self._tasks, lambda exc: self._cannot(f"{type(exc).__name__}: {exc}"),
                     "listening for taps")

    async def listen(self) -> bool:
        """Own the socket; False (and `problem` says why) when another window has it or it cannot be made."""
        if not hasattr(socket, "AF_UNIX"):
            self._cannot("this system has no Unix sockets")
            return False
        try:
            own_folder(self.path.parent)
            there = own_socket(self.path)
        except NotPrivate as exc:
            self._cannot(f"the tap socket is not safe: {exc}", unsafe=True)
            return False
        if there:
            if await self._taken():
                self._cannot("another Spyglass window receives the taps")
                return False
            with contextlib.suppress(OSError):
                self.path.unlink()  # left by a window that did not close
        try:
            self.server = await asyncio.start_unix_server(self._client, path=str(self.path), limit=LINE_LIMIT)
            os.chmod(self.path, 0o600)
        except OSError as exc:
            self._cannot(f"cannot listen on {self.path}: {exc.strerror or exc}")
            return False
        return True

    async def _taken(self) -> bool:
        try:
            _reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(self.path)), 1.0)
        except (TimeoutError, OSError):
            return False
        writer.close()
        with contextlib.suppress(OSError, ConnectionError):
            await writer.wait_closed()
        return True

    def _cannot(self, why: str, unsafe: bool = False) -> None:
        self.problem = why
        if unsafe:  # not another window's doing: the user has to act, so the banner says it
            log.warning("taps are not received here: %s", why)
            if shiboken6.isValid(self.window):
                self.window.show_banner(f"Taps are not received: {why}", level="warning")
        else:
            log.info("taps are not received here: %s", why)

    async def close(self) -> None:
        server, self.server = self.server, None
        for writer in list(self._writers):
            writer.close()
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await server.wait_closed()
            with contextlib.suppress(OSError):
                self.path.unlink()
        for session in self.sessions:
            if session.live:
                session.ended("the window stopped listening")

    # ------------------------------------------------------------------ one tap
    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        session: TappedSession | None = None
        problem = peer_problem(writer.get_extra_info("socket"))
        if problem is not None:
            log.warning("a connection to the tap socket was closed: %s", problem)
            writer.close()
            return
        self._writers.add(writer)
        try:
            first = await reader.readline()
            hello = json.loads(first) if first else None
            if not isinstance(hello, dict) or hello.get("tap") != 1:
                return  # not a tap (or one of a version this window does not speak): nothing shown
            session = self._begin(hello, writer)
            if session is None:
                return
            await self._catch_up(session, hello)
            while True:
                line = await reader.readline()
                if not line:
                    if session.status.value != "exited":
                        session.ended("the tap went away without saying goodbye")
                    return
                if not session.live:
                    continue  # the user stopped following it: read on, so the tap is never held up
                self._line(session, line)
        except (ValueError, asyncio.LimitOverrunError, ConnectionError) as exc:
            if session is not None:
                session.log.note(f"the tap's feed broke: {exc}", level="error")
                session.ended("its feed broke")
        finally:
            self._writers.discard(writer)
            writer.close()

    def _begin(self, hello: dict[str, Any], writer: asyncio.StreamWriter) -> TappedSession | None:
        w = self.window
        if not shiboken6.isValid(w):
            return None
        header = hello.get("header") if isinstance(hello.get("header"), dict) else {}
        servers = header.get("servers") if isinstance(header.get("servers"), list) else []
        entry = next((s for s in servers if isinstance(s, dict)), {})
        definition = entry.get("definition") if isinstance(entry.get("definition"), dict) else {}
        name = str(hello.get("server") or definition.get("name") or "server")
        session = TappedSession(w.unique_id(f"{name} (tapped)"), {**definition, "name": name})
        session.session_file = hello.get("session") if isinstance(hello.get("session"), str) else None
        session.intercept = InterceptLink(hello, lambda message: self._tell(writer, message))
        self.sessions.append(session)
        first = not w.servers.connections
        w.add_server(session.spec, connect=False, select=first or w.selected_connection() is None,
                     session=session)
        session.changed.connect(lambda kind, s=session: self._renamed(s) if kind == "status" else None)
        where = f"; recorded in {session.session_file}" if session.session_file else ""
        w.statusBar().showMessage(f"Tapping {name}{where}.", 8000)
        return session

    @staticmethod
    def _tell(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        """A line to a tap (intercept): buffered, never awaited, so the window never waits on a tap."""
        if not writer.is_closing():
            writer.write(json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n")

    def _renamed(self, session: TappedSession) -> None:
        w = self.window
        if session.spec.name != session.title and shiboken6.isValid(w):
            session.spec.name = session.title
            conn = next((c for c in w.servers.connections if c.session is session), None)
            if conn is not None:
                w.servers.refresh(conn)

    async def _catch_up(self, session: TappedSession, hello: dict[str, Any]) -> None:
        count = hello.get("frames")
        path = session.session_file
        if not isinstance(count, int) or count <= 0 or path is None:
            return
        frames, problem = await asyncio.to_thread(read_frames, Path(path), count)
        if problem:
            session.log.note(problem, level="warning")
        for i in range(0, len(frames), CATCH_UP_BATCH):
            for frame in frames[i:i + CATCH_UP_BATCH]:
                session.feed(frame)
            await asyncio.sleep(0)  # the window paints between batches

    def _line(self, session: TappedSession, line: bytes) -> None:
        item = json.loads(line)
        if not isinstance(item, dict):
            return
        if "server" in item:
            session.feed(frame_of_line(item)[1])
        elif any(key in item for key in INTERCEPT_KEYS):
            if session.intercept is not None and session.intercept.receive(item) and "held" in item:
                held = session.intercept.held.get(item["held"].get("hold"))
                if held is not None and shiboken6.isValid(self.window):
                    self.window.statusBar().showMessage(f"{session.title}: a {held.arrow} message is held "
                                                        "(its Intercept tab)", 8000)
        elif "skipped" in item:
            session.log.note(f"the window was slow: {item['skipped']} frames were not sent live; the session "
                             "file has them", level="warning")
        elif item.get("end"):
            session.ended()
