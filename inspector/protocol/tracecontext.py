"""W3C Trace Context in MCP's `_meta` (standard library only, no IO).

With the per-server setting on, every request the client sends carries `params._meta.traceparent`
(`00-<trace id>-<span id>-01`, the unprefixed key the OpenTelemetry MCP conventions and SEP-414 name), so
a server that traces itself makes its spans children of ours. The trace is chosen the way the OTLP export
groups spans: each `tools/call` starts a trace of its own, and the rounds of that call (MRTR retries, a
request re-sent after its stream broke) and our answers to the server requests it caused stay in it; every
other request belongs to the connection's one session trace.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

META_KEY = "traceparent"
VERSION = "00"
SAMPLED = "01"
_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$")
_REMEMBERED = 1024  # server requests whose answer is still to be sent, at most


@dataclass(frozen=True)
class TraceParent:
    trace_id: str  # 32 lowercase hex digits, not all zero
    span_id: str  # 16 lowercase hex digits, not all zero
    flags: str = SAMPLED

    def header(self) -> str:
        return f"{VERSION}-{self.trace_id}-{self.span_id}-{self.flags}"


def _random_hex(size: int) -> str:
    while True:
        value = os.urandom(size)
        if any(value):  # all zeros is the spec's "invalid" id
            return value.hex()


def new_trace_id() -> str:
    return _random_hex(16)


def new_span_id() -> str:
    return _random_hex(8)


def parse(value: Any) -> TraceParent | None:
    """A `traceparent` value as the W3C rules read it, or None for anything else (never raises).
    Versions after 00 are read for their first four fields, as the spec asks; version ff is invalid."""
    if not isinstance(value, str) or len(value) > 512:
        return None
    m = _TRACEPARENT.match(value.strip())
    if m is None:
        return None
    version, trace_id, span_id, flags = m.groups()
    if version == "ff" or (version == VERSION and len(value.strip()) != 55):
        return None
    if set(trace_id) == {"0"} or set(span_id) == {"0"}:
        return None
    return TraceParent(trace_id, span_id, flags)


def from_meta(params: Any) -> TraceParent | None:
    """The traceparent of a message's `params._meta` (or a result's `_meta`), if valid."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return parse(meta.get(META_KEY)) if isinstance(meta, dict) else None


class TraceBook:
    """Which trace each of our requests and answers belongs to (one per client session)."""

    def __init__(self) -> None:
        self.session_trace = new_trace_id()
        self._requests: dict[Any, str] = {}  # logical request id -> its trace
        self._answers: OrderedDict[Any, str] = OrderedDict()  # server request id -> the trace of its answer
        self._tasks: OrderedDict[str, str] = OrderedDict()  # task id -> the trace of the call that made it

    def stamp(self, meta: dict[str, Any], logical: Any, method: str, first: bool,
              params: dict[str, Any] | None = None) -> None:
        """Put a traceparent in the `_meta` of a request about to be sent: a new span, in the trace of
        its logical request (`first`: the request is new, not another round of one already sent). A
        `tasks/*` request about a call's task is in that call's trace."""
        trace = self._requests.get(logical)
        if trace is None:
            given = parse(meta.get(META_KEY)) if first else None
            if given is not None:  # the caller chose the trace: keep it, and its rounds join it
                self._requests[logical] = given.trace_id
                return
            task = params.get("taskId") if params and method.startswith("tasks/") else None
            if isinstance(task, str) and task in self._tasks:
                trace = self._tasks[task]
            else:
                trace = new_trace_id() if method == "tools/call" else self.session_trace
            self._requests[logical] = trace
        meta[META_KEY] = TraceParent(trace, new_span_id()).header()

    def answered(self, logical: Any, result: Any) -> None:
        """Our request was answered: a task it created (2025-11-25) keeps the request's trace."""
        task = result.get("task") if isinstance(result, dict) else None
        task_id = task.get("taskId") if isinstance(task, dict) else None
        trace = self._requests.get(logical)
        if isinstance(task_id, str) and trace is not None:
            self._tasks[task_id] = trace
            while len(self._tasks) > _REMEMBERED:
                self._tasks.popitem(last=False)

    def trace_of(self, logical: Any) -> str | None:
        return self._requests.get(logical)

    def drop(self, logical: Any) -> None:
        self._requests.pop(logical, None)

    def server_request(self, request_id: Any, related: Any) -> None:
        """A server request arrived; `related` is the logical id of our request it belongs to, or None."""
        trace = self._requests.get(related, self.session_trace) if related is not None else self.session_trace
        try:
            self._answers[request_id] = trace
        except TypeError:  # an id no JSON-RPC peer may send (unhashable): no trace for its answer
            return
        while len(self._answers) > _REMEMBERED:
            self._answers.popitem(last=False)

    def answer(self, request_id: Any, result: Any) -> Any:
        """`result` of our answer to a server request, with a traceparent in its `_meta` (a copy)."""
        try:
            trace = self._answers.pop(request_id, None)
        except TypeError:
            return result
        if trace is None or not isinstance(result, dict):
            return result
        meta = result.get("_meta")
        if meta is not None and not isinstance(meta, dict):
            return result
        return {**result, "_meta": {**(meta or {}), META_KEY: TraceParent(trace, new_span_id()).header()}}

    def forget_answer(self, request_id: Any) -> None:
        try:
            self._answers.pop(request_id, None)
        except TypeError:
            pass
