"""One URL server's authorization in the window.

`AuthSession` owns the `OAuthProvider` behind the server's HTTP transport (a
fresh one per connect attempt, so each attempt shows its own steps), turns the
flow's steps into a Qt signal, gates them for step-by-step runs (through
`FlowObserver.before_step`), opens the system browser with a one-shot
loopback listener and offers a pasted redirect URL as the fallback, and gives
the token view what it shows. Tokens stay in here and in the token store (the
OS keyring): `reveal()` is the only way out, and only the token view calls it,
after the user confirmed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from ... import urlpolicy
from ...auth import AuthFailed, AuthorizationFlow, AuthSettings, FlowObserver, LoopbackAuthorizer, OAuthProvider, Step
from ...auth.records import FAILED, OK, RUNNING, SKIPPED
from ...traffic.frame import Frame
from ..base import opening

log = logging.getLogger("spyglass.ui.auth")

BROWSER_TIMEOUT = 600.0  # seconds the one-shot listener waits for the user to sign in
ENDED = (OK, FAILED, SKIPPED)


def open_in_browser(url: str) -> bool:
    """The system browser; False when none could be started."""
    return opening.system_open(url)


def client_key(server_url: str) -> str:
    """Where a client secret entered for a server is kept in the token store (the keyring)."""
    return f"client {server_url}"


class _Observer(FlowObserver):
    def __init__(self, session: AuthSession) -> None:
        self.session = session

    async def before_step(self, step: Step) -> None:
        await self.session._before_step(self, step)

    def changed(self, step: Step) -> None:
        self.session._step_changed(self, step)


class _Authorizer(LoopbackAuthorizer):
    """The loopback authorizer; when its wait ends any way (even cancelled), the sign-in dialog closes."""

    def __init__(self, session: AuthSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session = session

    async def close(self) -> None:
        self.session._abandon_browser(None)
        await super().close()


class AuthSession(QObject):
    """Signals carry no secrets: read the properties when they fire."""

    changed = Signal()  # steps, the paused step, or the tokens changed
    browserWaiting = Signal(str)  # the authorization URL when the browser opens; "" when that wait ends

    def __init__(self, server_url: str, options: dict[str, str] | None = None, *, store: Any,
                 open_url: Callable[[str], Any] | None = None, traffic: Callable[[Frame], None] | None = None,
                 note: Callable[[str, str], None] | None = None, parent: QObject | None = None,
                 client_metadata_url: Callable[[], str] = lambda: "") -> None:
        super().__init__(parent)
        self.server_url = server_url
        self.options = dict(options or {})
        self.client_metadata_url = client_metadata_url  # the Preferences' value, read at each attempt
        self.store = store
        self.open_url = open_url
        self.traffic = traffic
        self.note = note
        self.provider: OAuthProvider | None = None
        self._observer: _Observer | None = None
        self.step_mode = False
        self.paused: Step | None = None
        self.browser_url: str | None = None
        self.browser_address: urlpolicy.Address | None = None
        self.browser_opened: bool | None = None
        self.failure: str | None = None
        self.busy_refreshing = False
        self._gate: asyncio.Future[None] | None = None
        self._paste: asyncio.Future[str] | None = None
        self._written: dict[int, int] = {}
        self._ended: set[int] = set()
        self._closing: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------------ state the panel reads
    @property
    def steps(self) -> list[Step]:
        return list(self.provider.steps) if self.provider is not None else []

    @property
    def running(self) -> bool:
        return any(s.status == RUNNING for s in self.steps) or self.paused is not None

    def describe(self) -> dict[str, Any]:
        """The token view's data: expiry, scopes, decoded claims, never the raw token."""
        if self.provider is None:
            return {"authorized": False}
        try:
            return self.provider.describe()
        except Exception as exc:  # a token we cannot describe must not break the panel
            log.warning("describing the token failed: %s", type(exc).__name__)
            return {"authorized": True, "claims": None}

    def reveal(self) -> str | None:
        """The raw access token: only for the token view's Reveal button, after confirmation."""
        tokens = self.provider.flow.tokens if self.provider is not None else None
        return tokens.access_token if tokens is not None else None

    # ------------------------------------------------------------------ connect attempts
    def settings(self) -> AuthSettings:
        """What the user entered for this server; an entered client secret goes to the keyring."""
        o = self.options
        client_id = (o.get("client_id") or "").strip() or None
        secret = o.get("client_secret") or None
        key = client_key(self.server_url)
        if client_id and secret:
            try:
                self.store.save(key, {"client_id": client_id, "client_secret": secret})
            except Exception as exc:
                log.warning("could not keep the client secret: %s", type(exc).__name__)
        elif client_id:
            try:
                kept = self.store.load(key)
            except Exception:
                kept = None
            if kept and kept.get("client_id") == client_id:
                secret = kept.get("client_secret") or None
        scope = (o.get("scope") or "").strip() or None
        return AuthSettings(client_id=client_id, client_secret=secret if client_id else None, scope=scope,
                            client_metadata_url=self.client_metadata_url() or None)

    def start_attempt(self) -> OAuthProvider:
        """A fresh provider for one connect attempt (tokens come back from the store on the first 401)."""
        self._retire()
        self.failure = None
        self._written.clear()
        self._ended.clear()
        observer = _Observer(self)
        authorizer = _Authorizer(self, open_url=self._open_browser, paste=self._wait_for_paste,
                                 timeout=BROWSER_TIMEOUT)
        self._observer = observer
        self.provider = OAuthProvider(self.server_url, self.settings(), authorizer=authorizer, store=self.store,
                                      observer=observer)
        self.changed.emit()
        return self.provider

    def _retire(self) -> None:
        old, self.provider = self.provider, None
        self._observer = None
        self._release()
        self._abandon_browser(None)
        if old is not None:
            try:
                task = asyncio.ensure_future(old.aclose())
            except RuntimeError:
                return
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        self._retire()
        if self._closing:
            await asyncio.wait(list(self._closing), timeout=3.0)

    # ------------------------------------------------------------------ step by step
    def set_step_mode(self, on: bool) -> None:
        self.step_mode = on
        if not on:
            self._release()
        self.changed.emit()

    def next_step(self) -> None:
        """Let the paused step run (step-by-step mode stays on)."""
        self._release()

    def run_all(self) -> None:
        """Leave step-by-step mode and let the flow run to its end."""
        self.set_step_mode(False)

    def _release(self) -> None:
        gate = self._gate
        if gate is not None and not gate.done():
            gate.set_result(None)

    async def _before_step(self, observer: _Observer, step: Step) -> None:
        if observer is not self._observer:
            return
        self.changed.emit()
        if not self.step_mode:
            return
        self._gate = asyncio.get_running_loop().create_future()
        self.paused = step
        self.changed.emit()
        try:
            await self._gate
        finally:
            self._gate = None
            if self.paused is step:
                self.paused = None

    def _step_changed(self, observer: _Observer, step: Step) -> None:
        if observer is not self._observer:
            return
        self._record(step)
        if step.status in ENDED and id(step) not in self._ended:
            self._ended.add(id(step))
            if step.status == FAILED:
                self.failure = f"{step.kind}: {step.verdict}"
            if self.note is not None:
                word = {OK: "ok", FAILED: "FAILED", SKIPPED: "skipped"}[step.status]
                self.note(f"authorization · {step.title}: {word} — {step.verdict}",
                          "error" if step.status == FAILED else "spyglass")
            # The flow stores the new tokens right after the step ends (no await in between): look again then.
            try:
                asyncio.get_running_loop().call_soon(self._emit_later)
            except RuntimeError:
                pass
        self.changed.emit()

    def _emit_later(self) -> None:
        import shiboken6

        if shiboken6.isValid(self):
            self.changed.emit()

    def _record(self, step: Step) -> None:
        """Each finished exchange of the flow (already masked) once, as an "http" traffic frame."""
        if self.traffic is None:
            return
        done = self._written.get(id(step), 0)
        for exchange in step.exchanges[done:]:
            if exchange.status is None and exchange.error is None:
                break  # not answered yet
            record = {"auth_step": step.kind, "method": exchange.method, "url": exchange.url,
                      "status": exchange.status, "request_headers": exchange.request_headers,
                      "response_headers": exchange.response_headers, "error": exchange.error}
            mono = time.monotonic()
            try:
                self.traffic(Frame("http", json.dumps(record, ensure_ascii=False).encode(), mono, time.time(),
                                   meta=record))
            except Exception:
                log.exception("recording an authorization exchange")
            done += 1
        self._written[id(step)] = done

    # ------------------------------------------------------------------ the browser, and the paste fallback
    async def _open_browser(self, url: str) -> bool:
        """The authorizer's "open": nothing opens yet. The sign-in dialog shows the address (its host as the
        browser will show it) and opens it when the user chooses Open in browser (`open_now`)."""
        try:
            self.browser_address = urlpolicy.check(url, who="the authorization server")
        except urlpolicy.Refused as exc:  # the flow refuses it first; this is the last guard before a browser
            raise AuthFailed("authorization", exc.sentence) from None
        self.browser_url = url
        self.browser_opened = None
        # The answer slot exists before the dialog shows: a paste or a Cancel can never come too early.
        self._paste = asyncio.get_running_loop().create_future()
        self.browserWaiting.emit(url)
        self.changed.emit()
        return True

    def open_now(self) -> None:
        """The user chose Open in browser: hand the address (host in ASCII, as shown) to the browser."""
        address = self.browser_address
        if address is None or not self.waiting_for_browser:
            return
        opener = self.open_url or open_in_browser
        try:
            opened = opener(address.wire)
        except Exception as exc:
            log.warning("could not open the browser: %s", type(exc).__name__)
            opened = False
        if asyncio.iscoroutine(opened):  # an opener that is a coroutine (a test's browser): its answer later
            task = asyncio.ensure_future(opened)
            self._closing.add(task)
            task.add_done_callback(self._opened)
            opened = True
        self.browser_opened = opened is not False
        self.changed.emit()

    def _opened(self, task: asyncio.Task[Any]) -> None:
        self._closing.discard(task)
        if task.cancelled() or task.exception() is not None or task.result() is False:
            self.browser_opened = False
            self._emit_later()

    async def _wait_for_paste(self, url: str) -> str:
        fut = self._paste
        if fut is None:
            fut = self._paste = asyncio.get_running_loop().create_future()
        self.changed.emit()
        try:
            return await fut
        finally:
            if self._paste is fut:
                self._paste = None
            self.browser_url = None
            self.browserWaiting.emit("")

    @property
    def waiting_for_browser(self) -> bool:
        return self._paste is not None and not self._paste.done()

    def paste(self, text: str) -> bool:
        """The redirect URL the user copied from the browser's address bar."""
        text = text.strip()
        if not text or not self.waiting_for_browser:
            return False
        assert self._paste is not None
        self._paste.set_result(text)
        return True

    def cancel_browser(self) -> None:
        self._abandon_browser(AuthFailed("authorization", "the sign-in was cancelled in Spyglass"))

    def _abandon_browser(self, exc: BaseException | None) -> None:
        """Cancel (exc given) answers the wait with that error; None ends the wait for good."""
        fut = self._paste
        if fut is None:
            return
        if not fut.done():
            if exc is None:
                fut.cancel()
            else:
                fut.set_exception(exc)
        if exc is None:  # nothing reads the answer any more
            self._paste = None
            if not fut.cancelled():
                fut.exception()  # retrieved: no "never retrieved" warning
            if self.browser_url is not None:
                self.browser_url = None
                self.browserWaiting.emit("")

    # ------------------------------------------------------------------ token actions
    async def refresh(self) -> bool:
        """Use the refresh token now (the token view's Refresh button)."""
        provider = self.provider
        if provider is None or provider.flow.tokens is None:
            return False
        import httpx

        self.busy_refreshing = True
        self.changed.emit()
        before = len(provider.steps)
        try:
            async with httpx.AsyncClient(timeout=provider.settings.timeout) as http:
                ok = await provider.flow.refresh(http)
        finally:
            self.busy_refreshing = False
        if not ok and len(provider.steps) == before:  # refused before any request: say why
            self.failure = "refresh: there is no refresh token (or no client) to use; sign in again"
        self.changed.emit()
        return ok

    def forget(self) -> None:
        """Drop the tokens, here and in the keyring; the next request asks again."""
        provider = self.provider
        flow = provider.flow if provider is not None else AuthorizationFlow(self.server_url, store=self.store)
        try:
            if flow.issuer is None:
                flow.restore()
            flow.forget()
        except Exception as exc:
            log.warning("forgetting the tokens failed: %s", type(exc).__name__)
        if self.note is not None:
            self.note("authorization · the tokens were forgotten (the next request signs in again)", "spyglass")
        self.changed.emit()
