"""Intercept, the window's side (no Qt): what the window knows of one tap's intercept, and what it asks of
the tap, over the tap's socket (docs/tap.md#intercept; the tap's side is `inspector.tap.intercept`).

The socket carries one JSON object a line both ways. The tap's hello says `"intercept": 1` (the version of
these messages it speaks), `0` with `intercept_unavailable` (an HTTP tap: it cannot), or nothing (a tap of
an older Spyglass): then intercept is unavailable, and the window says why. The window answers a tap that
can with `{"window": 1}` first; an older window never writes, and a tap never waits for it.

window → tap: `{"intercept": {"on": true, "filter": TEXT, "directions": ["out", "in"]}}`, `{"intercept":
{"on": false}}`, `{"decide": {"hold": N, "action": "forward" | "drop", "data": EDITED?}}`.
tap → window: `{"intercept": {"on", "filter", "directions", "error"?}}` (its state after each change),
`{"held": {"hold", "dir", "wall", "behind", "data" | "data_b64"}}`, `{"decided": {"hold", "state"}}`,
`{"released": {"hold", "state", "why", "held_s"}}`, `{"queue": {DIR: {"held", "queued", "since",
"bytes"}}}`, `{"refused": {"message", "why", "hold"?}}`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from ..session.hooks import Hook
from .intercept import ARROWS, PROTOCOL, data_of, describe

OLD_TAP = ("this tap runs an older Spyglass, without intercept: update the Spyglass that the host starts "
           "(its config names it) and restart the host")
KEYS = ("intercept", "held", "decided", "released", "queue", "refused")  # the lines of intercept from a tap


class HeldMessage:
    """A message the tap holds: its number, direction, bytes (without the line break), when it was read,
    how many waited before it, and once the user decided, what (`forwarded`, `edited`, `dropped`)."""

    __slots__ = ("behind", "data", "decided", "direction", "hold", "wall")

    def __init__(self, hold: int, direction: str, data: bytes, wall: float, behind: int) -> None:
        self.hold = hold
        self.direction = direction
        self.data = data
        self.wall = wall
        self.behind = behind
        self.decided: str | None = None

    @property
    def arrow(self) -> str:
        return ARROWS.get(self.direction, self.direction)

    def summary(self) -> str:
        return describe(self.data)

    def shown(self) -> str:
        """The message as the editor shows it: JSON indented, anything else as its text."""
        try:
            value = json.loads(self.data)
        except (ValueError, RecursionError):
            return self.data.decode("utf-8", "replace")
        return json.dumps(value, indent=2, ensure_ascii=False)

    def is_text(self) -> bool:
        try:
            self.data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    def held_for(self, now: float | None = None) -> float:
        return max(0.0, (now if now is not None else time.time()) - self.wall)


def edited(message: HeldMessage, text: str) -> tuple[str | None, str]:
    """What the editor's `text` sends instead of `message`: None when it is what was shown (the original
    bytes go on, exactly), else one line — JSON written compactly, anything else with its line breaks made
    spaces; and a note saying which."""
    if text == message.shown():
        return None, "unchanged: the original bytes go on"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        flat = " ".join(text.splitlines())
        return flat, "not JSON: sent as typed, on one line (the server or host sees a malformed message)"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")), "edited: sent as compact JSON, one line"


def check_filter(text: str) -> Exception | None:
    """What is wrong with `text` as an intercept filter (a `FilterSyntaxError` with its span, or a
    ValueError), or None: the traffic pane's language, less what needs the live check's findings."""
    from ..traffic.expr import FilterSyntaxError, is_expression, needs_finding, parse

    text = text.strip()
    if not is_expression(text):
        return None
    try:
        node = parse(text)
    except FilterSyntaxError as exc:
        return exc
    if needs_finding(node):
        return ValueError("severity and expert need the live check's findings, which a tap does not make")
    return None


class InterceptLink:
    """One tapped server's intercept, as the window sees it. `send` writes a line to the tap (None: the
    tap cannot be written to). `changed` says what changed: "state", "held", "queue"."""

    def __init__(self, hello: dict[str, Any], send: Callable[[dict[str, Any]], None] | None) -> None:
        version = hello.get("intercept")
        self.unavailable: str | None = None  # why intercept cannot be used with this tap
        if isinstance(version, bool) or not isinstance(version, int):
            self.unavailable = OLD_TAP
        elif version < 1:
            why = hello.get("intercept_unavailable")
            self.unavailable = why if isinstance(why, str) and why else "this tap cannot intercept"
        self._send = send if self.unavailable is None else None
        self.on = False
        self.filter = ""
        self.directions: tuple[str, ...] = ("out",)
        self.error: str | None = None  # what the tap refused last
        self.asked = False  # a change was asked for and the tap has not answered yet
        self.held: dict[int, HeldMessage] = {}
        self.queues: dict[str, dict[str, Any]] = {}
        self.released = 0  # messages let go so far
        self.changed: Hook[[str]] = Hook("intercept")
        if self._send is not None:
            self._send({"window": PROTOCOL})

    @property
    def available(self) -> bool:
        return self.unavailable is None

    # ------------------------------------------------------------------ asking the tap
    def turn_on(self, filter_text: str, directions: tuple[str, ...]) -> Exception | None:
        """Ask the tap to hold what matches; the problem with the filter (nothing is asked), or None."""
        if self._send is None:
            return ValueError(self.unavailable or "the tap is gone")
        problem = check_filter(filter_text)
        if problem is not None:
            return problem
        if not directions:
            return ValueError("choose a direction to intercept")
        self.asked = True
        self.error = None
        self._send({"intercept": {"on": True, "filter": filter_text.strip(), "directions": list(directions)}})
        self.changed.emit("state")
        return None

    def turn_off(self) -> None:
        """Ask the tap to stop: everything it holds goes on unchanged."""
        if self._send is None:
            return
        self.asked = True
        self._send({"intercept": {"on": False}})
        self.changed.emit("state")

    def forward(self, hold: int, text: str | None = None) -> str:
        """Forward held message `hold`: as it was (`text` None or unchanged), or edited; the note of what
        goes (an empty string when there is no such message waiting)."""
        message = self.held.get(hold)
        if message is None or message.decided or self._send is None:
            return ""
        data, note = edited(message, text) if text is not None else (None, "unchanged: the original bytes go on")
        decision: dict[str, Any] = {"hold": hold, "action": "forward"}
        if data is not None:
            decision["data"] = data
        self._send({"decide": decision})
        return note

    def drop(self, hold: int) -> bool:
        message = self.held.get(hold)
        if message is None or message.decided or self._send is None:
            return False
        self._send({"decide": {"hold": hold, "action": "drop"}})
        return True

    # ------------------------------------------------------------------ what the tap says
    def receive(self, item: dict[str, Any]) -> bool:
        """One line from the tap; False when it is not one of intercept's."""
        if isinstance(item.get("intercept"), dict):
            state = item["intercept"]
            self.asked = False
            self.on = state.get("on") is True
            if isinstance(state.get("filter"), str) and (self.on or state.get("filter")):
                self.filter = state["filter"]
            directions = tuple(d for d in ("out", "in") if d in (state.get("directions") or ()))
            if directions:
                self.directions = directions
            self.error = state["error"] if isinstance(state.get("error"), str) else None
            self.changed.emit("state")
        elif isinstance(item.get("held"), dict):
            said = item["held"]
            data = data_of(said)
            hold = said.get("hold")
            if data is None or not isinstance(hold, int):
                return True
            wall = said.get("wall")
            behind = said.get("behind")
            self.held[hold] = HeldMessage(hold, str(said.get("dir")), data,
                                          float(wall) if isinstance(wall, (int, float)) else time.time(),
                                          behind if isinstance(behind, int) else 0)
            self.changed.emit("held")
        elif isinstance(item.get("decided"), dict):
            message = self.held.get(item["decided"].get("hold"))
            if message is not None:
                message.decided = str(item["decided"].get("state") or "forwarded")
                self.changed.emit("held")
        elif isinstance(item.get("released"), dict):
            if self.held.pop(item["released"].get("hold"), None) is not None:
                self.released += 1
                self.changed.emit("held")
        elif isinstance(item.get("queue"), dict):
            self.queues = {k: v for k, v in item["queue"].items() if isinstance(v, dict)}
            self.changed.emit("queue")
        elif isinstance(item.get("refused"), dict):
            self.asked = False
            self.error = str(item["refused"].get("why") or "the tap refused")
            self.changed.emit("state")
        else:
            return False
        return True

    def ended(self, why: str) -> None:
        """The tap is gone (it let go of what it held as it went)."""
        self._send = None
        self.on = False
        self.held.clear()
        self.queues = {}
        if self.unavailable is None:
            self.unavailable = f"the tap ended ({why})" if why else "the tap ended"
        self.changed.emit("state")

    # ------------------------------------------------------------------ for the window to say
    def waiting(self) -> list[HeldMessage]:
        """The held messages, oldest first."""
        return sorted(self.held.values(), key=lambda m: m.hold)

    def queue_text(self, now: float | None = None) -> str:
        """How long the first held message of each direction waits, and how many messages wait behind."""
        parts = []
        for direction in ("out", "in"):
            queue = self.queues.get(direction) or {}
            held, queued, since = queue.get("held") or 0, queue.get("queued") or 0, queue.get("since")
            if not held and not queued:
                continue
            waited = f" for {max(0.0, (now or time.time()) - since):.1f} s" if isinstance(since, (int, float)) else ""
            behind = f", {queued} message{'s' if queued != 1 else ''} queued behind" if queued else ""
            parts.append(f"{ARROWS[direction]}: {held} held{waited}{behind}")
        return " · ".join(parts) if parts else "Nothing is held: messages pass as they come."
