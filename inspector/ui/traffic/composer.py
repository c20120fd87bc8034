"""Hand-made frames in the window: the raw composer (`rawComposer`) and the Edit and resend editor (`resendEditor`).

Both are a `FrameDialog`: the frame's text in an editor, highlighted and judged against the connection's
revision as it is typed (`…Problems`: line, column, where, what; warnings only, never blocking), **Send**
(`…Send`, Ctrl+Enter) and what came back: `…Status`, the answer (`…Answer`) and **Show in traffic**
(`…ShowFrame`: the hand-made frame, ✎ in the traffic pane, paired with its answer). The raw composer
(prefix `composer`) sends over the selected server's connection and adds a template per method
(`composerTemplate`), **Fresh id** (`composerFreshId`), the HTTP headers it will send (`composerHeaders`,
those of the session by default, secrets masked; `composerResetHeaders`) and `composerByteEscapes` (`\\xHH`
is that byte). The resend editor (prefix `resend`) sends over the connection its request came from, with a
fresh id already in place. Both open without a modal loop: the window (and its traffic) stays usable.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QFontDatabase, QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ... import errors as E
from ...checks.compose import Problem
from ...checks.compose import problems as judge
from ...session import Composer, Handmade
from ...traffic.summary import human_size
from ..base import design, theme
from ..base.highlight import JsonHighlighter, palette_is_dark
from .model import format_latency

JUDGE_MS = 250  # the text is judged (and coloured) this long after the last keystroke
TEMPLATE_PROMPT = "Start from a template…"
ANSWER_MAX = 2 * 1024 * 1024  # bytes of an answer pretty-printed in the dialog (the traffic pane has all of it)


def status_text(handmade: Handmade) -> tuple[str, str]:
    """What a hand-made frame came to, in words, and its colour role (theme.colour)."""
    head = f"✎{handmade.number} sent ({human_size(len(handmade.data))})"
    if handmade.answers:
        frame = handmade.answers[-1]
        message = frame.message
        what = ("an error with a null id: the server could not read it" if getattr(message, "id", 0) is None
                else f"error {message.error.code} {message.error.message}" if hasattr(message, "error")
                else "malformed: " + frame.malformed if frame.malformed else "a result")
        took = format_latency(max(0.0, frame.mono - handmade.sent_at))
        more = f" (+{len(handmade.answers) - 1} more)" if len(handmade.answers) > 1 else ""
        tail = f"; HTTP {handmade.status}" if handmade.status is not None else ""
        still = f"; still waiting for id {', '.join(map(repr, handmade.waiting))}" if handmade.waiting and not \
            handmade.ended else ""
        role = "error" if hasattr(message, "error") or frame.malformed else "connected"
        return f"{head} · answered in {took}: {what}{more}{tail}{still}", role
    if handmade.failure:
        note = " (its id stays reserved: an answer that comes late is still paired)" if handmade.timed_out else ""
        return f"{head} · {handmade.failure}{note}", "warning" if handmade.timed_out else "error"
    if handmade.ended:
        if handmade.status is not None:
            return f"{head} · HTTP {handmade.status}: nothing to answer (a notification or a response)", "muted"
        return f"{head} · a notification or a response: the server sends no answer", "muted"
    return f"{head} · waiting for the answer to id {', '.join(map(repr, handmade.waiting))}…" if handmade.waiting \
        else f"{head} · waiting for the server…", "connecting"


def _titled(title: str, *widgets: QWidget) -> QWidget:
    """`widgets` under a small title, as one pane of a splitter."""
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(design.space("hair"))
    label = QLabel(title)
    label.setTextFormat(Qt.TextFormat.PlainText)
    lay.addWidget(label)
    for i, widget in enumerate(widgets):
        lay.addWidget(widget, 1 if i == 0 else 0)
    return box


def parse_headers(text: str) -> dict[str, str]:
    """`Name: value` lines; raises ValueError naming the line that has no name."""
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            raise ValueError(f"line {number} of the headers is not `Name: value`")
        out[name.strip()] = value.strip()
    return out


class FrameDialog(QDialog):
    def __init__(self, composer: Callable[[], Composer | None], *, raw: bool,
                 show_frame: Callable[[str, int], bool] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.raw = raw
        self.prefix = prefix = "composer" if raw else "resend"
        self.setObjectName("rawComposer" if raw else "resendEditor")
        self.setWindowTitle("Raw composer" if raw else "Edit and resend")
        self.setModal(False)
        self.composer_of = composer
        self.show_frame = show_frame
        self.handmade: Handmade | None = None
        self._hooked: Composer | None = None
        self._sent_by: Composer | None = None  # the connection the shown frame went on
        self._tasks: set[asyncio.Task[Any]] = set()
        self._headers_edited = False
        self._setting_headers = False
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

        self.target = self._label(f"{prefix}Target")
        self.editor = QPlainTextEdit()
        self.editor.setObjectName(f"{prefix}Text")
        self.editor.setFont(mono)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.editor.setPlaceholderText("The frame, exactly as it will be sent")
        self.highlighter = JsonHighlighter(self.editor.document())
        self.problems = QListWidget()
        self.problems.setObjectName(f"{prefix}Problems")
        self.problems.setToolTip("What breaks the connection's revision (warnings: the frame is sent as it is); "
                                 "click one to go there")
        line = self.problems.fontMetrics().lineSpacing()
        self.problems.setMaximumHeight(4 * line + 12)
        self.problems.setMinimumHeight(2 * line + 12)
        self.problems.itemActivated.connect(self._go_to)
        self.problems.itemClicked.connect(self._go_to)
        self.send_button = self._button(f"{prefix}Send", "Send", "Send the text exactly as it is (Ctrl+Enter)")
        self.send_button.setDefault(True)
        self.show_button = self._button(f"{prefix}ShowFrame", "Show in traffic",
                                        "Select the hand-made frame in the traffic pane (its answer is its pair)")
        self.show_button.setEnabled(False)
        self.close_button = self._button(f"{prefix}Close", "Close", "")
        self.status = self._label(f"{prefix}Status")
        self.answer = QPlainTextEdit()
        self.answer.setObjectName(f"{prefix}Answer")
        self.answer.setReadOnly(True)
        self.answer.setFont(mono)
        self.answer.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.answer.setPlaceholderText("The answer, once it comes")
        self.answer_highlighter = JsonHighlighter(self.answer.document())

        layout = QVBoxLayout(self)
        layout.addWidget(self.target)
        if raw:
            layout.addLayout(self._build_raw_bar())
        editors = QSplitter(Qt.Orientation.Vertical)
        editors.setObjectName(f"{prefix}Split")
        editors.setChildrenCollapsible(False)
        editors.addWidget(_titled("Frame, sent exactly as it is (problems: warnings, never blocking)",
                                  self.editor, self.problems))
        if raw:
            editors.addWidget(self._build_headers())
        editors.addWidget(_titled("Answer", self.answer))
        editors.setSizes([360, 110, 220] if raw else [360, 220])  # the frame first; headers are few lines
        layout.addWidget(editors, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.show_button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        self.resize(760, 720 if raw else 640)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(JUDGE_MS)
        self._timer.timeout.connect(self.judge)
        self.editor.textChanged.connect(self._timer.start)
        self.send_button.clicked.connect(self.send)
        self.show_button.clicked.connect(self._show_in_traffic)
        self.close_button.clicked.connect(self.close)
        self.editor.installEventFilter(self)  # Ctrl+Enter sends (a key of the editor, not a window shortcut)
        self.finished.connect(lambda _r: self._hook(None))
        self.retarget()

    # ------------------------------------------------------------------ building
    def _label(self, name: str) -> QLabel:
        label = QLabel()
        label.setObjectName(name)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    def _button(self, name: str, text: str, tip: str) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setAutoDefault(False)
        if tip:
            button.setToolTip(tip)
        return button

    def _build_raw_bar(self) -> QHBoxLayout:
        self.template = QComboBox()
        self.template.setObjectName("composerTemplate")
        self.template.setToolTip("A skeleton of a method of the connection's revision, with a fresh id and the "
                                 "parameters its schema requires")
        self.template.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.template.activated.connect(self._template_picked)
        self.fresh_id = self._button("composerFreshId", "Fresh id",
                                     "Give the frame's request(s) an id the session never uses for its own")
        self.fresh_id.clicked.connect(self.give_fresh_id)
        self.byte_escapes = QCheckBox("\\xHH is a byte")
        self.byte_escapes.setObjectName("composerByteEscapes")
        self.byte_escapes.setToolTip("Send each \\xHH of the text as that one byte: bytes that are not UTF-8, "
                                     "control characters")
        bar = QHBoxLayout()
        bar.addWidget(self.template)
        bar.addWidget(self.fresh_id)
        bar.addStretch(1)
        bar.addWidget(self.byte_escapes)
        return bar

    def _build_headers(self) -> QWidget:
        box = QWidget()
        self.headers_box = box
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(design.space("hair"))
        row = QHBoxLayout()
        note = QLabel("HTTP headers of the POST (Name: value; a value left as •••••• is the session's own secret)")
        note.setWordWrap(True)
        row.addWidget(note, 1)
        self.reset_headers = self._button("composerResetHeaders", "Reset", "The headers the session would send")
        self.reset_headers.clicked.connect(self._reset_headers)
        row.addWidget(self.reset_headers)
        lay.addLayout(row)
        self.headers = QPlainTextEdit()
        self.headers.setObjectName("composerHeaders")
        self.headers.setFont(self.editor.font())
        self.headers.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.headers.textChanged.connect(self._headers_changed)
        lay.addWidget(self.headers, 1)
        return box

    # ------------------------------------------------------------------ the target
    def composer(self) -> Composer | None:
        return self.composer_of()

    def retarget(self) -> None:
        """Say where a frame would go now (the raw composer follows the selected server)."""
        composer = self.composer()
        if composer is None:
            self.target.setText("No server selected: select a connected one to send to")
        else:
            why = composer.unavailable()
            self.target.setText(f"To {composer.session.name} · " + (why or composer.describe()))
        if self.raw:
            methods = composer.methods() if composer is not None and composer.unavailable() is None else []
            if [self.template.itemText(i) for i in range(1, self.template.count())] != methods:
                self.template.clear()
                self.template.addItem(TEMPLATE_PROMPT)
                self.template.addItems(methods)
            http = composer is not None and composer.headers() is not None
            self.headers_box.setVisible(http)
            if http and not self._headers_edited:
                self._reset_headers()
        self.judge()

    # ------------------------------------------------------------------ the text
    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)
        self.judge()

    def load(self, text: str) -> None:
        """A new frame to edit: what was shown of the previous one goes."""
        self.handmade = None
        self.show_button.setEnabled(False)
        self.answer_highlighter.set_text("", json=False)
        self.say("", "muted")
        self.set_text(text)

    def text(self) -> str:
        return self.editor.toPlainText()

    def judge(self) -> list[Problem]:
        """Colour the text and list what breaks the revision (called a moment after typing stops)."""
        self._timer.stop()
        text = self.text()
        self.highlighter.dark = palette_is_dark(self.palette())
        self.highlighter.recolour()
        composer = self.composer()
        found = composer.problems(text) if composer is not None else judge(text, None) if text.strip() else []
        self.problems.clear()
        for problem in found:
            item = QListWidgetItem(f"⚠ {problem}")
            item.setData(Qt.ItemDataRole.UserRole, (problem.line, problem.column))
            item.setForeground(theme.colour("warning"))
            self.problems.addItem(item)
        if not found and text.strip():
            revision = composer.revision if composer is not None else None
            item = QListWidgetItem(f"✓ nothing in it breaks the {revision} schema" if revision else "✓ JSON")
            item.setForeground(theme.colour("muted"))
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.problems.addItem(item)
        if self.raw and not self._headers_edited and self.headers_box.isVisible():
            self._reset_headers()
        return found

    def problem_texts(self) -> list[str]:
        return [self.problems.item(i).text() for i in range(self.problems.count())]

    def _go_to(self, item: QListWidgetItem) -> None:
        where = item.data(Qt.ItemDataRole.UserRole)
        if not where:
            return
        line, column = where
        block = self.editor.document().findBlockByNumber(line - 1)
        cursor = self.editor.textCursor()
        cursor.setPosition(block.position() + max(0, min(column - 1, block.length() - 1)))
        self.editor.setTextCursor(cursor)
        self.editor.setFocus()

    def _template_picked(self, index: int) -> None:
        composer = self.composer()
        if index <= 0 or composer is None:
            return
        try:
            self.set_text(composer.template(self.template.itemText(index)))
        except E.SpyglassError as exc:
            self.say(exc.message, "error")
        self.template.setCurrentIndex(0)

    def give_fresh_id(self) -> bool:
        """Replace the id of the request(s) in the text by fresh ones (the text must be JSON)."""
        composer = self.composer()
        try:
            obj = json.loads(self.text())
        except ValueError:
            self.say("Fresh id needs the text to be JSON", "error")
            return False
        try:
            for item in obj if isinstance(obj, list) else [obj]:
                if isinstance(item, dict) and "id" in item and composer is not None:
                    item["id"] = composer.fresh_id()
        except E.SpyglassError as exc:
            self.say(exc.message, "error")
            return False
        self.set_text(json.dumps(obj, indent=2, ensure_ascii=False))
        return True

    # ------------------------------------------------------------------ headers (HTTP)
    def _reset_headers(self) -> None:
        composer = self.composer()
        escapes = self.byte_escapes.isChecked()
        headers = composer.headers(self.text() or "{}", byte_escapes=escapes) if composer is not None else None
        self._setting_headers = True
        try:
            self.headers.setPlainText("\n".join(f"{k}: {v}" for k, v in (headers or {}).items()))
        finally:
            self._setting_headers = False
        self._headers_edited = False

    def _headers_changed(self) -> None:
        if not self._setting_headers:
            self._headers_edited = True

    # ------------------------------------------------------------------ sending
    def send(self) -> asyncio.Task[Any] | None:
        composer = self.composer()
        if composer is None:
            self.say("No server to send to: select a connected one", "error")
            return None
        headers = None
        if self.raw and self.headers_box.isVisible():
            try:
                headers = parse_headers(self.headers.toPlainText())
            except ValueError as exc:
                self.say(str(exc), "error")
                return None
        escapes = self.raw and self.byte_escapes.isChecked()
        self.say("sending…", "connecting")
        try:
            task = asyncio.ensure_future(self._send(composer, self.text(), headers, escapes))
        except RuntimeError:  # no event loop runs
            self.say("no event loop runs: nothing can be sent", "error")
            return None
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _send(self, composer: Composer, text: str, headers: dict[str, str] | None, escapes: bool) -> None:
        try:
            handmade = await composer.send(text, headers, byte_escapes=escapes)
        except E.SpyglassError as exc:
            self.say(f"Not sent: {exc.message}", "error")
            return
        self._hook(composer)
        self._sent_by = composer
        self.handmade = handmade
        self._shown(handmade)

    def _hook(self, composer: Composer | None) -> None:
        if self._hooked is composer:
            return
        if self._hooked is not None:
            self._hooked.changed.disconnect(self._changed)
        self._hooked = composer
        if composer is not None:
            composer.changed.connect(self._changed)

    def _changed(self, handmade: Handmade) -> None:
        if handmade is self.handmade and shiboken6.isValid(self):
            self._shown(handmade)

    def _shown(self, handmade: Handmade) -> None:
        text, role = status_text(handmade)
        self.say(text, role)
        self.show_button.setEnabled(self.show_frame is not None)
        if handmade.answers:
            raw = handmade.answers[-1].data
            try:
                pretty = json.dumps(json.loads(raw[:ANSWER_MAX]), indent=2, ensure_ascii=False)
                is_json = True
            except (ValueError, RecursionError):
                pretty, is_json = raw[:ANSWER_MAX].decode("utf-8", errors="backslashreplace"), False
            self.answer_highlighter.dark = palette_is_dark(self.palette())
            self.answer_highlighter.set_text(pretty, json=is_json)
        else:
            self.answer_highlighter.set_text("", json=False)

    def say(self, text: str, role: str) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {theme.colour(role).name()};")

    def _show_in_traffic(self) -> bool:
        handmade, composer = self.handmade, self._sent_by
        if handmade is None or composer is None or self.show_frame is None:
            return False
        shown = self.show_frame(composer.session.server_id, handmade.number)
        if not shown:
            self.say(f"✎{handmade.number} is hidden in the traffic pane (by its filter or by Clear)", "warning")
        return shown

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
                and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and event.modifiers() & Qt.KeyboardModifier.ControlModifier):
            self.send()
            return True
        return super().eventFilter(watched, event)

    def changeEvent(self, event: Any) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange:
            self.judge()
            if self.handmade is not None:
                self._shown(self.handmade)
