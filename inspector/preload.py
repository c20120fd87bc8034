"""Importing a module in a background thread, ahead of its first use.

A module that a later step will surely need (jsonschema, whose import takes 50-60 ms here) is imported while
the program waits for something else — a server starting, a person reading the window — instead of in the
middle of the step that first needs it (a tool selected again with its values remembered, a long turn of the
window's loop). The import lock makes a use that comes first wait for the import already under way.
"""

from __future__ import annotations

import importlib
import threading


def preload(module: str) -> None:
    def load() -> None:
        try:
            importlib.import_module(module)
        except Exception:  # pragma: no cover - a broken install: the real import later reports the problem
            pass

    threading.Thread(target=load, name=f"preload-{module}", daemon=True).start()
