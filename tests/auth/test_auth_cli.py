"""`spyglass --cli` with authorization: headless automation, and exit 3 naming the step."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import fake_as
import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(60)


def spyglass(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", "--cli", *args], capture_output=True, text=True,
                          timeout=50, cwd=str(ROOT))


def test_headless_authorization_then_the_request():
    with fake_as.running(scopes_supported=["mcp:read"]) as server:
        proc = spyglass("--auth-headless", "--token-store", "memory", "--transport", "http", server.mcp_url)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["tools"][0]["name"] == "whoami"
    assert server.authorization_requests[0]["scope"] == "mcp:read"
    for token in server.tokens:
        assert token not in proc.stdout + proc.stderr


def test_entered_client_and_scope_flags():
    with fake_as.running("no-dcr") as server:
        server.clients["my-client"] = "my-secret"
        proc = spyglass("--auth-headless", "--token-store", "memory", "--client-id", "my-client",
                        "--client-secret", "my-secret", "--scope", "a b", "--transport", "http", server.mcp_url)
    assert proc.returncode == 0, proc.stderr
    req = server.authorization_requests[0]
    assert req["client_id"] == "my-client" and req["scope"] == "a b"
    assert "my-secret" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("mode, step", [("token-500", "token"), ("wrong-state", "authorization"),
                                        ("issuer-mismatch", "discovery: authorization server metadata")])
def test_failure_is_exit_3_naming_the_step(mode, step):
    with fake_as.running(mode) as server:
        proc = spyglass("--auth-headless", "--token-store", "memory", "--transport", "http", server.mcp_url)
    assert proc.returncode == 3, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["step"] == step and error["kind"] == "auth_failed"
    assert f"authorization failed at step '{step}'" in proc.stderr


def test_a_sign_in_page_in_headless_mode_says_a_person_is_needed():
    with fake_as.running("login-page") as server:
        proc = spyglass("--auth-headless", "--token-store", "memory", "--transport", "http", server.mcp_url)
    assert proc.returncode == 3
    error = json.loads(proc.stdout)["error"]
    assert error["step"] == "authorization" and "wants a person" in error["cause"]


def test_the_flow_is_in_the_trace_with_secrets_masked(tmp_path):
    trace = tmp_path / "t.jsonl"
    with fake_as.running(scopes_supported=["mcp:read"]) as server:
        proc = spyglass("--auth-headless", "--token-store", "memory", "--trace", str(trace), "--transport", "http",
                        server.mcp_url)
        tokens = list(server.tokens)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    steps = [json.loads(r["text"]).get("auth_step") for r in records if r["dir"] == "http"]
    assert {"discovery", "token"} <= {s.split(":")[0] for s in steps if s}
    text = trace.read_text()
    assert tokens and not any(token in text for token in tokens)


def test_headless_authorization_over_the_http_sse_transport():
    with fake_as.running() as server:
        proc = spyglass("--auth-headless", "--token-store", "memory", "--transport", "sse", server.sse_url)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["tools"][0]["name"] == "whoami"
        # the stream was refused, then opened with the token; the posts carried it
        gets = [path for method, path in server.requests if method == "GET" and path == "/sse"]
        assert len(gets) == 2 and ("GET", "/.well-known/oauth-protected-resource/sse") in server.requests
        assert server.token_requests and server.token_requests[0]["resource"] == server.sse_url
        # a token of one's own that the server refuses: no flow, exit 3 with the challenge
        proc = spyglass("--auth-token", "not-a-token", "--transport", "sse", server.sse_url)
    assert proc.returncode == 3 and "requires authorization (HTTP 401)" in proc.stderr
    assert "oauth-protected-resource/sse" in proc.stderr
