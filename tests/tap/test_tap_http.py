"""The HTTP tap (`inspector.tap.http`) between a client and real servers on loopback: server-everything
(Streamable HTTP and HTTP+SSE), the SDK peer (both protocol eras), the hostile HTTP server's cut stream, and
`tap_peers.py` for exact bytes, a server that notices a client leaving and an absolute SSE endpoint. The
same calls give the same answers directly and through the tap, and the session file holds what passed."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import http_peers
import httpx
import pytest
import tap_peers
from support import PY, ROOT, SLOWDOWN

from inspector.client import Client
from inspector.errors import UsageError
from inspector.protocol.versions import Era
from inspector.recording.files import open_session
from inspector.recording.har import export_har
from inspector.secrets import MASK
from inspector.tap.http import HttpTap, SseRelay, check_listen, parse_listen, proxy_url
from inspector.tap.record import TapRecorder
from inspector.transport.http import HttpSettings, HttpTransport
from inspector.transport.sse import SseTransport

SECRET = "s3cret-token-of-the-host"
BROKEN = (b'{"jsonrpc": "2.0", "method": broken', b'[{"jsonrpc":"2.0","method":"a"}]')  # not JSON; a batch


async def ada(params, context=None):
    return {"action": "accept", "content": {"name": "Ada"}}


def client(url: str, *, sse: bool = False, mode: str = "auto", **kw) -> Client:
    settings = HttpSettings(headers={"Authorization": f"Bearer {SECRET}"})
    transport = SseTransport(url, settings) if sse else HttpTransport(url, settings)
    return Client(transport, mode=mode, timeout=30 * SLOWDOWN, handlers={"elicitation/create": ada}, **kw)


def recorder(path: Path, url: str) -> TapRecorder:
    return TapRecorder(path, "remote", {"name": "remote", "url": url, "transport": "http"}, live=False)


def frames(path: Path) -> list[tuple[str, bytes, dict]]:
    """(direction, data, meta) of every frame of a tapped session file."""
    opened = open_session(path)
    assert not opened.problems, opened.problems
    store = opened.store
    return [(store.direction(n), store.raw(n), store.meta(n) or {}) for n in range(len(store))]


def assert_paired(recorded: list[tuple[str, bytes, dict]]) -> None:
    """Each POST body comes before its exchange, each answer after it, on the stream they name."""
    seen: list[str] = []
    for direction, _, meta in recorded:
        if direction == "out":
            assert meta["stream"].startswith("POST#") and meta["stream"] not in seen
        elif direction == "http":
            seen.append(meta["stream"])
        elif direction == "in":
            assert meta["stream"] in seen, meta
    outs = [m["stream"] for d, _, m in recorded if d == "out"]
    posts = [m["stream"] for d, _, m in recorded if d == "http" and m["method"] == "POST"]
    assert set(outs) <= set(posts)


async def test_everything_over_streamable_http_through_the_tap(tmp_path):
    path = tmp_path / "everything.mcpsession"
    with http_peers.everything("streamableHttp") as url:
        tap_recorder = recorder(path, url)
        async with HttpTap(url, tap_recorder) as tap:
            assert tap.proxy_url() == f"http://127.0.0.1:{tap.port}/mcp"
            answers = []
            for target in (url, tap.proxy_url()):
                traffic: list = []
                async with client(target, mode="legacy", traffic=traffic.append) as c:
                    names = sorted(t["name"] for t in (await c.list_tools())["tools"])
                    echo = await c.call_tool("echo", {"message": "through"})
                    total = await c.call_tool("get-sum", {"a": 20, "b": 22})
                    answers.append((names, echo, total))
                exchanges = [f.meta for f in traffic if f.direction == "http"]
                assert [x["status"] for x in exchanges if x["method"] == "DELETE"] == [200]
                assert all("Mcp-Session-Id" in x["request_headers"] for x in exchanges[1:])
        tap_recorder.close()
    assert answers[0] == answers[1]
    assert answers[1][2]["content"][0]["text"] == "The sum of 20 and 22 is 42."
    recorded = frames(path)
    assert_paired(recorded)
    assert [d for d, _, _ in recorded[:3]] == ["out", "http", "in"]  # initialize, its exchange, its answer
    assert json.loads(recorded[0][1])["method"] == "initialize"
    http = [m for d, _, m in recorded if d == "http"]
    assert [m["method"] for m in http if m["method"] != "POST"] == ["GET", "DELETE"]
    session_id = http[0]["response_headers"]["mcp-session-id"]
    assert all(m["request_headers"]["Mcp-Session-Id"] == session_id for m in http[1:])
    assert {m["request_headers"]["Host"] for m in http} == {url.split("/")[2]}
    assert all(m["request_headers"]["Authorization"] == f"Bearer {MASK}" for m in http)
    assert all(json.loads(data)["request_headers"]["Authorization"] == f"Bearer {MASK}"
               for d, data, _ in recorded if d == "http")
    assert SECRET not in gzip.decompress(path.read_bytes()).decode()
    answers_in = [json.loads(data) for d, data, m in recorded if d == "in" and m.get("request") == 4]
    assert answers_in[-1]["result"]["content"][0]["text"] == "The sum of 20 and 22 is 42."
    assert all(m["event_id"] for d, _, m in recorded if d == "in" and m["stream"].startswith("POST#"))
    # the recording's exchanges are Spyglass's own: HAR pairs every POST with its body
    assert export_har(open_session(path).store, tmp_path / "tap.har") >= len(http)
    entries = json.loads((tmp_path / "tap.har").read_text())["log"]["entries"]
    posts = [e for e in entries if e["request"]["method"] == "POST"]
    assert posts and all("postData" in e["request"] for e in posts)


async def test_sdk_peer_in_both_eras_through_the_tap(tmp_path):
    path = tmp_path / "sdk.mcpsession"
    with http_peers.sdk() as url:
        tap_recorder = recorder(path, url)
        async with HttpTap(url, tap_recorder) as tap:
            for mode, era in (("auto", Era.MODERN), ("legacy", Era.LEGACY)):
                answers = []
                for target in (url, tap.proxy_url()):
                    async with client(target, mode=mode) as c:
                        assert c.era is era
                        answers.append([(await c.call_tool("add", {"a": 2, "b": 3}))["structuredContent"],
                                        (await c.read_resource("sdk://hello"))["contents"][0]["text"],
                                        (await c.call_tool("ask_name", {}))["content"][0]["text"]])
                assert answers[0] == answers[1] == [{"result": 5}, "Hello from the SDK peer", "Hello, Ada!"]
                # unbuffered: the progress of a long call arrives through the tap while it runs
                async with client(tap.proxy_url(), mode=mode) as c:
                    came: list[float] = []
                    started = time.monotonic()
                    await c.call_tool("slow", {"seconds": 0.8}, on_progress=lambda *a: came.append(time.monotonic()))
                    ended = time.monotonic()
                assert len(came) >= 6 and came[0] - started < 0.4 * SLOWDOWN and ended - came[0] > 0.4
        tap_recorder.close()
    recorded = frames(path)
    assert_paired(recorded)
    http = [m for d, _, m in recorded if d == "http"]
    modern = [m for m in http if m["request_headers"].get("MCP-Protocol-Version") == "2026-07-28"]
    assert {m["request_headers"].get("Mcp-Name") for m in modern} >= {"add", "ask_name", "slow"}
    assert not any("Mcp-Session-Id" in m["request_headers"] for m in modern)
    assert any("Mcp-Session-Id" in m["request_headers"] for m in http if m not in modern)
    # legacy ask_name: the server's question on the call's POST stream, the answer posted back through the tap
    question = next(json.loads(data) for d, data, _ in recorded
                    if d == "in" and json.loads(data).get("method") == "elicitation/create")
    assert any(d == "out" and json.loads(data).get("id") == question["id"] and "result" in json.loads(data)
               for d, data, _ in recorded)


async def test_everything_over_http_sse_through_the_tap(tmp_path):
    path = tmp_path / "sse.mcpsession"
    with http_peers.everything("sse") as url:
        tap_recorder = recorder(path, url)
        async with HttpTap(url, tap_recorder) as tap:
            answers = []
            for target in (url, tap.proxy_url()):
                async with client(target, sse=True, mode="legacy") as c:
                    answers.append(await c.call_tool("echo", {"message": "legacy"}))
                    assert c.transport.endpoint.startswith(target.rsplit("/", 1)[0])  # a relative endpoint
        tap_recorder.close()
    assert answers[0] == answers[1]
    recorded = frames(path)
    first = recorded[0][2]
    assert first["method"] == "GET" and first["url"] == url
    assert not [data for d, data, _ in recorded if d == "err"]  # a relative endpoint is passed as it is
    streams = {m["stream"] for d, _, m in recorded if d == "in"}
    assert streams == {first["stream"]}  # every answer on the GET stream


async def test_an_absolute_sse_endpoint_names_the_tap(tmp_path):
    path = tmp_path / "endpoint.mcpsession"
    with tap_peers.running() as peer:
        url = f"{peer.origin}/sse"
        tap_recorder = recorder(path, url)
        async with HttpTap(url, tap_recorder) as tap:
            answers = []
            for target in (url, tap.proxy_url()):
                async with client(target, sse=True, mode="legacy") as c:
                    answers.append(await c.call_tool("echo", {"message": "posted through"}))
                    endpoint = c.transport.endpoint
            assert endpoint.startswith(f"{tap.origin}/messages?session=")  # the host would refuse another host
        tap_recorder.close()
    assert answers[0] == answers[1]
    recorded = frames(path)
    note = next(m for d, _, m in recorded if d == "err")
    assert note["endpoint"].startswith(f"{peer.origin}/messages") and note["rewritten"] == endpoint
    posts = [m for d, _, m in recorded if d == "http" and m["method"] == "POST"]
    assert posts and all(m["url"].startswith(f"{peer.origin}/messages") for m in posts)


async def test_event_streams_pass_byte_for_byte_and_unbuffered(tmp_path):
    path = tmp_path / "bytes.mcpsession"
    with tap_peers.running() as peer:
        tap_recorder = recorder(path, peer.origin)
        async with HttpTap(peer.origin, tap_recorder) as tap, httpx.AsyncClient() as http:
            got = {}
            for origin in (peer.origin, tap.origin):
                started = time.monotonic()
                body, first = b"", None
                async with http.stream("GET", f"{origin}/fixed") as resp:
                    async for chunk in resp.aiter_raw():
                        body += chunk
                        first = first or time.monotonic() - started
                got[origin] = (body, first, time.monotonic() - started, resp.headers)
        tap_recorder.close()
    body, first, total, headers = got[tap.origin]
    assert body == got[peer.origin][0] == b"".join(tap_peers.FIXED_PARTS)
    assert first < total - tap_peers.FIXED_PAUSE  # the first part came before the server sent the rest
    assert headers["content-type"] == "text/event-stream" and headers["cache-control"] == "no-cache"
    events = [(json.loads(data)["method"], m["event_id"], m["event"]) for d, data, m in frames(path) if d == "in"]
    assert events == [("one", "a1", "message"), ("two", "a2", "message"), ("three", "a2", "message")]


def test_the_relay_reads_events_as_they_come_in_any_cut():
    whole = b"".join(tap_peers.FIXED_PARTS) + b"event: endpoint\ndata: https://up.example/m?s=1\n\n"
    for size in (1, 2, 3, 7, len(whole)):
        relay = SseRelay(lambda endpoint: endpoint.replace("https://up.example", "http://127.0.0.1:9"))
        passed = b"".join(relay.feed(whole[i:i + size]) for i in range(0, len(whole), size)) + relay.end()
        assert passed == whole.replace(b"https://up.example", b"http://127.0.0.1:9")
        assert [(e.data.count(b"\n"), e.id, e.event) for e in relay.events] == [
            (0, "a1", "message"), (1, "a2", "message"), (0, "a2", "message"), (0, "a2", "endpoint")]
        assert relay.events[-1].rewritten == "http://127.0.0.1:9/m?s=1"
    relay = SseRelay()
    assert relay.feed(b"data: cut short") == b"data: cut short" and relay.end() == b""
    assert relay.events[0].cut and relay.events[0].data == b"cut short"
    # an endpoint event with no data is held only until its blank line; another origin is not rewritten
    relay = SseRelay(lambda endpoint: None)
    odd = b"event: endpoint\n\nevent: endpoint\ndata: https://else.example/m\n\n"
    assert [relay.feed(odd[:16]), relay.feed(odd[16:17]), relay.feed(odd[17:-1]), relay.feed(odd[-1:])] == [
        odd[:16], b"\n", b"event: endpoint\n", odd[33:]]
    assert [e.rewritten for e in relay.events] == [None]


async def test_headers_status_and_bodies_pass_as_they_are(tmp_path):
    path = tmp_path / "headers.mcpsession"
    with tap_peers.running() as peer:
        tap_recorder = recorder(path, peer.origin)
        async with HttpTap(peer.origin, tap_recorder) as tap, httpx.AsyncClient(base_url=tap.origin) as http:

            async def chunked():
                yield b'{"jsonrpc":"2.0","id":1,'
                yield b'"method":"tools/list"}'

            resp = await http.post("/echo?x=1&y=%20z", content=chunked(), headers=[
                ("Authorization", f"Bearer {SECRET}"), ("Mcp-Session-Id", "sid-0"),
                ("MCP-Protocol-Version", "2025-11-25"), ("X-Custom", "kept"), ("Connection", "keep-alive, X-Hop"),
                ("X-Hop", "dropped"), ("TE", "trailers"), ("Keep-Alive", "timeout=5")])
            assert (resp.status_code, resp.reason_phrase) == (201, "Made It")
            assert resp.headers["x-reply"] == "yes" and resp.headers["mcp-session-id"] == "sid-1"
            assert resp.headers.get_list("set-cookie") == ["a=1", "b=2"]
            assert "x-hop-reply" not in resp.headers and "keep-alive" not in resp.headers
            seen = resp.json()
            upstream = {k.lower(): v for k, v in seen["headers"]}
            assert seen["target"] == "/echo?x=1&y=%20z"
            assert seen["body"] == '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
            assert upstream["host"] == peer.origin[7:] and upstream["authorization"] == f"Bearer {SECRET}"
            assert upstream["mcp-session-id"] == "sid-0" and upstream["mcp-protocol-version"] == "2025-11-25"
            assert upstream["x-custom"] == "kept" and upstream["content-length"] == str(len(seen["body"]))
            assert not {"x-hop", "te", "keep-alive", "connection", "transfer-encoding"} & set(upstream)
            assert upstream["user-agent"] == f"python-httpx/{httpx.__version__}"  # the host's, not the tap's
            for broken in BROKEN:
                assert (await http.post("/echo", content=broken)).json()["body"] == broken.decode()
            zipped = await http.get("/gzip")
            assert zipped.json() == tap_peers.GZIPPED and zipped.headers["content-encoding"] == "gzip"
            with pytest.raises(httpx.RemoteProtocolError):
                await http.get("/short")
            assert (await http.get("/nothing")).status_code == 404
            assert tap.connections == 2  # one kept alive; the cut answer cost the host that connection
        async with HttpTap(f"{peer.origin}/echo?from=url", tap_recorder) as rooted, httpx.AsyncClient() as http:
            targets = [(await http.post(f"{rooted.origin}{path}", content=b"{}")).json()["target"]
                       for path in ("/", "/?from=host", "/echo?x")]
            assert targets == ["/echo?from=url", "/echo?from=host", "/echo?x"]  # the root stands for the URL's
        tap_recorder.close()
    recorded = frames(path)
    outs = [(data, meta) for d, data, meta in recorded if d == "out"]
    assert [data for data, _ in outs[1:3]] == list(BROKEN)  # as they came
    opened = open_session(path).store
    reasons = [opened.malformed(n) for n in range(len(opened)) if opened.direction(n) == "out"]
    assert reasons[0] is None and reasons[1] and "batch" in reasons[2]
    unzipped = next(data for d, data, m in recorded if d == "in" and m["stream"] == "GET#4")
    assert json.loads(unzipped) == tap_peers.GZIPPED  # the host got it gzip'd, the session as the server meant it
    notes = [data.decode() for d, data, _ in recorded if d == "err"]
    assert any("GET#5" in n and "broke off" in n and "expected 100" in n for n in notes), notes
    assert any("GET#6" in n and "HTTP 404" in n and "no such page" in n for n in notes), notes


async def test_a_cut_stream_is_resumed_through_the_tap(tmp_path):
    path = tmp_path / "resume.mcpsession"
    with http_peers.hostile("cut-sse") as url:
        tap_recorder = recorder(path, url)
        async with HttpTap(url, tap_recorder) as tap, client(f"{tap.origin}/", mode="legacy") as c:
            result = await c.call_tool("echo", {"message": "x"})  # the tap's root stands for the URL's path
        tap_recorder.close()
    assert result["content"][0]["text"] == "resumed"
    recorded = frames(path)
    assert {m["url"] for d, _, m in recorded if d == "http"} == {url}
    call = next(json.loads(data) for d, data, _ in recorded if d == "out" and b'"tools/call"' in data)
    resume = next(m for d, _, m in recorded if d == "http" and "Last-Event-ID" in m["request_headers"])
    last = resume["request_headers"]["Last-Event-ID"]
    assert last == f"e1:{call['id']}" and resume["stream"].endswith(f"(resume after {last})")
    answer = next(m for d, data, m in recorded if d == "in" and b"resumed" in data)
    assert answer == {"stream": resume["stream"], "event_id": "e2", "event": "message", "request": call["id"]}


async def test_a_host_that_hangs_up_closes_the_servers_stream(tmp_path):
    path = tmp_path / "gone.mcpsession"
    with tap_peers.running() as peer:
        tap_recorder = recorder(path, peer.origin)
        async with HttpTap(peer.origin, tap_recorder) as tap, httpx.AsyncClient() as http:
            async with http.stream("GET", f"{tap.origin}/forever") as resp:
                async for chunk in resp.aiter_raw():
                    assert b"still here" in chunk
                    break
            assert await asyncio.to_thread(peer.wait_line, "GONE /forever", 5 * SLOWDOWN)
        tap_recorder.close()
    notes = [data.decode() for d, data, _ in frames(path) if d == "err"]
    assert notes == ["spyglass tap: the host closed GET#1 before its answer ended; the stream to the server "
                     "was closed"]


async def test_closing_the_tap_ends_the_streams_it_carries(tmp_path):
    with tap_peers.running() as peer:
        tap_recorder = recorder(tmp_path / "closed.mcpsession", peer.origin)
        tap = HttpTap(peer.origin, tap_recorder)
        await tap.start()
        async with httpx.AsyncClient() as http, http.stream("GET", f"{tap.origin}/forever") as resp:
            chunks = resp.aiter_raw()
            assert b"still here" in await chunks.__anext__()
            await tap.close()
            with pytest.raises(httpx.RemoteProtocolError):
                async for _ in chunks:
                    pass
        assert await asyncio.to_thread(peer.wait_line, "GONE /forever", 5 * SLOWDOWN)
        tap_recorder.close()


async def test_an_unreachable_server_is_a_502(tmp_path):
    path = tmp_path / "dead.mcpsession"
    url = f"http://127.0.0.1:{http_peers.free_port()}/mcp"
    tap_recorder = recorder(path, url)
    async with HttpTap(url, tap_recorder) as tap, httpx.AsyncClient() as http:
        resp = await http.post(tap.proxy_url(), json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert resp.status_code == 502 and "connection refused" in resp.text
        assert resp.headers["content-type"].startswith("text/plain")
        # a page of a rebinding DNS name, whose requests name another host, gets nothing from the tap
        resp = await http.post(tap.proxy_url(), headers={"Host": f"attacker.example:{tap.port}"}, content=b"{}")
        assert resp.status_code == 403
        reader, writer = await asyncio.open_connection("127.0.0.1", tap.port)
        writer.write(b"NONSENSE\r\n\r\n")
        assert (await reader.read()).startswith(b"HTTP/1.1 400 ")
        writer.close()
        reader, writer = await asyncio.open_connection("127.0.0.1", tap.port)  # a host that waits to be asked
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
        assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 100 \r\n\r\n"
        writer.write(b"{}")
        assert (await reader.read()).startswith(b"HTTP/1.1 502 ")
        writer.close()
    tap_recorder.close()
    recorded = frames(path)[:2]
    assert recorded[1][2]["stream"] == recorded[0][2]["stream"] == "POST#1"
    assert recorded[1][1].decode().startswith(f"spyglass tap: POST#1: cannot reach {url}: connection refused")


async def test_kept_connections_to_the_server(tmp_path):
    """The proxy keeps its connections to the server; one the server closed as a request went out is tried
    again for a GET, never for a POST (the server may have acted on it); an answer that is not HTTP is said."""
    path = tmp_path / "kept.mcpsession"
    with tap_peers.running() as peer:
        tap_recorder = recorder(path, f"{peer.origin}/once")
        async with HttpTap(f"{peer.origin}/once", tap_recorder) as tap, httpx.AsyncClient() as http:
            first = await http.get(f"{tap.origin}/once")
            assert first.json() == {"once": True} and tap.client.opened == 1
            again = await http.get(f"{tap.origin}/once")  # the kept connection is closed under it: a new one
            assert again.json() == {"once": True} and tap.client.opened == 2
            post = await http.post(f"{tap.origin}/once", content=b"{}")  # on the kept one again: never twice
            assert post.status_code == 502 and "closed the connection without answering" in post.text
            assert tap.client.opened == 2
            assert (await http.post(f"{tap.origin}/once", content=b"{}")).json() == {"once": True}
            garbage = await http.get(f"{tap.origin}/garbage")
            assert garbage.status_code == 502 and "is not HTTP/1.1" in garbage.text
        assert tap.client.opened == 3  # the garbage came on the kept third: an answer began, so not again
        tap_recorder.close()
    notes = [data.decode() for d, data, _ in frames(path) if d == "err"]
    assert any("POST#3" in n and "without answering" in n for n in notes), notes
    assert any("GET#5" in n and "/garbage: the server's answer is not HTTP/1.1" in n for n in notes), notes


def test_the_tap_listens_on_loopback_only():
    for host in ("127.0.0.1", "127.0.0.9", "::1", "[::1]", "localhost"):
        check_listen(host)
    for host in ("0.0.0.0", "192.168.1.10", "::", "example.com"):
        with pytest.raises(UsageError, match="--allow-remote"):
            check_listen(host)
        check_listen(host, allow_remote=True)
    with pytest.raises(UsageError, match="not an http:// or https:// URL"):
        proxy_url("ftp://example.com/mcp", "127.0.0.1", 1)
    assert proxy_url("https://example.com/api/mcp?k=1", "::1", 8080) == "http://[::1]:8080/api/mcp?k=1"
    assert [parse_listen(t) for t in ("127.0.0.1:8808", "[::1]:0", "9000")] == [
        ("127.0.0.1", 8808), ("::1", 0), ("127.0.0.1", 9000)]
    for bad in ("127.0.0.1", "127.0.0.1:http", ":80", "127.0.0.1:70000"):
        with pytest.raises(UsageError, match="HOST:PORT"):
            parse_listen(bad)


async def test_starting_on_another_address_is_refused_before_listening(tmp_path):
    tap = HttpTap("http://127.0.0.1:9/mcp", recorder(tmp_path / "s.mcpsession", "x"))
    with pytest.raises(UsageError, match="loopback"):
        await tap.start("0.0.0.0", 0)
    await tap.close()
    tap.recorder.close()


RUN = """
import sys
from pathlib import Path
from inspector.tap.http import run_proxy
from inspector.tap.record import TapRecorder
rec = TapRecorder(Path(sys.argv[2]), "remote", {"name": "remote"}, live=False)
code = run_proxy("127.0.0.1", 0, sys.argv[1], rec, ready=lambda port: print(port, flush=True))
rec.close()
sys.exit(code)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_run_proxy_serves_until_a_signal(tmp_path, sig):
    path = tmp_path / "run.mcpsession"
    with tap_peers.running() as peer:
        proc = subprocess.Popen([PY, "-c", RUN, peer.origin, str(path)], stdout=subprocess.PIPE, cwd=str(ROOT),
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            port = int(proc.stdout.readline())
            seen = httpx.post(f"http://127.0.0.1:{port}/echo", content=b'{"jsonrpc":"2.0","method":"x"}').json()
            assert seen["body"] == '{"jsonrpc":"2.0","method":"x"}'
            proc.send_signal(sig)
            assert proc.wait(10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
    assert [d for d, _, _ in frames(path)] == ["out", "http", "in"]
