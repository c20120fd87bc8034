"""`rerunView`: what a watched server answered after its last restart, beside what it answered before.

After each restart (a save) the development loop runs the last call, or the pinned ones, again
(`inspector.devloop`). This view lists them (`rerunList`: tool, arguments, before → after, differences)
and shows the selected one's answers side by side (`rerunSides`) with each difference marked, and one
row per difference (`rerunChanges`) — the same structural diff as a replay.
"""

from __future__ import annotations

import json
import time
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from ...devloop import DevLoop, Rerun, answer_of
from ..base import design, theme
from ..base.layout import text_label
from ..base.text import visible
from ..recording.json_diff import ChangeList, DiffColumns

EMPTY = ("Nothing has run again yet. Turn on Server → Restart on save, call a tool, then save a source "
         "file: the server restarts, the last call (or the pinned ones) runs again, and both answers show "
         "here with what changed marked.")
RERUN_ROLE = Qt.UserRole + 1


class RerunView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rerunView")
        self.loop: DevLoop | None = None
        self.summary = text_label(EMPTY, self, name="rerunSummary", role="muted")
        self.summary.setWordWrap(True)
        self.list = QTreeWidget(self)
        self.list.setObjectName("rerunList")
        self.list.setHeaderLabels(["tool", "arguments", "before → after", "differences"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.currentItemChanged.connect(lambda item, _p: self._show(item))
        self.sides = DiffColumns("rerunSides", ("Before the restart", "After the restart"), self)
        self.changes = ChangeList("rerunChanges", ("Before", "After"), self)
        self.changes.changeSelected.connect(lambda c: c is not None and self.sides.reveal(c["path"]))
        split = QSplitter(Qt.Vertical, self)
        split.setObjectName("rerunSplit")
        split.addWidget(self.list)
        split.addWidget(self.sides)
        split.addWidget(self.changes)
        split.setStretchFactor(1, 3)
        split.setSizes([90, 260, 90])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("s"))
        lay.addWidget(self.summary)
        lay.addWidget(split, 1)
        self._split = split
        self.show_loop(None)

    def show_loop(self, loop: DevLoop | None) -> None:
        """The re-runs of `loop`'s last restart (None: the empty state)."""
        self.loop = loop
        reruns = loop.reruns if loop is not None else []
        keep = self.list.currentIndex().row()
        self.list.clear()
        self._split.setVisible(bool(reruns))
        if not reruns:
            self.summary.setText(EMPTY if loop is None or loop.restarts == 0 else
                                 f"Restarted {loop.restarts} time{'s' if loop.restarts != 1 else ''}; nothing "
                                 "to run again (no call yet, or the watch runs nothing again).")
            return
        for rerun in reruns:
            item = QTreeWidgetItem(self.list, self._row(rerun))
            item.setData(0, RERUN_ROLE, rerun)
            colour = "connecting" if rerun.after is None or rerun.after.running else \
                "connected" if rerun.same else "warning"
            item.setForeground(3, theme.colour(colour))
        differ = sum(1 for r in reruns if r.after is not None and not r.after.running and r.changes)
        done = sum(1 for r in reruns if r.after is not None and not r.after.running)
        when = time.strftime("%H:%M:%S", time.localtime(reruns[0].after.wall)) if reruns[0].after else ""
        files = loop.last_files if loop is not None else ()
        why = f" ({len(files)} file{'s' if len(files) != 1 else ''} changed)" if files else ""
        n = len(reruns)
        self.summary.setText(f"After the restart at {when}{why}: " + (
            f"{done} of {n} call{'s' if n != 1 else ''} ran again" if done < n else
            "the same answer as before" if not differ and n == 1 else
            f"{differ} of {n} call{'s' if n != 1 else ''} answered differently" if differ else
            f"all {n} calls answered as before"))
        self.list.setCurrentItem(self.list.topLevelItem(min(max(keep, 0), n - 1)))

    @staticmethod
    def _row(rerun: Rerun) -> list[str]:
        try:
            args = json.dumps(rerun.before.arguments, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError):
            args = repr(rerun.before.arguments)
        after = rerun.after
        if after is None:
            return [visible(rerun.before.tool, 80), visible(args, 120), f"{rerun.before.outcome} → —",
                    visible(rerun.note, 120)]
        if after.running:
            return [visible(rerun.before.tool, 80), visible(args, 120), f"{rerun.before.outcome} → running…", ""]
        n = len(rerun.changes)
        return [visible(rerun.before.tool, 80), visible(args, 120), f"{rerun.before.outcome} → {after.outcome}",
                "none" if not n else f"{n} difference{'s' if n != 1 else ''}"]

    def _show(self, item: QTreeWidgetItem | None) -> None:
        rerun: Rerun | None = item.data(0, RERUN_ROLE) if item is not None else None
        if rerun is None:
            self.sides.show_values(None, None)
            self.changes.set_changes([], empty="")
            return
        after: Any = answer_of(rerun.after) if rerun.after is not None and not rerun.after.running else None
        changes = [c.as_json() for c in rerun.changes]
        self.sides.show_values(answer_of(rerun.before), after, changes,
                               absent=("", rerun.note or "(running…)"))
        self.changes.set_changes(changes, empty="No differences: the same answer as before."
                                 if rerun.after is not None and not rerun.after.running else "")
