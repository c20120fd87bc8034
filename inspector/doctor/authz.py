"""The doctor's authorization steps, when the server answers 401: its challenge, the protected resource
metadata (RFC 9728), the authorization server's metadata (RFC 8414 and OpenID Connect Discovery, both
well-known forms), how Spyglass could be registered (a pre-registered client ID, a Client ID Metadata
Document, dynamic registration), the redirect URI rules and the scopes. Observe only: GETs of public
metadata, nothing posted, no sign-in started, nothing sent that the user did not give."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import httpx

from .. import errors as E
from .. import urlpolicy
from ..auth.challenge import Challenge, find, parse_www_authenticate
from ..auth.responses import json_object
from ..auth.urls import authorization_server_candidates, protected_resource_candidates, resource_covers
from ..secrets import mask_url
from ..transport.http_common import failure_text
from .report import Report, Step, StepFailed, StepSkipped

if TYPE_CHECKING:
    from .web import Exchange, HttpDoctor

AUTH_STEPS = (("auth-challenge", "401 and WWW-Authenticate"), ("auth-resource", "protected resource metadata"),
              ("auth-server", "authorization server metadata"), ("auth-registration", "client registration"),
              ("auth-redirect", "redirect URI"), ("auth-scopes", "scopes"), ("auth-token", "token"))
SIGN_IN = ("sign in: Connect in the window (the browser opens), or spyglass --cli URL --method tools/list; a CI "
           "job passes a token it got elsewhere with --auth-token TOKEN")


class Authorization:
    def __init__(self, doctor: HttpDoctor, client_id: str | None) -> None:
        self.doctor = doctor
        self.client_id = client_id
        self.response: Exchange | None = None
        self.challenge: Challenge | None = None
        self.resource: dict[str, Any] = {}
        self.server: dict[str, Any] = {}

    def challenged(self, ex: Exchange) -> None:
        self.response = ex

    async def run(self, report: Report) -> bool:
        """The authorization steps; False when the run stops here (it does whenever the server asked)."""
        if self.response is None:
            for step_id, _ in AUTH_STEPS:
                await report.run(step_id, _skip)
            return True
        for step_id, body in (("auth-challenge", self.check_challenge), ("auth-resource", self.check_resource),
                              ("auth-server", self.check_server), ("auth-registration", self.check_registration),
                              ("auth-redirect", self.check_redirect), ("auth-scopes", self.check_scopes),
                              ("auth-token", self.check_token)):
            if not await report.run(step_id, body):
                return False
        return False

    async def get(self, step: Step, url: str) -> dict[str, Any] | None:
        refused = urlpolicy.refusal(url, who="the server", purpose=urlpolicy.FETCH)
        if refused:
            step.saw(f"{mask_url(url)}: not fetched: {refused}")
            return None
        try:
            resp = await asyncio.wait_for(self.doctor.http().get(url, headers={"Accept": "application/json"},
                                                                  follow_redirects=False), self.doctor.timeout)
        except (TimeoutError, httpx.HTTPError) as exc:
            step.saw(f"{mask_url(url)}: {failure_text(exc) if not isinstance(exc, TimeoutError) else 'no answer'}")
            return None
        doc, why = json_object(resp)
        step.saw(f"{mask_url(url)}: " + ("a JSON object" if doc is not None else why))
        return doc

    async def check_challenge(self, step: Step) -> None:
        assert self.response is not None
        header = self.response.headers.get("www-authenticate", "")
        step.saw(f"HTTP 401 to {self.response.method}")
        if self.doctor.sends_credentials:
            raise StepFailed("the server refused the credentials given" + (f" ({header[:200]})" if header else ""),
                             "the token has expired, was revoked, or is meant for another server: get a new one",
                             E.EXIT_AUTH)
        if not header:
            step.saw("no WWW-Authenticate header (the spec asks for one naming resource_metadata); the "
                     "well-known addresses are tried below")
            return
        step.saw(f"WWW-Authenticate: {header[:300]}")
        challenges = parse_www_authenticate(header)
        self.challenge = find(challenges, "bearer") or (challenges[0] if challenges else None)
        if self.challenge is not None:
            params = ", ".join(f"{k}={v}" for k, v in self.challenge.params.items())
            step.saw(f"scheme {self.challenge.scheme}" + (f"; {params}" if params else ""))

    async def check_resource(self, step: Step) -> None:
        advertised = self.challenge.resource_metadata if self.challenge else None
        for url in protected_resource_candidates(self.doctor.url, advertised):
            doc = await self.get(step, url)
            if doc is not None:
                self.resource = doc
                break
        else:
            raise StepFailed("no protected resource metadata (RFC 9728) at any address the spec names",
                             "the server must publish /.well-known/oauth-protected-resource (or name it in "
                             "WWW-Authenticate resource_metadata) with its authorization_servers; until it does, a "
                             "client cannot find where to sign in: pass a token you got elsewhere (--auth-token "
                             "TOKEN, or an Authorization header)", E.EXIT_AUTH)
        resource = self.resource.get("resource")
        if isinstance(resource, str):
            step.saw(f"resource: {resource}")
            if not resource_covers(resource, self.doctor.url):
                raise StepFailed(f"the metadata is for {resource}, not this server",
                                 "the server's metadata must name its own URL as resource (RFC 9728 §3.3)",
                                 E.EXIT_AUTH)
        servers = self.resource.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
            raise StepFailed("the metadata names no authorization_servers",
                             "add authorization_servers to the protected resource metadata", E.EXIT_AUTH)
        step.saw("authorization servers: " + ", ".join(servers))

    async def check_server(self, step: Step) -> None:
        issuer = str(self.resource["authorization_servers"][0])
        found_at = None
        for url in authorization_server_candidates(issuer):
            doc = await self.get(step, url)
            if doc is not None and not self.server:
                self.server, found_at = doc, url
        if not self.server:
            raise StepFailed(f"no authorization server metadata for {issuer} (RFC 8414 or OpenID Connect)",
                             "the authorization server must publish /.well-known/oauth-authorization-server or "
                             "/.well-known/openid-configuration", E.EXIT_AUTH)
        step.saw(f"used: {mask_url(found_at or '')}")
        if self.server.get("issuer") != issuer:
            raise StepFailed(f"its issuer is {self.server.get('issuer')!r}, not {issuer}",
                             "the metadata's issuer must equal the authorization server's URL (RFC 8414 §3.3): a "
                             "client refuses it", E.EXIT_AUTH)
        for key in ("authorization_endpoint", "token_endpoint"):
            if isinstance(self.server.get(key), str):
                step.saw(f"{key}: {mask_url(self.server[key])}")
        pkce = self.server.get("code_challenge_methods_supported")
        if not isinstance(pkce, list) or "S256" not in pkce:
            raise StepFailed("code_challenge_methods_supported does not list S256",
                             "MCP clients must refuse an authorization server without PKCE S256: turn PKCE on "
                             "(and publish it in the metadata)", E.EXIT_AUTH)
        step.saw("PKCE: S256")

    async def check_registration(self, step: Step) -> None:
        if self.client_id:
            step.saw(f"a pre-registered client ID was given: {self.client_id}")
            return
        ways = []
        if self.server.get("client_id_metadata_document_supported") is True:
            ways.append("Client ID Metadata Documents (client_id_metadata_document_supported)")
        if isinstance(self.server.get("registration_endpoint"), str):
            ways.append(f"dynamic registration at {mask_url(self.server['registration_endpoint'])}")
        if not ways:
            raise StepFailed("the authorization server offers no way for Spyglass to get a client ID: no "
                             "registration_endpoint, no Client ID Metadata Document support, and no client ID given",
                             "register a client with the authorization server (redirect URI "
                             "http://127.0.0.1/callback, any port; a public client using PKCE) and give its ID: "
                             "--client-id ID (in the window: the server's OAuth client settings)", E.EXIT_AUTH)
        step.saw("offers: " + "; ".join(ways) + " (nothing was registered: the doctor only looks)")

    async def check_redirect(self, step: Step) -> None:
        step.saw("Spyglass signs in with a loopback redirect: http://127.0.0.1:PORT/callback on a free port "
                 "(RFC 8252 §7.3: an authorization server must accept any port for a loopback redirect)")
        if self.client_id:
            step.saw("a pre-registered client must list that redirect URI; one registered with a fixed port "
                     "needs that port (--callback-url http://127.0.0.1:PORT/callback)")
        grants = self.server.get("grant_types_supported")
        if isinstance(grants, list) and "authorization_code" not in grants:
            raise StepFailed(f"grant_types_supported is {', '.join(map(str, grants))}: no authorization_code",
                             "a user signs in with the authorization code grant; with machine credentials, use "
                             "--grant client_credentials --client-id ID --client-secret SECRET", E.EXIT_AUTH)

    async def check_scopes(self, step: Step) -> None:
        asked = self.challenge.scope if self.challenge else []
        supported = self.resource.get("scopes_supported")
        if asked:
            step.saw("the challenge asks for: " + " ".join(asked))
        elif isinstance(supported, list) and supported:
            step.saw("no scope in the challenge; the metadata's scopes_supported: " + " ".join(map(str, supported)))
        else:
            step.saw("no scope named: Spyglass asks for none (--scope to choose)")

    async def check_token(self, step: Step) -> None:
        raise StepFailed("the server needs a token, and none was given (the doctor does not sign in)", SIGN_IN,
                         E.EXIT_AUTH)


async def _skip(step: Step) -> None:
    raise StepSkipped("no 401: the server did not ask for authorization")
