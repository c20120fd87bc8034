"""What the window does once it is first shown so that later steps stay quick."""

from __future__ import annotations

import gc

from PySide6.QtCore import QTimer

from ...preload import preload_steps

PRELOAD_AFTER_MS = 1500  # after the start: the first server is up and listed by then
PRELOAD_STEP_MS = 4  # between two steps of that import: other work has turns of its own in between


class Warmup:
    def __init__(self) -> None:
        self._shown = self._preloaded = False

    def shown(self) -> None:
        """The window is shown (the first time counts). What exists by then (modules, classes, the widgets:
        some 65,000 objects) lives as long as the window: the garbage collector's full passes skip it from
        then on (listing a 2,000-tool server: full passes of 15 and 35 ms, then one of 9 ms). Only cyclic
        garbage among those objects is never collected; the rest is freed by reference counting as always."""
        if not self._shown:
            self._shown = True
            QTimer.singleShot(0, gc.freeze)
            QTimer.singleShot(PRELOAD_AFTER_MS, self.preload)

    def preload(self) -> None:
        """The forms' checks need jsonschema from a tool's second selection or first call on: imported a
        dependency per turn from the first server the window connects (while it starts), or 1.5 s after the
        window is shown, or from the first selection of a tool if that comes sooner — not in the turn of the
        selection or the click on Call that needs it (50-60 ms: a call clicked at once after its server was
        listed took a turn of 45-60 ms, the first flood's longest). The steps (0-15 ms each, about 50 ms in
        all) are 4 ms apart."""
        if not self._preloaded:
            self._preloaded = True
            preload_steps("jsonschema", lambda fn: QTimer.singleShot(PRELOAD_STEP_MS, fn))
