"""Records as JSON Lines, in the format of `spyglass --cli --trace`; a frame's meta as the session file keeps it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from ..private import open_private

TRACE_META_KEYS = ("stream", "event_id", "status")  # Frame.meta keys `--trace` writes


class _Records(Protocol):
    def __len__(self) -> int: ...
    def direction(self, n: int) -> str: ...
    def wall(self, n: int) -> float: ...
    def text(self, n: int) -> str: ...
    def meta(self, n: int) -> dict[str, Any] | None: ...
    def malformed(self, n: int) -> str | None: ...
    def server_id(self, n: int) -> str: ...


def meta_of(text: Any) -> dict[str, Any] | None:
    """A frame's transport details as the file keeps them (JSON text); anything else is dropped."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def meta_json(meta: dict[str, Any] | None) -> str | None:
    if not meta:
        return None
    try:
        return json.dumps(meta, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # pragma: no cover
        return None


def export_jsonl(store: _Records, path: str | Path, rows: Iterable[int] | None = None) -> int:
    """Write records as JSON Lines, one object per frame in the format of `spyglass --cli --trace`
    ({"ts", "dir", "text", "stream"?, "event_id"?, "status"?, "malformed"?}) plus "server". Returns the
    number of lines."""
    count = 0
    with open_private(path, "w", encoding="utf-8") as fh:
        for n in (range(len(store)) if rows is None else rows):
            direction = store.direction(n)
            record: dict[str, Any] = {"ts": round(store.wall(n), 6), "dir": direction, "text": store.text(n)}
            meta = store.meta(n)
            if meta and direction != "http":
                for key in TRACE_META_KEYS:
                    if meta.get(key) is not None:
                        record[key] = meta[key]
            reason = store.malformed(n)
            if reason:
                record["malformed"] = reason
            record["server"] = store.server_id(n)
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count
