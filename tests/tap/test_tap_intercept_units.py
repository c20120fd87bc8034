"""Intercept's parts in one process: the tap's gates fed as the pumps feed them (a line cut between two
reads, a gate turned on in the middle of a line, a runaway line, a full queue, the end of a stream while a
message is held), and the window's side (`InterceptLink`: what an edit sends, which filters it refuses,
what it says of the queues)."""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

import pytest

from inspector.tap import intercept
from inspector.tap.held import OLD_TAP, HeldMessage, InterceptLink, check_filter, edited
from inspector.tap.intercept import WindowPort, data_fields, data_of, describe
from inspector.traffic.expr import FilterSyntaxError


class Sink:
    def __init__(self) -> None:
        self.got: list[tuple[str, str, bytes, dict[str, Any] | None]] = []

    def chunk(self, direction: str, data: bytes) -> None:
        self.got.append(("chunk", direction, data, None))

    def frame(self, direction: str, data: bytes, meta: dict[str, Any] | None = None) -> None:
        self.got.append(("frame", direction, data, meta))

    def states(self) -> list[tuple[str, Any]]:
        return [(d, (m or {}).get("intercept", {}).get("state")) for kind, d, _data, m in self.got if kind == "frame"]


class Wire:
    """A port with both directions written to pipes the test reads."""

    def __init__(self) -> None:
        self.pipes = {d: os.pipe() for d in ("out", "in")}
        for r, _w in self.pipes.values():
            os.set_blocking(r, False)
        self.sink = Sink()
        self.port = WindowPort("s")
        self.port.attach(self.sink, {d: w for d, (_r, w) in self.pipes.items()})
        self.port.command({"window": 1})
        self.previous = {"out": b"", "in": b""}

    def on(self, text: str, *directions: str) -> dict[str, Any]:
        self.port.command({"intercept": {"on": True, "filter": text, "directions": list(directions or ("out",))}})
        return self.said("intercept")[-1]

    def said(self, key: str) -> list[dict[str, Any]]:
        return [m[key] for m in self.port.tick() if key in m]

    def feed(self, direction: str, data: bytes) -> bytes | None:
        """As a pump: the gate takes it, or gives it back to be written as with intercept off."""
        gate = self.port.slots[intercept.SLOTS.index(direction)]
        previous, self.previous[direction] = self.previous[direction], data
        if gate is None:
            return data
        return gate.take(data, previous)

    def read(self, direction: str, wait: float = 0.0) -> bytes:
        deadline = time.monotonic() + wait
        out = b""
        while True:
            try:
                out += os.read(self.pipes[direction][0], 65536)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return out
                time.sleep(0.01)

    def until_read(self, direction: str, size: int) -> bytes:
        out = b""
        deadline = time.monotonic() + 5
        while len(out) < size and time.monotonic() < deadline:
            out += self.read(direction, 0.05)
        return out

    def close(self) -> None:
        self.port.close("the test ended", 2.0)
        for r, w in self.pipes.values():
            os.close(r)
            os.close(w)


@pytest.fixture()
def wire():
    w = Wire()
    try:
        yield w
    finally:
        w.close()


def test_a_line_cut_between_reads_is_matched_whole_and_a_gate_turned_on_mid_line_lets_that_line_pass(wire):
    wire.previous["out"] = b'{"begun before":'  # what the pump passed before intercept was on
    assert wire.on('text contains "hold"') == {"on": True, "filter": 'text contains "hold"', "directions": ["out"]}
    assert wire.feed("out", b' "hold me not"}\n{"a":"ho') is None
    assert wire.until_read("out", 16) == b' "hold me not"}\n'  # the rest of the line under way: not matched
    assert wire.feed("out", b'ld"}\n') is None
    held = wire.said("held")
    assert [data_of(h) for h in held] == [b'{"a":"hold"}'] and wire.read("out", 0.2) == b""
    assert wire.sink.got[0] == ("chunk", "out", b' "hold me not"}\n', None)
    wire.port.command({"decide": {"hold": held[0]["hold"], "action": "forward"}})
    assert wire.until_read("out", 13) == b'{"a":"hold"}\n'
    assert wire.sink.states() == [("out", "held"), ("err", "forwarded")]


def test_turning_it_off_lets_go_and_the_pump_has_its_pipe_back(wire):
    wire.on("")
    wire.feed("out", b"one\ntwo\nthr")
    assert len(wire.said("held")) == 2 and wire.read("out", 0.1) == b""
    wire.port.command({"intercept": {"on": False}})
    assert wire.until_read("out", 8) == b"one\ntwo\n"
    time.sleep(0.1)
    assert wire.feed("out", b"ee\n") == b"three\n"  # the line under way goes with the pump's next chunk
    assert wire.port.slots[0] is None  # (the other gate lets go at its next chunk)
    assert wire.feed("out", b"four\n") == b"four\n"


def test_a_direction_no_longer_intercepted_lets_its_held_messages_go(wire):
    wire.on("", "out", "in")
    wire.feed("in", b'{"server":1}\n')
    wire.feed("out", b'{"host":1}\n')
    assert [h["dir"] for h in wire.said("held")] == ["in", "out"]
    wire.on("", "out")
    assert wire.until_read("in", 13) == b'{"server":1}\n' and wire.read("out", 0.1) == b""
    assert wire.feed("in", b'{"server":2}\n') is None  # still seen (answers pair with requests), never held
    assert wire.until_read("in", 13) == b'{"server":2}\n'


def test_the_end_of_a_stream_waits_for_what_is_held(wire):
    wire.on("")
    wire.feed("out", b"held\nafter")
    ended = threading.Event()
    gate = wire.port.slots[0]
    assert gate is not None and gate.finish(ended.set)  # the gate ends it, once the rest is out
    assert not ended.wait(0.2)
    wire.port.command({"decide": {"hold": 1, "action": "drop"}})
    assert ended.wait(5) and wire.until_read("out", 5) == b"after"
    assert wire.port.slots[0] is None


def test_a_runaway_line_is_never_matched(wire, monkeypatch):
    monkeypatch.setattr(intercept, "LINE_MAX", 10)
    wire.on("")
    assert wire.feed("out", b"x" * 20) is None
    assert wire.until_read("out", 20) == b"x" * 20  # passed as it came
    assert wire.feed("out", b"yy\nheld\n") is None
    assert wire.until_read("out", 3) == b"yy\n" and [data_of(h) for h in wire.said("held")] == [b"held"]


def test_a_full_queue_makes_the_source_wait(wire, monkeypatch):
    monkeypatch.setattr(intercept, "QUEUE_MAX", 100)
    wire.on('text contains "hold"')
    wire.feed("out", b"hold\n" + b"q" * 200 + b"\n")
    done = threading.Event()
    threading.Thread(target=lambda: (wire.feed("out", b"more\n"), done.set()), daemon=True).start()
    assert not done.wait(0.3)  # the pump waits: the host's pipe fills, as it would with a slow server
    queue = [m["queue"] for m in wire.port.tick() if "queue" in m][-1]["out"]
    assert queue["held"] == 1 and queue["queued"] == 1 and queue["bytes"] > 200
    wire.port.command({"decide": {"hold": 1, "action": "forward", "data": "held, edited"}})
    assert done.wait(5)
    expected = b"held, edited\n" + b"q" * 200 + b"\n" + b"more\n"
    assert wire.until_read("out", len(expected)) == expected


def test_the_window_going_away_forwards_and_forgets(wire):
    wire.on("")
    wire.feed("out", b"a\r\n")
    assert [data_of(h) for h in wire.said("held")] == [b"a"]
    wire.port.gone()
    assert wire.until_read("out", 3) == b"a\r\n"
    assert wire.port.tick() == [] and not wire.port.on  # nothing said to the next window of this one
    note = next(data for kind, d, data, m in wire.sink.got if d == "err")
    assert note.endswith(b"forwarded unchanged after " + note.split(b" after ")[1].split(b" s")[0] +
                         b" s: the window went away")


def test_messages_between_window_and_tap():
    assert data_of(data_fields(b"\xff\xfe")) == b"\xff\xfe" and data_fields(b"ok") == {"data": "ok"}
    assert data_of({"data_b64": "!!"}) is None and data_of({}) is None
    assert [describe(x) for x in (b"nope", b"[1]", b"3", b'{"method":"m"}', b'{"id":1,"method":"m"}',
                                  b'{"id":"a","result":{}}', b'{"id":2,"error":{}}', b"{}")] == [
        "not JSON", "a batch", "not a message", "m", 'm, id 1', 'answer to id "a"', "error to id 2", "a message"]
    port = WindowPort("s")
    port.command({"window": 1})
    port.command({"intercept": {"on": True, "filter": "", "directions": ["out"]}})
    assert port.tick()[0]["intercept"]["error"] == "the tap is still starting: try again"


# ---------------------------------------------------------------------------- the window's side
def link_of(hello: dict[str, Any]) -> tuple[InterceptLink, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []
    return InterceptLink(hello, sent.append), sent


def test_the_window_says_why_a_tap_cannot_intercept():
    old, sent = link_of({"tap": 1})
    assert old.unavailable == OLD_TAP and sent == [] and old.turn_on("", ("out",)) is not None
    http, _ = link_of({"tap": 1, "intercept": 0, "intercept_unavailable": "stdio only"})
    assert http.unavailable == "stdio only"
    newer, sent = link_of({"tap": 1, "intercept": 2})
    assert newer.available and sent == [{"window": 1}]


def test_what_an_edit_sends():
    message = HeldMessage(1, "out", b'{"jsonrpc":"2.0","id":3,"method":"ping"}', time.time() - 2, 0)
    shown = message.shown()
    assert shown.startswith("{\n  ") and edited(message, shown) == (None, "unchanged: the original bytes go on")
    assert edited(message, shown.replace("ping", "pong"))[0] == '{"jsonrpc":"2.0","id":3,"method":"pong"}'
    data, note = edited(message, "not\njson")
    assert data == "not json" and note.startswith("not JSON")
    odd = HeldMessage(2, "in", b"\xff raw", time.time(), 1)
    assert odd.shown() == "\ufffd raw" and not odd.is_text() and odd.held_for() < 1 and odd.arrow == "server → host"


def test_which_filters_the_window_refuses_before_asking():
    assert check_filter("") is None and check_filter("plain words") is None and check_filter("tool == x") is None
    assert isinstance(check_filter("tool == "), FilterSyntaxError)
    assert "live check" in str(check_filter("severity >= warning"))


def test_the_link_follows_what_the_tap_says():
    link, sent = link_of({"tap": 1, "intercept": 1})
    seen: list[str] = []
    link.changed.connect(seen.append)
    assert link.turn_on("tool == echo", ()) is not None
    assert link.turn_on("tool == echo", ("out", "in")) is None and link.asked
    assert sent[-1] == {"intercept": {"on": True, "filter": "tool == echo", "directions": ["out", "in"]}}
    assert link.receive({"intercept": {"on": True, "filter": "tool == echo", "directions": ["out", "in"]}})
    assert link.on and not link.asked and link.directions == ("out", "in")
    now = time.time()
    assert link.receive({"held": {"hold": 1, "dir": "out", "wall": now - 3, "behind": 0, "data": "{}"}})
    assert link.receive({"held": {"hold": "x", "dir": "out"}}) and list(link.held) == [1]
    assert link.receive({"queue": {"out": {"held": 1, "queued": 2, "since": now - 3}, "in": {"held": 0}}})
    assert link.queue_text(now) == "host → server: 1 held for 3.0 s, 2 messages queued behind"
    assert link.forward(1, "{}") == "unchanged: the original bytes go on" and sent[-1] == {
        "decide": {"hold": 1, "action": "forward"}}
    assert link.receive({"decided": {"hold": 1, "state": "forwarded"}}) and link.held[1].decided == "forwarded"
    assert link.forward(1) == "" and not link.drop(1)  # decided already
    assert link.receive({"released": {"hold": 1, "state": "forwarded"}}) and link.held == {} and link.released == 1
    assert link.receive({"refused": {"message": "decide", "why": "no such held message"}})
    assert link.error == "no such held message"
    assert not link.receive({"something": "else"})
    link.receive({"queue": {}})
    assert link.queue_text() == "Nothing is held: messages pass as they come."
    link.turn_off()
    assert sent[-1] == {"intercept": {"on": False}}
    link.ended("the tap went away")
    assert link.unavailable == "the tap ended (the tap went away)" and not link.on
    assert {"state", "held", "queue"} <= set(seen)
    held = json.dumps({"hold": 7, "dir": "in", "data_b64": "/w=="})
    link2, _ = link_of({"intercept": 1})
    link2.receive({"held": json.loads(held)})
    assert link2.held[7].data == b"\xff" and link2.drop(7)


def test_off_while_the_other_side_is_slow_keeps_the_order(wire):
    """Intercept off with a queue the reader has not taken yet (a full pipe): what comes meanwhile goes
    behind it, and the gate lets go only once it is all out."""
    big = b"b" * 200_000 + b"\n"
    wire.on('text contains "hold"')
    wire.feed("out", b"hold\n" + big)
    wire.port.command({"intercept": {"on": False}})
    time.sleep(0.1)  # the sender writes what the pipe takes, and waits
    assert wire.feed("out", b"then this, mid-") is None and wire.feed("out", b"line\n") is None
    expected = b"hold\n" + big + b"then this, mid-line\n"
    assert wire.until_read("out", len(expected)) == expected
    time.sleep(0.1)
    assert wire.feed("out", b"free\n") == b"free\n" and wire.port.slots[0] is None
