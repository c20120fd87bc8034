"""Discovery: the protected resource metadata of the MCP server (RFC 9728), then the metadata
of its authorization server (RFC 8414 / OpenID Connect Discovery), each checked before use."""

from __future__ import annotations

from typing import Any

from .. import urlpolicy
from .challenge import Challenge
from .model import GRANT_CODE, STEP_ASM, STEP_PRM, choose_grant
from .records import Step
from .responses import Unreachable, json_object
from .state import FlowState
from .urls import authorization_server_candidates, canonical_resource, protected_resource_candidates, resource_covers


class Discovery(FlowState):
    """The discovery steps of an `AuthorizationFlow`."""

    async def _first_document(self, step: Step, urls: list[str]) -> tuple[str | None, dict[str, Any], list[str]]:
        """The first of `urls` that answers with a JSON object: (url, document, what went wrong with the
        ones before it); (None, {}, problems) when none does."""
        problems: list[str] = []
        for url in urls:
            try:
                resp = await self._request(step, "GET", url)
            except Unreachable as exc:
                problems.append(str(exc))
                continue
            doc, why = json_object(resp)
            if doc is None:
                problems.append(f"{url}: {why}")
                continue
            return url, doc, problems
        return None, {}, problems

    async def _discover_resource(self, challenge: Challenge | None) -> None:
        step = await self._begin(STEP_PRM)
        advertised = challenge.resource_metadata if challenge else None
        refused = urlpolicy.refusal(advertised, purpose=urlpolicy.FETCH, own_host=self._own_host) \
            if advertised else None
        url, doc, problems = await self._first_document(step, protected_resource_candidates(
            self.server_url, None if refused else advertised))
        if refused:  # the well-known addresses of the server the user typed are tried instead
            problems.insert(0, f"not fetched: {refused}")
            step.details = {"refused": refused}
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
        self._allowed(step, servers[0], who="the server")
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
        grant = choose_grant(self.settings, self.metadata)
        if grant == GRANT_CODE:
            methods = doc.get("code_challenge_methods_supported")
            if not isinstance(methods, list) or "S256" not in methods:
                raise self._fail(step, "the authorization server does not advertise PKCE S256 in "
                                       "code_challenge_methods_supported "
                                       f"({'absent' if methods is None else methods}); Spyglass will not "
                                       "run an authorization code flow it cannot protect with PKCE")
            if not isinstance(doc.get("authorization_endpoint"), str):
                raise self._fail(step, "the metadata has no authorization_endpoint")
            self._allowed(step, doc["authorization_endpoint"], who="the authorization server",
                          purpose=urlpolicy.OPEN)
        if not isinstance(doc.get("token_endpoint"), str):
            raise self._fail(step, "the metadata has no token_endpoint")
        self._allowed(step, doc["token_endpoint"], who="the authorization server")
        self._end(step, f"issuer {issuer} verified at {url}")
