"""Telling the user something from code that has no window: one bridge, buffered until a window listens.

Qt-free code (the catalog, the keyring, a session that notices something) calls `info`, `warning` or
`error`; the window attaches a listener (its banner) when it exists, and gets what was said before, in
order. Without a listener — `--cli`, a test — messages wait in a bounded buffer (the oldest go first);
every message is also logged (at INFO: it is news for the user, not a fault of the program).
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("spyglass.messages")

BUFFERED = 100
LEVELS = ("info", "warning", "error")


@dataclass(frozen=True)
class Message:
    level: str  # "info" | "warning" | "error"
    text: str
    details: str | None = None


Listener = Callable[[Message], None]

_listeners: list[Listener] = []
_pending: collections.deque[Message] = collections.deque(maxlen=BUFFERED)


def say(level: str, text: str, details: str | None = None) -> None:
    if level not in LEVELS:
        raise ValueError(f"unknown message level {level!r}")
    message = Message(level, text, details)
    log.info("told the user (%s): %s", level, text)  # a message for the user, not a fault of the program
    if not _listeners:
        _pending.append(message)
        return
    for listener in tuple(_listeners):
        try:
            listener(message)
        except Exception:
            log.exception("a message listener failed")


def info(text: str, details: str | None = None) -> None:
    say("info", text, details)


def warning(text: str, details: str | None = None) -> None:
    say("warning", text, details)


def error(text: str, details: str | None = None) -> None:
    say("error", text, details)


def attach(listener: Listener) -> None:
    """Start telling `listener` everything, beginning with what was said before anyone listened."""
    _listeners.append(listener)
    while _pending:
        message = _pending.popleft()
        try:
            listener(message)
        except Exception:
            log.exception("a message listener failed")


def detach(listener: Listener) -> None:
    try:
        _listeners.remove(listener)
    except ValueError:
        pass


def pending() -> list[Message]:
    """What waits for a listener (for tests and for the command line)."""
    return list(_pending)
