"""Helpers for the UI tests: peer commands (from tests/conftest.py), polling, screenshots, lookups."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


from support import demo_cmd, everything_cmd, hostile_cmd  # noqa: E402,F401  (tests/support.py)


async def until(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "the condition") -> Any:
    """Poll with asyncio.sleep (drives both asyncio and Qt on the qasync loop)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.02)


async def shot(window: Any, name: str) -> Path:
    """Save test-artifacts/NAME.png of the window (after letting layouts and paints settle)."""
    await asyncio.sleep(0.15)
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    if hasattr(window, "save_screenshot"):
        ok, message = window.save_screenshot(str(path))
        assert ok, message
    else:  # a dialog: its own picture
        assert window.grab().save(str(path), "PNG"), f"could not write {path}"
    return path


def find(window: Any, cls: Any, name: str) -> Any:
    widget = window.findChild(cls, name)
    assert widget is not None, f"no {cls.__name__} named {name!r}"
    return widget


def rows(view: Any, role: Any = None) -> list[Any]:
    from PySide6.QtCore import Qt

    model = view.model()
    return [model.index(r, 0).data(Qt.UserRole if role is None else role) for r in range(model.rowCount())]


def row_of(view: Any, name: str) -> Any:
    from PySide6.QtCore import Qt

    model = view.model()
    for r in range(model.rowCount()):
        idx = model.index(r, 0)
        if idx.data(Qt.UserRole) == name:
            return idx
    raise AssertionError(f"no row named {name!r} in {view.objectName()}: {rows(view)}")
