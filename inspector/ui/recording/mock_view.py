"""*Serve as mock…* (`mockDialog`): the selected recorded server served as a mock (`inspector.mock`, as
`spyglass mock` serves it). Over stdio (`mockStdio`) the dialog shows the command line a host launches
(`mockAddress`) and copies it (on opening, and with `mockCopy`); over HTTP (`mockHttp`) *Start*
(`mockStart`) serves it on loopback from this window's loop and copies the URL — it keeps serving until
*Stop* or until the session window closes (`MockServing`, owned by the session window). *Add as a
server* (`mockAddServer`) adds the mock to the main window like any other server: the command over
stdio, the URL over HTTP. What the mock says (requests it answered by the closest arguments, requests
it could not answer) is listed in `mockLog`.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from ...config import ServerSpec
from ...mock.book import Book
from ...mock.http import HttpMock
from ...mock.server import MockServer
from ...recording.files import Opened
from ...recording.surface import ServerSurface
from ..base.layout import text_label
from ..base.tasks import spawn
from ..base.text import visible


def mock_command(opened: Opened, surface: ServerSurface) -> list[str]:
    """The command line that serves `surface` of the session file as a mock over stdio."""
    program = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "inspector"]
    command = [*program, "mock", str(opened.path.resolve())]
    if len([s for s in opened.surfaces.values() if s.frames]) > 1:
        command += ["--server", surface.server_id]
    return command


class MockServing:
    """The HTTP mocks a session window serves, one per recorded server at most; closed with the window."""

    def __init__(self, opened: Opened) -> None:
        self.opened = opened
        self.fronts: dict[str, tuple[HttpMock, str]] = {}  # server id -> (front, URL)
        self.said: dict[str, list[str]] = {}
        self.listeners: list[Callable[[str, str], None]] = []
        self.tasks: set[asyncio.Task[Any]] = set()

    def url(self, surface: ServerSurface) -> str | None:
        front = self.fronts.get(surface.server_id)
        return front[1] if front is not None else None

    async def start(self, surface: ServerSurface) -> str:
        if surface.server_id in self.fronts:
            return self.fronts[surface.server_id][1]
        said = self.said.setdefault(surface.server_id, [])

        def say(line: str) -> None:
            said.append(line)
            for listener in list(self.listeners):
                listener(surface.server_id, line)

        front = HttpMock(MockServer(Book(surface, self.opened.store), say=say))
        port = await front.start("127.0.0.1", 0)
        url = f"http://127.0.0.1:{port}/mcp"
        self.fronts[surface.server_id] = (front, url)
        return url

    def stop(self, surface: ServerSurface) -> None:
        front = self.fronts.pop(surface.server_id, None)
        if front is not None:
            spawn(front[0].close(), self.tasks, lambda _exc: None, "stopping a mock")

    def close(self) -> None:
        for front, _url in self.fronts.values():
            spawn(front.close(), self.tasks, lambda _exc: None, "stopping a mock")
        self.fronts.clear()


class MockDialog(QDialog):
    """`add_server(spec)`: the main window's way to add a server (None: the button is not offered)."""

    def __init__(self, opened: Opened, surface: ServerSurface, serving: MockServing, parent: QWidget | None = None,
                 *, add_server: Callable[[ServerSpec], Any] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mockDialog")
        self.setWindowTitle(f"Serve {visible(surface.name, 60)} as a mock")
        self.opened, self.surface, self.serving, self.add_server = opened, surface, serving, add_server
        self.tasks: set[asyncio.Task[Any]] = set()
        self.about = text_label(f"{visible(surface.name, 80)} ({surface.revision or 'unknown revision'}) answers "
                                "every request as it did in this recording: the same handshake, the recorded "
                                "answers, notifications and questions. A client can use it with no network and "
                                "no credentials.", self, name="mockAbout")
        self.stdio = QRadioButton("Over stdio: a command a host launches", self)
        self.stdio.setObjectName("mockStdio")
        self.http = QRadioButton("Over HTTP on this computer (127.0.0.1)", self)
        self.http.setObjectName("mockHttp")
        group = QButtonGroup(self)
        for button in (self.stdio, self.http):
            group.addButton(button)
        self.address = QLineEdit(self)
        self.address.setObjectName("mockAddress")
        self.address.setReadOnly(True)
        self.copy = QPushButton("Copy", self)
        self.copy.setObjectName("mockCopy")
        self.copy.clicked.connect(self.copy_address)
        self.start = QPushButton("Start", self)
        self.start.setObjectName("mockStart")
        self.start.clicked.connect(self.toggle)
        self.add = QPushButton("Add as a server", self)
        self.add.setObjectName("mockAddServer")
        self.add.setToolTip("Add the mock to the main window's servers, as any other server")
        self.add.clicked.connect(self.add_as_server)
        self.add.setVisible(add_server is not None)
        self.status = text_label("", self, name="mockStatus", role="muted")
        self.log = QListWidget(self)
        self.log.setObjectName("mockLog")
        self.log.setToolTip("Requests the mock answered by the closest recorded one, or could not answer")
        self.log_caption = text_label("Requests the mock could not answer exactly (answered by the closest recorded "
                                      "one, or not answered):", self, name="mockLogCaption")
        row = QHBoxLayout()
        row.addWidget(self.address, 1)
        row.addWidget(self.copy)
        row.addWidget(self.start)
        lay = QVBoxLayout(self)
        lay.addWidget(self.about)
        lay.addWidget(self.stdio)
        lay.addWidget(self.http)
        lay.addLayout(row)
        lay.addWidget(self.status)
        lay.addWidget(self.log_caption)
        lay.addWidget(self.log, 1)
        lay.addStretch(0)  # the room the log leaves over stdio
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.add)
        close = QPushButton("Close", self)
        close.setObjectName("mockClose")
        close.clicked.connect(self.close)
        bottom.addWidget(close)
        lay.addLayout(bottom)
        for line in serving.said.get(surface.server_id, []):
            self.log.addItem(visible(line, 300))
        serving.listeners.append(self._said)
        self.finished.connect(lambda _r: self._forget())
        self.stdio.toggled.connect(lambda _on: self._show())
        (self.http if serving.url(surface) else self.stdio).setChecked(True)
        self._show()
        self.copy_address()  # what the user came for: the command line (or the URL being served), copied
        self.resize(760, 420)

    def _forget(self) -> None:
        if self._said in self.serving.listeners:
            self.serving.listeners.remove(self._said)

    def closeEvent(self, event: Any) -> None:
        self._forget()
        super().closeEvent(event)

    def _said(self, server_id: str, line: str) -> None:
        if server_id == self.surface.server_id:
            self.log.addItem(visible(line, 300))

    def _show(self) -> None:
        url = self.serving.url(self.surface)
        # over stdio the mock runs in the host's process: nothing it says comes here
        self.log.setVisible(self.http.isChecked())
        self.log_caption.setVisible(self.http.isChecked())
        if self.stdio.isChecked():
            self.address.setText(shlex.join(mock_command(self.opened, self.surface)))
            self.start.hide()
            self.add.setEnabled(True)
            self.status.setText("Give this command to a host (or a client's test) as the server's command.")
            return
        self.start.show()
        self.start.setText("Stop" if url else "Start")
        self.address.setText(url or "")
        self.add.setEnabled(url is not None)
        self.status.setText(f"Serving at {url} until you stop it or close this session." if url else
                            "Start serves the mock on a free port of 127.0.0.1 and copies its URL.")

    def copy_address(self) -> None:
        if self.address.text():
            QGuiApplication.clipboard().setText(self.address.text())
            self.status.setText(f"{'The command line' if self.stdio.isChecked() else 'The URL'} is copied.")

    def toggle(self) -> asyncio.Task[Any] | None:
        if self.serving.url(self.surface):
            self.serving.stop(self.surface)
            self._show()
            return None
        self.start.setEnabled(False)
        return spawn(self._start(), self.tasks, self._failed, "starting a mock")

    async def _start(self) -> None:
        try:
            url = await self.serving.start(self.surface)
        finally:
            self.start.setEnabled(True)
        self._show()
        QGuiApplication.clipboard().setText(url)
        self.status.setText(f"Serving at {url} (copied) until you stop it or close this session.")

    def _failed(self, exc: BaseException) -> None:
        self.status.setText(f"The mock could not start: {visible(str(exc), 300)}")

    def add_as_server(self) -> Any:
        if self.add_server is None:
            return None
        name = f"{self.surface.name} (mock)"
        if self.stdio.isChecked():
            spec = ServerSpec(name=name, command=mock_command(self.opened, self.surface))
        else:
            url = self.serving.url(self.surface)
            if url is None:
                return None
            spec = ServerSpec(name=name, url=url)
        added = self.add_server(spec)
        self.status.setText(f"{name} is now one of the main window's servers.")
        return added
