"""Starting a coroutine from a widget on the qasync loop, kept alive and with its
failure reported instead of lost."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger("spyglass.ui")


def spawn(coro: Awaitable[Any], tasks: set[asyncio.Task[Any]], on_error: Callable[[BaseException], None],
          what: str = "task") -> asyncio.Task[Any] | None:
    """Run `coro` as a task held in `tasks`; `on_error` hears of an exception.
    None when no loop runs (the coroutine is closed, never left un-awaited)."""
    try:
        task = asyncio.ensure_future(coro)
    except RuntimeError:
        close = getattr(coro, "close", None)
        if close is not None:
            close()
        return None
    tasks.add(task)

    def done(t: asyncio.Task[Any]) -> None:
        tasks.discard(t)
        if not t.cancelled() and t.exception() is not None:
            log.error("%s failed", what, exc_info=t.exception())
            on_error(t.exception())

    task.add_done_callback(done)
    return task
