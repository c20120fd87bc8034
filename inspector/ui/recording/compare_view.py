"""*Compare with…* (`compareDialog`): what changed from one server to another — each a server of a
session file, or a live server of the main window listed anew when the comparison runs
(`inspector.recording.live`) — by the reading `spyglass diff` makes (`compare.diff_surfaces`).

`compareView` has the sections on the left (protocol revision, capabilities, instructions, tools,
resources, templates, prompts; each entry added, removed or changed, in the theme's colours) and the
selected one's two sides on the right, the changed paths marked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ... import errors as E
from ...recording.compare import KEYED, MISSING, TITLES, diff_surfaces, diff_values, pointer_part, summary_counts
from ...recording.files import open_session
from ...recording.surface import ServerSurface
from ..base import theme
from ..base.layout import text_label
from ..base.text import visible
from .job import JobDialog
from .json_diff import KIND_COLOURS, KIND_MARKS, ChangeList, DiffColumns
from .sides import Side, recorded_side


def by_name(entries: list[dict[str, Any]], key: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in entries:
        name = entry.get(key)
        if isinstance(name, str) and name not in out:
            out[name] = entry
    return out


class CompareView(QSplitter):
    """The differences by section, and the selected section or entry on both sides."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Horizontal, parent)
        self.setObjectName("compareView")
        self.report: dict[str, Any] | None = None
        self.a: ServerSurface | None = None
        self.b: ServerSurface | None = None
        left = QWidget(self)
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        self.summary = text_label("", left, name="compareSummary")
        self.tree = QTreeWidget(left)
        self.tree.setObjectName("compareSections")
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        self.tree.currentItemChanged.connect(lambda item, _p: self.show_item(item))
        ll.addWidget(self.summary)
        ll.addWidget(self.tree, 1)
        right = QSplitter(Qt.Vertical, self)
        self.columns = DiffColumns("compareColumns", ("A", "B"), right)
        self.changes = ChangeList("compareChanges", ("A", "B"), right)
        self.changes.changeSelected.connect(lambda c: c is not None and self.columns.reveal(c["path"]))
        right.addWidget(self.columns)
        right.addWidget(self.changes)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 1)
        right.setChildrenCollapsible(False)
        self.addWidget(left)
        self.addWidget(right)
        self.setStretchFactor(0, 2)
        self.setStretchFactor(1, 5)
        self.setSizes([340, 840])  # the section lines read whole; the two sides take the rest
        self.setChildrenCollapsible(False)

    def _section(self, text: str, what: tuple[Any, ...], differs: bool, colour: str | None = None) -> QTreeWidgetItem:
        item = QTreeWidgetItem(self.tree, [text])
        item.setData(0, Qt.UserRole, what)
        font = item.font(0)
        font.setBold(differs)
        item.setFont(0, font)
        item.setForeground(0, theme.colour(colour or ("connecting" if differs else "muted")))
        return item

    def show_report(self, a: ServerSurface, b: ServerSurface, report: dict[str, Any]) -> None:
        self.a, self.b, self.report = a, b, report
        self.tree.clear()
        self.columns.set_titles(f"A: {visible(a.name, 80)}", f"B: {visible(b.name, 80)}")
        count = summary_counts(report)
        self.summary.setText("No differences: the two servers offer the same." if report["same"] else
                             f"{count} difference{'s' if count != 1 else ''} from A to B.")
        self.summary.setStyleSheet(f"color: {theme.colour('connected' if report['same'] else 'connecting').name()};")
        rev = report["revision"]
        self._section(f"Protocol revision: {rev['a'] or '?'} → {rev['b'] or '?'}" if rev else
                      f"Protocol revision: same ({a.revision or 'unknown'})", ("revision",), rev is not None)
        caps = report["capabilities"]
        self._section(f"Capabilities: {len(caps)} change{'s' if len(caps) != 1 else ''}" if caps else
                      "Capabilities: same", ("capabilities",), bool(caps))
        self._section("Instructions: changed" if report["instructions"] else "Instructions: same",
                      ("instructions",), report["instructions"] is not None)
        first = None
        for listing, _key in KEYED:
            part = report[listing]
            title = TITLES[listing]
            if part.get("unknown"):
                self._section(f"{title}: not compared ({part['unknown']})", ("listing", listing), False)
                continue
            n_a, n_b = len(a.listings.get(listing, [])), len(b.listings.get(listing, []))
            bits = [f"{len(part[k])} {k}" for k in ("added", "removed") if part[k]]
            if part["changed"]:
                bits.append(f"{len(part['changed'])} changed")
            differs = bool(bits)
            section = self._section(f"{title}: {', '.join(bits)} ({n_a} → {n_b})" if differs else
                                    f"{title}: same ({n_a})", ("listing", listing), differs)
            for kind, names in (("added", part["added"]), ("removed", part["removed"]),
                                ("changed", list(part["changed"]))):
                for name in names:
                    extra = ""
                    if kind == "changed":
                        k = len(part["changed"][name])
                        extra = f"  ({k} change{'s' if k != 1 else ''})"
                    child = QTreeWidgetItem(section, [f"{KIND_MARKS[kind]} {visible(name, 120)}{extra}"])
                    child.setData(0, Qt.UserRole, ("entry", listing, name, kind))
                    child.setForeground(0, theme.colour(KIND_COLOURS[kind]))
                    child.setToolTip(0, f"{kind} in B")
                    first = first or child
            section.setExpanded(differs)
        top = self.tree.topLevelItem(0)
        self.tree.setCurrentItem(first or top)

    def entry_names(self, listing: str) -> dict[str, list[str]]:
        """What the tree lists for one section, by kind (for tests and automation)."""
        out: dict[str, list[str]] = {"added": [], "removed": [], "changed": []}
        for i in range(self.tree.topLevelItemCount()):
            section = self.tree.topLevelItem(i)
            if section.data(0, Qt.UserRole) != ("listing", listing):
                continue
            for j in range(section.childCount()):
                _, _, name, kind = section.child(j).data(0, Qt.UserRole)
                out[kind].append(name)
        return out

    def select_entry(self, listing: str, name: str) -> bool:
        for i in range(self.tree.topLevelItemCount()):
            section = self.tree.topLevelItem(i)
            for j in range(section.childCount()):
                what = section.child(j).data(0, Qt.UserRole)
                if what[1] == listing and what[2] == name:
                    self.tree.setCurrentItem(section.child(j))
                    return True
        return False

    def show_item(self, item: QTreeWidgetItem | None) -> None:
        a, b, report = self.a, self.b, self.report
        if item is None or a is None or b is None or report is None:
            return
        what = item.data(0, Qt.UserRole)
        absent = ("(A does not have it)", "(B does not have it)")
        if what[0] == "revision":
            left: Any = {"revision": a.revision, "era": a.era, "serverInfo": a.server_info}
            right: Any = {"revision": b.revision, "era": b.era, "serverInfo": b.server_info}
            changes = [c.as_json() for c in diff_values(left, right)]
        elif what[0] == "capabilities":
            left, right, changes = a.capabilities or {}, b.capabilities or {}, report["capabilities"]
        elif what[0] == "instructions":
            left, right = {"instructions": a.instructions}, {"instructions": b.instructions}
            changes = [c.as_json() for c in diff_values(left, right)]
        elif what[0] == "listing":
            listing = what[1]
            key = dict(KEYED)[listing]
            left, right = by_name(a.listings.get(listing, []), key), by_name(b.listings.get(listing, []), key)
            part = report[listing]
            changes = [{"path": "/" + pointer_part(n), "kind": "added", "b": right.get(n)} for n in part["added"]]
            changes += [{"path": "/" + pointer_part(n), "kind": "removed", "a": left.get(n)} for n in part["removed"]]
            changes += [dict(c, path="/" + pointer_part(n) + c["path"]) for n, cs in part["changed"].items()
                        for c in cs]
        else:
            _, listing, name, kind = what
            key = dict(KEYED)[listing]
            left = by_name(a.listings.get(listing, []), key).get(name, MISSING)
            right = by_name(b.listings.get(listing, []), key).get(name, MISSING)
            if kind == "changed":
                changes = report[listing]["changed"][name]
            else:
                changes = [{"path": "", "kind": kind, **({"a": left} if kind == "removed" else {"b": right})}]
        self.columns.show_values(left, right, changes, absent=absent)
        self.changes.set_changes(changes, empty="No differences here.")
        if changes:
            self.columns.reveal(changes[0]["path"])


class CompareDialog(JobDialog):
    """A is fixed (the server it was opened on); B is picked from the window's servers, this session's
    other servers, or a session file."""

    def __init__(self, side_a: Side, others: list[Side], parent: QWidget | None = None) -> None:
        super().__init__("compare", "Compare", parent)
        self.setObjectName("compareDialog")
        self.setWindowTitle(f"Compare {side_a.label}")
        self.setWindowFlag(Qt.WindowMaximizeButtonHint, True)
        self.side_a = side_a
        self.opened: list[Any] = []  # session files opened for B, kept while the dialog lives
        self.report: dict[str, Any] | None = None
        self.a_label = text_label(side_a.label, self, name="compareSideA")
        self.other = QComboBox(self)
        self.other.setObjectName("compareOther")
        self.other.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.other.setMinimumContentsLength(40)
        for side in others:
            self.other.addItem(side.label, side)
        self.open_file = QPushButton("Session file…", self)
        self.open_file.setObjectName("compareOpenFile")
        self.open_file.setToolTip("Compare with a server of a session file (.sqlite or .mcpsession)")
        self.open_file.clicked.connect(self.choose_file)
        b_row = QHBoxLayout()
        b_row.addWidget(self.other, 1)
        b_row.addWidget(self.open_file)
        form = QFormLayout()
        form.addRow("A:", self.a_label)
        form.addRow("B:", b_row)
        self.say("" if others else "Pick a session file to compare with.")
        buttons = self.job_bar()
        self.view = CompareView(self)
        self.view.hide()
        self.placeholder = text_label("A live server is listed anew when the comparison runs (connected, listed, "
                                      "disconnected); a recorded one as it was last listed.", self,
                                      name="comparePlaceholder", role="muted")
        self.placeholder.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addLayout(buttons)
        lay.addWidget(self.placeholder, 1)
        lay.addWidget(self.view, 1)
        self._update()
        self.other.currentIndexChanged.connect(lambda _i: self._update())
        self.resize(1180, 760)

    def can_run(self) -> bool:
        return self.other.count() > 0

    def _update(self) -> None:
        self.run_button.setEnabled(self.can_run() and not self.running)

    def choose_file(self) -> QFileDialog:
        dialog = QFileDialog(self, "Compare with a session file", str(Path.home()),
                             "Sessions (*.mcpsession *.sqlite);;All files (*)")
        dialog.setObjectName("compareFileDialog")
        dialog.setFileMode(QFileDialog.ExistingFile)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.add_file)
        dialog.open()
        return dialog

    def add_file(self, path: str) -> int:
        """Offer the servers of session file `path` as B (the first of them picked); how many."""
        try:
            opened = open_session(path)
        except E.SpyglassError as exc:
            self.say(f"Cannot compare with {Path(path).name}: {exc.message}", "error")
            return 0
        self.opened.append(opened)
        real = [s for s in opened.surfaces.values() if s.frames]
        for surface in real:
            self.other.addItem(recorded_side(surface, opened.path.name).label,
                               recorded_side(surface, opened.path.name))
        if real:
            self.other.setCurrentIndex(self.other.count() - len(real))
        problems = "; ".join(opened.problems[:3])
        self.say(f"{opened.path.name}: {len(real)} server{'s' if len(real) != 1 else ''}" +
                 (f" (read with problems: {problems})" if problems else ""), "warning" if problems else "muted")
        self._update()
        return len(real)

    def run(self) -> asyncio.Future[Any] | None:
        side_b = self.other.currentData()
        if self.running or not isinstance(side_b, Side):
            return self.task
        return self.start(self._run(side_b), "compare")

    async def _run(self, side_b: Side) -> None:
        surfaces = []
        for letter, side in (("A", self.side_a), ("B", side_b)):
            if side.live is not None:
                self.say(f"Listing what {letter} offers ({visible(side.live.describe, 100)})…")
            try:
                surfaces.append(await side.resolve())
            except E.SpyglassError as exc:
                self.say(f"Could not reach {letter} ({visible(side.label, 100)}): {exc.message}", "error")
                return
        a, b = surfaces
        self.report = diff_surfaces(a, b)
        self.placeholder.hide()
        self.view.show()
        self.view.show_report(a, b, self.report)
        problems = [f"{letter}: {p}" for letter, s in (("A", a), ("B", b)) for p in s.problems]
        self.say("; ".join(problems) if problems else "", "warning")
