"""The per-user background process that holds an agent's named connections between commands: `spyglass do`
and `spyglass mcp` both reach it (`remote.Remote`), so a shell script and an agent's MCP session see the
same servers and the same traffic.

It listens on `remote.socket_path()` (a 0700 folder of the user's; the socket 0600; the peer's user id
checked), runs requests concurrently, each a tool of `tools.TOOLS` with the same checks and refusals as
`spyglass mcp`, and exits after `idle` seconds without a client or a request, closing its servers. Every
stdio server it starts dies with it even when it is killed (PR_SET_PDEATHSIG, in the hub).

A client that gives up on one of its requests sends `{"cancel": ID}` (`remote.Remote` does when the task
waiting for the reply is cancelled); a client that goes away gives up on all of its own. Either way the
request's task is cancelled: a call it made on a server is cancelled on the wire (`Ops.call`: the server is
sent `notifications/cancelled`), a call held for approval stops waiting, and no reply is sent for it. A cancel
names a request of its own connection only; one for an id not running there is ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from functools import partial
from pathlib import Path
from typing import Any

from ..private import own_folder, own_socket, peer_problem
from .errors import AgentError
from .hub import Connection, Hub, error_of
from .ops import Ops, refuse_writes
from .reaper import Reaper
from .remote import IDLE_ENV, Lines, alive, socket_path
from .tools import run
from .watch import Watchers

log = logging.getLogger("spyglass.agent.daemon")

IDLE_S = 900.0
WATCH_BACKLOG = 64 * 1024 * 1024  # bytes of events a watcher may leave unread before it is let go


class Daemon:
    def __init__(self, path: Path, idle: float = IDLE_S) -> None:
        self.path = path
        self.idle = idle
        self.reaper = Reaper()
        self.hub = Hub(reaper=self.reaper)
        self.ops = Ops(self.hub)
        self.watchers = Watchers(self.hub)
        self.clients = 0
        self.busy = 0
        self.last = time.monotonic()
        self.done = asyncio.Event()
        self.peers: set[Peer] = set()

    async def gate(self, allow: bool, conn: Connection, tool: dict[str, Any], arguments: dict[str, Any]) -> None:
        """Allowed in advance (--allow-writes), else a watching person decides, else refused."""
        if allow:
            return
        if self.watchers.watching:
            await self.watchers.approve(conn, tool, arguments)
        else:
            await refuse_writes(conn, tool, arguments)

    async def serve(self) -> None:
        own_folder(self.path.parent)
        if own_socket(self.path):
            if await alive(self.path):
                return  # another background process got there first: it serves
            self.path.unlink()
        loop = asyncio.get_running_loop()
        server = await loop.create_unix_server(lambda: Peer(self), path=str(self.path))
        os.chmod(self.path, 0o600)
        self.reaper.start()  # kills what the servers leave behind if this process is killed
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, self.done.set)
        watch = asyncio.ensure_future(self._watch_idle())
        try:
            await self.done.wait()
        finally:
            watch.cancel()
            server.close()
            for peer in list(self.peers):
                peer.close()
            with contextlib.suppress(OSError):
                self.path.unlink()
            await self.hub.close_all()
            self.reaper.stop()

    async def _watch_idle(self) -> None:
        while True:
            await asyncio.sleep(min(self.idle, 5.0))
            if not self.clients and not self.busy and time.monotonic() - self.last >= self.idle:
                self.done.set()
                return

    async def answer(self, request: Any, peer: Peer) -> None:
        self.busy += 1
        rid: Any = None
        try:
            try:
                if not isinstance(request, dict):
                    raise ValueError("not a JSON object")
                rid = request.get("id")
                result = await self.handle(request, peer.send)
                reply: dict[str, Any] = {"id": rid, "ok": True, "result": result}
            except ValueError:
                reply = {"id": rid, "ok": False, "error": {"code": "usage", "message": "not a JSON request"}}
            except AgentError as exc:
                reply = {"id": rid, "ok": False, "error": exc.as_json()}
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bug of ours: an answer, and the process lives on
                log.exception("request failed")
                reply = {"id": rid, "ok": False, "error": error_of(exc).as_json()}
            peer.write(json.dumps(reply, ensure_ascii=False, default=str).encode() + b"\n")  # a whole line at once
            await peer.drain()
        finally:
            self.busy -= 1
            self.last = time.monotonic()

    async def handle(self, request: dict[str, Any], send: Any = None) -> dict[str, Any]:
        tool = request.get("tool")
        if tool == "stop":
            self.done.set()
            return {"stopping": True}
        if tool == "watch" and send is not None:
            return self.watchers.add(send)
        if tool == "decide":
            return self.watchers.decide(request.get("arguments"))
        allow = request.get("allowWrites") is True
        ops = Ops(self.hub, lambda c, t, a: self.gate(allow, c, t, a))
        client = request.get("client")
        by = "person" if request.get("by") == "person" else "agent"
        ops.on_call.append(partial(self.watchers.call_started, by=by,
                                   client=client[:200] if isinstance(client, str) else None))
        pairs = request.get("pairs")
        return await run(ops, str(tool), request.get("arguments"), pairs=pairs if isinstance(pairs, dict) else None)


class Peer(Lines):
    """One client of the background process (its user's, checked): each request line runs as a task of its own,
    so requests overlap; `{"cancel": ID}` cancels one of them; when the client goes, its requests are
    cancelled and it stops watching; a watcher that stops reading is let go."""

    def __init__(self, daemon: Daemon) -> None:
        super().__init__(self._request)
        self.daemon = daemon
        self.tasks: set[asyncio.Task[None]] = set()
        self.running: dict[int | str, asyncio.Task[None]] = {}  # by the id the client gave: what `cancel` names
        self.counted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if peer_problem(transport.get_extra_info("socket")):
            transport.close()
            return
        self.counted = True
        self.daemon.clients += 1
        self.daemon.peers.add(self)

    def _request(self, line: bytes) -> None:
        request = _parsed(line)
        if isinstance(request, dict) and "cancel" in request and "tool" not in request:
            key = _key(request["cancel"])
            given_up = self.running.get(key) if key is not None else None
            if given_up is not None:
                given_up.cancel()
            return
        task = asyncio.ensure_future(self.daemon.answer(request, self))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        key = _key(request.get("id")) if isinstance(request, dict) else None
        if key is not None:
            self.running[key] = task
            task.add_done_callback(partial(_forget, self.running, key))

    def send(self, event: dict[str, Any]) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if transport.get_write_buffer_size() > WATCH_BACKLOG:  # it stopped reading: let it go
            log.warning("a watcher is %d MiB behind the events: detaching it",
                        transport.get_write_buffer_size() // (1024 * 1024))
            self.daemon.watchers.remove(self.send)
            transport.abort()  # what it did not read is dropped, not kept in memory
            return
        self.write(json.dumps(event, ensure_ascii=False, default=str).encode() + b"\n")

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self.counted:
            return
        self.counted = False
        daemon = self.daemon
        daemon.peers.discard(self)
        daemon.watchers.remove(self.send)
        daemon.clients -= 1
        daemon.last = time.monotonic()
        for task in self.tasks:
            task.cancel()


def _parsed(line: bytes) -> Any:
    """A request line's JSON value, or None when it is not JSON."""
    try:
        return json.loads(line)
    except ValueError:  # UnicodeDecodeError too
        return None


def _key(rid: Any) -> int | str | None:
    """A request id `cancel` can name: a number or a string (JSON's true is not the number 1)."""
    return rid if isinstance(rid, (int, str)) and not isinstance(rid, bool) else None


def _forget(running: dict[int | str, asyncio.Task[None]], key: int | str, task: asyncio.Task[None]) -> None:
    if running.get(key) is task:  # a later request may have reused the id
        del running[key]


def serve_forever() -> int:
    """`spyglass do --serve`: be the background process until idle or told to stop."""
    try:
        idle = float(os.environ.get(IDLE_ENV) or IDLE_S)
    except ValueError:
        idle = IDLE_S
    asyncio.run(Daemon(socket_path(), idle).serve())
    return 0
