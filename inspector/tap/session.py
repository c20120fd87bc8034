"""A tapped conversation as a server of the window: a `ServerSession` that connects to nothing and is
fed the frames a tap saw instead. From them it learns what the window shows of any server — who the
server said it was, its revision and capabilities, its tools, resources, templates and prompts as the
host last listed them, every call the host made with its result, the log and stderr — read-only: the
host makes the calls, Spyglass only watches.

Directions are the host's: "out" is what the host sent, "in" what the server sent.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import TYPE_CHECKING, Any

from .. import errors as E
from ..client.shapes import ServerHello
from ..config import ServerSpec
from ..protocol import jsonrpc as rpc
from ..protocol.versions import META_PROTOCOL_VERSION, Era, era_of
from ..session import CallRecord, ServerSession, SessionOptions, Status
from ..session.calls import CANCELLED, FAILED, OK, REJECTED, TOOL_ERROR
from ..session.log import entry_from_message
from ..traffic import Frame

if TYPE_CHECKING:
    from .held import InterceptLink

LISTED = {"tools/list": ("tools", "tools"), "resources/list": ("resources", "resources"),
          "resources/templates/list": ("templates", "resourceTemplates"), "prompts/list": ("prompts", "prompts")}
HANDSHAKE = ("initialize", "server/discover")


class TappedSession(ServerSession):
    read_only = True

    def __init__(self, server_id: str, definition: dict[str, Any]) -> None:
        command = definition.get("command")
        spec = ServerSpec(name=str(definition.get("name") or server_id),
                          command=[str(c) for c in command] if isinstance(command, list) else [],
                          url=definition.get("url") if isinstance(definition.get("url"), str) else None,
                          transport=definition.get("transport") if isinstance(definition.get("transport"), str)
                          else None)
        super().__init__(spec, server_id, SessionOptions(load_lists=False, listen=False, heartbeat_s=None))
        self.server_name = spec.name
        self.host: str | None = None  # the host's clientInfo (title or name), once it said
        self.live = True  # followed in the window (the user may stop following it)
        self.session_file: str | None = None  # where the tap records it
        self._pending: dict[Any, tuple[str, Any, float, CallRecord | None]] = {}  # host's requests by id
        self._asked: dict[Any, str] = {}  # the server's requests to the host, by id
        self._ids = itertools.count(1)
        self._version: str | None = None
        self._tokens: dict[Any, CallRecord] = {}  # progress tokens of the host's calls
        self._holds: dict[int, Any] = {}  # intercept: held host requests (their number) by their id
        self.intercept: InterceptLink | None = None  # what the window may ask of the tap (set by the window)
        self.status = Status.CONNECTING
        self.log.note("tapped: the host talks to this server; Spyglass watches (read-only)")

    # ------------------------------------------------------------------ what the window may ask of it
    def start(self, *, keep_listings: bool = False) -> asyncio.Task[None]:
        """Nothing to connect: the host has the connection. A finished task, so callers need no case."""
        async def nothing() -> None:
            return None
        return asyncio.ensure_future(nothing())

    async def connect(self, opened: Any = None, *, keep_listings: bool = False) -> None:
        return None  # the host has the connection

    async def restart(self, *, keep_listings: bool = False) -> None:
        self.log.note("a tapped server is started by its host: restart it there", level="warning")

    async def disconnect(self) -> None:
        """Stop showing it live (the host's conversation goes on; the tap keeps recording), and stop
        intercepting: what the tap holds goes on."""
        self.live = False
        if self.intercept is not None and self.intercept.on:
            self.intercept.turn_off()

    close = disconnect

    def status_text(self) -> str:
        host = f" by {self.host}" if self.host else ""
        if self.status is Status.CONNECTED:
            version = f" · {self.hello.protocol_version} ({self.hello.era.value})" if self.hello else ""
            return f"tapped{host}{version}" + ("" if self.live else " · not followed")
        if self.status is Status.EXITED:
            return f"tapped{host} · ended" + (f": {self.reason}" if self.reason else "")
        return f"tapped{host} · waiting for the handshake"

    def describe(self) -> str:
        return "tapped: " + super().describe()

    @property
    def title(self) -> str:
        """As the sidebar says it: the host, the server, and that it is tapped."""
        return f"{self.host} → {self.server_name} (tapped)" if self.host else f"{self.server_name} (tapped)"

    # ------------------------------------------------------------------ feeding
    def feed(self, frame: Frame) -> None:
        """One frame the tap saw (the window's traffic store gets it too)."""
        if frame.direction in ("in", "out"):
            message = rpc.parse(frame.data)
            frame.message = message if frame.direction == "in" else None
            if frame.malformed is None and isinstance(message, rpc.Malformed):
                frame.malformed = message.reason
        if self.traffic is not None:
            self.traffic(frame)
        said = frame.meta.get("intercept") if frame.meta else None
        if isinstance(said, dict):
            self._intercepted(frame, said)
        if frame.direction == "err":
            self.log.stderr(frame.text())
        elif frame.direction == "out":
            self._from_host(rpc.parse(frame.data) if frame.message is None else frame.message, frame)
        elif frame.direction == "in":
            self._from_server(frame.message, frame)

    def ended(self, reason: str | None = None) -> None:
        """The tap ended (the host closed it, or the server exited)."""
        self.reason = reason
        for _method, _params, _wall, rec in list(self._pending.values()):
            if rec is not None and rec.running:
                self._finish(rec, FAILED, error_text="no answer before the conversation ended")
        self._pending.clear()
        self.log.note("the tapped conversation ended" + (f": {reason}" if reason else ""))
        if self.intercept is not None:
            self.intercept.ended(reason or "")
        self._set(Status.EXITED)

    def _intercepted(self, frame: Frame, said: dict[str, Any]) -> None:
        """What intercept did to a host's request: held (its id kept), then edited (the server got another
        request: the first ends so) or dropped (the server never got it)."""
        hold, state = said.get("hold"), said.get("state")
        if frame.direction == "out" and state == "held":
            message = rpc.parse(frame.data)
            if isinstance(message, rpc.Request) and isinstance(hold, int):
                self._holds[hold] = message.id
            return
        if not isinstance(hold, int) or (frame.direction == "out") != (state == "edited"):
            return
        if frame.direction == "err" and (state != "dropped" or said.get("dir") != "out"):
            return
        request_id = self._holds.pop(hold, None)
        pending = self._pending.pop(request_id, None) if request_id is not None else None
        rec = pending[3] if pending is not None else None
        if rec is not None and rec.running:
            why = ("held and edited in the window (intercept): the server got the edited request" if state == "edited"
                   else "held and dropped in the window (intercept): the server never got it")
            self._finish(rec, FAILED, error_text=why, wall=frame.wall)

    def _from_host(self, message: Any, frame: Frame) -> None:
        if isinstance(message, rpc.Request):
            params = message.params if isinstance(message.params, dict) else None
            rec = None
            if message.method == "initialize" and params is not None:
                info = params.get("clientInfo")
                if isinstance(info, dict):
                    title = info.get("title") or info.get("name")
                    if isinstance(title, str) and title:
                        self.host = title
                        self.changed.emit("status")
            if params is not None and self._version is None:
                meta = params.get("_meta")
                version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
                if isinstance(version, str):
                    self._version = version
            if message.method == "tools/call" and params is not None:
                rec = self._call(params, message.id, frame.wall)
            self._pending[message.id] = (message.method, params, frame.wall, rec)
        elif isinstance(message, rpc.Notification) and message.method == "notifications/cancelled":
            self._cancelled(message.params if isinstance(message.params, dict) else {}, frame)
        elif isinstance(message, (rpc.Response, rpc.ErrorResponse)):
            asked = self._asked.pop(message.id, None)
            if asked is not None:
                how = "answered" if isinstance(message, rpc.Response) else "refused"
                self.log.note(f"the host {how} the server's {asked}")

    def _cancelled(self, params: dict[str, Any], frame: Frame) -> None:
        """The host gave up on one of its requests: the server answers it no more, so its call ends here."""
        rid = params.get("requestId")
        if not isinstance(rid, (int, str)) or isinstance(rid, bool):
            return
        pending = self._pending.pop(rid, None)
        rec = pending[3] if pending is not None else None
        if rec is not None and rec.running:
            reason = params.get("reason")
            said = f" ({reason[:200]})" if isinstance(reason, str) and reason else ""
            self._finish(rec, CANCELLED, error_text=f"cancelled: notifications/cancelled was sent{said}",
                         wall=frame.wall)

    def _from_server(self, message: Any, frame: Frame) -> None:
        if isinstance(message, (rpc.Response, rpc.ErrorResponse)):
            pending = self._pending.pop(message.id, None)
            if pending is None:
                return
            method, params, _wall, rec = pending
            if isinstance(message, rpc.ErrorResponse):
                if rec is not None:
                    err = message.error
                    error = E.RemoteError(method, err.code, err.message, err.data)
                    self._finish(rec, REJECTED, error=error, error_text=err.message, wall=frame.wall)
                return
            result = message.result if isinstance(message.result, dict) else {}
            if method in HANDSHAKE:
                self._hello(method, result)
            elif method in LISTED:
                self._listed(method, params, result)
            elif rec is not None:
                rec.result = message.result
                self._finish(rec, TOOL_ERROR if result.get("isError") is True else OK, wall=frame.wall)
        elif isinstance(message, rpc.Notification):
            params = message.params if isinstance(message.params, dict) else None
            if message.method == "notifications/message":
                self.log.append(entry_from_message(params))
            elif message.method == "notifications/progress" and params is not None:
                self._progress(params)
            self.notified.emit(message.method, params)
        elif isinstance(message, rpc.Request):
            self._asked[message.id] = message.method
            self.log.note(f"the server asked the host: {message.method}")

    def _hello(self, method: str, result: dict[str, Any]) -> None:
        version = result.get("protocolVersion") if method == "initialize" else self._version
        if not isinstance(version, str):
            versions = result.get("supportedVersions")
            version = versions[-1] if isinstance(versions, list) and versions and isinstance(versions[-1], str) \
                else "unknown"
        try:
            era = era_of(version)
        except (ValueError, TypeError):
            era = Era.LEGACY if method == "initialize" else Era.MODERN
        info = result.get("serverInfo")
        caps = result.get("capabilities")
        instructions = result.get("instructions")
        self.hello = ServerHello(era, version, info if isinstance(info, dict) else None,
                                 caps if isinstance(caps, dict) else None,
                                 instructions if isinstance(instructions, str) else None, result, ())
        if isinstance(info, dict) and isinstance(info.get("name"), str) and not self.server_name:
            self.server_name = info["name"]
        self._set(Status.CONNECTED)
        self.log.note(f"handshake seen: {self.status_text()}")
        for kind in ("subscriptions", "health"):
            self.changed.emit(kind)

    def _listed(self, method: str, params: dict[str, Any] | None, result: dict[str, Any]) -> None:
        kind, key = LISTED[method]
        items = result.get(key)
        found = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        listing = self.listings[kind]
        page = isinstance(params, dict) and params.get("cursor") is not None
        before = {self._ident(kind, i) for i in listing.items}
        listing.items = [*listing.items, *found] if page else found
        listing.loaded = True
        listing.error = None if isinstance(items, list) else f"the server's {method} answer has no {key} list"
        if listing.fetched_at is not None and not page:
            now = {self._ident(kind, i) for i in listing.items}
            listing.appeared = now - before
            listing.vanished = []
        listing.fetched_at = time.time()
        self._listing_changed(kind)

    @staticmethod
    def _ident(kind: str, item: dict[str, Any]) -> str:
        key = {"resources": "uri", "templates": "uriTemplate"}.get(kind, "name")
        return str(item.get(key))

    def _call(self, params: dict[str, Any], request_id: Any, wall: float) -> CallRecord:
        name = params.get("name")
        adopted = self.adopt(str(name), params.get("arguments"))
        tool = next((t for t in self.tools.items if t.get("name") == name), None)
        rec = adopted or CallRecord(next(self._ids), self.server_id, str(name), params.get("arguments"),
                                    tool_def=tool, wall=wall, started=_monotonic_at(wall))
        rec.request_id = request_id
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if token is not None:
            self._tokens[token] = rec
        if adopted is None:
            self.calls.history.append(rec)
            self.calls.started.emit(rec)
        return rec

    def learn(self, method: str, result: dict[str, Any]) -> None:
        """What the server answered to `method` (a handshake or a listing) before this conversation was followed:
        taken as if its frame had been seen."""
        if method in HANDSHAKE:
            self._hello(method, result)
        elif method in LISTED:
            self._listed(method, None, result)

    def adopt(self, tool: str, arguments: Any) -> CallRecord | None:
        """A record already kept for the call this `tools/call` frame carries (one the window's user made
        through whoever holds the connection), which the frames then follow; None: the frame's call is new."""
        return None

    def _progress(self, params: dict[str, Any]) -> None:
        rec = self._tokens.get(params.get("progressToken"))
        if rec is None or not rec.running:
            return
        progress, total = params.get("progress"), params.get("total")
        rec.progress = float(progress) if isinstance(progress, (int, float)) else rec.progress
        rec.total = float(total) if isinstance(total, (int, float)) else rec.total
        rec.message = params.get("message") if isinstance(params.get("message"), str) else rec.message
        self.calls.updated.emit(rec)

    def _finish(self, rec: CallRecord, outcome: str, *, error: E.SpyglassError | None = None,
                error_text: str = "", wall: float | None = None) -> None:
        rec.outcome = outcome
        rec.error = error
        rec.error_text = error_text
        rec.ended = _monotonic_at(wall) if wall is not None else time.monotonic()
        for token, call in list(self._tokens.items()):
            if call is rec:
                del self._tokens[token]
        self.calls.finished.emit(rec)


def _monotonic_at(wall: float) -> float:
    """This process's monotonic clock at wall time `wall` (the tap's clocks are another process's)."""
    return time.monotonic() - max(0.0, time.time() - wall)
