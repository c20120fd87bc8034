"""The flow against a local authorization server: the browser-and-listener path, headless
automation, and bad input, each failure naming its step and cause. Nothing may hang."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket

import fake_as
import httpx
import pytest

from inspector.auth import (
    AuthFailed,
    AuthorizationFlow,
    AuthSettings,
    CallbackObserver,
    HeadlessAuthorizer,
    LoopbackAuthorizer,
    MemoryStore,
    OAuthProvider,
)
from inspector.auth.flow import STEP_ASM, STEP_AUTHORIZATION, STEP_PRM, STEP_REFRESH, STEP_TOKEN
from inspector.auth.records import FAILED, OK

pytestmark = pytest.mark.timeout(30)


def _refused(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) != 0


async def _as_browser(url: str) -> bool:
    """What the system browser does: load the page, follow the redirects to the listener."""
    async with httpx.AsyncClient(follow_redirects=True, timeout=5) as browser:
        page = await browser.get(url)
    assert page.status_code == 200 and b"You can close this tab" in page.content
    return True


async def test_browser_and_one_shot_listener():
    with fake_as.running(scopes_supported=["mcp:read"]) as server:
        authorizer = LoopbackAuthorizer(open_url=_as_browser, timeout=10)
        flow = AuthorizationFlow(server.mcp_url, AuthSettings(), authorizer=authorizer, store=MemoryStore())
        async with httpx.AsyncClient() as http:
            tokens = await flow.authorize(http)
        assert tokens.access_token in server.tokens and tokens.refresh_token
        assert [s.kind for s in flow.steps] == [STEP_PRM, STEP_ASM, "registration", STEP_AUTHORIZATION, STEP_TOKEN]
        assert all(s.status == OK for s in flow.steps)
        [req] = server.authorization_requests
        assert req["redirect_uri"].startswith("http://127.0.0.1:") and req["code_challenge_method"] == "S256"
        assert req["resource"] == server.mcp_url and req["scope"] == "mcp:read"
        assert server.registrations[0]["redirect_uris"] == [req["redirect_uri"]]
        assert server.token_requests[0]["resource"] == server.mcp_url
        assert _refused(authorizer.port), "the redirect listener must close after one use"
        assert not authorizer.listening


async def test_listener_ignores_stray_requests_and_times_out_cleanly():
    async def stray_only(url: str) -> bool:
        return True  # the user never finishes signing in

    authorizer = LoopbackAuthorizer(open_url=stray_only, timeout=0.5)
    redirect = await authorizer.prepare()
    async with httpx.AsyncClient() as c:
        assert (await c.get(redirect.replace("/callback", "/favicon.ico"))).status_code == 404
    with pytest.raises(AuthFailed) as err:
        await authorizer.authorize("http://127.0.0.1:9/authorize", None)
    assert err.value.step == "authorization" and "no redirect reached" in err.value.cause
    assert _refused(authorizer.port)


async def test_pasted_redirect_url_is_the_fallback(expect_log):
    expect_log("spyglass.auth", "could not open a browser")
    with fake_as.running() as server:
        async def paste(url: str) -> str:
            async with httpx.AsyncClient() as browser:  # the user copies the address bar
                resp = await browser.get(url)
            return resp.headers["location"]

        authorizer = LoopbackAuthorizer(open_url=lambda url: False, paste=paste, timeout=10)
        flow = AuthorizationFlow(server.mcp_url, authorizer=authorizer)
        async with httpx.AsyncClient() as http:
            assert (await flow.authorize(http)).access_token in server.tokens


async def test_steps_are_observable_and_can_be_driven_one_at_a_time():
    seen: list[tuple[str, str]] = []
    gate: asyncio.Queue[None] = asyncio.Queue()

    async def before(step):
        await gate.get()  # "Next" in a step-by-step view

    observer = CallbackObserver(changed=lambda s: seen.append((s.kind, s.status)), before_step=before)
    with fake_as.running() as server:
        flow = AuthorizationFlow(server.mcp_url, authorizer=HeadlessAuthorizer(), observer=observer)
        async with httpx.AsyncClient() as http:
            task = asyncio.ensure_future(flow.authorize(http))
            await asyncio.sleep(0.2)
            assert not seen, "nothing runs before the first Next"
            for _ in range(5):
                gate.put_nowait(None)
            await asyncio.wait_for(task, 10)
    assert (STEP_PRM, "running") in seen and (STEP_TOKEN, OK) in seen
    assert all(s.exchanges for s in flow.steps)


async def test_no_secret_reaches_the_step_records():
    with fake_as.running("confidential") as server:
        flow = AuthorizationFlow(server.mcp_url, authorizer=HeadlessAuthorizer())
        async with httpx.AsyncClient() as http:
            tokens = await flow.authorize(http)
        shown = json.dumps([dataclasses.asdict(s) for s in flow.steps], ensure_ascii=False)
        secret = server.clients[flow.client.client_id]
        for value in (tokens.access_token, tokens.refresh_token, secret, server.token_requests[0]["code"],
                      server.token_requests[0]["code_verifier"]):
            assert value and value not in shown
        assert "Basic ••••••" in shown  # client_secret_basic, masked


@pytest.mark.parametrize("mode, step, words", [
    ("metadata-not-json", STEP_ASM, "not JSON"),
    ("issuer-mismatch", STEP_ASM, "issuer"),
    ("no-pkce", STEP_ASM, "PKCE"),
    ("wrong-state", STEP_AUTHORIZATION, "state"),
    ("wrong-iss", STEP_AUTHORIZATION, "https://evil.example"),
    ("token-500", STEP_TOKEN, "HTTP 500"),
    ("no-dcr", "registration", "--client-id"),
])
async def test_bad_input_names_the_step_and_the_cause(mode, step, words):
    with fake_as.running(mode) as server:
        flow = AuthorizationFlow(server.mcp_url, authorizer=HeadlessAuthorizer())
        async with httpx.AsyncClient() as http:
            with pytest.raises(AuthFailed) as err:
                await flow.authorize(http)
        assert err.value.step == step and words in err.value.cause, err.value.message
        assert f"'{step}'" in err.value.message and err.value.exit_code == 3
        assert flow.steps[-1].status == FAILED and flow.steps[-1].verdict == err.value.cause
        if mode in ("wrong-state", "wrong-iss"):
            assert not server.token_requests, "the code must not reach the token endpoint"


async def test_unreachable_metadata_names_discovery():
    port = fake_as_free_port()
    flow = AuthorizationFlow(f"http://127.0.0.1:{port}/mcp", authorizer=HeadlessAuthorizer())
    async with httpx.AsyncClient() as http:
        with pytest.raises(AuthFailed) as err:
            await flow.authorize(http)
    assert err.value.step == STEP_PRM and "connection refused" in err.value.cause


def fake_as_free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_refresh_then_expired_refresh_token():
    with fake_as.running() as server:
        flow = AuthorizationFlow(server.mcp_url, authorizer=HeadlessAuthorizer())
        async with httpx.AsyncClient() as http:
            first = await flow.authorize(http)
            assert await flow.refresh(http)
            assert flow.tokens.access_token != first.access_token
            server.mode = "refresh-expired"
            assert not await flow.refresh(http)
        step = flow.steps[-1]
        assert step.kind == STEP_REFRESH and step.status == FAILED
        assert "invalid_grant" in step.verdict and "refresh token expired" in step.verdict


async def test_expired_refresh_token_without_a_browser_names_both_steps():
    with fake_as.running() as server:
        store = MemoryStore()
        async with httpx.AsyncClient() as http:
            flow = AuthorizationFlow(server.mcp_url, authorizer=HeadlessAuthorizer(), store=store)
            await flow.authorize(http)
            server.mode = "refresh-expired"
            server.tokens.clear()  # the access token expired too
            provider = OAuthProvider(server.mcp_url, authorizer=None, store=store)  # next run, no browser
            rejected = await http.post(server.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert await provider.on_unauthorized(http, server.mcp_url, rejected)  # kept tokens: try them
            headers = await provider.request_headers("POST", server.mcp_url)
            again = await http.post(server.mcp_url, headers=headers, json={"jsonrpc": "2.0", "id": 2,
                                                                           "method": "tools/list"})
            assert again.status_code == 401
            with pytest.raises(AuthFailed) as err:
                await provider.on_unauthorized(http, server.mcp_url, again)
        assert err.value.step == STEP_AUTHORIZATION
        assert "refresh token was refused: the token endpoint refused: invalid_grant" in err.value.cause
        assert err.value.details["www_authenticate"].startswith("Bearer resource_metadata=")
        kinds = [(s.kind, s.status) for s in provider.steps]
        assert (STEP_REFRESH, FAILED) in kinds


async def test_provider_reuses_a_refresh_token_before_asking_again():
    with fake_as.running() as server:
        provider = OAuthProvider(server.mcp_url, authorizer=HeadlessAuthorizer(), store=MemoryStore())
        async with httpx.AsyncClient() as http:
            first = await http.post(server.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert await provider.on_unauthorized(http, server.mcp_url, first)
            headers = await provider.request_headers("POST", server.mcp_url)
            ok = await http.post(server.mcp_url, headers=headers, json={"jsonrpc": "2.0", "id": 2,
                                                                        "method": "tools/list"})
            assert ok.status_code == 200
            server.tokens.clear()  # the server forgets the access token
            stale = await http.post(server.mcp_url, headers=headers, json={"jsonrpc": "2.0", "id": 3,
                                                                           "method": "tools/list"})
            assert await provider.on_unauthorized(http, server.mcp_url, stale)
        assert len(server.authorization_requests) == 1, "refreshed, not re-authorized"
        assert [r["grant_type"] for r in server.token_requests] == ["authorization_code", "refresh_token"]
        assert provider.describe()["authorized"] is True


async def test_insufficient_scope_step_up_is_bounded():
    with fake_as.running() as server:
        provider = OAuthProvider(server.mcp_url, AuthSettings(max_step_ups=1), authorizer=HeadlessAuthorizer())
        async with httpx.AsyncClient() as http:
            first = await http.post(server.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert await provider.on_unauthorized(http, server.mcp_url, first)
            headers = await provider.request_headers("POST", server.mcp_url)

            def forbidden(scope: str) -> httpx.Response:
                return httpx.Response(403, headers={"WWW-Authenticate": f'Bearer error="insufficient_scope", '
                                                                        f'scope="{scope}"'},
                                      request=httpx.Request("POST", server.mcp_url, headers=headers))

            assert await provider.on_forbidden(http, server.mcp_url, forbidden("mcp:write"))
            assert server.authorization_requests[-1]["scope"] == "mcp:write"
            headers = await provider.request_headers("POST", server.mcp_url)
            with pytest.raises(AuthFailed) as err:  # already granted: another round would not help
                await provider.on_forbidden(http, server.mcp_url, forbidden("mcp:write"))
            assert err.value.step == "step-up" and "already granted" in err.value.cause
            with pytest.raises(AuthFailed) as err:  # the limit
                await provider.on_forbidden(http, server.mcp_url, forbidden("mcp:admin"))
            assert "gave up after 1" in err.value.cause
        assert len(server.authorization_requests) == 2
