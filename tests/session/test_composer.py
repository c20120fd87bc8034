"""Hand-made frames through the session layer (`ServerSession.composer`) against real peers: every malformed kind
sent to our hostile server and to server-everything (stdio and HTTP), the session still listing and calling
after each; an id the session waits on refused and its string twin kept apart; the session's ids never
taking one a hand-made request waits on; the message limit; Edit and resend in both eras (server-everything
and the SDK server, stdio and HTTP, 2026-07-28 with the session's `_meta`); HTTP+SSE."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import http_peers
import pytest
from support import PY, SDK_SERVER, everything_cmd, hostile_cmd, spec_validator

from inspector import errors as E
from inspector.config import ServerSpec
from inspector.session import ServerSession, SessionOptions, TransportOptions
from inspector.traffic import TrafficFilter, TrafficStore
from inspector.traffic.columns import HANDMADE, HANDMADE_ANSWER

ECHO = {"hostile": ("echo", {"message": "still here"}), "everything": ("echo", {"message": "still here"}),
        "sdk": ("add", {"a": 2, "b": 3})}


@contextlib.asynccontextmanager
async def opened(spec: ServerSpec, mode: str = "auto", store_path: str = ":memory:", **transport):
    store = TrafficStore(store_path)
    session = ServerSession(spec, options=SessionOptions(mode=mode, heartbeat_s=None, listen=False,
                                                         transport=TransportOptions(**transport)),
                            traffic=store.hook(spec.name))
    try:
        await session.open()
        yield session, store
    finally:
        await session.disconnect()
        store.close()


@contextlib.asynccontextmanager
async def peer(name: str, mode: str = "auto", **transport: Any):
    """`hostile` or `everything` over stdio, `everything-http`, `everything-sse`, `sdk`, `sdk-http`."""
    if name.endswith(("-http", "-sse")):
        base, kind = name.rsplit("-", 1)
        ctx = http_peers.sdk() if base == "sdk" else http_peers.everything("sse" if kind == "sse" else "streamableHttp")
        with ctx as url:
            async with opened(ServerSpec(name=base, url=url), mode, **transport) as pair:
                yield pair
        return
    command = {"hostile": hostile_cmd(), "everything": everything_cmd(), "sdk": [PY, str(SDK_SERVER)]}[name]
    async with opened(ServerSpec(name=name, command=command), mode, **transport) as pair:
        yield pair


async def still_works(session: ServerSession) -> None:
    """Nothing stuck: the session lists its tools and calls one."""
    client = session.client
    assert client is not None and client.closed is None
    tools = await client.list_tools(refresh=True)
    tool, args = ECHO[session.name]
    assert tool in {t["name"] for t in tools["tools"]}
    result = await client.call_tool(tool, args)
    assert result.get("isError") is not True, result
    # nothing left waiting: a listing the session asked for on its own (a list_changed) may still be answered
    for _ in range(100):
        if not client.session.pending_methods():
            break
        await asyncio.sleep(0.05)
    assert not client.session.pending_methods(), client.session.pending_methods()


def rows_of(store: TrafficStore, number: int) -> tuple[int, list[int]]:
    """The hand-made frame ✎number (as sent) and the frames that answer it."""
    sent = [n for n in store.columns.handmade if (store.meta(n) or {}).get(HANDMADE) == number
            and store.direction(n) == "out"]
    answers = [n for n in store.columns.handmade if (store.meta(n) or {}).get(HANDMADE_ANSWER) == number]
    assert len(sent) == 1, sent
    return sent[0], sorted(answers)


MALFORMED = [
    ("invalid JSON", "{this is not JSON", False),
    ("not UTF-8", "\\xff\\xfe\\x00 {}", True),
    ("a batch", '[{"jsonrpc": "2.0", "id": "in-batch", "method": "tools/list"},\n'
                ' {"jsonrpc": "2.0", "method": "notifications/initialized"}]', False),
    ("a response to an id the server never sent", '{"jsonrpc": "2.0", "id": "never-sent", "result": {}}', False),
    ("an unexpected notification", '{"jsonrpc": "2.0", "method": "notifications/surprise", "params": {"x": 1}}',
     False),
    ("a request for a method nobody has", '{"jsonrpc": "2.0", "id": "nope", "method": "no/such"}', False),
]


@pytest.mark.parametrize("server", ["hostile", "everything", "everything-http"])
async def test_every_malformed_kind_goes_out_as_typed_and_the_session_goes_on(server):
    async with peer(server, "legacy") as (session, store):
        composer = session.composer
        malformed_before = session.client.malformed_count
        for number, (what, text, escapes) in enumerate(MALFORMED, 1):
            handmade = await composer.send(text, byte_escapes=escapes, timeout=3)
            await handmade.wait(10)
            assert handmade.ended, what
            assert handmade.number == number and composer.sent[-1] is handmade
            sent, answers = rows_of(store, number)
            wire = store.raw(sent)
            if server.endswith("-http"):
                assert wire == handmade.data  # a POST body: exactly as typed
            else:
                assert wire == handmade.data.replace(b"\n", b" ")  # stdio: one line
            if escapes:
                assert wire.startswith(b"\xff\xfe\x00 ") and "not UTF-8" in (store.malformed(sent) or "")
            if what in ("invalid JSON", "a batch"):
                assert store.malformed(sent), what
            for n in answers:  # an answer to a hand-made frame is its own: never flagged as a stray
                assert not store.malformed(n) or "batch" in store.malformed(n), (what, store.malformed(n))
                assert store.direction(n) == "in"
            if what == "a request for a method nobody has":
                assert answers and store.kind(answers[0]) == "error" and store.pair(sent) == answers[0]
            await still_works(session)
        assert session.client.malformed_count == malformed_before  # answers to hand-made frames are no strays
        if server == "hostile":  # it answers what it cannot read with a null id: that answer is paired by time
            for number in (1, 2, 3):
                _sent, answers = rows_of(store, number)
                assert answers and store.kind(answers[0]) == "error", number
        assert any(e.text.startswith("sent hand-made frame ✎6") for e in session.log)
        view = store.filter(TrafficFilter.make(expr="handmade"))
        assert list(view.rows) == sorted(store.columns.handmade) and len(view.rows) >= len(MALFORMED)
        assert list(store.filter(TrafficFilter.make(expr="!handmade")).rows) == [
            n for n in range(len(store)) if n not in store.columns.handmade]


async def test_hand_made_frames_stay_marked_in_the_session_file(tmp_path):
    path = tmp_path / "session.sqlite"
    async with peer("hostile", "legacy", store_path=str(path)) as (session, store):
        handmade = await session.composer.send('{"jsonrpc": "2.0", "id": "f", "method": "tools/list"}')
        await handmade.wait(10)
        marked = sorted(store.columns.handmade)
    reopened = TrafficStore.open_session(path)
    try:
        assert sorted(reopened.columns.handmade) == marked and len(marked) == 2
        assert reopened.pair(marked[0]) == marked[1]
    finally:
        reopened.close()


async def test_an_id_the_session_waits_on_is_refused_and_its_string_twin_kept_apart():
    async with peer("everything", "legacy") as (session, store):
        rec = session.calls.call("trigger-long-running-operation", {"duration": 2, "steps": 4})
        for _ in range(100):
            if rec.request_id is not None:
                break
            await asyncio.sleep(0.02)
        rid = rec.request_id
        with pytest.raises(E.UsageError, match=f"id {rid} is taken: the session's own tools/call request"):
            await session.composer.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list"}))
        assert not store.columns.handmade  # nothing went out
        # the same id as a string is another JSON-RPC id: sent, answered, and the session's call unharmed
        twin = await session.composer.send(json.dumps({"jsonrpc": "2.0", "id": str(rid), "method": "tools/list"}))
        await twin.wait(10)
        assert twin.answers and not twin.failure
        sent, answers = rows_of(store, twin.number)
        assert store.pair(sent) == answers[0] and store.request_id(answers[0]) == str(rid)
        with pytest.raises(E.UsageError, match="is taken: a hand-made request"):
            await session.composer.send(json.dumps([{"jsonrpc": "2.0", "id": "x", "method": "tools/list"}]) + " ")
            await session.composer.send(json.dumps({"jsonrpc": "2.0", "id": "x", "method": "tools/list"}))
        with pytest.raises(E.UsageError, match="one id twice"):
            await session.composer.send(json.dumps([{"jsonrpc": "2.0", "id": "y", "method": "ping"}] * 2))
        await rec.job
        assert rec.outcome == "ok", rec.error_text
        await still_works(session)


async def test_the_sessions_own_ids_never_take_one_a_handmade_request_waits_on():
    async with opened(ServerSpec(name="hostile", command=hostile_cmd("no-reply")), "legacy") as (session, store):
        composer = session.composer
        fresh = composer.fresh_id()
        waiting = await composer.send(json.dumps({"jsonrpc": "2.0", "id": fresh + 1, "method": "tools/call",
                                                  "params": {"name": "echo", "arguments": {"message": "m"}}}),
                                      timeout=0.3)
        tools = await session.client.list_tools(refresh=True)
        assert tools["tools"]
        ours = [store.request_id(n) for n in range(len(store))
                if store.direction(n) == "out" and store.method(n) == "tools/list"]
        assert fresh not in ours and fresh + 1 not in ours and ours[-1] == fresh + 2
        await waiting.wait(5)
        assert waiting.timed_out and waiting.waiting == (fresh + 1,) and "no answer within 0.3 s" in waiting.failure
        # still reserved after giving up: the session goes around it
        assert session.client.session.in_flight(fresh + 1) == "a hand-made request"


async def test_a_frame_over_the_message_limit_is_refused_naming_the_limit():
    async with peer("hostile", "legacy", max_message=4096) as (session, store):
        text = json.dumps({"jsonrpc": "2.0", "id": "big", "method": "tools/call",
                           "params": {"name": "echo", "arguments": {"message": "a" * 5000}}})
        with pytest.raises(E.UsageError, match=r"over the message limit of 4,096 bytes \(0.00390625 MiB\)"):
            await session.composer.send(text)
        assert not store.columns.handmade and not session.composer.sent
        await still_works(session)


@pytest.mark.parametrize("server, mode", [
    ("everything", "legacy"), ("sdk", "modern"), ("sdk", "legacy"), ("sdk-http", "modern"), ("sdk-http", "legacy"),
    ("everything-http", "legacy"),
])
async def test_edit_and_resend_sends_a_fresh_id_and_its_answer_is_paired(server, mode):
    async with peer(server, mode) as (session, store):
        tool, args = ECHO[session.name]
        first = await session.client.call_tool(tool, args, on_progress=lambda *a: None)
        original = next(n for n in range(len(store)) if store.direction(n) == "out" and store.method(n) == "tools/call")
        request = json.loads(store.raw(original))
        prepared = session.composer.prepare_resend(request)
        assert prepared["id"] != request["id"] and prepared["params"]["arguments"] == args
        meta = prepared["params"].get("_meta", {})
        assert "progressToken" not in meta  # the original's
        if mode == "modern":
            assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
            assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "spyglass"
            assert "io.modelcontextprotocol/clientCapabilities" in meta
        revision = session.protocol_version
        assert session.composer.problems(json.dumps(prepared, indent=2)) == []
        spec_validator(revision, "JSONRPCRequest").validate(prepared)
        handmade = await session.composer.resend(request)
        await handmade.wait(20)
        assert handmade.ended and not handmade.failure, handmade.failure
        sent, answers = rows_of(store, handmade.number)
        assert store.pair(sent) == answers[0] and store.method(answers[0]) == "tools/call"
        assert json.loads(store.raw(sent))["id"] != request["id"]
        result = json.loads(store.raw(answers[0]))["result"]
        assert result["content"] == first["content"]
        if server.endswith("-http"):
            assert (store.meta(sent) or {}).get("stream", "").startswith("POST#")
            exchanges = [n for n in store.columns.handmade if store.direction(n) == "http"]
            assert exchanges and json.loads(store.raw(exchanges[0]))["status"] == 200
        # a template of the revision is answered too
        listed = await session.composer.send(session.composer.template("tools/list"))
        await listed.wait(20)
        assert listed.answers and "tools" in json.loads(listed.answers[0].data)["result"]
        await still_works(session)


async def test_http_frames_are_posted_with_the_headers_given():
    async with peer("sdk-http", "legacy") as (session, store):
        composer = session.composer
        headers = composer.headers('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}')
        assert headers["Mcp-Session-Id"] and headers["MCP-Protocol-Version"] == "2025-11-25"
        without = {k: v for k, v in headers.items() if k != "Mcp-Session-Id"}
        refused = await composer.send('{"jsonrpc": "2.0", "id": "h1", "method": "tools/list"}', without)
        await refused.wait(10)
        assert refused.status == 400 and refused.failure.startswith("HTTP 400")
        # its POST is over: nothing more can answer it, so the id is free again
        again = await composer.send('{"jsonrpc": "2.0", "id": "h1", "method": "tools/list"}')
        await again.wait(10)
        assert again.status == 200 and again.answers and not again.failure
        notified = await composer.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        await notified.wait(10)
        assert notified.ended and notified.status == 202 and not notified.answers
        await still_works(session)
    async with peer("sdk-http", "modern") as (session, store):
        headers = session.composer.headers(session.composer.template("tools/list"))
        assert headers["Mcp-Method"] == "tools/list" and "Mcp-Session-Id" not in headers
        assert "HTTP POST · 2026-07-28" in session.composer.describe()


async def test_the_composer_over_http_sse():
    async with peer("everything-sse", "legacy") as (session, store):
        composer = session.composer
        assert composer.headers()["Content-Type"] == "application/json"
        listed = await composer.send(composer.template("tools/list"))
        await listed.wait(20)
        assert listed.answers and not listed.failure  # its answer came on the SSE stream, paired by its id
        sent, answers = rows_of(store, listed.number)
        assert store.pair(sent) == answers[0]
        broken = await composer.send("{not JSON", timeout=2)
        await broken.wait(10)
        assert broken.ended
        await still_works(session)


async def test_nothing_is_sent_to_a_server_that_is_not_connected():
    session = ServerSession(ServerSpec(name="idle", command=hostile_cmd()))
    assert session.composer.unavailable() == "idle is not connected"
    assert session.composer.describe() == "not connected" and session.composer.headers() is None
    with pytest.raises(E.ConnectError, match="not connected"):
        await session.composer.send("{}")
    with pytest.raises(E.ConnectError):
        session.composer.fresh_id()
    assert session.composer.problems('{"jsonrpc": "2.0", "id": 1, "method": "ping"}') == []


async def test_the_book_tells_which_hand_made_frame_an_answer_belongs_to(expect_log):
    from inspector.client.handmade import BLIND_WINDOW, HandmadeBook, request_ids
    from inspector.protocol import ClientSession, jsonrpc

    assert request_ids(b'[{"jsonrpc": "2.0", "id": 1, "method": "a"}, {"id": true, "method": "b"}, 3]') == (
        (1,), "batch array (JSON-RPC batches are not part of MCP)")
    assert request_ids(b"\xff") == ((), "not UTF-8 (byte 0xff at offset 0)")
    book, session = HandmadeBook(), ClientSession()
    batch = book.open(b'[{"jsonrpc": "2.0", "id": "a", "method": "ping"}]', session, 1000)
    book.written(batch, None, batch.data)
    answers = jsonrpc.parse(b'[{"jsonrpc": "2.0", "id": "a", "result": {}}, '
                            b'{"jsonrpc": "2.0", "id": "zz", "result": 1}]')
    assert book.batch_owner(answers) == (batch, ("a", "zz"))
    assert book.batch_owner(jsonrpc.parse(b"{}")) == (None, ())
    null_error = jsonrpc.parse(b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}')
    assert book.null_error_owner(null_error, None) is batch  # unreadable, sent just now
    blind = book.open(b"{not json", session, 1000)
    book.written(blind, None, blind.data)
    blind.sent_at -= BLIND_WINDOW + 1  # long ago: an error with a null id now is someone else's
    assert book.null_error_owner(null_error, None) is None
    assert book.null_error_owner(jsonrpc.parse(b'{"jsonrpc": "2.0", "id": 1, "result": {}}'), None) is None
    seen = []
    blind.listeners.append(lambda h: seen.append(h.failure))
    blind.listeners.append(lambda h: 1 / 0)  # a listener that fails does not stop the others
    expect_log("spyglass.client", "a hand-made frame's listener failed")
    book.close("the connection was closed")
    assert blind.ended and seen == ["the connection was closed"]
    with pytest.raises(E.UsageError, match="over the message limit"):
        book.open(b"x" * 1001, session, 1000)
