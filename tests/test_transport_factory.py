"""One way to open a server: the factory picks the transport and applies every option."""

from __future__ import annotations

from inspector.config import ServerSpec
from inspector.transport.factory import TransportOptions, open_transport, transport_kind, uses_oauth
from inspector.transport.http import HttpTransport
from inspector.transport.sse import SseTransport
from inspector.transport.stdio import StdioTransport


def test_a_command_runs_over_stdio_with_the_message_limit():
    opened = open_transport(ServerSpec(name="s", command=["srv", "--x"], env={"A": "1"}, cwd="/tmp"),
                            TransportOptions(max_message=1234))
    t = opened.transport
    assert isinstance(t, StdioTransport) and opened.fallback is None
    assert (t.command, t.env, t.cwd, t.max_message) == (["srv", "--x"], {"A": "1"}, "/tmp", 1234)


def test_a_url_gets_streamable_http_with_an_sse_fallback_sharing_its_settings():
    calls = []
    opened = open_transport(ServerSpec(name="u", url="https://example.com/mcp", headers={"X-Trace": "1"}),
                            TransportOptions(connect_timeout=3.5, insecure=True, auth=lambda: calls.append(1) or "A"))
    assert isinstance(opened.transport, HttpTransport) and opened.fallback is not None
    settings = opened.transport.settings
    assert (settings.connect_timeout, settings.insecure, settings.headers, settings.auth) == (3.5, True,
                                                                                            {"X-Trace": "1"}, "A")
    fallback = opened.fallback()
    assert isinstance(fallback, SseTransport) and fallback.settings is settings and calls == [1]


def test_a_forced_or_sse_looking_transport_has_no_fallback():
    assert open_transport(ServerSpec(name="f", url="http://h/mcp", transport="http")).fallback is None
    sse = open_transport(ServerSpec(name="s", url="http://h/sse"))
    assert isinstance(sse.transport, SseTransport) and sse.fallback is None
    assert transport_kind(ServerSpec(name="s", url="http://h/sse/")) == "sse"
    assert transport_kind(ServerSpec(name="c", command=["x"])) == "stdio"


def test_oauth_stays_off_for_a_server_sent_an_authorization_header_or_a_token():
    asked = []
    options = TransportOptions(auth=lambda: asked.append(1) or "provider")
    with_header = ServerSpec(name="h", url="http://h/mcp", headers={"authorization": "Bearer x"})
    assert not uses_oauth(with_header) and open_transport(with_header, options).transport.settings.auth is None
    token = open_transport(ServerSpec(name="t", url="http://h/mcp"),
                           TransportOptions(auth_token="tok", auth=options.auth)).transport.settings
    assert token.auth is None and token.headers["Authorization"] == "Bearer tok"
    assert asked == []  # the provider is not even made
    assert not uses_oauth(ServerSpec(name="c", command=["x"]))
