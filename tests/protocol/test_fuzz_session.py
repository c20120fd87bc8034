"""Fuzzing the session state machine: arbitrary byte streams and message orders.

Nothing raises, and every request resolves at most once. CI runs a short
campaign; `SPYGLASS_FUZZ_EXAMPLES=20000 pytest tests/protocol/test_fuzz_session.py`
runs a long one.
"""

from __future__ import annotations

import json
import os

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from inspector.protocol import ClientSession, LineFramer, Mode
from inspector.protocol import events as ev

EXAMPLES = int(os.environ.get("SPYGLASS_FUZZ_EXAMPLES", "60"))

json_leaf = st.none() | st.booleans() | st.integers(-5, 2**64) | st.text(max_size=8)
json_value = st.recursive(json_leaf, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c,
                                                                                         max_size=3), max_leaves=8)
RESOLVING = (ev.ResponseReceived, ev.ErrorReceived, ev.RequestFailed)


class SessionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.session = ClientSession(mode=Mode.parse("legacy"), capabilities={"roots": {}})
        self.framer = LineFramer(max_size=4096)
        self.resolved: dict[object, int] = {}
        self.sent: list[object] = []
        self.handshake_done = False
        init = json.loads(self.session.start()[0].data)
        self.feed_events(
            self.session.receive_frame(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": init["id"],
                        "result": {
                            "protocolVersion": "2025-11-25",
                            "capabilities": {},
                            "serverInfo": {"name": "f", "version": "1"},
                        },
                    }
                ).encode()
            )
        )

    def feed_events(self, events: list[ev.Event]) -> None:
        for event in events:
            if isinstance(event, RESOLVING):
                self.resolved[event.request_id] = self.resolved.get(event.request_id, 0) + 1
            if isinstance(event, ev.HandshakeComplete):
                self.handshake_done = True
            if isinstance(event, ev.InputRequired):  # answer at once, as a client would
                self.feed_events([self.session.provide_input(event.request_id, {})])

    @rule(method=st.sampled_from(["tools/list", "tools/call", "ping", "resources/read", "prompts/get"]))
    def send(self, method):
        send = self.session.send_request(method, {"name": "x"} if method != "ping" else None, progress_token="t")
        self.sent.append(json.loads(send.data)["id"])

    @precondition(lambda self: self.sent)
    @rule(data=st.data(), kind=st.sampled_from(["result", "error", "input_required", "junk-result"]))
    def answer(self, data, kind):
        rid = data.draw(st.sampled_from(self.sent))
        body: dict = {"jsonrpc": "2.0", "id": rid}
        if kind == "result":
            body["result"] = {"tools": [], "content": [], "contents": [], "messages": []}
        elif kind == "error":
            body["error"] = {"code": data.draw(st.integers(-33000, 0)), "message": "e"}
        elif kind == "input_required":
            body["result"] = {
                "resultType": "input_required",
                "requestState": "s",
                "inputRequests": data.draw(st.dictionaries(st.text(max_size=3), json_value, max_size=2)),
            }
        else:
            body["result"] = data.draw(json_value)
        self.feed_events(self.session.receive_frame(json.dumps(body).encode()))

    @precondition(lambda self: self.sent)
    @rule(data=st.data())
    def cancel(self, data):
        self.session.cancel(data.draw(st.sampled_from(self.sent)))

    @rule(obj=st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]), json_value))
    def arbitrary_message(self, obj):
        self.feed_events(self.session.receive_frame(json.dumps(obj).encode()))

    @rule(chunk=st.binary(max_size=200))
    def arbitrary_bytes(self, chunk):
        for frame in self.framer.feed(chunk):
            self.feed_events(self.session.receive_frame(frame))

    @invariant()
    def resolved_at_most_once(self):
        assert all(n == 1 for n in self.resolved.values()), self.resolved
        pending = set(self.session.pending_methods())
        assert not pending & set(self.resolved), "a resolved request is still pending"


SessionMachine.TestCase.settings = settings(max_examples=EXAMPLES, stateful_step_count=40, deadline=None)
TestSession = SessionMachine.TestCase
