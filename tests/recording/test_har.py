"""HAR 1.2 export of recorded HTTP sessions against real peers on loopback: the SDK peer over Streamable HTTP
(SSE answers and JSON answers, both protocol eras) and server-everything over HTTP+SSE, validated against
the HAR 1.2 schema written below, every JSON-RPC body in its exchange; a stdio server is left out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import http_peers
import jsonschema
import pytest
from support import PY, SLOWDOWN

from inspector import errors as E
from inspector.client import Client
from inspector.config import ServerSpec
from inspector.recording.har import ExportError, NothingToExport, export_har, server_infos
from inspector.session import ServerSession, SessionOptions
from inspector.traffic import TrafficStore

_NAME_VALUE = {"type": "array", "items": {"type": "object", "required": ["name", "value"],
                                          "properties": {"name": {"type": "string"}, "value": {"type": "string"}}}}
_MS = {"type": "number", "minimum": -1}
# HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/): the fields the spec requires, with their types
HAR_SCHEMA = {
    "type": "object", "required": ["log"],
    "properties": {"log": {
        "type": "object", "required": ["version", "creator", "entries"],
        "properties": {
            "version": {"const": "1.2"},
            "creator": {"type": "object", "required": ["name", "version"],
                        "properties": {"name": {"type": "string"}, "version": {"type": "string"}}},
            "comment": {"type": "string"},
            "entries": {"type": "array", "items": {
                "type": "object",
                "required": ["startedDateTime", "time", "request", "response", "cache", "timings"],
                "patternProperties": {"^[^_]": {}},
                "properties": {
                    "startedDateTime": {"type": "string",
                                        "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$"},
                    "time": {"type": "number", "minimum": 0},
                    "cache": {"type": "object"},
                    "request": {
                        "type": "object",
                        "required": ["method", "url", "httpVersion", "cookies", "headers", "queryString",
                                     "headersSize", "bodySize"],
                        "properties": {
                            "method": {"type": "string"}, "url": {"type": "string", "pattern": "^https?://"},
                            "httpVersion": {"type": "string"}, "cookies": {"type": "array"},
                            "headers": _NAME_VALUE, "queryString": _NAME_VALUE,
                            "headersSize": {"type": "integer"}, "bodySize": {"type": "integer"},
                            "postData": {"type": "object", "required": ["mimeType"],
                                         "properties": {"mimeType": {"type": "string"}, "text": {"type": "string"}},
                                         "oneOf": [{"required": ["text"]}, {"required": ["params"]}]}}},
                    "response": {
                        "type": "object",
                        "required": ["status", "statusText", "httpVersion", "cookies", "headers", "content",
                                     "redirectURL", "headersSize", "bodySize"],
                        "properties": {
                            "status": {"type": "integer"}, "statusText": {"type": "string"},
                            "httpVersion": {"type": "string"}, "cookies": {"type": "array"},
                            "headers": _NAME_VALUE, "redirectURL": {"type": "string"},
                            "headersSize": {"type": "integer"}, "bodySize": {"type": "integer"},
                            "content": {"type": "object", "required": ["size", "mimeType"],
                                        "properties": {"size": {"type": "integer", "minimum": 0},
                                                       "mimeType": {"type": "string"},
                                                       "text": {"type": "string"}}}}},
                    "timings": {"type": "object", "required": ["send", "wait", "receive"],
                                "properties": {"send": {"type": "number", "minimum": 0},
                                               "wait": {"type": "number", "minimum": 0},
                                               "receive": {"type": "number", "minimum": 0},
                                               "blocked": _MS, "dns": _MS, "connect": _MS, "ssl": _MS}}}}}}}},
}


class Answers:
    async def elicit(self, session: Any, params: dict[str, Any], call: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    async def sample(self, session: Any, params: dict[str, Any], call: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "endTurn"}

    async def share_roots(self, session: Any, roots: list[dict[str, Any]], call: Any) -> bool:
        return True


async def sdk_script(client: Client, ask: bool = True) -> None:
    await client.list_tools()
    await client.call_tool("add", {"a": 2, "b": 3})
    await client.call_tool("fail", {})
    await client.call_tool("slow", {"seconds": 0.3}, on_progress=lambda *a: None)
    if ask:  # legacy: elicitation on the call's stream; modern: an MRTR round (JSON answers have no stream)
        await client.call_tool("ask_name", {})
    await client.read_resource("sdk://hello")
    try:
        await client.call_tool("no-such-tool", {})  # an error result or a JSON-RPC error, as the SDK chooses
    except E.RemoteError:
        pass


async def everything_script(client: Client) -> None:
    await client.list_tools()
    await client.call_tool("echo", {"message": "over HTTP+SSE"})
    await client.call_tool("trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20})


async def demo_script(client: Client) -> None:
    await client.call_tool("echo", {"message": "over stdio"})


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> TrafficStore:
    """One session of five servers: the SDK peer in both eras with SSE answers, in the legacy era with JSON
    answers (and a secret header), server-everything over HTTP+SSE, and the demo server over stdio."""
    path = tmp_path_factory.mktemp("har") / "session.sqlite"
    store = TrafficStore(path)

    async def one(spec: ServerSpec, mode: str, script: Any) -> None:
        kind = spec.transport or ("stdio" if spec.url is None else "http")
        store.set_meta(f"server:{spec.name}", json.dumps({"name": spec.name, "transport": kind,
                                                           "command": spec.command, "url": spec.url}))
        session = ServerSession(spec, spec.name, SessionOptions(mode=mode, timeout=30 * SLOWDOWN, load_lists=False,
                                                                listen=False, heartbeat_s=None),
                                answerer=Answers(), traffic=store.hook(spec.name))
        try:
            await session.open()
            await script(session.need_client())
            if kind != "stdio":
                # an answer to the server's request (sampling) is posted on its own: its POST may still be under
                # way when the script's last call returns; the session is closed once every POST is answered
                def posts(direction: str) -> int:
                    return sum(1 for n in range(len(store)) if store.server_id(n) == spec.name
                               and store.direction(n) == direction
                               and (direction == "out" or (store.meta(n) or {}).get("method") == "POST"))

                for _ in range(200):
                    if posts("http") >= posts("out"):
                        break
                    await asyncio.sleep(0.05)
        finally:
            await session.close()

    try:
        with http_peers.sdk() as sse_url, http_peers.sdk("--json-response") as json_url, \
                http_peers.everything("sse") as everything_url:
            asyncio.run(one(ServerSpec(name="sdk-legacy", url=sse_url, transport="http"), "legacy", sdk_script))
            asyncio.run(one(ServerSpec(name="sdk-modern", url=sse_url, transport="http"), "modern", sdk_script))
            asyncio.run(one(ServerSpec(name="sdk-json", url=json_url, transport="http",
                                       headers={"Authorization": "Bearer do-not-share-me"}), "legacy",
                            lambda client: sdk_script(client, ask=False)))
            asyncio.run(one(ServerSpec(name="everything", url=everything_url, transport="sse"), "legacy",
                            everything_script))
            asyncio.run(one(ServerSpec(name="demo", command=[PY, "-m", "inspector.demo"]), "legacy", demo_script))
    finally:
        store.close()
    return TrafficStore.open_session(path)


def records(store: TrafficStore, server: str, direction: str) -> list[int]:
    return [n for n in range(len(store)) if store.server_id(n) == server and store.direction(n) == direction]


def bodies(content: dict[str, Any]) -> list[dict]:
    """The JSON-RPC messages of a response body: a JSON body, or the data of each SSE event."""
    text = content.get("text", "")
    if not text:
        return []
    if content["mimeType"].startswith("text/event-stream"):
        out = []
        for event in text.split("\n\n"):
            data = "\n".join(line[6:] for line in event.split("\n") if line.startswith("data: "))
            if data:
                out.append(json.loads(data))
        return out
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def test_http_exchanges_as_har(recorded, tmp_path):
    store = recorded
    path = tmp_path / "session.har"
    count = export_har(store, path)
    text = path.read_text()
    har = json.loads(text)
    jsonschema.validate(har, HAR_SCHEMA)
    log = har["log"]
    entries = log["entries"]
    assert count == len(entries) == sum(1 for n in range(len(store)) if store.kind(n) == "http")
    assert log["creator"]["name"] == "Spyglass" and "demo" in log["comment"]
    assert {e["_server"] for e in entries} == {"sdk-legacy", "sdk-modern", "sdk-json", "everything"}
    started = [e["startedDateTime"] for e in entries]
    assert started == sorted(started)
    assert "do-not-share-me" not in text  # headers were masked when recorded, and stay so
    json_auth = [h["value"] for e in entries if e["_server"] == "sdk-json" for h in e["request"]["headers"]
                 if h["name"].lower() == "authorization"]
    assert json_auth and all("•" in v for v in json_auth)
    for server in ("sdk-legacy", "sdk-modern", "sdk-json", "everything"):
        mine = [e for e in entries if e["_server"] == server]
        posted = [e["request"]["postData"]["text"] for e in mine if e["request"]["method"] == "POST"]
        sent = [store.text(n) for n in records(store, server, "out")]
        assert sorted(posted) == sorted(sent), server  # every message we sent, each in its own POST
        for e in mine:
            if e["request"]["method"] == "POST":
                assert e["request"]["bodySize"] == len(e["request"]["postData"]["text"].encode())
                assert e["request"]["postData"]["mimeType"] == "application/json"
        received = sorted(json.dumps(json.loads(store.text(n)), sort_keys=True) for n in records(store, server, "in"))
        answered = sorted(json.dumps(m, sort_keys=True) for e in mine for m in bodies(e["response"]["content"]))
        assert answered == received, server  # every message the server sent, in the exchange that carried it
    for e in entries:
        if e["request"]["method"] != "POST" or e["response"]["status"] != 200 or e["_server"] == "everything":
            continue
        message = json.loads(e["request"]["postData"]["text"])
        if "method" in message and "id" in message:  # a request: its answer is in this exchange's body
            answers = [m for m in bodies(e["response"]["content"]) if m.get("id") == message["id"]
                       and ("result" in m or "error" in m)]
            assert len(answers) == 1, (message, e["response"]["content"])
            assert e["timings"]["wait"] >= 0 and e["time"] >= e["timings"]["wait"]
    legacy = [e for e in entries if e["_server"] == "sdk-legacy"]
    assert any(e["response"]["content"]["mimeType"].startswith("text/event-stream") for e in legacy)
    assert any(e["request"]["method"] == "DELETE" for e in legacy)  # the session ended
    assert any(e["response"]["status"] == 202 and e["response"]["content"]["size"] == 0 for e in legacy)
    as_json = [e for e in entries if e["_server"] == "sdk-json" and e["response"]["status"] == 200
               and e["request"]["method"] == "POST"]
    assert as_json and all(e["response"]["content"]["mimeType"].startswith("application/json") for e in as_json)
    assert all(e["response"]["bodySize"] == e["response"]["content"]["size"] for e in as_json)
    modern = [e for e in entries if e["_server"] == "sdk-modern" and e["request"]["method"] == "POST"]
    assert any("inputResponses" in e["request"]["postData"]["text"] for e in modern)  # the MRTR round
    assert all({h["name"] for h in e["request"]["headers"]} >= {"MCP-Protocol-Version", "Mcp-Method"} for e in modern)
    stream = [e for e in entries if e["_server"] == "everything" and e["request"]["method"] == "GET"]
    assert len(stream) == 1 and "sampling/createMessage" in stream[0]["response"]["content"]["text"]
    assert stream[0]["_stream"] == "GET#sse"


def test_stdio_servers_have_nothing_to_export(recorded, tmp_path):
    assert server_infos(recorded)["demo"].transport == "stdio"
    assert server_infos(recorded, ["everything"])["everything"].transport == "sse"
    with pytest.raises(NothingToExport, match="'demo'.*stdio") as nothing:
        export_har(recorded, tmp_path / "none.har", servers=["demo"])
    assert nothing.value.exit_code == E.EXIT_USAGE and not (tmp_path / "none.har").exists()
    assert export_har(recorded, tmp_path / "one.har", servers=["sdk-json"]) > 0
    one = json.loads((tmp_path / "one.har").read_text())["log"]
    assert {e["_server"] for e in one["entries"]} == {"sdk-json"} and "comment" not in one
    with pytest.raises(ExportError, match="no server 'ghost'"):
        export_har(recorded, tmp_path / "x.har", servers=["ghost"])
    with pytest.raises(ExportError, match="cannot write"):
        export_har(recorded, tmp_path / "missing" / "dir.har", servers=["sdk-json"])


def test_a_session_without_definitions_is_told_by_its_frames(recorded, tmp_path):
    """A session file from before server definitions were kept: the transport is read from the frames."""
    bare = TrafficStore(":memory:")
    for n in range(len(recorded)):
        from inspector.traffic import Frame

        bare.add(recorded.server_id(n), Frame(recorded.direction(n), recorded.raw(n), recorded.mono(n),
                                              recorded.wall(n), recorded.malformed(n), None, recorded.meta(n)))
    kinds = {sid: info.transport for sid, info in server_infos(bare).items()}
    assert kinds == {"sdk-legacy": "http", "sdk-modern": "http", "sdk-json": "http", "everything": "sse",
                     "demo": "stdio"}
    path: Path = tmp_path / "bare.har"
    assert export_har(bare, path) == export_har(recorded, tmp_path / "full.har")


def test_damaged_exchange_records_never_break_the_file(tmp_path):
    from inspector.traffic import Frame

    store = TrafficStore(":memory:")
    store.set_meta("server:odd", json.dumps({"name": "odd", "transport": "http", "url": "http://127.0.0.1:9/mcp"}))
    t = 1_700_000_000.0
    odd = [("out", b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', None),
           ("http", b"{}", {"method": 5, "stream": None, "status": "x", "request_headers": "nope"}),
           ("http", b"{}", {"method": "POST", "url": "http://127.0.0.1:9/mcp?a=1&b", "stream": "POST#1",
                            "status": 200, "reason": "OK", "request_headers": {"Content-Type": "application/json"},
                            "response_headers": {"content-type": "text/event-stream"}}),
           ("in", b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}', {"stream": "POST#1", "request": [1],
                                                                      "event_id": "e1", "event": "message"}),
           ("in", b"not json at all\nsecond line", {"stream": "POST#1"}),
           ("in", b'{"jsonrpc":"2.0","method":"x"}', {"stream": "GET#404"}),
           ("http", b"{}", {"method": "GET", "stream": "GET#2", "status": 405, "response_headers": {}}),
           ("http", b"{}", {"method": "POST", "stream": "POST#3", "status": 401, "response_headers": []}),
           ("http", b"{}", {"method": "POST", "stream": "POST#3", "status": 202, "response_headers": {}})]
    for i, (direction, data, meta) in enumerate(odd):
        store.add("odd", Frame(direction, data, float(i), t + i, None, None, meta))
    path = tmp_path / "odd.har"
    assert export_har(store, path) == 5
    har = json.loads(path.read_text())
    jsonschema.validate(har, HAR_SCHEMA)
    entries = har["log"]["entries"]
    first = next(e for e in entries if e["_stream"] == "POST#1")
    assert first["request"]["postData"]["text"] == odd[0][1].decode()
    assert first["request"]["queryString"] == [{"name": "a", "value": "1"}, {"name": "b", "value": ""}]
    assert "id: e1\nevent: message\ndata: " in first["response"]["content"]["text"]
    assert "data: not json at all\ndata: second line\n\n" in first["response"]["content"]["text"]
    retried = [e for e in entries if e["_stream"] == "POST#3"]
    assert [e["response"]["status"] for e in retried] == [401, 202]
    assert retried[0]["response"]["content"]["comment"].startswith("the body was read")


def test_a_body_is_paired_with_the_post_its_frame_names(tmp_path):
    """Out frames name the POST that carried them: pairing holds when the POSTs' answers come in another
    order than the messages were sent (the order a guess would go by), and for notifications and our
    answers to the server, which no answer names."""
    from inspector.traffic import Frame

    store = TrafficStore(":memory:")
    store.set_meta("server:h", json.dumps({"name": "h", "transport": "http", "url": "http://127.0.0.1:9/mcp"}))
    t = 1_700_000_000.0
    frames = [("out", b'{"jsonrpc":"2.0","method":"notifications/initialized"}', {"stream": "POST#3"}),
              ("out", b'{"jsonrpc":"2.0","id":0,"result":{"ok":true}}', {"stream": "POST#2"}),
              ("out", b'{"jsonrpc":"2.0","id":5,"method":"ping"}', {"stream": "POST#4"}),
              ("http", b"{}", {"method": "POST", "stream": "POST#4", "status": 200, "response_headers": {}}),
              ("in", b'{"jsonrpc":"2.0","id":5,"result":{}}', {"stream": "POST#4", "request": 5}),
              ("http", b"{}", {"method": "POST", "stream": "POST#3", "status": 202, "response_headers": {}}),
              ("http", b"{}", {"method": "POST", "stream": "POST#2", "status": 202, "response_headers": {}})]
    for i, (direction, data, meta) in enumerate(frames):
        store.add("h", Frame(direction, data, float(i), t + i, None, None, meta))
    path = tmp_path / "exact.har"
    assert export_har(store, path) == 3
    bodies = {e["_stream"]: e["request"]["postData"]["text"] for e in json.loads(path.read_text())["log"]["entries"]}
    # (sent in the other order than numbered: a guess by send order would swap the first two)
    assert bodies == {"POST#3": frames[0][1].decode(), "POST#2": frames[1][1].decode(), "POST#4": frames[2][1].decode()}
