"""Forgetting a server's stored OAuth state, and ending the grant at the authorization server (RFC 7009).

What `spyglass --cli --relogin` does before it connects: the tokens kept for the server (the token store's
record under its issuer, and the server's index entry) are deleted, and, unless told not to, the refresh
token (else the access token) is revoked at the authorization server's `revocation_endpoint` when its
metadata names one. A revocation that fails is reported, never fatal: the local state is gone either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from .. import urlpolicy
from .responses import basic_auth
from .store import TokenStore, credential_key
from .urls import canonical_resource

REVOCATION_TIMEOUT = 5.0  # seconds, for the whole revocation request


@dataclass
class Revocation:
    status: str  # "revoked" | "skipped" | "failed"
    detail: str


def _stored(store: TokenStore, resource: str) -> tuple[str | None, dict[str, Any] | None]:
    index = store.load(f"server {resource}")
    issuer = index.get("issuer") if isinstance(index, dict) else None
    if not isinstance(issuer, str) or not issuer:
        return None, None
    return issuer, store.load(credential_key(issuer, resource))


def forget_server(server_url: str, store: TokenStore, *, revoke: bool = True, client_id: str | None = None,
                  client_secret: str | None = None, verify: bool = True) -> Revocation:
    """Delete what `store` keeps for `server_url`; revoke its token first when `revoke` (RFC 7009).

    `client_id`/`client_secret` are the entered client, used when the record holds none (an entered client
    is not stored)."""
    resource = canonical_resource(server_url)
    issuer, record = _stored(store, resource)
    outcome = Revocation("skipped", "no stored tokens for this server")
    if record is not None and revoke:
        outcome = _revoke(record, client_id, client_secret, verify)
    elif record is not None:
        outcome = Revocation("skipped", "--no-revoke")
    if issuer is not None:
        store.delete(credential_key(issuer, resource))
    store.delete(f"server {resource}")
    return outcome


def _revoke(record: dict[str, Any], client_id: str | None, client_secret: str | None, verify: bool) -> Revocation:
    tokens = record.get("tokens") if isinstance(record.get("tokens"), dict) else {}
    assert isinstance(tokens, dict)
    token, hint = ((tokens["refresh_token"], "refresh_token") if tokens.get("refresh_token")
                   else (tokens.get("access_token"), "access_token"))
    if not isinstance(token, str) or not token:
        return Revocation("skipped", "no stored tokens for this server")
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    endpoint = metadata.get("revocation_endpoint")
    if not isinstance(endpoint, str) or not endpoint.startswith(("https://", "http://")):
        return Revocation("skipped", "the authorization server names no revocation_endpoint")
    resource = record.get("resource")
    refused = urlpolicy.refusal(endpoint, who="the authorization server", purpose=urlpolicy.FETCH,
                                own_host=urlsplit(resource).hostname if isinstance(resource, str) else None)
    if refused:
        return Revocation("skipped", refused)
    client = record.get("client") if isinstance(record.get("client"), dict) else {}
    assert isinstance(client, dict)
    cid = client.get("client_id") or client_id
    secret = client.get("client_secret") if client.get("client_id") else client_secret
    form = {"token": token, "token_type_hint": hint}
    headers = {"Accept": "application/json"}
    if isinstance(cid, str) and cid:
        if isinstance(secret, str) and secret and client.get("auth_method") == "client_secret_post":
            form.update(client_id=cid, client_secret=secret)
        elif isinstance(secret, str) and secret:
            headers["Authorization"] = basic_auth(cid, secret)
        else:
            form["client_id"] = cid
    try:
        with httpx.Client(timeout=REVOCATION_TIMEOUT, verify=verify, follow_redirects=False) as http:
            resp = http.post(endpoint, data=form, headers=headers)
    except httpx.HTTPError as exc:
        return Revocation("failed", f"{endpoint}: {type(exc).__name__}: {exc}")
    if resp.status_code != 200:  # RFC 7009 §2.2: 200 whether or not the token was valid
        return Revocation("failed", f"{endpoint} answered HTTP {resp.status_code}")
    return Revocation("revoked", f"{hint} revoked at {endpoint}")
