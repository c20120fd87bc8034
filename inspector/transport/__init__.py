"""Transports: asyncio IO that turns a server into frames in and out (no Qt).

Import the transport you need from its module (`transport.stdio`, `transport.http`, `transport.sse`),
or better, open a server with `transport.factory`: this package imports nothing itself (the names below
load on first use), so that `spyglass --cli` and `spyglass tap` can start a stdio server
(`transport.process`) before asyncio, or even dataclasses, is loaded.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Closed, Transport

__all__ = ["Closed", "Transport"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.base"), name)
    globals()[name] = value
    return value
