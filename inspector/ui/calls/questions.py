"""What a server asks of the user — elicitation, sampling, roots — as dialogs: the user always answers.

`DialogAnswers` is the window's `Answerer` (inspector.session): the session routes the legacy era's
server requests and the modern era's MRTR input requests alike, and records each question on the call
it belongs to. Each dialog opens window-modally with `open()` (no nested event loop) and is awaited,
so the window and other calls keep running.

Object names: `elicitationDialog` (`elicitAccept`, `elicitDecline`, `elicitCancel`, `elicitForm`,
`elicitUrlHost`, `elicitUrl`, `elicitUrlRefused`, `elicitOpenUrl`), `samplingDialog` (`samplingRequest`,
`samplingReply`, `samplingModel`, `samplingSend`, `samplingReject`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ... import urlpolicy
from ...forms import SchemaForm
from ..base import design, opening
from ..base.dialogs import run_dialog
from ..base.layout import plain_label
from ..base.text import pretty_json, visible, visible_block

if TYPE_CHECKING:
    from ...session import CallRecord, ServerSession

log = logging.getLogger("spyglass.ui.questions")

ROOTS_FROM_SETTINGS, ROOTS_ASK = "settings", "ask"  # the rootsPolicy preference
# What a stage (presentation mode) answers when it gives a question back unanswered: it was left while the
# question was on it. The question is then asked in the dialog, so no question goes unanswered or twice.
HANDED_BACK: Any = object()


def _plain(text: str, parent: QWidget, name: str = "", bold: bool = False) -> QLabel:
    label = plain_label(parent, name, selectable=True, bold=bold)
    label.setText(text)
    return label


# ---------------------------------------------------------------------- elicitation
class ElicitationDialog(QDialog):
    """Form mode: a SchemaForm from `requestedSchema`. URL mode: the full target host, opened only on request."""

    def __init__(self, server: str, params: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("elicitationDialog")
        self.setWindowTitle(f"{visible(server, 80)} asks for input")
        self.action = "cancel"
        self.form: Any = None
        self.url: str | None = None
        lay = QVBoxLayout(self)
        lay.addWidget(_plain(f"The server “{visible(server, 120)}” asks:", self, bold=True))
        message = params.get("message")
        lay.addWidget(_plain(visible_block(message, 4000) if isinstance(message, str) else "(no message)", self,
                             "elicitMessage"))
        buttons = QDialogButtonBox(self)
        mode = params.get("mode") if isinstance(params.get("mode"), str) else "form"
        self.mode = mode
        if mode == "url":
            url = params.get("url") if isinstance(params.get("url"), str) else ""
            self.url = url
            shown = urlpolicy.for_display(url)  # the host as the browser will show it (punycode for look-alikes)
            box = QFrame(self)
            box.setFrameShape(QFrame.StyledPanel)
            bl = QVBoxLayout(box)
            bl.addWidget(_plain("It wants you to open a page on:", box))
            h = _plain(shown.host or "(nothing that can be opened)", box, "elicitUrlHost", bold=True)
            f = h.font()
            f.setPointSizeF(design.size("heading", f.pointSizeF()))
            h.setFont(f)
            bl.addWidget(h)
            bl.addWidget(_plain(f"Full address: {shown.full}", box, "elicitUrl"))
            if shown.refusal is not None:
                bl.addWidget(_plain(f"⚠ Not opened: {shown.refusal}.", box, "elicitUrlRefused"))
            lay.addWidget(box)
            self.open_button = QPushButton("Open in browser", self)
            self.open_button.setObjectName("elicitOpenUrl")
            self.open_button.setEnabled(shown.refusal is None)
            self.open_button.clicked.connect(self._open_url)
            lay.addWidget(self.open_button)
            accept = buttons.addButton("Done", QDialogButtonBox.AcceptRole)
        else:
            schema = params.get("requestedSchema")
            self.form = SchemaForm(schema if isinstance(schema, (dict, bool)) else {"type": "object"}, self)
            self.form.setObjectName("elicitForm")
            self.form.setMinimumHeight(160)
            lay.addWidget(self.form, 1)
            accept = buttons.addButton("Accept", QDialogButtonBox.AcceptRole)
            self.form.submitted.connect(lambda: self._finish("accept"))
        accept.setObjectName("elicitAccept")
        # the platform's order (Cancel | Decline | Accept on GNOME and macOS; Accept | Decline | Cancel on
        # Windows and KDE): Decline is the answer "no", Cancel the dismissal, so they take those roles
        decline = buttons.addButton("Decline", QDialogButtonBox.NoRole)
        decline.setObjectName("elicitDecline")
        cancel = buttons.addButton("Cancel", QDialogButtonBox.RejectRole)
        cancel.setObjectName("elicitCancel")
        accept.clicked.connect(lambda: self._finish("accept"))
        decline.clicked.connect(lambda: self._finish("decline"))
        cancel.clicked.connect(lambda: self._finish("cancel"))
        lay.addWidget(buttons)
        self.problem = _plain("", self, "elicitProblem")
        self.problem.hide()
        lay.addWidget(self.problem)
        self.resize(540, 600 if self.form is not None else 280)

    def _open_url(self) -> None:
        if self.url:
            opening.open_address(self.url)

    def _finish(self, action: str) -> None:
        if action == "accept" and self.form is not None:
            n = self.form.reveal_problems()
            if n and not (n == 1 and self.form.checker().problem):  # (a schema that cannot be used: not checked,
                # as its banner says, and the answer is the user's to give)
                self.problem.setText(f"{n} problem{'s' if n != 1 else ''} in the form: fix them or decline.")
                self.problem.show()
                return
        self.action = action
        self.done(QDialog.Accepted if action == "accept" else QDialog.Rejected)

    def reject(self) -> None:  # Escape or the close button: cancel
        if self.action not in ("accept", "decline"):
            self.action = "cancel"
        super().reject()

    def answer(self) -> dict[str, Any]:
        if self.action == "accept":
            if self.form is not None:
                return {"action": "accept", "content": self.form.value()}
            return {"action": "accept"}
        return {"action": self.action}


# ---------------------------------------------------------------------- sampling
class SamplingDialog(QDialog):
    def __init__(self, server: str, params: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("samplingDialog")
        self.setWindowTitle(f"{visible(server, 80)} asks for a model reply")
        self.rejected_by_user = True
        lay = QVBoxLayout(self)
        lay.addWidget(_plain(f"The server “{visible(server, 120)}” asks for an LLM completion. "
                             "Read the request, then write or edit the reply it gets.", self, bold=True))
        req = QPlainTextEdit(self)
        req.setObjectName("samplingRequest")
        req.setReadOnly(True)
        req.setPlainText(describe_sampling(params))
        lay.addWidget(req, 2)
        lay.addWidget(_plain("Reply (text):", self))
        self.reply = QPlainTextEdit(self)
        self.reply.setObjectName("samplingReply")
        self.reply.setPlaceholderText("The assistant's answer the server will receive")
        lay.addWidget(self.reply, 1)
        row = QHBoxLayout()
        row.addWidget(_plain("Model:", self))
        self.model = QLineEdit("spyglass-user", self)
        self.model.setObjectName("samplingModel")
        row.addWidget(self.model, 1)
        lay.addLayout(row)
        buttons = QDialogButtonBox(self)
        send = buttons.addButton("Send reply", QDialogButtonBox.AcceptRole)
        send.setObjectName("samplingSend")
        reject = buttons.addButton("Reject", QDialogButtonBox.RejectRole)
        reject.setObjectName("samplingReject")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.resize(560, 520)

    def answer(self) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": self.reply.toPlainText()},
                "model": self.model.text() or "spyglass-user", "stopReason": "endTurn"}


def describe_sampling(params: dict[str, Any]) -> str:
    """The request in words: system prompt, messages, preferences, tools, limits."""
    out = []
    sp = params.get("systemPrompt")
    if isinstance(sp, str) and sp:
        out.append("System prompt:\n  " + visible_block(sp, 4000).replace("\n", "\n  "))
    msgs = params.get("messages")
    out.append("Messages:")
    for m in msgs if isinstance(msgs, list) else []:
        role = m.get("role") if isinstance(m, dict) else None
        content = m.get("content") if isinstance(m, dict) else m
        parts = content if isinstance(content, list) else [content]
        for c in parts:
            if isinstance(c, dict) and c.get("type") == "text":
                text = visible_block(c.get("text"), 4000)
            elif isinstance(c, dict):
                text = f"[{visible(c.get('type'), 40)} content] " + visible(pretty_json(
                    {k: (v if not isinstance(v, str) or len(v) < 200 else v[:200] + '…') for k, v in c.items()}), 600)
            else:
                text = visible(pretty_json(c), 600)
            out.append(f"  {visible(role, 20)}: " + text.replace("\n", "\n    "))
    prefs = params.get("modelPreferences")
    if prefs is not None:
        out.append("Model preferences: " + visible(json.dumps(prefs, ensure_ascii=False), 1000))
    for key in ("maxTokens", "temperature", "stopSequences", "includeContext", "toolChoice"):
        if key in params:
            out.append(f"{key}: {visible(json.dumps(params[key], ensure_ascii=False), 400)}")
    tools = params.get("tools")
    if isinstance(tools, list) and tools:
        out.append("Tools offered to the model:")
        for t in tools:
            if isinstance(t, dict):
                out.append(f"  - {visible(t.get('name'), 100)}: {visible(t.get('description'), 300)}")
    if params.get("metadata") is not None:
        out.append("metadata: " + visible(json.dumps(params.get("metadata"), ensure_ascii=False), 600))
    return "\n".join(out)


# ---------------------------------------------------------------------- handlers
class RootsDialog(QDialog):
    """roots/list when the rootsPolicy preference is "ask": the folders that would be shared, Send or Refuse."""

    def __init__(self, server: str, roots: list[dict[str, Any]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rootsDialog")
        self.setWindowTitle(f"{visible(server, 80)} asks for your roots")
        lay = QVBoxLayout(self)
        lay.addWidget(_plain(f"The server “{visible(server, 120)}” asks which folders it may work in "
                             "(roots/list).", self, bold=True))
        shown = "\n".join((f"{visible(r.get('name'), 120)}: " if r.get("name") else "") + visible(r.get("uri"), 500)
                          for r in roots) or "(none: the server's Roots tab lists no folder)"
        listing = QPlainTextEdit(self)
        listing.setObjectName("rootsShared")
        listing.setReadOnly(True)
        listing.setPlainText(shown)
        lay.addWidget(listing, 1)
        lay.addWidget(_plain("Change them in the server's Roots tab; Preferences decides whether to ask.", self))
        buttons = QDialogButtonBox(self)
        send = buttons.addButton("Send these", QDialogButtonBox.AcceptRole)
        send.setObjectName("rootsSend")
        refuse = buttons.addButton("Refuse", QDialogButtonBox.RejectRole)
        refuse.setObjectName("rootsRefuse")
        refuse.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.resize(560, 280)


class DialogAnswers:
    """The window's answers to a server's questions (an `Answerer` of inspector.session): a window-modal
    dialog for each, over `parent()`. Roots are shared as the server's Roots tab lists them, or, when
    `ask_roots()` says so (the rootsPolicy preference), after the user agreed in a dialog.

    While `stage` is set (presentation mode: an object with the same three coroutines), a question no
    running collection answers is asked there instead, in words for an audience; what the stage hands back
    (`HANDED_BACK`) is asked in the dialog. `sampler` (the playground, when the user lets its model answer
    sampling requests) answers a sampling request first, or hands it back the same way."""

    def __init__(self, parent: Callable[[], QWidget | None], ask_roots: Callable[[], bool]) -> None:
        self.parent = parent
        self.ask_roots = ask_roots
        # server id -> the answers a running collection gives (its step's `elicit` / `sampling`); a
        # question the step says nothing about is still asked in a dialog
        self.scripts: dict[str, Any] = {}
        self.stage: Any = None
        self.sampler: Any = None

    def _script(self, session: ServerSession, kind: str) -> Any:
        script = self.scripts.get(session.server_id)
        return script if script is not None and script.answers(kind) else None

    async def elicit(self, session: ServerSession, params: dict[str, Any], call: CallRecord | None,
                     ) -> dict[str, Any]:
        script = self._script(session, "elicit")
        if script is not None:
            answer: dict[str, Any] = await script.elicit(session, params, call)
            return answer
        if self.stage is not None:
            staged = await self.stage.elicit(session, params, call)
            if staged is not HANDED_BACK:
                return staged
        dialog = ElicitationDialog(session.name, params, self.parent())
        await run_dialog(dialog)  # decline and cancel are answers too (the dialog says which)
        return dialog.answer()

    async def sample(self, session: ServerSession, params: dict[str, Any], call: CallRecord | None,
                     ) -> dict[str, Any] | None:
        script = self._script(session, "sampling")
        if script is not None:
            reply: dict[str, Any] | None = await script.sample(session, params, call)
            return reply
        if self.sampler is not None:
            sampled = await self.sampler.sample(session, params, call)
            if sampled is not HANDED_BACK:
                return sampled
        if self.stage is not None:
            staged = await self.stage.sample(session, params, call)
            if staged is not HANDED_BACK:
                return staged
        dialog = SamplingDialog(session.name, params, self.parent())
        if await run_dialog(dialog) != QDialog.Accepted:
            return None
        return dialog.answer()

    async def share_roots(self, session: ServerSession, roots: list[dict[str, Any]], call: CallRecord | None,
                          ) -> bool:
        if not self.ask_roots():
            return True
        if self.stage is not None:
            staged = await self.stage.share_roots(session, roots, call)
            if staged is not HANDED_BACK:
                return bool(staged)
        return await run_dialog(RootsDialog(session.name, roots, self.parent())) == QDialog.Accepted
