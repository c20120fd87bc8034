"""The Collections tab (`collectionsPane`): a collection file opened, its steps listed, one or all run
against the selected server with a progress bar, each step's verdict (expected versus what came), its
arguments edited in the generated form and its expectations in a small editor, and the file saved
atomically with the user's comments and key order kept (`inspector.collection.edit`).

A run goes over the server's own connection, so its traffic is in the traffic pane like any call; the
server's questions during a step are answered as the step says (`elicit`, `sampling`), in a dialog
otherwise. A file that cannot be run is shown with every problem, line and column, never half-read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QMenu,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ... import errors as E
from ...collection import edit
from ...collection.load import CollectionError, Step
from ...collection.run import StepAnswers, StepResult, load_snapshots
from ...collection.run import run as run_collection
from ...recording.compare import MISSING
from ...session import Status
from ..base import design, theme
from ..base.empty import EmptyState
from ..base.layout import plain_label, text_label
from ..base.tasks import spawn
from ..base.text import visible
from .step_editor import ArgumentsEditor, ExpectEditor, prompt_schema
from .verdict import STATUS_COLOUR, STATUS_MARK, VerdictView

INDEX_ROLE = Qt.UserRole + 1
EMPTY, PROBLEMS, BODY = range(3)


def target_text(step: Step) -> str:
    if step.kind == "ask":
        return f"ask “{step.target}”"
    return {"call": "call", "read": "read", "prompt": "prompt", "list": "list"}[step.kind] + " " + step.target


class CollectionsPane(QWidget):
    opened = Signal(str)  # a collection file was opened (for Recent)
    openRequested = Signal()  # Open… pressed: the window shows its file dialog

    def __init__(self, connection: Callable[[], Any], answers: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("collectionsPane")
        self.connection = connection
        self.answers = answers  # the window's DialogAnswers: a run installs its step's answers there
        self.editable: edit.Editable | None = None
        self.results: dict[str, StepResult] = {}
        self.job: asyncio.Task[Any] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._running: list[str] = []
        self.recent: Callable[[], list[Path]] = list
        self.ask_model: Callable[[], Any] = lambda: None  # the chat ask steps ask (the playground's model)
        self._build()
        self._show_page()

    # ------------------------------------------------------------------ construction
    def _build(self) -> None:
        self.open_button = QToolButton(self)
        self.open_button.setObjectName("collectionOpen")
        self.open_button.setText("Open…")
        self.open_button.setToolTip("Open a collection file (YAML)")
        self.open_button.setPopupMode(QToolButton.MenuButtonPopup)
        self.open_button.clicked.connect(self.openRequested.emit)
        self.recent_menu = QMenu(self.open_button)
        self.recent_menu.setObjectName("collectionRecentMenu")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self.open_button.setMenu(self.recent_menu)
        self.title = plain_label(self, "collectionTitle", wrap=False, selectable=True, bold=True)
        self.reload_button = self._button("Reload", "collectionReload",
                                          "Read the file again (edits not saved are lost)", self.reload)
        self.save_button = self._button("Save", "collectionSave", "Write the collection (Ctrl+S); comments and key "
                                        "order are kept", self.save)
        self.run_all = self._button("Run all", "collectionRunAll", "Run every step, in order, against the selected "
                                    "server", lambda: self.run())
        self.run_step = self._button("Run step", "collectionRunStep", "Run the selected step alone", self.run_selected)
        self.stop_button = self._button("Stop", "collectionStop", "Stop the run (the step in flight is cancelled)",
                                        self.stop)
        self.progress = QProgressBar(self)
        self.progress.setObjectName("collectionProgress")
        self.progress.setTextVisible(True)
        self.progress.setMaximumWidth(240)
        self.progress.hide()
        self.summary = plain_label(self, "collectionSummary", wrap=False, selectable=True)
        top = QHBoxLayout()
        top.addWidget(self.open_button)
        top.addWidget(self.title, 1)
        top.addWidget(self.reload_button)
        top.addWidget(self.save_button)
        run_row = QHBoxLayout()
        for w in (self.run_all, self.run_step, self.stop_button, self.progress):
            run_row.addWidget(w)
        run_row.addWidget(self.summary, 1)
        self.message = text_label("", self, name="collectionMessage", role="error")
        self.message.hide()

        self.pages = QStackedWidget(self)
        self.pages.setObjectName("collectionPages")
        empty = EmptyState(self.pages, "collectionEmpty", "No collection open",
                           "A collection keeps calls with what they should answer, in a YAML file beside your "
                           "server's code. Open one, or make one with Save to collection… after a call in the "
                           "Tools tab. `spyglass test FILE` runs the same file in CI.",
                           [("Open a collection…", "collectionEmptyOpen", self.openRequested.emit)])
        empty.title.setObjectName("collectionEmptyTitle")
        self.problems = QPlainTextEdit(self.pages)
        self.problems.setObjectName("collectionProblems")
        self.problems.setReadOnly(True)
        self.steps = QTreeWidget(self)
        self.steps.setObjectName("collectionSteps")
        self.steps.setHeaderLabels(["", "Step", "Target", "Time"])
        self.steps.setRootIsDecorated(False)
        self.steps.setUniformRowHeights(True)
        self.steps.setAlternatingRowColors(True)
        self.steps.setTextElideMode(Qt.ElideRight)
        header = self.steps.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.Stretch)
        header.setSectionResizeMode(2, QHeaderView.Interactive)
        header.setSectionResizeMode(3, QHeaderView.ResizeToContents)
        header.resizeSection(2, 130)
        self.steps.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # the columns fit; long texts are elided
        self.steps.setMinimumWidth(260)
        self.steps.currentItemChanged.connect(lambda *_: self._show_step())
        self.steps.itemDoubleClicked.connect(lambda *_: self.run_selected())
        self.verdict = VerdictView(self)
        self.verdict.acceptSnapshot.connect(self.accept_snapshot)
        self.arguments = ArgumentsEditor(self)
        self.expect = ExpectEditor(self)
        for editor in (self.arguments, self.expect):
            editor.edited.connect(self._edited)
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("collectionStepTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.verdict, "Verdict")
        self.tabs.addTab(self.arguments, "Arguments")
        self.tabs.addTab(self.expect, "Expectations")
        body = QSplitter(Qt.Horizontal, self.pages)
        body.setObjectName("collectionSplitter")
        body.addWidget(self.steps)
        body.addWidget(self.tabs)
        body.setStretchFactor(0, 2)
        body.setStretchFactor(1, 3)
        body.setSizes([400, 600])
        body.setChildrenCollapsible(False)
        for page in (empty, self.problems, body):
            self.pages.addWidget(page)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("m", "s", "m", "xs"))
        lay.addLayout(top)
        lay.addLayout(run_row)
        lay.addWidget(self.message)
        lay.addWidget(self.pages, 1)
        save = QShortcut(QKeySequence.Save, self)
        save.setContext(Qt.WidgetWithChildrenShortcut)
        save.activated.connect(self.save)

    def _button(self, text: str, name: str, tip: str, slot: Callable[[], Any]) -> QPushButton:
        b = QPushButton(text, self)
        b.setObjectName(name)
        b.setToolTip(tip)
        b.clicked.connect(lambda: slot())
        return b

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        paths = [p for p in self.recent() if p.exists()]
        for p in paths:
            a = self.recent_menu.addAction(visible(str(p), 120))
            a.setObjectName("collectionRecent")
            a.setData(str(p))
            a.triggered.connect(lambda _=False, path=p: self.open_path(path))
        if not paths:
            self.recent_menu.addAction("No collections opened yet").setEnabled(False)

    # ------------------------------------------------------------------ opening and saving
    def open_path(self, path: str | Path) -> bool:
        """Show collection `path`; its problems (each with line and column) when it cannot be run."""
        if self.job is not None:
            self._say("A run is going on: stop it before opening another collection.")
            return False
        path = Path(path)
        self.results = {} if self.editable is None or self.editable.path != path else self.results
        try:
            self.editable = edit.open_editable(path)
        except CollectionError as exc:
            self.editable = None
            self._bad_file = path
            lines = [str(p).replace(str(path), path.name, 1) for p in exc.problems]
            self.problems.setPlainText(f"{path} cannot be run until it is fixed:\n\n" + "\n".join(lines))
            self._show_page(PROBLEMS, f"{path.name} · {len(exc.problems)} problem"
                                      f"{'s' if len(exc.problems) != 1 else ''}")
            self.opened.emit(str(path))
            return False
        self._say("")
        self.opened.emit(str(path))
        self._fill_steps()
        return True

    def reload(self) -> bool:
        path = self.editable.path if self.editable is not None else getattr(self, "_bad_file", None)
        return self.open_path(path) if path is not None else False

    def adopt(self, editable: edit.Editable) -> None:
        """Show `editable` (a collection just written by *Save to collection…*)."""
        if self.job is not None:
            return
        if self.editable is None or self.editable.path != editable.path:
            self.results = {}
        self.editable = editable
        self._fill_steps()

    def editable_for(self, path: Path) -> edit.Editable | None:
        """The open collection when it is `path` (so a step saved into it keeps the tab's edits)."""
        e = self.editable
        if e is None:
            return None
        try:
            return e if e.path.resolve() == path.resolve() else None
        except OSError:
            return None

    def save(self, *, overwrite: bool = False) -> bool:
        e = self.editable
        if e is None:
            return False
        if not (self.arguments.apply() if self.arguments.changed else True) or not (
                self.expect.apply() if self.expect.changed else True):
            self._say("Fix the step's edit first (its problem is shown under it).")
            return False
        try:
            edit.save(e, overwrite=overwrite)
        except edit.StaleCollection as exc:
            self._say(f"{exc.message}: Reload to see it, or Save again to write yours over it.")
            self.save_button.setText("Save over it")
            self.save_button.clicked.disconnect()
            self.save_button.clicked.connect(lambda: self.save(overwrite=True))
            return False
        except CollectionError as exc:
            self._say("Not saved, the collection would not be valid: " + str(exc).replace("\n", "; "))
            return False
        except E.SpyglassError as exc:
            self._say(exc.message)
            return False
        self._restore_save_button()
        self._say("")
        self._fill_steps(keep=True)
        self.summary.setText(f"Saved {e.path.name}.")
        return True

    def _restore_save_button(self) -> None:
        if self.save_button.text() != "Save":
            self.save_button.setText("Save")
            self.save_button.clicked.disconnect()
            self.save_button.clicked.connect(lambda: self.save())

    def _edited(self) -> None:
        self._fill_steps(keep=True)

    # ------------------------------------------------------------------ showing
    def _show_page(self, page: int = EMPTY, title: str = "") -> None:
        self.pages.setCurrentIndex(page)
        self.title.setText(visible(title, 160))
        self._update_buttons()

    def _fill_steps(self, keep: bool = False) -> None:
        e = self.editable
        if e is None:
            self._show_page()
            return
        try:
            collection = e.current()
        except CollectionError as exc:  # cannot happen after a checked edit; said, not raised
            self._say(str(exc))
            return
        current = self.steps.currentItem()
        row = self.steps.indexOfTopLevelItem(current) if keep and current is not None else 0
        self.steps.blockSignals(True)
        self.steps.clear()
        for step in collection.steps:
            item = QTreeWidgetItem(self.steps, ["", step.name, target_text(step), ""])
            item.setData(0, INDEX_ROLE, step.index)
            item.setToolTip(1, step.name)
            item.setToolTip(2, target_text(step))
            self._mark(item, self.results.get(step.name))
        self.steps.blockSignals(False)
        if self.steps.topLevelItemCount():
            self.steps.setCurrentItem(self.steps.topLevelItem(min(max(row, 0), self.steps.topLevelItemCount() - 1)))
        self._show_page(BODY, f"{collection.name} · {e.path.name}{' · not saved' if e.dirty else ''}")
        self.title.setToolTip(str(e.path))
        self._show_step()

    def _mark(self, item: QTreeWidgetItem, r: StepResult | None, status: str | None = None) -> None:
        status = status or (r.status if r is not None else None)
        item.setText(0, STATUS_MARK.get(status, "") if status else "")
        item.setForeground(0, theme.colour(STATUS_COLOUR.get(status or "", "muted")))
        item.setText(3, f"{r.ms:.0f} ms" if r is not None and status != "running" and r.ms else "")

    def step_at(self, item: QTreeWidgetItem | None) -> tuple[int, Step] | None:
        if item is None or self.editable is None:
            return None
        index = item.data(0, INDEX_ROLE)
        steps = self.editable.current().steps
        step = next((s for s in steps if s.index == index), None)
        return (index, step) if step is not None else None

    def _show_step(self, *, editors: bool = True) -> None:
        """The selected step's verdict and (with `editors`, unless the user is typing in them) its editors."""
        found = self.step_at(self.steps.currentItem())
        if found is None:
            self.verdict.show_step(None, None)
            self.arguments.show_step(None, -1, None)
            self.expect.show_step(None, -1, None)
            self._update_buttons()
            return
        index, step = found
        snapshot = MISSING
        if step.expect.get("snapshot") and self.editable is not None:
            try:
                snapshot = load_snapshots(self.editable.collection.snapshot_path).get(step.name, MISSING)
            except E.SpyglassError:
                snapshot = MISSING
        self.verdict.show_step(step, self.results.get(step.name), snapshot)
        same = self.arguments.step is not None and self.arguments.index == index
        if editors or not same:
            if not (same and self.arguments.changed):
                self.arguments.show_step(self.editable, index, step, schema=self._schema(step))
            if not (same and self.expect.changed):
                self.expect.show_step(self.editable, index, step)
        self._update_buttons()

    def _schema(self, step: Step) -> Any:
        conn = self.connection()
        if conn is None or step.kind not in ("call", "prompt"):
            return None
        kind = "tools" if step.kind == "call" else "prompts"
        for item in conn.session.listings[kind].items:
            if item.get("name") == step.target:
                if kind == "prompts":
                    return prompt_schema(item)
                schema = item.get("inputSchema")
                return schema if isinstance(schema, dict) else None
        return None

    def show_connection(self, _conn: Any) -> None:
        """The selected server changed (or its state did): what can be run, and the forms, follow it."""
        if self.job is None and self.pages.currentIndex() == BODY:
            self._show_step()
        self._update_buttons()

    def _update_buttons(self) -> None:
        conn = self.connection()
        live = conn is not None and conn.session.status is Status.CONNECTED
        has = self.editable is not None and self.pages.currentIndex() == BODY
        running = self.job is not None
        why = "" if live else ("Select a server first" if conn is None else "Connect the server first")
        for b in (self.run_all, self.run_step):
            b.setEnabled(has and live and not running)
        self.run_step.setEnabled(self.run_step.isEnabled() and self.steps.currentItem() is not None)
        self.stop_button.setEnabled(running)
        self.save_button.setEnabled(has and not running)
        self.reload_button.setEnabled((self.editable is not None or hasattr(self, "_bad_file")) and not running)
        self.open_button.setEnabled(not running)
        if not live and has and not running:
            self.summary.setText(why + " to run this collection.")

    def _say(self, text: str) -> None:
        self.message.setText(visible(text, 1000))
        self.message.setVisible(bool(text))

    # ------------------------------------------------------------------ running
    def run_selected(self) -> asyncio.Task[Any] | None:
        found = self.step_at(self.steps.currentItem())
        return self.run([found[1].name]) if found is not None else None

    def run(self, only: list[str] | None = None) -> asyncio.Task[Any] | None:
        """Run `only` these steps (every one when None) against the selected server."""
        conn = self.connection()
        if self.editable is None or self.job is not None or conn is None:
            return None
        if conn.session.status is not Status.CONNECTED:
            self._say(f"{conn.name} is not connected: connect it first.")
            return None
        if (self.arguments.changed and not self.arguments.apply()) or (self.expect.changed and not self.expect.apply()):
            self._say("Fix the step's edit first (its problem is shown under it).")
            return None
        try:
            collection = self.editable.current()
        except CollectionError as exc:
            self._say(str(exc))
            return None
        names = list(only) if only else [s.name for s in collection.steps]
        self._running = names
        for name in names:
            self.results.pop(name, None)
        for i in range(self.steps.topLevelItemCount()):
            item = self.steps.topLevelItem(i)
            if item.text(1) in names:
                self._mark(item, None, "skipped")
        self._mark_running(0)
        self.progress.setRange(0, len(names))
        self.progress.setValue(0)
        self.progress.setFormat(f"%v / {len(names)}")
        self.progress.show()
        self.summary.setText(f"Running {len(names)} step{'s' if len(names) != 1 else ''} against {conn.name}…")
        self._say("")
        answers = StepAnswers()
        server_id = conn.session.server_id
        self.answers.scripts[server_id] = answers
        timeout = collection.timeout or conn.session.options.timeout

        async def go() -> None:
            model = self.ask_model() if any(s.kind == "ask" for s in collection.steps) else None
            try:
                report = await run_collection(collection, conn.session, answers, only=names, timeout=timeout,
                                              target=conn.name, progress=self._step_done, model=model)
            except asyncio.CancelledError:
                done = sum(1 for n in names if n in self.results)
                self._finished(f"Stopped after {done} of {len(names)} steps.")
                raise
            except E.SpyglassError as exc:  # the model endpoint of ask steps cannot be used
                self._finished(f"The run stopped: {exc.message}", "error")
                return
            finally:
                self.answers.scripts.pop(server_id, None)
                if model is not None:
                    await model.aclose()
            skipped = len(report.results) - report.passed - report.failed
            self._finished(f"{report.passed} passed, {report.failed} failed"
                           + (f", {skipped} not run" if skipped else "") + f" ({report.seconds:.2f} s)",
                           "error" if report.failed else "connected")

        self.job = spawn(go(), self._tasks, lambda exc: self._finished(f"The run failed: {type(exc).__name__}: {exc}",
                                                                       "error"), "running a collection")
        self._update_buttons()
        return self.job

    def _mark_running(self, n: int) -> None:
        if n < len(self._running):
            item = self._item_named(self._running[n])
            if item is not None:
                self._mark(item, None, "running")

    def _item_named(self, name: str) -> QTreeWidgetItem | None:
        for i in range(self.steps.topLevelItemCount()):
            item = self.steps.topLevelItem(i)
            if item.text(1) == name:
                return item
        return None

    def _step_done(self, r: StepResult) -> None:
        if not shiboken6.isValid(self):
            return
        self.results[r.step.name] = r
        item = self._item_named(r.step.name)
        if item is not None:
            self._mark(item, r)
        done = sum(1 for n in self._running if n in self.results)
        self.progress.setValue(done)
        self._mark_running(done)
        current = self.step_at(self.steps.currentItem())
        if current is not None and current[1].name == r.step.name:
            self._show_step(editors=False)

    def _finished(self, text: str, role: str = "muted") -> None:
        if not shiboken6.isValid(self):
            return
        self.job = None
        self.progress.hide()
        for name in self._running:
            item = self._item_named(name)
            if item is not None and name not in self.results:
                self._mark(item, None, "skipped")
        self._running = []
        self.summary.setText(text)
        self.summary.setStyleSheet(f"color: {theme.colour(role).name()};")
        self._show_step(editors=False)
        self._update_buttons()

    def stop(self) -> None:
        if self.job is not None:
            self.job.cancel()

    def accept_snapshot(self, r: StepResult) -> None:
        if self.editable is None:
            return
        raw = {"error": r.error} if r.error is not None else r.result
        try:
            edit.store_snapshot(self.editable, r.step.name, raw)
        except E.SpyglassError as exc:
            self._say(exc.message)
            return
        r.snapshot, r.status, r.misses = "updated", "passed", []
        item = self._item_named(r.step.name)
        if item is not None:
            self._mark(item, r)
        self.summary.setText(f"The snapshot of {r.step.name!r} is this answer now.")
        self._show_step(editors=False)

    def close_down(self) -> None:
        """The window closes: a run still going stops (its server stays the window's to close)."""
        self.stop()

