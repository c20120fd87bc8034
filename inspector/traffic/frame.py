"""The record of one frame on the wire (or one stderr line), as the client reports it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
