"""HTTP transports against real servers on loopback: Streamable HTTP (both eras),
HTTP+SSE, and what a broken HTTP server does to the CLI and the client."""

from __future__ import annotations

import asyncio
import json
import subprocess

import http_peers
import pytest
from support import PY, ROOT
from test_client_everything import ARGS, elicitation, fill_required, roots, sampling

from inspector.client import Client
from inspector.protocol.versions import Era
from inspector.transport.http import HttpSettings, HttpTransport
from inspector.transport.sse import SseTransport


def spyglass(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "inspector", "--cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=str(ROOT))


def http_client(url: str, frames: list | None = None, sse: bool = False, **kw) -> Client:
    transport = SseTransport(url) if sse else HttpTransport(url, HttpSettings(**kw.pop("settings", {})))
    return Client(transport, timeout=30, traffic=frames.append if frames is not None else None,
                  handlers={"sampling/createMessage": sampling, "elicitation/create": elicitation,
                            "roots/list": roots}, **kw)


def exchanges(frames) -> list[dict]:
    return [f.meta for f in frames if f.direction == "http"]


@pytest.mark.parametrize("mode", ["streamableHttp", "sse"])
async def test_everything_over_http_every_tool(mode):
    frames = []
    with http_peers.everything(mode) as url:
        async with http_client(url, frames, sse=(mode == "sse")) as c:
            assert c.era is Era.LEGACY
            tools = (await c.list_tools())["tools"]
            assert len(tools) >= 12
            for tool in tools:
                if (tool.get("execution") or {}).get("taskSupport") == "required":
                    continue
                args = ARGS.get(tool["name"], fill_required(tool.get("inputSchema", {})))
                result = await c.call_tool(tool["name"], args)
                assert result.get("isError") is not True, (tool["name"], result)
            image = await c.call_tool("get-tiny-image", {})
            data = next(b for b in image["content"] if b["type"] == "image")["data"]
            import base64
            png = base64.b64decode(data)  # arrived whole over SSE
            assert png.startswith(b"\x89PNG") and png.endswith(b"IEND\xaeB`\x82")
    if mode == "streamableHttp":
        methods = [(x["method"], x["status"]) for x in exchanges(frames)]
        assert ("DELETE", 200) in methods  # the session was ended
        session_posts = [x for x in exchanges(frames) if x["method"] == "POST" and x["status"] == 200]
        assert all("Mcp-Session-Id" in x["request_headers"] for x in session_posts[1:])
        assert all(x["request_headers"].get("MCP-Protocol-Version") == "2025-11-25" for x in session_posts[2:])


async def test_get_stream_delivers_server_notifications():
    frames = []
    notes = []
    with http_peers.everything("streamableHttp") as url:
        async with http_client(url, frames, on_notification=lambda m, p: notes.append(m)) as c:
            await c.set_log_level("debug")
            await c.call_tool("toggle-simulated-logging", {})
            for _ in range(200):
                on_get = [
                    f
                    for f in frames
                    if f.direction == "in"
                    and (f.meta or {}).get("stream", "").startswith("GET")
                    and b"notifications/message" in f.data
                ]
                if on_get:
                    break
                await asyncio.sleep(0.05)
            assert on_get, "no notification arrived on the GET stream"
            assert "notifications/message" in notes


@pytest.mark.parametrize(
    "flags, era", [((), Era.MODERN), (("--stateless",), Era.MODERN), (("--legacy-only",), Era.LEGACY)]
)
async def test_sdk_server_over_http(flags, era):
    frames = []
    with http_peers.sdk(*flags) as url:
        async with http_client(url, frames) as c:
            assert c.era is era
            assert (await c.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
            progress = []
            await c.call_tool("slow", {"seconds": 0.3}, on_progress=lambda *a: progress.append(a))
            assert progress
            assert "Hello, spyglass!" in json.dumps(await c.call_tool("ask_name", {}))
            assert (await c.read_resource("sdk://hello"))["contents"]
    calls = [x for x in exchanges(frames) if x["request_headers"].get("Mcp-Method") == "tools/call"]
    if era is Era.MODERN:
        assert calls and all(x["request_headers"]["MCP-Protocol-Version"] == "2026-07-28" for x in calls)
        assert {x["request_headers"]["Mcp-Name"] for x in calls} >= {"add", "slow"}
        assert not any("Mcp-Session-Id" in x["request_headers"] for x in exchanges(frames))


async def test_sdk_legacy_sessions_over_http():
    frames = []
    with http_peers.sdk() as url:
        async with http_client(url, frames, mode="legacy") as c:
            assert c.era is Era.LEGACY
            assert (await c.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}
            assert "Hello, spyglass!" in json.dumps(await c.call_tool("ask_name", {}))  # on the POST stream
    assert any("Mcp-Session-Id" in x["request_headers"] for x in exchanges(frames))


# --- bad input ----------------------------------------------------------------------------


def test_cli_connection_refused_is_exit_4():
    proc = spyglass(f"http://127.0.0.1:{http_peers.free_port()}/mcp")
    assert proc.returncode == 4 and "connection refused" in proc.stderr
    assert json.loads(proc.stderr.strip().splitlines()[-1])["error"]["code"] == "unreachable"


def test_cli_401_is_exit_3_with_the_challenge():
    with http_peers.hostile("auth") as url:
        proc = spyglass(url)
    assert proc.returncode == 3
    assert 'resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"' in proc.stderr
    assert json.loads(proc.stdout)["error"]["www_authenticate"].startswith("Bearer")


def test_cli_500_html_shows_status_and_excerpt():
    with http_peers.hostile("html-500") as url:
        proc = spyglass("--transport", "http", url)
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["kind"] == "http_status"
    line = proc.stderr.strip().splitlines()[-2]  # (the last: the JSON envelope)
    assert "HTTP 500" in line and "Internal Server Error" in line and "Traceback" not in proc.stderr.split(":")[0]


def test_cli_html_reply_is_exit_1():
    with http_peers.hostile("html-reply") as url:
        proc = spyglass("--transport", "http", url)
    assert proc.returncode == 1 and "text/html" in proc.stderr
    assert json.loads(proc.stdout)["error"]["kind"] == "invalid_response"


def test_cli_forgotten_session_says_so():
    with http_peers.hostile("forget-session") as url:
        proc = spyglass("--protocol", "legacy", "--tool-name", "echo", "--tool-arg", "message=x", url)
    assert proc.returncode == 1 and "ended the session" in proc.stderr
    assert json.loads(proc.stdout)["error"]["kind"] == "session_expired"


async def test_cut_sse_stream_is_resumed_in_the_legacy_era():
    frames = []
    with http_peers.hostile("cut-sse") as url:
        async with http_client(url, frames, mode="legacy") as c:
            result = await c.call_tool("echo", {"message": "x"})
    assert result["content"][0]["text"] == "resumed"
    resume = [x for x in exchanges(frames) if x["method"] == "GET" and "Last-Event-ID" in x["request_headers"]]
    assert resume and resume[0]["request_headers"]["Last-Event-ID"].startswith("e1")


async def test_cut_sse_stream_is_reissued_with_a_new_id_in_the_modern_era():
    frames = []
    with http_peers.hostile("cut-sse-modern") as url:
        async with http_client(url, frames) as c:
            assert c.era is Era.MODERN
            result = await c.call_tool("echo", {"message": "again"})
    assert json.loads(result["content"][0]["text"]) == {"message": "again"}
    call_ids = [json.loads(f.data)["id"] for f in frames if f.direction == "out" and b'"tools/call"' in f.data]
    assert len(call_ids) == 2 and call_ids[0] != call_ids[1]


async def test_invalid_header_tools_are_dropped_and_params_mirrored(expect_log):
    expect_log("spyglass.client", "dropped")
    frames = []
    with http_peers.hostile("bad-headers") as url:
        async with http_client(url, frames) as c:
            tools = (await c.list_tools())["tools"]
            assert [t["name"] for t in tools] == ["regional"]
            assert c.rejected_tools[0][0] == "broken" and "not reachable" in c.rejected_tools[0][1]
            result = await c.call_tool("regional", {"region": "Hello, 世界", "shard": 7, "query": "q"})
            assert result.get("isError") is not True
            without = await c.call_tool("regional", {"region": "us-west1", "query": "q"})
            assert without.get("isError") is not True
    sent = [x["request_headers"] for x in exchanges(frames) if x["request_headers"].get("Mcp-Name") == "regional"]
    assert sent[0]["Mcp-Param-Region"] == "=?base64?SGVsbG8sIOS4lueVjA==?=" and sent[0]["Mcp-Param-Shard"] == "7"
    assert "Mcp-Param-Shard" not in sent[1]


def test_cli_warns_about_dropped_tools():
    with http_peers.hostile("bad-headers") as url:
        proc = spyglass(url)
    assert proc.returncode == 0
    assert "tool 'broken' left out" in proc.stderr


def test_secrets_are_masked_in_the_trace(tmp_path):
    trace = tmp_path / "t.jsonl"
    with http_peers.sdk() as url:
        proc = spyglass(
            "--trace",
            str(trace),
            "--auth-token",
            "sekrit-token-123",
            "--header",
            "X-Api-Key: k-999",
            "--header",
            "X-Team: blue",
            url,
        )
    assert proc.returncode == 0, proc.stderr
    text = trace.read_text()
    assert "sekrit-token-123" not in text and "k-999" not in text
    assert "Bearer ••••••" in text and "blue" in text


async def test_modern_cancel_closes_the_stream_instead_of_notifying():
    frames = []
    with http_peers.sdk() as url:
        async with http_client(url, frames) as c:
            assert c.era is Era.MODERN
            progress = []
            task = asyncio.create_task(c.call_tool("slow", {"seconds": 20}, on_progress=lambda *a: progress.append(a)))
            while not progress:
                await asyncio.sleep(0.02)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # the connection is still good for the next call
            assert (await c.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
    assert not any(b"notifications/cancelled" in f.data for f in frames if f.direction == "out")
    assert not any(b'"slept' in f.data for f in frames if f.direction == "in")


def test_cli_falls_back_to_http_sse_when_there_is_no_streamable_endpoint(tmp_path):
    trace = tmp_path / "t.jsonl"
    with http_peers.everything("sse") as url:
        proc = spyglass(
            "--trace", str(trace), "--tool-name", "echo", "--tool-arg", "message=via fallback", url + "?client=spyglass"
        )  # does not end in /sse: Streamable HTTP is tried first
    assert proc.returncode == 0, proc.stderr
    assert "via fallback" in proc.stdout
    methods = [
        json.loads(r["text"])["method"] for r in map(json.loads, trace.read_text().splitlines()) if r["dir"] == "http"
    ]
    assert methods[0] == "POST" and "GET" in methods


def test_cli_names_both_failures_when_no_transport_answers():
    with http_peers.everything("sse") as url:
        proc = spyglass(url.rsplit("/", 1)[0] + "/nothing-here")
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["kind"] == "connect"
    assert "no MCP endpoint" in proc.stderr and "HTTP+SSE answered HTTP 404" in proc.stderr
