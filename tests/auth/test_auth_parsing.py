"""WWW-Authenticate parsing (incl. malformed), discovery order, resource checks. Pure: no IO."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from inspector.auth.challenge import find, parse_www_authenticate
from inspector.auth.urls import (
    authorization_server_candidates,
    canonical_resource,
    protected_resource_candidates,
    resource_covers,
    strip_query,
)


def test_bearer_challenge_with_every_mcp_parameter():
    [c] = parse_www_authenticate('Bearer resource_metadata="https://mcp.example.com/.well-known/'
                                 'oauth-protected-resource/mcp", scope="files:read files:write", '
                                 'error="insufficient_scope", error_description="needs write"')
    assert c.scheme == "Bearer" and not c.problems
    assert c.resource_metadata == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    assert c.scope == ["files:read", "files:write"] and c.error == "insufficient_scope"
    assert c.params["error_description"] == "needs write"


def test_several_challenges_and_token68_and_escapes():
    cs = parse_www_authenticate('Basic YWxhZGRpbjpvcGVu==, DPoP error="use_dpop_nonce", '
                                'Bearer realm="a \\"quoted\\" realm"')
    assert [c.scheme for c in cs] == ["Basic", "DPoP", "Bearer"]
    assert cs[0].token68 == "YWxhZGRpbjpvcGVu=="
    assert cs[1].error == "use_dpop_nonce"
    assert cs[2].params["realm"] == 'a "quoted" realm'
    assert find(cs, "DPoP", "Bearer").scheme == "DPoP"
    assert find(cs[2:], "DPoP", "Bearer").scheme == "Bearer"


def test_parameter_names_are_case_insensitive_and_bare_tokens_allowed():
    [c] = parse_www_authenticate("bearer Error=invalid_token, SCOPE=read")
    assert c.error == "invalid_token" and c.scope == ["read"]


def test_malformed_headers_keep_what_can_be_read():
    [c] = parse_www_authenticate('Bearer scope="unterminated')
    assert c.scope == ["unterminated"] and "unterminated quoted string" in c.problems[0]
    [c] = parse_www_authenticate("Bearer scope=a b, error=x")
    assert c.scope == ["a", "b"] and c.error == "x" and c.problems
    [c] = parse_www_authenticate('Bearer scope="x", scope="y"')
    assert c.scope == ["x"] and "repeated" in c.problems[0]
    [c] = parse_www_authenticate('Bearer scope="x", realm=')
    assert c.params["realm"] == "" and "missing value" in c.problems[0]
    [c] = parse_www_authenticate("Basic realm=")  # a token68 that looks like a parameter
    assert c.token68 == "realm="
    assert parse_www_authenticate("") == [] and parse_www_authenticate(None) == []
    assert parse_www_authenticate('"') == [] and parse_www_authenticate("=,=,") == []


@given(st.text(max_size=200))
def test_parsing_never_raises(text):
    for c in parse_www_authenticate(text):
        assert isinstance(c.scheme, str) and isinstance(c.params, dict)


def test_protected_resource_metadata_order():
    url = "https://mcp.example.com/public/mcp"
    assert protected_resource_candidates(url) == [
        "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource"]
    advertised = "https://mcp.example.com/custom/prm.json"
    assert protected_resource_candidates(url, advertised)[0] == advertised
    assert protected_resource_candidates("https://mcp.example.com/") == [
        "https://mcp.example.com/.well-known/oauth-protected-resource"]


def test_authorization_server_metadata_order_with_and_without_path():
    assert authorization_server_candidates("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration"]
    assert authorization_server_candidates("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration"]
    assert authorization_server_candidates("https://auth.example.com/") == \
        authorization_server_candidates("https://auth.example.com")


def test_resource_identity():
    assert canonical_resource("HTTPS://MCP.Example.com/mcp/#frag") == "https://mcp.example.com/mcp"
    assert canonical_resource("https://mcp.example.com/") == "https://mcp.example.com"
    assert resource_covers("https://mcp.example.com/mcp", "https://mcp.example.com/mcp")
    assert resource_covers("https://mcp.example.com", "https://mcp.example.com/mcp")
    assert not resource_covers("https://evil.example.com/mcp", "https://mcp.example.com/mcp")
    assert not resource_covers("https://mcp.example.com/mc", "https://mcp.example.com/mcp")
    assert not resource_covers("http://mcp.example.com/mcp", "https://mcp.example.com/mcp")
    assert strip_query("https://a.example/mcp?x=1#y") == "https://a.example/mcp"
