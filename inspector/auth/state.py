"""The state of one authorization flow and the bookkeeping all its steps share: starting,
ending and failing a step, recording its HTTP exchanges (secrets masked), keeping what was
obtained in the token store.

`AuthorizationFlow` (flow.py) is this state plus its parts: discovery (discovery.py), the
client identity (registration.py) and the token requests (tokens.py).
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from .. import urlpolicy
from .authorizers import Authorizer
from .errors import AuthFailed
from .jwt import DPoPKey
from .model import AuthSettings, Client, Tokens
from .records import FAILED, OK, RUNNING, Exchange, FlowObserver, Step, mask_body, mask_headers, mask_url, now
from .responses import Unreachable, reason
from .store import MemoryStore, TokenStore, credential_key
from .urls import canonical_resource

log = logging.getLogger("spyglass.auth")


class FlowState:
    """What one flow has discovered and holds, and how its steps are recorded."""

    def __init__(self, server_url: str, settings: AuthSettings | None = None, *,
                 authorizer: Authorizer | None = None, store: TokenStore | None = None,
                 observer: FlowObserver | None = None) -> None:
        self.server_url = server_url
        self.settings = settings or AuthSettings()
        self.authorizer = authorizer
        self.store: TokenStore = store if store is not None else MemoryStore()
        self.observer = observer or FlowObserver()
        self.steps: list[Step] = []
        # what discovery found
        self.resource_metadata: dict[str, Any] | None = None
        self.resource: str = canonical_resource(server_url)
        self.issuer: str | None = None
        self.metadata: dict[str, Any] | None = None
        # what we hold
        self.client: Client | None = None
        self.tokens: Tokens | None = None
        self.requested_scopes: list[str] = []
        self.dpop: DPoPKey | None = None
        self.grant: str | None = None
        self.http: httpx.AsyncClient | None = None  # the client the current steps use
        self.last_refresh_error: str | None = None

    # ------------------------------------------------------------------ steps
    async def _begin(self, kind: str, title: str | None = None) -> Step:
        step = Step(kind=kind, title=title or kind)
        self.steps.append(step)
        await self.observer.before_step(step)
        step.status, step.started = RUNNING, now()
        self._notify(step)
        return step

    def _end(self, step: Step, verdict: str, status: str = OK) -> None:
        step.status, step.verdict, step.ended = status, verdict, now()
        self._notify(step)

    def _fail(self, step: Step, cause: str, **details: Any) -> AuthFailed:
        self._end(step, cause, FAILED)
        return AuthFailed(step.kind, cause, **details)

    def _allowed(self, step: Step, url: str, *, who: str, purpose: str = urlpolicy.FETCH) -> str:
        """`url` when the URL policy lets Spyglass fetch (or open) it; else the step fails with the policy's
        sentence. Plain http to the host of the server the user typed is the user's own choice for fetches."""
        try:
            urlpolicy.check(url, who=who, purpose=purpose, own_host=self._own_host if purpose == urlpolicy.FETCH
                            else None)
        except urlpolicy.Refused as exc:
            raise self._fail(step, exc.sentence) from None
        return url

    @property
    def _own_host(self) -> str | None:
        try:
            return urlsplit(self.server_url).hostname
        except ValueError:
            return None

    def _notify(self, step: Step) -> None:
        try:
            self.observer.changed(step)
        except Exception:
            log.exception("flow observer failed")

    # ------------------------------------------------------------------ HTTP, recorded
    async def _request(self, step: Step, method: str, url: str, *, headers: dict[str, str] | None = None,
                       form: dict[str, str] | None = None, json_body: Any = None,
                       follow_redirects: bool = True) -> httpx.Response:
        assert self.http is not None
        headers = dict(headers or {})
        content: bytes | None = None
        shown_body = ""
        if form is not None:
            content = urlencode(form).encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
            shown_body = mask_body(content, "application/x-www-form-urlencoded")
        elif json_body is not None:
            content = json.dumps(json_body).encode()
            headers.setdefault("Content-Type", "application/json")
            shown_body = mask_body(content, "application/json")
        headers.setdefault("Accept", "application/json")
        exchange = Exchange(method=method, url=mask_url(url), request_headers=mask_headers(headers),
                            request_body=shown_body)
        step.exchanges.append(exchange)
        started = now()
        try:
            resp = await self.http.request(method, url, headers=headers, content=content,
                                           follow_redirects=follow_redirects, timeout=self.settings.timeout)
        except httpx.TimeoutException:
            exchange.error = f"no answer within {self.settings.timeout:g} s"
            exchange.elapsed_ms = (now() - started) * 1000
            self._notify(step)
            raise Unreachable(f"{url}: {exchange.error}") from None
        except httpx.HTTPError as exc:
            exchange.error = reason(exc)
            exchange.elapsed_ms = (now() - started) * 1000
            self._notify(step)
            raise Unreachable(f"{url}: {exchange.error}") from None
        exchange.elapsed_ms = (now() - started) * 1000
        exchange.status = resp.status_code
        exchange.response_headers = mask_headers(dict(resp.headers))
        exchange.response_body = mask_body(resp.content, resp.headers.get("content-type", ""))
        self._notify(step)
        return resp

    def record(self, step: Step) -> None:
        """Add a step taken outside the flow's own sequence (a DPoP nonce the MCP server asked for,
        a refused step-up) and show it."""
        self.steps.append(step)
        self._notify(step)

    # ------------------------------------------------------------------ the token store
    def _save(self) -> None:
        if not self.issuer:
            return
        record: dict[str, Any] = {"issuer": self.issuer, "resource": self.resource,
                                  "metadata": self.metadata,
                                  "requested_scopes": self.requested_scopes}
        if self.client is not None and self.client.source in ("registered", "cimd", "stored"):
            record["client"] = {"client_id": self.client.client_id, "client_secret": self.client.client_secret,
                                "auth_method": self.client.auth_method,
                                "source": "registered" if self.client.source == "stored" else self.client.source}
        if self.tokens is not None:
            record["tokens"] = self.tokens.as_dict()
        if self.dpop is not None:
            record["dpop_key"] = self.dpop.as_dict()
        try:
            self.store.save(credential_key(self.issuer, self.resource), record)
            self.store.save(f"server {self.resource}", {"issuer": self.issuer})
        except Exception as exc:  # a broken keyring must not break the connection
            log.warning("could not keep the tokens: %s", type(exc).__name__)
