"""The authorization flow, one observable step at a time.

MCP-specific discovery and ordering live here; authlib supplies PKCE and token
generation, joserfc the signed JWTs. Every HTTP exchange is recorded on the step
that made it, with secrets masked, and every failure names its step and cause.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from .authorizers import Authorizer
from .challenge import Challenge
from .errors import AuthFailed
from .jwt import CLIENT_ASSERTION_TYPE, DPOP_ALG, DPoPKey, client_assertion
from .records import FAILED, OK, RUNNING, SKIPPED, Exchange, FlowObserver, Step, mask_body, mask_headers, mask_url, now
from .store import MemoryStore, TokenStore, credential_key
from .urls import authorization_server_candidates, canonical_resource, protected_resource_candidates, resource_covers

log = logging.getLogger("spyglass.auth")

GRANT_CODE = "authorization_code"
GRANT_CLIENT_CREDENTIALS = "client_credentials"
GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
GRANTS = {"auto": "auto", "authorization_code": GRANT_CODE, "client_credentials": GRANT_CLIENT_CREDENTIALS,
          "jwt-bearer": GRANT_JWT_BEARER, "enterprise": "enterprise"}
TOKEN_TYPE_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
TOKEN_TYPE_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
EXCERPT = 300

STEP_PRM = "discovery: protected resource metadata"
STEP_ASM = "discovery: authorization server metadata"
STEP_REGISTRATION = "registration"
STEP_AUTHORIZATION = "authorization"
STEP_TOKEN = "token"
STEP_REFRESH = "refresh"
STEP_STEP_UP = "step-up"
STEP_IDP_EXCHANGE = "token exchange at the identity provider"


@dataclass
class AuthSettings:
    """What the user entered or chose for one server. Secrets here are never logged."""

    client_id: str | None = None
    client_secret: str | None = None
    client_issuer: str | None = None  # the authorization server the entered client belongs to, if known
    scope: str | None = None  # overrides the scope selection when given
    grant: str = "auto"  # auto | authorization_code | client_credentials | jwt-bearer | enterprise
    client_metadata_url: str | None = None  # Spyglass's Client ID Metadata Document URL
    client_name: str = "Spyglass"
    private_key_pem: str | None = None  # private_key_jwt client authentication
    signing_alg: str = "ES256"
    assertion: str | None = None  # a workload identity JWT (RFC 7523 JWT bearer grant)
    idp_id_token: str | None = None  # enterprise-managed authorization (ID-JAG)
    idp_token_endpoint: str | None = None
    idp_issuer: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = None
    dpop: bool = True
    offline_access: bool = True
    max_step_ups: int = 2
    timeout: float = 30.0


@dataclass
class Client:
    client_id: str
    client_secret: str | None = None
    auth_method: str | None = None
    source: str = "entered"  # entered | stored | cimd | registered


@dataclass
class Tokens:
    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_at: float | None = None  # wall clock
    scopes: list[str] = field(default_factory=list)
    obtained_at: float = field(default_factory=time.time)

    @property
    def expired(self) -> bool:
        return self.expires_at is not None and time.time() >= self.expires_at - 30

    def as_dict(self) -> dict[str, Any]:
        return {"access_token": self.access_token, "token_type": self.token_type,
                "refresh_token": self.refresh_token, "expires_at": self.expires_at, "scopes": self.scopes,
                "obtained_at": self.obtained_at}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Tokens:
        return cls(access_token=d["access_token"], token_type=d.get("token_type") or "Bearer",
                   refresh_token=d.get("refresh_token"), expires_at=d.get("expires_at"),
                   scopes=list(d.get("scopes") or []), obtained_at=d.get("obtained_at") or time.time())


class AuthorizationFlow:
    """Discovery, registration, authorization and tokens for one MCP server."""

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
        self._http: httpx.AsyncClient | None = None
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

    def _notify(self, step: Step) -> None:
        try:
            self.observer.changed(step)
        except Exception:
            log.exception("flow observer failed")

    # ------------------------------------------------------------------ HTTP, recorded
    async def _request(self, step: Step, method: str, url: str, *, headers: dict[str, str] | None = None,
                       form: dict[str, str] | None = None, json_body: Any = None,
                       follow_redirects: bool = True) -> httpx.Response:
        assert self._http is not None
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
            resp = await self._http.request(method, url, headers=headers, content=content,
                                            follow_redirects=follow_redirects, timeout=self.settings.timeout)
        except httpx.TimeoutException:
            exchange.error = f"no answer within {self.settings.timeout:g} s"
            exchange.elapsed_ms = (now() - started) * 1000
            self._notify(step)
            raise _Unreachable(f"{url}: {exchange.error}") from None
        except httpx.HTTPError as exc:
            exchange.error = _reason(exc)
            exchange.elapsed_ms = (now() - started) * 1000
            self._notify(step)
            raise _Unreachable(f"{url}: {exchange.error}") from None
        exchange.elapsed_ms = (now() - started) * 1000
        exchange.status = resp.status_code
        exchange.response_headers = mask_headers(dict(resp.headers))
        exchange.response_body = mask_body(resp.content, resp.headers.get("content-type", ""))
        self._notify(step)
        return resp

    # ------------------------------------------------------------------ public entry points
    async def authorize(self, http: httpx.AsyncClient, challenge: Challenge | None = None, *,
                        step_up: bool = False) -> Tokens:
        """The whole flow: discovery, client identity, grant, token. Raises AuthFailed."""
        self._http = http
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
        self.grant = self._choose_grant()
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
        self._http = http
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

    # ------------------------------------------------------------------ discovery
    async def _first_document(self, step: Step, urls: list[str]) -> tuple[str | None, dict[str, Any], list[str]]:
        """The first of `urls` that answers with a JSON object: (url, document, what went wrong with the
        ones before it); (None, {}, problems) when none does."""
        problems: list[str] = []
        for url in urls:
            try:
                resp = await self._request(step, "GET", url)
            except _Unreachable as exc:
                problems.append(str(exc))
                continue
            doc, why = _json_object(resp)
            if doc is None:
                problems.append(f"{url}: {why}")
                continue
            return url, doc, problems
        return None, {}, problems

    async def _discover_resource(self, challenge: Challenge | None) -> None:
        step = await self._begin(STEP_PRM)
        advertised = challenge.resource_metadata if challenge else None
        url, doc, problems = await self._first_document(step, protected_resource_candidates(self.server_url,
                                                                                            advertised))
        if url is None:
            cause = "no protected resource metadata found: " + "; ".join(problems)
            if challenge is not None and challenge.params:
                cause += f" (the server's challenge: {challenge.scheme} " + ", ".join(
                    f'{k}="{v}"' for k, v in challenge.params.items()) + ")"
            raise self._fail(step, cause)
        resource = doc.get("resource")
        if resource is not None and (not isinstance(resource, str) or
                                     not resource_covers(resource, self.server_url)):
            raise self._fail(step, f"the protected resource metadata at {url} names the resource "
                                   f"{resource!r}, which is not this server ({self.server_url}); "
                                   "refusing to send credentials for another resource")
        servers = doc.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
            raise self._fail(step, f"the protected resource metadata at {url} lists no authorization_servers")
        self.resource_metadata = doc
        self.resource = resource if isinstance(resource, str) else canonical_resource(self.server_url)
        step.details = {"url": url, "resource": self.resource, "authorization_servers": servers,
                        "scopes_supported": doc.get("scopes_supported")}
        self._end(step, f"found at {url}: authorization server {servers[0]}")

    async def _discover_authorization_server(self) -> None:
        step = await self._begin(STEP_ASM)
        assert self.resource_metadata is not None
        issuer = self.resource_metadata["authorization_servers"][0]
        url, doc, problems = await self._first_document(step, authorization_server_candidates(issuer))
        if url is None:
            raise self._fail(step, f"no authorization server metadata for issuer {issuer}: " + "; ".join(problems))
        if doc.get("issuer") != issuer:
            raise self._fail(step, f"the metadata at {url} says issuer {doc.get('issuer')!r}, but it was "
                                   f"fetched for issuer {issuer!r}; metadata whose issuer differs must not "
                                   "be used")
        self.issuer, self.metadata = issuer, doc
        step.details = {"url": url, "issuer": issuer,
                        **{k: doc.get(k) for k in ("authorization_endpoint", "token_endpoint",
                                                   "registration_endpoint", "code_challenge_methods_supported",
                                                   "grant_types_supported", "scopes_supported",
                                                   "token_endpoint_auth_methods_supported",
                                                   "client_id_metadata_document_supported",
                                                   "authorization_response_iss_parameter_supported",
                                                   "dpop_signing_alg_values_supported") if k in doc}}
        grant = self._choose_grant()
        if grant == GRANT_CODE:
            methods = doc.get("code_challenge_methods_supported")
            if not isinstance(methods, list) or "S256" not in methods:
                raise self._fail(step, "the authorization server does not advertise PKCE S256 in "
                                       "code_challenge_methods_supported "
                                       f"({'absent' if methods is None else methods}); Spyglass will not "
                                       "run an authorization code flow it cannot protect with PKCE")
            if not isinstance(doc.get("authorization_endpoint"), str):
                raise self._fail(step, "the metadata has no authorization_endpoint")
        if not isinstance(doc.get("token_endpoint"), str):
            raise self._fail(step, "the metadata has no token_endpoint")
        self._end(step, f"issuer {issuer} verified at {url}")

    # ------------------------------------------------------------------ choices
    def _choose_grant(self) -> str:
        chosen = GRANTS.get(self.settings.grant, self.settings.grant)
        if chosen != "auto":
            return chosen
        s = self.settings
        if s.idp_id_token:
            return "enterprise"
        if s.assertion:
            return GRANT_JWT_BEARER
        if s.private_key_pem:
            return GRANT_CLIENT_CREDENTIALS
        supported = (self.metadata or {}).get("grant_types_supported")
        if (s.client_secret and isinstance(supported, list) and GRANT_CODE not in supported
                and GRANT_CLIENT_CREDENTIALS in supported):
            return GRANT_CLIENT_CREDENTIALS
        return GRANT_CODE

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

    def _entered_client_applies(self) -> bool:
        s = self.settings
        return bool(s.client_id) and (s.client_issuer is None or s.client_issuer == self.issuer)

    async def _client_identity(self, *, interactive: bool = True) -> None:
        """Credentials entered for this server, else a stored registration, else a Client ID Metadata
        Document, else dynamic registration, else ask the user."""
        assert self.metadata is not None and self.issuer is not None
        if self.client is not None and self.client.source != "entered":
            return
        step = await self._begin(STEP_REGISTRATION)
        s, meta = self.settings, self.metadata
        if self._entered_client_applies():
            assert s.client_id is not None
            self.client = Client(s.client_id, s.client_secret, None, "entered")
            self._end(step, f"using the client ID you entered ({s.client_id})")
            return
        stored = self.store.load(credential_key(self.issuer, self.resource))
        if stored and stored.get("client") and stored["client"].get("source") in ("registered", "cimd"):
            self.client = Client(**stored["client"])
            self.client.source = "stored"
            self._end(step, f"reusing the registration kept for {self.issuer} ({self.client.client_id})")
            return
        if not interactive:
            if self.grant == GRANT_JWT_BEARER:
                self.client = None
                self._end(step, "no client ID entered: the JWT bearer grant is sent without client authentication",
                          SKIPPED)
                return
            raise self._fail(step, f"this grant needs a client ID for {self.issuer}: enter one (--client-id)")
        if meta.get("client_id_metadata_document_supported") is True and s.client_metadata_url:
            self.client = Client(s.client_metadata_url, None, "none", "cimd")
            self._end(step, f"the server accepts Client ID Metadata Documents: client_id {s.client_metadata_url}")
            return
        endpoint = meta.get("registration_endpoint")
        if not isinstance(endpoint, str):
            raise self._fail(step, "the authorization server offers neither Client ID Metadata Documents"
                                   f"{'' if s.client_metadata_url else ' (no client metadata URL is set)'} nor "
                                   "dynamic client registration: enter a client ID (--client-id, and "
                                   "--client-secret if it has one) registered for this server")
        redirect_uri = await self._redirect_uri()
        method = _registration_auth_method(meta.get("token_endpoint_auth_methods_supported"))
        body = {"client_name": s.client_name, "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                "token_endpoint_auth_method": method, "application_type": "native"}
        try:
            resp = await self._request(step, "POST", endpoint, json_body=body)
        except _Unreachable as exc:
            raise self._fail(step, f"cannot reach the registration endpoint: {exc}") from None
        doc, why = _json_object(resp, accept=(200, 201))
        if doc is None:
            raise self._fail(step, f"dynamic client registration at {endpoint} failed: {why}")
        if not isinstance(doc.get("client_id"), str) or not doc["client_id"]:
            raise self._fail(step, f"the registration answer from {endpoint} has no client_id")
        self.client = Client(doc["client_id"], doc.get("client_secret") or None,
                             doc.get("token_endpoint_auth_method") or None, "registered")
        self._save()
        self._end(step, f"registered as {doc['client_id']}")

    async def _redirect_uri(self) -> str:
        if self.authorizer is None:
            return "http://127.0.0.1/callback"
        return await self.authorizer.prepare()

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
        try:
            answer = await self.authorizer.authorize(url, lambda m, u, **kw: self._request(step, m, u, **kw))
        except AuthFailed as exc:
            self._end(step, exc.cause, FAILED)
            raise AuthFailed(step.kind, exc.cause) from None
        except _Unreachable as exc:
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
                    doc, _ = _json_object(await self._request(step, "GET", url))
                except _Unreachable:
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
                headers["Authorization"] = _basic(s.idp_client_id, s.idp_client_secret)
            else:
                form["client_id"] = s.idp_client_id
        try:
            resp = await self._request(step, "POST", endpoint, headers=headers, form=form)
        except _Unreachable as exc:
            raise self._fail(step, f"cannot reach the identity provider: {exc}") from None
        doc = self._token_answer(step, resp, endpoint)
        if doc.get("issued_token_type") not in (None, TOKEN_TYPE_ID_JAG):
            raise self._fail(step, f"the identity provider issued {doc.get('issued_token_type')}, not an ID-JAG")
        self._end(step, "identity assertion grant (ID-JAG) received")
        return str(doc["access_token"])

    # ------------------------------------------------------------------ the token endpoint
    async def _token_request(self, step: Step, form: dict[str, str]) -> dict[str, Any]:
        assert self.metadata is not None
        endpoint = self.metadata["token_endpoint"]
        headers: dict[str, str] = {}
        form = dict(form)
        self._client_auth(form, headers)
        for attempt in range(2):
            if self.dpop is not None:
                headers["DPoP"] = self.dpop.proof("POST", endpoint, nonce=self.dpop.nonces.get("as"))
            try:
                resp = await self._request(step, "POST", endpoint, headers=headers, form=form)
            except _Unreachable as exc:
                raise self._fail(step, f"cannot reach the token endpoint: {exc}") from None
            nonce = resp.headers.get("dpop-nonce")
            if (self.dpop is not None and resp.status_code in (400, 401) and nonce and attempt == 0
                    and _oauth_error(resp) == "use_dpop_nonce"):
                self.dpop.nonces["as"] = nonce
                continue  # RFC 9449 §8: the same request again, with the server's nonce
            if self.dpop is not None and nonce:
                self.dpop.nonces["as"] = nonce
            return self._token_answer(step, resp, endpoint)
        raise self._fail(step, "the token endpoint kept asking for a DPoP nonce")  # pragma: no cover

    def _token_answer(self, step: Step, resp: httpx.Response, endpoint: str) -> dict[str, Any]:
        if resp.status_code >= 500:
            raise self._fail(step, f"the token endpoint {endpoint} answered HTTP {resp.status_code}"
                                   + (f": {_excerpt(resp)}" if resp.content else ""))
        doc, why = _json_object(resp)
        if resp.status_code >= 400 or doc is None:
            if isinstance(doc, dict) or _oauth_error(resp):
                err = _oauth_error(resp)
                desc = _oauth_description(resp)
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
            headers["Authorization"] = _basic(client.client_id, client.client_secret)
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


# ---------------------------------------------------------------------- helpers

class _Unreachable(Exception):
    """No HTTP answer at all (refused, timed out, TLS...)."""


def _basic(client_id: str, secret: str) -> str:
    # RFC 6749 §2.3.1: each part form-urlencoded, then Basic.
    raw = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
    return "Basic " + base64.b64encode(raw).decode()


def _registration_auth_method(supported: Any) -> str:
    if not isinstance(supported, list):
        return "client_secret_basic"
    for method in ("none", "client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return "client_secret_basic"


def _json_object(resp: httpx.Response, accept: tuple[int, ...] = (200,)) -> tuple[dict[str, Any] | None, str]:
    if resp.status_code not in accept:
        text = f"HTTP {resp.status_code}"
        if resp.status_code >= 400 and resp.content:
            text += f": {_excerpt(resp)}"
        return None, text
    try:
        doc = json.loads(resp.content)
    except ValueError:
        ctype = resp.headers.get("content-type", "(none)")
        return None, f"HTTP {resp.status_code} but the body is not JSON (Content-Type {ctype}): {_excerpt(resp)}"
    if not isinstance(doc, dict):
        return None, f"HTTP {resp.status_code} but the JSON is a {type(doc).__name__}, not an object"
    return doc, ""


def _oauth_error(resp: httpx.Response) -> str | None:
    try:
        doc = json.loads(resp.content)
    except ValueError:
        return None
    err = doc.get("error") if isinstance(doc, dict) else None
    return err if isinstance(err, str) else None


def _oauth_description(resp: httpx.Response) -> str | None:
    try:
        doc = json.loads(resp.content)
    except ValueError:
        return None
    desc = doc.get("error_description") if isinstance(doc, dict) else None
    return desc if isinstance(desc, str) else None


def _excerpt(resp: httpx.Response) -> str:
    text = mask_body(resp.content, resp.headers.get("content-type", ""))
    text = " ".join(text.split())
    return text[:EXCERPT] + ("…" if len(text) > EXCERPT else "")


def _reason(exc: BaseException) -> str:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        cause = cause.__cause__ or cause.__context__
    return (str(exc) or type(exc).__name__).splitlines()[0][:200]
