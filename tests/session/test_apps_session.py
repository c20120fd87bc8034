"""An MCP App's host side without a window: `AppSession` against real servers (the vanilla example from npm,
our hostile app server), fed the view's messages as the example app sends them. The extension is declared
in both eras; what the view and Spyglass say to each other lands in the traffic as `to-view` / `from-view`."""

from __future__ import annotations

import asyncio
import json

import pytest
from support import app_cmd, hostile_apps_cmd

from inspector.config import ServerSpec
from inspector.protocol import apps
from inspector.protocol.app_bridge import Ask, Note
from inspector.session import ServerSession, SessionOptions
from inspector.session.apps import AppSession, HostSettings, host_capabilities, host_context, read_document
from inspector.traffic.frame import Frame


class View:
    """What the window would be: the posts to the view, the notes and the asks."""

    def __init__(self) -> None:
        self.posted: list[dict] = []
        self.notes: list[Note] = []
        self.asks: list[Ask] = []

    def post(self, text: str) -> None:
        self.posted.append(json.loads(text))

    def answer_to(self, rid):
        return next((m for m in self.posted if m.get("id") == rid and ("result" in m or "error" in m)), None)


async def until(predicate, timeout=15.0):
    end = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > end:
            raise AssertionError("timed out")
        await asyncio.sleep(0.02)


async def opened(command, frames):
    session = ServerSession(ServerSpec(name="apps", command=command), options=SessionOptions(mode="legacy"),
                            traffic=frames.append)
    await session.open()
    return session


def app_session(session, tool, document, view):
    context = host_context(HostSettings(), block_width=800, tool=tool, call_id=7)
    return AppSession(session, tool, "v1", context, document=document, post=view.post,
                      on_note=view.notes.append, on_ask=view.asks.append)


def send(app, message):
    app.from_view(json.dumps(message))


INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "ui/initialize",
              "params": {"appInfo": {"name": "Get Time App", "version": "1.0.0"}, "appCapabilities": {},
                         "protocolVersion": "2026-01-26"}}


async def test_the_extension_is_declared_in_both_eras():
    from inspector.client.core import EXTENSIONS
    from inspector.protocol.session import ClientSession, Mode

    assert EXTENSIONS["io.modelcontextprotocol/ui"] == {"mimeTypes": ["text/html;profile=mcp-app"]}
    assert set(EXTENSIONS) == {"io.modelcontextprotocol/ui", "io.modelcontextprotocol/skills"}
    frames: list[Frame] = []
    session = await opened(app_cmd("basic-vanillajs"), frames)
    try:
        init = next(json.loads(f.data) for f in frames if f.direction == "out" and b'"initialize"' in f.data)
        assert init["params"]["capabilities"]["extensions"] == EXTENSIONS
    finally:
        await session.disconnect()
    modern = ClientSession(mode=Mode.parse("modern"), capabilities={"extensions": EXTENSIONS})
    [probe] = modern.start()
    meta = json.loads(probe.data)["params"]["_meta"]
    assert meta["io.modelcontextprotocol/clientCapabilities"]["extensions"] == EXTENSIONS


async def test_a_vanilla_app_session_from_handshake_to_teardown():
    frames: list[Frame] = []
    session = await opened(app_cmd("basic-vanillajs"), frames)
    view = View()
    try:
        tool = session.tools.items[0]
        assert apps.tool_ui(tool).resource_uri == "ui://get-time/mcp-app.html"
        document = await read_document(session, "ui://get-time/mcp-app.html")
        assert document.csp == apps.DEFAULT_CSP and document.size > 100_000
        app = app_session(session, tool, document, view)
        app.tool_input({})
        result = await session.need_client().call_tool("get-time", {})
        app.tool_result(result)
        assert view.posted == []  # nothing before the handshake
        send(app, INITIALIZE)
        answer = view.answer_to(0)["result"]
        assert answer["hostContext"]["toolInfo"]["id"] == 7 and answer["hostCapabilities"]["serverTools"] == {}
        send(app, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
        assert [m["method"] for m in view.posted[1:]] == ["ui/notifications/tool-input",
                                                          "ui/notifications/tool-result"]
        # a proxied call goes to the server, its answer comes back under the view's id
        send(app, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "get-time", "arguments": {}, "_meta": {"progressToken": 1}}})
        await until(lambda: view.answer_to(1) is not None)
        assert view.answer_to(1)["result"]["structuredContent"]["time"]
        send(app, {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "ui://nope"}})
        await until(lambda: view.answer_to(2) is not None)
        assert "error" in view.answer_to(2)  # the server's own error, passed on
        send(app, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        await until(lambda: view.answer_to(3) is not None)
        assert [t["name"] for t in view.answer_to(3)["result"]["tools"]] == ["get-time"]
        # the app's log line is the server's, said as the app's
        send(app, {"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "info", "data": "This is log text."}})
        assert any(e.text == "This is log text." and e.logger == "app Get Time App" for e in session.log)
        # the context: only what changed
        app.set_context(host_context(HostSettings(theme="dark"), block_width=800, tool=tool, call_id=7))
        assert view.posted[-1]["params"] == {"theme": "dark"}
        # every message, both ways, in the traffic
        directions = [f.direction for f in frames if f.meta and f.meta.get("view") == "v1"]
        assert directions.count("from-view") == 6 and directions.count("to-view") >= 7
        # teardown: the app answers, the session closes
        closing = asyncio.ensure_future(app.close())
        await until(lambda: any(m.get("method") == "ui/resource-teardown" for m in view.posted))
        teardown = next(m for m in view.posted if m.get("method") == "ui/resource-teardown")
        send(app, {"jsonrpc": "2.0", "id": teardown["id"], "result": {}})
        assert await closing == "the app wound up (ui/resource-teardown answered)"
        send(app, {"jsonrpc": "2.0", "id": 9, "method": "ping"})
        assert view.answer_to(9) is None  # closed: nothing more
    finally:
        await session.disconnect()


async def test_an_app_that_stays_silent_or_never_answers_its_teardown_is_said(expect_log):
    expect_log("spyglass.session", "never started its bridge")
    frames: list[Frame] = []
    session = await opened(hostile_apps_cmd(), frames)
    view = View()
    try:
        tools = {t["name"]: t for t in session.tools.items}
        document = await read_document(session, "ui://hostile/silent.html")
        app = app_session(session, tools["silent"], document, view)
        app.init_timeout = 0.2
        app.loaded()
        await until(lambda: app.problem is not None)
        assert "no ui/initialize within 0.2 s" in app.problem and view.notes[-1].kind == "problem"
        assert await app.close() == "closed before the app initialized: no teardown sent"
        # an app that initialized but never answers its teardown is closed after the timeout
        late = app_session(session, tools["fetch"], await read_document(session, "ui://hostile/fetch.html"), view)
        late.teardown_timeout = 0.2
        send(late, INITIALIZE)
        send(late, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
        assert "did not answer ui/resource-teardown within 0.2 s" in await late.close()
        # refusals: another server's tool, a link, oversize and broken messages
        other = app_session(session, tools["other-tool"], document, view)
        send(other, INITIALIZE)
        send(other, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
        send(other, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}})
        assert "lists no tool named 'echo'" in view.answer_to(1)["error"]["message"]
        assert any("lists no tool" in r for r in other.refused)
        send(other, {"jsonrpc": "2.0", "id": 2, "method": "ui/open-link", "params": {"url": "https://example.com/"}})
        assert view.asks[-1] == Ask(2, "ui/open-link", {"url": "https://example.com/"})
        other.answer(2, error=(-32000, "Link opening denied by user"))
        assert view.answer_to(2)["error"]["message"] == "Link opening denied by user"
        other.from_view("x" * (5 * 1024 * 1024))
        other.from_view("{not json")
        assert any("was dropped" in r for r in other.refused)
        assert any(f.malformed and "not JSON" in f.malformed for f in frames)
        other.dropped_by_view(40)
        assert view.notes[-1].kind == "dropped" and "40 dropped" in view.notes[-1].text
        other.stop()
        assert other.closed and await other.close() == "stopped"
    finally:
        await session.disconnect()


@pytest.mark.parametrize("uri, title", [("ui://hostile/missing.html", "could not be read"),
                                        ("ui://hostile/not-html.html", "Not an MCP App")])
async def test_a_bad_resource_is_a_problem_in_words(uri, title):
    session = await opened(hostile_apps_cmd(), [])
    try:
        with pytest.raises(apps.AppProblem) as caught:
            await read_document(session, uri)
        assert title in caught.value.title
    finally:
        await session.disconnect()
    with pytest.raises(apps.AppProblem, match="not connected"):
        await read_document(session, uri)


def test_host_capabilities_say_what_was_granted():
    caps = host_capabilities(granted=("camera",), csp=apps.csp_domains({"connectDomains": ["https://a.example"]}))
    assert caps["sandbox"] == {"permissions": {"camera": {}}, "csp": {"connectDomains": ["https://a.example"]}}
    assert {"openLinks", "downloadFile", "logging", "message", "updateModelContext", "serverTools",
            "serverResources"} <= set(caps)
    phone = HostSettings(container="phone").dimensions(1000)
    assert phone == {"width": 390, "maxHeight": 844}
    assert HostSettings(container="custom", width=500, height=300).dimensions(1000) == {"width": 500, "height": 300}
    ctx = host_context(HostSettings(styles={"--font-sans": "x"}, fonts="@import x"), block_width=640)
    assert ctx["styles"] == {"variables": {"--font-sans": "x"}, "css": {"fonts": "@import x"}}
    assert ctx["containerDimensions"] == {"width": 640, "maxHeight": 900} and "toolInfo" not in ctx
