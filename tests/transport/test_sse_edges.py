"""HTTP+SSE (2024-11-05) at its edges, against small servers on loopback in the test's own event loop: the
endpoint event (late, missing, elsewhere), authorization while connecting, a GET stream that ends or breaks,
POSTs that fail, and consumers that fail."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from support import SLOWDOWN
from test_http_edges import CHALLENGE, Loopback, Provider, Reply, Request, Wire, request, result, until

from inspector.errors import AuthRequired, ConnectError, HttpStatusError, TransportClosed
from inspector.transport.http_common import HttpSettings
from inspector.transport.sse import SseTransport


class SseServer:
    """The two halves of an HTTP+SSE server: GET /sse sends the `endpoint` event, then each item of `queue`
    as a `message` event ("END" ends the stream, "CUT" breaks it); a POST goes to `post`, by default
    202 Accepted and the request's answer on the stream."""

    def __init__(self, post: Any = None, endpoint: str = "/messages?session=1") -> None:
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.post = post or self.accept
        self.endpoint = endpoint

    async def accept(self, req: Request, reply: Reply) -> None:
        await reply.send(202, ctype=None)
        msg = req.json()
        if "id" in msg:
            self.queue.put_nowait(json.dumps(result(msg["id"])))

    async def __call__(self, req: Request, reply: Reply) -> None:
        if req.method == "POST":
            return await self.post(req, reply)
        await reply.stream()
        await reply.event(self.endpoint, event="endpoint")
        while True:
            item = await self.queue.get()
            if item == "CUT":
                return
            if item == "END":
                return await reply.end()
            await reply.event(item, event="message", id=f"m{self.queue.qsize()}")


def sse_url(server: Loopback) -> str:
    return server.base + "/sse"


async def test_messages_go_to_the_endpoint_and_answers_come_on_the_stream():
    async def post(req: Request, reply: Reply) -> None:
        msg = json.loads(req.body) if req.body.startswith(b"{\"") else None
        if msg is None:
            return await reply.send(400, b"Invalid message: not JSON", ctype="text/plain")
        if msg["id"] == 2:
            return await reply.send(500, b"<h1>Internal   Server\nError</h1>", ctype="text/html")
        await sse.accept(req, reply)

    sse = SseServer(post)
    async with Loopback(sse) as server:
        t = SseTransport(sse_url(server))
        assert t.describe() == sse_url(server)
        with pytest.raises(TransportClosed, match="the SSE connection is closed"):
            await t.send(request(1))
        wire = Wire(t)
        await t.open()
        await t.open()  # already open: no second stream
        assert t.endpoint == server.base + "/messages?session=1"
        assert not t.authorizing and t.authorized_at is None
        await t.send(request(1))
        await t.send(b"{not json")
        await t.send(request(2))
        await until(lambda: wire.frames and wire.logs and wire.errors)
        await t.close()
        await t.close()
        with pytest.raises(TransportClosed):
            await t.send(request(3))
    assert len(server.sent("GET")) == 1
    assert [r.path for r in server.sent("POST")] == ["/messages?session=1"] * 3
    assert wire.answer(1) == (result(1), {"stream": "GET#sse", "event_id": "m0", "event": "message"})
    assert wire.logs == [f"[sse] HTTP 400 from {t.endpoint}: Invalid message: not JSON".encode()]
    error = wire.errors[2]
    assert isinstance(error, HttpStatusError) and error.details["status"] == 500
    assert error.message == f"HTTP 500 from {t.endpoint}: <h1>Internal Server Error</h1>"
    assert [(x["method"], x["stream"], x["status"]) for x in wire.exchanges] == [
        ("GET", "GET#sse", 200), ("POST", "POST#1", 202), ("POST", "POST#2", 400), ("POST", "POST#3", 500)]
    assert [(c.reason, c.expected) for c in wire.closed] == [("connection closed", True)]


async def test_a_failing_consumer_does_not_stop_the_stream(expect_log):
    expect_log("spyglass.sse", "frame consumer failed")
    expect_log("spyglass.sse", "exchange consumer failed")
    sse = SseServer()
    async with Loopback(sse) as server:
        t = SseTransport(sse_url(server))
        wire = Wire(t)
        frames = []

        def picky(raw: bytes, mono: float, meta: Any = None) -> None:
            frames.append(raw)
            if len(frames) == 1:
                raise ValueError("cannot take the first")

        def broken_exchange(record: dict[str, Any], mono: float) -> None:
            raise KeyError(record["method"])

        t.on_frame = picky
        t.on_exchange = broken_exchange
        await t.open()
        await t.send(request(1))
        await until(lambda: frames)
        t.on_exchange = None  # nobody records exchanges: the transport does not need anyone to
        await t.send(request(2))
        await until(lambda: len(frames) == 2)
        await t.close()
    assert [json.loads(f)["id"] for f in frames] == [1, 2]
    assert not wire.errors and not wire.logs


# --- connecting ------------------------------------------------------------------------------------------


async def test_a_stream_without_an_endpoint_event_times_out():
    async def silent(req: Request, reply: Reply) -> None:
        await reply.stream()
        await reply.chunk(b": keep-alive\n\n")
        await asyncio.Event().wait()

    async with Loopback(silent) as server:
        t = SseTransport(sse_url(server), HttpSettings(connect_timeout=0.3))
        Wire(t)
        start = time.monotonic()
        with pytest.raises(ConnectError) as caught:
            await t.open()
        took = time.monotonic() - start
    assert caught.value.message == (f"{sse_url(server)} sent no `endpoint` event within 0.3 s; "
                                    "it may not be an HTTP+SSE MCP server")
    assert took >= 0.29


async def test_signing_in_while_connecting_does_not_count_as_the_servers_delay():
    timeout = 0.25 * SLOWDOWN
    sse = SseServer()

    async def guarded(req: Request, reply: Reply) -> None:
        if req.method == "GET" and req.headers.get("authorization") != "Bearer fresh":
            return await reply.send(401, b"{}", headers={"WWW-Authenticate": CHALLENGE})
        await sse(req, reply)

    class SlowSignIn(Provider):
        async def on_unauthorized(self, client: Any, url: str, response: Any) -> bool:
            await asyncio.sleep(2 * timeout)  # the user takes longer than the connect timeout
            return await super().on_unauthorized(client, url, response)

    async with Loopback(guarded) as server:
        provider = SlowSignIn()
        t = SseTransport(sse_url(server), HttpSettings(auth=provider, connect_timeout=timeout))
        provider.transport = t
        wire = Wire(t)
        start = time.monotonic()
        await t.open()
        took = time.monotonic() - start
        await t.send(request(1))
        await until(lambda: wire.frames)
        await t.close()
    assert took >= 2 * timeout * 0.95
    assert provider.flows == [(401, True)]
    assert not t.authorizing and t.authorized_at is not None
    assert [r.headers.get("authorization") for r in server.sent("GET")] == [None, "Bearer fresh"]
    assert server.sent("POST")[0].headers["authorization"] == "Bearer fresh"
    assert wire.answer(1)[0] == result(1)


async def open_fails(handler: Any, url: str | None = None) -> Exception:
    async with Loopback(handler) as server:
        t = SseTransport(url or sse_url(server))
        wire = Wire(t)
        with pytest.raises(Exception) as caught:
            await t.open()
        with pytest.raises(TransportClosed):  # the attempt left nothing open
            await t.send(request(1))
    assert not wire.closed
    return caught.value


async def test_a_401_without_an_authorization_provider_names_the_challenge():
    async def unauthorized(req: Request, reply: Reply) -> None:
        await reply.send(401, b"{}", headers={"WWW-Authenticate": CHALLENGE})

    error = await open_fails(unauthorized)
    assert isinstance(error, AuthRequired) and error.details["www_authenticate"] == CHALLENGE
    assert error.message.endswith(f"requires authorization (HTTP 401); WWW-Authenticate: {CHALLENGE}")


async def test_an_answer_that_is_not_a_stream_fails_to_connect_with_its_excerpt():
    async def not_found(req: Request, reply: Reply) -> None:
        await reply.send(404, b"Cannot GET /sse", ctype="text/plain")

    error = await open_fails(not_found)
    assert isinstance(error, HttpStatusError) and error.details["status"] == 404
    assert error.message.endswith("/sse answered HTTP 404 (text/plain), not an SSE stream: Cannot GET /sse")


async def test_an_endpoint_on_another_host_is_refused():
    error = await open_fails(SseServer(endpoint="http://localhost:1/messages"))
    assert isinstance(error, ConnectError)
    assert error.message.startswith("the server's endpoint http://localhost:1/messages is on another host than ")
    assert error.message.endswith("; refusing to post there")


async def test_a_stream_that_ends_before_its_endpoint_fails_to_connect():
    async def ends(req: Request, reply: Reply) -> None:
        await reply.stream()
        await reply.event("too early", event="message")
        await reply.end()

    error = await open_fails(ends)
    assert isinstance(error, ConnectError)
    assert error.message.endswith(": the server closed the SSE stream before sending its endpoint")


async def test_nothing_listening_is_a_refused_connection():
    async with Loopback(SseServer()) as server:
        url = sse_url(server)
    error = await open_fails(SseServer(), url=url)  # the port of a server that has stopped
    assert isinstance(error, ConnectError) and error.details["url"] == url
    assert error.message == f"cannot connect to {url}: connection refused (is the server running, on that port?)"


# --- the stream after connecting ---------------------------------------------------------------------------


async def closed_after(*items: str) -> Wire:
    """The callbacks of a transport whose server sent `items` on the stream, until the transport said closed."""
    sse = SseServer()
    async with Loopback(sse) as server:
        t = SseTransport(sse_url(server))
        wire = Wire(t)
        await t.open()
        for item in items:
            sse.queue.put_nowait(item)
        await until(lambda: wire.closed)
        closed = list(wire.closed)
        await t.close()
    wire.closed = closed
    return wire


async def test_the_server_ending_the_stream_closes_the_connection():
    wire = await closed_after(json.dumps({"jsonrpc": "2.0", "method": "notifications/x"}), "END")
    assert [(c.reason, c.expected) for c in wire.closed] == [("the server closed the SSE stream", False)]
    assert json.loads(wire.frames[0][0])["method"] == "notifications/x"  # what came before is delivered


async def test_a_broken_stream_closes_the_connection_saying_so():
    wire = await closed_after("CUT")
    (closed,) = wire.closed
    assert closed.reason.startswith("the SSE stream broke: ") and not closed.expected


async def test_a_later_endpoint_on_another_host_closes_the_connection():
    sse = SseServer()
    async with Loopback(sse) as server:
        t = SseTransport(sse_url(server))
        wire = Wire(t)
        await t.open()
        first = t.endpoint

        async def moved(req: Request, reply: Reply) -> None:
            await reply.stream()
            await reply.event("/messages?session=1", event="endpoint")
            await reply.event("/messages?session=2", event="endpoint")  # same host: the first one stays
            await reply.event("http://localhost:1/elsewhere", event="endpoint")
            await asyncio.Event().wait()

        await t.close()
        server.handler = moved
        t = SseTransport(sse_url(server))
        wire = Wire(t)
        await t.open()
        await until(lambda: wire.closed)
        assert t.endpoint == first
        await t.close()
    (closed, again) = wire.closed
    assert closed.reason.startswith("the server's endpoint http://localhost:1/elsewhere is on another host")
    assert not closed.expected and again.expected


# --- posting -----------------------------------------------------------------------------------------------


async def test_posts_that_fail_fail_their_request():
    sse = SseServer()

    async def post(req: Request, reply: Reply) -> None:
        wire_id = req.json()["id"]
        if wire_id == 1:
            return await reply.send(401, b"{}", headers={"WWW-Authenticate": CHALLENGE})
        if wire_id == 2:
            return  # dropped without an answer
        await sse.accept(req, reply)

    sse.post = post
    async with Loopback(sse) as server:
        t = SseTransport(sse_url(server))
        wire = Wire(t)
        await t.open()
        await t.send(request(1))
        await t.send(request(2))
        await t.send(request(3))
        await until(lambda: len(wire.errors) == 2 and wire.frames)
        await t.close()
    unauthorized, dropped = wire.errors[1], wire.errors[2]
    assert isinstance(unauthorized, AuthRequired) and unauthorized.details["www_authenticate"] == CHALLENGE
    assert isinstance(dropped, ConnectError)
    assert dropped.message == f"cannot post to {t.endpoint}: Server disconnected without sending a response."
    assert wire.answer(3)[0] == result(3)


async def test_a_401_on_a_post_runs_the_authorization_flow_and_posts_again():
    sse = SseServer()

    async def post(req: Request, reply: Reply) -> None:
        if req.headers.get("authorization") != "Bearer fresh":
            return await reply.send(401, b"{}", headers={"WWW-Authenticate": CHALLENGE})
        await sse.accept(req, reply)

    sse.post = post
    async with Loopback(sse) as server:
        provider = Provider()
        t = SseTransport(sse_url(server), HttpSettings(auth=provider))
        provider.transport = t
        wire = Wire(t)
        await t.open()
        await t.send(request(1))
        await until(lambda: wire.frames)
        await t.close()
    assert provider.flows == [(401, True)]
    assert [r.headers.get("authorization") for r in server.sent("POST")] == [None, "Bearer fresh"]
    assert [(x["stream"], x["status"]) for x in wire.exchanges if x["method"] == "POST"] == [
        ("POST#1", 401), ("POST#1", 202)]
    assert wire.answer(1)[0] == result(1) and not wire.errors


async def test_an_authorization_flow_that_fails_fails_the_post():
    sse = SseServer()

    async def post(req: Request, reply: Reply) -> None:
        await reply.send(401, b"{}", headers={"WWW-Authenticate": CHALLENGE})

    class NoTokenEndpoint(Provider):
        async def on_unauthorized(self, client: Any, url: str, response: Any) -> bool:
            raise AuthRequired("token request failed: HTTP 400 invalid_grant", url=url)

    sse.post = post
    async with Loopback(sse) as server:
        t = SseTransport(sse_url(server), HttpSettings(auth=NoTokenEndpoint()))
        wire = Wire(t)
        await t.open()
        await t.send(request(1))
        await until(lambda: wire.errors)
        await t.close()
    error = wire.errors[1]
    assert isinstance(error, AuthRequired) and error.message == "token request failed: HTTP 400 invalid_grant"
    assert len(server.sent("POST")) == 1


async def test_an_endless_error_page_of_a_post_is_read_only_up_to_the_cap():
    sse = SseServer()

    async def endless(req: Request, reply: Reply) -> None:
        await reply.stream(500, "text/html")
        block = b"<p>" + b"x" * (1024 * 1024 - 7) + b"</p>\n"
        try:
            while True:
                await reply.chunk(block)
        except ConnectionError:
            pass  # the client stopped reading

    sse.post = endless
    async with Loopback(sse) as server:
        t = SseTransport(sse_url(server))
        wire = Wire(t)
        await t.open()
        await t.send(request(1))
        await until(lambda: wire.errors, timeout=20)
        await t.close()
    error = wire.errors[1]
    assert isinstance(error, HttpStatusError) and error.details["status"] == 500
    assert error.message.startswith(f"HTTP 500 from {t.endpoint}: <p>xxx") and error.message.endswith("…")


async def test_closing_cancels_a_post_still_waiting_for_its_answer():
    sse = SseServer()
    posted = asyncio.Event()

    async def slow(req: Request, reply: Reply) -> None:
        posted.set()
        await asyncio.Event().wait()  # never accepts it

    sse.post = slow
    async with Loopback(sse) as server:
        t = SseTransport(sse_url(server))
        wire = Wire(t)
        await t.open()
        await t.send(request(1))
        await asyncio.wait_for(posted.wait(), 5 * SLOWDOWN)
        start = time.monotonic()
        await t.close()
        took = time.monotonic() - start
    assert took < 2.5  # not the three seconds close() allows its tasks to end
    assert not wire.errors and not wire.logs  # cancelled by us: not a failure of the request
    assert [(c.reason, c.expected) for c in wire.closed] == [("connection closed", True)]
