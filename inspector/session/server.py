"""One server, connected or not: the Qt-free state the window, `--cli` and every subcommand share.

A `ServerSession` owns the client's lifetime (connect, disconnect, restart) and turns what happens into
state a person can read: a status and its reasons, one listing per kind, the modern listen stream and
heartbeat, the log, the roots, the calls with their progress and tasks, and the server's questions.
Whatever changes is announced through plain callbacks (`changed`, `resource_updated`, `log.changed`,
`calls.started/updated/finished`); the window's adapters turn them into Qt signals. Failures become
status (`connect`) or exceptions for the caller that wants them (`open`), never a crash.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from .. import errors as E
from ..client import Client, ServerHello, Subscription
from ..config import ServerSpec
from ..protocol import jsonrpc as rpc
from ..protocol.mode import Mode
from ..protocol.versions import Era
from ..secrets import mask_args, mask_text, mask_url
from ..traffic.columns import BACKGROUND
from ..traffic.frame import Frame
from ..transport.base import Closed
from ..transport.factory import Opened, TransportOptions, open_transport
from .calls import CallBook
from .composer import Composer
from .health import HEARTBEAT_S, Health
from .hooks import Hook
from .library import Library, lists_change
from .listing import LIBRARY, LIST_CHANGED, Listing, Listings
from .log import ServerLog, entry_from_message
from .requests import Answerer, Questions
from .skills import Skills

log = logging.getLogger("spyglass.session")

STDERR_SHOWN = 8
CLIENT_INFO = {"name": "spyglass", "title": "Spyglass", "version": __version__}


class Status(str, enum.Enum):
    IDLE = "not connected"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    ERROR = "error"
    EXITED = "exited"
    DISCONNECTED = "disconnected"


@dataclass
class SessionOptions:
    mode: str = "auto"  # auto | legacy | modern | an exact revision
    timeout: float | None = 60.0  # per request; progress resets it
    transport: TransportOptions = field(default_factory=TransportOptions)
    client_info: dict[str, Any] | None = None
    log_level: str | None = None  # sent with every modern request, or logging/setLevel
    load_lists: bool = True  # list tools, resources, templates and prompts once connected
    listen: bool = True  # modern era: a subscriptions/listen stream for list_changed and resource updates
    heartbeat_s: float | None = HEARTBEAT_S  # modern era: a server/discover this often shows reachability


class ServerSession:
    def __init__(self, spec: ServerSpec, server_id: str | None = None, options: SessionOptions | None = None, *,
                 answerer: Answerer | None = None, traffic: Callable[[Frame], None] | None = None) -> None:
        self.spec = spec
        self.server_id = server_id or spec.name
        self.options = options or SessionOptions()
        self.answerer = answerer
        self.traffic = traffic
        self.roots: list[dict[str, Any]] | None = None  # None: roots are not offered to the server
        self.client: Client | None = None
        self.status = Status.IDLE
        self.reason: str | None = None
        self.exit_code: int | None = None
        self.hello: ServerHello | None = None
        self.pid: int | None = None
        self.stderr_tail: list[str] = []
        # what is being done to the server beyond its status ("restarting (3 files changed)"): said beside it
        self.activity: str | None = None
        self.changed: Hook[[str]] = Hook("session")  # "status", a listing kind, "subscriptions", "health", "roots"
        self.resource_updated: Hook[[str]] = Hook("resource updated")  # its URI
        self.notified: Hook[[str, Any]] = Hook("notification")  # every notification: method, params
        self.log = ServerLog()
        self.listings = Listings(lambda: self.client, lambda: self.hello.capabilities if self.hello else None,
                                 self._listing_changed, self.log.note)
        self.library = Library(self)
        self.health = Health(self)
        self.calls = CallBook(self.server_id, lambda: self.client, lambda: self.name)
        self.questions = Questions(self)
        self.composer = Composer(self)  # hand-made frames: the raw composer, Edit and resend
        self.skills = Skills(self)  # SEP-2640: listing, getting and verifying skills, when the server offers them
        self._subscription: Subscription | None = None
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()
        self._reapers: set[asyncio.Future[Any]] = set()

    # ------------------------------------------------------------------ reading
    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def era(self) -> str | None:
        return self.hello.era.value if self.hello else None

    @property
    def protocol_version(self) -> str | None:
        return self.hello.protocol_version if self.hello else None

    @property
    def modern(self) -> bool:
        return bool(self.hello and self.hello.era is Era.MODERN)

    @property
    def busy(self) -> bool:
        return self.status is Status.CONNECTING

    @property
    def tools(self) -> Listing:
        return self.listings["tools"]

    def capability(self, name: str) -> Any:
        caps = self.hello.capabilities if self.hello else None
        return caps.get(name) if isinstance(caps, dict) else None

    def need_client(self) -> Client:
        client = self.client
        if client is None:
            raise E.ConnectError(f"{self.name} is not connected")
        return client

    def status_text(self) -> str:
        """One line a person reads at a glance."""
        base = self._status_text()
        if self.activity:
            if self.status is Status.CONNECTING:
                return self.activity + "…"
            # a failure's reason is on the status card: the row says what happens next
            return self.activity if self.status in (Status.ERROR, Status.EXITED) else f"{base} · {self.activity}"
        return base

    def _status_text(self) -> str:
        s = self.status
        if s is Status.CONNECTED and self.hello:
            return f"connected · {self.hello.protocol_version} ({self.hello.era.value})"
        if s is Status.EXITED:
            return f"exited (code {self.exit_code})" if self.exit_code is not None else "exited"
        if s is Status.ERROR:
            return "error: " + (mask_text(self.reason) if self.reason else "unknown")
        if s is Status.CONNECTING:
            return "connecting…"
        return str(s.value)

    def describe(self) -> str:
        """The server's URL or command line as shown and logged: secrets masked (`secrets.mask_url`)."""
        return mask_url(self.spec.url) if self.spec.url else shlex.join(mask_args(self.spec.command))

    # ------------------------------------------------------------------ lifecycle
    def start(self, *, keep_listings: bool = False) -> asyncio.Task[None]:
        """Connect in the background (cancelling a connect in flight)."""
        if self._task and not self._task.done():
            self._task.cancel()
        self._task = asyncio.ensure_future(self.connect(keep_listings=keep_listings))
        return self._task

    async def wait_settled(self, timeout: float | None = None) -> bool:
        """Until the current connect attempt is connected with its tools listed, or failed."""
        try:
            await asyncio.wait_for(self._settled.wait(), timeout)
            return True
        except TimeoutError:
            return False

    async def connect(self, opened: Opened | None = None, *, keep_listings: bool = False) -> None:
        """One connect attempt, start to settled; a failure becomes the status (never raised)."""
        try:
            await self.open(opened, keep_listings=keep_listings)
        except E.SpyglassError:
            pass

    async def open(self, opened: Opened | None = None, *, keep_listings: bool = False) -> ServerHello:
        """Connect (with `opened`: a transport already started); raises the failure after recording it.
        With `keep_listings`, what was listed stays shown until it is listed again, and what changed in
        between is marked (added, removed, redefined)."""
        if self.client is not None:
            old, self.client, self._subscription = self.client, None, None
            await self._close_client(old)
        self._settled.clear()
        self.hello, self.pid, self.reason, self.exit_code = None, None, None, None
        self.stderr_tail = []
        if keep_listings:
            self.listings.unmark()
        else:
            self.listings.reset()
        self._set(Status.CONNECTING)
        self.log.note(f"connecting to {self.describe()}")
        try:
            client = self._make_client(opened)
        except (E.SpyglassError, ValueError) as exc:
            error = exc if isinstance(exc, E.SpyglassError) else E.UsageError(str(exc))
            self._fail(error.message, None)
            raise error from None
        self.client = client
        try:
            hello = await client.connect()
        except asyncio.CancelledError:
            if self.client is client:
                self.client = None
                self._set(Status.DISCONNECTED)
            self._settled.set()
            raise
        except E.SpyglassError as exc:
            if self.client is client:
                self.client = None
                self._fail(_without_stderr(exc), exc.details.get("exit_code"), client)
            raise
        except Exception as exc:  # a bug of ours or an unexpected OS error: still a status
            log.exception("connecting to %s failed", self.name)
            if self.client is client:
                self.client = None
                self._fail(f"{type(exc).__name__}: {exc}", None, client)
            raise E.ConnectError(f"{type(exc).__name__}: {exc}") from exc
        if self.client is not client:
            raise E.ConnectError("the connection was replaced while it was being made")
        self._connected(client, hello, mark=keep_listings)
        try:
            if self.options.load_lists:
                await self.listings.load("tools", mark=keep_listings)
        finally:
            self._settled.set()
        return hello

    def _make_client(self, opened: Opened | None) -> Client:
        opened = opened or open_transport(self.spec, self.options.transport)
        handlers = (self.questions.handlers(self.answerer, roots=self.roots is not None)
                    if self.answerer is not None else None)
        client = Client(opened.transport, mode=Mode.parse(self.options.mode), timeout=self.options.timeout,
                        fallback=opened.fallback, client_info=self.options.client_info or dict(CLIENT_INFO),
                        log_level=self.options.log_level, handlers=handlers,
                        roots=list(self.roots) if self.roots is not None else None,
                        trace_context=self.spec.trace_context)
        client.traffic = self._record
        client.traffic_many = self._record_many
        client.on_stderr = lambda text, c=client: self._on_stderr(c, text)
        client.on_notification = lambda m, p, c=client: self._on_notification(c, m, p)
        client.on_notifications = lambda run, c=client: self._on_notifications(c, run)
        client.on_closed = lambda closed, c=client: self._on_closed(c, closed)
        return client

    def _connected(self, client: Client, hello: ServerHello, *, mark: bool = False) -> None:
        self.hello = hello
        self.pid = client.transport.pid
        for warning in hello.warnings:
            self.log.note(f"handshake warning: {warning}", level="warning")
        self.library.reset()
        self.health.reset()
        self.health.heartbeat_ids.clear()
        self._set(Status.CONNECTED)
        self.log.note(f"connected: {self.status_text()}")
        for kind in ("subscriptions", "health"):
            self.changed.emit(kind)
        if self.options.load_lists:
            self._spawn(self.listings.load_all(LIBRARY, mark=mark))
        if self.modern and self.options.heartbeat_s:
            self.health.start_heartbeat(client, self.options.heartbeat_s)
        if self.modern and self.options.listen and lists_change(hello.capabilities):
            self._spawn(self._listen(client))

    async def disconnect(self) -> None:
        if self._task and not self._task.done() and self._task is not asyncio.current_task():
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # we are being cancelled ourselves, not just the connect
            except Exception:
                log.debug("connect of %s ended with an error while disconnecting", self.name, exc_info=True)
        client = self.client
        self.client = None
        self.health.stop()
        sub, self._subscription = self._subscription, None
        if sub is not None:
            try:
                await asyncio.wait_for(sub.close(), 3.0)
            except Exception:
                log.debug("closing the listen stream of %s", self.name, exc_info=True)
        if client is not None:
            await self._close_client(client)
            self.log.note("disconnected")
        if self.status in (Status.CONNECTED, Status.CONNECTING):
            self._set(Status.DISCONNECTED)
        await self._drain_reapers()
        self._settled.set()

    close = disconnect

    async def restart(self, *, keep_listings: bool = False) -> None:
        """Disconnect and connect again; with `keep_listings`, what changed in between is marked."""
        await self.disconnect()
        try:
            await self.start(keep_listings=keep_listings)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise

    async def _close_client(self, client: Client) -> None:
        try:
            await client.close()
        except Exception:
            log.exception("closing %s", self.name)

    async def _drain_reapers(self, timeout: float = 10.0) -> None:
        if self._reapers:
            _done, pending = await asyncio.wait(list(self._reapers), timeout=timeout)
            for task in pending:
                task.cancel()

    def _fail(self, reason: str, exit_code: int | None, client: Client | None = None) -> None:
        self.reason = reason
        self.exit_code = exit_code
        if client is not None:
            self.stderr_tail = list(client.stderr_tail)[-STDERR_SHOWN:]
        self.log.note(f"could not connect: {reason}", level="error")
        self._set(Status.ERROR)
        self._settled.set()

    def _set(self, status: Status) -> None:
        self.status = status
        self.changed.emit("status")

    def set_activity(self, text: str | None) -> None:
        """Say what is being done to the server beside its status (None: nothing)."""
        if text != self.activity:
            self.activity = text
            self.changed.emit("status")

    def mark(self, text: str, **meta: Any) -> None:
        """A marker in the traffic ("restarted: server.py changed") with `meta` for whoever reads it."""
        now = time.monotonic()
        self._record(Frame("err", f"── {text} ──".encode(), now, time.time(),
                           meta={"marker": meta.pop("marker", "note"), **meta}))

    # ------------------------------------------------------------------ listings and roots
    def _listing_changed(self, kind: str) -> None:
        self.changed.emit(kind)
        if kind in LIBRARY:
            self.changed.emit("health")  # what is cacheable, and until when
    async def refresh_tools(self, *, mark: bool = False) -> None:
        await self.listings.load("tools", refresh=True, mark=mark)

    async def load(self, kind: str, *, refresh: bool = False, mark: bool = False) -> None:
        await self.listings.load(kind, refresh=refresh, mark=mark)

    async def set_roots(self, roots: list[dict[str, Any]]) -> None:
        self.roots = [dict(r) for r in roots]
        self.changed.emit("roots")
        client = self.client
        if client is not None and client.closed is None:
            await client.set_roots(self.roots)

    # ------------------------------------------------------------------ the modern listen stream
    async def _listen(self, client: Client) -> None:
        """Modern era: list_changed notifications come on a subscriptions/listen stream."""
        try:
            sub = await client.listen(self.library.listen_filter())
            if sub.task is not None:  # it ends with the connection: observe that, it is not an error
                sub.task.add_done_callback(lambda t: t.cancelled() or t.exception())
            if self._subscription is not None or client is not self.client:  # relisten() got there first
                await sub.close()
                return
            self._subscription = sub
            self.library.listening(sub.granted, sub.refused)
        except E.SpyglassError as exc:
            if client is self.client and client.closed is None:
                self.log.note(f"subscriptions/listen failed: {exc.message}", level="warning")
                self.library.listen_failed(exc.message)

    async def relisten(self) -> None:
        """Open a listen stream with the current filter (e.g. new resource URIs), then end the old one."""
        client = self.need_client()
        old = self._subscription
        sub = await client.listen(self.library.listen_filter())
        if sub.task is not None:
            sub.task.add_done_callback(lambda t: t.cancelled() or t.exception())
        if client is not self.client:
            await sub.close()
            return
        self._subscription = sub
        self.library.listening(sub.granted, sub.refused)
        if old is not None:
            try:
                await asyncio.wait_for(old.close(), 3.0)
            except Exception:
                log.debug("closing the previous listen stream of %s", self.name, exc_info=True)

    # ------------------------------------------------------------------ client callbacks
    def record(self, frame: Frame) -> None:
        """Add a frame of this server's to its traffic (an app's bridge messages use it)."""
        self._record(frame)

    def _record(self, frame: Frame) -> None:
        if self.traffic is None:
            return
        self._mark_heartbeat(frame)
        self.traffic(frame)

    def _record_many(self, frames: list[Frame]) -> None:
        """Frames of one read, in order: to `traffic.many` in one call where the traffic hook has it."""
        if self.traffic is None:
            return
        many = getattr(self.traffic, "many", None)
        if many is None:
            for frame in frames:
                self._record(frame)
            return
        if self.health.heartbeat_ids:
            for frame in frames:
                if type(frame.message) is not rpc.Notification:  # (a flood's are not the heartbeat's)
                    self._mark_heartbeat(frame)
        many(frames)

    def _mark_heartbeat(self, frame: Frame) -> None:
        if self.health.heartbeat_ids and self._heartbeat_frame(frame):
            frame.meta = {**(frame.meta or {}), BACKGROUND: "heartbeat"}  # recorded, shown only when asked

    def _heartbeat_frame(self, frame: Frame) -> bool:
        """A request of the heartbeat, or its answer (known by the ids the heartbeat's requests had)."""
        ids = self.health.heartbeat_ids
        if frame.direction == "in":
            message = frame.message
            return isinstance(message, (rpc.Response, rpc.ErrorResponse)) and message.id in ids
        if frame.direction == "out" and b'"server/discover"' in frame.data[:512]:
            message = rpc.parse(frame.data)
            return isinstance(message, rpc.Request) and message.id in ids
        return False

    def _on_stderr(self, client: Client, text: str) -> None:
        self.log.stderr(text)

    def _on_notification(self, client: Client, method: str, params: dict[str, Any] | None) -> None:
        if client is not self.client:
            return
        if method == "notifications/message":
            self.log.append(entry_from_message(params))
        else:
            self._take_notification(method, params)
        self.notified.emit(method, params)

    def _take_notification(self, method: str, params: dict[str, Any] | None) -> None:
        if method in LIST_CHANGED and self.options.load_lists:  # a session that keeps no lists reloads none
            for kind in LIST_CHANGED[method]:
                self._spawn(self.listings.load(kind, refresh=True, mark=True))
        elif method == "notifications/resources/updated":
            self.library.resource_updated(params)

    def _on_notifications(self, client: Client, run: list[tuple[str, Any]]) -> None:
        """A read's run of notifications, in order, as `_on_notification` takes each: a flood's log lines are
        appended together, and `notified` is told of each after the run."""
        if client is not self.client:
            return
        messages: list[Any] = []
        rest = run
        if {method for method, _ in run} == {"notifications/message"}:  # a flood's read: its log lines alone
            rest, messages = [], [params for _, params in run]
        for method, params in rest:
            if method == "notifications/message":
                messages.append(params)
                continue
            if messages:
                self.log.extend_messages(messages, time.time())
                messages = []
            self._take_notification(method, params)
        if messages:
            self.log.extend_messages(messages, time.time())
        if len(self.notified):
            for method, params in run:
                self.notified.emit(method, params)

    def _on_closed(self, client: Client, closed: Closed) -> None:
        if client is not self.client or closed.expected:
            return
        if self.status is Status.CONNECTED:
            self.client = None
            self.health.stop()
            self.exit_code = closed.exit_code
            self.reason = closed.reason
            self.stderr_tail = list(client.stderr_tail)[-STDERR_SHOWN:]
            self.log.note(closed.reason, level="error")
            self._set(Status.EXITED)
            self._spawn(self._close_client(client))  # reap the process group and reader tasks
        # while connecting, open() reports the failure itself

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._reapers.add(task)
        task.add_done_callback(self._reaped)

    def _reaped(self, task: asyncio.Future[Any]) -> None:
        self._reapers.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task of %s failed", self.name, exc_info=task.exception())


def _without_stderr(exc: E.SpyglassError) -> str:
    """The client appends the stderr tail to its message; the session keeps those lines on their own."""
    message = exc.message
    tail = exc.details.get("stderr")
    if isinstance(tail, list):
        first = next((line.strip() for line in tail if isinstance(line, str) and line.strip()), None)
        cut = message.find(": " + first) if first else -1
        if cut > 0:
            return message[:cut]
    return message
