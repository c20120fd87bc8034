"""Importing a module ahead of its first use.

A module that a later step will surely need (jsonschema, whose import takes 50-60 ms here) is imported while
the program waits for something else — a server starting, a person reading the window — instead of in the
middle of the step that first needs it (a tool selected again with its values remembered, a long turn of the
window's loop).

`preload` imports it in a background thread: right for `--cli`, which has no window to keep painting (the
import lock makes a use that comes first wait for the import under way). A window must not: an import is
Python code holding the interpreter, and while a thread held it the window's painting (its delegates are
Python) waited its turn each time — listing a big server took turns of 60 ms and more. `preload_steps`
imports the module's heavy dependencies one per turn of the caller's loop instead, none over about 16 ms.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable

# The import of jsonschema in steps, each a few milliseconds once PySide is loaded (which reads the source
# of every module imported after it): its dependencies first, then the package itself.
STEPS = {"jsonschema": ("typing_extensions", "attr", "attrs", "rpds", "referencing._core", "referencing",
                        "jsonschema_specifications", "jsonschema")}


def _load(module: str) -> None:
    try:
        importlib.import_module(module)
    except Exception:  # a broken install: the real import later reports the problem
        pass


def preload(module: str) -> None:
    threading.Thread(target=_load, args=(module,), name=f"preload-{module}", daemon=True).start()


def preload_steps(module: str, later: Callable[[Callable[[], None]], None]) -> None:
    """Import `module` a dependency at a time: `later(fn)` must call `fn` in a later turn of the loop
    (`lambda fn: QTimer.singleShot(0, fn)`)."""
    steps = [m for m in STEPS.get(module, (module,)) if m not in sys.modules]

    def step() -> None:
        while steps:
            name = steps.pop(0)
            if name not in sys.modules:
                _load(name)
                break
        if steps:
            later(step)

    if steps:
        later(step)
