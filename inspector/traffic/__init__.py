"""Traffic records: every frame in either direction and every stderr line (no Qt).

`TrafficStore` keeps them (append-only, SQLite-backed), `TrafficFilter` and
`FilteredView` select them, `list_sessions` finds saved sessions. Names load on
first use, so the command line (which only needs `Frame`) starts fast.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Frame": "frame", "FilteredView": "filter", "TrafficFilter": "filter",
    "SessionFile": "sessions", "list_sessions": "sessions", "new_session_path": "sessions", "sessions_dir": "sessions",
    "DIRECTIONS": "columns", "KINDS": "columns", "Record": "store", "ReadOnlyError": "store", "TrafficStore": "store",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
