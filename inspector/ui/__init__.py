"""The Qt user interface: main window, server sidebar, tool list, info, log and dialogs.

Public surface: `MainWindow` (the `mainWindow`), `demo_spec()`, `Connection` (one
server: a QObject around the asyncio client), its `Status` and `LogEntry`.
Loaded lazily, so importing one widget module does not build the whole window.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {"Connection": ".connection", "LogEntry": ".connection", "Status": ".connection",
            "MainWindow": ".main_window", "demo_spec": ".main_window"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
