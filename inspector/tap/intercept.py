"""Intercept, the tap's side (docs/tap.md#intercept): a window asks a stdio tap to hold the messages that
match a filter of the traffic pane's language; each one waits, with every later message of its direction
behind it (order is kept), until the user forwards it (as it was, or edited) or drops it.

Off by default, and free until it is turned on: a pump looks at one slot per chunk it reads (None), and
this module is loaded after the server has started; the filter code (`inspector.traffic`) is imported
only when a window first turns intercept on.

When it is on, each direction has a `Gate` in its pump's slot. The pump hands it what it reads; the gate
cuts whole lines, matches each (`Matcher`: the traffic pane's own `TrafficFilter` over a small store in
memory, so a response matches `tool == x` by its request) and writes a line on at once when nothing waits
before it, or queues it behind a held message. A sender thread per gate writes the queue out in order as
held messages are decided. Nothing is written while a lock is held: a pipe that is full stalls its own
direction only, never the recorder (which carries the window's decisions) or the other direction.

Nothing is held by accident: turning intercept off, the window going away and the tap ending forward
every held message unchanged at once. A held message waits for the user without a timeout.

What the session file shows (meta key `intercept` on the frames): the original at the time it was read
(`state: held`, its number `hold`), the lines queued behind it (`state: queued`), and at the time it went
on (or would have) a note (an `err` line of the tap: `forwarded`, `edited`, `dropped`, with `held_s` and
`why`), and for an edited one the edited bytes as a frame of its direction (`state: edited`).
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import os
import select
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

PROTOCOL = 1  # the version of the window ↔ tap intercept messages (the hello's "intercept")
ARROWS = {"out": "host → server", "in": "server → host"}
SLOTS = ("out", "in")  # a pump's slot number is its direction's index here
QUEUE_MAX = 32 * 1024 * 1024  # bytes queued behind a held message before the pump stops reading its side
LINE_MAX = 64 * 1024 * 1024  # a line longer than this is never matched (it passes as it comes)
STORE_MAX = 100_000  # lines the matcher keeps for pairing answers with requests before it starts afresh


class Sink(Protocol):
    """What the gates record into (`TapRecorder`)."""

    def chunk(self, direction: str, data: bytes) -> None: ...

    def frame(self, direction: str, data: bytes, meta: dict[str, Any] | None = None) -> None: ...


def data_fields(data: bytes) -> dict[str, str]:
    """A message's bytes for a JSON line: text when they are UTF-8, base64 otherwise."""
    try:
        return {"data": data.decode("utf-8")}
    except UnicodeDecodeError:
        import base64

        return {"data_b64": base64.b64encode(data).decode("ascii")}


def data_of(item: dict[str, Any]) -> bytes | None:
    """The bytes of `data_fields` back (None when there are none, or they are not valid)."""
    if isinstance(item.get("data"), str):
        return str(item["data"]).encode("utf-8", "surrogatepass")
    if isinstance(item.get("data_b64"), str):
        import base64
        import binascii

        try:
            return base64.b64decode(item["data_b64"], validate=True)
        except (binascii.Error, ValueError):
            return None
    return None


def describe(line: bytes) -> str:
    """A message in a few words for the notes: its method and id."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return "not JSON"
    if not isinstance(message, dict):
        return "a batch" if isinstance(message, list) else "not a message"
    method = message.get("method")
    rid = message.get("id")
    if isinstance(method, str):
        return f"{method}, id {json.dumps(rid)}" if "id" in message else method
    if "id" in message:
        return f"{'error' if 'error' in message else 'answer'} to id {json.dumps(rid)}"
    return "a message"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            select.select([], [fd], [])
            continue
        view = view[written:]


class Matcher:
    """The traffic pane's filter (`text` as the filter line takes it: an expression, or plain text), for
    one message at a time. Every line of both directions is added to a store in memory, so what the pane
    knows of a frame (a response's method and tool, its latency) the matcher knows too."""

    def __init__(self, server_id: str, text: str, directions: tuple[str, ...]) -> None:
        from ..traffic.expr import is_expression, parse
        from ..traffic.filter import TrafficFilter

        text = text.strip()
        expr = parse(text) if is_expression(text) else None  # FilterSyntaxError: said to the window
        self.filter = TrafficFilter.make(text="" if expr is not None else text, expr=expr, directions=directions)
        if self.filter.expert:
            raise ValueError("severity and expert need the live check's findings, which the tap does not make: "
                             "filter on what a message says (method, tool, id, text, size…)")
        self.server_id = server_id
        self.text = text
        self._lock = threading.Lock()
        self._fresh()

    def _fresh(self) -> None:
        from ..traffic.frame import Frame
        from ..traffic.store import TrafficStore

        self._frame = Frame
        self.store = TrafficStore(":memory:")
        self.view = self.store.filter(self.filter)

    def match(self, direction: str, line: bytes) -> bool:
        with self._lock:
            if len(self.store) >= STORE_MAX:
                self._fresh()
            n = self.store.add(self.server_id, self._frame(direction, line, time.monotonic(), time.time()))
            self.view.update()
            rows = self.view.rows
            return bool(rows) and rows[-1] == n


class Held:
    """One held message: its number, direction, bytes (`line`, its `\\r` kept, without the `\\n`), when it
    was read, and once decided what goes on instead (`wire`: None drops it)."""

    __slots__ = ("direction", "hold", "line", "mono", "state", "wall", "why", "wire")

    def __init__(self, hold: int, direction: str, line: bytes) -> None:
        self.hold = hold
        self.direction = direction
        self.line = line
        self.wall = time.time()
        self.mono = time.monotonic()
        self.state: str | None = None  # forwarded | edited | dropped, once decided
        self.wire: bytes | None = None
        self.why = ""

    def decide(self, state: str, wire: bytes | None, why: str) -> None:
        self.state, self.wire, self.why = state, wire, why

    def message(self, behind: int) -> dict[str, Any]:
        shown = self.line[:-1] if self.line.endswith(b"\r") else self.line
        return {"held": {"hold": self.hold, "dir": self.direction, "wall": self.wall, "behind": behind,
                         **data_fields(shown)}}


class Gate:
    """One direction's pipe while intercept is on (see the module's description)."""

    def __init__(self, port: WindowPort, slot: int, dst: int, sink: Sink) -> None:
        self.port = port
        self.slot = slot
        self.direction = SLOTS[slot]
        self.dst = dst
        self.sink = sink
        self.holding = False  # this direction is intercepted (else its lines are only shown to the matcher)
        self.closing = False  # intercept went off: nothing more is held; the gate lets go once its queue is out
        self.detached = False
        self.broken = False  # the reader went away: what comes is read and recorded, not written
        self.cond = threading.Condition()
        self.queue: collections.deque[tuple[str, Any, int]] = collections.deque()  # (kind, what, bytes)
        self.queued = 0  # bytes in the queue
        self.lines = 0  # messages (or pieces of one) in the queue that are not held
        self.holds: collections.deque[Held] = collections.deque()  # the held ones in the queue, in order
        self.busy = False  # someone writes outside the lock: nothing else may write now
        self._rest = bytearray()  # the line under way
        self._through: bool | None = None  # the line under way passes unmatched (None: not known yet)
        self.sender = threading.Thread(target=self._send, name=f"spyglass-tap-hold-{self.direction}", daemon=True)
        self.sender.start()

    # ------------------------------------------------------------------ the pump's side
    def take(self, data: bytes, previous: bytes) -> bytes | None:
        """What the pump read (`previous`: its chunk before): None when the gate has it; else the bytes the
        pump records and writes on as it does with intercept off (the gate has just let go)."""
        direct: list[bytes] = []
        with self.cond:
            if self.detached:
                return data
            if self._through is None:  # attached mid-line: the rest of that line passes as it is
                self._through = bool(previous) and not previous.endswith(b"\n")
            if self.closing:
                if not self.queue and not self.busy:
                    return self._let_go(data)
                self._queue_plain(bytes(self._rest) + data)
                self._rest.clear()
                self._through = None  # lines are not followed meanwhile: known again from the next chunk
                return None
            while self.queued > QUEUE_MAX and not self.closing:
                self.cond.wait(0.5)  # the other side does not take it: the source waits, as a full pipe would
            self._lines(data, direct)
            if direct:
                self.busy = True
        if direct:
            self._write(b"".join(direct))
            with self.cond:
                self.busy = False
                self.cond.notify_all()
        return None

    def _lines(self, data: bytes, direct: list[bytes]) -> None:
        start = 0
        run_from = len(direct)
        cut = data.find(b"\n")
        while cut >= 0:
            if self._rest:
                self._rest += data[start:cut]
                line = bytes(self._rest)
                self._rest.clear()
            else:
                line = data[start:cut]
            start = cut + 1
            cut = data.find(b"\n", start)
            if self._through:
                self._through = False
                self._plain_line(line, direct)
                continue
            matched = self.port.matches(self.direction, line)
            if not (matched and self.holding):
                self._plain_line(line, direct)
                continue
            if len(direct) > run_from:  # what passes before it is recorded before it
                self.sink.chunk(self.direction, b"".join(direct[run_from:]))
                run_from = len(direct)
            self._hold(line)
        if len(direct) > run_from:
            self.sink.chunk(self.direction, b"".join(direct[run_from:]))
        self._rest += data[start:]
        if len(self._rest) > LINE_MAX:  # a runaway line is never matched: it passes as it comes
            self._through = True
            part = bytes(self._rest)
            self._rest.clear()
            self.sink.chunk(self.direction, part)
            if self.queue or self.busy:
                self._enqueue("bytes", part, len(part))
            else:
                direct.append(part)

    def _plain_line(self, line: bytes, direct: list[bytes]) -> None:
        if self.queue or self.busy:
            head = self.holds[-1] if self.holds else None  # the held message it waits behind
            self.sink.frame(self.direction, line, {"intercept": {"state": "queued",
                                                                 **({"behind": head.hold} if head else {})}})
            self._enqueue("bytes", line + b"\n", len(line) + 1)
        else:
            direct.append(line + b"\n")

    def _queue_plain(self, data: bytes) -> None:
        """Bytes that pass unmatched behind what is queued (recorded as the pump would)."""
        if data:
            self.sink.chunk(self.direction, data)
            self._enqueue("bytes", data, len(data))

    def _hold(self, line: bytes) -> None:
        held = self.port.new_hold(self.direction, line)
        self.sink.frame(self.direction, line, {"intercept": {"hold": held.hold, "state": "held",
                                                             "filter": self.port.filter_text}})
        behind = len(self.queue)
        self._enqueue("hold", held, len(line) + 1)
        self.port.tell(held.message(behind))

    def _enqueue(self, kind: str, what: Any, size: int) -> None:
        self.queue.append((kind, what, size))
        self.queued += size
        if kind == "hold":
            self.holds.append(what)
        elif kind == "bytes":
            self.lines += 1
        self.port.touch()
        self.cond.notify_all()

    def _let_go(self, data: bytes) -> bytes:
        """Off, and nothing waits: the pump has its pipe back (a line under way goes with `data`)."""
        self.detached = True
        self.port.detach(self)
        out = bytes(self._rest) + data
        self._rest.clear()
        self.cond.notify_all()
        return out

    def finish(self, at_end: Callable[[], None]) -> bool:
        """The source ended: True when the gate runs `at_end` once its queue is out, False when the pump
        may run it now (nothing waits)."""
        with self.cond:
            if self.detached:
                return False
            rest = bytes(self._rest)
            self._rest.clear()
            if self.queue or self.busy:
                self._queue_plain(rest)
                self._enqueue("end", at_end, 0)
                return True
            self.detached = True
            self.port.detach(self)
            self.cond.notify_all()
            if rest:
                self.sink.chunk(self.direction, rest)
        self._write(rest)
        return False

    # ------------------------------------------------------------------ deciding
    def release(self, why: str) -> None:
        """Every held message that waits goes on unchanged."""
        with self.cond:
            for held in self.holds:
                if held.state is None:
                    held.decide("forwarded", held.line + b"\n", why)
            self.cond.notify_all()

    def close(self, why: str) -> None:
        """Intercept is off for this direction: what is held goes on, and the gate lets go."""
        with self.cond:
            self.closing = True
        self.release(why)

    def waiting(self) -> dict[str, Any]:
        """For the window: held messages waiting, lines queued behind them, and since when the first waits."""
        with self.cond:
            waiting = [h for h in self.holds if h.state is None]
            return {"held": len(waiting), "queued": self.lines, "since": waiting[0].wall if waiting else None,
                    "bytes": self.queued}

    # ------------------------------------------------------------------ the sender thread
    def _send(self) -> None:
        while True:
            with self.cond:
                while True:
                    if self.detached and not self.queue:
                        return
                    if self.queue and not self.busy:
                        kind, what, size = self.queue[0]
                        if kind != "hold" or what.state is not None:
                            self.queue.popleft()
                            self.queued -= size
                            if kind == "hold":
                                self.holds.popleft()
                            elif kind == "bytes":
                                self.lines -= 1
                            self.busy = True
                            break
                    self.cond.wait()
            try:
                if kind == "bytes":
                    self._write(what)
                elif kind == "hold":
                    self._apply(what)
                else:
                    with contextlib.suppress(OSError):
                        what()
                    with self.cond:
                        self.detached = True  # nothing comes after the end
                        self.port.detach(self)
            finally:
                with self.cond:
                    self.busy = False
                    self.cond.notify_all()
                self.port.touch()

    def _apply(self, held: Held) -> None:
        """A decided message at the head of the queue: recorded first (an answer to it is read only after
        it is written), then written."""
        state = held.state or "forwarded"
        held_s = round(time.monotonic() - held.mono, 3)
        if state == "edited" and held.wire is not None:
            self.sink.frame(held.direction, held.wire[:-1], {"intercept": {"hold": held.hold, "state": "edited"}})
        done = {"forwarded": "forwarded unchanged", "edited": "edited and forwarded",
                "dropped": "dropped (never passed on)"}[state]
        note = (f"spyglass tap: intercept: {ARROWS[held.direction]} message {held.hold} ({describe(held.line)}) "
                f"{done} after {held_s:.1f} s" + (f": {held.why}" if held.why else ""))
        meta = {"hold": held.hold, "state": state, "dir": held.direction, "held_s": held_s, "why": held.why}
        self.sink.frame("err", note.encode(), {"intercept": meta})
        if held.wire is not None:
            self._write(held.wire)
        self.port.released(held, held_s)

    def stop(self) -> None:
        """The tap ends: a gate whose queue is out lets go (its sender ends)."""
        with self.cond:
            if not self.queue and not self.busy and not self.detached:
                self.detached = True
                self.port.detach(self)
            self.cond.notify_all()

    def _write(self, data: bytes) -> None:
        if self.broken or not data:
            return
        try:
            _write_all(self.dst, data)
        except OSError:
            self.broken = True


class WindowPort:
    """What a window may ask of a stdio tap: the recorder's listener (`TapRecorder(listener=…)`), and the
    pumps' slots (`slots`: the gate of host → server, then of server → host; None while intercept is off).
    `attach(sink, dsts)` before the pumps start; `close(why, seconds)` when the server has ended."""

    def __init__(self, server_id: str) -> None:
        self.server_id = server_id
        self.slots: list[Gate | None] = [None, None]
        self.filter_text = ""
        self.directions: tuple[str, ...] = ()
        self.on = False
        self.window: Any = None  # the window's protocol version, once it said
        self._sink: Sink | None = None
        self._dsts: dict[str, int] = {}
        self._matcher: Matcher | None = None
        self._gates: list[Gate | None] = [None, None]  # the live gates, also while they let go
        self._holds: dict[int, Held] = {}
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._outbox: collections.deque[dict[str, Any]] = collections.deque()
        self._dirty = False
        self._last: dict[str, Any] | None = None

    def attach(self, sink: Sink, dsts: dict[str, int]) -> None:
        self._sink = sink
        self._dsts = dict(dsts)

    # ------------------------------------------------------------------ what the recorder calls (its thread)
    def hello(self) -> dict[str, Any]:
        return {"intercept": PROTOCOL}

    def command(self, message: dict[str, Any]) -> None:
        if "window" in message:
            self.window = message["window"]
            self._last = None
        elif isinstance(message.get("intercept"), dict):
            self._set(message["intercept"])
        elif isinstance(message.get("decide"), dict):
            self._decide(message["decide"])
        else:
            what = next(iter(message), "")
            self.tell({"refused": {"message": str(what), "why": "this tap does not know that message"}})

    def tick(self) -> list[dict[str, Any]]:
        if self.window is None:
            return []  # a window that never said it speaks intercept (an old one) is told nothing
        out = []
        while self._outbox:
            out.append(self._outbox.popleft())
        if self._dirty:
            self._dirty = False
            queue = {SLOTS[i]: g.waiting() for i, g in enumerate(self._gates) if g is not None}
            status = {"queue": queue}
            if status != self._last:
                self._last = status
                out.append(status)
        return out

    def gone(self) -> None:
        """The window went away: intercept is off, and what it held goes on."""
        self.window = None
        self._outbox.clear()
        if self.on:
            self._off("the window went away")

    def close(self, why: str, seconds: float) -> None:
        """The tap ends: what is held goes on, and the queues are written out (for `seconds` at most)."""
        self._off(why)
        deadline = time.monotonic() + seconds
        for gate in list(self._gates):
            if gate is None:
                continue
            with gate.cond:
                while (gate.queue or gate.busy) and time.monotonic() < deadline:
                    gate.cond.wait(max(0.0, min(0.1, deadline - time.monotonic())))
            gate.stop()

    # ------------------------------------------------------------------ what the gates call (pump threads)
    def matches(self, direction: str, line: bytes) -> bool:
        matcher = self._matcher
        return matcher is not None and matcher.match(direction, line)

    def new_hold(self, direction: str, line: bytes) -> Held:
        held = Held(next(self._numbers), direction, line)
        self._holds[held.hold] = held
        return held

    def released(self, held: Held, held_s: float) -> None:
        self._holds.pop(held.hold, None)
        self.tell({"released": {"hold": held.hold, "state": held.state or "forwarded", "why": held.why,
                                "held_s": held_s}})

    def tell(self, message: dict[str, Any]) -> None:
        if self.window is None:
            return  # said to no window (one that went away): the next one starts afresh
        self._outbox.append(message)
        self._dirty = True

    def touch(self) -> None:
        self._dirty = True

    def detach(self, gate: Gate) -> None:
        if self.slots[gate.slot] is gate:
            self.slots[gate.slot] = None
        if self._gates[gate.slot] is gate:
            self._gates[gate.slot] = None
        self._dirty = True

    # ------------------------------------------------------------------ turning it on and off
    def _state(self, error: str | None = None) -> dict[str, Any]:
        state: dict[str, Any] = {"on": self.on, "filter": self.filter_text, "directions": list(self.directions)}
        if error:
            state["error"] = error
        return {"intercept": state}

    def _set(self, wanted: dict[str, Any]) -> None:
        if wanted.get("on") is not True:
            self._off("intercept was turned off")
            self.tell(self._state())
            return
        text = wanted.get("filter") if isinstance(wanted.get("filter"), str) else ""
        directions = tuple(d for d in SLOTS if d in (wanted.get("directions") or ()))
        if not directions:
            self.tell(self._state("choose a direction to intercept: host → server, server → host or both"))
            return
        if self._sink is None:
            self.tell(self._state("the tap is still starting: try again"))
            return
        try:
            matcher = Matcher(self.server_id, str(text), directions)
        except ValueError as exc:  # FilterSyntaxError is one
            self.tell(self._state(f"the filter: {exc}"))
            return
        with self._lock:
            self._matcher = matcher
            self.filter_text, self.directions, self.on = matcher.text, directions, True
            for slot, direction in enumerate(SLOTS):
                gate = self._gates[slot]
                if gate is not None:
                    with gate.cond:
                        if gate.detached:
                            gate = None
                        else:
                            gate.closing = False
                if gate is None:
                    gate = Gate(self, slot, self._dsts[direction], self._sink)
                    self._gates[slot] = gate
                gate.holding = direction in directions
                self.slots[slot] = gate
        for slot, direction in enumerate(SLOTS):
            gate = self._gates[slot]
            if gate is not None and direction not in directions:
                gate.release(f"{ARROWS[direction]} is no longer intercepted")
        self.tell(self._state())

    def _off(self, why: str) -> None:
        with self._lock:
            self.on = False
            self._matcher = None
            gates = [g for g in self._gates if g is not None]
        for gate in gates:
            gate.close(why)
        self._dirty = True

    def _decide(self, decision: dict[str, Any]) -> None:
        hold = decision.get("hold")
        held = self._holds.get(hold) if isinstance(hold, int) else None
        action = decision.get("action")
        if held is None or held.state is not None or action not in ("forward", "drop"):
            why = ("no such held message (already passed on?)" if held is None or held.state is not None
                   else "the action is forward or drop")
            self.tell({"refused": {"message": "decide", "hold": hold, "why": why}})
            return
        gate = self._gates[SLOTS.index(held.direction)]
        ending = b"\r\n" if held.line.endswith(b"\r") else b"\n"
        if action == "drop":
            state, wire = "dropped", None
        elif "data" in decision or "data_b64" in decision:
            edited = data_of(decision)
            if edited is None or b"\n" in edited or b"\r" in edited:
                self.tell({"refused": {"message": "decide", "hold": hold,
                                       "why": "an edited message is one line of bytes (no line breaks)"}})
                return
            state, wire = "edited", edited + ending
        else:
            state, wire = "forwarded", held.line + b"\n"
        why = str(decision.get("why") or "in the window")
        if gate is None:  # pragma: no cover - a held message always has its gate
            return
        with gate.cond:
            if held.state is None:
                held.decide(state, wire, why)
            gate.cond.notify_all()
        self.tell({"decided": {"hold": held.hold, "state": state}})  # it goes on when its turn comes
