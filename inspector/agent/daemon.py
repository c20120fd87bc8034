"""The per-user background process that holds an agent's named connections between commands, and the
client that reaches it: `spyglass do` and `spyglass mcp` both talk to it, so a shell script and an agent's
MCP session see the same servers and the same traffic.

The socket lives in a 0700 folder the user owns (`private.own_folder`: the tap's runtime folder), and each
end checks the other's user id (`private.peer_problem`, SO_PEERCRED). One JSON object a line: a request
`{"id", "tool", "arguments", "allowWrites", "pairs"?}` names a tool of `tools.TOOLS`; the reply
`{"id", "ok": true, "result"}` or `{"id", "ok": false, "error": {"code", "message", …}}`. Requests run
concurrently. The process exits after `idle` seconds without a client or a request, closing its servers;
every stdio server it starts dies with it even when it is killed (PR_SET_PDEATHSIG, in the hub).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..private import NotPrivate, own_folder, own_socket, peer_problem
from .hub import AgentError, Connection, Hub, error_of
from .ops import Ops, refuse_writes
from .tools import run

log = logging.getLogger("spyglass.agent.daemon")

SOCKET_ENV = "SPYGLASS_AGENT_SOCKET"
IDLE_ENV = "SPYGLASS_AGENT_IDLE"
IDLE_S = 900.0
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


class Daemon:
    def __init__(self, path: Path, idle: float = IDLE_S) -> None:
        self.path = path
        self.idle = idle
        self.hub = Hub()
        self.ops = Ops(self.hub)
        self.clients = 0
        self.busy = 0
        self.last = time.monotonic()
        self.done = asyncio.Event()

    async def gate(self, allow: bool, conn: Connection, tool: dict[str, Any], arguments: dict[str, Any]) -> None:
        if not allow:
            await refuse_writes(conn, tool, arguments)

    async def serve(self) -> None:
        own_folder(self.path.parent)
        if own_socket(self.path):
            if await _alive(self.path):
                return  # another background process got there first: it serves
            self.path.unlink()
        server = await asyncio.start_unix_server(self._client, path=str(self.path), limit=LINE_LIMIT)
        os.chmod(self.path, 0o600)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, self.done.set)
        watch = asyncio.ensure_future(self._watch_idle())
        try:
            await self.done.wait()
        finally:
            watch.cancel()
            server.close()
            with contextlib.suppress(OSError):
                self.path.unlink()
            await self.hub.close_all()

    async def _watch_idle(self) -> None:
        while True:
            await asyncio.sleep(min(self.idle, 5.0))
            if not self.clients and not self.busy and time.monotonic() - self.last >= self.idle:
                self.done.set()
                return

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        problem = peer_problem(writer.get_extra_info("socket"))
        if problem:
            writer.close()
            return
        self.clients += 1
        lock = asyncio.Lock()
        tasks: set[asyncio.Task[None]] = set()
        try:
            while line := await reader.readline():
                task = asyncio.ensure_future(self._answer(line, writer, lock))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except (ConnectionError, ValueError):
            pass
        finally:
            self.clients -= 1
            self.last = time.monotonic()
            for task in tasks:
                task.cancel()
            writer.close()

    async def _answer(self, line: bytes, writer: asyncio.StreamWriter, lock: asyncio.Lock) -> None:
        self.busy += 1
        rid: Any = None
        try:
            try:
                request = json.loads(line)
                rid = request.get("id")
                result = await self.handle(request)
                reply: dict[str, Any] = {"id": rid, "ok": True, "result": result}
            except (ValueError, AttributeError):
                reply = {"id": rid, "ok": False, "error": {"code": "usage", "message": "not a JSON request"}}
            except AgentError as exc:
                reply = {"id": rid, "ok": False, "error": exc.as_json()}
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bug of ours: an answer, and the process lives on
                log.exception("request failed")
                reply = {"id": rid, "ok": False, "error": error_of(exc).as_json()}
            async with lock:
                writer.write(json.dumps(reply, ensure_ascii=False, default=str).encode() + b"\n")
                with contextlib.suppress(ConnectionError):
                    await writer.drain()
        finally:
            self.busy -= 1
            self.last = time.monotonic()

    async def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        tool = request.get("tool")
        if tool == "stop":
            self.done.set()
            return {"stopping": True}
        allow = request.get("allowWrites") is True
        ops = Ops(self.hub, lambda c, t, a: self.gate(allow, c, t, a))
        pairs = request.get("pairs")
        return await run(ops, str(tool), request.get("arguments"), pairs=pairs if isinstance(pairs, dict) else None)


async def _alive(path: Path) -> bool:
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
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._listen: asyncio.Task[None] | None = None
        self.started = False  # this client started the background process

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
        if self._writer is None:
            raise AgentError("the background process is not running", "not_running")

    async def _open(self) -> bool:
        try:
            if not own_socket(self.path):
                return False
            reader, writer = await asyncio.open_unix_connection(str(self.path), limit=LINE_LIMIT)
        except NotPrivate as exc:
            raise AgentError(f"refusing the background process's socket: {exc}", "not_private") from None
        except OSError:
            return False
        problem = peer_problem(writer.get_extra_info("socket"))
        if problem:
            writer.close()
            raise AgentError(f"refusing the background process's socket: {problem}", "not_private")
        self._reader, self._writer = reader, writer
        self._listen = asyncio.ensure_future(self._read())
        return True

    async def _read(self) -> None:
        assert self._reader is not None
        try:
            while line := await self._reader.readline():
                reply = json.loads(line)
                future = self._pending.pop(reply.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(reply)
        except (ConnectionError, ValueError):
            pass
        for future in self._pending.values():
            if not future.done():
                future.set_exception(AgentError("the background process went away during the request", "closed"))
        self._pending.clear()

    async def request(self, tool: str, arguments: Any = None, *, allow_writes: bool = False,
                      pairs: dict[str, str] | None = None) -> dict[str, Any]:
        if self._writer is None or self._writer.is_closing():
            raise AgentError("not connected to the background process", "closed")
        rid = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        body: dict[str, Any] = {"id": rid, "tool": tool, "arguments": {} if arguments is None else arguments,
                                "allowWrites": allow_writes}
        if pairs is not None:
            body["pairs"] = pairs
        self._writer.write(json.dumps(body, ensure_ascii=False).encode() + b"\n")
        await self._writer.drain()
        reply = await future
        if reply.get("ok"):
            result = reply.get("result")
            return result if isinstance(result, dict) else {}
        error = reply.get("error") or {}
        details = {k: v for k, v in error.items() if k not in ("code", "message")}
        raise AgentError(str(error.get("message")), str(error.get("code", "error")), **details)

    async def ask(self, tool: str, arguments: Any, *, allow_writes: bool = False) -> dict[str, Any]:
        """`request`, connecting first (and starting the background process again if it went away)."""
        if self._writer is None or self._writer.is_closing() or self._listen is None or self._listen.done():
            await self.close()
            self._writer = None
            await self.connect()
        return await self.request(tool, arguments, allow_writes=allow_writes)

    async def close(self) -> None:
        if self._listen is not None:
            self._listen.cancel()
        if self._writer is not None:
            self._writer.close()


def log_path(path: Path) -> Path:
    return path.with_name("agent.log")


def spawn(path: Path, idle: float | None = None) -> subprocess.Popen[bytes]:
    """Start the background process, detached (its own session), its stderr into a log beside the socket."""
    from ..private import open_private

    env = dict(os.environ)
    env[SOCKET_ENV] = str(path)
    if idle is not None:
        env[IDLE_ENV] = str(idle)
    with open_private(log_path(path), "ab") as err:
        return subprocess.Popen([sys.executable, "-m", "inspector", "do", "--serve"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True)


def serve_forever() -> int:
    """`spyglass do --serve`: be the background process until idle or told to stop."""
    try:
        idle = float(os.environ.get(IDLE_ENV) or IDLE_S)
    except ValueError:
        idle = IDLE_S
    asyncio.run(Daemon(socket_path(), idle).serve())
    return 0
