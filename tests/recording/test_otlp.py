"""OpenTelemetry export of recorded sessions against real peers (the demo server, server-everything, the SDK
peer over Streamable HTTP): the OTLP/JSON file read back with the OTLP protobuf tooling, OTLP/HTTP received
by a loopback collector, the W3C trace context setting end to end, and damaged frames that must not break
anything."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import http_peers
import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from support import PY, SLOWDOWN, everything_cmd, hostile_cmd

from inspector import errors as E
from inspector.client import Client
from inspector.config import ServerSpec
from inspector.protocol import tracecontext
from inspector.recording.har import ExportError
from inspector.recording.otlp import CollectorError, export_otlp_json, send_otlp, session_spans, traces_endpoint
from inspector.session import ServerSession, SessionOptions
from inspector.traffic import Frame, TrafficStore
from inspector.transport.stdio import StdioTransport

HEX32 = re.compile(r"^[0-9a-f]{32}$")
HEX16 = re.compile(r"^[0-9a-f]{16}$")
CLIENT, SERVER, INTERNAL = 3, 2, 1  # Span.SpanKind numbers
ERROR = 2  # Status.StatusCode.STATUS_CODE_ERROR


class Answers:
    """The user of these sessions: accepts every elicitation, answers sampling, shares roots."""

    async def elicit(self, session: Any, params: dict[str, Any], call: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada", "colour": "blue"}}

    async def sample(self, session: Any, params: dict[str, Any], call: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "a recorded reply"}, "model": "test",
                "stopReason": "endTurn"}

    async def share_roots(self, session: Any, roots: list[dict[str, Any]], call: Any) -> bool:
        return True


def record(path: Path, spec: ServerSpec, mode: str, script: Any, roots: list | None = None) -> TrafficStore:
    """A session recorded the way the window records one (into a session file), then reopened from it."""
    store = TrafficStore(path)
    kind = "stdio" if spec.url is None else "http"
    store.set_meta(f"server:{spec.name}", json.dumps({"name": spec.name, "transport": kind,
                                                       "command": spec.command, "url": spec.url}))

    async def run() -> None:
        session = ServerSession(spec, spec.name, SessionOptions(mode=mode, timeout=30 * SLOWDOWN, load_lists=False,
                                                                listen=False, heartbeat_s=None),
                                answerer=Answers(), traffic=store.hook(spec.name))
        session.roots = roots
        try:
            await session.open()
            await script(session.need_client())
        finally:
            await session.close()

    try:
        asyncio.run(run())
    finally:
        store.close()
    return TrafficStore.open_session(path)


def load(path: Path) -> ExportTraceServiceRequest:
    """The file as a collector reads it: OTLP/JSON, whose ids are hex where protobuf's JSON has base64."""
    doc = json.loads(path.read_text())
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        assert (HEX32 if key == "traceId" else HEX16).match(span[key]), span[key]
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        link[key] = base64.b64encode(bytes.fromhex(link[key])).decode()
    return json_format.ParseDict(doc, ExportTraceServiceRequest())


def spans_of(request: ExportTraceServiceRequest) -> list:
    return [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]


def attrs(span) -> dict[str, Any]:
    out = {}
    for kv in span.attributes:
        value = kv.value
        out[kv.key] = getattr(value, value.WhichOneof("value"))
    return out


def named(spans, name: str) -> list:
    return [s for s in spans if s.name == name]


def one(spans, name: str):
    found = named(spans, name)
    assert len(found) == 1, (name, [s.name for s in spans])
    return found[0]


def frames(store: TrafficStore, direction: str, kind: str, method: str | None = None) -> list[dict]:
    out = []
    for n in range(len(store)):
        if store.direction(n) == direction and store.kind(n) == kind and (method is None or store.method(n) == method):
            out.append({"n": n, **json.loads(store.raw(n))})
    return out


def ns(store: TrafficStore, n: int) -> int:
    return int(store.wall(n) * 1e9)


# ---------------------------------------------------------------------------------------------- sessions

async def demo_script(client: Client) -> None:
    if client.era.value == "legacy":
        await client.set_log_level("debug")
    await client.list_tools()
    await client.call_tool("echo", {"message": "hello"})
    await client.call_tool("divide", {"a": 1, "b": 0})  # a tool error
    with pytest.raises(E.RemoteError):
        await client.call_tool("nope", {})  # a JSON-RPC error
    await client.call_tool("log_demo", {})
    await client.call_tool("long_task", {"steps": 3, "step_ms": 10}, on_progress=lambda *a: None)
    await client.call_tool("ask_user", {})  # elicitation: a server request (legacy) or an MRTR round (modern)


def demo_spec(trace_context: bool = False) -> ServerSpec:
    return ServerSpec(name="demo", command=[PY, "-m", "inspector.demo"], trace_context=trace_context)


@pytest.fixture(scope="module")
def demo_legacy(tmp_path_factory) -> TrafficStore:
    return record(tmp_path_factory.mktemp("otlp") / "demo.sqlite", demo_spec(), "legacy", demo_script)


@pytest.fixture(scope="module")
def demo_modern_traced(tmp_path_factory) -> TrafficStore:
    return record(tmp_path_factory.mktemp("otlp") / "modern.sqlite", demo_spec(True), "modern", demo_script)


# ---------------------------------------------------------------------------------------------- the file

def test_a_legacy_session_as_otlp_json(demo_legacy, tmp_path):
    store = demo_legacy
    path = tmp_path / "traces.json"
    count = export_otlp_json(store, path)
    spans = spans_of(load(path))
    assert count == len(spans) == len(session_spans(store))
    resource = {kv.key: kv.value.string_value for kv in load(path).resource_spans[0].resource.attributes}
    assert resource["service.name"] == "spyglass"
    session = one(spans, "MCP session demo")
    assert session.kind == INTERNAL and not session.parent_span_id
    assert [e.name for e in session.events] == ["notifications/initialized"]
    # everything but a call is in the session's trace, under the session span
    for name in ("initialize", "logging/setLevel", "tools/list"):
        span = one(spans, name)
        assert span.trace_id == session.trace_id and span.parent_span_id == session.span_id and span.kind == CLIENT
        assert attrs(span)["mcp.protocol.version"] == "2025-11-25"  # from the initialize result
    calls = [s for s in spans if s.name.startswith("tools/call ")]
    assert {s.name for s in calls} == {"tools/call echo", "tools/call divide", "tools/call nope",
                                       "tools/call log_demo", "tools/call long_task", "tools/call ask_user"}
    assert len({s.trace_id for s in calls} | {session.trace_id}) == len(calls) + 1  # a trace per call
    assert all(not s.parent_span_id for s in calls)
    # each span is timed by its frames and carries the conventions' attributes
    for request in frames(store, "out", "request", "tools/call"):
        span = next(s for s in calls if attrs(s)["jsonrpc.request.id"] == str(request["id"]))
        answer = store.pair(request["n"])
        a = attrs(span)
        assert span.start_time_unix_nano == ns(store, request["n"]) and span.end_time_unix_nano == ns(store, answer)
        assert a["mcp.method.name"] == "tools/call" and a["gen_ai.tool.name"] == request["params"]["name"]
        assert a["gen_ai.operation.name"] == "execute_tool" and a["network.transport"] == "pipe"
        assert a["spyglass.request.size"] == store.size(request["n"])
        assert a["spyglass.response.size"] == store.size(answer)
        assert a["spyglass.server.id"] == "demo" and a["mcp.protocol.version"] == "2025-11-25"
    ok = attrs(one(spans, "tools/call echo"))
    assert ok["spyglass.outcome"] == "ok" and "error.type" not in ok
    tool_error = one(spans, "tools/call divide")
    assert tool_error.status.code == ERROR and "divide 1 by zero" in tool_error.status.message
    assert attrs(tool_error)["error.type"] == "tool_error" and attrs(tool_error)["spyglass.outcome"] == "tool error"
    rpc_error = one(spans, "tools/call nope")
    assert rpc_error.status.code == ERROR and rpc_error.status.message == "Unknown tool: nope"
    assert attrs(rpc_error)["error.type"] == attrs(rpc_error)["rpc.response.status_code"] == "-32602"
    # notifications: progress and log messages on their call's span
    long_task = one(spans, "tools/call long_task")
    progress = [e for e in long_task.events if e.name == "notifications/progress"]
    assert [attrs(e)["spyglass.progress.progress"] for e in progress] == [1, 2, 3]
    assert attrs(progress[0])["spyglass.progress.message"] == "Step 1 of 3"
    logs = [e for e in one(spans, "tools/call log_demo").events if e.name == "notifications/message"]
    assert len(logs) == 8 and attrs(logs[0])["spyglass.log.level"] == "debug"
    assert attrs(logs[0])["spyglass.related_by"] == "only request"  # stdio: the only request in flight
    # the elicitation the call caused is in its trace, a SERVER span under it
    ask = one(spans, "tools/call ask_user")
    elicit = one(spans, "elicitation/create")
    assert elicit.kind == SERVER and elicit.trace_id == ask.trace_id and elicit.parent_span_id == ask.span_id
    assert attrs(elicit)["spyglass.outcome"] == "accept" and attrs(elicit)["spyglass.related_by"] == "only request"
    assert ask.start_time_unix_nano < elicit.start_time_unix_nano <= elicit.end_time_unix_nano < ask.end_time_unix_nano
    # exporting again gives the same ids (they are derived from the session, not random)
    again = tmp_path / "again.json"
    export_otlp_json(store, again)
    assert json.loads(again.read_text()) == json.loads(path.read_text())


def test_trace_context_on_the_wire_and_in_the_export(demo_modern_traced, tmp_path):
    """The setting puts a W3C traceparent in every request we sent; the export uses exactly those ids, so
    the spans of a server that traces itself (children of these ids) land in the same traces."""
    store = demo_modern_traced
    path = tmp_path / "modern.json"
    export_otlp_json(store, path)
    spans = spans_of(load(path))
    by_id = {s.span_id.hex(): s for s in spans}
    requests = frames(store, "out", "request")
    assert requests
    for request in requests:
        value = request["params"]["_meta"]["traceparent"]
        parent = tracecontext.parse(value)
        assert parent is not None and value.startswith("00-") and value.endswith("-01"), value
        span = by_id[parent.span_id]
        assert span.trace_id.hex() == parent.trace_id and attrs(span)["jsonrpc.request.id"] == str(request["id"])
        assert attrs(span)["mcp.protocol.version"] == "2026-07-28"  # the modern era's handshake (server/discover)
    session = one(spans, "MCP session demo")
    assert one(spans, "server/discover").trace_id == one(spans, "tools/list").trace_id == session.trace_id
    # MRTR: ask_user was sent twice, the second round with inputResponses, in the first round's trace
    first, second = sorted(named(spans, "tools/call ask_user"), key=lambda s: s.start_time_unix_nano)
    assert attrs(first)["spyglass.outcome"] == "input required"
    assert [attrs(e)["mcp.method.name"] for e in first.events if e.name == "input request"] == ["elicitation/create"]
    assert second.trace_id == first.trace_id and second.parent_span_id == first.span_id
    assert attrs(second)["spyglass.mrtr.round"] == 2 and second.links[0].span_id == first.span_id
    rounds = frames(store, "out", "request", "tools/call")[-2:]
    assert "inputResponses" in rounds[1]["params"]
    assert {r["params"]["_meta"]["traceparent"].split("-")[1] for r in rounds} == {first.trace_id.hex()}
    calls = {s.trace_id for s in spans if s.name.startswith("tools/call ")}
    assert len(calls) == 6 and session.trace_id not in calls  # ask_user's two rounds share one


@pytest.mark.parametrize("traced", [True, False], ids=["traceparent", "frames only"])
def test_sampling_and_roots_of_a_call_join_its_trace(tmp_path, traced):
    """server-everything asks for sampling and roots during a call: both are spans of the call's trace, and
    with trace context on, our answers carry the call's trace id (the span id the export gives them)."""
    async def script(client: Client) -> None:
        await client.call_tool("trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20})
        await client.call_tool("get-roots-list", {})
        await client.call_tool("trigger-long-running-operation", {"duration": 0.3, "steps": 3},
                               on_progress=lambda *a: None)
        await client.list_tools()  # the client learns which tools run as tasks
        await client.call_tool("simulate-research-query", {"topic": "otters"})

    spec = ServerSpec(name="everything", command=everything_cmd(), trace_context=traced)
    store = record(tmp_path / "everything.sqlite", spec, "legacy", script,
                   roots=[{"uri": "file:///tmp/spyglass-root", "name": "scratch"}])
    path = tmp_path / "everything.json"
    export_otlp_json(store, path)
    spans = spans_of(load(path))
    sampling_call = one(spans, "tools/call trigger-sampling-request")
    sample = one(spans, "sampling/createMessage")
    assert sample.trace_id == sampling_call.trace_id and sample.parent_span_id == sampling_call.span_id
    answer = next(f for f in frames(store, "out", "response", "sampling/createMessage"))
    told = tracecontext.from_meta(answer["result"])
    if traced:
        assert told is not None and told.trace_id == sampling_call.trace_id.hex()
        assert told.span_id == sample.span_id.hex()
    else:
        assert told is None and attrs(sample)["spyglass.related_by"] == "only request"
    roots_call = one(spans, "tools/call get-roots-list")
    in_call = [s for s in named(spans, "roots/list") if s.trace_id == roots_call.trace_id]
    assert in_call and all(s.parent_span_id == roots_call.span_id and s.kind == SERVER for s in in_call)
    progress = [e for e in one(spans, "tools/call trigger-long-running-operation").events
                if e.name == "notifications/progress"]
    assert len(progress) >= 3
    # a tool run as a task (2025-11-25): the task's requests are in the call's trace
    research = one(spans, "tools/call simulate-research-query")
    assert attrs(research)["spyglass.outcome"] == "task created" and attrs(research)["spyglass.task.id"]
    followers = [s for s in spans if s.name.startswith("tasks/")]
    assert {s.name for s in followers} >= {"tasks/result"}
    assert all(s.trace_id == research.trace_id and s.parent_span_id == research.span_id for s in followers)


def test_over_http_a_server_request_belongs_to_the_call_whose_stream_carried_it(tmp_path):
    async def script(client: Client) -> None:
        # two calls in flight: only the stream tells whose elicitation it is
        await asyncio.gather(client.call_tool("ask_name", {}),
                             client.call_tool("slow", {"seconds": 0.4}, on_progress=lambda *a: None))

    with http_peers.sdk() as url:
        store = record(tmp_path / "http.sqlite", ServerSpec(name="sdk", url=url, transport="http"), "legacy", script)
    path = tmp_path / "http.json"
    export_otlp_json(store, path)
    spans = spans_of(load(path))
    ask, slow = one(spans, "tools/call ask_name"), one(spans, "tools/call slow")
    elicit = one(spans, "elicitation/create")
    assert elicit.trace_id == ask.trace_id and elicit.parent_span_id == ask.span_id
    assert attrs(elicit)["spyglass.related_by"] == "stream"
    assert [e.name for e in slow.events].count("notifications/progress") >= 3
    a = attrs(ask)
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    assert a["network.transport"] == "tcp" and a["network.protocol.name"] == "http"
    assert a["server.address"] == "127.0.0.1" and a["server.port"] == port
    assert a["http.response.status_code"] == 200
    session_ids = {x["response_headers"].get("mcp-session-id") for x in
                   (store.meta(n) for n in range(len(store)) if store.kind(n) == "http")} - {None}
    assert a["mcp.session.id"] in session_ids


# ---------------------------------------------------------------------------------------------- a collector

class Collector:
    """An OTLP/HTTP receiver on loopback: keeps what it is sent, answers as `status` says."""

    def __init__(self, status: int = 200) -> None:
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                outer.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                reply = ExportTraceServiceResponse().SerializeToString() if status == 200 else b"no thanks"
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Collector:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def test_send_otlp_posts_protobuf_to_a_collector(demo_legacy):
    expected = {(s.context.trace_id, s.context.span_id) for s in session_spans(demo_legacy)}
    with Collector() as collector:
        count = send_otlp(demo_legacy, collector.url, headers={"x-api-key": "k"}, timeout=5)
    assert count == len(expected)
    got = set()
    for path, headers, body in collector.received:
        assert path == "/v1/traces" and headers["content-type"] == "application/x-protobuf"
        assert headers["x-api-key"] == "k"
        request = ExportTraceServiceRequest.FromString(body)
        for span in spans_of(request):
            got.add((int.from_bytes(span.trace_id, "big"), int.from_bytes(span.span_id, "big")))
            if span.name == "tools/call nope":
                assert span.status.code == ERROR and attrs(span)["rpc.response.status_code"] == "-32602"
    assert got == expected


def test_a_collector_that_is_not_there_or_says_no_is_a_clear_error(demo_legacy):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    began = time.monotonic()
    with pytest.raises(CollectorError) as refused:
        send_otlp(demo_legacy, f"http://127.0.0.1:{port}/v1/traces", timeout=1.5)
    assert time.monotonic() - began < 10 * SLOWDOWN
    assert f"127.0.0.1:{port}/v1/traces" in refused.value.message and "refused" in refused.value.message
    assert refused.value.exit_code == E.EXIT_CONNECT
    with Collector(status=400) as collector, pytest.raises(CollectorError) as rejected:
        send_otlp(demo_legacy, collector.url + "/v1/traces", timeout=5)
    assert "it answered HTTP 400 Bad Request" in rejected.value.message
    with pytest.raises(ExportError, match="not an http"):
        send_otlp(demo_legacy, "ftp://example.com")
    assert traces_endpoint("https://otel.example.com:4318/") == "https://otel.example.com:4318/v1/traces"
    assert traces_endpoint("http://c:4318/custom/path") == "http://c:4318/custom/path"


# ---------------------------------------------------------------------------------------------- damage

def test_damaged_frames_odd_ids_and_huge_bodies_never_break_the_export(tmp_path, monkeypatch):
    import inspector.recording.otlp as otlp

    store = TrafficStore(":memory:")

    async def run() -> None:
        cases = [("noisy", ("noise", "unknown-id", "duplicate-reply", "server-pings", "2"), 20),
                 ("big", ("big-reply", "2"), 20), ("silent", ("no-reply",), 0.5), ("nested", ("deep-nesting",), 20),
                 ("flipped", ("string-id",), 20)]
        for name, flags, timeout in cases:
            client = Client(StdioTransport(hostile_cmd(*flags)), mode="legacy", timeout=timeout,
                            traffic=store.hook(name))
            try:
                async with client as c:
                    await c.call_tool("echo", {"message": "hi"})
            except E.SpyglassError:
                pass  # the flipped id fails the handshake: what was recorded is still exported

    asyncio.run(run())
    monkeypatch.setattr(otlp, "MAX_PARSE", 1024 * 1024)  # the 2 MB reply is not parsed: it is still a span
    monkeypatch.setattr(otlp, "MAX_EVENTS", 2)
    t = time.time()
    for data in [b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":[1],"progress":"x"}}',
                 b'{"jsonrpc":"2.0","method":"notifications/message","params":"not an object"}',
                 b'{"jsonrpc":"2.0","id":1.5,"result":{}}', b'{"jsonrpc":"2.0","id":null,"error":{"code":"x"}}',
                 b"\xff\xfe not even text", b"[" * 5000, b'{"jsonrpc":"2.0","method":"tools/call","id":{"o":1}}',
                 b'{"jsonrpc":"2.0","method":"elicitation/create","id":"e1","params":{"_meta":{"progressToken":{}}}}',
                 b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[],"reason":7}}',
                 b'{"jsonrpc":"2.0","method":"notifications/\\ud800","params":{"uri":"\\udfff"}}',
                 b'{"jsonrpc":"2.0","id":"\\ud800","method":"sampling/createMessage\\udc00","params":{}}']:
        store.add("noisy", Frame("in", data, time.monotonic(), t))
    for direction, message in [("out", {"id": 901, "method": "resources/read", "params": {"uri": "x://y"}}),
                               ("in", {"id": 901, "result": {}, "error": {"code": 1, "message": "both"}}),
                               ("in", {"id": "q1", "method": "roots/list"}),
                               ("out", {"id": "q1", "error": {"code": -32601, "message": "no roots here"}})]:
        store.add("noisy", Frame(direction, json.dumps({"jsonrpc": "2.0", **message}).encode(), time.monotonic(), t,
                                 "an answer with both result and error" if "error" in message and "result" in message
                                 else None))
    for value in ("00-zz-yy-01", "00-" + "0" * 32 + "-" + "1" * 16 + "-01", 12):
        out = {"jsonrpc": "2.0", "id": 900, "method": "tools/call",
               "params": {"name": "x", "_meta": {"traceparent": value}}}
        store.add("noisy", Frame("out", json.dumps(out).encode(), time.monotonic(), t))
    path = tmp_path / "damaged.json"
    count = export_otlp_json(store, path)
    spans = spans_of(load(path))
    assert count == len(spans) > 0
    silent = one([s for s in spans if attrs(s)["spyglass.server.id"] == "silent"], "tools/call echo")
    assert attrs(silent)["spyglass.outcome"] == "timeout" and attrs(silent)["error.type"] == "timeout"
    big = one([s for s in spans if attrs(s)["spyglass.server.id"] == "big"], "tools/call echo")
    assert attrs(big)["spyglass.response.size"] > 2_000_000 and attrs(big)["spyglass.outcome"] == "ok"
    pinged = one([s for s in spans if attrs(s)["spyglass.server.id"] == "noisy"
                  and attrs(s).get("jsonrpc.request.id") == "2"], "tools/call echo")
    assert [s.name for s in spans if s.parent_span_id == pinged.span_id].count("ping") == 2
    assert any(attrs(s).get("spyglass.events.dropped") for s in spans)  # the noise, capped
    read = one(spans, "resources/read")
    assert attrs(read)["spyglass.outcome"] == "malformed answer" and attrs(read)["mcp.resource.uri"] == "x://y"
    refused = one(spans, "roots/list")
    assert refused.kind == SERVER and refused.status.code == ERROR and refused.status.message == "no roots here"
    flipped = [s for s in spans if attrs(s)["spyglass.server.id"] == "flipped"]
    assert attrs(one(flipped, "initialize"))["spyglass.outcome"] == "unanswered"
    assert "malformed frame" in [e.name for e in one(flipped, "MCP session flipped").events]
    only = tmp_path / "only.json"
    assert export_otlp_json(store, only, servers=["big"]) == len(spans_of(load(only)))
    assert {attrs(s)["spyglass.server.id"] for s in spans_of(load(only))} == {"big"}
    with pytest.raises(ExportError, match="no server 'ghost'"):
        export_otlp_json(store, tmp_path / "x.json", servers=["ghost"])
    store.set_meta("server:quiet", json.dumps({"name": "quiet", "transport": "stdio", "command": ["q"]}))
    assert export_otlp_json(store, tmp_path / "quiet.json", servers=["quiet"]) == 0  # defined, never heard
    with pytest.raises(ExportError, match="cannot write"):
        export_otlp_json(store, tmp_path / "no" / "such" / "dir.json")
    assert export_otlp_json(TrafficStore(":memory:"), tmp_path / "empty.json") == 0
    assert json.loads((tmp_path / "empty.json").read_text()) == {"resourceSpans": []}


# ---------------------------------------------------------------------------------------------- the setting

def test_the_setting_is_kept_in_the_catalog_and_given_by_the_flag(tmp_path):
    from inspector.catalog import Catalog
    from inspector.cli.common import UsageParser, add_server_arguments, parse_with_command, server_spec

    class NoSecrets:
        def get(self, key: str) -> None:
            return None

        def set(self, key: str, value: str) -> None:
            raise AssertionError("no secrets here")

        def delete(self, key: str) -> None:
            pass

    catalog = Catalog(tmp_path / "servers.json", secrets=NoSecrets()).load()
    traced = catalog.add(demo_spec(trace_context=True))
    plain = catalog.add(ServerSpec(name="plain", command=["x"]))
    catalog.save()
    saved = json.loads((tmp_path / "servers.json").read_text())["servers"]
    assert saved[0]["trace_context"] is True and "trace_context" not in saved[1]
    again = Catalog(tmp_path / "servers.json", secrets=NoSecrets()).load()
    assert again.get(traced.id).spec.trace_context is True and again.get(plain.id).spec.trace_context is False
    parser = UsageParser(prog="spyglass")
    parser.add_argument("target", nargs="*")
    add_server_arguments(parser)
    assert server_spec(parse_with_command(parser, ["--trace-context", "--", "srv"])).trace_context is True
    assert server_spec(parse_with_command(parser, ["--", "srv"])).trace_context is False


def test_the_server_dialog_has_the_checkbox(qtbot):
    from inspector.ui.servers.add_dialog import AddServerDialog, describe_spec

    dialog = AddServerDialog(spec=demo_spec())
    qtbot.addWidget(dialog)
    box = dialog.findChild(type(dialog.trace_context), "serverTraceContext")
    assert box is dialog.trace_context and not box.isChecked()
    box.setChecked(True)
    assert dialog.spec().trace_context is True and describe_spec(dialog.spec())["trace_context"] is True
    dialog.tabs.setCurrentIndex(1)
    dialog.url.setText("http://127.0.0.1:1/mcp")
    assert dialog.spec().trace_context is True
    assert AddServerDialog(spec=demo_spec(trace_context=True)).trace_context.isChecked()
