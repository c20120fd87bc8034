"""Plain Python callbacks for what happens in a session: the Qt-free counterpart of a Qt signal.

The window's adapters connect a hook to a Qt signal; `--cli` and other headless callers connect plain
functions. A callback that raises is logged and does not stop the others (nor the session).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, ParamSpec

P = ParamSpec("P")

log = logging.getLogger("spyglass.session")


class Hook(Generic[P]):
    __slots__ = ("_callbacks", "name")

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._callbacks: list[Callable[P, object]] = []

    def connect(self, callback: Callable[P, object]) -> None:
        self._callbacks.append(callback)

    def disconnect(self, callback: Callable[P, object]) -> None:
        try:
            self._callbacks.remove(callback)
        except ValueError:
            pass

    def emit(self, *args: P.args, **kwargs: P.kwargs) -> None:
        if not self._callbacks:
            return
        for callback in tuple(self._callbacks):
            try:
                callback(*args, **kwargs)
            except Exception:
                log.exception("a %s callback failed", self.name or "session")

    def __len__(self) -> int:
        return len(self._callbacks)
