"""`OAuthProvider`: the transports' `AuthProvider`, backed by an `AuthorizationFlow`.

- 401: rediscover (the authorization server may have moved), refresh if a
  refresh token exists, else run the whole flow; a DPoP `use_dpop_nonce`
  challenge just records the nonce and retries.
- 403 `insufficient_scope`: step up with the union of the scopes asked so far and
  the challenged ones, a bounded number of times, and never for scopes already granted.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import Any

import httpx

from .authorizers import Authorizer
from .challenge import Challenge, find, parse_www_authenticate
from .errors import AuthFailed
from .flow import AuthorizationFlow
from .model import STEP_STEP_UP, AuthSettings
from .records import FlowObserver, Step
from .store import TokenStore

log = logging.getLogger("spyglass.auth")

REAUTH_WINDOW = 30.0  # seconds
MAX_REAUTH_IN_WINDOW = 3


class OAuthProvider:
    def __init__(self, server_url: str, settings: AuthSettings | None = None, *,
                 authorizer: Authorizer | None = None, store: TokenStore | None = None,
                 observer: FlowObserver | None = None, restore: bool = True) -> None:
        self.flow = AuthorizationFlow(server_url, settings, authorizer=authorizer, store=store, observer=observer)
        self._lock = asyncio.Lock()
        self._step_ups = 0
        self._authorizations: deque[float] = deque()
        self._own_client: httpx.AsyncClient | None = None
        self._last_client: httpx.AsyncClient | None = None
        self._restored = not restore

    @property
    def steps(self) -> list[Step]:
        return self.flow.steps

    @property
    def settings(self) -> AuthSettings:
        return self.flow.settings

    def has_token(self) -> bool:
        """Whether an access token is at hand (requests then carry its Authorization header)."""
        return self.flow.tokens is not None

    # ------------------------------------------------------------------ AuthProvider
    async def request_headers(self, method: str, url: str) -> dict[str, str]:
        flow = self.flow
        tokens = flow.tokens
        if tokens is not None and tokens.expired and tokens.refresh_token:
            async with self._lock:
                if flow.tokens is tokens:
                    await flow.refresh(self._client())
            tokens = flow.tokens
        if tokens is None:
            return {}
        if tokens.token_type == "DPoP" and flow.dpop is not None:
            proof = flow.dpop.proof(method, url, access_token=tokens.access_token, nonce=flow.dpop.nonces.get("rs"))
            return {"Authorization": f"DPoP {tokens.access_token}", "DPoP": proof}
        return {"Authorization": f"Bearer {tokens.access_token}"}

    async def on_unauthorized(self, client: httpx.AsyncClient, url: str, response: httpx.Response) -> bool:
        try:
            return await self._unauthorized(client, response)
        except AuthFailed as exc:
            _note_challenge(exc, response)
            raise

    async def on_forbidden(self, client: httpx.AsyncClient, url: str, response: httpx.Response) -> bool:
        try:
            return await self._forbidden(client, response)
        except AuthFailed as exc:
            _note_challenge(exc, response)
            raise

    async def _unauthorized(self, client: httpx.AsyncClient, response: httpx.Response) -> bool:
        self._last_client = client
        challenge = _challenge(response)
        async with self._lock:
            flow = self.flow
            sent = _sent_token(response)
            if not self._restored:
                # Tokens kept from an earlier run are looked up on the first 401 only, so a server
                # without authorization never costs a keyring lookup.
                self._restored = True
                try:
                    if sent is None and flow.tokens is None and flow.restore():
                        return True
                except Exception as exc:
                    log.info("no stored tokens: %s", exc)
            if challenge is not None and challenge.error == "use_dpop_nonce" and flow.dpop is not None:
                nonce = response.headers.get("dpop-nonce")
                if nonce and nonce != flow.dpop.nonces.get("rs"):
                    flow.dpop.nonces["rs"] = nonce
                    step = Step(kind="dpop nonce", title="DPoP nonce from the MCP server", status="ok",
                                verdict="the server asked for a DPoP nonce (RFC 9449 §9); the request is sent "
                                        "again with it")
                    flow.record(step)
                    return True
                raise AuthFailed("resource request", "the server keeps asking for a DPoP nonce it does not give")
            if flow.tokens is not None and sent != flow.tokens.access_token:
                return True  # another request already replaced the token
            if flow.tokens is not None:
                # The token was refused: has the authorization server moved? Else refresh.
                old_issuer = flow.issuer
                flow.http = client
                await flow.discover(challenge)
                if flow.issuer == old_issuer and flow.tokens is not None and flow.tokens.refresh_token:
                    if await flow.refresh(client):
                        return True
            self._count_authorization(challenge)
            flow.http = client
            if flow.metadata is None or flow.resource_metadata is None:
                await flow.discover(challenge)
            await flow.obtain(challenge)
            return True

    async def _forbidden(self, client: httpx.AsyncClient, response: httpx.Response) -> bool:
        self._last_client = client
        challenge = _challenge(response)
        if challenge is None or challenge.error != "insufficient_scope":
            return False
        async with self._lock:
            flow = self.flow
            if flow.tokens is not None and _sent_token(response) != flow.tokens.access_token:
                return True
            wanted = challenge.scope
            granted = set(flow.tokens.scopes if flow.tokens else []) | set(flow.requested_scopes)
            step = Step(kind=STEP_STEP_UP, title=STEP_STEP_UP)
            if wanted and set(wanted) <= granted:
                raise self._refuse(step, f"the server answers 403 insufficient_scope asking for "
                                         f"{' '.join(wanted)}, which was already granted: a new authorization "
                                         "would not help")
            if not wanted:
                raise self._refuse(step, "the server answers 403 insufficient_scope without saying which scope "
                                         "it needs")
            if self._step_ups >= self.settings.max_step_ups:
                raise self._refuse(step, f"gave up after {self._step_ups} scope upgrades; the server still "
                                         f"wants {' '.join(wanted)}")
            self._step_ups += 1
            flow.http = client
            if flow.metadata is None:
                await flow.discover(challenge)
            await flow.obtain(challenge, step_up=True)
            return True

    # ------------------------------------------------------------------ helpers
    def _refuse(self, step: Step, cause: str) -> AuthFailed:
        step.status, step.verdict = "failed", cause
        self.flow.record(step)
        return AuthFailed(step.kind, cause)

    def _count_authorization(self, challenge: Challenge | None) -> None:
        t = time.monotonic()
        while self._authorizations and t - self._authorizations[0] > REAUTH_WINDOW:
            self._authorizations.popleft()
        if len(self._authorizations) >= MAX_REAUTH_IN_WINDOW:
            raise AuthFailed("authorization", f"the server refused {len(self._authorizations)} freshly issued "
                                              f"tokens within {REAUTH_WINDOW:g} s; giving up"
                                              + (f" (last challenge: {challenge.scheme} {challenge.params})"
                                                 if challenge else ""))
        self._authorizations.append(t)

    def _client(self) -> httpx.AsyncClient:
        if self._last_client is not None and not self._last_client.is_closed:
            return self._last_client
        if self._own_client is None or self._own_client.is_closed:
            self._own_client = httpx.AsyncClient(timeout=self.settings.timeout)
        return self._own_client

    async def aclose(self) -> None:
        if self._own_client is not None:
            await self._own_client.aclose()
        if self.flow.authorizer is not None:
            await self.flow.authorizer.close()

    def forget(self) -> None:
        self.flow.forget()

    def describe(self) -> dict[str, Any]:
        """What a token view shows: expiry, scopes, decoded claims (never the raw token)."""
        from .jwt import decode_claims

        tokens = self.flow.tokens
        if tokens is None:
            return {"authorized": False}
        return {"authorized": True, "issuer": self.flow.issuer, "token_type": tokens.token_type,
                "scopes": tokens.scopes, "expires_at": tokens.expires_at,
                "has_refresh_token": bool(tokens.refresh_token), "claims": decode_claims(tokens.access_token)}


def _note_challenge(exc: AuthFailed, response: httpx.Response) -> None:
    raw = ", ".join(response.headers.get_list("www-authenticate"))
    if raw:
        exc.details.setdefault("www_authenticate", raw[:1000])
    exc.details.setdefault("status", response.status_code)


def _challenge(response: httpx.Response) -> Challenge | None:
    values = response.headers.get_list("www-authenticate")
    challenges = [c for v in values for c in parse_www_authenticate(v)]
    return find(challenges, "DPoP", "Bearer")


def _sent_token(response: httpx.Response) -> str | None:
    try:
        header: str | None = response.request.headers.get("authorization")
    except RuntimeError:
        return None
    if not header or " " not in header:
        return None
    return header.split(" ", 1)[1].strip()
