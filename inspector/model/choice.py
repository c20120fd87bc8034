"""Which tool does a model pick for a plain request? One request is one model turn with the server's
tools offered and nothing run: the first tool the model calls (or none) and the arguments it made up.
`run_cases` asks each request N times and counts the picks; a case is right when every pick is the tool
expected, wrong when most are not, and hesitant when the picks differ or the model failed on some. The
same judgement is a collection's `ask` step (`judge_pick`)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .conversation import check_call
from .types import Finished, Message, ModelError, ToolSpec, clip

if TYPE_CHECKING:
    from .providers import ChatModel

NONE = "none"  # the expected "tool" of a request no tool should answer
SYSTEM = ("You can call the tools offered when one fits the user's request. When none fits, answer in words "
          "without calling a tool.")


@dataclass
class Pick:
    """One answer of the model to a request."""

    tool: str | None  # the first tool called, as the server names it (None: no tool)
    arguments: dict[str, Any] | None = None
    raw_arguments: str = ""
    text: str = ""
    problems: list[str] = field(default_factory=list)  # the arguments against the inputSchema, an unknown tool…
    error: str | None = None  # the endpoint failed on this one
    ms: float = 0.0
    tokens: tuple[int | None, int | None] | None = None

    @property
    def label(self) -> str:
        if self.error is not None:
            return "(failed)"
        return self.tool if self.tool is not None else NONE


async def pick(chat: ChatModel, request: str, tools: list[ToolSpec], *, system: str | None = SYSTEM) -> Pick:
    """Ask once. ModelError when the endpoint cannot be used at all (the caller decides whether that ends
    the run)."""
    messages = ([Message("system", system)] if system else []) + [Message("user", request)]
    begun = time.perf_counter()
    finished: Finished | None = None
    async for event in chat.stream(messages, tools):
        if isinstance(event, Finished):
            finished = event
    ms = (time.perf_counter() - begun) * 1000
    assert finished is not None
    tokens = (finished.usage.input_tokens, finished.usage.output_tokens) if finished.usage else None
    if not finished.tool_calls:
        return Pick(None, text=finished.text, ms=ms, tokens=tokens)
    call = finished.tool_calls[0]
    checked = check_call(call, tools)
    name = checked.spec.server_tool if checked.spec is not None else call.name
    problems = list(checked.problems) + ([checked.refused] if checked.refused else [])
    return Pick(name, call.arguments, call.raw, finished.text, problems, ms=ms, tokens=tokens)


def subset_misses(expected: Any, actual: Any, where: str = "") -> list[str]:
    """Where `actual` does not hold `expected` (objects: every key expected, recursively; else equal)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where or '/'}: expected an object, got {clip(repr(actual), 80)}"]
        out: list[str] = []
        for key, value in expected.items():
            if key not in actual:
                out.append(f"{where}/{key}: missing")
            else:
                out += subset_misses(value, actual[key], f"{where}/{key}")
        return out
    if expected != actual and not (_number(expected) and _number(actual) and float(expected) == float(actual)):
        return [f"{where or '/'}: expected {clip(repr(expected), 80)}, got {clip(repr(actual), 80)}"]
    return []


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def judge_pick(expect: dict[str, Any], got: Pick) -> list[tuple[str, Any, Any]]:
    """(what, expected, actual) for every expectation of an ask step that `got` does not meet."""
    out: list[tuple[str, Any, Any]] = []
    wanted = expect.get("tool")
    if wanted is not None:
        expected_tool = None if wanted == NONE else wanted
        if got.tool != expected_tool:
            said = got.label if got.tool is None else got.tool
            out.append(("tool", wanted, said + (f" (it said: {clip(got.text, 120)})" if got.tool is None and got.text
                                                else "")))
    if "arguments" in expect:
        if got.tool is None:
            out.append(("arguments", expect["arguments"], "no tool was called"))
        else:
            for miss in subset_misses(expect["arguments"], got.arguments):
                out.append(("arguments", expect["arguments"], miss))
    if got.tool is not None and (wanted is None or got.tool == wanted):
        for problem in got.problems:
            out.append(("arguments fit the inputSchema", "valid arguments", problem))
    return out


@dataclass
class Case:
    request: str
    expected: str  # a tool's name, or NONE
    arguments: dict[str, Any] | None = None  # a subset the arguments must hold (optional)


@dataclass
class CaseResult:
    case: Case
    picks: list[Pick] = field(default_factory=list)

    @property
    def counts(self) -> Counter[str]:
        return Counter(p.label for p in self.picks)

    @property
    def right(self) -> int:
        expect = {"tool": self.case.expected} | ({"arguments": self.case.arguments} if self.case.arguments else {})
        return sum(1 for p in self.picks if p.error is None and not judge_pick(expect, p))

    @property
    def verdict(self) -> str:
        """right | wrong | hesitant | failed (no pick at all)."""
        if not self.picks or all(p.error is not None for p in self.picks):
            return "failed"
        right = self.right
        if right == len(self.picks):
            return "right"
        return "hesitant" if right else "wrong"

    def common_arguments(self) -> dict[str, Any] | None:
        """The arguments of the most frequent pick (the first such)."""
        top = self.counts.most_common(1)
        if not top:
            return None
        return next((p.arguments for p in self.picks if p.label == top[0][0]), None)


async def run_cases(chat: ChatModel, cases: list[Case], tools: list[ToolSpec], runs: int,
                    progress: Callable[[CaseResult], None] | None = None,
                    stopped: Callable[[], bool] = lambda: False) -> list[CaseResult]:
    """Each case `runs` times, in order. A failure of one ask is counted on its case; an endpoint that
    refuses the key or cannot be reached at all ends the run (ModelError)."""
    results = [CaseResult(c) for c in cases]
    for result in results:
        for _ in range(runs):
            if stopped():
                return results
            try:
                result.picks.append(await pick(chat, result.case.request, tools))
            except ModelError as exc:
                if exc.kind in ("auth", "connect"):
                    raise
                result.picks.append(Pick(None, error=exc.message))
            if progress is not None:
                progress(result)
    return results
