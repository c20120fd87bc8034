"""Every 2026-07-28 example message loads through our parser without loss."""

import json

import pytest
from support import SPEC

from inspector.protocol import ClientSession, Malformed, ResponseReceived, parse
from inspector.protocol.session import Mode

EXAMPLES = sorted((SPEC / "2026-07-28" / "examples").glob("*/*.json"))

RESULT_METHODS = {
    "CallToolResult": "tools/call", "ListToolsResult": "tools/list", "ListResourcesResult": "resources/list",
    "ListResourceTemplatesResult": "resources/templates/list", "ReadResourceResult": "resources/read",
    "ListPromptsResult": "prompts/list", "GetPromptResult": "prompts/get", "CompleteResult": "completion/complete",
    "DiscoverResult": "server/discover", "SubscriptionsListenResult": "subscriptions/listen",
}


def test_there_are_examples():
    assert len(EXAMPLES) > 50


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_parses(path):
    raw = path.read_bytes()
    obj = json.loads(raw)
    type_name = path.parent.name
    if isinstance(obj, dict) and "jsonrpc" in obj:
        msg = parse(raw)
        assert not isinstance(msg, Malformed), msg
    elif type_name in RESULT_METHODS:
        s = ClientSession(mode=Mode.parse("modern"))
        probe = json.loads(s.start()[0].data)
        s.receive_frame(json.dumps({"jsonrpc": "2.0", "id": probe["id"], "result": {
            "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}}}).encode())
        rid = json.loads(s.send_request(RESULT_METHODS[type_name], {}).data)["id"]
        events = s.receive_frame(json.dumps({"jsonrpc": "2.0", "id": rid, "result": obj}).encode())
        got = [e for e in events if isinstance(e, ResponseReceived)]
        assert got and got[0].result == obj, events
    else:
        # A fragment (content block, params, capabilities): it must survive a round trip
        # inside a notification's params untouched.
        wrapped = json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"v": obj}}).encode()
        assert parse(wrapped).params["v"] == obj
