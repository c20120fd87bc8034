"""`playgroundTranscript`: the chat as it happens — the user's messages, the model's streamed text with
its token counts, each tool call the model made (`playgroundCall`: the tool and its server, the arguments
it chose, their problems against the `inputSchema`, and the result rendered by the tool panel's own
`ResultView`), a server's sampling request the model answered, and every problem said in words
(`playgroundError`). Text from the model and the servers is shown as plain text."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from ...model import Usage
from ...model.conversation import CallOutcome, Checked
from ..base import design, theme
from ..base.layout import text_label
from ..base.text import visible_block
from ..render.result_view import ResultView

RESULT_HEIGHT = 260  # pixels of a tool's rendered result in the transcript (it scrolls inside)


def tokens_text(usage: Usage | None) -> str:
    if usage is None:
        return ""
    said = [f"{usage.input_tokens} in" if usage.input_tokens is not None else "",
            f"{usage.output_tokens} out" if usage.output_tokens is not None else ""]
    return "tokens: " + " · ".join(s for s in said if s)


def _bubble(name: str, parent: QWidget, border: str) -> tuple[QFrame, QVBoxLayout]:
    frame = QFrame(parent)
    frame.setObjectName(name)
    frame.setFrameShape(QFrame.StyledPanel)
    colour = theme.colour(border).name()
    frame.setStyleSheet(design.outline_css(f"QFrame#{name}", colour, bar=True))
    lay = QVBoxLayout(frame)
    lay.setContentsMargins(design.margins("m", "xs", "m", "s"))
    lay.setSpacing(design.space("hair"))
    return frame, lay


def _title(text: str, parent: QWidget, name: str = "") -> QLabel:
    label = text_label(text, parent, name=name, selectable=False)
    f = label.font()
    f.setBold(True)
    label.setFont(f)
    return label


class CallCard(QFrame):
    """One tool call of the model's: what it chose, what was wrong with it, and what came back."""

    def __init__(self, checked: Checked, server: str, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("playgroundCall")
        self.setFrameShape(QFrame.StyledPanel)
        colour = theme.colour("changed").name()
        self.setStyleSheet(design.outline_css("QFrame#playgroundCall", colour))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(design.margins("m", "xs", "m", "s"))
        lay.setSpacing(design.space("hair"))
        call = checked.call
        where = f" on {server}" if server else ""
        lay.addWidget(_title(f"Tool call: {visible_block(call.name, 200)}{where}", self, "playgroundCallTitle"))
        shown = (json.dumps(call.arguments, ensure_ascii=False, indent=2) if call.arguments is not None
                 else call.raw or "(no arguments)")
        self.arguments = text_label(visible_block(shown, 4000), self, name="playgroundCallArguments")
        f = self.arguments.font()
        f.setFamily("monospace")
        f.setStyleHint(f.StyleHint.Monospace)
        self.arguments.setFont(f)
        lay.addWidget(self.arguments)
        self.problems = text_label("", self, name="playgroundCallProblems", role="warning")
        said = ([f"⚠ {checked.refused}"] if checked.refused else []) + [
            f"⚠ the arguments do not fit the inputSchema: {p}" for p in checked.problems]
        self.problems.setText(visible_block("\n".join(said), 2000))
        self.problems.setVisible(bool(said))
        lay.addWidget(self.problems)
        self.status = text_label("waiting…", self, name="playgroundCallStatus", role="muted")
        lay.addWidget(self.status)
        self.result: ResultView | None = None

    def set_outcome(self, outcome: CallOutcome) -> None:
        if outcome.record is not None:
            self.status.hide()
            self.result = ResultView(self)
            self.result.setObjectName("playgroundResult")
            self.result.setMinimumHeight(120)
            self.result.setMaximumHeight(RESULT_HEIGHT)
            self.result.show_record(outcome.record)
            self.layout().addWidget(self.result)
            return
        role = "muted" if outcome.declined else "error"
        self.status.setText(visible_block(outcome.error or "not called", 1000))
        self.status.setStyleSheet(f"color: {theme.colour(role).name()};")


class Transcript(QScrollArea):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("playgroundTranscript")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.StyledPanel)
        self.page = QWidget(self)
        self.page.setObjectName("playgroundPage")
        self.lay = QVBoxLayout(self.page)
        self.lay.setContentsMargins(design.margins("m"))
        self.lay.setSpacing(design.space("m"))
        self.empty = text_label("Pick a model and the servers whose tools it may use, then ask something in plain "
                                "words. Every tool the model calls is shown here, checked, and asked about "
                                "first when it may change things.", self.page, name="playgroundEmpty", role="muted")
        self.lay.addWidget(self.empty)
        self.lay.addStretch(1)
        self.setWidget(self.page)
        self.cards: list[CallCard] = []
        self.errors: list[QLabel] = []
        self.replies: list[QLabel] = []
        self._reply: QLabel | None = None
        self._tokens: QLabel | None = None
        self._text = ""

    def _add(self, widget: QWidget) -> None:
        self.empty.hide()
        self.lay.insertWidget(self.lay.count() - 1, widget)
        QTimer.singleShot(0, self, self._to_end)  # bound to the transcript: never after it is gone

    def _to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def clear(self) -> None:
        while self.lay.count() > 2:
            item = self.lay.takeAt(1)
            w = item.widget() if item is not None else None
            if w is not None:
                w.deleteLater()
        self.cards, self.errors, self.replies = [], [], []
        self._reply = self._tokens = None
        self.empty.show()

    def user(self, text: str) -> None:
        frame, lay = _bubble("playgroundUser", self.page, "idempotent")
        lay.addWidget(_title("You", frame))
        lay.addWidget(text_label(visible_block(text, 20_000), frame, name="playgroundUserText"))
        self._add(frame)
        self._reply = None

    def _ensure_reply(self, who: str) -> QLabel:
        if self._reply is None:
            frame, lay = _bubble("playgroundReply", self.page, "read-only")
            lay.addWidget(_title(who, frame))
            self._reply = text_label("", frame, name="playgroundReplyText")
            self._tokens = text_label("", frame, name="playgroundTokens", role="muted")
            self._tokens.hide()
            lay.addWidget(self._reply)
            lay.addWidget(self._tokens)
            self.replies.append(self._reply)
            self._text = ""
            self._add(frame)
        return self._reply

    def delta(self, who: str, text: str) -> None:
        label = self._ensure_reply(who)
        self._text += text
        label.setText(visible_block(self._text, 50_000))

    def finished(self, who: str, text: str, usage: Usage | None, stop: str | None) -> None:
        """The end of a model round: its text (when it said something) and token counts."""
        if text or usage is not None and self._reply is not None:
            label = self._ensure_reply(who)
            if text:
                label.setText(visible_block(text, 50_000))
        if self._tokens is not None and usage is not None:
            self._tokens.setText(tokens_text(usage) + (f" · stop: {stop}" if stop else ""))
            self._tokens.show()
        self._reply = None

    def call(self, checked: Checked, server: str) -> CallCard:
        card = CallCard(checked, server, self.page)
        self.cards.append(card)
        self._add(card)
        self._reply = None
        return card

    def error(self, text: str) -> None:
        label = text_label(f"⚠ {visible_block(text, 2000)}", self.page, name="playgroundError", role="error")
        self.errors.append(label)
        self._add(label)
        self._reply = None

    def note(self, text: str, name: str = "playgroundNote") -> QLabel:
        label = text_label(visible_block(text, 4000), self.page, name=name, role="muted")
        self._add(label)
        return label

    def texts(self) -> list[str]:
        """Everything said, in order (what a test or a person reads)."""
        out: list[str] = []
        for i in range(self.lay.count()):
            w = self.lay.itemAt(i).widget()
            if w is None or w is self.empty:
                continue
            out += [lab.text() for lab in ([w] if isinstance(w, QLabel) else w.findChildren(QLabel))
                    if lab.text() and not (lab.isHidden() and lab.testAttribute(Qt.WA_WState_ExplicitShowHide))]
        return out


__all__ = ["CallCard", "Transcript", "tokens_text"]
