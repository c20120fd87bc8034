"""One server in the sidebar: a QObject around the asyncio `Client`.

The connection owns the client's lifetime (connect, disconnect, restart), turns
what happens into a status the window can show, keeps the tool list, a bounded
log and the stderr tail, and hands every frame to a traffic sink. Every client
call runs as an asyncio task on the qasync loop, so the UI never blocks; errors
become status, never exceptions in a slot.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable

from PySide6.QtCore import QTimer, QObject, Signal

from .. import errors as E
from ..client import Client, ServerHello
from ..config import ServerSpec
from ..protocol.session import Mode
from ..protocol.versions import Era
from ..traffic.frame import Frame
from .features import Features  # issue 7: resources, prompts, subscriptions, log level, ping, roots

log = logging.getLogger("spyglass.ui.connection")

LOG_LIMIT = 5000
STDERR_SHOWN = 8


class Status(str, enum.Enum):
    IDLE = "not connected"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    ERROR = "error"
    EXITED = "exited"
    DISCONNECTED = "disconnected"


@dataclass(frozen=True, slots=True)
class LogEntry:
    wall: float
    level: str  # "stderr", an MCP log level, or "spyglass" for our own notes
    text: str
    logger: str | None = None


TrafficSink = Callable[[str, Frame], None]
MAX_MESSAGE = 64 * 1024 * 1024  # largest stdio message read; the Preferences dialog sets it


def make_transport(spec: ServerSpec, auth: Any = None):
    """The transport for a spec.
    `auth`: the OAuthProvider of a URL server (issue 10; see auth_session.py)."""
    if spec.url is not None:
        from ..transport.http import HttpSettings, HttpTransport

        settings = HttpSettings(headers=dict(spec.headers), auth=auth)
        kind = spec.transport or ("sse" if spec.url.rstrip("/").endswith("/sse") else "http")
        if kind == "sse":
            from ..transport.sse import SseTransport

            return SseTransport(spec.url, settings)
        return HttpTransport(spec.url, settings)
    from ..transport.stdio import StdioTransport

    return StdioTransport(spec.command, env=spec.env, cwd=spec.cwd, max_message=MAX_MESSAGE)


def make_fallback(spec: ServerSpec, transport: Any) -> Callable[[], Any] | None:
    """Automatic transport choice (as `--cli` does): when a URL server's transport is not forced and
    Streamable HTTP finds no endpoint, try HTTP+SSE with the same settings (and authorization)."""
    if spec.url is None or spec.transport is not None or type(transport).__name__ != "HttpTransport":
        return None
    from ..transport.sse import SseTransport

    return lambda: SseTransport(spec.url, transport.settings)


class Connection(QObject):
    """Signals carry no payload: read the properties (they are consistent when emitted)."""

    statusChanged = Signal()
    toolsChanged = Signal()
    logAppended = Signal(object)  # LogEntry

    def __init__(self, spec: ServerSpec, server_id: str, *, mode: str = "auto", timeout: float = 60.0,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        self.server_id = server_id
        self.mode = mode
        self.timeout = timeout
        self.traffic_sink: TrafficSink | None = None
        self.client: Client | None = None
        self.status = Status.IDLE
        self.reason: str | None = None
        self.exit_code: int | None = None
        self.hello: ServerHello | None = None
        self.pid: int | None = None
        self.stderr_tail: list[str] = []
        self.tools: list[Any] = []
        self.tools_error: str | None = None
        self.tools_loaded = False
        self.tools_note: str | None = None
        self.appeared: set[str] = set()
        self.vanished: list[dict[str, Any]] = []
        self.log: collections.deque[LogEntry] = collections.deque(maxlen=LOG_LIMIT)
        self.log_total = 0  # entries ever appended (the deque forgets old ones)
        self._log_signal_pending = False
        self._task: asyncio.Task[None] | None = None
        self._refresh: asyncio.Task[None] | None = None
        self._refresh_again = False
        self._settled = asyncio.Event()
        self._reapers: set[asyncio.Task[Any]] = set()
        self._subscription: Any = None
        self.features = Features(self)
        self.handlers: dict[str, Any] = {}  # issue 6: server-request handlers (set by the window's tool panel)
        self.auth: Any = None  # issue 10: AuthSession of a URL server (set by the window; auth_panel.WindowAuth)

    # ------------------------------------------------------------------ display
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
    def busy(self) -> bool:
        return self.status is Status.CONNECTING

    def status_text(self) -> str:
        """One line a person reads at a glance."""
        s = self.status
        if s is Status.CONNECTED and self.hello:
            return f"connected · {self.hello.protocol_version} ({self.hello.era.value})"
        if s is Status.EXITED:
            return f"exited (code {self.exit_code})" if self.exit_code is not None else "exited"
        if s is Status.ERROR:
            return "error: " + (self.reason or "unknown")
        if s is Status.CONNECTING:
            return "connecting…"
        return s.value

    def describe(self) -> str:
        if self.spec.url:
            return self.spec.url
        import shlex

        return shlex.join(self.spec.command)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> asyncio.Task[None]:
        """Connect in the background (cancelling a connect in flight)."""
        if self._task and not self._task.done():
            self._task.cancel()
        self._task = asyncio.ensure_future(self.connect())
        return self._task

    async def wait_settled(self, timeout: float | None = None) -> bool:
        """Until the current connect attempt is connected-with-tools or failed."""
        try:
            await asyncio.wait_for(self._settled.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    async def connect(self) -> None:
        """One connect attempt, start to settled; failures become status (never raised)."""
        if self.client is not None:
            old, self.client, self._subscription = self.client, None, None
            await self._close_client(old)
        self._settled.clear()
        self.hello, self.pid, self.reason, self.exit_code = None, None, None, None
        self.stderr_tail = []
        self.tools, self.tools_error, self.tools_loaded = [], None, False
        self.tools_note = None
        self.appeared, self.vanished = set(), []
        self._set(Status.CONNECTING)
        self._note(f"connecting to {self.describe()}")
        try:
            # issue 10: a fresh OAuthProvider per attempt (its steps show in the Authorization tab)
            transport = make_transport(self.spec, self.auth.start_attempt() if self.auth is not None else None)
            client = Client(transport, mode=Mode.parse(self.mode), timeout=self.timeout,
                            fallback=make_fallback(self.spec, transport),
                            client_info={"name": "spyglass", "version": _version()},
                            roots=list(self.features.roots),
                            handlers=self.handlers or None)  # issue 6: elicitation/sampling dialogs
        except (E.SpyglassError, ValueError) as exc:
            self._fail(getattr(exc, "message", str(exc)), None)
            return
        client.traffic = lambda frame, c=client: self._on_frame(c, frame)
        client.on_stderr = lambda text, c=client: self._on_stderr(c, text)
        client.on_notification = lambda m, p, c=client: self._on_notification(c, m, p)
        client.on_closed = lambda closed, c=client: self._on_closed(c, closed)
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
            return
        except Exception as exc:  # a bug of ours or an unexpected OS error: still a status
            log.exception("connecting to %s failed", self.name)
            if self.client is client:
                self.client = None
                self._fail(f"{type(exc).__name__}: {exc}", None, client)
            return
        if self.client is not client:
            return
        self.hello = hello
        self.pid = client.transport.pid
        for warning in hello.warnings:
            self._note(f"handshake warning: {warning}", level="warning")
        self._set(Status.CONNECTED)
        self._note(f"connected: {self.status_text()}")
        self.features.connected(client)
        if hello.era is Era.MODERN and _lists_change(hello.capabilities):
            self._spawn(self._listen(client))
        try:
            await self.refresh_tools()
        finally:
            self._settled.set()

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
        self.features.stop()
        sub, self._subscription = self._subscription, None
        if sub is not None:
            try:
                await asyncio.wait_for(sub.close(), 3.0)
            except Exception:
                log.debug("closing the listen stream of %s", self.name, exc_info=True)
        if client is not None:
            await self._close_client(client)
            self._note("disconnected")
        if self.status in (Status.CONNECTED, Status.CONNECTING):
            self._set(Status.DISCONNECTED)
        await self._drain_reapers()
        self._settled.set()

    async def restart(self) -> None:
        await self.disconnect()
        try:
            await self.start()
        except asyncio.CancelledError:
            if asyncio.current_task() is not None and asyncio.current_task().cancelling():
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
        self._note(f"could not connect: {reason}", level="error")
        self._set(Status.ERROR)
        self._settled.set()

    def _set(self, status: Status) -> None:
        self.status = status
        self.statusChanged.emit()

    # ------------------------------------------------------------------ tools
    async def refresh_tools(self, *, mark: bool = False) -> None:
        """tools/list (all pages); with `mark`, remember what appeared and vanished."""
        if self._refresh and not self._refresh.done():
            self._refresh_again = True
            await asyncio.shield(self._refresh)
            return
        self._refresh = asyncio.ensure_future(self._list_tools(mark))
        await asyncio.shield(self._refresh)

    async def _list_tools(self, mark: bool) -> None:
        while True:
            self._refresh_again = False
            client = self.client
            if client is None:
                return
            caps = self.hello.capabilities if self.hello else None
            if isinstance(caps, dict) and "tools" not in caps:
                self.tools, self.tools_error, self.tools_loaded = [], None, True
                self.tools_note = "This server does not offer tools (no tools capability)."
                self.toolsChanged.emit()
                return
            try:
                result = await client.list_tools(refresh=True)
            except E.SpyglassError as exc:
                if client is self.client:
                    self.tools_error = exc.message
                    self.tools_loaded = True
                    self.toolsChanged.emit()
                return
            except Exception as exc:
                log.exception("tools/list")
                self.tools_error = f"{type(exc).__name__}: {exc}"
                self.toolsChanged.emit()
                return
            if client is not self.client:
                return
            tools = result.get("tools") if isinstance(result, dict) else None
            tools = list(tools) if isinstance(tools, list) else []
            # tools the client set aside (e.g. broken x-mcp-header annotations): flagged, not hidden
            rejected = getattr(client, "rejected_tools", None) or []
            for item in rejected if isinstance(rejected, list) else []:
                if isinstance(item, tuple) and len(item) == 2:
                    tools.append({"name": str(item[0]), "x-spyglass-rejected": str(item[1])})
            if mark and self.tools_loaded:
                old = {t.get("name"): t for t in self.tools if isinstance(t, dict)}
                new = {t.get("name") for t in tools if isinstance(t, dict)}
                self.appeared = {n for n in new if n not in old and isinstance(n, str)}
                self.vanished = [t for n, t in old.items() if n not in new]
                if self.appeared or self.vanished:
                    self._note("tool list changed: " + ", ".join(
                        [f"+{n}" for n in sorted(self.appeared)] + [f"-{t.get('name')}" for t in self.vanished]))
            else:
                self.appeared, self.vanished = set(), []
            self.tools, self.tools_error, self.tools_loaded = tools, None, True
            self.toolsChanged.emit()
            if not self._refresh_again:
                return
            mark = True

    async def _listen(self, client: Client) -> None:
        """Modern era: list_changed notifications come on a subscriptions/listen stream."""
        try:
            sub = await client.listen(self.features.listen_filter())
            if sub.task is not None:  # it ends with the connection: observe that, it is not an error
                sub.task.add_done_callback(lambda t: t.cancelled() or t.exception())
            if self._subscription is not None or client is not self.client:  # relisten() got there first
                await sub.close()
                return
            self._subscription = sub
            self.features.listening(sub)
        except E.SpyglassError as exc:
            if client is self.client and client.closed is None:
                self._note(f"subscriptions/listen failed: {exc.message}", level="warning")
                self.features.listen_failed(exc.message)

    async def relisten(self) -> None:
        """Modern era: open a listen stream with the current filter (e.g. new resource URIs), then end the old one."""
        client = self.client
        if client is None:
            raise E.ConnectError("not connected")
        old = self._subscription
        sub = await client.listen(self.features.listen_filter())
        if sub.task is not None:
            sub.task.add_done_callback(lambda t: t.cancelled() or t.exception())
        if client is not self.client:
            await sub.close()
            return
        self._subscription = sub
        self.features.listening(sub)
        if old is not None:
            try:
                await asyncio.wait_for(old.close(), 3.0)
            except Exception:
                log.debug("closing the previous listen stream of %s", self.name, exc_info=True)

    # ------------------------------------------------------------------ client callbacks
    def _on_frame(self, client: Client, frame: Frame) -> None:
        sink = self.traffic_sink
        if sink is not None:
            sink(self.server_id, frame)

    def _on_stderr(self, client: Client, text: str) -> None:
        self._append(LogEntry(time.time(), "stderr", text.rstrip("\r")))

    def _on_notification(self, client: Client, method: str, params: dict[str, Any] | None) -> None:
        if client is not self.client:
            return
        if method == "notifications/message":
            p = params if isinstance(params, dict) else {}
            data = p.get("data")
            if not isinstance(data, str):
                import json

                try:
                    data = json.dumps(data, ensure_ascii=False)
                except (TypeError, ValueError):
                    data = repr(data)
            level = p.get("level") if isinstance(p.get("level"), str) else "info"
            logger = p.get("logger") if isinstance(p.get("logger"), str) else None
            self._append(LogEntry(time.time(), level, data, logger))
        elif method == "notifications/tools/list_changed":
            self._spawn(self.refresh_tools(mark=True))
        self.features.on_notification(method, params)

    def _on_closed(self, client: Client, closed: Any) -> None:
        if client is not self.client:
            return
        if closed.expected:
            return
        if self.status is Status.CONNECTED:
            self.client = None
            self.exit_code = closed.exit_code
            self.reason = closed.reason
            self.stderr_tail = list(client.stderr_tail)[-STDERR_SHOWN:]
            self._note(closed.reason, level="error")
            self._set(Status.EXITED)
            self._spawn(self._close_client(client))  # reap the process group and reader tasks
        # while connecting, connect() reports the failure itself

    # ------------------------------------------------------------------ log
    def _note(self, text: str, level: str = "spyglass") -> None:
        self._append(LogEntry(time.time(), "spyglass" if level == "spyglass" else level, text, "spyglass"))

    def _append(self, entry: LogEntry) -> None:
        # No signal per entry: a flood of log notifications would cost one emit
        # each. Views poll `log_total` (see LogPane) and `logAppended` fires once
        # per event-loop turn at most.
        self.log.append(entry)
        self.log_total += 1
        if not self._log_signal_pending:
            self._log_signal_pending = True
            QTimer.singleShot(0, self._emit_log)

    def _emit_log(self) -> None:
        self._log_signal_pending = False
        if self.log:
            self.logAppended.emit(self.log[-1])

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._reapers.add(task)
        task.add_done_callback(self._reaped)

    def _reaped(self, task: asyncio.Task[Any]) -> None:
        self._reapers.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task of %s failed", self.name, exc_info=task.exception())


def _without_stderr(exc: E.SpyglassError) -> str:
    """The client appends the stderr tail to its message; the UI shows those lines on their own."""
    message = exc.message
    tail = exc.details.get("stderr")
    if isinstance(tail, list):
        first = next((line.strip() for line in tail if isinstance(line, str) and line.strip()), None)
        cut = message.find(": " + first) if first else -1
        if cut > 0:
            return message[:cut]
    return message


def _lists_change(capabilities: Any) -> bool:
    caps = capabilities if isinstance(capabilities, dict) else {}
    return any(isinstance(caps.get(k), dict) and caps[k].get("listChanged") is True
               for k in ("tools", "prompts", "resources"))


def _version() -> str:
    try:
        from .. import __version__

        return __version__
    except ImportError:  # pragma: no cover
        return "0"
