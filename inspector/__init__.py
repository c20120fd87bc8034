"""Spyglass, a desktop inspector for MCP servers."""

__version__ = "0.1.0"
