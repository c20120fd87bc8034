"""The connection doctor against URL servers that fail each way it names, staged on loopback
(doctor_peers.py): the failing step, what it saw, and its advice; a healthy SDK server passes every step."""

from __future__ import annotations

import socket

import httpx
import pytest
from doctor_peers import make_certificate, serving
from http_peers import sdk

from inspector import errors as E
from inspector.config import ServerSpec
from inspector.doctor import NOT_REACHED, PASSED, SKIPPED, DoctorOptions, diagnose
from inspector.transport.http_common import HttpSettings

FAST = DoctorOptions(timeout=2.0)


async def doctor(url: str, options: DoctorOptions = FAST, **spec):
    return await diagnose(ServerSpec(name="t", url=url, **spec), options)


def failed(report):
    step = report.failed
    assert step is not None, report.as_text()
    return step


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("certs")
    return {"self-signed": make_certificate(folder, "self-signed"),
            "expired": make_certificate(folder, "expired", expired=True),
            "other-name": make_certificate(folder, "other-name", names=("other.example",)),
            "private-ca": make_certificate(folder, "private-ca", private_ca=True)}


async def test_a_healthy_sdk_server_passes_every_step():
    with sdk() as url:
        report = await doctor(url, DoctorOptions(timeout=10))
    assert report.connected and report.exit_code == E.EXIT_OK, report.as_text()
    outcomes = {s.id: s.outcome for s in report.steps}
    assert {k for k, v in outcomes.items() if v == PASSED} >= {"url", "dns", "tcp", "post", "revisions", "session"}
    assert all(v in (PASSED, SKIPPED) for v in outcomes.values()), outcomes
    assert "no 401" in report.step("auth-challenge").seen[0]


async def test_a_healthy_server_speaks_both_eras_and_ends_its_session():
    with serving("healthy") as peer:
        report = await doctor(peer.url)
        assert report.connected, report.as_text()
        assert ("DELETE", "/mcp") in peer.requests
    assert report.step("revisions").seen[-1] == "speaks: 2026-07-28, 2025-11-25"
    assert report.step("session").seen[0] == "Mcp-Session-Id given (32 characters)"
    assert report.step("tcp").seen[0].startswith("127.0.0.1:")


async def test_nothing_listening_on_the_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: refused
        report = await doctor(f"http://127.0.0.1:{port}/mcp")
    step = failed(report)
    assert step.id == "tcp" and report.exit_code == E.EXIT_CONNECT
    assert step.seen[-1] == f"nothing accepts connections on port {port} of 127.0.0.1"
    assert (step.fix or "").startswith(f"start the server, or check the port ({port})")
    assert report.step("post").outcome == NOT_REACHED


@pytest.mark.parametrize(("url", "seen"), [("ftp://127.0.0.1/mcp", "not http or https"),
                                           ("http://[::1/mcp", "Invalid IPv6 URL")])  # (raised ValueError)
async def test_a_url_that_does_not_parse(url, seen):
    report = await doctor(url)
    step = failed(report)
    assert step.id == "url" and report.exit_code == E.EXIT_USAGE and seen in " ".join(step.seen)


async def test_an_html_page():
    with serving("html") as peer:
        report = await doctor(peer.url)
    step = failed(report)
    assert step.id == "post" and report.exit_code == E.EXIT_INVALID
    assert step.seen[-1].startswith("an HTML page (HTTP 200, title: 'Welcome to nginx!')")
    assert "check the path" in (step.fix or "")


async def test_a_redirect():
    with serving("redirect") as peer:
        report = await doctor(peer.url)
    step = failed(report)
    assert step.id == "post"
    assert step.seen[-1] == f"a redirect (HTTP 307) to {peer.url}/"
    assert step.fix == f"use the URL it points to: {peer.url}/ (only a trailing slash differs: MCP clients do " \
                       "not follow redirects of a POST)"


async def test_a_404():
    with serving("not-found") as peer:
        report = await doctor(peer.url)
    step = failed(report)
    assert step.id == "post" and report.exit_code == E.EXIT_CONNECT
    assert step.seen[-1].startswith("nothing at this path (HTTP 404), and no legacy HTTP+SSE stream either")
    assert "/mcp (Streamable HTTP) or /sse" in (step.fix or "")


async def test_a_legacy_sse_only_server_answering_2024_11_05():
    with serving("sse-only") as peer:
        report = await doctor(peer.url)
    assert report.connected, report.as_text()
    assert "Streamable HTTP refused (HTTP 405)" in report.step("post").seen[-1]
    assert report.step("revisions").outcome == SKIPPED
    legacy = report.step("legacy-sse")
    assert legacy.outcome == PASSED and legacy.seen[-1].endswith("it chose 2024-11-05"), legacy.seen


async def test_a_server_that_only_speaks_2026_07_28():
    with serving("modern-only") as peer:
        report = await doctor(peer.url)
    assert report.connected, report.as_text()
    seen = report.step("revisions").seen
    assert seen[0] == "2026-07-28 (server/discover): answered from doctor-peer 1.0 (supportedVersions: 2026-07-28)"
    assert seen[1] == "2025-11-25 (initialize): refused, error -32022 Unsupported protocol version"
    assert seen[-1] == "speaks: 2026-07-28"
    assert report.step("session").seen == ["2026-07-28 is stateless: no session"]


async def test_a_server_that_only_speaks_2024_11_05():
    with serving("legacy-2024") as peer:
        report = await doctor(peer.url)
    assert report.connected, report.as_text()
    seen = report.step("revisions").seen
    assert seen[0] == "2026-07-28 (server/discover): refused, error -32601 Method not found"
    assert seen[1] == "2025-11-25 (initialize): answered from doctor-peer 1.0; it chose 2024-11-05"
    assert seen[-1] == "speaks: 2024-11-05"


async def test_a_401_with_metadata_reaches_the_token():
    with serving("401-meta") as peer:
        report = await doctor(peer.url)
        posted = [r for r in peer.requests if r[0] == "POST"]
    step = failed(report)
    assert step.id == "auth-token" and report.exit_code == E.EXIT_AUTH
    assert "sign in" in (step.fix or "")
    assert posted == [("POST", "/mcp")]  # observe only: nothing registered, no token asked for
    assert any(s.startswith("scheme Bearer; resource_metadata=") for s in report.step("auth-challenge").seen)
    assert report.step("auth-resource").seen[-1] == f"authorization servers: {peer.base}"
    assert report.step("auth-registration").seen[-1].startswith("offers: dynamic registration at")
    assert report.step("auth-scopes").seen == ["the challenge asks for: mcp:read"]
    assert report.step("revisions").outcome == NOT_REACHED


async def test_a_401_without_metadata():
    with serving("401-bare") as peer:
        report = await doctor(peer.url)
    step = failed(report)
    assert step.id == "auth-resource" and report.exit_code == E.EXIT_AUTH
    assert step.seen[-1] == "no protected resource metadata (RFC 9728) at any address the spec names"
    assert "--auth-token" in (step.fix or "")
    assert "no WWW-Authenticate header" in report.step("auth-challenge").seen[-1]


async def test_an_authorization_server_without_registration():
    with serving("401-noreg") as peer:
        report = await doctor(peer.url)
    step = failed(report)
    assert step.id == "auth-registration" and report.exit_code == E.EXIT_AUTH
    assert "no registration_endpoint, no Client ID Metadata Document support" in step.seen[-1]
    assert "--client-id ID" in (step.fix or "")
    both = report.step("auth-server").seen  # both well-known forms tried
    assert any("/.well-known/oauth-authorization-server:" in s for s in both)
    assert any("/.well-known/openid-configuration:" in s for s in both)


async def test_a_pre_registered_client_id_passes_registration():
    with serving("401-noreg") as peer:
        report = await doctor(peer.url, DoctorOptions(timeout=2.0, client_id="abc"))
    assert failed(report).id == "auth-token"


async def test_a_self_signed_certificate_and_its_pin(certs):
    cert = certs["self-signed"]
    with serving("healthy", cert.server_context()) as peer:
        report = await doctor(peer.url)
        step = failed(report)
        assert step.id == "tls" and report.exit_code == E.EXIT_CONNECT
        assert step.seen[-1] == "a self-signed certificate: no trust store vouches for it"
        assert "Trust this certificate" in (step.fix or "") and "--trust-certificate" in (step.fix or "")
        assert any(s.startswith("TLSv1.") for s in step.seen)
        pinned = await doctor(peer.url, tls_pin=cert.sha256)
        assert pinned.connected, pinned.as_text()
        assert "trusted for this server by its pinned fingerprint" in pinned.step("tls").seen


async def test_an_expired_certificate(certs):
    with serving("healthy", certs["expired"].server_context()) as peer:
        report = await doctor(peer.url)
    step = failed(report)
    assert step.id == "tls" and step.seen[-1].startswith("the certificate expired on ")
    assert (step.fix or "").startswith("renew the server's certificate")


async def test_a_certificate_for_another_name(certs):
    with serving("healthy", certs["other-name"].server_context()) as peer:
        report = await doctor(peer.url)
    step = failed(report)
    assert step.id == "tls" and step.seen[-1] == "the certificate is for other.example, not 127.0.0.1"


async def test_the_http_transport_trusts_the_pinned_certificate_only(certs):
    cert = certs["self-signed"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
    with serving("healthy", cert.server_context()) as peer:
        async with HttpSettings(tls_pin=cert.sha256).client() as client:
            assert (await client.post(peer.url, json=body)).status_code == 200
        async with HttpSettings(tls_pin=certs["expired"].sha256).client() as client:
            with pytest.raises(httpx.ConnectError, match="not the one trusted for this server"):
                await client.post(peer.url, json=body)
        async with HttpSettings().client() as client:
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await client.post(peer.url, json=body)


async def test_a_proxy_in_the_environment_is_named_and_not_used(monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # a proxy that would refuse every connection
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{dead}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        with serving("healthy") as peer:
            report = await doctor(peer.url)
            assert report.connected, report.as_text()  # the requests went direct, as the window's do
            proxy = report.step("proxy")
            assert proxy.outcome == PASSED and proxy.seen == [
                f"the environment names the proxy http://127.0.0.1:{dead} for this URL, but Spyglass does not use "
                "proxies from the environment: it connects directly, as the steps below do"]
            unknown = await doctor("http://doctor..test/mcp")  # refused locally: an empty label
            monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
            bypassed = await doctor(peer.url)
    assert bypassed.step("proxy").outcome == SKIPPED
    assert failed(unknown).id == "dns"
    assert (failed(unknown).fix or "").endswith(f"only through the proxy http://127.0.0.1:{dead}, which Spyglass "
                                                "does not use")


async def test_a_certificate_from_a_private_ca(certs):
    with serving("healthy", certs["private-ca"].server_context()) as peer:
        report = await doctor(peer.url)
    step = failed(report)
    assert step.id == "tls" and step.seen[-1].startswith("issued by CN=Spyglass Test Private CA, a CA neither store")
    assert "install that CA in the system trust store" in (step.fix or "") and "Trust this certificate" in step.fix


async def test_a_pinned_certificate_that_changed(certs):
    with serving("healthy", certs["self-signed"].server_context()) as peer:
        report = await doctor(peer.url, tls_pin=certs["expired"].sha256)
    step = failed(report)
    assert step.id == "tls" and step.seen[-1].startswith("the certificate is not the one trusted for this server")


async def test_tls_on_a_plain_http_port():
    with serving("healthy") as peer:
        report = await doctor(peer.url.replace("http://", "https://"))
    step = failed(report)
    assert step.id == "tls" and "try the http:// URL" in (step.fix or "")


@pytest.mark.parametrize(("case", "seen", "fix", "code"), [
    ("403-origin", "HTTP 403: Invalid Host header", "not CORS", E.EXIT_AUTH),
    ("500", "HTTP 500: Internal Server Error: database is locked", "the server failed: see its log", E.EXIT_CONNECT),
    ("plain", "content type text/plain, neither JSON nor an event stream: OK", "check the path", E.EXIT_INVALID),
])
async def test_answers_that_are_not_mcp(case, seen, fix, code):
    with serving(case) as peer:
        report = await doctor(peer.url)
    step = failed(report)
    assert step.id == "post" and step.seen[-1] == seen and fix in (step.fix or "") and report.exit_code == code


async def test_a_post_that_is_never_answered():
    with serving("slow") as peer:
        report = await doctor(peer.url, DoctorOptions(timeout=0.3))
    step = failed(report)
    assert step.id == "post" and report.exit_code == E.EXIT_TIMEOUT
    assert step.seen[-1] == f"POST {peer.url}: no complete answer within 0.3 s"


@pytest.mark.parametrize(("case", "step_id", "seen"), [
    ("401-issuer", "auth-server", "its issuer is 'https://elsewhere.example', not "),
    ("401-nopkce", "auth-server", "code_challenge_methods_supported does not list S256"),
])
async def test_authorization_server_metadata_a_client_must_refuse(case, step_id, seen):
    with serving(case) as peer:
        report = await doctor(peer.url)
    step = failed(report)
    assert step.id == step_id and step.seen[-1].startswith(seen) and report.exit_code == E.EXIT_AUTH


async def test_a_token_the_server_refuses():
    with serving("401-meta") as peer:
        report = await doctor(peer.url, DoctorOptions(timeout=2.0, auth_token="expired-token"))
    step = failed(report)
    assert step.id == "auth-challenge" and step.seen[-1].startswith("the server refused the credentials given")
    assert "get a new one" in (step.fix or "")
