"""Signed JWTs the client makes: private_key_jwt client assertions (RFC 7523) and DPoP proofs (RFC 9449).

joserfc does the JOSE work; the claims are ours.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import TYPE_CHECKING, Any, Literal

from .urls import strip_query

if TYPE_CHECKING:  # joserfc is imported when a JWT is made (it costs ~40 ms at start-up)
    from joserfc.jwk import ECKey

DPOP_ALG = "ES256"
CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def client_assertion(client_id: str, audience: str, private_key_pem: str, alg: str = "ES256",
                     lifetime: int = 300) -> str:
    """RFC 7523 §2.2: iss = sub = client_id, aud = the authorization server's issuer."""
    from joserfc import jwt
    from joserfc.jwk import import_key

    kty: Literal["EC", "OKP", "RSA"] = "EC" if alg.startswith("ES") else "OKP" if alg in ("EdDSA", "Ed25519") else "RSA"
    key = import_key(private_key_pem, kty)
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + lifetime,
              "jti": secrets.token_urlsafe(16)}
    return jwt.encode({"alg": alg, "typ": "JWT"}, claims, key, algorithms=[alg])


class DPoPKey:
    """One proof-of-possession key (P-256) and the nonces servers handed out."""

    def __init__(self, key: ECKey | None = None) -> None:
        from joserfc.jwk import ECKey

        self.key = key or ECKey.generate_key("P-256")
        self.nonces: dict[str, str] = {}  # "as" / "rs" -> last DPoP-Nonce

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DPoPKey:
        from joserfc.jwk import ECKey

        return cls(ECKey.import_key(data))

    def as_dict(self) -> dict[str, Any]:
        return self.key.as_dict(private=True)

    @property
    def public_jwk(self) -> dict[str, Any]:
        return self.key.as_dict(private=False)

    @property
    def thumbprint(self) -> str:
        return self.key.thumbprint()

    def proof(self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None) -> str:
        claims: dict[str, Any] = {"jti": secrets.token_urlsafe(16), "htm": method.upper(), "htu": strip_query(url),
                                  "iat": int(time.time())}
        if access_token:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        if nonce:
            claims["nonce"] = nonce
        from joserfc import jwt

        header = {"typ": "dpop+jwt", "alg": DPOP_ALG, "jwk": self.public_jwk}
        return jwt.encode(header, claims, self.key, algorithms=[DPOP_ALG])


def decode_claims(token: str) -> dict[str, Any] | None:
    """The claims of a JWT without verifying it (for display only), or None."""
    import json

    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except Exception:
        return None
    return claims if isinstance(claims, dict) else None
