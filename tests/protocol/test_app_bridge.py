"""The host side of an MCP App's bridge, as a pure state machine: fed the view's messages and the host's
doings, it says what to post, forward, ask or show. The view's messages below are those the example apps
sent (recorded from @modelcontextprotocol/server-basic-vanillajs and server-debug 2.0.3)."""

from __future__ import annotations

import pytest

from inspector.protocol import app_bridge as B
from inspector.protocol import apps

TOOLS = {"get-time": {"name": "get-time", "_meta": {"ui": {"resourceUri": "ui://get-time/mcp-app.html"}}},
         "debug-refresh": {"name": "debug-refresh", "_meta": {"ui": {"visibility": ["app"]}}},
         "model-only": {"name": "model-only", "_meta": {"ui": {"visibility": ["model"]}}}}
INITIALIZE = {"method": "ui/initialize", "params": {"appCapabilities": {}, "appInfo": {"name": "Get Time App",
              "version": "1.0.0"}, "protocolVersion": "2026-01-26"}, "jsonrpc": "2.0", "id": 0}
INITIALIZED = {"jsonrpc": "2.0", "method": "ui/notifications/initialized"}
CONTEXT = {"theme": "light", "displayMode": "inline", "availableDisplayModes": ["inline", "fullscreen", "pip"],
           "locale": "en-US"}


def bridge(**kw):
    caps = {"openLinks": {}, "serverTools": {}, "serverResources": {}, "logging": {}}
    return B.Bridge(host_info={"name": "spyglass", "version": "0"}, host_capabilities=caps,
                    host_context=dict(CONTEXT), tools=lambda: TOOLS, now=0.0, **kw)


def posts(actions):
    return [a.message for a in actions if isinstance(a, B.Post)]


def notes(actions, kind=None):
    return [a for a in actions if isinstance(a, B.Note) and (kind is None or a.kind == kind)]


def ready(b=None):
    b = b or bridge()
    b.receive(INITIALIZE, 0.0)
    b.receive(INITIALIZED, 0.0)
    return b


def test_initialize_is_answered_with_all_four_fields_the_app_requires():
    b = bridge()
    actions = b.receive(INITIALIZE, 0.0)
    [answer] = posts(actions)
    assert answer["id"] == 0 and set(answer["result"]) == {"protocolVersion", "hostInfo", "hostCapabilities",
                                                           "hostContext"}
    assert answer["result"]["protocolVersion"] == apps.BRIDGE_VERSION
    assert answer["result"]["hostContext"]["theme"] == "light"
    assert notes(actions, "initialize")[0].text == "ui/initialize from Get Time App"
    assert b.state is B.State.INITIALIZING and b.app_info["name"] == "Get Time App"


def test_nothing_but_answers_goes_out_before_initialized_and_then_in_order():
    b = bridge()
    assert b.tool_input_partial({"a": 1}) == [] and b.tool_input_partial({"a": 1, "b": 2}) == []
    assert b.tool_input({"a": 1, "b": 2, "c": 3}) == []
    assert b.tool_result({"content": [{"type": "text", "text": "ok"}]}) == []
    b.receive(INITIALIZE, 0.0)
    assert b.set_context({**CONTEXT, "theme": "dark"}) == []  # held too
    out = b.receive(INITIALIZED, 0.0)
    assert notes(out, "initialized")
    methods = [m["method"] for m in posts(out)]
    assert methods == ["ui/notifications/tool-input-partial", "ui/notifications/tool-input",
                       "ui/notifications/tool-result", "ui/notifications/host-context-changed"]
    assert posts(out)[0]["params"] == {"arguments": {"a": 1, "b": 2}}  # only the latest partial
    assert posts(out)[3]["params"] == {"theme": "dark"}  # only what changed


def test_a_context_set_before_the_handshake_goes_out_whole_in_the_initialize_result():
    b = bridge()
    b.set_context({**CONTEXT, "theme": "dark"})
    [answer] = posts(b.receive(INITIALIZE, 0.0))
    assert answer["result"]["hostContext"]["theme"] == "dark"


def test_tool_input_once_and_before_the_result_partials_stop_after_it():
    b = ready()
    assert b.tool_input_partial({"x": 1})[0].message["method"] == "ui/notifications/tool-input-partial"
    [inp] = posts(b.tool_input({"x": 1, "y": 2}))
    assert inp["params"] == {"arguments": {"x": 1, "y": 2}}
    assert b.tool_input({"x": 9}) == [] and b.tool_input_partial({"x": 3}) == []
    assert posts(b.tool_result({"content": []}))[0]["method"] == "ui/notifications/tool-result"
    assert b.tool_cancelled("late") == []  # one outcome only
    c = ready()
    out = posts(c.tool_cancelled("cancelled by you"))  # an outcome with no input says the input first
    assert [m["method"] for m in out] == ["ui/notifications/tool-input", "ui/notifications/tool-cancelled"]
    assert out[1]["params"] == {"reason": "cancelled by you"}


def test_a_context_change_sends_only_what_changed_and_nothing_when_nothing_did():
    b = ready()
    [change] = posts(b.set_context({**CONTEXT, "theme": "dark", "locale": "fr-FR"}))
    assert change == {"jsonrpc": "2.0", "method": "ui/notifications/host-context-changed",
                      "params": {"theme": "dark", "locale": "fr-FR"}}
    assert b.set_context({**CONTEXT, "theme": "dark", "locale": "fr-FR"}) == []


def test_the_app_calls_its_own_servers_tools_that_are_visible_to_apps():
    b = ready()
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "get-time", "arguments": {}, "_meta": {"progressToken": 1}}}
    [proxy] = b.receive(call, 0.0)
    assert proxy == B.Proxy(1, "tools/call", call["params"])
    [answer] = posts(b.answer(1, {"content": []}))
    assert answer == {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
    assert b.answer(1, {}) == []  # answered once
    for rid, name, why in ((2, "model-only", "not visible to apps"), (3, "delete_everything", "lists no tool")):
        out = b.receive({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name}}, 0.0)
        [error] = posts(out)
        assert error["error"]["code"] == B.REFUSED and why in error["error"]["message"]
        assert why in notes(out, "refused")[0].text
    app_only = b.receive({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "debug-refresh"}},
                         0.0)
    assert isinstance(app_only[0], B.Proxy)


def test_what_the_host_does_not_offer_is_method_not_found():
    b = ready()
    out = b.receive({"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage", "params": {}}, 0.0)
    assert posts(out)[0]["error"]["code"] == B.METHOD_NOT_FOUND and notes(out, "unknown")
    assert posts(b.receive({"jsonrpc": "2.0", "id": 8, "method": "ping"}, 0.0))[0]["result"] == {}
    no_tools = B.Bridge(host_info={}, host_capabilities={}, host_context={}, tools=dict, now=0.0)
    out = no_tools.receive({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "x"}}, 0.0)
    assert posts(out)[0]["error"]["code"] == B.METHOD_NOT_FOUND


def test_messages_and_model_context_are_answered_and_shown():
    b = ready()
    msg = {"jsonrpc": "2.0", "id": 2, "method": "ui/message",
           "params": {"role": "user", "content": [{"type": "text", "text": "This is message text."}]}}
    out = b.receive(msg, 0.0)
    assert posts(out)[0]["result"] == {}
    assert notes(out, "message")[0].data["content"][0]["text"] == "This is message text."
    single = b.receive({**msg, "id": 3, "params": {"role": "user", "content": {"type": "text", "text": "one"}}}, 0.0)
    assert notes(single, "message")[0].data["content"] == [{"type": "text", "text": "one"}]
    ctx = b.receive({"jsonrpc": "2.0", "id": 4, "method": "ui/update-model-context",
                     "params": {"structuredContent": {"n": 1}}}, 0.0)
    assert notes(ctx, "context")[0].data == {"structuredContent": {"n": 1}}
    bad = b.receive({**msg, "id": 5, "params": {"content": "text"}}, 0.0)
    assert posts(bad)[0]["error"]["code"] == B.INVALID_PARAMS


@pytest.mark.parametrize("url, asked", [
    ("https://modelcontextprotocol.io/", True), ("mailto:a@example.com", True), ("javascript:alert(1)", False),
    ("file:///etc/passwd", False), ("https://", False), ("", False), (None, False),
])
def test_a_link_is_asked_about_only_when_it_is_one_a_browser_should_open(url, asked):
    b = ready()
    out = b.receive({"jsonrpc": "2.0", "id": 9, "method": "ui/open-link", "params": {"url": url}}, 0.0)
    if asked:
        assert out == [B.Ask(9, "ui/open-link", {"url": url})]
        [denied] = posts(b.answer(9, error=(B.REFUSED, "Link opening denied by user")))
        assert denied["error"]["message"] == "Link opening denied by user"
    else:
        assert "Invalid URL" in posts(out)[0]["error"]["message"] and notes(out, "refused")


def test_display_modes_follow_what_app_and_host_offer():
    b = bridge()
    b.receive({**INITIALIZE, "params": {**INITIALIZE["params"],
                                        "appCapabilities": {"availableDisplayModes": ["inline", "fullscreen"]}}}, 0.0)
    b.receive(INITIALIZED, 0.0)
    ask = b.receive({"jsonrpc": "2.0", "id": 1, "method": "ui/request-display-mode",
                     "params": {"mode": "fullscreen"}}, 0.0)
    assert ask == [B.Ask(1, "ui/request-display-mode", {"mode": "fullscreen"})]
    pip = b.receive({"jsonrpc": "2.0", "id": 2, "method": "ui/request-display-mode", "params": {"mode": "pip"}}, 0.0)
    assert posts(pip)[0]["result"] == {"mode": "inline"} and notes(pip, "refused")  # the app did not declare it
    same = b.receive({"jsonrpc": "2.0", "id": 3, "method": "ui/request-display-mode", "params": {"mode": "inline"}},
                     0.0)
    assert posts(same)[0]["result"] == {"mode": "inline"}
    odd = b.receive({"jsonrpc": "2.0", "id": 4, "method": "ui/request-display-mode", "params": {"mode": "3d"}}, 0.0)
    assert posts(odd)[0]["error"]["code"] == B.INVALID_PARAMS


def test_notifications_from_the_view_become_notes():
    b = ready()
    size = b.receive({"jsonrpc": "2.0", "method": "ui/notifications/size-changed",
                      "params": {"width": 900, "height": 430}}, 0.0)
    assert notes(size, "size")[0].data == {"width": 900, "height": 430}
    log = b.receive({"jsonrpc": "2.0", "method": "notifications/message",
                     "params": {"level": "info", "data": "This is log text."}}, 0.0)
    assert notes(log, "log")[0].data["data"] == "This is log text."
    assert notes(b.receive({"jsonrpc": "2.0", "method": "ui/notifications/request-teardown"}, 0.0),
                 "teardown-requested")
    assert notes(b.receive({"jsonrpc": "2.0", "method": "x/y"}, 0.0), "unknown")
    assert b.receive({"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"width": "x"}},
                     0.0) == []


def test_a_view_that_gives_up_a_forwarded_request_cancels_it():
    b = ready()
    b.receive({"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "ui://x"}}, 0.0)
    out = b.receive({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}, 0.0)
    assert out == [B.Cancel(5)] and b.answer(5, {}) == []


@pytest.mark.parametrize("message, words", [
    ("hello", "not JSON-RPC 2.0"), ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, "not JSON-RPC 2.0"),
    ({"jsonrpc": "2.0"}, "malformed"), ({"jsonrpc": "2.0", "id": 1, "method": 5}, "method is not a string"),
    ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}, "params is not an object"),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, "id is not a string or an integer"),
    ({"jsonrpc": "2.0", "id": 42, "result": {}}, "did not send"),
])
def test_malformed_messages_are_said_never_raised(message, words):
    out = ready().receive(message, 0.0)
    assert any(words in n.text for n in notes(out))


def test_a_flood_is_cut_to_the_rate_and_the_drops_are_said_once_a_second():
    b = ready(bridge(rate=100, burst=100))
    handled = 0
    said = []
    for i in range(10_000):  # 10,000 messages in one second
        out = b.receive({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": i}}, i / 10_000)
        handled += len(notes(out, "log"))
        said += notes(out, "dropped")
    assert handled <= 200 and b.dropped >= 9_800
    said += notes(b.tick(1.5), "dropped")
    assert 1 <= len(said) <= 2 and "dropped" in said[-1].text
    assert b.tick(1.6) == []


def test_requests_waiting_at_once_are_bounded():
    b = ready()
    for i in range(B.MAX_IN_FLIGHT):
        b.receive({"jsonrpc": "2.0", "id": i, "method": "resources/read", "params": {"uri": "ui://x"}}, 0.0)
    out = b.receive({"jsonrpc": "2.0", "id": "one-more", "method": "resources/read", "params": {"uri": "ui://x"}},
                    0.0)
    assert "too many requests" in posts(out)[0]["error"]["message"] and notes(out, "refused")
    again = b.receive({"jsonrpc": "2.0", "id": 0, "method": "ping"}, 0.0)
    assert posts(again)[0]["error"]["code"] == B.INVALID_REQUEST  # id 0 is still waiting


def test_teardown_is_a_request_its_answer_or_error_closes_and_then_nothing_moves():
    b = ready()
    [request] = posts(b.teardown())
    assert request["method"] == "ui/resource-teardown" and b.state is B.State.CLOSING
    assert b.teardown() == []
    # forwarded requests are still answered while it winds up
    assert isinstance(b.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                 "params": {"name": "get-time"}}, 0.0)[0], B.Proxy)
    assert posts(b.answer(1, {"content": []}))
    closed = b.receive({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not "
                                                                                                    "found"}}, 0.0)
    assert "with an error" in notes(closed, "closed")[0].text and b.closed
    assert b.receive({"jsonrpc": "2.0", "id": 2, "method": "ping"}, 0.0) == []
    assert b.tool_result({}) == [] and b.set_context({"theme": "dark"}) == []
    fine = ready()
    rid = posts(fine.teardown())[0]["id"]
    assert "wound up" in notes(fine.receive({"jsonrpc": "2.0", "id": rid, "result": {}}, 0.0), "closed")[0].text
    slow = ready()
    slow.teardown()
    assert "did not answer" in notes(slow.teardown_timed_out(3.0), "closed")[0].text and slow.closed
    never = bridge()
    assert posts(never.teardown()) == [] and never.closed  # never initialized: nothing may be sent


def test_progress_of_a_forwarded_call_uses_the_views_token():
    b = ready()
    [p] = posts(b.progress(1, 5, 10, "half"))
    assert p["params"] == {"progressToken": 1, "progress": 5, "total": 10, "message": "half"}
    assert bridge().progress(1, 5, None, None) == []
