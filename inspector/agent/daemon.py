"""The per-user background process that holds an agent's named connections between commands: `spyglass do`
and `spyglass mcp` both reach it (`remote.Remote`), so a shell script and an agent's MCP session see the
same servers and the same traffic.

It listens on `remote.socket_path()` (a 0700 folder of the user's; the socket 0600; the peer's user id
checked), runs requests concurrently, each a tool of `tools.TOOLS` with the same checks and refusals as
`spyglass mcp`, and exits after `idle` seconds without a client or a request, closing its servers. Every
stdio server it starts dies with it even when it is killed (PR_SET_PDEATHSIG, in the hub).
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
from .remote import IDLE_ENV, Lines, alive, socket_path
from .tools import run
from .watch import Watchers

log = logging.getLogger("spyglass.agent.daemon")

IDLE_S = 900.0


class Daemon:
    def __init__(self, path: Path, idle: float = IDLE_S) -> None:
        self.path = path
        self.idle = idle
        self.hub = Hub()
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

    async def _watch_idle(self) -> None:
        while True:
            await asyncio.sleep(min(self.idle, 5.0))
            if not self.clients and not self.busy and time.monotonic() - self.last >= self.idle:
                self.done.set()
                return

    async def answer(self, line: bytes, peer: Peer) -> None:
        self.busy += 1
        rid: Any = None
        try:
            try:
                request = json.loads(line)
                rid = request.get("id")
                result = await self.handle(request, peer.send)
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
    so requests overlap; when it goes, its requests are cancelled and it stops watching."""

    def __init__(self, daemon: Daemon) -> None:
        super().__init__(self._request)
        self.daemon = daemon
        self.tasks: set[asyncio.Task[None]] = set()
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
        task = asyncio.ensure_future(self.daemon.answer(line, self))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def send(self, event: dict[str, Any]) -> None:
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


def serve_forever() -> int:
    """`spyglass do --serve`: be the background process until idle or told to stop."""
    try:
        idle = float(os.environ.get(IDLE_ENV) or IDLE_S)
    except ValueError:
        idle = IDLE_S
    asyncio.run(Daemon(socket_path(), idle).serve())
    return 0
