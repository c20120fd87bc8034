"""The Skills tab (SEP-2640), for a server that declares `io.modelcontextprotocol/skills`.

On the left the server's skills (`skillsList`, one row per skill with its verdict once verified) under the
count, Refresh and *Verify all* (`skillsVerify`: the same checks as `spyglass --cli --method skills/list
--verify`, each row's verdict filled in as its skill is done). On the right the selected skill: its name,
URI and description, its files with sizes and digests and each file's verdict (`skillsFiles`; a click
shows the file), what the verification found (`skillVerdict`, `skillsIssues`), and the file's content
(`skillsContent`): Markdown rendered without HTML, images or navigation, or the source as plain text.
*Save skill…* (`skillsSave`) writes the skill's files, as served, into a new folder named after it.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ... import errors as E
from ...protocol import skills as S
from ...session import Status
from ..base import design, theme
from ..base.layout import ListHeader, heading_label, plain_label, scrolling_column, title_label
from ..base.tasks import spawn
from ..base.text import plain_tooltip, visible, visible_block
from ..render.text import SafeMarkdown, human_size
from ..servers.connection import Connection

log = logging.getLogger("spyglass.ui.skills")

VERDICT = {"verified": ("✓ verified", "connected"), "failed": ("✗ failed", "error"),
           "incomplete": ("… incomplete", "warning"), "unverifiable": ("○ no digests", "muted")}
FILE_VERDICT = {"verified": ("✓ verified", "connected"), "mismatch": ("✗ mismatch", "error"),
                "read-error": ("✗ not readable", "error"), "unverifiable": ("○ not checked", "muted")}
CONTENT_MAX = 2 * 1024 * 1024  # bytes of one file shown; the rest is left to Save


def _tree(parent: QWidget, name: str, headers: list[str]) -> QTreeWidget:
    tree = QTreeWidget(parent)
    tree.setObjectName(name)
    tree.setHeaderLabels(headers)
    tree.setRootIsDecorated(False)
    tree.setUniformRowHeights(True)
    tree.setAlternatingRowColors(True)
    return tree


def _fit(tree: QTreeWidget, most: int = 8) -> None:
    """As tall as its rows (at most `most`, then it scrolls): no empty band under a short list."""
    rows = max(1, min(most, tree.topLevelItemCount()))
    first = tree.topLevelItem(0)
    row = tree.visualItemRect(first).height() if first is not None else 0
    row = row or tree.fontMetrics().height() + 6
    tree.setFixedHeight(tree.header().sizeHint().height() + rows * row + 2 * tree.frameWidth() + 4)


def _file_problem(verdict: S.FileVerdict) -> str:
    """What a failed file is called in the problems list: its size or its digest does not match, or no bytes."""
    if verdict.status == "read-error":
        return "read-error"
    return "size-mismatch" if verdict.expected_size != verdict.actual_size else "digest-mismatch"


def _paint(item: QTreeWidgetItem, column: int, role: str) -> None:
    item.setForeground(column, theme.colour(role))


class SkillsPane(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("skillsView")
        self.conn: Connection | None = None
        self.entries: list[S.SkillEntry] = []
        self.reports: dict[str, S.SkillReport] = {}  # by URI identity
        self.current: S.SkillEntry | None = None
        self.shown_uri: str | None = None  # the file in skillsContent
        self.shown_text: str = ""
        self.listed_for: Any = None  # the hello the list was made for: a new connection lists again
        self.verifying = False
        self._tasks: set[asyncio.Task[Any]] = set()
        left = QWidget(self)
        head = ListHeader(left, refresh=("refreshSkillsButton", "List the skills again (skills/list)", self.refresh),
                          count="skillCount", cache="skillsSummary", message="skillsMessage")
        self.refresh_button, self.count, self.summary, self.message = (head.refresh_button, head.count, head.cache,
                                                                       head.message)
        self.verify_button = QPushButton("Verify all", left)
        self.verify_button.setObjectName("skillsVerify")
        self.verify_button.setToolTip("Check every skill: conformance, each file's size and SHA-256 digest, and "
                                      "the served frontmatter against the listing")
        self.verify_button.clicked.connect(self.verify)
        head.row.insertWidget(1, self.verify_button)
        self.list = _tree(left, "skillsList", ["Skill", "Verdict"])
        self.list.header().setSectionResizeMode(0, QHeaderView.Stretch)
        self.list.header().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self.list.header().setStretchLastSection(False)
        self.list.currentItemChanged.connect(lambda cur, _prev: self._show_skill(self._entry_of(cur)))
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        head.add_to(ll)
        ll.addWidget(self.list, 1)

        right = QSplitter(Qt.Vertical, self)
        right.setObjectName("skillsSplitter")
        self.title = title_label(right, "skillTitle")
        self.uri = plain_label(right, "skillUri", selectable=True)
        self.description = plain_label(right, "skillDescription", selectable=True)
        self.files = _tree(right, "skillsFiles", ["File", "Size", "Digest", "Verdict"])
        self.files.header().setSectionResizeMode(0, QHeaderView.ResizeToContents)
        self.files.header().setSectionResizeMode(2, QHeaderView.Interactive)
        self.files.itemClicked.connect(lambda item, _col: self.show_file(item.data(0, Qt.UserRole)))
        self.dynamic_note = plain_label(right, "skillDynamicNote")
        self.dynamic_note.setText('resources: "dynamic" — the server generates this skill\'s files, so it '
                                  "advertises no digests and nothing can be checked against them.")
        self.verdict = plain_label(right, "skillVerdict", selectable=True)
        self.issues = _tree(right, "skillsIssues", ["", "Rule", "File", "What"])
        self.issues.setWordWrap(True)
        self.issues.setUniformRowHeights(False)
        self.issues.header().setSectionResizeMode(0, QHeaderView.ResizeToContents)
        self.issues.header().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self.issues.header().setSectionResizeMode(2, QHeaderView.ResizeToContents)
        self.placeholder = plain_label(right, "skillsPlaceholder")
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.setText("Select a skill.")
        self.detail = QWidget(right)
        d = QVBoxLayout(self.detail)
        d.setContentsMargins(0, 0, 0, 0)
        for w in (self.title, self.uri, self.description):
            d.addWidget(w)
        d.addWidget(heading_label("Files", self.detail))
        d.addWidget(self.files)
        d.addWidget(self.dynamic_note)
        d.addWidget(heading_label("Verification", self.detail))
        d.addWidget(self.verdict)
        d.addWidget(self.issues)
        top = scrolling_column(right, "skillsScroll", self.placeholder, self.detail)

        bottom = QWidget(right)
        self.content_head = plain_label(bottom, "skillsContentHead", wrap=False)
        self.source_button = QPushButton("Source", bottom)
        self.source_button.setObjectName("skillsSourceToggle")
        self.source_button.setCheckable(True)
        self.source_button.setToolTip("Show the file as it is served, not rendered")
        self.source_button.toggled.connect(lambda _on: self._render())
        self.save_button = QPushButton("Save skill…", bottom)
        self.save_button.setObjectName("skillsSave")
        self.save_button.setToolTip("Write this skill's files, as the server serves them, into a new folder")
        self.save_button.clicked.connect(self.choose_folder)
        row = QHBoxLayout()
        row.addWidget(self.content_head, 1)
        row.addWidget(self.source_button)
        row.addWidget(self.save_button)
        self.content = SafeMarkdown(bottom)
        self.content.setObjectName("skillsContent")
        self.content.linkShown.connect(self.follow_link)
        self.status = plain_label(bottom, "skillsStatus", selectable=True)
        self.status.hide()
        b = QVBoxLayout(bottom)
        b.setContentsMargins(design.margins("none", "xs", "none", "none"))
        b.addLayout(row)
        b.addWidget(self.content, 1)
        b.addWidget(self.status)
        right.addWidget(top)
        right.addWidget(bottom)
        right.setSizes([330, 330])
        split = QSplitter(Qt.Horizontal, self)
        split.setObjectName("skillsMainSplitter")
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([300, 660])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("none", "xs", "none", "none"))
        lay.addWidget(split)
        self._show_skill(None)

    # ------------------------------------------------------------------ connection
    def show_connection(self, conn: Connection | None) -> None:
        if conn is not self.conn:
            if self.conn is not None:
                try:
                    self.conn.statusChanged.disconnect(self._status_changed)
                except (RuntimeError, TypeError):
                    pass
            self.conn = conn
            self.listed_for = None
            self._set_entries([])
            if conn is not None:
                conn.statusChanged.connect(self._status_changed)
        self._status_changed()

    def offered(self) -> bool:
        return self.conn is not None and self.conn.session.skills.offered

    def _status_changed(self) -> None:
        conn = self.conn
        connected = conn is not None and conn.session.status is Status.CONNECTED
        if connected and self.offered() and self.listed_for is not conn.session.hello:
            self.refresh()
        elif not connected and conn is not None:
            self.message.setText("Connecting…" if conn.session.status is Status.CONNECTING else "Not connected.")
            self.message.setVisible(True)
        self._update_buttons()

    def refresh(self) -> asyncio.Task[Any] | None:
        if not self.offered() or self.conn is None:
            return None
        self.listed_for = self.conn.session.hello  # listed once per connection, however many signals say so
        return self._spawn(self._list())

    async def _list(self) -> None:
        conn = self.conn
        if conn is None:
            return
        self.refresh_button.setEnabled(False)
        self.message.setText("Listing skills…")
        self.message.setStyleSheet("")
        self.message.show()
        try:
            entries = await conn.session.skills.list_skills()
        except E.SpyglassError as exc:
            if conn is self.conn:
                self._set_entries([])
                self.message.setText(f"skills/list failed: {visible(exc.message, 500)}")
                self.message.setStyleSheet(f"color: {theme.colour('error').name()};")
            return
        finally:
            if conn is self.conn:
                self._update_buttons()
        if conn is self.conn:
            self._set_entries(entries)

    def _set_entries(self, entries: list[S.SkillEntry]) -> None:
        keep = self.current.uri if self.current is not None else None
        self.entries = entries
        self.reports = {}
        self.summary.setText("")
        self.summary.hide()
        self.list.blockSignals(True)
        self.list.clear()
        for e in entries:
            item = QTreeWidgetItem([visible(e.name, 120), ""])
            item.setData(0, Qt.UserRole, e.uri)
            item.setToolTip(0, plain_tooltip(visible_block(f"{e.uri}\n\n{e.description}", 2000)))
            self.list.addTopLevelItem(item)
        self.list.blockSignals(False)
        n = len(entries)
        self.count.setText(f"{n} skill{'s' if n != 1 else ''}" if self.conn is not None else "")
        self.message.setText("" if entries else "This server lists no skills.")
        self.message.setStyleSheet("")
        self.message.setVisible(not entries and self.conn is not None)
        if keep is None or not self.select(keep):
            self._show_skill(None)
        self._update_buttons()

    def select(self, uri: str) -> bool:
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            if item.data(0, Qt.UserRole) == uri:
                self.list.setCurrentItem(item)
                return True
        return False

    def _entry_of(self, item: QTreeWidgetItem | None) -> S.SkillEntry | None:
        uri = item.data(0, Qt.UserRole) if item is not None else None
        return next((e for e in self.entries if e.uri == uri), None)

    def _update_buttons(self) -> None:
        live = self.conn is not None and self.conn.session.client is not None and self.offered()
        self.refresh_button.setEnabled(live)
        self.verify_button.setEnabled(live and bool(self.entries) and not self.verifying)
        self.save_button.setEnabled(live and self.current is not None)

    # ------------------------------------------------------------------ one skill
    def _show_skill(self, entry: S.SkillEntry | None) -> None:
        self.current = entry
        self.placeholder.setVisible(entry is None)
        self.detail.setVisible(entry is not None)
        self.status.hide()
        self._update_buttons()
        if entry is None:
            self.shown_uri, self.shown_text = None, ""
            self.content_head.setText("")
            self.content.clear()
            return
        self.title.setText(visible(entry.name, 200))
        self.uri.setText(visible(entry.uri, 500))
        self.description.setText(visible_block(entry.description or "(no description)", 4000))
        self._fill_files()
        self._fill_verdict()
        self.show_file(entry.uri)

    def _fill_files(self) -> None:
        entry = self.current
        self.files.clear()
        if entry is None:
            return
        report = self.reports.get(S.uri_identity(entry.uri))
        verdicts = {S.uri_identity(f.uri): f for f in report.files} if report else {}
        declared = entry.resources if entry.resources is not None else (S.ManifestFile(entry.uri),)
        root = S.skill_root(entry.uri) or ""
        for f in declared:
            normalized = S.uri_identity(f.uri)
            shown = normalized[len(root):] if root and normalized.startswith(root) else f.uri
            size = human_size(int(f.size)) if f.size is not None and S.usable_size(f.size) else (
                "—" if f.size is None else visible(str(f.size), 40))
            digest = f.digest[:19] + "…" if f.digest and len(f.digest) > 20 else (f.digest or "—")
            item = QTreeWidgetItem([visible(shown, 200), size, visible(digest, 40), ""])
            item.setData(0, Qt.UserRole, f.uri)
            item.setToolTip(2, plain_tooltip(visible(f.digest or "no digest advertised", 200)))
            verdict = verdicts.get(normalized)
            if verdict is not None:
                word, role = FILE_VERDICT[verdict.status]
                item.setText(3, word)
                _paint(item, 3, role)
                item.setToolTip(3, plain_tooltip(visible_block(verdict.reason or (verdict.actual_digest or ""), 1000)))
            self.files.addTopLevelItem(item)
        _fit(self.files)
        self.dynamic_note.setVisible(entry.dynamic)

    def _fill_verdict(self) -> None:
        entry = self.current
        self.issues.clear()
        report = self.reports.get(S.uri_identity(entry.uri)) if entry is not None else None
        if report is None:
            self.verdict.setText("Not verified yet: press Verify all.")
            self.verdict.setStyleSheet(f"color: {theme.colour('muted').name()};")
            self.issues.hide()
            return
        word, role = VERDICT[report.outcome]
        text = word.capitalize()
        if report.incomplete:
            text += f" — {report.incomplete}"
        elif report.outcome == "verified":
            text += f" — {len(report.files)} file{'s' if len(report.files) != 1 else ''}, sizes and digests match."
        elif report.outcome == "failed":
            errors = sum(i.severity == "error" for i in (*report.conformance, *report.frontmatter)) + sum(
                f.status in ("mismatch", "read-error") for f in report.files)
            text += f" — {errors} problem{'s' if errors != 1 else ''}, listed below."
        elif report.outcome == "unverifiable":
            text += " — the file set is generated: there is nothing to check it against."
        self.verdict.setText(visible_block(text, 2000))
        self.verdict.setStyleSheet(f"color: {theme.colour(role).name()};")
        problems = [*report.conformance, *report.frontmatter]
        problems += [S.Issue(_file_problem(f), "error", f.reason or f.status, f.uri) for f in report.files
                     if f.status in ("mismatch", "read-error")]
        root = S.skill_root(entry.uri) if entry is not None else None
        for issue in problems:
            where = S.uri_identity(issue.resource_uri) if issue.resource_uri else ""
            where = where[len(root):] if root and where.startswith(root) else (issue.resource_uri or "")
            item = QTreeWidgetItem(["✗" if issue.severity == "error" else "⚠", issue.code, visible(where, 200),
                                    visible_block(issue.message, 2000)])
            _paint(item, 0, "error" if issue.severity == "error" else "warning")
            item.setToolTip(3, plain_tooltip(visible_block(issue.message, 2000)))
            self.issues.addTopLevelItem(item)
        _fit(self.issues, 6)
        self.issues.setVisible(bool(problems))

    # ------------------------------------------------------------------ content
    def show_file(self, uri: Any) -> asyncio.Task[Any] | None:
        if not isinstance(uri, str) or self.conn is None or self.conn.session.client is None:
            return None
        return self._spawn(self._load(uri))

    async def _load(self, uri: str) -> None:
        conn = self.conn
        if conn is None:
            return
        self.content_head.setText(f"Reading {visible(uri, 200)}…")
        try:
            data = await conn.session.skills.read_bytes(uri)
        except E.SpyglassError as exc:
            if conn is self.conn and self.current is not None:
                self.shown_uri, self.shown_text = uri, ""
                self.content.clear()
                self.content_head.setText(visible(uri, 200))
                self._say(f"resources/read failed: {visible(exc.message, 500)}", "error")
            return
        if conn is not self.conn or self.current is None:
            return
        self.status.hide()
        self.shown_uri = uri
        try:
            text = data[:CONTENT_MAX].decode("utf-8")
        except UnicodeDecodeError:
            text = ""
            self._say(f"A binary file of {human_size(len(data))}: nothing to show (Save skill… writes it).")
        else:
            if len(data) > CONTENT_MAX:
                self._say(f"Only the first {human_size(CONTENT_MAX)} of {human_size(len(data))} are shown.")
        self.shown_text = text
        self.content_head.setText(f"{visible(uri, 200)} · {human_size(len(data))}")
        self._render()

    def follow_link(self, href: str) -> asyncio.Task[Any] | None:
        """A link in the shown file: one to another file of the skill shows that file; any other is only
        said, never opened."""
        entry, base = self.current, self.shown_uri
        target = None
        if entry is not None and base is not None and href and ":" not in href.split("/", 1)[0] \
                and not href.startswith(("/", "#")):
            joined = S.normalize_uri(base.rsplit("/", 1)[0] + "/" + href.split("#", 1)[0])
            files = entry.resources if entry.resources is not None else ()
            target = next((f.uri for f in files if S.uri_identity(f.uri) == joined), None)
        if target is None:
            self._say(f"Link: {visible(href, 300)} (not opened)")
            return None
        return self.show_file(target)

    def _render(self) -> None:
        uri = self.shown_uri or ""
        markdown = uri.lower().endswith((".md", ".markdown"))
        if markdown and not self.source_button.isChecked():
            _front, body = S.split_skill_file(self.shown_text)
            self.content.set_markdown(body)
        else:
            self.content.setPlainText(self.shown_text)
        self.source_button.setEnabled(markdown)

    # ------------------------------------------------------------------ verify
    def verify(self) -> asyncio.Task[Any] | None:
        if not self.entries or self.conn is None or self.verifying:
            return None
        return self._spawn(self._verify())

    async def _verify(self) -> None:
        conn = self.conn
        if conn is None:
            return
        entries = list(self.entries)
        self.verifying = True
        self._update_buttons()
        self.reports = {}
        for i in range(self.list.topLevelItemCount()):
            self.list.topLevelItem(i).setText(1, "")
        self.summary.setText(f"Verifying {len(entries)} skill{'s' if len(entries) != 1 else ''}…")
        self.summary.setStyleSheet("")
        self.summary.show()
        try:
            reports = await conn.session.skills.verify(entries, on_report=self._reported)
        except E.SpyglassError as exc:
            if conn is self.conn:
                self.summary.setText(f"Verification stopped: {visible(exc.message, 500)}")
                self.summary.setStyleSheet(f"color: {theme.colour('error').name()};")
            return
        finally:
            self.verifying = False
            if conn is self.conn:
                self._update_buttons()
        if conn is self.conn:
            outcome = S.exit_outcome(reports, False)
            self.summary.setText(visible_block(S.summary(reports), 1000))
            colour = {"failed": "error", "incomplete": "warning"}.get(outcome or "", "connected")
            self.summary.setStyleSheet(f"color: {theme.colour(colour).name()};")

    def _reported(self, report: S.SkillReport) -> None:
        self.reports[S.uri_identity(report.uri)] = report
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            if item.data(0, Qt.UserRole) == report.uri:
                word, role = VERDICT[report.outcome]
                item.setText(1, word)
                _paint(item, 1, role)
        if self.current is not None and S.uri_identity(self.current.uri) == S.uri_identity(report.uri):
            self._fill_files()
            self._fill_verdict()

    # ------------------------------------------------------------------ save
    def choose_folder(self) -> QFileDialog | None:
        if self.current is None:
            return None
        dialog = QFileDialog(self, f"Save the skill {self.current.name} into…", str(Path.home()))
        dialog.setObjectName("saveSkillDialog")
        dialog.setFileMode(QFileDialog.Directory)
        dialog.setOption(QFileDialog.ShowDirsOnly, True)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda path: self.save_to(Path(path)))
        dialog.open()
        return dialog

    def save_to(self, folder: Path) -> asyncio.Task[Any] | None:
        if self.current is None or self.conn is None:
            return None
        return self._spawn(self._save(self.current, folder))

    async def _save(self, entry: S.SkillEntry, folder: Path) -> None:
        conn = self.conn
        if conn is None:
            return
        self._say(f"Saving {visible(entry.name, 100)}…")
        try:
            saved = await conn.session.skills.save(entry, folder)
        except (E.SpyglassError, OSError) as exc:
            message = exc.message if isinstance(exc, E.SpyglassError) else f"{exc.strerror or exc}"
            self._say(f"Not saved: {visible(message, 500)}", "error")
            return
        report = self.reports.get(S.uri_identity(entry.uri))
        text = f"Saved {len(saved.written)} file{'s' if len(saved.written) != 1 else ''} to {saved.folder}."
        if saved.skipped:
            text += " Left out: " + "; ".join(f"{visible(u, 120)} ({why})" for u, why in saved.skipped[:5]) + "."
        level = "muted"
        if report is not None and report.outcome == "failed":
            text += " This skill failed verification: what was saved is what the server serves, not what it signed."
            level = "warning"
        elif report is None:
            text += " It was not verified first."
        self._say(visible_block(text, 2000), "warning" if saved.skipped else level)

    # ------------------------------------------------------------------ helpers
    def _say(self, text: str, level: str = "muted") -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {theme.colour(level).name()};")
        self.status.setVisible(bool(text))

    def _spawn(self, coro: Any) -> asyncio.Task[Any] | None:
        return spawn(coro, self._tasks, lambda exc: self._say(f"Internal error: {exc}", "error"), "skills pane task")
