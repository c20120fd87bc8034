"""The JWTs Spyglass signs: DPoP proofs (RFC 9449) and private_key_jwt assertions (RFC 7523)."""

from __future__ import annotations

import base64
import hashlib
import time

from joserfc import jwt
from joserfc.jwk import ECKey

from inspector.auth.jwt import DPoPKey, client_assertion, decode_claims


def test_dpop_proof_is_well_formed_and_fresh():
    key = DPoPKey()
    proof = key.proof("post", "https://mcp.example.com/mcp?x=1#frag", access_token="tok", nonce="n-1")
    header = jwt.decode(proof, ECKey.import_key(key.public_jwk), algorithms=["ES256"]).header
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256" and "d" not in header["jwk"]
    claims = decode_claims(proof)
    assert claims["htm"] == "POST" and claims["htu"] == "https://mcp.example.com/mcp"
    assert claims["nonce"] == "n-1" and abs(claims["iat"] - time.time()) < 5
    expected = base64.urlsafe_b64encode(hashlib.sha256(b"tok").digest()).rstrip(b"=").decode()
    assert claims["ath"] == expected
    assert decode_claims(key.proof("POST", "https://a.example/t"))["jti"] != claims["jti"]
    assert "ath" not in decode_claims(key.proof("POST", "https://a.example/t"))
    again = DPoPKey.from_dict(key.as_dict())
    assert again.thumbprint == key.thumbprint


def test_private_key_jwt_assertion():
    private = ECKey.generate_key("P-256")
    pem = private.as_pem(private=True).decode()
    token = client_assertion("my-client", "https://as.example.com", pem)
    public = ECKey.import_key(private.as_dict(private=False))
    claims = jwt.decode(token, public, algorithms=["ES256"]).claims
    assert claims["iss"] == claims["sub"] == "my-client" and claims["aud"] == "https://as.example.com"
    assert claims["exp"] > claims["iat"] and claims["jti"]


def test_decode_claims_is_total():
    assert decode_claims("not a jwt") is None
    assert decode_claims("a.b.c") is None
    assert decode_claims("a." + base64.urlsafe_b64encode(b"[1]").decode().rstrip("=") + ".c") is None
