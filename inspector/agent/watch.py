"""The person watching: windows attached to the background process see every server, frame and call of the
agents as it happens, and answer the calls that wait for approval.

A client that sends `{"tool": "watch"}` becomes a watcher: its answer lists the servers open (each with its
`capabilities` and `toolList` as its handshake and last listing gave them, which its frames will not repeat)
and the calls waiting for a decision; from then on the background process pushes it
events, one JSON object a line with an `event` key — `server` (opened, closed, restarted, a status change),
`frame` (a frame of a server's traffic: direction, text, times), `call` (started or finished, with the
arguments, the outcome and `by: "agent"`), `approve` (a call held until a person decides) and `decided`.
A watcher answers with `{"tool": "decide", "arguments": {"approval": N, "allow": true|false}}`. A held call
resolves only by a person's choice: allowed, denied, or refused when the last window goes away. No Qt here.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
from collections.abc import Callable
from functools import partial
from typing import Any

from ..session import CallRecord
from ..traffic.frame import Frame
from .errors import AgentError
from .hub import Connection, Hub

TEXT_MAX = 256 * 1024  # of one frame sent to a window (its traffic pane shows the head of a huge frame)

Send = Callable[[dict[str, Any]], None]


class Watchers:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.sends: list[Send] = []
        self.pending: dict[int, tuple[asyncio.Future[bool], dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        hub.listeners.append(self._hub_event)
        hub.frame_listeners.append(self._frame)

    @property
    def watching(self) -> bool:
        return bool(self.sends)

    def add(self, send: Send) -> dict[str, Any]:
        """A new watcher: what it needs to catch up (the servers, the calls waiting for a decision)."""
        self.sends.append(send)
        servers = [said(conn) for conn in self.hub.connections.values()]  # what happened before this watcher came
        return {"watching": True, "servers": servers, "waiting": [event for _future, event in self.pending.values()]}

    def remove(self, send: Send) -> None:
        with contextlib.suppress(ValueError):
            self.sends.remove(send)
        if not self.sends:  # nobody left to ask: what was waiting is refused
            for future, _event in list(self.pending.values()):
                if not future.done():
                    future.set_exception(AgentError("the window watching Spyglass was closed before a person "
                                                    "decided; call again to ask again", "refused"))

    def broadcast(self, event: dict[str, Any]) -> None:
        for send in list(self.sends):
            send(event)

    # ------------------------------------------------------------------ what happens
    def _hub_event(self, what: str, name: str) -> None:
        if what.startswith("changed:") and what != "changed:status" and what != "changed:tools":
            return
        conn = self.hub.connections.get(name)
        self.broadcast({"event": "server", "what": what, "name": name,
                        "server": said(conn) if conn is not None else None})

    def _frame(self, name: str, n: int, frame: Frame) -> None:
        if not self.sends:
            return
        data = frame.data[:TEXT_MAX]
        try:
            text: str | None = data.decode("utf-8")
            raw = None
        except UnicodeDecodeError:
            text, raw = None, base64.b64encode(data).decode("ascii")
        event = {"event": "frame", "server": name, "n": n, "dir": frame.direction, "mono": frame.mono,
                 "wall": frame.wall, "text": text, "base64": raw, "size": len(frame.data),
                 "meta": frame.meta if _jsonable(frame.meta) else None}
        self.broadcast(event)

    def call_started(self, conn: Connection, rec: CallRecord, *, by: str = "agent", client: str | None = None) -> None:
        """`by`: `agent`, or `person` (the window's user took the call over); `client`: the program that asked
        (the agent's MCP clientInfo, `spyglass do`), when it said."""
        self.broadcast({"event": "call", "phase": "started", "by": by, "client": client, "server": conn.name,
                        "callId": rec.id, "tool": rec.tool, "arguments": rec.arguments})
        if rec.job is not None:
            rec.job.add_done_callback(partial(self._finished, conn, rec, by, client))

    def _finished(self, conn: Connection, rec: CallRecord, by: str, client: str | None, _job: Any) -> None:
        self._call_finished(conn, rec, by, client)

    def _call_finished(self, conn: Connection, rec: CallRecord, by: str = "agent", client: str | None = None) -> None:
        self.broadcast({"event": "call", "phase": "finished", "by": by, "client": client, "server": conn.name,
                        "callId": rec.id, "tool": rec.tool, "arguments": rec.arguments, "outcome": rec.outcome,
                        "result": rec.result, "error": rec.error_text or None,
                        "elapsedMs": round(rec.elapsed * 1000, 1)})

    # ------------------------------------------------------------------ approval
    async def approve(self, conn: Connection, tool: dict[str, Any], arguments: dict[str, Any]) -> None:
        """Hold the call until a watching person allows it (returns) or denies it (AgentError)."""
        approval = next(self._ids)
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        event = {"event": "approve", "approval": approval, "server": conn.name, "tool": tool.get("name"),
                 "arguments": arguments, "definition": tool}
        self.pending[approval] = (future, event)
        self.broadcast(event)
        try:
            allowed = await future
        finally:
            self.pending.pop(approval, None)
            self.broadcast({"event": "decided", "approval": approval})
        if not allowed:
            raise AgentError(f"the person watching in Spyglass's window denied the call of {tool.get('name')!r} on "
                             f"{conn.name!r}; do not call it again without asking them", "denied",
                             tool=tool.get("name"))

    def decide(self, arguments: Any) -> dict[str, Any]:
        args = arguments if isinstance(arguments, dict) else {}
        approval, allow = args.get("approval"), args.get("allow")
        held = self.pending.get(approval) if isinstance(approval, int) else None
        if held is None or not isinstance(allow, bool):
            raise AgentError(f"no call waits for approval {approval!r} (or allow is not true/false)", "usage")
        future, _event = held
        if not future.done():
            future.set_result(allow)
        return {"approval": approval, "allowed": allow}


def said(conn: Connection) -> dict[str, Any]:
    """A connection as a watcher learns it: its description, and what its handshake and its listing said (a
    watcher that came after the handshake, or between the listing's request and its answer, saw neither)."""
    described = conn.describe()
    hello = conn.session.hello
    if hello is not None:
        described["capabilities"] = hello.capabilities
    if conn.session.tools.loaded:
        described["toolList"] = list(conn.session.tools.items)
    return described


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
