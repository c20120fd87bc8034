"""Intercept through a real `spyglass tap` process: a raw host (bytes in, bytes out) on one side,
server-everything (or `cat`, which writes back every line it reads) on the other, and the test acting as
the window on the tap's socket: it turns intercept on with a filter of the traffic pane's language, is
told of each held message, and forwards (as it was, or edited) or drops it.

What must hold: a matching message waits, and everything after it in its direction waits behind it; the
edit is what the server answers; a dropped message never reaches it; a window that goes away, or intercept
turned off, lets everything held go on unchanged at once; with intercept off (or never on) the bytes are
the same as without the tap; the session file says what happened, frame by frame.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import everything_cmd
from test_tap_stdio import HANDSHAKE, converse, host, request, tapped

from inspector.recording.files import open_session
from inspector.tap.intercept import PROTOCOL, data_of

ECHO = "tool == echo"


@pytest.fixture()
def sock_path(tmp_path, monkeypatch) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="sg-hold-") as short:  # a Unix socket's path is short
        path = Path(short) / "window.sock"
        monkeypatch.setenv("SPYGLASS_TAP_SOCKET", str(path))
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
        yield path


class Window:
    """The window's end of the tap socket: every line the tap sends, kept; commands sent back."""

    def __init__(self, path: Path) -> None:
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen()
        self.conn: socket.socket | None = None
        self.items: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            conn, _ = self.server.accept()
            with self.cond:
                self.conn = conn
                self.cond.notify_all()
            rest = b""
            while chunk := conn.recv(65536):
                *lines, rest = (rest + chunk).split(b"\n")
                with self.cond:
                    self.items += [json.loads(x) for x in lines]
                    self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait(self, test: Callable[[dict[str, Any]], bool], what: str, timeout: float = 15.0) -> dict[str, Any]:
        with self.cond:
            found: list[dict[str, Any]] = []

            def seen() -> bool:
                found[:] = [x for x in self.items if test(x)]
                return bool(found)

            assert self.cond.wait_for(seen, timeout), f"{what} within {timeout} s; the tap said {self.items[-5:]}"
            return found[-1]

    def send(self, message: dict[str, Any]) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: self.conn is not None, 15), "the tap never connected"
        assert self.conn is not None
        self.conn.sendall(json.dumps(message).encode() + b"\n")

    def intercept(self, filter_text: str, directions: tuple[str, ...] = ("out",)) -> dict[str, Any]:
        hello = self.wait(lambda x: "tap" in x, "the tap's hello")
        assert hello["intercept"] == PROTOCOL
        self.send({"window": 1})
        self.send({"intercept": {"on": True, "filter": filter_text, "directions": list(directions)}})
        return self.wait(lambda x: state(x).get("on") is True and "error" not in state(x), "intercept on")["intercept"]

    def held(self, n: int = 1) -> list[dict[str, Any]]:
        self.wait(lambda _x: len([x for x in self.items if "held" in x]) >= n, f"{n} held message(s)")
        return [x["held"] for x in self.items if "held" in x]

    def decide(self, hold: int, action: str, **edit: Any) -> dict[str, Any]:
        self.send({"decide": {"hold": hold, "action": action, **edit}})
        return self.wait(lambda x: x.get("released", {}).get("hold") == hold, f"message {hold} let go")["released"]

    def hang_up(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.shutdown(socket.SHUT_RDWR)  # a close alone would wait for the reader's recv
            self.conn.close()

    def close(self) -> None:
        self.hang_up()
        self.server.close()
        self.thread.join(5)


@contextlib.contextmanager
def window(path: Path) -> Iterator[Window]:
    w = Window(path)
    try:
        yield w
    finally:
        w.close()


def state(item: dict[str, Any]) -> dict[str, Any]:
    """An intercept state line's state (the hello's `intercept` is the protocol's version)."""
    said = item.get("intercept")
    return said if isinstance(said, dict) and "tap" not in item else {}


def answer(h: Any, rid: Any) -> dict[str, Any]:
    return next(a for a in h.answers if a.get("id") == rid)


def call(rid: int, message: str) -> tuple[bytes, Any]:
    return request(rid, "tools/call", {"name": "echo", "arguments": {"message": message}})


def intercept_frames(path: Path) -> list[tuple[str, bytes, dict[str, Any]]]:
    opened = open_session(path)
    assert opened.problems == [], opened.problems
    store = opened.store
    return [(store.direction(n), store.raw(n), (store.meta(n) or {}).get("intercept") or {})
            for n in range(len(store))]


def test_a_held_request_edited_is_what_the_server_answers_and_what_came_after_waits(tmp_path, sock_path):
    session = tmp_path / "edit.mcpsession"
    with window(sock_path) as w, host(tapped(session, *everything_cmd())) as h:
        for data, rid in HANDSHAKE:
            h.ask(data, rid)
        state = w.intercept(ECHO)
        assert state == {"on": True, "filter": ECHO, "directions": ["out"]}
        h.send(call(3, "as the host wrote it")[0])
        held = w.held()[0]
        assert held["dir"] == "out" and held["behind"] == 0
        assert json.loads(data_of(held))["params"]["arguments"]["message"] == "as the host wrote it"
        h.send(request(4, "ping")[0])  # behind the held call: it waits too, order is kept
        w.wait(lambda x: x.get("queue", {}).get("out", {}).get("queued") == 1, "the ping queued behind it")
        time.sleep(0.3)
        assert h.count(3) == 0 and h.count(4) == 0
        edited = json.loads(data_of(held))
        edited["params"]["arguments"]["message"] = "edited in the window"
        released = w.decide(held["hold"], "forward", data=json.dumps(edited))
        assert released["state"] == "edited" and released["held_s"] >= 0.3
        h.wait(lambda: h.count(3) and h.count(4), 20, "the answers after the decision")
        assert answer(h, 3)["result"]["content"][0]["text"] == "Echo: edited in the window"
        assert h.finish() == 0
    got = intercept_frames(session)
    marked = [(d, m.get("state")) for d, _data, m in got if m]
    assert marked == [("out", "held"), ("out", "queued"), ("out", "edited"), ("err", "edited")], marked
    original = next(data for d, data, m in got if m.get("state") == "held")
    assert b"as the host wrote it" in original
    note = next(data for d, data, m in got if d == "err" and m)
    assert note.startswith(b"spyglass tap: intercept: host \xe2\x86\x92 server message 1 (tools/call, id 3) "
                           b"edited and forwarded after ")
    # recorded as read (the original, the ping behind it), then the edit as it went on; the answer pairs with it
    order = [m.get("state") or d for d, _data, m in got if d in ("out", "in") and b'"id":' in _data][-5:]
    assert order[:3] == ["held", "queued", "edited"]
    store = open_session(session).store
    edited_row = next(n for n in range(len(store)) if ((store.meta(n) or {}).get("intercept") or {}).get("state")
                      == "edited" and store.direction(n) == "out")
    assert b"edited in the window" in store.raw(store.pair(edited_row))
    # what the server got, read back as the conversation (replay sends these): the edited call, answered
    calls = open_session(session).surface().calls()
    assert [(c.params["arguments"]["message"], c.result["content"][0]["text"]) for c in calls] == [
        ("edited in the window", "Echo: edited in the window")]


def test_a_dropped_request_never_reaches_the_server(tmp_path, sock_path):
    """`cat` writes back every line it reads: what it never writes back, it never got."""
    session = tmp_path / "drop.mcpsession"
    with window(sock_path) as w, host(tapped(session, "cat")) as h:
        w.intercept('text contains "drop-me"')
        h.send(b'{"n":1,"say":"before"}\n')
        h.wait(lambda: b"before" in h.out, 10, "cat's echo of the first line")
        h.send(b'{"n":2,"say":"drop-me"}\n{"n":3,"say":"after"}\n')
        held = w.held()[0]
        assert data_of(held) == b'{"n":2,"say":"drop-me"}'
        time.sleep(0.3)
        assert b"after" not in h.out  # behind the held line
        assert w.decide(held["hold"], "drop")["state"] == "dropped"
        h.wait(lambda: b"after" in h.out, 10, "the line after the dropped one")
        assert h.finish() == 0
    assert bytes(h.out) == b'{"n":1,"say":"before"}\n{"n":3,"say":"after"}\n'
    got = intercept_frames(session)
    assert [d for d, data, _m in got if b"drop-me" in data] == ["out"]  # read from the host, never from cat
    note = next(data for d, data, m in got if d == "err" and m.get("state") == "dropped")
    assert b"dropped (never passed on)" in note


def test_order_is_kept_behind_a_held_line_and_later_matches_wait_their_turn(tmp_path, sock_path):
    session = tmp_path / "order.mcpsession"
    lines = [b'{"n":%d%s}\n' % (i, b',"hold":true' if i in (2, 5) else b"") for i in range(1, 9)]
    with window(sock_path) as w, host(tapped(session, "cat")) as h:
        w.intercept('text contains "hold"')
        h.send(b"".join(lines))
        first, second = w.held(2)
        assert (data_of(first), data_of(second)) == (lines[1].rstrip(), lines[4].rstrip())
        assert second["behind"] == 3  # the first held line and the two after it
        h.wait(lambda: h.out.count(b"\n") == 1, 10, "the line before the first held one")
        w.send({"decide": {"hold": second["hold"], "action": "forward"}})  # decided first: it waits its turn
        w.wait(lambda x: x.get("decided") == {"hold": second["hold"], "state": "forwarded"}, "the decision")
        time.sleep(0.3)
        assert bytes(h.out) == lines[0]
        w.decide(first["hold"], "forward")
        h.wait(lambda: h.out.count(b"\n") == 8, 10, "every line")
        assert h.finish() == 0
    assert bytes(h.out) == b"".join(lines)


def test_a_window_that_goes_away_lets_what_it_held_go_on_unchanged(tmp_path, sock_path):
    session = tmp_path / "gone.mcpsession"
    with window(sock_path) as w, host(tapped(session, *everything_cmd())) as h:
        for data, rid in HANDSHAKE:
            h.ask(data, rid)
        w.intercept(ECHO)
        h.send(call(3, "held, then let go")[0])
        w.held()
        h.send(request(4, "ping")[0])
        time.sleep(0.3)
        assert h.count(3) == 0
        w.hang_up()
        h.wait(lambda: h.count(3) and h.count(4), 20, "the answers once the window went away")
        assert answer(h, 3)["result"]["content"][0]["text"] == "Echo: held, then let go"
        h.ask(*call(5, "not held: intercept is off now"))
        assert h.finish() == 0
    got = intercept_frames(session)
    note = next(data for d, data, m in got if d == "err" and m.get("state") == "forwarded")
    assert b"forwarded unchanged" in note and note.endswith(b": the window went away")
    assert not any(m for _d, data, m in got if b"not held" in data)


def test_intercept_turned_off_lets_everything_go_and_the_bytes_are_as_without_the_tap(tmp_path, sock_path):
    script = [*HANDSHAKE, request(2, "tools/list"), call(3, "after intercept was off"), request(4, "ping")]
    direct = converse(everything_cmd(), script)
    session = tmp_path / "off.mcpsession"
    with window(sock_path) as w, host(tapped(session, *everything_cmd())) as h:
        for data, rid in script[:3]:
            h.ask(data, rid)
        w.intercept('method == "tools/call"')
        h.send(script[3][0])
        w.held()
        w.send({"intercept": {"on": False}})
        w.wait(lambda x: state(x) == {"on": False, "filter": 'method == "tools/call"',
                                               "directions": ["out"]}, "intercept off")
        h.wait(lambda: h.count(3), 20, "the held call let go")
        h.ask(*script[4])
        assert h.finish() == 0
    assert h.out == direct.out
    note = next(data for d, data, m in intercept_frames(session) if d == "err" and m)
    assert note.endswith(b"forwarded unchanged after " + note.split(b" after ")[1].split(b" s")[0]
                         + b" s: intercept was turned off")


def test_a_server_s_answer_is_held_by_its_request_s_tool_and_edited(tmp_path, sock_path):
    """server → host: the answer to an echo call matches `tool == echo` (the matcher pairs it with its
    request, as the traffic pane does); the host gets the edited answer."""
    session = tmp_path / "answer.mcpsession"
    with window(sock_path) as w, host(tapped(session, *everything_cmd())) as h:
        for data, rid in HANDSHAKE:
            h.ask(data, rid)
        w.intercept("tool == echo && kind == response", ("in",))
        h.send(call(3, "the server's words")[0])
        held = w.held()[0]
        assert held["dir"] == "in"
        answered = json.loads(data_of(held))
        assert answered["result"]["content"][0]["text"] == "Echo: the server's words"
        answered["result"]["content"][0]["text"] = "words the server never said"
        w.decide(held["hold"], "forward", data=json.dumps(answered, separators=(",", ":")))
        h.wait(lambda: h.count(3), 20, "the edited answer")
        assert answer(h, 3)["result"]["content"][0]["text"] == "words the server never said"
        assert h.finish() == 0


def test_what_the_tap_refuses_it_says(tmp_path, sock_path, expect_log):
    with window(sock_path) as w, host(tapped(tmp_path / "r.mcpsession", "cat")) as h:
        w.wait(lambda x: "tap" in x, "the hello")
        w.send({"window": 1})
        w.send({"intercept": {"on": True, "filter": "method == ", "directions": ["out"]}})
        error = w.wait(lambda x: "error" in state(x), "the filter's fault")["intercept"]
        assert error["on"] is False and error["error"].startswith("the filter: ")
        w.send({"intercept": {"on": True, "filter": "severity >= warning", "directions": ["out"]}})
        w.wait(lambda x: "live check" in state(x).get("error", ""), "no findings in a tap")
        w.send({"intercept": {"on": True, "filter": "", "directions": []}})
        w.wait(lambda x: "choose a direction" in state(x).get("error", ""), "no direction")
        w.send({"decide": {"hold": 99, "action": "forward"}})
        w.wait(lambda x: x.get("refused", {}).get("hold") == 99, "no such hold")
        w.send({"what": "is this"})
        w.wait(lambda x: x.get("refused", {}).get("message") == "what", "an unknown message")
        # an empty filter holds every line of its direction; an edit must stay one line
        w.intercept("")
        h.send(b"anything at all\r\n")
        held = w.held()[0]
        assert data_of(held) == b"anything at all"  # shown without its line break (\r\n is kept on the wire)
        w.send({"decide": {"hold": held["hold"], "action": "forward", "data": "two\nlines"}})
        w.wait(lambda x: "one line" in x.get("refused", {}).get("why", ""), "a line break refused")
        w.decide(held["hold"], "forward", data="not JSON, one line")
        h.wait(lambda: b"not JSON" in h.out, 10, "the edit")
        assert h.finish() == 0
    assert bytes(h.out) == b"not JSON, one line\r\n"


def test_the_tap_ends_with_held_messages_going_on(tmp_path, sock_path):
    """The server exits while an answer of its own is held: it reaches the host before the tap ends."""
    script = "import sys; sys.stdin.readline(); print('last words', flush=True)"
    with window(sock_path) as w, host(tapped(tmp_path / "end.mcpsession", sys.executable, "-c", script)) as h:
        w.intercept("text contains \"last\"", ("in",))
        h.send(b"go\n")
        w.held()
        assert h.finish() == 0
    assert bytes(h.out) == b"last words\n"


def test_an_old_window_that_never_answers_changes_nothing(tmp_path, sock_path):
    script = [*HANDSHAKE, call(3, "nobody intercepts"), request(4, "ping")]
    direct = converse(everything_cmd(), script)
    with window(sock_path) as w:
        through = converse(tapped(tmp_path / "old.mcpsession", *everything_cmd()), script)
        hello = w.wait(lambda x: "tap" in x, "the hello")
    assert hello["intercept"] == PROTOCOL and through.out == direct.out
    assert not any("held" in x or "queue" in x for x in w.items)


def test_an_http_tap_says_it_cannot_intercept(tmp_path, sock_path):
    import subprocess

    from support import PY, ROOT

    with window(sock_path) as w:
        proc = subprocess.Popen([PY, "-m", "inspector", "tap", "--listen", "127.0.0.1:0", "--no-session",
                                 "http://127.0.0.1:9/mcp"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, cwd=str(ROOT), env={**os.environ})
        try:
            hello = w.wait(lambda x: "tap" in x, "the HTTP tap's hello")
        finally:
            proc.terminate()
            proc.wait(10)
    assert hello["intercept"] == 0 and "stdio" in hello["intercept_unavailable"]


def test_the_filter_code_loads_only_when_a_window_turns_intercept_on(tmp_path, sock_path):
    """A tap with the live feed on (no window yet) loads intercept's port, not the filter code."""
    import subprocess

    from support import PY, ROOT

    code = ("import sys; from inspector.__main__ import main; code = main(['tap', '--no-session', '--', 'true']); "
            "print(code, 'inspector.tap.intercept' in sys.modules, "
            "sorted(m for m in sys.modules if m.startswith('inspector.traffic')), file=sys.stderr)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    run = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=30, cwd=str(ROOT),
                         stdin=subprocess.DEVNULL, env=env)
    assert run.stderr.strip().splitlines()[-1] == "0 True []", run.stderr
