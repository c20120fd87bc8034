"""A question the server asks during a presented call, on the stage (`presentQuestion`) instead of a developer's
dialog: a form it asks to be filled (the friendly form, never JSON), a page it asks to be opened (the host said
first, opened only on request), a reply it asks to be written for it (the conversation in words, a box for the
answer), the folders it asks to work in. The presenter answers with large buttons; the card's `future` holds
the answer in the shape the session expects (`DialogAnswers` gives it to the server).

Object names: `presentQuestion`, `presentQuestionText`, `presentQuestionForm` (fields keep `field:<ptr>`),
`presentQuestionHost`, `presentQuestionOpen`, `presentQuestionReply`, `presentQuestionSend`,
`presentQuestionDecline`, `presentQuestionNote`."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from ... import urlpolicy
from ..base import design, opening
from . import words
from .friendly_form import FriendlyForm, plain_label

KINDS = ("form", "url", "reply", "folders")
MAX_SHOWN = 4000  # characters of one message of the server's shown on the stage


def _button(text: str, name: str, description: str) -> QPushButton:
    b = QPushButton(text)
    b.setObjectName(name)
    b.setAccessibleName(text)
    b.setAccessibleDescription(description)
    b.setMinimumHeight(44)
    return b


def _clip(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


class QuestionCard(QFrame):
    """One question and its answer. `kind` is "form" or "url" (elicitation), "reply" (sampling) or "folders"
    (roots); `future` gets what the session expects: an elicitation answer, a sampling reply or None, a bool."""

    def __init__(self, kind: str, params: dict[str, Any], parent: QWidget | None = None,
                 folders: list[dict[str, Any]] | None = None) -> None:
        super().__init__(parent)
        assert kind in KINDS, kind
        self.kind = kind
        self.future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.form: FriendlyForm | None = None
        self.reply: QPlainTextEdit | None = None
        self.open_button: QPushButton | None = None
        self.url = ""
        self.setObjectName("presentQuestion")
        self.setFrameShape(QFrame.StyledPanel)
        self.lay = QVBoxLayout(self)
        self.lay.setContentsMargins(design.margins("xl", "xxl"))
        self.lay.setSpacing(design.space("l"))
        message = params.get("message")
        if kind in ("form", "url") and isinstance(message, str) and message.strip():
            said = plain_label(_clip(message.strip()), "presentQuestionText", self)
            said.setAccessibleName("The question")
            said.setAccessibleDescription(said.text())
            said.setTextInteractionFlags(Qt.TextSelectableByMouse)
            self.lay.addWidget(said)
        buttons = QHBoxLayout()
        if kind == "form":
            schema = params.get("requestedSchema")
            self.form = FriendlyForm(schema if isinstance(schema, dict) else {"type": "object"}, self, fold=False)
            self.form.setObjectName("presentQuestionForm")
            self.form.submitted.connect(self.send)
            self.lay.addWidget(self.form)
            self.send_button = _button("Send", "presentQuestionSend", "Send what is filled in")
            self.decline_button = _button("No thanks", "presentQuestionDecline", "Don't answer this question")
        elif kind == "url":
            self.url = params.get("url") if isinstance(params.get("url"), str) else ""
            host, web = words.page_host(self.url)
            self.lay.addWidget(plain_label("It asks you to open a page on:", "", self))
            shown = plain_label(host, "presentQuestionHost", self)
            font = shown.font()
            font.setBold(True)
            shown.setFont(font)
            shown.setAccessibleName("The page is on")
            self.lay.addWidget(shown)
            full = urlpolicy.for_display(self.url).full  # the host as the browser will show it
            address = plain_label("Full address: " + _clip(full), "presentQuestionAddress", self)
            address.setTextInteractionFlags(Qt.TextSelectableByMouse)
            self.lay.addWidget(address)
            if not web:
                self.lay.addWidget(plain_label(words.page_warning(self.url), "presentQuestionNotWeb", self))
            self.open_button = _button("Open the page", "presentQuestionOpen",
                                       "Open the page in your web browser")
            self.open_button.setEnabled(web)
            self.open_button.clicked.connect(self.open_page)
            buttons.addWidget(self.open_button)
            self.send_button = _button("I'm done", "presentQuestionSend", "Say that you have done what the page asks")
            self.decline_button = _button("No thanks", "presentQuestionDecline", "Don't open the page")
        elif kind == "reply":
            self.lay.addWidget(plain_label("It asks for a written reply to this:", "", self))
            for who, what in words.conversation(params):
                line = plain_label(f"{who}: {_clip(what)}", "presentQuestionMessage", self)
                line.setTextInteractionFlags(Qt.TextSelectableByMouse)
                self.lay.addWidget(line)
            self.reply = QPlainTextEdit(self)
            self.reply.setObjectName("presentQuestionReply")
            self.reply.setAccessibleName("Your reply")
            self.reply.setAccessibleDescription("What the tool gets as the reply")
            self.reply.setPlaceholderText("Write the reply here")
            self.reply.setTabChangesFocus(True)
            self.reply.setMinimumHeight(120)
            self.lay.addWidget(self.reply)
            self.send_button = _button("Send reply", "presentQuestionSend", "Give the tool this reply")
            self.decline_button = _button("Don't reply", "presentQuestionDecline", "Give the tool no reply")
        else:
            listed = words.folders_text(folders or [])
            self.lay.addWidget(plain_label("It would like to work in these folders:" if listed else
                                           "It asks which folders it may work in, and none are shared.", "", self))
            if listed:
                self.lay.addWidget(plain_label(listed, "presentQuestionFolders", self))
            self.send_button = _button("Allow", "presentQuestionSend", "Let it work in these folders")
            self.decline_button = _button("Don't allow", "presentQuestionDecline", "Keep the folders to yourself")
        self.send_button.setMinimumWidth(160)
        self.send_button.setDefault(True)
        self.send_button.clicked.connect(self.send)
        self.decline_button.clicked.connect(self.decline)
        self.note = plain_label("", "presentQuestionNote", self)
        self.note.hide()
        self.lay.addWidget(self.note)
        buttons.addWidget(self.decline_button)
        buttons.addWidget(self.send_button)
        buttons.addStretch(1)
        self.lay.addLayout(buttons)

    def focus_first(self) -> None:
        if self.form is not None and self.form.focus_widgets():
            self.form.focus_first()
        elif self.reply is not None:
            self.reply.setFocus(Qt.OtherFocusReason)
        else:
            (self.open_button if self.open_button is not None and self.open_button.isEnabled()
             else self.send_button).setFocus(Qt.OtherFocusReason)

    def open_page(self) -> None:
        if self.url:
            opening.open_address(self.url)

    def settle(self, answer: Any) -> None:
        if not self.future.done():
            self.future.set_result(answer)

    def send(self) -> None:
        if self.form is not None:
            if self.form.reveal_problems():
                self.note.setText("⚠ Please fix what is marked above, then press Send again.")
                self.note.show()
                return
            self.settle({"action": "accept", "content": self.form.value()})
        elif self.kind == "url":
            self.settle({"action": "accept"})
        elif self.reply is not None:
            self.settle({"role": "assistant", "content": {"type": "text", "text": self.reply.toPlainText()},
                         "model": "spyglass-presenter", "stopReason": "endTurn"})
        else:
            self.settle(True)

    def decline(self) -> None:
        self.settle({"action": "decline"} if self.kind in ("form", "url") else
                    None if self.kind == "reply" else False)
