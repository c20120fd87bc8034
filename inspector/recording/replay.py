"""Replaying a recorded session against a server (a new build, say): the client's requests of the
recording are sent again in order, each answer is compared with the recorded one (`compare.py`), and
the server's questions are answered as they were answered in the recording (declined when it has none).

What is sent: every request the client made, except the handshake (the new server gets the handshake
of its own era), the session's background traffic (its heartbeat), the re-sends of a multi-round call
(the client answers the new server's rounds itself, from the recording) and requests that only make
sense in the run that made them (`tasks/*` name task ids of that run; `subscriptions/listen` is a stream
that never answers). Ids are the new session's own. The `_meta` the client adds per era is its own too.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import errors as E
from .compare import Change, change_line, diff_values
from .surface import HANDSHAKE, Exchange, ServerSurface

if TYPE_CHECKING:
    from ..session import CallRecord, ServerSession

SKIPPED_METHODS = {"subscriptions/listen": "a stream that stays open, not a request with one answer"}
SKIPPED_PREFIXES = {"tasks/": "names a task id of the recorded run"}
PROTOCOL_META = "io.modelcontextprotocol/"
FRAMING = ("resultType",)  # how a 2026-07-28 result is framed ("complete"), not what the server answered
ERA_ONLY = ("cacheScope", "ttlMs")  # cache hints only 2026-07-28 results have


@dataclass
class Step:
    """One recorded request and what the new server answered."""

    index: int
    recorded: Exchange
    status: str = "same"  # same | different | failed | skipped
    result: Any = None
    error: dict[str, Any] | None = None
    changes: list[Change] = field(default_factory=list)
    note: str | None = None  # why it failed or was skipped
    latency: float | None = None

    @property
    def label(self) -> str:
        return self.recorded.label

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "method": self.recorded.method, "target": self.recorded.target,
                               "status": self.status, "record": self.recorded.n,
                               "changes": [c.as_json() for c in self.changes]}
        if self.note:
            out["note"] = self.note
        if self.status != "skipped":
            out["recorded"] = _answer(self.recorded.final.result, self.recorded.final.error)
            out["replayed"] = _answer(self.result, self.error)
        return out


def _answer(result: Any, error: dict[str, Any] | None) -> dict[str, Any]:
    return {"error": error} if error is not None else {"result": result}


@dataclass
class ReplayReport:
    recorded: str  # the recorded server's name
    target: str  # what it was replayed against
    recorded_revision: str | None
    revision: str | None = None
    steps: list[Step] = field(default_factory=list)
    ignore: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def differs(self) -> bool:
        return any(s.status in ("different", "failed") for s in self.steps)

    def counts(self) -> dict[str, int]:
        counts = {"same": 0, "different": 0, "failed": 0, "skipped": 0}
        for s in self.steps:
            counts[s.status] += 1
        return counts

    def as_json(self) -> dict[str, Any]:
        return {"recorded": self.recorded, "target": self.target, "recordedRevision": self.recorded_revision,
                "revision": self.revision, "ignore": list(self.ignore), "same": not self.differs,
                "counts": self.counts(), "seconds": round(self.seconds, 3), "steps": [s.as_json() for s in self.steps]}

    def text(self) -> str:
        lines = [f"Replaying {self.recorded} ({self.recorded_revision or 'unknown revision'}) against "
                 f"{self.target} ({self.revision or 'unknown revision'})", ""]
        marks = {"same": "✓", "different": "✗", "failed": "!", "skipped": "·"}
        for s in self.steps:
            line = f"{marks[s.status]} {s.index:>3}  {s.label}"
            if s.note:
                line += f"  ({s.note})"
            lines.append(line)
            lines += [f"        {change_line(c.as_json())}" for c in s.changes]
        c = self.counts()
        lines += ["", f"{len(self.steps)} requests: {c['same']} same, {c['different']} different, "
                      f"{c['failed']} failed, {c['skipped']} skipped ({self.seconds:.2f} s)."]
        return "\n".join(lines) + "\n"


def skip_reason(x: Exchange) -> str | None:
    if x.method in SKIPPED_METHODS:
        return SKIPPED_METHODS[x.method]
    for prefix, why in SKIPPED_PREFIXES.items():
        if x.method.startswith(prefix):
            return why
    return None


def requests_of(surface: ServerSurface) -> list[Exchange]:
    """The recorded requests a replay sends (or reports as skipped), in order."""
    out = []
    for x in surface.exchanges:
        if x.direction != "out" or x.background or x.method in HANDSHAKE:
            continue
        if x.first is not None or (isinstance(x.params, dict) and ("inputResponses" in x.params
                                                                   or "requestState" in x.params)):
            continue  # a later round of a multi-round call: the client plays the rounds itself
        out.append(x)
    return out


def clean_params(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """A recorded request's params without what the client adds per session (era `_meta`, progress token)."""
    if params is None:
        return None
    out = dict(params)
    meta = out.get("_meta")
    if isinstance(meta, dict):
        rest = {k: v for k, v in meta.items() if not k.startswith(PROTOCOL_META) and k not in ("progressToken",
                                                                                                 "traceparent")}
        if rest:
            out["_meta"] = rest
        else:
            del out["_meta"]
    return out


class RecordedAnswers:
    """An `Answerer` that says what the user said in the recording, question by question."""

    def __init__(self, surface: ServerSurface) -> None:
        self.answers: dict[str, deque[Any]] = defaultdict(deque)  # method -> results (None: refused)
        last_rounds: dict[str, str] = {}  # MRTR: input request key -> its method, from the last round asked
        for x in surface.exchanges:
            if x.direction == "in" and x.answer is not None:
                self.answers[x.method].append(x.result if x.error is None else None)
            elif x.direction == "out" and isinstance(x.result, dict):
                requests = x.result.get("inputRequests")
                if isinstance(requests, dict):
                    for key, request in requests.items():
                        if isinstance(request, dict) and isinstance(request.get("method"), str):
                            last_rounds[key] = request["method"]
            if x.direction == "out" and isinstance(x.params, dict) and isinstance(x.params.get("inputResponses"),
                                                                                   dict):
                for key, response in x.params["inputResponses"].items():
                    if key in last_rounds:
                        self.answers[last_rounds[key]].append(response)
        roots = [r for r in self.answers.get("roots/list", ()) if isinstance(r, dict)]
        listed = roots[0].get("roots") if roots else None
        self.roots: list[dict[str, Any]] | None = [r for r in listed if isinstance(r, dict)] if isinstance(
            listed, list) else None
        self.declined: list[str] = []

    def _next(self, method: str) -> Any:
        queue = self.answers.get(method)
        if queue:
            return queue.popleft()
        self.declined.append(method)
        return None

    async def elicit(self, session: ServerSession, params: dict[str, Any], call: CallRecord | None,
                     ) -> dict[str, Any]:
        answer = self._next("elicitation/create")
        return answer if isinstance(answer, dict) else {"action": "decline"}

    async def sample(self, session: ServerSession, params: dict[str, Any], call: CallRecord | None,
                     ) -> dict[str, Any] | None:
        answer = self._next("sampling/createMessage")
        return answer if isinstance(answer, dict) else None

    async def share_roots(self, session: ServerSession, roots: list[dict[str, Any]],
                          call: CallRecord | None) -> bool:
        return self._next("roots/list") is not None


async def replay(surface: ServerSurface, session: ServerSession, *, ignore: Iterable[str] = (),
                 timeout: float | None = 60.0, target: str | None = None) -> ReplayReport:
    """Send the recording's requests to `session` (open already), compare each answer with the recording."""
    ignore = tuple(ignore)
    client = session.need_client()
    report = ReplayReport(surface.name, target or session.name, surface.revision, session.protocol_version,
                          ignore=ignore)
    cross_era = surface.era is not None and session.era is not None and surface.era != session.era
    begun = time.monotonic()
    for index, x in enumerate(requests_of(surface), 1):
        step = Step(index, x)
        report.steps.append(step)
        why = skip_reason(x)
        if why is not None:
            step.status, step.note = "skipped", why
            continue
        sent = time.monotonic()
        try:
            step.result = await client.request(x.method, clean_params(x.params), timeout=timeout)
        except E.RemoteError as exc:
            step.error = {"code": exc.code, "message": exc.rpc_message}
            if exc.data is not None:
                step.error["data"] = exc.data
        except (TimeoutError, E.RequestTimeout):
            step.status, step.note = "failed", f"no answer within {timeout:g} s" if timeout else "no answer"
            continue
        except E.SpyglassError as exc:
            step.status, step.note = "failed", exc.message
            if session.client is None or getattr(session.client, "closed", None) is not None:
                break  # the server is gone: the rest cannot be replayed
            continue
        step.latency = time.monotonic() - sent
        step.changes = compare_answers(x, step.result, step.error, ignore, cross_era)
        step.status = "different" if step.changes else "same"
    report.seconds = time.monotonic() - begun
    return report


def compare_answers(first: Exchange, result: Any, error: dict[str, Any] | None, ignore: tuple[str, ...],
                    cross_era: bool = False) -> list[Change]:
    """The recorded answer against the new one. `ignore` holds pointers into `result`; an error is
    compared by code, message and data. `cross_era`: recorded in one era, replayed in the other, so the
    fields only one era's results have are not compared. A multi-round request is compared by its last
    round's answer."""
    x = first.final
    result_cursor = result.get("nextCursor") if isinstance(result, dict) else None
    if x.error is not None or error is not None:
        if x.error is not None and error is not None:
            recorded_error = {k: x.error.get(k) for k in ("code", "message", "data") if k in x.error}
            return diff_values(recorded_error, error, path="/error")
        return [Change("", _answer(x.result, x.error), _answer(result, error))]
    if x.answer is None:
        return [Change("", "(no answer in the recording)", _answer(result, error))]
    recorded = x.result
    if isinstance(recorded, dict) and isinstance(result, dict):
        drop = set(FRAMING) | (set(ERA_ONLY) if cross_era else set())
        recorded = {k: v for k, v in recorded.items() if k not in drop}
        result = {k: v for k, v in result.items() if k not in drop}
        if isinstance(x.result, dict) and isinstance(x.result.get("nextCursor"), str) and isinstance(
                result_cursor, str):
            recorded["nextCursor"] = result["nextCursor"] = "(a cursor)"  # opaque: only whether there is one
    return diff_values(recorded, result, ignore)
