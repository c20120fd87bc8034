"""What one authorization flow is given and what it obtains: the user's settings, the client
identity, the tokens; the names of the flow's steps and the grant types it knows. No I/O."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

GRANT_CODE = "authorization_code"
GRANT_CLIENT_CREDENTIALS = "client_credentials"
GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
GRANTS = {"auto": "auto", "authorization_code": GRANT_CODE, "client_credentials": GRANT_CLIENT_CREDENTIALS,
          "jwt-bearer": GRANT_JWT_BEARER, "enterprise": "enterprise"}
TOKEN_TYPE_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
TOKEN_TYPE_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"

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


def choose_grant(settings: AuthSettings, metadata: dict[str, Any] | None) -> str:
    """The grant to run: the one chosen in the settings, else the one the entered credentials and
    the authorization server's metadata point to."""
    chosen = GRANTS.get(settings.grant, settings.grant)
    if chosen != "auto":
        return chosen
    if settings.idp_id_token:
        return "enterprise"
    if settings.assertion:
        return GRANT_JWT_BEARER
    if settings.private_key_pem:
        return GRANT_CLIENT_CREDENTIALS
    supported = (metadata or {}).get("grant_types_supported")
    if (settings.client_secret and isinstance(supported, list) and GRANT_CODE not in supported
            and GRANT_CLIENT_CREDENTIALS in supported):
        return GRANT_CLIENT_CREDENTIALS
    return GRANT_CODE
