"""Is the server there, and how chatty is it: ping round trips (legacy `ping`; a `server/discover` in
2026-07-28, which has no ping), the modern heartbeat, and the server's log level.

The heartbeat's requests are marked (`HEARTBEAT`) so that views can keep them out of sight: recorded
like every frame, they would otherwise bury a session's real traffic within minutes.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from typing import TYPE_CHECKING, Any

from .. import errors as E

if TYPE_CHECKING:
    from ..client import Client
    from .server import ServerSession

log = logging.getLogger("spyglass.session.health")

HEARTBEAT_S = 15.0
HEARTBEATS_KEPT = 1024  # heartbeat request ids remembered, for telling their frames apart


class RecentIds:
    """A bounded set of request ids: the newest `limit` kept."""

    def __init__(self, limit: int = HEARTBEATS_KEPT) -> None:
        self.limit = limit
        self._ids: collections.OrderedDict[Any, None] = collections.OrderedDict()

    def add(self, request_id: Any) -> None:
        self._ids[request_id] = None
        while len(self._ids) > self.limit:
            self._ids.popitem(last=False)

    def clear(self) -> None:
        self._ids.clear()

    def __contains__(self, request_id: object) -> bool:
        try:
            return request_id in self._ids
        except TypeError:  # an unhashable id from a peer
            return False


class Health:
    def __init__(self, session: ServerSession) -> None:
        self.session = session
        self._beat: asyncio.Task[None] | None = None
        self.heartbeat_ids = RecentIds()
        self.reset()

    def reset(self) -> None:
        self.log_level: str | None = None
        self.last_rtt: float | None = None
        self.last_ping_at: float | None = None
        self.ping_error: str | None = None
        self.reachable: bool | None = None

    async def set_log_level(self, level: str) -> None:
        await self.session.need_client().set_log_level(level)
        self.log_level = level
        self.session.log.note(f"log level set to {level}" + (" (sent in _meta of every request)"
                                                               if self.session.modern else " (logging/setLevel)"))
        self.session.changed.emit("health")

    async def ping(self, *, heartbeat: bool = False) -> float:
        client = self.session.need_client()
        try:
            rtt = await client.ping(on_id=self.heartbeat_ids.add if heartbeat else None)
        except E.SpyglassError as exc:
            if client is self.session.client:
                self.ping_error, self.reachable, self.last_ping_at = exc.message, False, time.time()
                self.session.changed.emit("health")
            raise
        self.last_rtt, self.ping_error, self.reachable, self.last_ping_at = rtt, None, True, time.time()
        self.session.changed.emit("health")
        return rtt

    def start_heartbeat(self, client: Client, every: float) -> None:
        self.stop()
        self._beat = asyncio.ensure_future(self._heartbeat(client, every))

    def stop(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
            self._beat = None

    async def _heartbeat(self, client: Client, every: float) -> None:
        """A server/discover every `every` seconds shows whether the server is reachable."""
        while client is self.session.client and client.closed is None:
            try:
                await self.ping(heartbeat=True)
            except E.SpyglassError:
                pass  # shown as unreachable
            except Exception:  # a bug of ours must not end the checks silently
                log.exception("server/discover heartbeat of %s", self.session.name)
            await asyncio.sleep(every)
