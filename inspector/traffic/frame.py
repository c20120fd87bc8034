"""The record of one frame on the wire (or one stderr line), as the client reports it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Frame:
    """`direction` is "out" (we sent it), "in" (the server sent it) or "err"
    (a stderr line or transport log). `data` is exactly what went over the wire."""

    direction: str
    data: bytes
    mono: float
    wall: float
    malformed: str | None = None
    # For "in" frames: what `inspector.protocol.jsonrpc.parse` made of `data`
    # (a Request, Notification, Response, ErrorResponse or Malformed). None for
    # "out" and "err" frames; parse `data` when you need it.
    message: Any = None

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")
