"""Running a collection: its steps in order over one connection (an open `ServerSession`), each answer
judged (`expect.py`), values saved for later steps (`${name}`), snapshots compared or rewritten, and
the server's questions during a step answered as the step says (`elicit`, `sampling`). An `ask` step
asks the model given (`model`) which tool it calls for a plain request, with the server's tools offered,
and judges its choice (`inspector.model.choice`); a model endpoint that cannot be reached or refuses the
key ends the run with its ModelError.

A server that dies mid-run fails the remaining steps with that reason; the report is still whole, so
the JUnit file is written all the same.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import errors as E
from ..private import write_atomic
from .expect import Miss, judge, snapshot_misses
from .load import Collection, Step

if TYPE_CHECKING:
    from ..model.providers import ChatModel
    from ..session import CallRecord, ServerSession

_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
LISTED_KEY = {"tools/list": ("tools", "name"), "resources/list": ("resources", "uri"),
              "resources/templates/list": ("resourceTemplates", "uriTemplate"), "prompts/list": ("prompts", "name")}


class Unresolved(Exception):
    pass


def substitute(value: Any, saved: dict[str, Any], env: Mapping[str, str] | None = None) -> Any:
    """`${name}` from the saved values (then the environment): a value that is exactly `${name}` keeps the
    saved value's JSON type; inside a longer string it becomes text. Unknown names raise Unresolved."""
    environment: Mapping[str, str] = os.environ if env is None else env
    if isinstance(value, dict):
        return {k: substitute(v, saved, environment) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, saved, environment) for v in value]
    if not isinstance(value, str) or "${" not in value:
        return value

    def lookup(name: str) -> Any:
        if name in saved:
            return saved[name]
        if name in environment:
            return environment[name]
        raise Unresolved(name)

    whole = _REF.fullmatch(value)
    if whole:
        return lookup(whole.group(1))
    return _REF.sub(lambda m: v if isinstance(v := lookup(m.group(1)), str) else json.dumps(v), value)


def pointer_get(value: Any, pointer: str) -> Any:
    """The value at a JSON pointer; KeyError when there is none."""
    if pointer == "":
        return value
    for raw in pointer[1:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise KeyError(pointer)
    return value


@dataclass
class StepResult:
    step: Step
    status: str = "passed"  # passed | failed | skipped
    ms: float = 0.0
    misses: list[Miss] = field(default_factory=list)
    reason: str | None = None  # why it could not be judged (no answer, the server went away…)
    result: Any = None
    error: dict[str, Any] | None = None
    snapshot: str | None = None  # "written", "updated", "matched"

    def messages(self) -> list[str]:
        return ([self.reason] if self.reason else []) + [m.line() for m in self.misses]


@dataclass
class RunReport:
    collection: str
    server: str
    results: list[StepResult] = field(default_factory=list)
    seconds: float = 0.0
    snapshots_written: bool = False

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if r.status == "failed")

    @property
    def passed(self) -> int:
        return sum(1 for r in self.results if r.status == "passed")

    def text(self) -> str:
        lines = [f"{self.collection} against {self.server}", ""]
        for r in self.results:
            mark = {"passed": "✓", "failed": "✗", "skipped": "·"}[r.status]
            note = f"  ({r.snapshot} snapshot)" if r.snapshot in ("written", "updated") else ""
            lines.append(f"{mark} {r.step.name}  {r.ms:.1f} ms{note}" if r.ms < 10 else
                         f"{mark} {r.step.name}  {r.ms:.0f} ms{note}")
            lines += [f"    {m}" for m in r.messages()]
        skipped = len(self.results) - self.passed - self.failed
        lines += ["", f"{self.passed} passed, {self.failed} failed" + (f", {skipped} skipped" if skipped else "")
                  + f" ({self.seconds:.2f} s)"]
        return "\n".join(lines) + "\n"

    def as_json(self) -> dict[str, Any]:
        return {"collection": self.collection, "server": self.server, "passed": self.passed, "failed": self.failed,
                "seconds": round(self.seconds, 3),
                "steps": [{"name": r.step.name, "status": r.status, "ms": round(r.ms, 2), "reason": r.reason,
                           "misses": [{"what": m.what, "expected": m.expected, "actual": m.actual} for m in r.misses],
                           "snapshot": r.snapshot} for r in self.results]}


class StepAnswers:
    """An `Answerer` whose answers are the current step's `elicit` and `sampling` (declined otherwise)."""

    def __init__(self) -> None:
        self.step: Step | None = None
        self.asked: list[str] = []

    def answers(self, kind: str) -> bool:
        """Whether the step running now says how to answer `kind` (elicit or sampling); the window asks
        the user otherwise."""
        if self.step is None:
            return False
        return bool(self.step.elicit if kind == "elicit" else self.step.sampling)

    async def elicit(self, session: ServerSession, params: dict[str, Any], call: CallRecord | None,
                     ) -> dict[str, Any]:
        self.asked.append("elicitation/create")
        spec = self.step.elicit if self.step is not None else None
        if spec and "accept" in spec:
            return {"action": "accept", "content": spec["accept"]}
        if spec and "cancel" in spec:
            return {"action": "cancel"}
        return {"action": "decline"}

    async def sample(self, session: ServerSession, params: dict[str, Any], call: CallRecord | None,
                     ) -> dict[str, Any] | None:
        self.asked.append("sampling/createMessage")
        spec = self.step.sampling if self.step is not None else None
        if not spec:
            return None
        return {"role": "assistant", "content": {"type": "text", "text": spec["reply"]},
                "model": spec.get("model", "spyglass-test"), "stopReason": "endTurn"}

    async def share_roots(self, session: ServerSession, roots: list[dict[str, Any]],
                          call: CallRecord | None) -> bool:
        return True


def load_snapshots(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise E.UsageError(f"{path}: the snapshots cannot be read ({exc}); rewrite them with "
                           "--update-snapshots") from None
    return data if isinstance(data, dict) else {}


def write_snapshots(path: Path, snapshots: dict[str, Any]) -> None:
    try:
        write_atomic(path, json.dumps(snapshots, indent=2, ensure_ascii=False, sort_keys=True) + "\n",
                     suffix=".part")
    except OSError as exc:
        raise E.UsageError(f"cannot write the snapshots {path}: {exc.strerror or exc}") from None


def without_meta(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_meta(v) for k, v in value.items() if k != "_meta"}
    if isinstance(value, list):
        return [without_meta(v) for v in value]
    return value


async def run(collection: Collection, session: ServerSession, answers: StepAnswers, *,
              only: Iterable[str] = (), update_snapshots: bool = False, timeout: float | None = 60.0,
              target: str | None = None, progress: Callable[[StepResult], None] | None = None,
              model: ChatModel | None = None) -> RunReport:
    """Run the steps (those named in `only`, when given) in order; the session is open already. `timeout`:
    seconds per request (a step's own wins; the caller decides between its flag and the collection's).
    `model`: what `ask` steps ask (without one they fail, saying so)."""
    wanted = set(only)
    report = RunReport(collection.name, target or session.name)
    snapshots = load_snapshots(collection.snapshot_path)
    changed = False
    saved: dict[str, Any] = {}
    saved_tools: list[dict[str, Any]] = []  # the server's tools, listed once for the ask steps
    gone: str | None = None
    begun = time.perf_counter()
    for step in collection.steps:
        if wanted and step.name not in wanted:
            continue
        r = StepResult(step)
        report.results.append(r)
        if gone is not None:
            r.status, r.reason = "failed", f"not run: {gone}"
        else:
            gone = (await _ask(session, model, step, r, saved_tools) if step.kind == "ask" else
                    await _one(session, answers, step, r, saved, timeout))
            if r.status != "failed" and step.expect.get("snapshot"):
                changed = _snapshot(r, snapshots, update_snapshots) or changed
        if progress is not None:
            progress(r)
    if changed:
        write_snapshots(collection.snapshot_path, snapshots)
        report.snapshots_written = True
    report.seconds = time.perf_counter() - begun
    return report


async def _one(session: ServerSession, answers: StepAnswers, step: Step, r: StepResult, saved: dict[str, Any],
               timeout: float | None) -> str | None:
    """Run one step into `r`; returns why the rest cannot run when the server went away."""
    try:
        params = _params(step, saved)
    except Unresolved as exc:
        r.status, r.reason = "failed", f"${{{exc.args[0]}}} is neither saved by an earlier step nor in the environment"
        return None
    client = session.client
    if client is None or getattr(client, "closed", None) is not None:
        r.status, r.reason = "failed", "the server is not connected"
        return r.reason
    answers.step = step
    listed: list[str] | None = None
    sent = time.perf_counter()
    try:
        if step.kind == "list":
            key, name = LISTED_KEY[step.method]
            r.result = (await client.list_tools(refresh=True) if step.method == "tools/list" else
                        await client.list_all(step.method, key, refresh=True))
            entries = r.result.get(key) if isinstance(r.result, dict) else None
            listed = [str(e.get(name)) for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
        else:
            r.result = await client.request(step.method, params, timeout=step.timeout or timeout)
    except E.RemoteError as exc:
        r.error = {"code": exc.code, "message": exc.rpc_message}
        if exc.data is not None:
            r.error["data"] = exc.data
    except E.RequestTimeout:
        r.ms = (time.perf_counter() - sent) * 1000
        r.status, r.reason = "failed", f"no answer within {step.timeout or timeout:g} s"
        return None
    except E.SpyglassError as exc:
        r.ms = (time.perf_counter() - sent) * 1000
        r.status, r.reason = "failed", exc.message
        still = session.client is not None and getattr(session.client, "closed", None) is None
        return None if still else f"the server went away during {step.name!r} ({exc.message})"
    finally:
        answers.step = None
    r.ms = (time.perf_counter() - sent) * 1000
    r.misses = judge(step.method, step.expect, r.result, r.error, r.ms, listed)
    for name, pointer in step.save.items():
        try:
            saved[name] = _pointer_target(r, pointer)
        except KeyError:
            r.misses.append(Miss(f"save {name}", pointer, "nothing there"))
    if r.misses:
        r.status = "failed"
    return None


async def _ask(session: ServerSession, model: ChatModel | None, step: Step, r: StepResult,
               saved_tools: list[dict[str, Any]]) -> str | None:
    """An ask step: the model's first tool call for the request, judged. Returns why the rest cannot run."""
    from ..model.choice import judge_pick, pick
    from ..model.types import ModelError, tool_specs

    if model is None:
        r.status, r.reason = "failed", ("an ask step needs a model: spyglass test --model-url URL --model NAME "
                                        "(in the window: add one in Preferences → Models)")
        return None
    client = session.client
    if client is None or getattr(client, "closed", None) is not None:
        r.status, r.reason = "failed", "the server is not connected"
        return r.reason
    sent = time.perf_counter()
    if not saved_tools:
        try:
            listed = await client.list_tools(refresh=True)
        except E.SpyglassError as exc:
            r.status, r.reason = "failed", f"the server's tools could not be listed: {exc.message}"
            return None
        tools = listed.get("tools") if isinstance(listed, dict) else None
        saved_tools += [t for t in tools or [] if isinstance(t, dict)]
    try:
        got = await pick(model, step.target, tool_specs({"": saved_tools}))
    except ModelError as exc:
        if exc.kind in ("connect", "auth"):
            raise  # nothing else can be asked either: the run ends with the reason and its exit code
        r.ms = (time.perf_counter() - sent) * 1000
        r.status, r.reason = "failed", exc.message
        return None
    r.ms = got.ms
    r.result = {"tool": got.tool, "arguments": got.arguments, "text": got.text}
    if got.tool is not None and got.arguments is None:
        r.result["rawArguments"] = got.raw_arguments
    r.misses = [Miss(what, expected, actual) for what, expected, actual in judge_pick(step.expect, got)]
    if "maxMs" in step.expect and got.ms > float(step.expect["maxMs"]):
        r.misses.append(Miss("maxMs", step.expect["maxMs"], round(got.ms, 1)))
    if r.misses:
        r.status = "failed"
    return None


def _pointer_target(r: StepResult, pointer: str) -> Any:
    return pointer_get(r.result if r.error is None else {"error": r.error}, pointer)


def _params(step: Step, saved: dict[str, Any]) -> dict[str, Any] | None:
    arguments = substitute(step.arguments, saved) if step.arguments is not None else None
    if step.kind == "call":
        return {"name": substitute(step.target, saved), "arguments": arguments or {}}
    if step.kind == "read":
        return {"uri": substitute(step.target, saved)}
    if step.kind == "prompt":
        out: dict[str, Any] = {"name": substitute(step.target, saved)}
        if arguments:
            out["arguments"] = {k: v if isinstance(v, str) else json.dumps(v) for k, v in arguments.items()}
        return out
    return None


def _snapshot(r: StepResult, snapshots: dict[str, Any], update: bool) -> bool:
    """Compare with (or store) the step's snapshot; whether the snapshots changed."""
    answer = without_meta({"error": r.error} if r.error is not None else r.result)
    name = r.step.name
    if name not in snapshots or update:
        before = snapshots.get(name)
        snapshots[name] = answer
        r.snapshot = "written" if before is None else ("updated" if before != answer else "matched")
        return bool(before != answer)
    r.misses = snapshot_misses(snapshots[name], answer)
    r.snapshot = "matched" if not r.misses else "drifted"
    if r.misses:
        r.status = "failed"
    return False
