"""Transports: asyncio IO that turns a server into frames in and out (no Qt)."""

from .base import Closed, Transport
from .stdio import StdioTransport

__all__ = ["Closed", "Transport", "StdioTransport"]
