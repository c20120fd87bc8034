"""`playgroundView`: try the servers' tools with a model. Pick a model connection (`playgroundModel`) and
the connected servers whose tools it may use (`playgroundServers`), ask in plain words (`playgroundInput`,
`playgroundSend`), watch the answer stream in (`playgroundTranscript`) and stop it (`playgroundStop`).
Every tool call the model makes is checked (`inspector.model.conversation`) and then goes through the
same rules as a manual call: the confirmation policy asks first for a tool that may change things, and the
call runs through the server's session, into its history, rendered by the tool panel's `ResultView`. With
`playgroundSampling` on, a server's sampling request is answered by the chosen model instead of the
sampling dialog. Every exchange with the model is in the traffic pane (kind `model`).

A tool whose definition carries hidden text (`inspector.invisible`: tag characters, variation selectors,
zero-width and bidi controls…) is named in `playgroundHidden`, with what it spells; the first Send with such
tools offered only warns (the button becomes "Send anyway"), the second sends."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
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

from ... import invisible
from ...checks.trust import strings, text_findings
from ...model import Finished, Message, ModelConnection, ModelError, TextDelta, ToolCall, ToolSpec, Usage
from ...model.conversation import CallOutcome, Checked, Conversation
from ...model.hosted import host_tool_specs
from ...session import OK, TOOL_ERROR, Status
from ..base.dialogs import run_dialog
from ..base.host_picker import HostPicker
from ..base.layout import text_label
from ..base.text import visible
from ..calls import confirm
from .connections import ModelBook
from .transcript import CallCard, Transcript, tokens_text

if TYPE_CHECKING:  # the providers' clients load when a chat opens, not with the window
    from ...model.providers import ChatModel

log = logging.getLogger("spyglass.model")
SERVER_ROLE = Qt.ItemDataRole.UserRole


class ModelPicker(QComboBox):
    """The model connections of the window's book, by label (kept when the book changes)."""

    def __init__(self, book: ModelBook, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.book = book
        self.setMinimumContentsLength(18)
        self.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        book.changed.connect(self.reload)
        self.reload()

    def reload(self) -> None:
        current = self.currentData()
        self.blockSignals(True)
        self.clear()
        for c in self.book.connections:
            self.addItem(c.label, c.name)
        if not self.book.connections:
            self.addItem("No model yet: File → Preferences… → Models", None)
        index = self.findData(current)
        self.setCurrentIndex(index if index >= 0 else 0)
        self.blockSignals(False)

    def connection(self) -> ModelConnection | None:
        name = self.currentData()
        return next((c for c in self.book.connections if c.name == name), None)


class PlaygroundView(QWidget):
    def __init__(self, book: ModelBook, connections: Callable[[], list[Any]], calls: Any,
                 confirm_policy: Callable[[], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("playgroundView")
        self.book = book
        self.connections = connections
        self.calls = calls
        self.confirm_policy = confirm_policy
        self.conversation = Conversation()
        self.job: asyncio.Future[Any] | None = None
        self._stopping = False
        self._chats: dict[ModelConnection, ChatModel] = {}
        self._current: ModelConnection | None = None
        self._ticks: dict[str, bool] = {}
        self.model = ModelPicker(book, "playgroundModel", self)
        self.servers = QListWidget(self)
        self.servers.setObjectName("playgroundServers")
        self.servers.setMaximumHeight(54)
        self.servers.setToolTip("The connected servers whose tools the model is offered")
        self.host = HostPicker("playgroundHost", self)
        self.sampling = QCheckBox("Let the model answer the servers' sampling requests", self)
        self.sampling.setObjectName("playgroundSampling")
        self.sampling.setToolTip("Off: each sampling request opens the sampling dialog, as usual")
        self.offered = text_label("", self, name="playgroundOffered", role="muted")
        self.hidden = text_label("", self, name="playgroundHidden", role="warning")
        self.hidden.setVisible(False)
        self._warned: frozenset[str] = frozenset()  # the hidden texts the user chose to send anyway
        self.transcript = Transcript(self)
        self.input = QPlainTextEdit(self)
        self.input.setObjectName("playgroundInput")
        self.input.setPlaceholderText("Ask in plain words, e.g. “What's the weather in Paris?” (Ctrl+Enter sends)")
        self.input.setMaximumHeight(80)
        self.send_button = QPushButton("Send", self)
        self.send_button.setObjectName("playgroundSend")
        self.send_button.setDefault(True)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setObjectName("playgroundStop")
        self.stop_button.setEnabled(False)
        self.clear_button = QPushButton("New chat", self)
        self.clear_button.setObjectName("playgroundClear")
        self.tokens = text_label("", self, name="playgroundTotal", role="muted")
        top = QHBoxLayout()
        top.addWidget(QLabel("Model:", self))
        top.addWidget(self.model, 1)
        top.addWidget(self.host)
        top.addWidget(self.sampling)
        servers_row = QHBoxLayout()
        servers_label = QLabel("Tools from:", self)
        servers_label.setAlignment(Qt.AlignTop)
        servers_row.addWidget(servers_label)
        servers_row.addWidget(self.servers, 1)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.clear_button)
        bottom = QHBoxLayout()
        bottom.addWidget(self.input, 1)
        bottom.addLayout(buttons)
        head = QWidget(self)
        head_lay = QVBoxLayout(head)
        head_lay.setContentsMargins(0, 0, 0, 0)
        head_lay.addLayout(top)
        head_lay.addLayout(servers_row)
        head_lay.addWidget(self.offered)
        head_lay.addWidget(self.hidden)
        lay = QVBoxLayout(self)
        lay.addWidget(head)
        split = QSplitter(Qt.Vertical, self)
        split.addWidget(self.transcript)
        foot = QWidget(self)
        foot_lay = QVBoxLayout(foot)
        foot_lay.setContentsMargins(0, 0, 0, 0)
        foot_lay.addLayout(bottom)
        foot_lay.addWidget(self.tokens)
        split.addWidget(foot)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 0)
        split.setSizes([600, 100])
        split.setChildrenCollapsible(False)
        lay.addWidget(split, 1)
        self.send_button.clicked.connect(self.send)
        self.stop_button.clicked.connect(self.stop)
        self.clear_button.clicked.connect(self.new_chat)
        QShortcut(QKeySequence("Ctrl+Return"), self.input, self.send)
        self.servers.itemChanged.connect(self._ticked)
        self.model.currentIndexChanged.connect(lambda _i: self._say_offered())
        self.host.currentIndexChanged.connect(lambda _i: self._say_offered())
        book.changed.connect(self._forget_chats)
        self.refresh_servers()

    # ------------------------------------------------------------------ servers and tools
    def refresh_servers(self) -> None:
        """List the window's servers again (connected ones can be ticked; ticks are kept)."""
        self.servers.blockSignals(True)
        self.servers.clear()
        for conn in self.connections():
            up = conn.session.status == Status.CONNECTED
            tools = len(conn.session.tools.items) if up else 0
            item = QListWidgetItem(f"{conn.name} — {tools} tool{'s' if tools != 1 else ''}" if up else
                                   f"{conn.name} (not connected)", self.servers)
            item.setData(SERVER_ROLE, conn.server_id)
            flags = Qt.ItemIsUserCheckable | (Qt.ItemIsEnabled if up else Qt.NoItemFlags)
            item.setFlags(flags)
            on = up and self._ticks.get(conn.server_id, True)  # a server is offered until the user unticks it
            item.setCheckState(Qt.Checked if on else Qt.Unchecked)
        self.servers.blockSignals(False)
        self._say_offered()

    def _ticked(self, item: QListWidgetItem) -> None:
        self._ticks[item.data(SERVER_ROLE)] = item.checkState() == Qt.Checked
        self._say_offered()

    def ticked_ids(self) -> list[str]:
        return [self.servers.item(i).data(SERVER_ROLE) for i in range(self.servers.count())
                if self.servers.item(i).checkState() == Qt.Checked]

    def chosen(self) -> list[Any]:
        ids = set(self.ticked_ids())
        return [c for c in self.connections() if c.server_id in ids and c.session.status == Status.CONNECTED]

    def tools(self) -> list[ToolSpec]:
        return self.offer()[0]

    def offer(self) -> tuple[list[ToolSpec], list[str]]:
        """The tools offered (as the picked host would offer them) and what that host changed or left out."""
        conns = self.chosen()
        return host_tool_specs({c.server_id: (c.name, list(c.session.tools.items)) for c in conns},
                               self.host.profile())

    def _say_offered(self) -> None:
        tools, notes = self.offer()
        names = ", ".join(t.name for t in tools[:12]) + (f" and {len(tools) - 12} more" if len(tools) > 12 else "")
        profile = self.host.profile()
        host = f" as {profile.name} would offer them" if profile is not None else ""
        changed = (f" ({len(notes)} change{'s' if len(notes) != 1 else ''}: {'; '.join(notes[:3])}"
                   f"{'…' if len(notes) > 3 else ''})") if notes else ""
        self.offered.setText(f"The model is offered {len(tools)} tool{'s' if len(tools) != 1 else ''}{host}: "
                             f"{names}{visible(changed, 400)}"
                             if tools else "No tools offered: tick a connected server (the model can still chat).")
        hidden = hidden_text(tools)
        self.hidden.setText("⚠ Hidden text the model would read, which you do not see: "
                            + "; ".join(f"{invisible.marked(name)} — {what}" for name, what in list(hidden.items())[:4])
                            + (f"; and {len(hidden) - 4} more tools" if len(hidden) > 4 else "")
                            + ". The first Send only warns; Send again to send anyway." if hidden else "")
        self.hidden.setVisible(bool(hidden))
        self.send_button.setText("Send anyway" if hidden and self._warned >= frozenset(hidden.values()) else "Send")

    # ------------------------------------------------------------------ a turn
    def chat_for(self, connection: ModelConnection) -> ChatModel:
        chat = self._chats.get(connection)
        if chat is None:
            chat = self._chats[connection] = self.book.open(connection)
        return chat

    def _forget_chats(self) -> None:
        old, self._chats = self._chats, {}
        for chat in old.values():
            task = asyncio.ensure_future(chat.aclose())
            task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def send(self) -> None:
        text = self.input.toPlainText().strip()
        if not text or (self.job is not None and not self.job.done()):
            return
        tools = self.tools()
        hidden = frozenset(hidden_text(tools).values())
        if hidden and not hidden <= self._warned:
            self._warned |= hidden  # said once; Send again sends
            self._say_offered()
            self.transcript.error(f"Not sent: {len(hidden)} offered tool{'s carry' if len(hidden) > 1 else ' carries'} "
                                  "hidden text (named above, with what it spells). Send again to send anyway, or "
                                  "untick the server.")
            return
        connection = self.model.connection()
        if connection is None:
            self.transcript.error("No model to ask: add a model connection in File → Preferences… → Models "
                                  "(an Ollama at http://localhost:11434/v1 needs no key).")
            return
        self.input.clear()
        self.transcript.user(text)
        self._current = connection
        self._stopping = False
        self.job = asyncio.ensure_future(self._turn(text, connection, tools))
        self.job.add_done_callback(self._ended)
        self._busy(True)

    def _ended(self, job: asyncio.Future[Any]) -> None:
        if job.cancelled():  # stopped before the turn began
            self.transcript.note("Stopped.", "playgroundStopped")
            self._busy(False)
        else:
            job.exception()

    async def _turn(self, text: str, connection: ModelConnection, tools: list[ToolSpec]) -> None:
        try:
            await self.conversation.send(text, self.chat_for(connection), tools, self._run, _Shown(self),
                                         stopped=lambda: self._stopping)
        except ModelError as exc:
            if self._stopping:  # the client saw its stream closed under it: that was Stop
                self.transcript.note("Stopped.", "playgroundStopped")
            else:
                self.transcript.error(exc.message + " — the conversation goes on: send again, or pick another "
                                                    "model.")
        except asyncio.CancelledError:
            self.transcript.note("Stopped.", "playgroundStopped")
        except Exception as exc:  # a bug of ours: said in the chat, the chat stays usable
            log.exception("playground turn")
            self.transcript.error(f"internal error: {type(exc).__name__}: {exc}")
        finally:
            self._busy(False)
            self._say_total()

    def stop(self) -> None:
        if self.job is not None and not self.job.done():
            self._stopping = True
            self.job.cancel()

    async def close(self) -> None:
        self.stop()
        if self.job is not None:
            await asyncio.gather(self.job, return_exceptions=True)
        old, self._chats = self._chats, {}
        for chat in old.values():
            await chat.aclose()

    def new_chat(self) -> None:
        self.stop()
        self.conversation.clear()
        self.transcript.clear()
        self._say_total()

    def _busy(self, on: bool) -> None:
        self.send_button.setEnabled(not on)
        self.stop_button.setEnabled(on)

    def _say_total(self) -> None:
        ins = sum(u.input_tokens or 0 for u in self.conversation.usage)
        outs = sum(u.output_tokens or 0 for u in self.conversation.usage)
        self.tokens.setText(f"This chat: {ins} tokens in, {outs} out ({len(self.conversation.usage)} model "
                            f"rounds reported them)" if self.conversation.usage else "")

    # ------------------------------------------------------------------ running a call as a manual call runs
    async def _run(self, spec: ToolSpec, call: ToolCall, problems: list[str]) -> CallOutcome:
        conn = next((c for c in self.connections() if c.server_id == spec.server), None)
        if conn is None or conn.session.status != Status.CONNECTED or conn.session.client is None:
            return CallOutcome(error=f"not called: the server {spec.server} is not connected")
        tool = spec.definition or {"name": spec.server_tool}
        if confirm.needs_confirmation(tool, self.confirm_policy()):
            dialog = confirm.ConfirmDialog(tool, call.arguments, self.window())
            if await run_dialog(dialog) != QDialog.Accepted:
                return CallOutcome(error="not called: you declined the call in the confirmation", declined=True)
        rec = self.calls.call(conn, spec.server_tool, call.arguments, tool, anyway=bool(problems))
        try:
            if rec.job is not None:
                await asyncio.shield(rec.job)
        except asyncio.CancelledError:
            self.calls.cancel(rec)  # Stop ends the tool's call too
            raise
        except Exception:  # the record says what happened
            pass
        if rec.outcome in (OK, TOOL_ERROR):
            return CallOutcome(result=rec.result, record=rec)
        return CallOutcome(error=f"the call ended: {rec.outcome}" + (f" ({rec.error_text})" if rec.error_text else ""),
                           record=rec)

    # ------------------------------------------------------------------ sampling answered by the model
    def answers_sampling(self) -> bool:
        return self.sampling.isChecked() and self.model.connection() is not None

    async def sample(self, server_name: str, params: dict[str, Any]) -> dict[str, Any]:
        """A server's sampling/createMessage answered by the chosen model (no tools offered)."""
        connection = self.model.connection()
        assert connection is not None
        messages = [Message("system", str(params["systemPrompt"]))] if params.get("systemPrompt") else []
        for m in params.get("messages") or []:
            if not isinstance(m, dict):
                continue
            content = m.get("content")
            blocks = content if isinstance(content, list) else [content]
            text = "\n".join(str(b.get("text")) if isinstance(b, dict) and b.get("type") == "text" else
                             f"[{b.get('type') if isinstance(b, dict) else 'content'}]" for b in blocks)
            messages.append(Message("assistant" if m.get("role") == "assistant" else "user", text))
        note = self.transcript.note(f"{server_name} asked for a reply (sampling); {connection.label} answers…",
                                    "playgroundSamplingNote")
        said = ""
        async for event in self.chat_for(connection).stream(messages, []):
            if isinstance(event, Finished):
                said = event.text
        note.setText(f"{server_name} asked for a reply (sampling); {connection.label} answered: {said[:400]}")
        return {"role": "assistant", "content": {"type": "text", "text": said}, "model": connection.model,
                "stopReason": "endTurn"}


class _Shown:
    """The conversation's listener: the transcript, as the turn goes."""

    def __init__(self, view: PlaygroundView) -> None:
        self.view = view
        self.who = view._current.label if view._current is not None else "Model"
        self.cards: dict[str, CallCard] = {}

    def event(self, event: Any) -> None:
        t = self.view.transcript
        if isinstance(event, TextDelta):
            t.delta(self.who, event.text)
        elif isinstance(event, Finished):
            t.finished(self.who, event.text, event.usage, event.stop_reason)
        elif isinstance(event, Usage):
            self.view.tokens.setText(tokens_text(event))

    def checked(self, checked: Checked) -> None:
        server = checked.spec.server if checked.spec is not None else ""
        self.cards[checked.call.id] = self.view.transcript.call(checked, server)

    def outcome(self, checked: Checked, outcome: CallOutcome) -> None:
        card = self.cards.get(checked.call.id)
        if card is not None:
            card.set_outcome(outcome)


LAID_OUT_OF_SIGHT = ("hidden-html-comment", "hidden-after-blank-lines")  # hidden by layout, not by characters


def hidden_text(tools: list[ToolSpec]) -> dict[str, str]:
    """Tool name (as the model sees it) -> the hidden text its definition carries, in words: invisible
    characters, an HTML comment (a Markdown view hides it), text pushed out of sight by blank lines."""
    out: dict[str, str] = {}
    for spec in tools:
        definition = spec.definition or {"description": spec.description, "inputSchema": spec.input_schema}
        for where, text in strings(definition):
            runs = invisible.find(text) if invisible.ANY.search(text) else []
            if runs:
                out[spec.name] = f"{where}: {runs[0].describe()}"
                break
            laid = [f for f in text_findings(text, "", where) if f.rule in LAID_OUT_OF_SIGHT]
            if laid:  # "description holds an HTML comment ('<!-- … -->')", without the advice after it
                out[spec.name] = laid[0].message.split("): ", 1)[0] + ")"
                break
    return out
