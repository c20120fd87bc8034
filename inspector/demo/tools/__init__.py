"""The demo's tool catalogue: definitions and handlers, looked up by name."""

from __future__ import annotations

from ..wire import JsonObject

# Importing the modules registers their tools; this order is the listing order.
from . import showcase  # noqa: F401

# isort: split
from . import behaviour  # noqa: F401
from .base import REGISTRY, ArgError, ClientRequestError, DemoState, InputRequired, Tool, ToolContext, error_result

__all__ = ["ArgError", "ClientRequestError", "DemoState", "InputRequired", "Tool", "ToolContext",
           "error_result", "definitions", "find"]


def definitions(state: DemoState) -> list[JsonObject]:
    """Tool definitions currently on offer (the bonus tool only while enabled)."""
    return [t.definition for t in REGISTRY.values() if not t.hidden or state.bonus_enabled]


def find(name: str, state: DemoState) -> Tool | None:
    tool = REGISTRY.get(name)
    if tool is None or (tool.hidden and not state.bonus_enabled):
        return None
    return tool
