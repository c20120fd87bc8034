"""The session layer on its own (no Qt): one `ServerSession` against real servers — its status and
listings, its log, calls with their questions landing on the call that caused them, the heartbeat."""

from __future__ import annotations

import asyncio

import http_peers
import pytest
from support import demo_cmd

from inspector.config import ServerSpec
from inspector.session import Answerer, CallRecord, ServerSession, SessionOptions, Status


class Recorder(Answerer):
    """Answers every elicitation with the name of the call's first argument, once `expected` questions
    are waiting (so the calls are really in flight together)."""

    def __init__(self, expected: int = 1) -> None:
        self.asked: list[tuple[CallRecord | None, dict]] = []
        self.expected = expected
        self.all_asked = asyncio.Event()

    async def elicit(self, session, params, call):
        self.asked.append((call, params))
        if len(self.asked) >= self.expected:
            self.all_asked.set()
        await asyncio.wait_for(self.all_asked.wait(), 20)
        name = call.arguments.get("question", "someone") if call is not None else "someone"
        return {"action": "accept", "content": {"name": name}}

    async def sample(self, session, params, call):
        return None

    async def share_roots(self, session, roots, call):
        return True


def demo(mode: str, answerer: Answerer | None = None, **options) -> ServerSession:
    return ServerSession(ServerSpec(name="demo", command=demo_cmd()), options=SessionOptions(mode=mode, **options),
                         answerer=answerer)


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_a_session_connects_lists_everything_and_disconnects(mode):
    session = demo(mode, heartbeat_s=None)
    changes: list[str] = []
    session.changed.connect(changes.append)
    try:
        hello = await session.open()
        assert session.status is Status.CONNECTED and session.era == hello.era.value == mode
        assert session.tools.loaded and "echo" in session.tools.names("name")
        await asyncio.wait_for(_until(lambda: all(session.listings[k].loaded
                                                  for k in ("resources", "templates", "prompts"))), 20)
        assert session.listings["resources"].items and session.listings["prompts"].items
        assert {"status", "tools", "resources", "prompts"} <= set(changes)
        assert any(e.text.startswith("connected: connected · ") for e in session.log)
    finally:
        await session.disconnect()
    assert session.status is Status.DISCONNECTED and session.client is None
    assert any(e.text == "disconnected" for e in session.log)


async def test_a_headless_session_lists_nothing_it_is_not_asked_for():
    session = demo("legacy", load_lists=False, listen=False, heartbeat_s=None)
    try:
        await session.open()
        assert not session.tools.loaded and not session.listings["resources"].loaded
        rec = session.calls.call("echo", {"message": "hi"})
        await rec.job
        assert rec.outcome == "ok" and rec.result["content"][0]["text"] == "hi" and rec.request_id is not None
    finally:
        await session.disconnect()


async def test_a_failed_start_is_a_status_with_its_reason():
    session = ServerSession(ServerSpec(name="nothing", command=["/nonexistent/spyglass-test-server"]))
    await session.connect()  # never raises
    assert session.status is Status.ERROR and "nonexistent" in (session.reason or "")
    assert any(e.level == "error" and "could not connect" in e.text for e in session.log)


async def test_modern_questions_land_on_the_call_that_caused_them():
    """2026-07-28: the questions come back in each call's own answer (MRTR), so with two calls in flight
    on one server each question is known to belong to its call."""
    answers = Recorder(expected=2)
    session = demo("modern", answers, heartbeat_s=None)
    try:
        await session.open()
        one = session.calls.call("ask_user", {"question": "Ada"})
        two = session.calls.call("ask_user", {"question": "Grace"})
        await asyncio.wait_for(asyncio.gather(one.job, two.job), 30)
    finally:
        await session.disconnect()
    assert sorted(call.tool for call, _ in answers.asked) == ["ask_user", "ask_user"]
    assert {call.id for call, _ in answers.asked} == {one.id, two.id}
    for rec, name in ((one, "Ada"), (two, "Grace")):
        assert [r.known_by for r in rec.rounds] == ["mrtr"] and rec.rounds[0].answered
        assert f"Nice to meet you, {name}!" in rec.result["content"][0]["text"]


async def test_legacy_stdio_questions_are_attached_only_when_one_call_could_have_asked():
    """Over stdio the wire does not say which request a server request belongs to: with one call in flight
    it is that call's; with two, the question is answered but belongs to neither (never guessed)."""
    answers = Recorder(expected=1)
    session = demo("legacy", answers, heartbeat_s=None)
    try:
        await session.open()
        alone = session.calls.call("ask_user", {"question": "Ada"})
        await asyncio.wait_for(alone.job, 20)
        assert [r.known_by for r in alone.rounds] == ["only request"] and answers.asked[0][0] is alone
        both = Recorder(expected=2)
        session.answerer = both
        await session.disconnect()
        await session.open()  # the handlers are made at connect time
        one = session.calls.call("ask_user", {"question": "Ada"})
        two = session.calls.call("ask_user", {"question": "Grace"})
        await asyncio.wait_for(asyncio.gather(one.job, two.job), 30)
    finally:
        await session.disconnect()
    assert [call for call, _ in both.asked] == [None, None]
    assert one.rounds == [] and two.rounds == [] and one.outcome == two.outcome == "ok"
    unowned = [q for q in session.questions.asked if q.call is None]
    assert len(unowned) == 2 and all(q.round.answered and q.context.known_by == "unknown" for q in unowned)


async def test_legacy_http_questions_land_on_the_call_whose_stream_carried_them():
    """Streamable HTTP: a server request sent on a call's own answer stream belongs to that call."""
    answers = Recorder(expected=2)
    with http_peers.sdk() as url:
        session = ServerSession(ServerSpec(name="sdk", url=url), options=SessionOptions(mode="legacy"),
                                answerer=answers)
        try:
            await session.open()
            one = session.calls.call("ask_name", {})
            two = session.calls.call("ask_name", {})
            await asyncio.wait_for(asyncio.gather(one.job, two.job), 30)
        finally:
            await session.disconnect()
    assert {call.id for call, _ in answers.asked if call is not None} == {one.id, two.id}
    assert [r.known_by for r in one.rounds] == ["stream"] == [r.known_by for r in two.rounds]


async def test_the_modern_heartbeat_marks_its_requests():
    session = demo("modern", heartbeat_s=0.2)
    try:
        await session.open()
        await asyncio.wait_for(_until(lambda: session.health.last_rtt is not None), 10)
        assert session.health.reachable is True
        assert 2 in session.health.heartbeat_ids or 3 in session.health.heartbeat_ids
    finally:
        await session.disconnect()


async def _until(predicate) -> None:
    while not predicate():
        await asyncio.sleep(0.02)


def test_a_reads_worth_of_frames_goes_to_the_traffic_hook_in_one_call_heartbeats_marked():
    from inspector.protocol import jsonrpc as rpc
    from inspector.traffic.columns import BACKGROUND
    from inspector.traffic.frame import Frame

    def frame(data: bytes) -> Frame:
        return Frame("in", data, 1.0, 2.0, None, rpc.parse(data))

    class Hook:
        def __init__(self) -> None:
            self.calls: list[list[Frame]] = []

        def __call__(self, f: Frame) -> None:
            self.calls.append([f])

        def many(self, frames: list[Frame]) -> None:
            self.calls.append(list(frames))

    frames = [frame(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'),
              frame(b'{"jsonrpc":"2.0","id":41,"result":{}}'), frame(b'{"jsonrpc":"2.0","id":42,"result":{}}')]
    session = ServerSession(ServerSpec(name="s", command=demo_cmd()))
    session.traffic = hook = Hook()
    session.health.heartbeat_ids.add(42)  # the heartbeat's ping: recorded, shown only when asked
    session._record_many(frames)
    assert hook.calls == [frames]
    assert [(f.meta or {}).get(BACKGROUND) for f in frames] == [None, None, "heartbeat"]
    plain: list[Frame] = []
    session.traffic = plain.append
    session._record_many(frames)  # a hook without `many`: one frame at a time
    assert plain == frames
