"""A recorded session as OpenTelemetry traces (no Qt): an OTLP/JSON file, or OTLP/HTTP to a collector.

One span per request (the OpenTelemetry MCP conventions; docs/export.md lists every attribute), timed by
the frames' wall clock; notifications are span events. Every `tools/call` is a trace of its own, with the
server requests, MRTR rounds and task requests it caused; the rest is under the session's span. A request
recorded with `_meta.traceparent` keeps that trace and span id, so a server that traces itself joins the
same trace; other ids are derived from the session and the record, so exporting twice gives the same ids.
Nothing a frame holds makes the export raise.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from google.protobuf import json_format  # type: ignore[import-untyped]  # protobuf ships no type hints
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from .. import __version__
from .. import errors as E
from ..private import open_private
from ..protocol import tracecontext
from ..protocol.tasks import RELATED_TASK_META
from ..protocol.versions import META_PROTOCOL_VERSION, MODERN_VERSION
from ..secrets import Tally, mask_text
from ..traffic.columns import BACKGROUND
from ..traffic.store import TrafficStore
from .har import ExportError, ServerInfo, as_dict, header, json_key, server_infos

log = logging.getLogger("spyglass.recording")

# OpenTelemetry semantic conventions (MCP, GenAI, JSON-RPC, RPC, network, server, error)
METHOD = "mcp.method.name"
PROTOCOL_VERSION = "mcp.protocol.version"
RESOURCE_URI = "mcp.resource.uri"
SESSION_ID = "mcp.session.id"
TOOL = "gen_ai.tool.name"
PROMPT = "gen_ai.prompt.name"
OPERATION = "gen_ai.operation.name"
REQUEST_ID = "jsonrpc.request.id"
STATUS_CODE = "rpc.response.status_code"
ERROR_TYPE = "error.type"
NET_TRANSPORT = "network.transport"
NET_PROTOCOL = "network.protocol.name"
NET_VERSION = "network.protocol.version"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
HTTP_STATUS = "http.response.status_code"
# Spyglass's own, where the conventions have nothing
SERVER_ID = "spyglass.server.id"
SERVER_NAME = "spyglass.server.name"
OUTCOME = "spyglass.outcome"
REQUEST_SIZE = "spyglass.request.size"
RESPONSE_SIZE = "spyglass.response.size"
RELATED_BY = "spyglass.related_by"
ROUND = "spyglass.mrtr.round"
TASK_ID = "spyglass.task.id"
EVENTS_DROPPED = "spyglass.events.dropped"

MAX_PARSE = 16 * 1024 * 1024  # a bigger frame is not parsed: its span says what the record alone knows
MAX_TEXT = 4096  # characters of free text (messages, URIs) kept in an attribute
MAX_EVENTS = 10_000  # per span: a progress flood must not make one span the size of the session
BATCH = 1000  # spans per OTLP request (and per resourceSpans entry of the file)
SCOPE = InstrumentationScope("inspector.recording.otlp", __version__)


class CollectorError(ExportError):
    """The collector could not be reached, or refused the spans; the message says which and why."""

    exit_code = E.EXIT_CONNECT
    kind = "collector"


# ---------------------------------------------------------------------------------------------- API

def export_otlp_json(store: TrafficStore, path: str | Path, *, servers: Iterable[str] | None = None,
                     known: Iterable[str] = ()) -> int:
    """Write the session's traces (all servers, or those of `servers`) to `path` in the OTLP/JSON
    encoding, as one ExportTraceServiceRequest (`{"resourceSpans": [...]}`) with trace and span ids in
    lowercase hex; returns the number of spans. Raises ExportError for a server the session does not have
    or a file that cannot be written."""
    spans = session_spans(store, servers, known)
    try:
        with open_private(path, "w", encoding="utf-8") as fh:
            fh.write('{"resourceSpans":[')
            first = True
            for batch in _batches(spans):
                doc = json_format.MessageToDict(encode_spans(batch), use_integers_for_enums=True)
                for resource_spans in doc.get("resourceSpans", []):
                    _hex_ids(resource_spans)
                    fh.write(("" if first else ",") + json.dumps(resource_spans, ensure_ascii=False,
                                                                 separators=(",", ":")))
                    first = False
            fh.write("]}\n")
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
    return len(spans)


def send_otlp(store: TrafficStore, url: str, *, headers: Mapping[str, str] | None = None,
              servers: Iterable[str] | None = None, timeout: float = 10.0) -> int:
    """Post the session's traces to an OpenTelemetry collector over OTLP/HTTP (protobuf) with the SDK's
    exporter; returns the number of spans. `url` is the traces endpoint (`http://host:4318/v1/traces`; a
    URL without a path gets `/v1/traces`). Raises CollectorError when the collector cannot be reached
    within `timeout` seconds or refuses the spans, ExportError for a URL that is not http(s)."""
    endpoint = traces_endpoint(url)
    spans = session_spans(store, servers)
    if not spans:
        return 0
    exporter = OTLPSpanExporter(endpoint=endpoint, headers=dict(headers or {}), timeout=timeout)
    try:
        with _sdk_log() as said:
            for batch in _batches(spans):
                if exporter.export(batch) is not SpanExportResult.SUCCESS:
                    raise CollectorError(f"the OpenTelemetry collector at {endpoint} did not take the spans: "
                                         f"{_reason(said)}", url=endpoint)
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]  # the SDK leaves it unannotated
    return len(spans)


def traces_endpoint(url: str) -> str:
    """The OTLP/HTTP traces URL for what the user typed; ExportError when it is not an http(s) URL."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise ExportError(f"not an http(s) URL of an OpenTelemetry collector: {url!r} "
                          "(e.g. http://localhost:4318/v1/traces)")
    if parts.path in ("", "/"):
        parts = parts._replace(path="/v1/traces")
    return urlunsplit(parts)


def session_spans(store: TrafficStore, servers: Iterable[str] | None = None,
                  known: Iterable[str] = ()) -> list[ReadableSpan]:
    """The session's spans (all servers, or those of `servers`), ended, as the SDK's exporters take them."""
    infos = server_infos(store, servers)
    salt = repr(store.started)
    walks = {sid: _Walk(store, info, salt) for sid, info in infos.items()}
    for n in range(len(store)):
        walk = walks.get(store.server_id(n))
        if walk is None:
            continue
        try:
            walk.step(n)
        except Exception:  # a frame nobody foresaw costs its own span at most, never the export
            log.debug("record %d could not be exported as a span", n, exc_info=True)
    # not Resource.create: its detectors come from entry points and the environment, neither of which
    # describes the recorded session (and a frozen app may not carry the entry points)
    plans = [plan for walk in walks.values() for plan in walk.finish()]
    masked = Tally()  # secrets in the texts the spans carry (a server's URL, a log line, an error message)
    masked.learn(known)
    for info in infos.values():
        masked.add_marks(info.definition.get("masked_marks"))  # and those masked when the server was kept
    for plan in plans:
        plan.mask(masked)
    resource = Resource({"service.name": "spyglass", "service.version": __version__, "spyglass.masked": True,
                         **{f"spyglass.masked_values.{kind}": n for kind, n in masked.counts().items()}})
    return [plan.readable(resource) for plan in plans]


def _batches(spans: Sequence[ReadableSpan]) -> Iterator[Sequence[ReadableSpan]]:
    for i in range(0, len(spans), BATCH):
        yield spans[i:i + BATCH]


def _hex_ids(resource_spans: dict[str, Any]) -> None:
    """OTLP/JSON writes ids as hex, where protobuf's JSON mapping writes bytes as base64."""
    for scope in resource_spans.get("scopeSpans", []):
        for span in scope.get("spans", []):
            for item in (span, *span.get("links", [])):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in item:
                        item[key] = base64.b64decode(item[key]).hex()


def _reason(said: list[str]) -> str:
    """Why the exporter failed, in words, from what it logged."""
    text = " | ".join(said)
    if m := re.search(r"code: (\d{3}), reason: ([^|]*)", text):
        return f"it answered HTTP {m.group(1)} {m.group(2).strip()}"
    if m := re.search(r"\[Errno -?\d+\] ([^'\")|]+)", text):
        return f"{m.group(1).strip().lower()} (is a collector listening there?)"
    if "timed out" in text.lower():
        return "it did not answer in time"
    return said[0] if said else "no answer"


@contextmanager
def _sdk_log() -> Iterator[list[str]]:
    """What the exporter logs while it sends (its only account of why a send failed), kept for the error
    the caller sees instead of going to the log as well."""
    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(" ".join(record.getMessage().split())[:300])

    logger = logging.getLogger("opentelemetry.exporter")
    handler = Keep(logging.DEBUG)
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False
    try:
        yield said
    finally:
        logger.propagate = propagate
        logger.removeHandler(handler)


# ---------------------------------------------------------------------------------------------- spans

def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"
    return text.encode("utf-8", "replace").decode("utf-8")


def _clean(value: Any) -> Any:
    """Protobuf strings are UTF-8: a lone surrogate (a JSON `\\ud800` escape) would make encoding fail."""
    return value.encode("utf-8", "replace").decode("utf-8") if isinstance(value, str) else value


def _ns(wall: float) -> int:
    return max(0, int(wall * 1e9))


@dataclass(eq=False)
class _Plan:
    """A span while the walk through the frames builds it."""

    trace: int
    span: int
    parent: int | None
    name: str
    kind: SpanKind
    start: float
    end: float
    attrs: dict[str, Any]
    method: str = ""
    tool: str | None = None
    root: _Plan | None = None  # the span that opened this trace (a call's first round)
    events: list[tuple[str, dict[str, Any], int]] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    status: Status = field(default_factory=Status)
    dropped: int = 0
    rounds: int = 1
    settled: bool = False
    background: bool = False  # the session's own (its heartbeat), not the user's

    def event(self, name: str, wall: float, attrs: dict[str, Any]) -> None:
        if len(self.events) >= MAX_EVENTS:
            self.dropped += 1
            return
        self.events.append((name, attrs, _ns(wall)))
        if self.kind is SpanKind.INTERNAL:  # a session lasts while things happen in it; a request, until answered
            self.end = max(self.end, wall)

    def fail(self, error_type: str, message: str) -> None:
        self.attrs[ERROR_TYPE] = error_type
        self.status = Status(StatusCode.ERROR, _text(message))

    def rpc_error(self, error: Any) -> None:
        """A JSON-RPC error answer: its code is the error type and the status code, its message the status."""
        err = as_dict(error)
        code = err.get("code")
        code_text = str(code) if isinstance(code, int) and not isinstance(code, bool) else "_OTHER"
        self.attrs[STATUS_CODE] = code_text
        self.fail(code_text, str(err.get("message") or f"JSON-RPC error {code_text}"))
        self.attrs[OUTCOME] = "error"

    def context(self) -> SpanContext:
        return SpanContext(self.trace, self.span, False, TraceFlags(TraceFlags.SAMPLED))

    def mask(self, tally: Tally) -> None:
        self.name = mask_text(self.name, tally)
        self.attrs = {k: mask_text(v, tally) if isinstance(v, str) else v for k, v in self.attrs.items()}
        self.events = [(n, {k: mask_text(v, tally) if isinstance(v, str) else v for k, v in a.items()}, at)
                       for n, a, at in self.events]
        if self.status.description:
            self.status = Status(self.status.status_code, mask_text(self.status.description, tally))

    def readable(self, resource: Resource) -> ReadableSpan:
        parent = (SpanContext(self.trace, self.parent, False, TraceFlags(TraceFlags.SAMPLED))
                  if self.parent is not None else None)
        attrs = {k: _clean(v) for k, v in self.attrs.items()}
        if self.dropped:
            attrs[EVENTS_DROPPED] = self.dropped
        events = [Event(_clean(name), {k: _clean(v) for k, v in values.items()}, at)
                  for name, values, at in self.events]
        return ReadableSpan(_clean(self.name), self.context(), parent, resource, attrs, events, self.links,
                            self.kind, status=self.status, start_time=_ns(self.start),
                            end_time=_ns(max(self.end, self.start)), instrumentation_scope=SCOPE)


class _Walk:
    """One server's frames, in order, turned into spans."""

    def __init__(self, store: TrafficStore, info: ServerInfo, salt: str) -> None:
        self.store = store
        self.info = info
        self.salt = f"{salt}|{info.server_id}"
        self.plans: list[_Plan] = []
        self.sessions: dict[int, _Plan] = {}  # trace id -> its session span
        self.current: _Plan | None = None  # the session span of the connection now
        self.calls: dict[int, _Plan] = {}  # trace id -> the call that opened it
        self.requests: dict[int, _Plan] = {}  # record of a request (ours or the server's) -> its span
        self.open: dict[Any, _Plan] = {}  # wire id -> our request in flight
        self.theirs: dict[Any, _Plan] = {}  # wire id -> the server's request not yet answered
        self.live: dict[int, _Plan] = {}  # our requests in flight that a server request could belong to
        self.tokens: dict[Any, _Plan] = {}  # progress token -> our request
        self.tasks: dict[str, _Plan] = {}  # task id -> the call that created it
        self.waiting: list[_Plan] = []  # MRTR: requests answered input_required, before their next round
        self.version: str | None = None
        self.session_id: str | None = None
        self.statuses: dict[str, Any] = {}  # HTTP stream -> the status of its exchange
        self.last = 0.0
        self.common: dict[str, Any] = {SERVER_ID: info.server_id, SERVER_NAME: info.name,
                                       NET_TRANSPORT: "pipe" if info.transport == "stdio" else "tcp"}
        if info.transport != "stdio":
            self.common.update({NET_PROTOCOL: "http", NET_VERSION: "1.1"})
        if (address := info.address()) is not None:
            self.common.update({SERVER_ADDRESS: address[0], SERVER_PORT: address[1]})

    # ---------------------------------------------------------------- helpers
    def ident(self, n: int, what: str, size: int) -> int:
        digest = hashlib.blake2b(f"{self.salt}|{n}|{what}".encode(), digest_size=size).digest()
        return int.from_bytes(digest, "big") or 1

    def plan(self, trace: int, span: int, parent: int | None, name: str, kind: SpanKind, wall: float,
             attrs: dict[str, Any]) -> _Plan:
        plan = _Plan(trace, span, parent, name, kind, wall, wall, {**self.common, **attrs})
        self.plans.append(plan)
        return plan

    def session(self, trace: int | None, wall: float) -> _Plan:
        """The session span of `trace` (from a recorded traceparent), else of the connection now."""
        if trace is not None and trace in self.sessions:
            self.current = self.sessions[trace]
            return self.current
        if trace is None and self.current is not None:
            return self.current
        n = len(self.sessions)
        trace = trace if trace is not None else self.ident(-1 - n, "session trace", 16)
        plan = self.plan(trace, self.ident(-1 - n, "session span", 8), None, f"MCP session {self.info.name}",
                         SpanKind.INTERNAL, wall, {})
        if self.info.command:
            plan.attrs["spyglass.server.command"] = _text(" ".join(self.info.command))
        if self.info.url:
            plan.attrs["spyglass.server.url"] = _text(self.info.url)
        self.sessions[trace] = self.current = plan
        return plan

    def message(self, n: int) -> dict[str, Any]:
        if self.store.size(n) > MAX_PARSE:
            return {}
        try:
            return as_dict(json.loads(self.store.raw(n)))
        except (ValueError, RecursionError):
            return {}

    def describe(self, method: str, params: dict[str, Any]) -> tuple[str, dict[str, Any], str | None]:
        attrs: dict[str, Any] = {METHOD: method}
        name = params.get("name")
        target = name if isinstance(name, str) and method in ("tools/call", "prompts/get") else None
        if target is not None:
            attrs[TOOL if method == "tools/call" else PROMPT] = _text(target)
        if method == "tools/call":
            attrs[OPERATION] = "execute_tool"
        uri = params.get("uri")
        if method.startswith("resources/") and isinstance(uri, str):
            attrs[RESOURCE_URI] = _text(uri)
        if self.session_id:
            attrs[SESSION_ID] = self.session_id
        title = f"{method} {_text(target)[:200]}" if target else method
        return title, attrs, target

    def belongs(self, params: dict[str, Any], frame_meta: Any) -> tuple[_Plan | None, str | None]:
        """Which of our requests a server request or log message belongs to, and how that is known."""
        meta = as_dict(params.get("_meta"))
        task = as_dict(meta.get(RELATED_TASK_META)).get("taskId")
        if isinstance(task, str) and task in self.tasks:
            return self.tasks[task], "task"
        token = json_key(meta.get("progressToken"))
        if token is not None and token in self.tokens and not self.tokens[token].settled:
            return self.tokens[token], "progress token"
        stream = json_key(as_dict(frame_meta).get("request"))
        if stream is not None and stream in self.open:
            return self.open[stream], "stream"
        if len(self.live) == 1:
            return next(iter(self.live.values())), "only request"
        return None, None

    def settle(self, plan: _Plan, wall: float) -> None:
        plan.end = max(plan.end, wall)
        plan.settled = True
        for table in (self.open, self.live):
            for key in [k for k, v in table.items() if v is plan]:
                del table[key]

    # ---------------------------------------------------------------- the walk
    def step(self, n: int) -> None:
        store = self.store
        wall = store.wall(n)
        self.last = max(self.last, wall)
        kind, direction = store.kind(n), store.direction(n)
        if kind == "http":
            self.exchange(n)
        elif kind == "malformed":
            self.malformed(n, wall, direction)
        elif kind == "request":
            (self.ours if direction == "out" else self.server_request)(n, wall, self.message(n))
        elif kind in ("response", "error"):
            (self.answer if direction == "in" else self.our_answer)(n, wall, self.message(n))
        elif kind == "notification":
            self.notification(n, wall, direction, self.message(n))

    def exchange(self, n: int) -> None:
        meta = as_dict(self.store.meta(n))
        sid = header(meta.get("response_headers"), "mcp-session-id") or header(meta.get("request_headers"),
                                                                             "mcp-session-id")
        if sid and "•" not in sid:  # a masked value names nothing
            self.session_id = _text(sid)
        if isinstance(meta.get("stream"), str):
            self.statuses[meta["stream"]] = meta.get("status")

    def ours(self, n: int, wall: float, msg: dict[str, Any]) -> None:
        store = self.store
        method = store.method(n) or "?"
        params = as_dict(msg.get("params"))
        meta = as_dict(params.get("_meta"))
        rid = store.request_id(n)
        title, attrs, tool = self.describe(method, params)
        if rid is not None:
            attrs[REQUEST_ID] = _text(str(rid))
        attrs[REQUEST_SIZE] = store.size(n)
        claimed = meta.get(META_PROTOCOL_VERSION)
        version = claimed if isinstance(claimed, str) else self.version
        if version:
            attrs[PROTOCOL_VERSION] = _text(version)
        given = tracecontext.parse(meta.get(tracecontext.META_KEY))
        tp_trace = int(given.trace_id, 16) if given else None
        previous = self.previous_round(method, tool, params, tp_trace)
        root: _Plan | None = None
        if previous is not None:
            root = previous.root or previous
        elif tp_trace is not None:
            root = self.calls.get(tp_trace)  # sent again (its stream broke), or a task's request of the call
        elif method.startswith("tasks/") and isinstance(params.get("taskId"), str):
            root = self.tasks.get(params["taskId"])
        if root is not None:
            trace, parent = root.trace, root.span
        elif method == "tools/call":
            trace, parent = tp_trace if tp_trace is not None else self.ident(n, "trace", 16), None
        else:
            session = self.session(tp_trace, wall)
            trace, parent = session.trace, session.span
        span = int(given.span_id, 16) if given and tp_trace == trace else self.ident(n, "span", 8)
        plan = self.plan(trace, span, parent, title, SpanKind.CLIENT, wall, attrs)
        plan.method, plan.tool, plan.root = method, tool, root
        plan.background = bool(as_dict(store.meta(n)).get(BACKGROUND))
        if previous is not None:
            plan.rounds = previous.rounds + 1
            plan.attrs[ROUND] = plan.rounds
            plan.links.append(Link(previous.context(), {"spyglass.link": "previous round"}))
        if method == "tools/call" and parent is None:
            self.calls[trace] = plan
        self.requests[n] = plan
        key = json_key(rid)
        if key is not None:
            self.open[key] = plan
            if not (plan.background or method == "subscriptions/listen"):
                self.live[n] = plan
        token = json_key(meta.get("progressToken"))
        if token is not None:
            self.tokens[token] = plan

    def previous_round(self, method: str, tool: str | None, params: dict[str, Any],
                       trace: int | None) -> _Plan | None:
        """MRTR: the request this one answers the input requests of (the same call again)."""
        if "inputResponses" not in params and "requestState" not in params:
            return None
        for i in range(len(self.waiting) - 1, -1, -1):
            plan = self.waiting[i]
            if plan.method == method and plan.tool == tool and (trace is None or plan.trace == trace):
                del self.waiting[i]
                return plan
        return None

    def server_request(self, n: int, wall: float, msg: dict[str, Any]) -> None:
        store = self.store
        method = store.method(n) or "?"
        params = as_dict(msg.get("params"))
        owner, how = self.belongs(params, store.meta(n))
        if owner is None:
            owner = self.session(None, wall)
        title, attrs, _tool = self.describe(method, params)
        rid = store.request_id(n)
        if rid is not None:
            attrs[REQUEST_ID] = _text(str(rid))
        attrs[REQUEST_SIZE] = store.size(n)
        if self.version:
            attrs[PROTOCOL_VERSION] = self.version
        if how:
            attrs[RELATED_BY] = how
        plan = self.plan(owner.trace, self.ident(n, "span", 8), owner.span, title, SpanKind.SERVER, wall, attrs)
        plan.method = method
        self.requests[n] = plan
        key = json_key(rid)
        if key is not None:
            self.theirs[key] = plan

    def answered(self, n: int, kind: SpanKind) -> _Plan | None:
        """The span of the request answer `n` answers (ours: CLIENT, the server's: SERVER)."""
        request = self.store.pair(n)
        plan = self.requests.get(request) if request is not None else None
        return plan if plan is not None and plan.kind is kind else None

    def answer(self, n: int, wall: float, msg: dict[str, Any]) -> None:
        """The server's answer to one of our requests."""
        store = self.store
        plan = self.answered(n, SpanKind.CLIENT)
        if plan is None:
            return
        if plan.settled:  # after we cancelled it
            plan.event("late answer", wall, {RESPONSE_SIZE: store.size(n)})
            return
        self.settle(plan, wall)
        plan.attrs[RESPONSE_SIZE] = store.size(n)
        frame = as_dict(store.meta(n))
        status = frame.get("status", self.statuses.get(str(frame.get("stream"))))  # an SSE event: its POST's
        if isinstance(status, int) and not isinstance(status, bool):
            plan.attrs[HTTP_STATUS] = status
        if self.session_id and SESSION_ID not in plan.attrs:
            plan.attrs[SESSION_ID] = self.session_id
        if store.kind(n) == "error":
            plan.rpc_error(msg.get("error"))
            return
        result = msg.get("result")
        self.handshake(plan, result)
        outcome = "ok"
        if isinstance(result, dict):
            task = as_dict(result.get("task")).get("taskId")
            if result.get("resultType") == "input_required":
                outcome = "input required"
                for key, asked in as_dict(result.get("inputRequests")).items():
                    plan.event("input request", wall, {METHOD: _text(str(as_dict(asked).get("method") or "?")),
                                                       "spyglass.input.key": _text(str(key))})
                self.waiting.append(plan)
                del self.waiting[:-1000]
            elif result.get("isError") is True:
                outcome = "tool error"
                plan.fail("tool_error", _first_text(result) or "the tool reported an error")
            elif isinstance(task, str) and task:
                outcome = "task created"
                plan.attrs[TASK_ID] = _text(task)
                self.tasks[task] = plan.root or plan
        plan.attrs[OUTCOME] = outcome

    def handshake(self, plan: _Plan, result: Any) -> None:
        """The protocol revision, from the handshake: initialize's protocolVersion, or server/discover."""
        if not isinstance(result, dict):
            return
        if plan.method == "initialize" and isinstance(result.get("protocolVersion"), str):
            self.version = _text(result["protocolVersion"])
        elif plan.method == "server/discover" and not plan.background:
            supported = result.get("supportedVersions")
            if not isinstance(supported, list) or MODERN_VERSION in supported:
                self.version = plan.attrs.get(PROTOCOL_VERSION) or MODERN_VERSION
        else:
            return
        if self.version:
            plan.attrs[PROTOCOL_VERSION] = self.version
            for session in self.sessions.values():
                session.attrs[PROTOCOL_VERSION] = self.version

    def our_answer(self, n: int, wall: float, msg: dict[str, Any]) -> None:
        """Our answer to one of the server's requests."""
        store = self.store
        plan = self.answered(n, SpanKind.SERVER)
        if plan is None:
            return
        plan.end = max(plan.end, wall)
        plan.settled = True
        plan.attrs[RESPONSE_SIZE] = store.size(n)
        for key in [k for k, v in self.theirs.items() if v is plan]:
            del self.theirs[key]
        if store.kind(n) == "error":
            plan.rpc_error(msg.get("error"))
            return
        result = as_dict(msg.get("result"))
        given = tracecontext.from_meta(result)
        if given is not None and int(given.trace_id, 16) == plan.trace:
            plan.span = int(given.span_id, 16)  # the span id our answer told the server
        action = result.get("action")
        plan.attrs[OUTCOME] = _text(action) if plan.method == "elicitation/create" and isinstance(action, str) \
            else "ok"

    def notification(self, n: int, wall: float, direction: str, msg: dict[str, Any]) -> None:
        store = self.store
        method = store.method(n) or "?"
        params = as_dict(msg.get("params"))
        attrs: dict[str, Any] = {METHOD: method}
        target: _Plan | None = None
        if direction == "in" and method == "notifications/progress":
            token = json_key(params.get("progressToken"))
            target = self.tokens.get(token) if token is not None else None
            _copy(attrs, params, "spyglass.progress.", ("progress", "total", "message"))
        elif direction == "in" and method == "notifications/message":
            target, how = self.belongs(params, store.meta(n))
            if how:
                attrs[RELATED_BY] = how
            _copy(attrs, params, "spyglass.log.", ("level", "logger"))
            if "data" in params:
                attrs["spyglass.log.data"] = _text(params["data"])
        elif method == "notifications/cancelled":
            rid = json_key(params.get("requestId"))
            reason = params.get("reason")
            if isinstance(reason, str):
                attrs["spyglass.cancel.reason"] = _text(reason)
            target = (self.open if direction == "out" else self.theirs).get(rid) if rid is not None else None
            if target is not None and direction == "out":
                timed_out = isinstance(reason, str) and reason.startswith("timed out")
                target.fail("timeout" if timed_out else "cancelled", reason if isinstance(reason, str)
                            else "cancelled")
                target.attrs[OUTCOME] = "timeout" if timed_out else "cancelled"
                self.settle(target, wall)
        elif method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            attrs[RESOURCE_URI] = _text(params["uri"])
        if target is None:
            target = self.session(None, wall)
        target.event(method, wall, attrs)

    def malformed(self, n: int, wall: float, direction: str) -> None:
        store = self.store
        reason = store.malformed(n) or "malformed"
        msg = self.message(n) if direction == "in" else {}
        rid = json_key(msg.get("id"))
        plan = self.open.get(rid) if rid is not None and ("result" in msg or "error" in msg) else None
        if plan is not None:
            self.settle(plan, wall)
            plan.attrs[RESPONSE_SIZE] = store.size(n)
            plan.attrs[OUTCOME] = "malformed answer"
            plan.fail("malformed_response", f"the answer is malformed: {reason}")
            return
        self.session(None, wall).event("malformed frame", wall, {"spyglass.malformed.reason": _text(reason),
                                                                 "spyglass.direction": direction,
                                                                 "spyglass.size": store.size(n)})

    def finish(self) -> list[_Plan]:
        """Every span, ended: what never got an answer ends with the server's last frame."""
        for plan in self.plans:
            if plan.kind is not SpanKind.INTERNAL and not plan.settled:
                plan.end = max(plan.end, self.last)
                plan.attrs.setdefault(OUTCOME, "unanswered")
            session = self.sessions.get(plan.trace)
            if session is not None and plan.parent is not None and plan.parent == session.span:
                session.end, session.start = max(session.end, plan.end), min(session.start, plan.start)
        for session in self.sessions.values():
            if self.session_id and SESSION_ID not in session.attrs:
                session.attrs[SESSION_ID] = self.session_id
        return self.plans


def _copy(attrs: dict[str, Any], params: dict[str, Any], prefix: str, keys: tuple[str, ...]) -> None:
    for key in keys:
        value = params.get(key)
        if isinstance(value, str):
            attrs[prefix + key] = _text(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            attrs[prefix + key] = value


def _first_text(result: dict[str, Any]) -> str | None:
    content = result.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                return str(block["text"])
    return None
