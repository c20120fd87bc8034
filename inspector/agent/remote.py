"""The client side of the agent's background process: where its socket is, starting it on demand, and one
connection to it on which requests may overlap (`Remote`). Standard library and `private` only, so
`spyglass do` starts fast; the background process itself is `daemon.py`.

One JSON object a line: a request `{"id", "tool", "arguments", "allowWrites", "pairs"?}` names a tool of
`tools.TOOLS` (or `stop`); the reply is `{"id", "ok": true, "result"}` or `{"id", "ok": false, "error":
{"code", "message", …}}`. A caller that gives up on a request it sent (its task cancelled: the window's Cancel,
the agent's `notifications/cancelled`, Ctrl-C) sends `{"cancel": ID}` on the same connection: the background
process cancels that request's work (a call still running is cancelled on the wire, so the server is sent
`notifications/cancelled`) and sends no reply to it. An id that is not running there (answered already, or
never sent) is ignored; a background process too old to know the message answers it as a request naming no
tool, for id null, which `_read` drops. A connection that closes cancels every request of its own still
running. The socket's folder is 0700 and the user's
(`private.own_folder`), and each end checks the other's user id (`private.peer_problem`, SO_PEERCRED).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..private import NotPrivate, own_folder, own_socket, peer_problem
from .errors import AgentError

SOCKET_ENV = "SPYGLASS_AGENT_SOCKET"
IDLE_ENV = "SPYGLASS_AGENT_IDLE"
START_WAIT_S = 15.0
LINE_LIMIT = 64 * 1024 * 1024


def socket_path() -> Path:
    """$SPYGLASS_AGENT_SOCKET, else `agent.sock` in the user's runtime folder (beside the tap's socket)."""
    named = os.environ.get(SOCKET_ENV)
    if named:
        return Path(named)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "spyglass" / "agent.sock"
    uid = os.getuid() if hasattr(os, "getuid") else os.getpid()
    return Path(tempfile.gettempdir()) / f"spyglass-{uid}" / "agent.sock"


class Lines(asyncio.Protocol):
    """One end of the background process's socket, a JSON object a line. Each line is handed to `on_line` in the
    loop turn it arrives, with no task reading a stream (a turn less per message, each way); writes are whole
    lines (`write`, then `drain` waits while the peer is slow to read). A line over `limit` bytes closes the
    connection: the stream cannot be followed past it. `lost` is done once the connection is closed."""

    def __init__(self, on_line: Callable[[bytes], None], limit: int = LINE_LIMIT) -> None:
        self.on_line = on_line
        self.limit = limit
        self.transport: asyncio.Transport | None = None
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._buf = bytearray()
        self._paused: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        buf = self._buf
        buf += data
        if b"\n" not in data:
            if len(buf) > self.limit:
                self.close()
            return
        *lines, rest = bytes(buf).split(b"\n")
        self._buf = bytearray(rest)
        for line in lines:
            if len(line) > self.limit:
                self.close()
            if self.closing():
                return
            self.on_line(line)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost.done():
            self.lost.set_result(None)
        self.resume_writing()

    def pause_writing(self) -> None:
        if self._paused is None:
            self._paused = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._paused is not None:
            if not self._paused.done():
                self._paused.set_result(None)
            self._paused = None

    def closing(self) -> bool:
        return self.transport is None or self.transport.is_closing()

    def write(self, data: bytes) -> None:
        if not self.closing():
            assert self.transport is not None
            self.transport.write(data)

    async def drain(self) -> None:
        if self._paused is not None:
            await self._paused

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def alive(path: Path) -> bool:
    try:
        _r, w = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), 2.0)
    except (OSError, TimeoutError):
        return False
    w.close()
    return True


class Remote:
    """One connection to the background process (started when it is not running); requests may overlap."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or socket_path()
        self._lines: Lines | None = None
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self.started = False  # this client started the background process
        self.on_event: Any = None  # a watcher's: called with each event the background process pushes

    async def connect(self, *, start: bool = True) -> None:
        try:
            own_folder(self.path.parent)
        except NotPrivate as exc:
            raise AgentError(f"the background process's folder is not private: {exc}", "not_private") from None
        if not await self._open() and start:
            spawn(self.path)
            self.started = True
            end = time.monotonic() + START_WAIT_S
            while not await self._open():
                if time.monotonic() > end:
                    raise AgentError(f"the background process did not start within {START_WAIT_S:g} s (its log: "
                                     f"{log_path(self.path)})", "connect")
                await asyncio.sleep(0.02)
        if self._lines is None:
            raise AgentError("the background process is not running", "not_running")

    async def _open(self) -> bool:
        loop = asyncio.get_running_loop()
        try:
            if not own_socket(self.path):
                return False
            transport, lines = await loop.create_unix_connection(lambda: Lines(self._line), str(self.path))
        except NotPrivate as exc:
            raise AgentError(f"refusing the background process's socket: {exc}", "not_private") from None
        except OSError:
            return False
        problem = peer_problem(transport.get_extra_info("socket"))
        if problem:
            transport.close()
            raise AgentError(f"refusing the background process's socket: {problem}", "not_private")
        self._lines = lines
        lines.lost.add_done_callback(lambda _f: self._gone())
        return True

    def _line(self, line: bytes) -> None:
        try:
            reply = json.loads(line)
            if "event" in reply:
                if self.on_event is not None:
                    self.on_event(reply)
                return
            future = self._pending.pop(reply.get("id"), None)
        except (ValueError, AttributeError, TypeError):  # not the background process's words: stop listening
            if self._lines is not None:
                self._lines.close()
            return
        if future is not None and not future.done():
            future.set_result(reply)

    def _gone(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(AgentError("the background process went away during the request", "closed"))
        self._pending.clear()

    async def request(self, tool: str, arguments: Any = None, *, allow_writes: bool = False,
                      pairs: dict[str, str] | None = None, client: str | None = None,
                      by: str = "agent") -> dict[str, Any]:
        """Run `tool` in the background process. `client` names the program asking (an agent's MCP clientInfo,
        "spyglass do"), `by` who it acts for (`agent`, or `person`: a call the window's user made): a
        watching window marks the calls so."""
        lines = self._lines
        if lines is None or lines.closing():
            raise AgentError("not connected to the background process", "closed")
        rid = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        body: dict[str, Any] = {"id": rid, "tool": tool, "arguments": anchored(tool, arguments),
                                "allowWrites": allow_writes}
        if pairs is not None:
            body["pairs"] = pairs
        if client:
            body["client"] = client
        if by != "agent":
            body["by"] = by
        lines.write(json.dumps(body, ensure_ascii=False).encode() + b"\n")
        try:
            await lines.drain()
            reply = await future
        except asyncio.CancelledError:  # the caller gave up: so does the background process
            self._pending.pop(rid, None)
            self._cancel(rid)
            raise
        if reply.get("ok"):
            result = reply.get("result")
            return result if isinstance(result, dict) else {}
        error = reply.get("error") or {}
        details = {k: v for k, v in error.items() if k not in ("code", "message")}
        raise AgentError(str(error.get("message")), str(error.get("code", "error")), **details)

    def _cancel(self, rid: int) -> None:
        """Tell the background process to stop request `rid` (written at once: the caller is being cancelled)."""
        if self._lines is not None and not self._lines.closing():
            self._lines.write(json.dumps({"cancel": rid}).encode() + b"\n")

    async def ask(self, tool: str, arguments: Any, *, allow_writes: bool = False,
                  client: str | None = None) -> dict[str, Any]:
        """`request`, connecting first (and starting the background process again if it went away)."""
        if self._lines is None or self._lines.closing():
            await self.close()
            self._lines = None
            await self.connect()
        return await self.request(tool, arguments, allow_writes=allow_writes, client=client)

    async def close(self) -> None:
        if self._lines is not None:
            self._lines.close()


def anchored(tool: str, arguments: Any) -> Any:
    """`arguments` as the caller means them: the background process runs in the folder of whoever started it
    first, so what the caller names relative to its own folder and PATH is made absolute here — the file
    `spyglass_save` writes, and for `spyglass_connect` with a command the working folder (the caller's, when
    none is given) and the program (found on the caller's PATH, when named without a folder)."""
    if not isinstance(arguments, dict):
        return {} if arguments is None else arguments
    path = arguments.get("path")
    if tool == "spyglass_save" and isinstance(path, str) and path:
        return {**arguments, "path": os.path.abspath(os.path.expanduser(path))}
    command = arguments.get("command")
    if tool != "spyglass_connect" or not command or arguments.get("url") or arguments.get("catalog"):
        return arguments
    out = dict(arguments)
    cwd = arguments.get("cwd")
    if cwd is None or (isinstance(cwd, str) and cwd):
        out["cwd"] = os.path.abspath(os.path.expanduser(cwd)) if cwd else os.getcwd()
    program = command[0] if isinstance(command, list) and command else None
    if isinstance(program, str) and program and os.sep not in program and (os.altsep or os.sep) not in program:
        found = shutil.which(program)
        if found:
            out["command"] = [found, *command[1:]]
    return out


def log_path(path: Path) -> Path:
    return path.with_name("agent.log")


def spyglass_program() -> list[str]:
    """How to run this Spyglass again: a bundle's own program when frozen (PyInstaller: it takes the same
    words, `do --serve`, `mcp`), else this Python with the package."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    return [sys.executable, "-m", "inspector"]


def spawn(path: Path, idle: float | None = None) -> subprocess.Popen[bytes]:
    """Start the background process, detached (its own session), its stderr into a log beside the socket."""
    from ..private import open_private

    env = dict(os.environ)
    env[SOCKET_ENV] = str(path)
    if idle is not None:
        env[IDLE_ENV] = str(idle)
    with open_private(log_path(path), "ab") as err:
        return subprocess.Popen([*spyglass_program(), "do", "--serve"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True)


