"""Streamable HTTP at its edges, against small HTTP servers running on loopback in the test's own event loop:
authorization rounds, error bodies, broken and resumed answer streams, the legacy GET stream, failing
consumers, and connections that fail in each way httpx can report.

`Loopback` (a plain asyncio HTTP/1.1 server whose handler writes the raw answer) and `Wire` (a transport's
callbacks, recorded) are shared with test_sse_edges.py."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import pytest
from support import SLOWDOWN

from inspector.errors import AuthRequired, ConnectError, HttpStatusError, InvalidResponse, TransportClosed
from inspector.protocol.versions import Era
from inspector.transport.http import HttpSettings, HttpTransport
from inspector.transport.http_common import ssl_context

# --- a loopback HTTP server whose handler writes the raw answer -----------------------------------------


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Reply:
    """Writes one answer on the connection. Every answer closes the connection after it (`Connection: close`),
    so a streamed body ends cleanly with `end()` and breaks when the handler returns without it."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    def _head(self, status: int, headers: dict[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    async def send(self, status: int, body: bytes = b"", ctype: str | None = "application/json",
                   headers: dict[str, str] | None = None) -> None:
        head = {"Content-Length": str(len(body)), **({"Content-Type": ctype} if ctype else {}), **(headers or {})}
        self.writer.write(self._head(status, head) + body)
        await self.writer.drain()

    async def json(self, obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        await self.send(status, json.dumps(obj).encode(), headers=headers)

    async def stream(self, status: int = 200, ctype: str = "text/event-stream",
                     headers: dict[str, str] | None = None) -> None:
        """Starts a chunked body."""
        self.writer.write(self._head(status, {"Content-Type": ctype, "Transfer-Encoding": "chunked",
                                              **(headers or {})}))
        await self.writer.drain()

    async def chunk(self, data: bytes) -> None:
        self.writer.write(b"%x\r\n%s\r\n" % (len(data), data))
        await self.writer.drain()

    async def event(self, data: str | None = None, *, id: str | None = None, retry: int | None = None,
                    event: str | None = None) -> None:
        text = "".join(f"{k}: {v}\n" for k, v in (("event", event), ("id", id), ("retry", retry), ("data", data))
                       if v is not None)
        await self.chunk((text + "\n").encode())

    async def end(self) -> None:
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()


Handler = Callable[[Request, Reply], Awaitable[None]]


async def hang() -> None:
    """Never answer (until the server is stopped)."""
    await asyncio.Event().wait()


class Loopback:
    """`async with Loopback(handler) as server`: an HTTP/1.1 server on 127.0.0.1 (a free port) that reads each
    request and lets `handler(request, reply)` answer it; a handler that writes nothing drops the connection.
    Every request is kept in `requests`; leaving the block stops the server and its connections."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.tls = tls
        self.requests: list[Request] = []
        self._conns: set[asyncio.Task[Any]] = set()
        self._server: asyncio.Server | None = None
        self.base = self.url = ""

    async def __aenter__(self) -> Loopback:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        port = self._server.sockets[0].getsockname()[1]
        self.base = f"{'https' if self.tls else 'http'}://127.0.0.1:{port}"
        self.url = self.base + "/mcp"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._conns):
            task.cancel()
        await asyncio.gather(*self._conns, return_exceptions=True)
        await self._server.wait_closed()

    def sent(self, method: str) -> list[Request]:
        return [r for r in self.requests if r.method == method]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._conns.add(task)
        try:
            line = await reader.readline()
            if not line:
                return
            method, path, _ = line.decode().split(" ", 2)
            headers: dict[str, str] = {}
            while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = raw.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", 0)))
            request = Request(method, path, headers, body)
            self.requests.append(request)
            await self.handler(request, Reply(writer))
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass  # the client went away
        except asyncio.CancelledError:
            pass  # the server is stopping (a cancelled connection task makes asyncio 3.11 log an error)
        finally:
            self._conns.discard(task)
            writer.close()


# --- a transport's callbacks, recorded ---------------------------------------------------------------------


class Wire:
    def __init__(self, transport: Any) -> None:
        self.frames: list[tuple[bytes, dict[str, Any] | None]] = []
        self.logs: list[bytes] = []
        self.closed: list[Any] = []
        self.errors: dict[Any, Exception] = {}
        self.exchanges: list[dict[str, Any]] = []
        self.lost: list[Any] = []
        transport.on_frame = lambda raw, mono, meta=None: self.frames.append((raw, meta))
        transport.on_log = lambda line, mono: self.logs.append(line)
        transport.on_close = self.closed.append
        transport.on_request_error = lambda wire_id, error: self.errors.__setitem__(wire_id, error)
        transport.on_exchange = lambda record, mono: self.exchanges.append(record)
        transport.on_stream_lost = self.lost.append

    def answer(self, wire_id: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
        for raw, meta in self.frames:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("id") == wire_id and ("result" in msg or "error" in msg):
                return msg, meta
        raise AssertionError(f"no answer to {wire_id!r} among {self.frames}")


async def until(cond: Callable[[], object], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout * SLOWDOWN
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


def request(wire_id: Any, method: str = "tools/call", **params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": wire_id, "method": method, "params": params}).encode()


def notification(method: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": method}).encode()


def result(wire_id: Any, text: str = "ok") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": wire_id, "result": {"content": [{"type": "text", "text": text}]}}


async def echo(req: Request, reply: Reply) -> None:
    """Answers each request with a result naming its id; a GET gets 405 (no GET stream)."""
    if req.method != "POST":
        return await reply.send(405, ctype=None)
    msg = req.json()
    if isinstance(msg, dict) and "id" in msg:
        return await reply.json(result(msg["id"], f"echo {msg['id']}"))
    await reply.send(202, ctype=None)


async def connected(transport: HttpTransport) -> Wire:
    wire = Wire(transport)
    await transport.open()
    return wire


# --- lifecycle ---------------------------------------------------------------------------------------------


async def test_sending_before_open_or_after_close_is_refused():
    async with Loopback(echo) as server:
        t = HttpTransport(server.url)
        assert t.describe() == server.url
        with pytest.raises(TransportClosed, match="closed"):
            await t.send(request(1))
        wire = await connected(t)
        await t.send(request(1))
        await until(lambda: wire.frames)
        await t.close()
        await t.close()  # idempotent: reported once
        with pytest.raises(TransportClosed, match="the HTTP connection is closed"):
            await t.send(request(2))
    assert [c.expected for c in wire.closed] == [True]
    assert wire.answer(1)[0]["result"]["content"][0]["text"] == "echo 1"


async def test_a_legacy_request_is_not_aborted_by_closing_its_stream():
    release = asyncio.Event()

    async def slow(req: Request, reply: Reply) -> None:
        if req.method != "POST":
            return await reply.send(405, ctype=None)
        await release.wait()
        await reply.json(result(req.json()["id"]))

    async with Loopback(slow) as server:
        t = HttpTransport(server.url)
        wire = await connected(t)
        t.negotiated(Era.LEGACY, "2025-11-25")
        await t.send(request(1))
        await until(lambda: server.sent("POST"))
        assert t.abort(99) is False  # no such request
        assert t.abort(1) is False  # legacy: cancelled by a notification, its stream stays open
        release.set()
        await until(lambda: wire.frames)
        await t.close()
    assert wire.answer(1)[0]["result"]


async def test_a_message_that_is_not_an_object_is_posted_as_it_is():
    async def parse_error(req: Request, reply: Reply) -> None:
        try:
            msg = req.json()
        except ValueError:
            return await reply.json({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
                                    status=400)
        await reply.json([result(m["id"]) for m in msg])  # a batch: answered as one

    async with Loopback(parse_error) as server:
        t = HttpTransport(server.url)
        wire = await connected(t)
        await t.send(b"{not json")
        await until(lambda: len(wire.frames) == 1)
        batch = json.dumps([{"jsonrpc": "2.0", "id": 7, "method": "ping"}]).encode()
        await t.send(batch)
        await until(lambda: len(wire.frames) == 2)
        await t.close()
    assert [r.body for r in server.requests] == [b"{not json", batch]
    for r in server.requests:  # posted with the usual headers, and none of a request's
        assert r.headers["accept"] == "application/json, text/event-stream"
        assert r.headers["content-type"] == "application/json" and "mcp-method" not in r.headers
    (error, error_meta), (answers, answers_meta) = wire.frames
    assert json.loads(error)["error"]["code"] == -32700 and error_meta == {"stream": "POST#1", "status": 400}
    assert json.loads(answers)[0]["id"] == 7 and "request" not in (answers_meta or {})
    assert not wire.errors and not wire.logs


async def test_settle_waits_no_longer_than_the_connect_timeout_for_the_get_stream():
    async def no_get(req: Request, reply: Reply) -> None:
        if req.method == "GET":
            return await hang()  # the GET stream never opens
        await echo(req, reply)

    async with Loopback(no_get) as server:
        t = HttpTransport(server.url, HttpSettings(connect_timeout=0.3))
        wire = await connected(t)
        await t.settle()  # nothing to wait for before the handshake
        t.negotiated(Era.LEGACY, "2025-11-25")
        start = time.monotonic()
        await t.settle()
        waited = time.monotonic() - start
        await t.send(request(1))  # the connection works all the same
        await until(lambda: wire.frames)
        await t.close()
    assert 0.25 <= waited < 3 * SLOWDOWN
    assert server.sent("GET")[0].headers["accept"] == "text/event-stream"
    assert wire.answer(1)[0]["result"]


async def test_closing_a_session_whose_delete_fails_still_closes():
    async def session(req: Request, reply: Reply) -> None:
        if req.method == "DELETE":
            return  # dropped without an answer
        if req.method == "GET":
            return await reply.send(405, ctype=None)
        await reply.json(result(req.json()["id"]), headers={"Mcp-Session-Id": "s-1"})

    async with Loopback(session) as server:
        t = HttpTransport(server.url)
        wire = await connected(t)
        await t.send(request(1, "initialize"))
        await until(lambda: wire.frames)
        assert t.session_id == "s-1"
        t.negotiated(Era.LEGACY, "2025-03-26")
        await t.send(request(2))
        await until(lambda: len(wire.frames) == 2)
        await t.close()
    (delete,) = server.sent("DELETE")
    assert delete.headers["mcp-session-id"] == "s-1"
    # before 2025-06-18 no MCP-Protocol-Version header, also on the later requests
    assert "mcp-protocol-version" not in delete.headers and "mcp-protocol-version" not in server.sent("POST")[1].headers
    assert [x["method"] for x in wire.exchanges].count("DELETE") == 0  # no answer came to record
    assert [c.expected for c in wire.closed] == [True]


# --- authorization -----------------------------------------------------------------------------------------


class Provider:
    """An authorization provider that grants a token on the first 401 (or refuses to) and refuses every 403."""

    def __init__(self, grant: bool = True) -> None:
        self.grant = grant
        self.token: str | None = None
        self.transport: Any = None
        self.flows: list[tuple[int, bool]] = []  # (status, transport.authorizing while the flow ran)

    async def request_headers(self, method: str, url: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def on_unauthorized(self, client: Any, url: str, response: Any) -> bool:
        self.flows.append((response.status_code, self.transport.authorizing))
        if self.grant:
            self.token = "fresh"
        return self.grant

    async def on_forbidden(self, client: Any, url: str, response: Any) -> bool:
        self.flows.append((response.status_code, self.transport.authorizing))
        return False


CHALLENGE = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"'


async def guarded(req: Request, reply: Reply) -> None:
    msg = req.json()
    if msg.get("method") == "admin/reset":
        return await reply.json({"error": "insufficient_scope"}, status=403)
    if req.headers.get("authorization") != "Bearer fresh":
        return await reply.send(401, b'{"error":"unauthorized"}', headers={"WWW-Authenticate": CHALLENGE})
    await reply.json(result(msg["id"]))


async def test_a_401_runs_the_authorization_flow_and_sends_the_request_again():
    async with Loopback(guarded) as server:
        provider = Provider()
        t = HttpTransport(server.url, HttpSettings(auth=provider))
        provider.transport = t
        wire = await connected(t)
        assert t.authorized_at is None
        await t.send(request(1))
        await until(lambda: wire.frames)
        await t.close()
    assert provider.flows == [(401, True)]  # authorizing while the flow ran
    assert not t.authorizing and t.authorized_at is not None and t.authorized_at <= time.monotonic()
    assert [r.headers.get("authorization") for r in server.sent("POST")] == [None, "Bearer fresh"]
    assert [x["status"] for x in wire.exchanges] == [401, 200]
    assert wire.answer(1)[1]["status"] == 200


async def test_a_refused_authorization_fails_the_request_with_the_challenge():
    async with Loopback(guarded) as server:
        provider = Provider(grant=False)
        t = HttpTransport(server.url, HttpSettings(auth=provider))
        provider.transport = t
        wire = await connected(t)
        await t.send(request(1))
        await t.send(request(2, "admin/reset"))
        await until(lambda: len(wire.errors) == 2)
        await t.close()
    assert sorted(provider.flows) == [(401, True), (403, True)]
    assert len(server.sent("POST")) == 2  # neither was sent again
    unauthorized, forbidden = wire.errors[1], wire.errors[2]
    assert isinstance(unauthorized, AuthRequired) and unauthorized.details["www_authenticate"] == CHALLENGE
    assert f"{server.url} requires authorization (HTTP 401); WWW-Authenticate: {CHALLENGE}" == unauthorized.message
    assert isinstance(forbidden, HttpStatusError) and forbidden.details["status"] == 403
    assert forbidden.message == f'HTTP 403 Forbidden from {server.url}: {{"error": "insufficient_scope"}}'
    assert not wire.frames


async def test_an_authorization_flow_that_fails_fails_the_request_naming_its_step():
    class NoTokenEndpoint(Provider):
        async def on_unauthorized(self, client: Any, url: str, response: Any) -> bool:
            raise AuthRequired("token request failed: HTTP 400 invalid_grant", url=url)

    async with Loopback(guarded) as server:
        t = HttpTransport(server.url, HttpSettings(auth=NoTokenEndpoint()))
        wire = await connected(t)
        await t.send(request(1))
        await until(lambda: wire.errors)
        await t.close()
    error = wire.errors[1]
    assert isinstance(error, AuthRequired) and error.message == "token request failed: HTTP 400 invalid_grant"
    assert not t.authorizing and len(server.sent("POST")) == 1


async def test_a_failing_authorization_provider_still_ends_the_request(expect_log):
    expect_log("spyglass.http", "POST failed")

    class Locked(Provider):
        async def request_headers(self, method: str, url: str) -> dict[str, str]:
            raise RuntimeError("the keyring is locked")

    async with Loopback(echo) as server:
        t = HttpTransport(server.url, HttpSettings(auth=Locked()))
        wire = await connected(t)
        await t.send(request(1))
        await until(lambda: wire.errors)
        await t.close()
    assert not server.requests
    error = wire.errors[1]
    assert isinstance(error, TransportClosed)
    assert error.message == f"POST to {server.url} failed: RuntimeError: the keyring is locked"


# --- answers that carry no message ---------------------------------------------------------------------------


async def odd_answers(req: Request, reply: Reply) -> None:
    msg = req.json()
    key = msg.get("id", msg.get("method"))
    if key == 1:
        return await reply.send(200, b"")  # application/json, but nothing in it
    if key == 2:
        return await reply.send(500, b"{not json at all")
    if key == 3:
        return await reply.json({"detail": "no such tool"}, status=400)
    if key == 4:
        return await reply.json({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "bad"}}, 404)
    if key == "notifications/quiet":
        return await reply.send(200, b"", ctype="text/plain")
    if key == "notifications/html":
        return await reply.send(200, b"<html><body>Welcome   to\n nginx!</body></html>", ctype="text/html")


async def test_answers_without_a_message_fail_their_request_in_words(expect_log):
    expect_log("spyglass.http", "text/html")
    async with Loopback(odd_answers) as server:
        t = HttpTransport(server.url)
        wire = await connected(t)
        for wire_id in (1, 2, 3, 4):
            await t.send(request(wire_id))
        await t.send(notification("notifications/quiet"))
        await t.send(notification("notifications/html"))
        await until(lambda: len(wire.errors) == 3 and wire.frames and wire.logs)
        await t.close()
    empty, broken, detail = wire.errors[1], wire.errors[2], wire.errors[3]
    assert isinstance(empty, InvalidResponse) and empty.message == "HTTP 200 with an empty JSON body for request 1"
    assert isinstance(broken, HttpStatusError) and broken.details["excerpt"] == "{not json at all"
    assert broken.message == f"HTTP 500 Internal Server Error from {server.url}: {{not json at all"
    assert isinstance(detail, HttpStatusError) and detail.details["status"] == 400
    assert detail.message == f'HTTP 400 Bad Request from {server.url}: {{"detail": "no such tool"}}'
    # a JSON-RPC error without an id answers the request its POST carried
    assert wire.answer(4)[0]["error"]["message"] == "bad" and wire.answer(4)[1]["status"] == 404
    # a notification's empty answer is nothing to report; an HTML page is, as a log line
    assert wire.logs == [b"[http] HTTP 200 reply has Content-Type text/html; expected application/json or "
                         b"text/event-stream: <html><body>Welcome to nginx!</body></html>"]


async def test_an_endless_error_page_is_read_only_up_to_the_cap():
    async def endless(req: Request, reply: Reply) -> None:
        await reply.stream(500, "text/html")
        block = b"<p>" + b"x" * (1024 * 1024 - 7) + b"</p>\n"
        try:
            while True:
                await reply.chunk(block)
        except ConnectionError:
            pass  # the client stopped reading

    async with Loopback(endless) as server:
        t = HttpTransport(server.url)
        wire = await connected(t)
        await t.send(request(1))
        await until(lambda: wire.errors, timeout=20)
        await t.close()
    error = wire.errors[1]
    assert isinstance(error, HttpStatusError) and error.details["status"] == 500
    assert error.details["excerpt"].startswith("<p>xxx") and error.details["excerpt"].endswith("…")


async def test_an_endless_401_page_is_read_only_up_to_the_cap_before_the_flow_runs():
    async def endless_401(req: Request, reply: Reply) -> None:
        if req.headers.get("authorization") == "Bearer fresh":
            return await reply.json(result(req.json()["id"]))
        await reply.stream(401, "text/html", headers={"WWW-Authenticate": CHALLENGE})
        try:
            while True:
                await reply.chunk(b"x" * (1024 * 1024))
        except ConnectionError:
            pass  # the client stopped reading

    async with Loopback(endless_401) as server:
        provider = Provider()
        t = HttpTransport(server.url, HttpSettings(auth=provider))
        provider.transport = t
        wire = await connected(t)
        await t.send(request(1))
        await until(lambda: wire.frames, timeout=20)  # the flow ran on the headers and the request went again
        await t.close()
    assert provider.flows == [(401, True)] and wire.answer(1)[1]["status"] == 200


# --- answer streams ----------------------------------------------------------------------------------------


async def test_a_broken_answer_stream_is_resumed_after_the_servers_retry_delay():
    async def cut(req: Request, reply: Reply) -> None:
        if req.method == "GET" and req.headers.get("last-event-id") == "p1":
            await reply.stream()
            await reply.event(json.dumps(result(1, "resumed")), id="p2")
            return await reply.end()
        if req.method == "GET":
            return await reply.send(405, ctype=None)
        await reply.stream()
        await reply.event("not json")  # delivered as it is: the client reports it as malformed
        progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1}}
        await reply.event(json.dumps(progress), id="p1", retry=5)
        # the chunked body ends without its last chunk: the stream broke

    async with Loopback(cut) as server:
        t = HttpTransport(server.url)
        wire = await connected(t)
        t.negotiated(Era.LEGACY, "2025-11-25")
        await t.send(request(1))
        await until(lambda: len(wire.frames) == 3)
        await t.close()
    (garbage, garbage_meta), (progress, _), (answer, answer_meta) = wire.frames
    # the POST is numbered when the message is handed over (its out frame names it too)
    assert garbage == b"not json" and garbage_meta == {"stream": "POST#1", "event_id": None, "event": "message",
                                                       "request": 1}
    assert json.loads(progress)["method"] == "notifications/progress"
    assert json.loads(answer)["result"]["content"][0]["text"] == "resumed"
    assert answer_meta == {"stream": "GET#3 (resume after p1)", "event_id": "p2", "event": "message", "request": 1}
    resume = [r for r in server.sent("GET") if "last-event-id" in r.headers]
    assert len(resume) == 1 and resume[0].headers["mcp-protocol-version"] == "2025-11-25"
    assert not wire.errors


def stream_then_end(*events: dict[str, Any], resume: Handler | None = None) -> Handler:
    """POSTs answer with an SSE stream of `events` that ends before the answer; GETs go to `resume`."""

    async def handler(req: Request, reply: Reply) -> None:
        if req.method == "GET":
            if resume is not None and "last-event-id" in req.headers:
                return await resume(req, reply)
            return await reply.send(405, ctype=None)
        await reply.stream()
        for e in events:
            await reply.event(**e)
        await reply.end()

    return handler


PROGRESS = json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1}})


async def answer_stream_error(handler: Handler, era: Era | None) -> tuple[Exception, Wire, Loopback]:
    async with Loopback(handler) as server:
        t = HttpTransport(server.url)
        wire = await connected(t)
        if era is not None:
            t.negotiated(era, "2025-11-25")
        await t.send(request(1))
        await until(lambda: wire.errors)
        await t.close()
    assert not wire.lost
    return wire.errors[1], wire, server


async def test_a_stream_ending_before_the_answer_and_the_handshake_fails_the_request():
    error, wire, _ = await answer_stream_error(stream_then_end({"data": PROGRESS}), era=None)
    assert isinstance(error, TransportClosed)
    assert error.message == "the server closed the stream of request 1 before answering"
    assert json.loads(wire.frames[0][0])["method"] == "notifications/progress"  # what came is delivered


async def test_a_legacy_stream_without_event_ids_cannot_be_resumed():
    error, wire, server = await answer_stream_error(stream_then_end({"data": PROGRESS}), era=Era.LEGACY)
    assert error.message == ("the server closed the stream of request 1 before answering, "
                             "without event ids to resume from")
    assert not [r for r in server.sent("GET") if "last-event-id" in r.headers]


async def test_a_refused_resumption_fails_the_request():
    async def gone(req: Request, reply: Reply) -> None:
        await reply.send(404, b"no such stream", ctype="text/plain")

    error, wire, server = await answer_stream_error(stream_then_end({"id": "p1", "retry": 1}, resume=gone),
                                                    era=Era.LEGACY)
    assert error.message == "the stream of request 1 broke and resuming it failed (HTTP 404)"
    assert [x["stream"] for x in wire.exchanges if x["status"] == 404] == ["GET#3 (resume after p1)"]


async def test_resuming_gives_up_after_five_attempts():
    async def again(req: Request, reply: Reply) -> None:
        n = int(req.headers["last-event-id"][1:])
        await reply.stream()
        await reply.event(id=f"p{n + 1}", retry=1)  # and ends again without the answer
        await reply.end()

    error, _, server = await answer_stream_error(stream_then_end({"id": "p1", "retry": 1}, resume=again),
                                                 era=Era.LEGACY)
    assert error.message == "the stream of request 1 broke 6 times; gave up resuming"
    assert [r.headers["last-event-id"] for r in server.sent("GET") if "last-event-id" in r.headers] == [
        "p1", "p2", "p3", "p4", "p5"]


async def test_the_legacy_get_stream_reconnects_from_its_last_event_id():
    def note(n: int) -> str:
        return json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": n}})

    async def get_stream(req: Request, reply: Reply) -> None:
        if req.method == "POST":
            return await echo(req, reply)
        last = req.headers.get("last-event-id")
        if last is None:
            await reply.stream()
            await reply.event(note(1), id="g1", retry=5)
            return  # broken: the chunked body never ends
        if last == "g1":
            await reply.stream()
            await reply.event(note(2), id="g2", retry=5)
            return await reply.end()
        await reply.send(405, ctype=None)  # no more: the transport stops asking

    async with Loopback(get_stream) as server:
        t = HttpTransport(server.url)
        wire = await connected(t)
        t.negotiated(Era.LEGACY, "2025-11-25")
        await t.settle()
        await until(lambda: len(server.sent("GET")) == 3 and len(wire.exchanges) == 3)
        await t.send(request(1))  # requests go on as before
        await until(lambda: len(wire.frames) == 3)
        await asyncio.sleep(0.05)  # ten times the retry delay: time enough for a fourth GET that must not come
        await t.close()
    gets = server.sent("GET")
    assert len(gets) == 3  # the 405 ended the reconnecting
    assert [r.headers.get("last-event-id") for r in gets] == [None, "g1", "g2"]
    assert all(r.headers["mcp-protocol-version"] == "2025-11-25" for r in gets)
    notes = [(json.loads(raw)["params"]["data"], meta) for raw, meta in wire.frames[:2]]
    assert notes == [(1, {"stream": "GET#1", "event_id": "g1", "event": "message"}),
                     (2, {"stream": "GET#2", "event_id": "g2", "event": "message"})]
    assert wire.answer(1)[0]["result"]


# --- consumers that fail -----------------------------------------------------------------------------------


async def test_a_failing_consumer_does_not_stop_the_transport(expect_log):
    expect_log("spyglass.http", "frame consumer failed")
    expect_log("spyglass.http", "exchange consumer failed")
    async with Loopback(echo) as server:
        t = HttpTransport(server.url)
        wire = await connected(t)
        frames = []

        def picky(raw: bytes, mono: float, meta: Any = None) -> None:
            frames.append(raw)
            if len(frames) == 1:
                raise ValueError("cannot take the first")

        def broken_exchange(record: dict[str, Any], mono: float) -> None:
            raise KeyError(record["method"])

        t.on_frame = picky
        t.on_exchange = broken_exchange
        await t.send(request(1))
        await until(lambda: frames)
        await t.send(request(2))
        await until(lambda: len(frames) == 2)
        t.on_exchange = None  # nobody records exchanges: the transport does not need anyone to
        await t.send(request(3))
        await until(lambda: len(frames) == 3)
        await t.close()
    assert [json.loads(f)["id"] for f in frames] == [1, 2, 3]
    assert not wire.errors and not wire.exchanges


# --- connections that fail ---------------------------------------------------------------------------------


async def test_a_server_dropping_the_connection_fails_the_request():
    async def drop(req: Request, reply: Reply) -> None:
        return  # reads the request, answers nothing, closes

    async with Loopback(drop) as server:
        t = HttpTransport(server.url)
        wire = await connected(t)
        await t.send(request(1))
        await until(lambda: wire.errors)
        await t.close()
    error = wire.errors[1]
    assert isinstance(error, TransportClosed)
    assert error.message == f"the connection to {server.url} broke: Server disconnected without sending a response."


async def test_a_connect_that_hangs_times_out_after_the_connect_timeout():
    # A listening socket whose accept queue is full and never accepted: the kernel drops further SYNs,
    # so connecting hangs as it does towards a host that does not answer.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    filling = []
    try:
        for _ in range(4):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            filling.append(s)
        url = f"http://127.0.0.1:{port}/mcp"
        t = HttpTransport(url, HttpSettings(connect_timeout=0.3))
        wire = await connected(t)
        start = time.monotonic()
        await t.send(request(1))
        await until(lambda: wire.errors)
        took = time.monotonic() - start
        await t.close()
    finally:
        for s in filling:
            s.close()
        listener.close()
    error = wire.errors[1]
    assert isinstance(error, ConnectError) and error.details["url"] == url
    assert error.message == f"connecting to {url} timed out after 0.3 s"
    assert took >= 0.25


def self_signed(tmp_path) -> ssl.SSLContext:
    """A server context with a fresh self-signed certificate for 127.0.0.1."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return context


async def test_a_self_signed_certificate_is_refused_unless_insecure(tmp_path):
    assert ssl_context(True) is False and isinstance(ssl_context(False), ssl.SSLContext)
    async with Loopback(echo, tls=self_signed(tmp_path)) as server:
        strict = HttpTransport(server.url)
        refused = await connected(strict)
        await strict.send(request(1))
        await until(lambda: refused.errors)
        await strict.close()
        insecure = HttpTransport(server.url, HttpSettings(insecure=True))
        accepted = await connected(insecure)
        await insecure.send(request(2))
        await until(lambda: accepted.frames)
        await insecure.close()
    error = refused.errors[1]
    assert isinstance(error, ConnectError)
    # the OS's words for it, not httpx's wrapper
    assert error.message.startswith(f"cannot connect to {server.url}: [SSL: CERTIFICATE_VERIFY_FAILED]")
    assert "self-signed certificate" in error.message
    assert accepted.answer(2)[0]["result"] and len(server.sent("POST")) == 1
