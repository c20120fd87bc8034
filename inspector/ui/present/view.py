"""The stage of presentation mode (`presentView`): the tools as cards, then one tool with its friendly form, a
large Run button, friendly progress with Cancel, a plain question before a destructive tool, and the answer card.
Zoom (Ctrl+plus / Ctrl+minus, a size menu), three looks (light, dark, high contrast), Page Down / Page Up as a
presenter's clicker, and a script of prepared steps (a collection file, or the calls of this mode saved as one)
stepped through with → and ← (and the clicker)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QFont, QFontMetrics, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...collection import load as collection_load
from ...private import write_private
from ...session.calls import CallRecord
from ..base import design, theme
from ..calls.questions import HANDED_BACK
from ..servers.connection import Connection
from . import words
from .answer import SCALES, AnswerCard
from .cards import ToolCards
from .friendly_form import FriendlyForm, plain_label
from .question import QuestionCard

BODY_PT, TITLE_PT = 14.0, 20.0  # at 100 %
ZOOMS = (100, 125, 150, 175, 200, 250)
TYPING = (QLineEdit, QAbstractSpinBox, QComboBox, QTextEdit, QPlainTextEdit)
LOOKS = {"light": "Light", "dark": "Dark", "high-contrast": "High contrast"}


def font_of(points: float) -> QFont:
    font = QFont(QApplication.font())
    font.setPointSizeF(points)
    return font


def look_palette(look: str) -> QPalette:
    if look == "dark":
        return theme.dark_palette()
    if look == "high-contrast":
        return theme.high_contrast_palette()
    return theme.light_palette()


def named(widget: Any, name: str, accessible: str, description: str = "") -> Any:
    widget.setObjectName(name)
    widget.setAccessibleName(accessible)
    widget.setAccessibleDescription(description or accessible)
    return widget


class PresentView(QWidget):
    """One server's tools for an audience. `leaveRequested` when the presenter asks to leave."""

    leaveRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("presentView")
        self.setAttribute(Qt.WA_StyledBackground, True)  # its style sheet paints the look's background
        self.conn: Connection | None = None
        self.tools: dict[str, dict[str, Any]] = {}
        self.tool: dict[str, Any] | None = None
        self.form: FriendlyForm | None = None
        self.rec: CallRecord | None = None
        self.card: AnswerCard | None = None
        self.zoom = 100
        self.look = "light"
        self.look_colours = theme.light_palette()
        self.script: list[tuple[str, str, Any]] = []  # (step name, tool, arguments)
        self.script_at = -1
        self.played: list[tuple[str, Any]] = []  # the calls run in this mode, for Save as script
        self.question: QuestionCard | None = None  # the server's question on the stage, one at a time
        self.asking = asyncio.Lock()
        self.staged = True  # False once left: a question waiting its turn goes back to the dialog
        self.resume = 0  # the page to show again once the question is answered
        self._build()
        self.set_look("dark" if theme.is_dark() else "light")
        self.set_zoom(100)

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("xl", "xxxl"))
        lay.setSpacing(design.space("l"))
        bar = QHBoxLayout()
        self.back = named(QPushButton("← All tools"), "presentBack", "All tools", "Back to the list of tools")
        self.back.clicked.connect(self.show_cards)
        self.heading = named(QLabel("Tools"), "presentTitle", "Title")
        self.heading.setTextFormat(Qt.PlainText)
        self.script_button = named(QToolButton(), "presentScript", "Script",
                                   "Open a script of prepared steps, or save the calls you ran as one")
        self.script_button.setText("Script")
        self.script_button.setPopupMode(QToolButton.InstantPopup)
        menu = QMenu(self.script_button)
        menu.addAction("Open a script…", self.choose_script)
        menu.addAction("Save these calls as a script…", self.choose_save)
        menu.addAction("Stop the script", self.stop_script)
        self.script_button.setMenu(menu)
        self.size_button = named(QToolButton(), "presentSize", "Text size", "Make the text larger or smaller")
        self.size_button.setText("Text size")
        self.size_button.setPopupMode(QToolButton.InstantPopup)
        sizes = QMenu(self.size_button)
        self.size_group = QActionGroup(self)
        for z in ZOOMS:
            a = QAction(f"{z} %", self, checkable=True)
            a.setObjectName(f"presentZoom{z}")
            a.triggered.connect(lambda _=False, v=z: self.set_zoom(v))
            self.size_group.addAction(a)
            sizes.addAction(a)
        self.size_button.setMenu(sizes)
        self.look_button = named(QToolButton(), "presentLook", "Colours", "Light, dark or high contrast")
        self.look_button.setText("Colours")
        self.look_button.setPopupMode(QToolButton.InstantPopup)
        looks = QMenu(self.look_button)
        self.look_group = QActionGroup(self)
        for key, label in LOOKS.items():
            a = QAction(label, self, checkable=True)
            a.setObjectName(f"presentLook:{key}")
            a.triggered.connect(lambda _=False, v=key: self.set_look(v))
            self.look_group.addAction(a)
            looks.addAction(a)
        self.look_button.setMenu(looks)
        self.leave = named(QPushButton("Leave presentation"), "presentLeave", "Leave presentation",
                           "Back to the normal window (Esc)")
        self.leave.clicked.connect(self.leaveRequested.emit)
        bar.addWidget(self.back)
        bar.addStretch(1)
        for w in (self.script_button, self.size_button, self.look_button, self.leave):
            bar.addWidget(w)
        lay.addLayout(bar)
        self.heading.setWordWrap(True)
        lay.addWidget(self.heading)
        self.script_note = named(plain_label(""), "presentScriptStep", "Script step")
        self.script_note.hide()
        lay.addWidget(self.script_note)
        self.stack = QStackedWidget(self)
        lay.addWidget(self.stack, 1)
        # the cards
        cards_page = QWidget()
        cl = QVBoxLayout(cards_page)
        cl.setContentsMargins(0, 0, 0, 0)
        self.cards = ToolCards(cards_page)
        self.cards.opened.connect(lambda name: self.open_tool(name))
        self.status = named(plain_label(""), "presentStatus", "Status")
        cl.addWidget(self.status)
        cl.addWidget(self.cards, 1)
        self.stack.addWidget(cards_page)
        # one tool: the form, the progress and the answer scroll; Run stays in its bar under them, where it is
        # whatever appears or goes (a message, a field's problem, the answer)
        tool_page = QWidget()
        tl = QVBoxLayout(tool_page)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.setSpacing(design.space("m"))
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.NoFrame)
        page = QWidget()
        self.page_layout = QVBoxLayout(page)
        self.page_layout.setContentsMargins(design.margins("none", "none", "l", "none"))
        self.page_layout.setSpacing(design.space("l"))
        self.about = named(plain_label(""), "presentAbout", "About this tool")
        self.page_layout.addWidget(self.about)
        self.form_holder = QVBoxLayout()
        self.page_layout.addLayout(self.form_holder)
        self.confirm = QFrame()
        self.confirm.setObjectName("presentConfirm")
        self.confirm.setFrameShape(QFrame.StyledPanel)
        fl = QVBoxLayout(self.confirm)
        self.confirm_text = named(plain_label(""), "presentConfirmText", "Question")
        fl.addWidget(self.confirm_text)
        row = QHBoxLayout()
        self.confirm_yes = named(QPushButton("Yes, continue"), "presentConfirmYes", "Yes, continue")
        self.confirm_no = named(QPushButton("No, go back"), "presentConfirmNo", "No, go back")
        self.confirm_yes.clicked.connect(self._confirmed)
        self.confirm_no.clicked.connect(self._declined)
        row.addWidget(self.confirm_no)
        row.addWidget(self.confirm_yes)
        row.addStretch(1)
        fl.addLayout(row)
        self.confirm.hide()
        self.page_layout.addWidget(self.confirm)
        self.progress = named(QProgressBar(), "presentProgress", "Progress")
        self.progress.setTextVisible(False)
        self.progress.setMinimumHeight(18)
        self.progress.hide()
        self.progress_text = named(plain_label(""), "presentProgressText", "Progress")
        self.progress_text.hide()
        self.page_layout.addWidget(self.progress)
        self.page_layout.addWidget(self.progress_text)
        self.answer_holder = QVBoxLayout()
        self.page_layout.addLayout(self.answer_holder)
        self.page_layout.addStretch(1)
        self.scroll.setWidget(page)
        tl.addWidget(self.scroll, 1)
        self.run_bar = QWidget()
        self.run_bar.setObjectName("presentRunBar")
        run_row = QHBoxLayout(self.run_bar)
        run_row.setContentsMargins(0, 0, 0, 0)
        run_row.setSpacing(design.space("xl"))
        self.run_button = named(theme.mark_primary(QPushButton("Run")), "presentRun", "Run",
                                "Run this tool with what is filled in (Enter)")
        self.run_button.setMinimumHeight(56)
        self.run_button.setMinimumWidth(220)
        self.run_button.clicked.connect(self.run)
        self.cancel_button = named(QPushButton("Cancel"), "presentCancel", "Cancel", "Stop the tool that is running")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.hide()
        self.form_note = named(plain_label(""), "presentFormNote", "Problems")
        self.form_note.hide()
        self.run_button.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Fixed)
        run_row.addWidget(self.run_button, 0, Qt.AlignTop)
        run_row.addWidget(self.cancel_button, 0, Qt.AlignTop)
        run_row.addWidget(self.form_note, 1, Qt.AlignTop)
        run_row.addStretch(0)
        tl.addWidget(self.run_bar)
        self.stack.addWidget(tool_page)
        # a question the server asks during a call
        self.question_scroll = QScrollArea()
        self.question_scroll.setWidgetResizable(True)
        self.question_scroll.setFrameShape(QFrame.NoFrame)
        qpage = QWidget()
        self.question_layout = QVBoxLayout(qpage)
        self.question_layout.setContentsMargins(design.margins("none", "none", "l", "none"))
        self.question_layout.addStretch(1)
        self.question_scroll.setWidget(qpage)
        self.stack.addWidget(self.question_scroll)
        for keys in ("Return", "Enter"):
            sc = QShortcut(QKeySequence(keys), tool_page)
            sc.setContext(Qt.WidgetWithChildrenShortcut)
            sc.activated.connect(self._enter)
        for keys, slot in (("Ctrl++", lambda: self.step_zoom(1)), ("Ctrl+=", lambda: self.step_zoom(1)),
                           ("Ctrl+-", lambda: self.step_zoom(-1)), ("Ctrl+0", lambda: self.set_zoom(100)),
                           ("PgDown", self.forward), ("PgUp", self.backward), ("Alt+Left", self.show_cards)):
            sc = QShortcut(QKeySequence(keys), self)
            sc.setContext(Qt.WidgetWithChildrenShortcut)
            sc.activated.connect(slot)
        self.show_cards()

    # ------------------------------------------------------------------ the server
    def set_connection(self, conn: Connection | None) -> None:
        if self.conn is conn:
            self.refresh()
            return
        if self.conn is not None:
            for signal, slot in self._wired():
                signal.disconnect(slot)
        self.conn = conn
        if conn is not None:
            for signal, slot in self._wired():
                signal.connect(slot)
        self.refresh()
        self.show_cards()

    def _wired(self) -> list[tuple[Any, Any]]:
        assert self.conn is not None
        return [(self.conn.toolsChanged, self.refresh), (self.conn.statusChanged, self.refresh),
                (self.conn.callUpdated, self._call_updated), (self.conn.callFinished, self._call_finished)]

    def refresh(self) -> None:
        listing = self.conn.session.tools if self.conn is not None else None
        items = [t for t in listing.items if isinstance(t, dict)] if listing is not None else []
        self.tools = {t["name"]: t for t in items if words.for_people(t)}
        self.cards.set_tools(list(self.tools.values()))
        if self.conn is None:
            self.status.setText("Choose a server in the normal window first.")
        elif listing is None or not listing.loaded:
            self.status.setText(f"Connecting to {self.conn.name}…")
        elif not self.tools:
            self.status.setText(f"{self.conn.name} has no tools to show.")
        else:
            self.status.setText("")
        self.status.setVisible(bool(self.status.text()))
        if self.stack.currentIndex() == 0:
            self.heading.setText(self.server_heading())

    # ------------------------------------------------------------------ pages
    def show_cards(self) -> None:
        if self.question is not None:
            self.resume = 0  # the cards once the question is answered
            return
        self.stack.setCurrentIndex(0)
        self.heading.setText(self.server_heading())
        self.back.hide()
        if self.tool is not None:
            self.cards.select(self.tool.get("name"))
        self.cards.view.setFocus(Qt.OtherFocusReason)

    def server_heading(self) -> str:
        """"What the Spyglass demo server can do" when the server gives itself a title; else "Choose a tool"
        (a server's name is often a file or a package name)."""
        hello = self.conn.session.hello if self.conn is not None else None
        info = hello.server_info if hello is not None and isinstance(hello.server_info, dict) else {}
        title = info.get("title")
        return f"What the {title} can do" if isinstance(title, str) and title.strip() else "Choose a tool"

    def open_tool(self, name: str, arguments: Any = None) -> bool:
        tool = self.tools.get(name)
        if tool is None:
            return False
        self.tool = tool
        self.rec = None
        self._clear_answer()
        if self.form is not None:
            self.form.hide()
            self.form.deleteLater()
        self.form = FriendlyForm(tool.get("inputSchema") or {"type": "object"})
        self.form.submitted.connect(self.run)
        self.form.problemsChanged.connect(self._problems_changed)
        if arguments is not None:
            self.form.set_value(arguments)
        self.form_holder.addWidget(self.form)
        if self.question is None:
            self.heading.setText(words.tool_title(tool))
        about = " ".join(str(tool.get("description") or "").split())
        if words.destructive(tool):
            about = (about + "\n" if about else "") + "⚠ " + words.destructive_words(tool) + "."
        self.about.setText(about)
        self.about.setVisible(bool(about))
        self.form_note.hide()
        self.confirm.hide()
        self._running(False)
        if self.question is not None:
            self.resume = 1  # this tool once the question is answered
            return True
        self.back.show()
        self.stack.setCurrentIndex(1)
        self.form.focus_first()
        return True

    def _clear_answer(self) -> None:
        if self.card is not None:
            self.card.hide()
            self.card.deleteLater()
            self.card = None

    # ------------------------------------------------------------------ the server's questions
    async def elicit(self, session: Any, params: dict[str, Any], call: CallRecord | None) -> Any:
        return await self.ask("url" if params.get("mode") == "url" else "form", params, call)

    async def sample(self, session: Any, params: dict[str, Any], call: CallRecord | None) -> Any:
        return await self.ask("reply", params, call)

    async def share_roots(self, session: Any, roots: list[dict[str, Any]], call: CallRecord | None) -> Any:
        return await self.ask("folders", {}, call, roots)

    async def ask(self, kind: str, params: dict[str, Any], call: CallRecord | None,
                  folders: list[dict[str, Any]] | None = None) -> Any:
        """Show a question of the server's on the stage (one at a time, in turn) and wait for the presenter's
        answer; `HANDED_BACK` when the stage was left before it was answered."""
        async with self.asking:
            if not self.staged:
                return HANDED_BACK
            tool = call.tool_def if call is not None and isinstance(call.tool_def, dict) else \
                self.tools.get(call.tool) if call is not None else None
            card = QuestionCard(kind, params if isinstance(params, dict) else {}, folders=folders)
            self.question = card
            self.resume = self.stack.currentIndex()
            self.question_layout.insertWidget(0, card)
            self.heading.setText(words.asking(tool))
            self.back.hide()
            self.stack.setCurrentIndex(2)
            card.focus_first()
            try:
                return await card.future
            finally:
                self.question = None
                card.hide()
                card.deleteLater()
                self._after_question()

    def _after_question(self) -> None:
        if self.resume == 1 and self.tool is not None:
            self.stack.setCurrentIndex(1)
            self.heading.setText(words.tool_title(self.tool))
            self.back.show()
            (self.cancel_button if self.rec is not None and self.rec.running else self.run_button).setFocus(
                Qt.OtherFocusReason)
        else:
            self.show_cards()

    def open_stage(self) -> None:
        """The server's questions come here (presentation mode entered)."""
        self.staged = True

    def hand_back(self) -> None:
        """Give the question on the stage, and those waiting their turn, back to the dialogs (the mode left)."""
        self.staged = False
        if self.question is not None:
            self.question.settle(HANDED_BACK)

    # ------------------------------------------------------------------ running
    def _enter(self) -> None:
        if self.confirm.isVisible():
            (self._confirmed if self.focusWidget() is self.confirm_yes else self._declined)()
        elif self.rec is None or not self.rec.running:
            self.run()

    def run(self) -> CallRecord | None:
        if self.tool is None or self.form is None or self.conn is None or (self.rec is not None and self.rec.running):
            return None
        if self.form.reveal_problems():
            self.form_note.setText("⚠ Please fix what is marked above, then press Run again.")
            self.form_note.show()
            return None
        self.form_note.hide()
        if words.destructive(self.tool):
            self.confirm_text.setText(words.confirm_words(self.tool, self.form.value()))
            self.confirm.show()
            self.confirm_no.setFocus(Qt.OtherFocusReason)
            QTimer.singleShot(0, lambda: self.scroll.ensureWidgetVisible(self.confirm))
            return None
        return self._call()

    def _problems_changed(self, n: int) -> None:
        """The note under the form goes as soon as the last problem is fixed (its room stays: nothing moves)."""
        if n == 0:
            self.form_note.hide()

    def _confirmed(self) -> None:
        self.confirm.hide()
        self._call()

    def _declined(self) -> None:
        self.confirm.hide()
        if self.form is not None:
            self.form.focus_first()

    def _call(self) -> CallRecord | None:
        if self.tool is None or self.form is None or self.conn is None:
            return None
        self._clear_answer()
        value = self.form.value()
        self.rec = self.conn.session.calls.call(self.tool["name"], value, self.tool)
        self.played.append((self.tool["name"], value))
        self._running(True)
        self._call_updated(self.rec)
        return self.rec

    def _running(self, on: bool) -> None:
        self.run_button.setEnabled(not on)
        self.cancel_button.setVisible(on)
        self.progress.setVisible(on)
        self.progress_text.setVisible(on)
        if on:
            self.cancel_button.setFocus(Qt.OtherFocusReason)

    def cancel(self) -> None:
        if self.rec is not None and self.rec.running and self.conn is not None:
            self.conn.session.calls.cancel(self.rec)

    def _call_updated(self, rec: CallRecord) -> None:
        if rec is not self.rec or not rec.running:
            return
        if rec.total and rec.progress is not None and rec.total > 0:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(min(1.0, rec.progress / rec.total) * 1000))
        else:
            self.progress.setRange(0, 0)  # busy: the server says how far it got, or nothing
        said = rec.message or rec.task_message
        self.progress_text.setText(said + "…" if said and not said.endswith(("…", ".")) else
                                   said or f"Working on “{words.tool_title(rec.tool_def or {'name': rec.tool})}”…")

    def _call_finished(self, rec: CallRecord) -> None:
        if rec is not self.rec or self.tool is None:
            return
        self._running(False)
        reader = self.conn.session.library.read if self.conn is not None else None
        self.card = AnswerCard(rec, self.tool, reader, room=self.scroll.viewport().size(),
                               body_pt=BODY_PT * self.zoom / 100)
        # the answer fills the stage: at least as tall as the page's view, and scrolled to its top
        self.card.setMinimumHeight(self.scroll.viewport().height() - 4)
        self.answer_holder.addWidget(self.card)
        self.run_button.setFocus(Qt.OtherFocusReason)
        for wait in (0, 60):
            QTimer.singleShot(wait, self._scroll_to_answer)

    def _scroll_to_answer(self) -> None:
        """A short form (at most half the page's view) stays in sight above the answer, which fills the rest: no
        scroll bar for nothing to see; a taller one is scrolled past, the answer filling the view."""
        if self.card is None:
            return
        bar = self.scroll.verticalScrollBar()
        if self.card.y() <= self.scroll.viewport().height() // 2:
            self.card.setMinimumHeight(max(0, self.card.minimumHeight() - bar.maximum()))
        else:
            bar.setValue(self.card.y())

    # ------------------------------------------------------------------ presenting
    def step_zoom(self, by: int) -> None:
        i = ZOOMS.index(self.zoom) if self.zoom in ZOOMS else 0
        self.set_zoom(ZOOMS[max(0, min(len(ZOOMS) - 1, i + by))])

    def set_zoom(self, percent: int) -> None:
        self.zoom = percent
        for a in self.size_group.actions():
            a.setChecked(a.objectName() == f"presentZoom{percent}")
        self._apply_fonts()

    def _apply_fonts(self) -> None:
        """The sizes and the look: a style sheet reaches every widget of the stage, also those made later (a
        font set on the view would not: the application's style sheet stops fonts from propagating)."""
        body, title = BODY_PT * self.zoom / 100, TITLE_PT * self.zoom / 100
        pad = QFontMetrics(font_of(body)).height()
        self.look_colours = look_palette(self.look)
        window = self.look_colours.color(QPalette.Window).name()
        self.setStyleSheet(
            f"QWidget#presentView {{ background-color: {window}; }}"
            "QWidget#presentView QScrollArea, QWidget#presentView QScrollArea > QWidget,"
            " QWidget#presentView QScrollArea > QWidget > QWidget { background-color: transparent; }"
            f"QWidget#presentView, QWidget#presentView QWidget {{ font-size: {body:.1f}pt; }}"
            f"QWidget#presentView QLabel#presentTitle {{ font-size: {title:.1f}pt; font-weight: bold; }}"
            f"QWidget#presentView QLabel#presentErrorTitle {{ font-size: {body * 1.25:.1f}pt; font-weight: bold; }}"
            "QWidget#presentView QLabel#presentFieldLabel { font-weight: bold; }"
            f"QWidget#presentView QPushButton#presentRun {{ font-size: {title:.1f}pt; font-weight: bold; }}"
            # a menu measures its entries with the padding the sheet gives (without it, with the font it had
            # before: "1…%" at 200 %)
            f"QWidget#presentView QMenu::item {{ padding: {pad // 3}px {pad}px {pad // 3}px {pad * 3 // 2}px; }}"
            + "".join(f"QWidget#presentView QWidget[presentScale=\"{s}\"] {{ font-size: {body * s / 100:.1f}pt; }}"
                      for s in SCALES)
            + (design.high_contrast_stage_css("QWidget#presentView") if self.look == "high-contrast" else ""))
        line = QFontMetrics(font_of(body)).lineSpacing()
        # Run's bar keeps the room of two lines of its note, shown or not: a message coming or going moves nothing
        self.run_bar.setFixedHeight(max(self.run_button.minimumHeight(), line * 2 + 6,
                                        QFontMetrics(font_of(title)).height() + 24))
        for w in [self, *self.findChildren(QWidget)]:  # (the application's style sheet stops palettes too)
            w.setPalette(self.look_colours)
        font = QFont(QApplication.font())
        font.setPointSizeF(body)
        self.setFont(font)

    def set_look(self, look: str) -> None:
        self.look = look if look in LOOKS else "light"
        for a in self.look_group.actions():
            a.setChecked(a.objectName() == f"presentLook:{self.look}")
        self._apply_fonts()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        QApplication.instance().installEventFilter(self)  # → and ← of a script, wherever the focus is

    def hideEvent(self, event: Any) -> None:
        QApplication.instance().removeEventFilter(self)
        super().hideEvent(event)

    def eventFilter(self, obj: Any, event: Any) -> bool:
        if event.type() == QEvent.Polish and isinstance(obj, QWidget) and self.isAncestorOf(obj):
            obj.setPalette(self.look_colours)  # a widget made later (a form, an answer) gets the look too
            return False
        if not self.script or event.type() != QEvent.KeyPress or event.key() not in (Qt.Key_Right, Qt.Key_Left) \
                or event.modifiers() & ~Qt.KeypadModifier:
            return False
        focus = QApplication.focusWidget()
        if focus is None or not self.isAncestorOf(focus) or isinstance(focus, TYPING):
            return False  # the arrows move the cursor in what is being typed
        (self.forward if event.key() == Qt.Key_Right else self.backward)()
        return True

    def forward(self) -> None:
        """The next step: the script's, else the natural one (open the card, run, the next card)."""
        if self.question is not None:
            return  # a question is answered with its own buttons, never by a step
        if self.script:
            self._script_forward()
        elif self.stack.currentIndex() == 0:
            name = self.cards.current_name()
            if name:
                self.open_tool(name)
        elif self.card is None:
            self.run()
        else:
            self.show_cards()
            self.cards.select(self.cards.next_name(self.tool.get("name") if self.tool else None))

    def backward(self) -> None:
        if self.question is not None:
            return
        if self.script:
            self._script_back()
        elif self.stack.currentIndex() == 1:
            self.show_cards()

    # ------------------------------------------------------------------ the script
    def load_script(self, path: str | Path) -> str:
        """Load a collection's call steps as the script; '' when loaded, else what went wrong in words."""
        try:
            collection = collection_load.load(path)
        except collection_load.CollectionError as exc:
            problem = exc.problems[0].message if exc.problems else str(exc)
            return self._script_problem(f"That script couldn't be read: {problem}.")
        except OSError:
            return self._script_problem("That script couldn't be opened.")
        steps = [(s.name, s.target, s.arguments) for s in collection.steps if s.kind == "call"]
        if not steps:
            return self._script_problem("That script has no tools to run.")
        self.script = steps
        self.script_at = -1
        self._show_script_note("Script ready: press → or Page Down to begin.")
        return ""

    def _script_problem(self, text: str) -> str:
        self._show_script_note("⚠ " + text)
        return text

    def _show_script_note(self, text: str) -> None:
        self.script_note.setText(text)
        self.script_note.setVisible(bool(text))

    def stop_script(self) -> None:
        self.script, self.script_at = [], -1
        self._show_script_note("")

    def _script_step(self, at: int) -> None:
        self.script_at = at
        name, tool, arguments = self.script[at]
        shown = self.open_tool(tool, arguments)
        note = f"Step {at + 1} of {len(self.script)}: {name}"
        self._show_script_note(note if shown else note + " — this server has no such tool.")

    def _script_forward(self) -> None:
        if self.script_at < 0:
            self._script_step(0)
        elif self.card is None and (self.rec is None or not self.rec.running) and self.stack.currentIndex() == 1:
            self.run()
        elif self.card is not None and self.script_at + 1 < len(self.script):
            self._script_step(self.script_at + 1)

    def _script_back(self) -> None:
        if self.script_at < 0:
            return
        if self.card is not None:
            self._script_step(self.script_at)  # the filled form again
        elif self.script_at > 0:
            self._script_step(self.script_at - 1)
        else:
            self.script_at = -1
            self.show_cards()
            self._show_script_note("Script ready: press → or Page Down to begin.")

    def save_script(self, path: str | Path) -> int:
        """Write the calls run in this mode as a collection file (JSON is YAML); returns the number of steps."""
        steps, seen = [], set()
        for i, (tool, arguments) in enumerate(self.played, start=1):
            title = words.tool_title(self.tools.get(tool, {"name": tool}))
            name = title if title not in seen else f"{title} ({i})"
            seen.add(name)
            steps.append({"name": name, "call": tool, "arguments": arguments if arguments is not None else {}})
        doc = {"name": f"Presentation of {self.conn.name}" if self.conn is not None else "Presentation",
               "steps": steps}
        write_private(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return len(steps)

    def choose_script(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a script", "", "Scripts (*.yaml *.yml *.json)")
        if path:
            self.load_script(path)

    def choose_save(self) -> None:
        if not self.played:
            self._show_script_note("Run a tool first: the script is made of the tools you run.")
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save as a script", "presentation.yaml", "Scripts (*.yaml)")
        if path:
            n = self.save_script(path)
            self._show_script_note(f"Saved {n} step{'s' if n != 1 else ''} to {Path(path).name}.")
