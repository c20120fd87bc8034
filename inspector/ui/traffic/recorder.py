"""The window's traffic: one session store that every server records into, the pane over it, and the
flush that hands new frames to the writer (and new rows to the pane) every 100 ms.

A store that cannot be opened (a full disk, a broken data folder) leaves a note where the pane would be
and a banner: the window works on, without recording.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QLabel, QLineEdit, QWidget

from ...checks.live import LiveCheck
from ...checks.rules import SEVERITIES
from ...traffic import TrafficStore
from ...traffic.frame import Frame
from .pane import TrafficPane
from .timeline import TimelineView

log = logging.getLogger("spyglass.ui.traffic")

FLUSH_MS = 100


class TrafficRecorder(QObject):
    def __init__(self, store_path: str | None, parent: QWidget, message: Callable[[str], None]) -> None:
        super().__init__(parent)
        self.message = message
        self.store: TrafficStore | None = None
        self.pane: TrafficPane | None = None
        self._timer: QTimer | None = None
        self._live: list[LiveCheck] = []  # the servers whose frames are judged
        self.timeline: TimelineView | None = None
        try:
            self.store = TrafficStore(store_path) if store_path else TrafficStore()
            self.pane = TrafficPane(self.store, parent, flush_ms=None)  # flushed by the timer below
            self.widget: QWidget = self.pane
        except Exception as exc:  # a broken store must not take the window down
            log.exception("could not open the traffic store")
            self.store, self.pane = None, None
            text = f"Traffic is not recorded: {exc}"
            note = QLabel(text, parent)
            note.setObjectName("trafficUnavailable")
            note.setWordWrap(True)
            self.widget = note
            QTimer.singleShot(0, lambda: message(text))
            return
        self._timer = QTimer(self)
        self._timer.setObjectName("trafficFlushTimer")
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)
        self._timer.start()

    def recorder_for(self, server_id: str, live: LiveCheck | None = None,
                     definition: dict[str, object] | None = None) -> _Recording | None:
        """What a server's session hands each frame to (None when nothing is recorded). With `live`, each
        recorded frame is judged too (its findings reach the pane at the next flush). `definition` (secrets
        masked) goes into the session file, so the session can be reopened, shared and replayed."""
        if self.store is None:
            return None
        if definition is not None:
            try:
                self.store.set_meta(f"server:{server_id}", json.dumps(definition, ensure_ascii=False))
            except Exception:  # the recording goes on without it
                log.exception("could not describe %s in the session file", server_id)
        if live is not None:
            self._live.append(live)

        return _Recording(self, server_id, live)

    def timeline_widget(self, parent: QWidget) -> QWidget:
        """The session's timeline, in step with the traffic pane: a click on a bar selects its frame
        there, a frame selected there is marked on the timeline."""
        if self.store is None or self.pane is None:
            note = QLabel("No timeline: traffic is not recorded.", parent)
            note.setObjectName("timelineUnavailable")
            return note
        pane = self.pane
        self.timeline = TimelineView(self.store, parent)

        def show_frame(n: int) -> None:
            dock = pane.parentWidget()
            if isinstance(dock, QDockWidget):  # tabbed with the timeline: bring the frame into view
                dock.raise_()
            if not pane.select_record(n):  # the timeline can be ahead of the table's next batch of rows
                pane.model.refresh()
                pane.select_record(n)

        self.timeline.frameActivated.connect(show_frame)
        pane.recordSelected.connect(lambda n: self.timeline.select(n) if n >= 0 else None)
        return self.timeline

    def forget(self, live: LiveCheck) -> None:
        if live in self._live:
            self._live.remove(live)

    def judge(self) -> int:
        """Hand the findings made since the last time to the store's flags and the pane; how many."""
        store, pane = self.store, self.pane
        if store is None or pane is None:
            return 0
        found: dict[int, list[str]] = {}
        for live in list(self._live):
            for n, f in live.drain():
                store.flag(n, SEVERITIES.index(f.severity))
                found.setdefault(n, []).append(f"{f.severity}: {f.message} [{f.rule}]")
        if found:
            pane.model.set_findings(found)
        return sum(len(v) for v in found.values())

    def flush(self) -> None:
        if self.store is None:
            return
        try:
            self.store.flush()
            self.judge()
        except Exception as exc:
            log.exception("traffic flush failed")
            if self._timer is not None:
                self._timer.stop()
            self.message(f"Traffic recording stopped: {exc}")

    def follow(self, server_id: str | None) -> None:
        """Show only this server's frames (None: every server's)."""
        if self.pane is not None:
            self.pane.set_server_filter(server_id)

    def clear(self) -> None:
        if self.pane is not None:
            self.pane.clear_view()

    def focus_filter(self) -> None:
        if self.pane is not None:
            edit = self.pane.findChild(QLineEdit, "trafficFilter")
            if edit is not None:
                edit.setFocus(Qt.ShortcutFocusReason)
                edit.selectAll()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        store, self.store = self.store, None
        if store is not None:
            try:
                store.flush()
                store.close()
            except Exception:
                log.exception("closing the traffic store")


class _Recording:
    """What a server's session hands its frames to: `recording(frame)`, or `recording.many(frames)` for a
    read's worth. Each frame goes into the window's traffic store, then to the connection's live check."""

    def __init__(self, recorder: TrafficRecorder, server_id: str, live: LiveCheck | None) -> None:
        self.recorder, self.server_id, self.live = recorder, server_id, live

    def __call__(self, frame: Frame) -> None:
        store = self.recorder.store
        if store is None:
            return
        try:
            n = store.add(self.server_id, frame)
        except Exception:
            log.exception("the traffic store rejected a frame")
            return
        if self.live is not None:
            try:
                self.live.frame(n, frame)
            except Exception:  # a bug in a rule must not stop the recording
                log.exception("judging a frame failed")

    def many(self, frames: list[Frame]) -> None:
        store = self.recorder.store
        if store is None:
            return
        try:
            first = store.add_many(self.server_id, frames)
        except Exception:
            log.exception("the traffic store rejected a frame")
            return
        if self.live is not None:
            try:
                self.live.frames(first, frames)
            except Exception:
                log.exception("judging a frame failed")
