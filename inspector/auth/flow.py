"""The authorization flow, one observable step at a time.

`AuthorizationFlow` runs the steps in the order MCP requires: discovery (discovery.py), the
client identity (registration.py), then the grant and its token requests (tokens.py), all on
the state they share (state.py). authlib supplies PKCE and token generation, joserfc the
signed JWTs. Every HTTP exchange is recorded on the step that made it, with secrets masked,
and every failure names its step and cause.

The settings, the tokens and the step names are defined in model.py and exported from here.
"""

from __future__ import annotations

import logging

import httpx

from .challenge import Challenge
from .discovery import Discovery
from .errors import AuthFailed
from .jwt import DPOP_ALG, DPoPKey
from .model import (
    GRANT_CLIENT_CREDENTIALS,
    GRANT_CODE,
    GRANT_JWT_BEARER,
    STEP_ASM,
    STEP_AUTHORIZATION,
    STEP_IDP_EXCHANGE,
    STEP_PRM,
    STEP_REFRESH,
    STEP_REGISTRATION,
    STEP_STEP_UP,
    STEP_TOKEN,
    AuthSettings,
    Client,
    Tokens,
    choose_grant,
)
from .registration import Registration
from .store import credential_key
from .tokens import TokenRequests

__all__ = ["STEP_ASM", "STEP_AUTHORIZATION", "STEP_IDP_EXCHANGE", "STEP_PRM", "STEP_REFRESH", "STEP_REGISTRATION",
           "STEP_STEP_UP", "STEP_TOKEN", "AuthSettings", "AuthorizationFlow", "Client", "Tokens"]

log = logging.getLogger("spyglass.auth")


class AuthorizationFlow(Discovery, Registration, TokenRequests):
    """Discovery, registration, authorization and tokens for one MCP server."""

    # ------------------------------------------------------------------ public entry points
    async def authorize(self, http: httpx.AsyncClient, challenge: Challenge | None = None, *,
                        step_up: bool = False) -> Tokens:
        """The whole flow: discovery, client identity, grant, token. Raises AuthFailed."""
        self.http = http
        await self.discover(challenge)
        return await self.obtain(challenge, step_up=step_up)

    async def discover(self, challenge: Challenge | None = None) -> None:
        old_issuer = self.issuer
        await self._discover_resource(challenge)
        await self._discover_authorization_server()
        if old_issuer is not None and old_issuer != self.issuer:
            # The authorization server moved: credentials of the old one are not valid here.
            self.client, self.tokens, self.dpop = None, None, None

    async def obtain(self, challenge: Challenge | None = None, *, step_up: bool = False) -> Tokens:
        assert self.metadata is not None and self.issuer is not None
        self.grant = choose_grant(self.settings, self.metadata)
        scopes = self._select_scopes(challenge, step_up=step_up)
        self.dpop = self._dpop_key(challenge)
        if self.grant == GRANT_CODE:
            await self._client_identity()
            tokens = await self._authorization_code(scopes)
        elif self.grant == GRANT_CLIENT_CREDENTIALS:
            await self._client_identity(interactive=False)
            tokens = await self._client_credentials(scopes)
        elif self.grant == GRANT_JWT_BEARER:
            await self._client_identity(interactive=False)
            tokens = await self._jwt_bearer(scopes, self.settings.assertion or "", "workload identity JWT")
        else:  # enterprise
            await self._client_identity(interactive=False)
            jag = await self._idp_token_exchange(scopes)
            tokens = await self._jwt_bearer(scopes, jag, "identity assertion grant (ID-JAG)")
        self.requested_scopes = scopes
        self.tokens = tokens
        self._save()
        return tokens

    async def refresh(self, http: httpx.AsyncClient) -> bool:
        """Use the refresh token. False (the step records why) when it is refused."""
        self.http = http
        if not self.tokens or not self.tokens.refresh_token or not self.metadata or not self.client:
            return False
        step = await self._begin(STEP_REFRESH)
        form = {"grant_type": "refresh_token", "refresh_token": self.tokens.refresh_token,
                "resource": self.resource}
        try:
            answer = await self._token_request(step, form)
        except AuthFailed as exc:
            log.info("refresh failed: %s", exc.cause)
            self.last_refresh_error = exc.cause
            self.tokens.refresh_token = None
            self._save()
            return False
        self.tokens = self._tokens_from(answer, self.tokens.scopes, keep_refresh=self.tokens.refresh_token)
        self._save()
        self._end(step, f"new access token{self._expiry_text(self.tokens)}")
        return True

    def forget(self) -> None:
        """Drop the tokens (and the stored copy) for this server."""
        if self.issuer:
            self.store.delete(credential_key(self.issuer, self.resource))
        self.tokens = None

    def restore(self) -> bool:
        """Tokens kept from an earlier run for this server, if the store has them."""
        index = self.store.load(f"server {self.resource}")
        issuer = index.get("issuer") if index else None
        record = self.store.load(credential_key(issuer, self.resource)) if issuer else None
        if not record or not record.get("tokens"):
            return False
        try:
            self.issuer = issuer
            self.metadata = record.get("metadata") or None
            self.tokens = Tokens.from_dict(record["tokens"])
            client = record.get("client")
            self.client = Client(**client) if client else None
            self.requested_scopes = list(record.get("requested_scopes") or [])
            self.dpop = DPoPKey.from_dict(record["dpop_key"]) if record.get("dpop_key") else None
        except Exception:
            self.tokens = None
            return False
        return True

    # ------------------------------------------------------------------ choices
    def _select_scopes(self, challenge: Challenge | None, *, step_up: bool) -> list[str]:
        if self.settings.scope is not None:
            base = self.settings.scope.split()
        elif challenge is not None and challenge.scope:
            base = challenge.scope
        else:
            supported = (self.resource_metadata or {}).get("scopes_supported")
            base = [s for s in supported if isinstance(s, str)] if isinstance(supported, list) else []
        scopes = list(dict.fromkeys([*(self.requested_scopes if step_up else []), *base]))
        as_scopes = (self.metadata or {}).get("scopes_supported")
        if (self.settings.offline_access and self.grant == GRANT_CODE and isinstance(as_scopes, list)
                and "offline_access" in as_scopes and "offline_access" not in scopes):
            scopes.append("offline_access")
        return scopes

    def _dpop_key(self, challenge: Challenge | None) -> DPoPKey | None:
        if not self.settings.dpop:
            return None
        algs = (self.metadata or {}).get("dpop_signing_alg_values_supported")
        wanted = isinstance(algs, list) and DPOP_ALG in algs
        if not wanted and algs is None and challenge is not None and challenge.scheme.lower() == "dpop":
            wanted = True  # the resource server asks for DPoP; the metadata does not say which algorithms
        if not wanted:
            return None
        return self.dpop or DPoPKey()
