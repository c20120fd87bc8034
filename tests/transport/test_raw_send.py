"""Hand-made frames at the transport: the headers shown (secrets masked) and those sent (a mask stands for the
session's own secret, a fresh DPoP proof with its token), a POST that cannot reach the server."""

from __future__ import annotations

import http_peers

from inspector.secrets import MASK
from inspector.transport.base import RawSent
from inspector.transport.http import HttpTransport
from inspector.transport.http_common import HttpSettings, real_headers, shown_headers


class Provider:
    def __init__(self, token: bool = True) -> None:
        self.token = token
        self.asked: list[tuple[str, str]] = []

    def has_token(self) -> bool:
        return self.token

    async def request_headers(self, method: str, url: str) -> dict[str, str]:
        self.asked.append((method, url))
        return {"Authorization": "DPoP tok", "DPoP": f"proof-{len(self.asked)}"} if self.token else {}

    async def on_unauthorized(self, client, url, response) -> bool:  # pragma: no cover - not reached here
        return False

    async def on_forbidden(self, client, url, response) -> bool:  # pragma: no cover - not reached here
        return False


async def test_a_masked_value_is_sent_as_the_sessions_own_secret():
    settings = HttpSettings(headers={"X-Api-Key": "k3y", "X-Plain": "p"}, auth_token="s3cret")
    shown = shown_headers({**settings.headers, "Accept": "application/json"}, settings)
    assert shown == {"X-Api-Key": MASK, "X-Plain": "p", "Authorization": f"Bearer {MASK}", "Accept": "application/json"}
    sent = await real_headers(shown, settings, "POST", "http://127.0.0.1:1/mcp")
    assert sent == {"X-Api-Key": "k3y", "X-Plain": "p", "Authorization": "Bearer s3cret", "Accept": "application/json"}
    # edited: the user's value goes; deleted: none goes; a mask with nothing behind it is dropped
    mine = await real_headers({"Authorization": "Bearer mine", "X-Other": MASK}, settings, "POST", "u")
    assert mine == {"Authorization": "Bearer mine"}
    assert await real_headers({"X-Plain": "p"}, settings, "POST", "u") == {"X-Plain": "p"}


async def test_an_authorization_providers_header_is_made_when_sent_with_a_fresh_proof():
    provider = Provider()
    settings = HttpSettings(auth=provider)
    shown = shown_headers({"Content-Type": "application/json"}, settings)
    assert shown["Authorization"] == MASK and not provider.asked  # shown without asking the provider
    sent = await real_headers(shown, settings, "POST", "http://h/mcp")
    assert sent == {"Content-Type": "application/json", "Authorization": "DPoP tok", "DPoP": "proof-1"}
    assert (await real_headers(shown, settings, "POST", "http://h/mcp"))["DPoP"] == "proof-2"
    # a provider without a token: no Authorization is shown
    assert "Authorization" not in shown_headers({}, HttpSettings(auth=Provider(token=False)))


async def test_a_post_that_cannot_reach_the_server_ends_with_why():
    transport = HttpTransport(f"http://127.0.0.1:{http_peers.free_port()}/mcp", HttpSettings(connect_timeout=2))
    sent_frames = []
    transport.on_sent = lambda data, mono, meta=None: sent_frames.append((data, meta))
    await transport.open()
    try:
        raw = await transport.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}', meta={"handmade": 1})
        assert isinstance(raw, RawSent) and raw.stream == "POST#1" and raw.ended is not None
        status, failure = await raw.ended
        assert status is None and "connection refused" in failure
        assert sent_frames[0][1] == {"stream": "POST#1", "handmade": 1}
        odd = await transport.send_raw(b"{}", headers={"X-Name": "Zoë"})
        status, failure = await odd.ended
        assert status is None and failure.startswith("not sent: a header cannot be sent as typed")
    finally:
        transport.on_close = lambda closed: None
        await transport.close()
