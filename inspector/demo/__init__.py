"""Spyglass's built-in demo MCP server.

Run it with ``python -m inspector.demo``: it speaks MCP over stdio
(newline-delimited JSON-RPC 2.0) and logs only to stderr. It serves both the
legacy protocol era (``initialize`` handshake, revisions 2024-11-05 to
2025-11-25) and the stateless 2026-07-28 revision, and exercises every kind
of tool, resource, prompt, notification and content a client can display.

Only the standard library is used, so the server starts anywhere Python does.
"""

from __future__ import annotations

import sys

__version__ = "0.1.0"

SERVER_INFO = {
    "name": "spyglass-demo",
    "title": "Spyglass demo server",
    "version": __version__,
}


def launch_command() -> list[str]:
    """Command line that starts the demo server with the current interpreter.

    In a frozen bundle (PyInstaller) `sys.executable` is Spyglass itself, which runs the
    demo server when given `--demo-server` (see inspector/__main__.py)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "--demo-server"]
    return [sys.executable, "-m", "inspector.demo"]
