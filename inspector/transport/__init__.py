"""Transports: asyncio IO that turns a server into frames in and out (no Qt).

Import the transport you need from its module (`transport.stdio`, `transport.http`, `transport.sse`),
or better, open a server with `transport.factory`: this package imports nothing heavy itself, so that
`spyglass --cli` can start a stdio server before asyncio is loaded.
"""

from .base import Closed, Transport

__all__ = ["Closed", "Transport"]
