"""A server's log as a person reads it: its stderr lines, its `notifications/message`, and Spyglass's own
notes about the session (connecting, what changed, what failed), bounded in memory.

Appending is cheap and emits nothing by itself: a flood of log notifications would otherwise cost one
callback each. `changed` fires at most once per event-loop turn; views read `total` to see how many
entries arrived since they last looked (the deque forgets the oldest).
"""

from __future__ import annotations

import asyncio
import collections
import json
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

from .hooks import Hook

LOG_LIMIT = 5000
SPYGLASS = "spyglass"  # the level (and logger) of Spyglass's own notes


class LogEntry(NamedTuple):  # (a tuple: made for every line of a flood, in half a frozen dataclass's time)
    wall: float
    level: str  # "stderr", an MCP log level, or "spyglass" for Spyglass's own notes
    text: str
    logger: str | None = None


def entry_from_message(params: Any) -> LogEntry:
    """A `notifications/message` as a log entry; data that is not a string is shown as JSON."""
    if type(params) is dict:
        data, level, logger = params.get("data"), params.get("level"), params.get("logger")
    else:
        data = level = logger = None
    if type(data) is not str:
        try:
            data = json.dumps(data, ensure_ascii=False)
        except (TypeError, ValueError):
            data = repr(data)
    return LogEntry(time.time(), level if type(level) is str else "info", data,
                    logger if type(logger) is str else None)


def entries_from_messages(messages: list[Any], wall: float) -> list[LogEntry]:
    """`entry_from_message` of each of a read's `notifications/message` params, all taken at `wall`."""
    out: list[LogEntry] = []
    append, new = out.append, tuple.__new__
    for params in messages:
        if type(params) is dict:
            data, level, logger = params.get("data"), params.get("level"), params.get("logger")
            if type(data) is str and type(level) is str and (logger is None or type(logger) is str):
                append(new(LogEntry, (wall, level, data, logger)))  # the common case, without a Python call
                continue
        entry = entry_from_message(params)
        append(LogEntry(wall, entry.level, entry.text, entry.logger))
    return out


class ServerLog:
    """The newest `limit` entries. A run of `notifications/message` (`extend_messages`) is kept as the params it
    came with and made into entries when the log is next read, and then only its newest `limit`: a flood's lines
    that the log forgets before anyone reads it (the log pane reads it every 100 ms) are never made (100,000
    lines made 100,000 entries for the 5,000 kept)."""

    def __init__(self, limit: int = LOG_LIMIT) -> None:
        self._entries: collections.deque[LogEntry] = collections.deque(maxlen=limit)
        self._limit = limit
        self._unmade: collections.deque[tuple[float, list[Any]]] = collections.deque()  # (wall, params), oldest first
        self._unmade_count = 0
        self.total = 0  # entries ever appended
        self.changed: Hook[[]] = Hook("log")
        self._pending = False

    @property
    def entries(self) -> collections.deque[LogEntry]:
        if self._unmade:
            self._make()
        return self._entries

    def append(self, entry: LogEntry) -> None:
        if self._unmade:
            self._make()
        self._entries.append(entry)
        self.total += 1
        self._tell()

    def extend(self, entries: list[LogEntry]) -> None:
        """`append` of each entry, in order (`changed` told once)."""
        if entries:
            if self._unmade:
                self._make()
            self._entries.extend(entries)
            self.total += len(entries)
            self._tell()

    def extend_messages(self, messages: list[Any], wall: float) -> None:
        """`extend(entries_from_messages(messages, wall))`, the entries made when the log is next read. `messages`
        (the params of a read's `notifications/message`) is kept as it is: not to be changed afterwards."""
        if not messages:
            return
        self._unmade.append((wall, messages))
        self._unmade_count += len(messages)
        self.total += len(messages)
        while self._unmade_count - len(self._unmade[0][1]) >= self._limit:  # forgotten before made
            self._unmade_count -= len(self._unmade.popleft()[1])
        self._tell()

    def _make(self) -> None:
        skip = max(0, self._unmade_count - self._limit)  # the oldest of these the deque would drop at once
        unmade, self._unmade, self._unmade_count = self._unmade, collections.deque(), 0
        for wall, messages in unmade:
            if skip >= len(messages):
                skip -= len(messages)
                continue
            self._entries.extend(entries_from_messages(messages[skip:] if skip else messages, wall))
            skip = 0

    def _tell(self) -> None:
        if not self._pending and len(self.changed):
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a test building entries by hand): tell at once
                self.changed.emit()
                return
            self._pending = True
            loop.call_soon(self._emit)

    def _emit(self) -> None:
        self._pending = False
        self.changed.emit()

    def note(self, text: str, level: str = SPYGLASS) -> None:
        """Spyglass's own line about the session ("connected", "tool list changed: +a -b")."""
        self.append(LogEntry(time.time(), level, text, SPYGLASS))

    def stderr(self, text: str) -> None:
        self.append(LogEntry(time.time(), "stderr", text.rstrip("\r")))

    def __iter__(self) -> Iterator[LogEntry]:
        return iter(self.entries)

    def __reversed__(self) -> Iterator[LogEntry]:
        return reversed(self.entries)

    def __len__(self) -> int:
        return len(self._entries) if not self._unmade else min(self._limit, len(self._entries) + self._unmade_count)

    def __getitem__(self, index: int) -> LogEntry:
        return self.entries[index]
