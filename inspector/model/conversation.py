"""The playground's conversation: the user's message, then the model's turns until it stops calling
tools. Each tool call the model makes is checked (a tool that exists, arguments that are a JSON object
and fit the tool's `inputSchema`) and handed to the `Runner` the window gives — which asks first when
the confirmation rules say so and calls the tool through the server's session like a manual call. A
problem is given back to the model as the tool's error, so the conversation goes on; a model endpoint
that fails ends the turn with its `ModelError`, and the conversation stays usable."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..forms.validation import SchemaProblem, validate
from .types import Finished, Message, ModelError, TextDelta, ToolCall, ToolCallSeen, ToolSpec, Usage, result_text

if TYPE_CHECKING:  # the clients are loaded when a chat is opened, not with the window
    from .providers import ChatModel, Event

MAX_ROUNDS = 10  # tool rounds in one turn before the conversation stops the model


@dataclass
class CallOutcome:
    """What became of one tool call: `result` (the server's answer), or `error` (not called, or failed);
    `declined` when the person said no."""

    result: Any = None
    error: str | None = None
    declined: bool = False
    record: Any = None  # the window's call record, to render the result as the tool panel does


class Runner(Protocol):
    async def __call__(self, spec: ToolSpec, call: ToolCall, problems: list[str]) -> CallOutcome: ...


@dataclass
class Checked:
    """A call as the conversation judged it before running it."""

    call: ToolCall
    spec: ToolSpec | None
    problems: list[str] = field(default_factory=list)  # schema problems (the call may still run)
    refused: str | None = None  # why it cannot run at all (unknown tool, arguments that are not JSON)


def check_call(call: ToolCall, tools: list[ToolSpec]) -> Checked:
    spec = next((t for t in tools if t.name == call.name), None)
    if spec is None:
        offered = ", ".join(t.name for t in tools) or "none"
        return Checked(call, None, refused=f"the model called {call.name!r}, which is not one of the tools it was "
                                           f"offered ({offered})")
    if call.arguments is None:
        return Checked(call, spec, refused=call.problem or "the arguments are not a JSON object")
    try:
        problems = [f"{where or '/'}: {message}" for where, message in validate(spec.input_schema, call.arguments)]
    except SchemaProblem as exc:
        problems = [f"the tool's inputSchema cannot be checked: {exc}"]
    return Checked(call, spec, problems)


class Listener(Protocol):
    """What the window shows as a turn goes."""

    def event(self, event: Event) -> None: ...

    def checked(self, checked: Checked) -> None: ...

    def outcome(self, checked: Checked, outcome: CallOutcome) -> None: ...


@dataclass
class Conversation:
    messages: list[Message] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)  # per model round, when the endpoint says

    def clear(self) -> None:
        self.messages.clear()
        self.usage.clear()

    async def send(self, text: str, chat: ChatModel, tools: list[ToolSpec], run: Runner, listener: Listener,
                   stopped: Callable[[], bool] = lambda: False) -> Finished | None:
        """The user's `text`, then the model's rounds until it answers without a tool call (or is stopped);
        the last round's Finished. ModelError when the endpoint fails: what came before stays."""
        self.messages.append(Message("user", text))
        last: Finished | None = None
        for _round in range(MAX_ROUNDS):
            last = await self._round(chat, tools, listener)
            if not last.tool_calls:
                return last
            answered: set[str] = set()
            try:
                for call in last.tool_calls:
                    checked = check_call(call, tools)
                    listener.checked(checked)
                    if stopped():
                        outcome = CallOutcome(error="not called: the conversation was stopped")
                    elif checked.refused is not None or checked.spec is None:
                        outcome = CallOutcome(error=f"not called: {checked.refused}")
                    else:
                        outcome = await run(checked.spec, call, checked.problems)
                    listener.outcome(checked, outcome)
                    self._answer(call, outcome)
                    answered.add(call.id)
            finally:  # stopped during a call: every call the model made still gets an answer, or the API refuses
                for call in last.tool_calls:
                    if call.id not in answered:
                        self._answer(call, CallOutcome(error="not called: the conversation was stopped"))
            if stopped():
                return last
        raise ModelError(f"the model kept calling tools for {MAX_ROUNDS} rounds: stopped there", "refused")

    def _answer(self, call: ToolCall, outcome: CallOutcome) -> None:
        said, failed = result_text(outcome.result, outcome.error)
        self.messages.append(Message("tool", said, tool_call_id=call.id, tool_name=call.name, is_error=failed))

    async def _round(self, chat: ChatModel, tools: list[ToolSpec], listener: Listener) -> Finished:
        finished: Finished | None = None
        text: list[str] = []
        try:
            async for event in chat.stream(self.messages, tools):
                if isinstance(event, TextDelta):
                    text.append(event.text)
                elif isinstance(event, Usage):
                    self.usage.append(event)
                elif isinstance(event, Finished):
                    finished = event
                listener.event(event)
        except BaseException:
            if text:  # what the model said before it broke off stays in the conversation
                self.messages.append(Message("assistant", "".join(text)))
            raise
        assert finished is not None  # every stream ends in Finished or raises
        self.messages.append(Message("assistant", finished.text, list(finished.tool_calls)))
        return finished


__all__ = ["CallOutcome", "Checked", "Conversation", "Listener", "Runner", "ToolCallSeen", "check_call"]
