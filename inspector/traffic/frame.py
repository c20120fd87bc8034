"""The record of one frame on the wire (or one stderr line), as the client reports it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..protocol import jsonrpc as rpc
from .columns import HEAD_MAX


@dataclass(slots=True)
class Frame:
    """`direction` is "out" (we sent it), "in" (the server sent it), "err" (a
    stderr line or transport log) or "http" (one HTTP exchange: `data` is a JSON
    summary of method, URL, status and headers with secrets masked). For the
    others `data` is exactly what went over the wire."""

    direction: str
    data: bytes
    mono: float
    wall: float
    malformed: str | None = None
    # For "in" frames: what `inspector.protocol.jsonrpc.parse` made of `data`
    # (a Request, Notification, Response, ErrorResponse or Malformed). None for
    # "out" and "err" frames; parse `data` when you need it.
    message: Any = None
    # Transport details: HTTP stream, SSE event id, status… (None on stdio).
    meta: dict[str, Any] | None = None

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


def plain_notification(f: Frame) -> bool:
    """A notification the server sent, parsed, with nothing unusual about it."""
    return (f.direction == "in" and type(f.message) is rpc.Notification and f.malformed is None and not f.meta
            and len(f.data) <= HEAD_MAX)


class Hook:
    """`TrafficStore.hook`: records a server's frames, one at a time or a read's worth (`many`)."""

    __slots__ = ("server_id", "store")

    def __init__(self, store: Any, server_id: str) -> None:
        self.store, self.server_id = store, server_id

    def __call__(self, frame: Frame) -> None:
        self.store.add(self.server_id, frame)

    def many(self, frames: list[Frame]) -> None:
        self.store.add_many(self.server_id, frames)
