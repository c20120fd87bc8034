"""The transport interface the client drives (asyncio, no Qt)."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Callable

from ..protocol import Oversize

FrameCallback = Callable[[bytes | Oversize, float], None]
"""A frame exactly as received (or an oversize marker), with its monotonic time."""
LogCallback = Callable[[bytes, float], None]
"""One stderr line (without newline) or other transport-level log text."""


@dataclass(frozen=True)
class Closed:
    """Why the transport ended: `exit_code` for processes, `reason` always."""

    reason: str
    exit_code: int | None = None
    expected: bool = False  # we asked for it


CloseCallback = Callable[[Closed], None]


class Transport(abc.ABC):
    """Frames in, frames out. Callbacks are set by the client before `open()`."""

    on_frame: FrameCallback
    on_log: LogCallback
    on_close: CloseCallback
    on_sent: Callable[[bytes, float], None] | None = None

    @abc.abstractmethod
    async def open(self) -> None:
        """Start the process or connection; raise ConnectError on failure."""

    @abc.abstractmethod
    async def send(self, data: bytes) -> None:
        """Write one message (no trailing newline); raise TransportClosed if gone."""

    @abc.abstractmethod
    async def close(self) -> None:
        """End it, releasing every process and socket. Idempotent."""

    @abc.abstractmethod
    def describe(self) -> str:
        """One line for messages, e.g. the command line or URL."""

    @property
    def pid(self) -> int | None:
        return None
