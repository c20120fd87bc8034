"""The client identity: credentials entered for the server, a registration kept from an earlier
run, a Client ID Metadata Document, or dynamic client registration (RFC 7591)."""

from __future__ import annotations

from typing import Any

from .model import GRANT_JWT_BEARER, STEP_REGISTRATION, Client
from .records import SKIPPED
from .responses import Unreachable, json_object
from .state import FlowState
from .store import credential_key


class Registration(FlowState):
    """The registration step of an `AuthorizationFlow`."""

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
        self._allowed(step, endpoint, who="the authorization server")
        redirect_uri = await self._redirect_uri()
        method = registration_auth_method(meta.get("token_endpoint_auth_methods_supported"))
        body = {"client_name": s.client_name, "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                "token_endpoint_auth_method": method, "application_type": "native"}
        try:
            resp = await self._request(step, "POST", endpoint, json_body=body)
        except Unreachable as exc:
            raise self._fail(step, f"cannot reach the registration endpoint: {exc}") from None
        doc, why = json_object(resp, accept=(200, 201))
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


def registration_auth_method(supported: Any) -> str:
    if not isinstance(supported, list):
        return "client_secret_basic"
    for method in ("none", "client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return "client_secret_basic"
