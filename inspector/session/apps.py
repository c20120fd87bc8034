"""An MCP App open on one server: its document, its bridge, the requests it makes, all recorded.

`AppSession` is the Qt-free half of a view the window shows for a call of a tool with an app
(`protocol.apps`): it reads the `ui://` resource through the server's session, drives the host side of
the bridge (`protocol.app_bridge.Bridge`) and does what it asks — forwarding the view's requests to the
same server (the tools it may call, `resources/read`), turning its log lines into the server's log and
every bridge message, both ways, into a traffic frame of its own kind (`to-view` / `from-view`). What
needs a person or a screen (a link to open, a file to save, a display mode, a size, the messages the app
would have told a conversation, what was refused) goes to `on_note` / `on_ask`; the window answers with
`answer`. Nothing here waits on the view: a view that never initializes is said after `init_timeout`,
one that does not answer its teardown is closed after `teardown_timeout`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import __version__
from .. import errors as E
from ..protocol import apps
from ..protocol.app_bridge import Ask, Bridge, Cancel, Note, Post, Proxy
from ..traffic.frame import Frame
from .log import LogEntry

if TYPE_CHECKING:
    from .server import ServerSession

log = logging.getLogger("spyglass.session.apps")

HOST_INFO = {"name": "spyglass", "title": "Spyglass", "version": __version__}
INIT_TIMEOUT = 10.0  # seconds from the document's load to ui/initialize
TEARDOWN_TIMEOUT = 3.0
MAX_VIEW_MESSAGE = 4 * 1024 * 1024  # characters of one message from a view
TO_VIEW, FROM_VIEW = "to-view", "from-view"  # the traffic directions of bridge messages
MODALITIES: dict[str, dict[str, Any]] = {"text": {}, "image": {}, "audio": {}, "resource": {}, "resourceLink": {},
                                         "structuredContent": {}}

# Container presets a developer emulates (width, max height); "desktop" follows the block's width.
PRESETS: dict[str, tuple[int | None, int | None]] = {"desktop": (None, 900), "tablet": (768, 1024),
                                                     "phone": (390, 844)}


@dataclass
class HostSettings:
    """What the host context says, as the host context panel sets it."""

    theme: str = "light"
    locale: str = "en-US"
    time_zone: str = "UTC"
    display_mode: str = "inline"
    container: str = "desktop"  # a PRESETS name, or "custom"
    width: int = 600  # custom size
    height: int = 400
    platform: str = "desktop"
    touch: bool = False
    styles: dict[str, str] = field(default_factory=dict)  # CSS variables (`--color-background-primary`…)
    fonts: str | None = None

    def dimensions(self, block_width: int) -> dict[str, int]:
        """`containerDimensions`: a fixed field is the host's; `max*` lets the app choose up to it."""
        if self.container == "custom":
            return {"width": self.width, "height": self.height}
        width, max_height = PRESETS.get(self.container, PRESETS["desktop"])
        out = {"width": width if width is not None else max(block_width, 1)}
        if max_height is not None:
            out["maxHeight"] = max_height
        return out


def host_context(settings: HostSettings, *, block_width: int, tool: dict[str, Any] | None = None,
                 call_id: Any = None, display_modes: tuple[str, ...] = ("inline", "fullscreen", "pip")
                 ) -> dict[str, Any]:
    context: dict[str, Any] = {
        "theme": settings.theme,
        "displayMode": settings.display_mode,
        "availableDisplayModes": list(display_modes),
        "containerDimensions": settings.dimensions(block_width),
        "locale": settings.locale,
        "timeZone": settings.time_zone,
        "userAgent": f"spyglass/{__version__}",
        "platform": settings.platform,
        "deviceCapabilities": {"touch": settings.touch, "hover": not settings.touch},
    }
    if settings.styles or settings.fonts:
        styles: dict[str, Any] = {}
        if settings.styles:
            styles["variables"] = dict(settings.styles)
        if settings.fonts:
            styles["css"] = {"fonts": settings.fonts}
        context["styles"] = styles
    if tool is not None:
        context["toolInfo"] = {"tool": tool, **({"id": call_id} if call_id is not None else {})}
    return context


def host_capabilities(*, granted: tuple[str, ...], csp: apps.CspDomains, tools: bool = True,
                      resources: bool = True) -> dict[str, Any]:
    """What Spyglass offers an app: every feature it implements, and the sandbox it applied."""
    caps: dict[str, Any] = {"openLinks": {}, "downloadFile": {}, "logging": {},
                            "message": dict(MODALITIES), "updateModelContext": dict(MODALITIES)}
    if tools:
        caps["serverTools"] = {}
    if resources:
        caps["serverResources"] = {}
    sandbox: dict[str, Any] = {}
    perms: dict[str, dict[str, Any]] = {key: {} for key, feature in apps.PERMISSIONS.items() if feature in granted}
    if perms:
        sandbox["permissions"] = perms
    if csp.as_meta():
        sandbox["csp"] = csp.as_meta()
    caps["sandbox"] = sandbox
    return caps


def listing_entry(session: ServerSession, uri: str) -> dict[str, Any] | None:
    """The resource's entry in the server's `resources/list`, if it lists it (UI-only ones may be left out)."""
    for item in session.listings["resources"].items:
        if isinstance(item, dict) and item.get("uri") == uri:
            return item
    return None


async def read_document(session: ServerSession, uri: str, *, limit: int = apps.MAX_APP_BYTES) -> apps.AppDocument:
    """The app's document, read from its server; raises `apps.AppProblem` with what went wrong."""
    try:
        result = await session.need_client().read_resource(uri)
    except E.RemoteError as exc:
        raise apps.AppProblem("The app resource could not be read",
                              f"resources/read {uri} was refused: {exc.code} {exc.rpc_message}") from None
    except E.SpyglassError as exc:
        raise apps.AppProblem("The app resource could not be read", f"resources/read {uri}: {exc.message}") from None
    return apps.app_document(uri, result, listing_entry(session, uri), limit=limit)


class AppSession:
    """One open view of an app (see the module's doc)."""

    def __init__(self, session: ServerSession, tool: dict[str, Any], view_id: str, context: dict[str, Any], *,
                 document: apps.AppDocument, granted: tuple[str, ...] = (),
                 post: Callable[[str], None], on_note: Callable[[Note], None],
                 on_ask: Callable[[Ask], None]) -> None:
        self.session = session
        self.tool = tool
        self.view_id = view_id
        self.document = document
        self.granted = granted
        self.post = post
        self.on_note = on_note
        self.on_ask = on_ask
        self.init_timeout = INIT_TIMEOUT
        self.teardown_timeout = TEARDOWN_TIMEOUT
        self.problem: str | None = None  # why the app does not work (no ui/initialize…), in words
        self.refused: list[str] = []  # every attempt that was stopped, in words
        self.initialized_at: float | None = None  # monotonic
        caps = host_capabilities(granted=granted, csp=document.ui.csp,
                                 tools=session.capability("tools") is not None or not session.hello,
                                 resources=session.capability("resources") is not None or not session.hello)
        self.bridge = Bridge(host_info=dict(HOST_INFO), host_capabilities=caps, host_context=context,
                             tools=self._tools, now=time.monotonic())
        self._proxied: dict[Any, asyncio.Task[None]] = {}
        self._timers: list[asyncio.TimerHandle] = []
        self._closed = asyncio.Event()
        self._tick: asyncio.TimerHandle | None = None
        self.ended: str | None = None  # how the bridge closed, in words

    # ------------------------------------------------------------------ reading
    @property
    def name(self) -> str:
        info = self.bridge.app_info
        name = info.get("name") if info else None
        return name if isinstance(name, str) and name else self.document.uri

    @property
    def closed(self) -> bool:
        return self.bridge.closed

    def _tools(self) -> dict[str, Any]:
        return {t["name"]: t for t in self.session.tools.items
                if isinstance(t, dict) and isinstance(t.get("name"), str)}

    # ------------------------------------------------------------------ the window's side
    def loaded(self) -> None:
        """The document has loaded: from now on, the app has `init_timeout` to send ui/initialize."""
        self._later(self.init_timeout, self._check_started)

    def _check_started(self) -> None:
        if self.bridge.closed or self.bridge.ready:
            return
        if self.bridge.initialize_count == 0:
            self.problem = (f"The app never started its bridge: no ui/initialize within {self.init_timeout:g} s of "
                            "loading. An MCP App sends ui/initialize to its host (window.parent) first; until it "
                            "does, the host sends it nothing, not even the tool's result.")
        else:
            self.problem = (f"The app sent ui/initialize but not ui/notifications/initialized within "
                            f"{self.init_timeout:g} s: the host holds the tool's input and result until it does.")
        self.session.log.note(f"app {self.document.uri}: {self.problem}", level="warning")
        self.on_note(Note("problem", self.problem))

    def from_view(self, text: str) -> None:
        """One message the view posted, as JSON text (`json.dumps` of what it posted)."""
        if self.bridge.closed:
            return
        if len(text) > MAX_VIEW_MESSAGE:
            self._record(FROM_VIEW, text[:1024].encode("utf-8", "replace"), malformed=f"over {MAX_VIEW_MESSAGE:,} "
                                                                                       "characters: dropped")
            self._run([Note("refused", f"a message of {len(text):,} characters was dropped (the limit is "
                                       f"{MAX_VIEW_MESSAGE:,})")])
            return
        try:
            message = json.loads(text)
        except ValueError as exc:
            self._record(FROM_VIEW, text.encode("utf-8", "replace"), malformed=f"not JSON: {exc}")
            return
        dropped = self.bridge.dropped
        actions = self.bridge.receive(message, time.monotonic())
        if self.bridge.dropped == dropped:  # a dropped message is counted, not recorded
            self._record(FROM_VIEW, text.encode("utf-8", "replace"))
        elif self._tick is None:
            self._tick = asyncio.get_running_loop().call_later(1.05, self._say_dropped)
        self._run(actions)

    def _say_dropped(self) -> None:
        self._tick = None
        self._run(self.bridge.tick(time.monotonic()))

    def dropped_by_view(self, count: int) -> None:
        """Messages the view's page dropped before they reached here (its own flood guard)."""
        self.bridge.dropped += count
        self._run([Note("dropped", f"the app sent more messages than the bridge takes: {count:,} dropped by its "
                                   f"page ({self.bridge.dropped:,} in all)", count)])

    def tool_input(self, arguments: Any) -> None:
        self._run(self.bridge.tool_input(arguments if isinstance(arguments, dict) else {}))

    def tool_input_partial(self, arguments: dict[str, Any]) -> None:
        self._run(self.bridge.tool_input_partial(arguments))

    def tool_result(self, result: dict[str, Any]) -> None:
        self._run(self.bridge.tool_result(result))

    def tool_cancelled(self, reason: str) -> None:
        self._run(self.bridge.tool_cancelled(reason))

    def set_context(self, context: dict[str, Any]) -> None:
        self._run(self.bridge.set_context(context))

    def answer(self, request_id: Any, result: Any = None, error: tuple[int, str] | None = None) -> None:
        self._run(self.bridge.answer(request_id, result, error))

    def note_refused(self, text: str) -> None:
        """An attempt the view's page stopped (a navigation, a pop-up, a request): said like the bridge's."""
        self._run([Note("refused", text)])

    async def close(self) -> str:
        """Tear the app down: `ui/resource-teardown` sent and its answer awaited (at most
        `teardown_timeout`), forwarded requests still answered meanwhile; returns how it ended."""
        if not self.bridge.closed:
            actions = self.bridge.teardown()
            self._run(actions)
            if not self.bridge.closed:
                try:
                    await asyncio.wait_for(self._closed.wait(), self.teardown_timeout)
                except TimeoutError:
                    self._run(self.bridge.teardown_timed_out(self.teardown_timeout))
        self._end()
        return self.ended or "closed"

    def stop(self) -> None:
        """The view was ended by force (a runaway app): no teardown, nothing more sent or answered."""
        self.bridge.state = self.bridge.state.CLOSED
        self.ended = "stopped"
        self._closed.set()
        self._end()

    def _end(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None
        for task in self._proxied.values():
            task.cancel()
        self._proxied.clear()

    # ------------------------------------------------------------------ doing what the bridge says
    def _run(self, actions: list[Any]) -> None:
        for action in actions:
            if isinstance(action, Post):
                text = json.dumps(action.message, ensure_ascii=False, separators=(",", ":"), default=str)
                self._record(TO_VIEW, text.encode("utf-8", "replace"))
                try:
                    self.post(text)
                except Exception:  # a view already gone: the bridge ends with it
                    log.debug("posting to the view of %s failed", self.document.uri, exc_info=True)
            elif isinstance(action, Proxy):
                self._start_forward(action)
            elif isinstance(action, Cancel):
                pending = self._proxied.pop(action.id, None)
                if pending is not None:
                    pending.cancel()
            elif isinstance(action, Ask):
                self.on_ask(action)
            elif isinstance(action, Note):
                self._note(action)

    def _note(self, note: Note) -> None:
        if note.kind == "initialized" and self.initialized_at is None:
            self.initialized_at = time.monotonic()
            if self.problem is not None:
                self.problem = None
        elif note.kind == "log":
            self.session.log.append(_app_log_entry(note.data, self.name))
        elif note.kind == "refused":
            self.refused.append(note.text)
            self.session.log.note(f"app {self.document.uri}: {note.text}", level="warning")
        elif note.kind == "dropped":
            self.session.log.note(f"app {self.document.uri}: {note.text}", level="warning")
        elif note.kind == "closed":
            self.ended = note.text
            self._closed.set()
        self.on_note(note)

    def _record(self, direction: str, data: bytes, malformed: str | None = None) -> None:
        meta = {"view": self.view_id, "app": self.document.uri, "tool": self.tool.get("name")}
        self.session.record(Frame(direction, data, time.monotonic(), time.time(), malformed, meta=meta))

    def _later(self, delay: float, fn: Callable[[], None]) -> None:
        self._timers.append(asyncio.get_running_loop().call_later(delay, fn))

    def _start_forward(self, action: Proxy) -> None:
        task = asyncio.ensure_future(self._forward(action))
        self._proxied[action.id] = task

        def done(t: asyncio.Task[None]) -> None:
            self._forwarded(action.id, t)
        task.add_done_callback(done)

    async def _forward(self, action: Proxy) -> None:
        params = dict(action.params)
        meta = params.pop("_meta", None)
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        try:
            client = self.session.need_client()
            if action.method == "tools/call":
                def progress(value: Any, total: Any, message: str | None) -> None:
                    self._run(self.bridge.progress(token, value, total, message))
                args = params.get("arguments")
                result: Any = await client.call_tool(str(params.get("name")), args if isinstance(args, dict) else {},
                                                     on_progress=progress if token is not None else None)
            else:
                result = await client.request(action.method, params or None)
                if action.method == "tools/list" and isinstance(result, dict) and isinstance(result.get("tools"),
                                                                                               list):
                    result = {**result, "tools": [t for t in result["tools"] if apps.callable_by_app(t)]}
        except asyncio.CancelledError:
            raise
        except E.RemoteError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.rpc_message}
            if exc.data is not None:
                error["data"] = exc.data
            self._run(self.bridge.answer_error(action.id, error))
            return
        except E.SpyglassError as exc:
            self._run(self.bridge.answer(action.id, error=(-32603, f"Spyglass could not forward it: {exc.message}")))
            return
        self._run(self.bridge.answer(action.id, result))

    def _forwarded(self, rid: Any, task: asyncio.Task[None]) -> None:
        if self._proxied.get(rid) is task:
            del self._proxied[rid]
        if not task.cancelled() and task.exception() is not None:
            log.error("forwarding a request of an app failed", exc_info=task.exception())
            self._run(self.bridge.answer(rid, error=(-32603, "Spyglass failed to forward the request")))


def _app_log_entry(params: Any, name: str) -> LogEntry:
    p = params if isinstance(params, dict) else {}
    data = p.get("data")
    if not isinstance(data, str):
        try:
            data = json.dumps(data, ensure_ascii=False)
        except (TypeError, ValueError):
            data = repr(data)
    level = p["level"] if isinstance(p.get("level"), str) else "info"
    logger = p.get("logger")
    who = f"app {name}" + (f" · {logger}" if isinstance(logger, str) and logger else "")
    return LogEntry(time.time(), level, data, who)
