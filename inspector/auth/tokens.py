"""The grants (authorization code with PKCE, client credentials, JWT bearer, enterprise-managed
ID-JAG) and the token endpoint they all end at: client authentication, DPoP nonces, the answer."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from .errors import AuthFailed
from .jwt import CLIENT_ASSERTION_TYPE, client_assertion
from .model import (
    GRANT_CLIENT_CREDENTIALS,
    GRANT_CODE,
    GRANT_JWT_BEARER,
    GRANT_TOKEN_EXCHANGE,
    STEP_AUTHORIZATION,
    STEP_IDP_EXCHANGE,
    STEP_TOKEN,
    TOKEN_TYPE_ID_JAG,
    TOKEN_TYPE_ID_TOKEN,
    Tokens,
)
from .records import FAILED, Step, mask_url
from .responses import Unreachable, basic_auth, excerpt, json_object, oauth_description, oauth_error
from .state import FlowState
from .urls import authorization_server_candidates


class TokenRequests(FlowState):
    """The grant and token steps of an `AuthorizationFlow`."""

    # ------------------------------------------------------------------ grants
    async def _authorization_code(self, scopes: list[str]) -> Tokens:
        assert self.metadata is not None and self.client is not None and self.issuer is not None
        step = await self._begin(STEP_AUTHORIZATION)
        if self.authorizer is None:
            raise self._fail(step, "this server needs you to sign in in a browser; run Spyglass with a browser, "
                                   "or use --auth-headless for automation against a test authorization server"
                                   + (f" (the refresh token was refused: {self.last_refresh_error})"
                                      if self.last_refresh_error else ""))
        redirect_uri = await self.authorizer.prepare()
        state = generate_token(32)
        verifier = generate_token(64)
        params = {"response_type": "code", "client_id": self.client.client_id, "redirect_uri": redirect_uri,
                  "state": state, "code_challenge": create_s256_code_challenge(verifier),
                  "code_challenge_method": "S256", "resource": self.resource}
        if scopes:
            params["scope"] = " ".join(scopes)
        if self.dpop is not None:
            params["dpop_jkt"] = self.dpop.thumbprint
        endpoint = self.metadata["authorization_endpoint"]
        url = endpoint + ("&" if urlsplit(endpoint).query else "?") + urlencode(params, quote_via=quote)
        step.details = {"authorization_url": mask_url(url), "scope": params.get("scope"),
                        "redirect_uri": redirect_uri, "resource": self.resource}

        async def fetch(method: str, url: str, *, headers: dict[str, str] | None = None,
                        follow_redirects: bool = True) -> httpx.Response:
            return await self._request(step, method, url, headers=headers, follow_redirects=follow_redirects)

        try:
            answer = await self.authorizer.authorize(url, fetch)
        except AuthFailed as exc:
            self._end(step, exc.cause, FAILED)
            raise AuthFailed(step.kind, exc.cause) from None
        except Unreachable as exc:
            raise self._fail(step, f"cannot reach the authorization endpoint: {exc}") from None
        query = dict(parse_qsl(urlsplit(answer).query, keep_blank_values=True))
        iss = query.get("iss")
        if iss is not None and iss != self.issuer:
            raise self._fail(step, f"the authorization response came from issuer {iss!r}, not {self.issuer!r} "
                                   "(compared exactly, RFC 9207): the code is not sent anywhere")
        if iss is None and self.metadata.get("authorization_response_iss_parameter_supported") is True:
            raise self._fail(step, "the authorization server promises an iss parameter in its responses "
                                   "(authorization_response_iss_parameter_supported) but this one has none "
                                   "(RFC 9207): possible mix-up attack, the code is not sent anywhere")
        if query.get("state") != state:
            raise self._fail(step, "the state in the redirect does not match the one sent "
                                   f"({'missing' if 'state' not in query else 'different'}): possible "
                                   "forged redirect, the code is not sent anywhere")
        if "error" in query:
            detail = query.get("error_description")
            raise self._fail(step, f"the authorization server refused: {query['error']}"
                                   + (f" ({detail})" if detail else ""))
        code = query.get("code")
        if not code:
            raise self._fail(step, "the redirect carries no authorization code")
        self._end(step, "authorization code received" + (f"; issuer {iss} verified" if iss else ""))
        step = await self._begin(STEP_TOKEN)
        form = {"grant_type": GRANT_CODE, "code": code, "redirect_uri": redirect_uri, "code_verifier": verifier,
                "resource": self.resource}
        answer_json = await self._token_request(step, form)
        tokens = self._tokens_from(answer_json, scopes)
        self._end(step, f"{tokens.token_type} access token{self._expiry_text(tokens)}"
                        + (", with a refresh token" if tokens.refresh_token else ""))
        return tokens

    async def _client_credentials(self, scopes: list[str]) -> Tokens:
        step = await self._begin(STEP_TOKEN, "token (client credentials)")
        form = {"grant_type": GRANT_CLIENT_CREDENTIALS, "resource": self.resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        tokens = self._tokens_from(await self._token_request(step, form), scopes)
        self._end(step, f"{tokens.token_type} access token{self._expiry_text(tokens)}")
        return tokens

    async def _jwt_bearer(self, scopes: list[str], assertion: str, what: str) -> Tokens:
        step = await self._begin(STEP_TOKEN, f"token (JWT bearer: {what})")
        if not assertion:
            raise self._fail(step, f"no {what} to present")
        form = {"grant_type": GRANT_JWT_BEARER, "assertion": assertion, "resource": self.resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        tokens = self._tokens_from(await self._token_request(step, form), scopes)
        self._end(step, f"{tokens.token_type} access token{self._expiry_text(tokens)}")
        return tokens

    async def _idp_token_exchange(self, scopes: list[str]) -> str:
        """Enterprise-managed authorization: exchange the identity provider's ID token for an
        Identity Assertion JWT Authorization Grant addressed to the MCP authorization server."""
        step = await self._begin(STEP_IDP_EXCHANGE)
        s = self.settings
        endpoint = s.idp_token_endpoint
        if not endpoint and s.idp_issuer:
            for url in authorization_server_candidates(s.idp_issuer):
                try:
                    doc, _ = json_object(await self._request(step, "GET", url))
                except Unreachable:
                    continue
                if doc and doc.get("issuer") == s.idp_issuer and isinstance(doc.get("token_endpoint"), str):
                    endpoint = doc["token_endpoint"]
                    break
        if not endpoint:
            raise self._fail(step, "no token endpoint for the identity provider (--idp-token-endpoint or "
                                   "--idp-issuer)")
        form = {"grant_type": GRANT_TOKEN_EXCHANGE, "requested_token_type": TOKEN_TYPE_ID_JAG,
                "subject_token": s.idp_id_token or "", "subject_token_type": TOKEN_TYPE_ID_TOKEN,
                "audience": self.issuer or "", "resource": self.resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        headers: dict[str, str] = {}
        if s.idp_client_id:
            if s.idp_client_secret:
                headers["Authorization"] = basic_auth(s.idp_client_id, s.idp_client_secret)
            else:
                form["client_id"] = s.idp_client_id
        try:
            resp = await self._request(step, "POST", endpoint, headers=headers, form=form)
        except Unreachable as exc:
            raise self._fail(step, f"cannot reach the identity provider: {exc}") from None
        doc = self._token_answer(step, resp, endpoint)
        if doc.get("issued_token_type") not in (None, TOKEN_TYPE_ID_JAG):
            raise self._fail(step, f"the identity provider issued {doc.get('issued_token_type')}, not an ID-JAG")
        self._end(step, "identity assertion grant (ID-JAG) received")
        return str(doc["access_token"])

    # ------------------------------------------------------------------ the token endpoint
    async def _token_request(self, step: Step, form: dict[str, str]) -> dict[str, Any]:
        assert self.metadata is not None
        endpoint = self._allowed(step, self.metadata["token_endpoint"], who="the authorization server")
        headers: dict[str, str] = {}
        form = dict(form)
        self._client_auth(form, headers)
        resp = await self._post_token(step, endpoint, form, headers)
        nonce = resp.headers.get("dpop-nonce")
        if (self.dpop is not None and resp.status_code in (400, 401) and nonce
                and oauth_error(resp) == "use_dpop_nonce"):
            # RFC 9449 §8: the same request once more, with the server's nonce
            self.dpop.nonces["as"] = nonce
            resp = await self._post_token(step, endpoint, form, headers)
            nonce = resp.headers.get("dpop-nonce")
        if self.dpop is not None and nonce:
            self.dpop.nonces["as"] = nonce
        return self._token_answer(step, resp, endpoint)

    async def _post_token(self, step: Step, endpoint: str, form: dict[str, str],
                          headers: dict[str, str]) -> httpx.Response:
        if self.dpop is not None:
            headers["DPoP"] = self.dpop.proof("POST", endpoint, nonce=self.dpop.nonces.get("as"))
        try:
            return await self._request(step, "POST", endpoint, headers=headers, form=form)
        except Unreachable as exc:
            raise self._fail(step, f"cannot reach the token endpoint: {exc}") from None

    def _token_answer(self, step: Step, resp: httpx.Response, endpoint: str) -> dict[str, Any]:
        if resp.status_code >= 500:
            raise self._fail(step, f"the token endpoint {endpoint} answered HTTP {resp.status_code}"
                                   + (f": {excerpt(resp)}" if resp.content else ""))
        doc, why = json_object(resp)
        if resp.status_code >= 400 or doc is None:
            if isinstance(doc, dict) or oauth_error(resp):
                err = oauth_error(resp)
                desc = oauth_description(resp)
                raise self._fail(step, f"the token endpoint refused: {err or f'HTTP {resp.status_code}'}"
                                       + (f" ({desc})" if desc else ""), oauth_error=err)
            raise self._fail(step, f"the token endpoint {endpoint} answered {why}")
        if not isinstance(doc.get("access_token"), str) or not doc["access_token"]:
            raise self._fail(step, "the token answer has no access_token")
        return doc

    def _client_auth(self, form: dict[str, str], headers: dict[str, str]) -> None:
        client = self.client
        if client is None:
            return
        method = self._auth_method()
        if method == "private_key_jwt":
            form["client_id"] = client.client_id
            form["client_assertion_type"] = CLIENT_ASSERTION_TYPE
            form["client_assertion"] = client_assertion(client.client_id, self.issuer or "",
                                                        self.settings.private_key_pem or "",
                                                        self.settings.signing_alg)
        elif method == "client_secret_basic" and client.client_secret:
            headers["Authorization"] = basic_auth(client.client_id, client.client_secret)
        elif method == "client_secret_post" and client.client_secret:
            form["client_id"] = client.client_id
            form["client_secret"] = client.client_secret
        else:
            form["client_id"] = client.client_id

    def _auth_method(self) -> str:
        assert self.client is not None
        if self.client.auth_method:
            return self.client.auth_method
        supported = (self.metadata or {}).get("token_endpoint_auth_methods_supported")
        if not isinstance(supported, list):
            supported = ["client_secret_basic"]  # RFC 8414's default
        if self.settings.private_key_pem and self.client.source == "entered":
            return "private_key_jwt"
        if self.client.client_secret:
            for method in ("client_secret_basic", "client_secret_post"):
                if method in supported:
                    return method
            return "none" if "none" in supported else "client_secret_basic"
        return "none"

    def _tokens_from(self, doc: dict[str, Any], requested: list[str], keep_refresh: str | None = None) -> Tokens:
        expires_in = doc.get("expires_in")
        expires_at = time.time() + float(expires_in) if isinstance(expires_in, (int, float)) else None
        scope = doc.get("scope")
        token_type = str(doc.get("token_type") or "Bearer")
        token_type = "DPoP" if token_type.lower() == "dpop" else "Bearer"
        return Tokens(access_token=doc["access_token"], token_type=token_type,
                      refresh_token=doc.get("refresh_token") or keep_refresh, expires_at=expires_at,
                      scopes=scope.split() if isinstance(scope, str) else list(requested))

    @staticmethod
    def _expiry_text(tokens: Tokens) -> str:
        if tokens.expires_at is None:
            return ""
        return f", expires in {max(0, int(tokens.expires_at - time.time()))} s"
