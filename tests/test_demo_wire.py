"""The built-in demo server on the wire: raw JSON-RPC lines written to its stdin, its stdout read back.

Malformed input, batches, ids, both protocol eras and their rules, every argument check of the tools,
server requests the client answers badly, listen streams, and how it ends. `test_demo_server.py`
drives it through our own client; this file writes what no well-behaved client would.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import queue
import signal
import subprocess
import threading
import time

import pytest
from support import ROOT, demo_cmd, spec_validator

from inspector.demo.jsonrpc import JsonRpcPeer

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN}
SUB_ID = "io.modelcontextprotocol/subscriptionId"
WAIT_S = 20  # per message: coverage and a loaded machine slow the server down a lot
DEMO_ENV = {"SPYGLASS_DEMO_LOG": "INFO", "SPYGLASS_DEMO_PAGE_SIZE": ""}  # its log is read; one page


class Wire:
    """One demo server process: lines in, parsed lines out (anything else on stdout fails the test)."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(demo_cmd(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env={**os.environ, **DEMO_ENV, **(env or {})},
                                     cwd=str(ROOT))
        self.inbox: queue.Queue = queue.Queue()
        self.stderr: list[str] = []
        self.seen: list[dict] = []  # notifications and server requests met while waiting for a response
        self._ids = iter(range(1, 1_000_000))
        self._readers = [threading.Thread(target=self._read_out, daemon=True),
                         threading.Thread(target=self._read_err, daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read_out(self) -> None:
        for line in self.proc.stdout:
            try:
                self.inbox.put(json.loads(line))
            except ValueError:
                self.inbox.put(AssertionError(f"the demo server wrote a line that is not JSON: {line!r}"))
        self.inbox.put(EOFError("stdout closed"))

    def _read_err(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    def raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message) -> None:
        self.raw(json.dumps(message).encode() + b"\n")

    def next(self, timeout: float = WAIT_S):
        try:
            item = self.inbox.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"the demo server sent nothing within {timeout} s")
        if isinstance(item, EOFError):
            pytest.fail(f"the demo server closed its output; stderr:\n{''.join(self.stderr)[-2000:]}")
        if isinstance(item, Exception):
            pytest.fail(str(item))
        return item

    def nothing_for(self, seconds: float) -> None:
        try:
            item = self.inbox.get(timeout=seconds)
        except queue.Empty:
            return
        pytest.fail(f"expected silence, got {item}")

    def until(self, test, what: str = "a message"):
        """The next message that passes `test`; the ones before it are kept in `seen`."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            message = self.next(max(0.01, deadline - time.monotonic()))
            if test(message):
                return message
            self.seen.append(message)
        pytest.fail(f"no {what} within {WAIT_S} s; saw {self.seen[-5:]}")

    def start(self, method: str, params: dict | None = None, *, modern: bool = False, id=None):
        """Send a request without waiting; returns its id."""
        request_id = next(self._ids) if id is None else id
        if modern:
            params = {**(params or {}), "_meta": {**META, **(params or {}).get("_meta", {})}}
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def response(self, request_id) -> dict:
        return self.until(lambda m: isinstance(m, dict) and m.get("id") == request_id
                          and type(m.get("id")) is type(request_id) and ("result" in m or "error" in m),
                          f"response to {request_id!r}")

    def request(self, method: str, params: dict | None = None, *, modern: bool = False, id=None) -> dict:
        return self.response(self.start(method, params, modern=modern, id=id))

    def result(self, method: str, params: dict | None = None, *, modern: bool = False):
        answer = self.request(method, params, modern=modern)
        assert "result" in answer, answer
        return answer["result"]

    def error(self, method: str, params: dict | None = None, *, modern: bool = False) -> dict:
        answer = self.request(method, params, modern=modern)
        assert "error" in answer, answer
        return answer["error"]

    def notify(self, method: str, params: dict | None = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})

    def call(self, name: str, arguments=None, *, modern: bool = True, **params):
        return self.result("tools/call", {"name": name, "arguments": arguments or {}, **params}, modern=modern)

    def initialize(self, version: str = "2025-11-25", capabilities=None) -> dict:
        result = self.result("initialize", {"protocolVersion": version, "capabilities": capabilities or {},
                                            "clientInfo": {"name": "test_demo_wire", "version": "0"}})
        self.notify("notifications/initialized")
        return result

    def close(self, timeout: float = 15) -> int:
        """Close stdin, as a client does, and wait for the server to end by itself."""
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"the demo server did not end within {timeout} s of its stdin closing")
        for reader in self._readers:
            reader.join(5)
        return code

    @property
    def log(self) -> str:
        return "".join(self.stderr)


@pytest.fixture
def wire():
    started: list[Wire] = []

    def start(**env: str) -> Wire:
        started.append(Wire(env))
        return started[-1]

    yield start
    for w in started:
        if w.proc.poll() is None:
            w.close()


def text_of(result: dict) -> str:
    return "\n".join(b["text"] for b in result["content"] if b.get("type") == "text")


# --- lines that are not requests ----------------------------------------------------------------

NOT_REQUESTS = [
    # (line, id of the error, code, words of the message)
    (b"{bad json", None, -32700, "Parse error: Expecting property name"),
    (b"[]", None, -32600, "Invalid Request: empty batch"),
    (b"42", None, -32600, "Invalid Request: expected a JSON object"),
    (b'"ping"', None, -32600, "Invalid Request: expected a JSON object"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', 1, -32600, "method must be a string"),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', None, -32600, "id must be a string or integer"),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', None, -32600, "id must be a string or integer"),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', None, -32600, "id must be a string or integer"),
    (b'{"jsonrpc": "2.0", "id": 5}', 5, -32600, "not a request, notification or response"),
    (b'{"jsonrpc": "2.0", "id": "p", "method": "ping", "params": [1, 2]}', "p", -32602, "params must be an object"),
    (b'{"jsonrpc": "2.0", "id": "p", "method": "ping", "params": "x"}', "p", -32602, "params must be an object"),
    (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/destroy"}', 7, -32601, "Method not found: tools/destroy"),
]


def test_lines_that_are_not_requests_get_the_errors_json_rpc_prescribes(wire):
    w = wire()
    for line, reply_to, code, words in NOT_REQUESTS:
        w.raw(line + b"\n")
        answer = w.next()
        assert answer["id"] == reply_to and answer["error"]["code"] == code, (line, answer)
        assert words in answer["error"]["message"], (line, answer)
    assert w.result("ping") == {}  # none of it hurt the server


def test_blank_lines_and_notifications_get_no_answer(wire):
    w = wire()
    w.raw(b"\n   \r\n\t\n")
    w.notify("notifications/nobody-knows-this")
    w.notify("notifications/cancelled", {"requestId": "never-sent"})
    w.notify("notifications/cancelled", {"requestId": [1]})
    w.send({"jsonrpc": "2.0", "method": "notifications/initialized", "params": "not an object"})
    w.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    assert w.next() == {"jsonrpc": "2.0", "id": "after", "result": {}}


def test_a_batch_is_answered_with_one_array_of_the_replies(wire):
    w = wire()
    w.send([{"jsonrpc": "2.0", "id": "b1", "method": "ping"}, 5,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "b2", "method": "tools/list"}])
    replies = w.next()
    assert isinstance(replies, list) and len(replies) == 3  # the notification gets no reply
    by_id = {r["id"]: r for r in replies}
    assert by_id["b1"] == {"jsonrpc": "2.0", "id": "b1", "result": {}}
    assert by_id[None]["error"] == {"code": -32600, "message": "Invalid Request: expected a JSON object"}
    assert by_id["b2"]["error"]["code"] == -32600 and "Server not initialized" in by_id["b2"]["error"]["message"]
    # notifications only: nothing comes back, not even an empty array
    w.send([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
    assert w.request("ping", id="after")["result"] == {}


def test_a_cancelled_request_of_a_batch_is_left_out_of_its_reply(wire):
    w = wire()
    w.send([{"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
             "params": {"name": "long_task", "arguments": {"steps": 50, "step_ms": 100}, "_meta": META}},
            {"jsonrpc": "2.0", "id": "quick", "method": "ping"}])
    w.notify("notifications/cancelled", {"requestId": "slow", "reason": "changed my mind"})
    assert w.next() == [{"jsonrpc": "2.0", "id": "quick", "result": {}}]


def test_request_ids_in_flight_are_unique_but_1_and_quoted_1_differ(wire):
    w = wire()
    w.start("tools/call", {"name": "long_task", "arguments": {"steps": 50, "step_ms": 100}}, modern=True, id=1)
    again = w.request("ping", id=1)
    assert again["error"] == {"code": -32600, "message": "Invalid Request: request id 1 is already in use"}
    assert w.request("ping", id="1") == {"jsonrpc": "2.0", "id": "1", "result": {}}
    w.notify("notifications/cancelled", {"requestId": 1})
    # the cancelled call never answers; its id is free again once it has stopped
    deadline = time.monotonic() + WAIT_S
    while (answer := w.request("ping", id=1)).get("error") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert answer == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert not [m for m in w.seen if m.get("id") == 1 and "result" in m and m["result"].get("content")]
    assert w.close() == 0
    assert "cancelled request 1 (no reason given)" in w.log


# --- the two eras ---------------------------------------------------------------------------------

def test_requests_outside_a_session_and_the_rules_of_each_era(wire):
    w = wire()
    assert w.result("ping") == {}  # ping needs no session
    refused = w.error("tools/list")
    assert refused["code"] == -32600 and "send 'initialize' first" in refused["message"]
    for asked, shown in [("1999-01-01", "1999-01-01"), (["x"], '["x"]')]:
        error = w.error("ping", {"_meta": {"io.modelcontextprotocol/protocolVersion": asked}})
        assert error["code"] == -32022 and error["message"] == "Unsupported protocol version"
        assert error["data"] == {"supported": [MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
                                 "requested": shown}
    for method, hint in [("logging/setLevel", "set _meta io.modelcontextprotocol/logLevel"),
                         ("resources/subscribe", "use subscriptions/listen"),
                         ("resources/unsubscribe", "cancel the subscriptions/listen request")]:
        error = w.error(method, {"uri": "demo://live/clock", "level": "info"}, modern=True)
        assert error["code"] == -32601 and error["message"].startswith(f"{method} does not exist in {MODERN}")
        assert hint in error["message"]
    error = w.error("subscriptions/listen", {"notifications": {}})
    assert error == {"code": -32601, "message": f"subscriptions/listen needs protocol {MODERN}"}
    # server/discover is modern without saying so; its result carries the server's identity
    discovered = w.result("server/discover")
    assert discovered["supportedVersions"][0] == MODERN and discovered["resultType"] == "complete"
    assert discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "spyglass-demo"


def test_initialize_settles_on_a_version_it_knows(wire):
    w = wire()
    hello = w.result("initialize", {"protocolVersion": "2099-01-01", "capabilities": "none", "clientInfo": 5})
    assert hello["protocolVersion"] == "2025-11-25" and hello["serverInfo"]["name"] == "spyglass-demo"
    old = w.initialize("2024-11-05")
    assert old["protocolVersion"] == "2024-11-05"
    assert "completions" not in old["capabilities"] and "title" not in old["serverInfo"]  # down-levelled
    spec_validator("2024-11-05", "InitializeResult").validate(old)


def test_legacy_log_level_and_resource_subscriptions(wire):
    w = wire()
    w.initialize("2025-03-26")
    error = w.error("logging/setLevel", {"level": "loud"})
    assert error["code"] == -32602 and error["message"].startswith("Unknown log level 'loud'; use one of debug, info")
    assert w.result("logging/setLevel", {"level": "warning"}) == {}
    done = w.call("log_demo", modern=False)
    assert text_of(done) == ("Sent 5 of 8 messages (level warning and above): "
                             "warning, error, critical, alert, emergency.")
    logged = [m["params"] for m in w.seen if m.get("method") == "notifications/message"]
    assert [p["level"] for p in logged] == ["warning", "error", "critical", "alert", "emergency"]
    assert logged[1]["data"] == {"message": "This is an error message", "code": 42, "retryable": False}
    missing = w.error("resources/subscribe", {"uri": "demo://nowhere"})
    assert missing == {"code": -32002, "message": "Resource not found", "data": {"uri": "demo://nowhere"}}
    assert w.error("resources/subscribe", {"uri": 5}) == {"code": -32602, "message": "params.uri must be a string"}
    assert w.result("resources/subscribe", {"uri": "demo://notes/ideas"}) == {}
    assert w.result("resources/unsubscribe", {"uri": "demo://notes/ideas"}) == {}
    assert w.result("resources/unsubscribe", {"uri": "demo://never-subscribed"}) == {}


def test_modern_log_level_comes_with_each_request(wire):
    w = wire()
    silent = w.call("log_demo")
    assert text_of(silent) == "No log messages sent: this request did not set _meta io.modelcontextprotocol/logLevel."
    loud = w.call("log_demo", _meta={"io.modelcontextprotocol/logLevel": "critical"})
    assert text_of(loud) == "Sent 3 of 8 messages (level critical and above): critical, alert, emergency."
    bogus = w.call("log_demo", _meta={"io.modelcontextprotocol/logLevel": "shouty"})
    assert text_of(bogus).startswith("No log messages sent")


# --- tools ----------------------------------------------------------------------------------------

def test_tools_call_params_are_checked(wire):
    w = wire()
    assert w.error("tools/call", {"name": 5}, modern=True) == {"code": -32602,
                                                                  "message": "params.name must be a string"}
    assert w.error("tools/call", {"name": "bonus"}, modern=True) == {"code": -32602,
                                                                        "message": "Unknown tool: bonus"}
    assert w.error("tools/call", {"name": "echo", "arguments": [1]}, modern=True) == {
        "code": -32602, "message": "params.arguments must be an object"}


ARGUMENT_ERRORS = [
    # (tool, arguments, the isError text)
    ("echo", {}, "'message' is required"),
    ("echo", {"message": 5}, "'message' must be a string"),
    ("markdown_report", {"topic": "cats"}, "'topic' must be one of: mcp, json-rpc, spyglass"),
    ("weather", {"city": ""}, "'city' must be 1..any characters long"),
    ("create_event", {"title": "x" * 81, "when": "2030-01-31T09:30:00Z"}, "'title' must be 1..80 characters long"),
    ("delete_item", {"id": "Not OK!"}, "'id' must match [a-z0-9-]+"),
    ("delete_item", {"id": "alpha", "confirm": "yes"}, "'confirm' must be true or false"),
    ("play_tone", {"frequency": "high"}, "'frequency' must be a finite number"),
    ("play_tone", {"frequency": 10}, "'frequency' must be between 50 and 2000"),
    ("long_task", {"steps": 1.5}, "'steps' must be an integer"),
    ("render_chart", {"values": []}, "'values' must be an array of 1 to 12 numbers"),
    ("render_chart", {"values": [1, "two"]}, "'values' must contain only finite numbers"),
    ("create_event", {"title": "Stand-up", "when": "yesterday"},
     "'when' must be an RFC 3339 date-time such as 2030-01-31T09:30:00Z"),
    ("create_event", {"title": "Stand-up", "when": "2030-01-31T09:30:00Z", "priority": "urgent"},
     "'priority' must be low, normal, high or null"),
    ("create_event", {"title": "Stand-up", "when": "2030-01-31T09:30:00Z", "duration_minutes": 7},
     "'duration_minutes' must be a multiple of 5"),
    ("create_event", {"title": "Stand-up", "when": "2030-01-31T09:30:00Z", "attendees": [5]},
     "each attendee must be an object with name and email"),
    ("create_event", {"title": "Stand-up", "when": "2030-01-31T09:30:00Z",
                      "attendees": [{"name": "Ada", "email": "ada-at-example"}]},
     "'ada-at-example' is not an email address"),
    ("create_event", {"title": "Stand-up", "when": "2030-01-31T09:30:00Z", "reminder": {"sms": "+31"}},
     "'reminder' must have either 'email' or 'minutes_before'"),
    # not an array: once a JSON-RPC internal error (-32603, "'int' object is not iterable") with a traceback
    ("create_event", {"title": "Stand-up", "when": "2030-01-31T09:30:00Z", "attendees": 5},
     "'attendees' must be an array of objects with name and email"),
]


def test_bad_tool_arguments_are_tool_errors_that_name_the_argument(wire):
    w = wire()
    for name, arguments, words in ARGUMENT_ERRORS:
        result = w.call(name, arguments)
        assert result.get("isError") is True, (name, arguments, result)
        assert text_of(result) == f"Invalid arguments for {name}: {words}", (name, arguments)
    assert "Traceback" not in w.log


def test_the_behaviour_tools_do_what_they_say(wire):
    w = wire()
    assert text_of(w.call("delete_item", {"id": "beta"})) == (
        "Dry run: would delete 'beta'. Call again with confirm=true to delete it.")
    assert text_of(w.call("delete_item", {"id": "beta", "confirm": True})) == (
        "Deleted 'beta'. Remaining: alpha, gamma, old-report, tmp-42.")
    assert text_of(w.call("delete_item", {"id": "beta", "confirm": True})) == "'beta' is already gone, nothing to do."
    event = text_of(w.call("create_event", {"title": "Launch", "when": "2030-01-31T09:30:00Z", "all_day": True,
                                            "priority": None, "reminder": {"email": "ada@example.org"}}))
    assert event.splitlines() == ['Created event "Launch"', "- When: Thursday 31 January 2030",
                                  "- Priority: none", "- Reminder: email to ada@example.org"]
    assert w.error("tools/call", {"name": "bonus"}, modern=True)["message"] == "Unknown tool: bonus"
    toggled = w.call("toggle_bonus_tool")
    assert text_of(toggled).startswith("The 'bonus' tool was added; subscribers to subscriptions/listen were")
    assert "bonus" in [t["name"] for t in w.result("tools/list", modern=True)["tools"]]
    assert text_of(w.call("bonus")) == "You found the bonus tool. Well done!"
    assert text_of(w.call("toggle_bonus_tool")).startswith("The 'bonus' tool was removed")


def test_a_result_utf8_cannot_carry_is_an_error_not_silence(wire):
    """A lone surrogate is valid JSON input but cannot be written as UTF-8. The server used to take the
    failed write for a closed output: no answer ever came, and it logged "output is closed"."""
    w = wire()
    w.raw(b'{"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": {"name": "echo", '
          b'"arguments": {"message": "\\ud800"}, '
          b'"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}\n')
    assert w.next() == {"jsonrpc": "2.0", "id": "s",
                        "error": {"code": -32603, "message": "Result was not valid JSON"}}
    assert text_of(w.call("echo", {"message": "still here"})) == "still here"
    assert w.close() == 0
    assert "could not encode an outgoing message" in w.log and "output is closed" not in w.log


def test_pages_and_cursors(wire):
    w = wire(SPYGLASS_DEMO_PAGE_SIZE="4")
    w.initialize()
    first = w.result("tools/list")
    assert len(first["tools"]) == 4 and first["nextCursor"]
    second = w.result("tools/list", {"cursor": first["nextCursor"]})
    assert second["tools"][0]["name"] != first["tools"][0]["name"]
    beyond = base64.urlsafe_b64encode(json.dumps({"offset": 999}).encode()).decode()
    for cursor in ["not-a-cursor", beyond, 5, base64.urlsafe_b64encode(b'{"page": 2}').decode()]:
        assert w.error("tools/list", {"cursor": cursor}) == {"code": -32602, "message": "Invalid cursor"}, cursor


def test_bad_environment_settings_are_ignored_with_a_warning(wire):
    w = wire(SPYGLASS_DEMO_PAGE_SIZE="lots", SPYGLASS_DEMO_LOG="chatty")
    w.initialize()
    listed = w.result("tools/list")
    assert "nextCursor" not in listed and len(listed["tools"]) >= 15
    assert w.close() == 0
    assert "WARNING ignoring SPYGLASS_DEMO_PAGE_SIZE='lots' (want a positive integer)" in w.log
    assert "INFO spyglass-demo" in w.log and "ready on stdio" in w.log  # an unknown level means INFO


# --- prompts, resources, completion ---------------------------------------------------------------

def test_prompts_and_their_argument_checks(wire):
    w = wire()
    w.initialize("2025-06-18")
    for params, message in [
        ({"name": 5}, "params.name must be a string"),
        ({"name": "limerick"}, "Unknown prompt: limerick"),
        ({"name": "greeting", "arguments": {"name": 5}}, "Prompt arguments must be an object of strings"),
        ({"name": "greeting", "arguments": {"style": "formal"}}, "Missing required argument(s) for greeting: name"),
        ({"name": "greeting", "arguments": {"name": "Ada", "style": "rap"}},
         "Unknown style 'rap'; use one of formal, casual, pirate"),
    ]:
        assert w.error("prompts/get", params) == {"code": -32602, "message": message}, params
    review = w.result("prompts/get", {"name": "code_review", "arguments": {"code": "print(1)"}})
    spec_validator("2025-06-18", "GetPromptResult").validate(review)
    assert review["description"] == "Review of a python snippet"
    assert "```python\nprint(1)\n```" in review["messages"][0]["content"]["text"]
    assert review["messages"][1]["content"]["resource"]["uri"] == "demo://docs/style-guide.md"
    casual = w.result("prompts/get", {"name": "greeting", "arguments": {"name": "Ada"}})
    assert casual["messages"][1]["content"]["text"] == "Hey Ada! Great to see you."


def test_resources_and_the_note_template(wire):
    w = wire()
    w.initialize()
    templates = w.result("resources/templates/list")["resourceTemplates"]
    assert templates[0]["uriTemplate"] == "demo://notes/{note_id}"
    note = w.result("resources/read", {"uri": "demo://notes/groceries"})
    assert note["contents"] == [{"uri": "demo://notes/groceries", "mimeType": "text/markdown",
                                 "text": "# Groceries\n\n- oat milk\n- sourdough\n- 6 eggs\n- basil"}]
    for uri in ["demo://notes/nope", "demo://notes/", "file:///etc/passwd"]:
        assert w.error("resources/read", {"uri": uri}) == {"code": -32002, "message": "Resource not found",
                                                           "data": {"uri": uri}}
    assert w.error("resources/read", {})["message"] == "params.uri must be a string"


COMPLETIONS = [
    # (ref, argument, values)
    ({"type": "ref/prompt", "name": "code_review"}, {"name": "language", "value": "Sc"}, ["scala"]),
    ({"type": "ref/prompt", "name": "greeting"}, {"name": "name", "value": "A"}, []),
    ({"type": "ref/resource", "uri": "demo://notes/{note_id}"}, {"name": "note_id", "value": "re"},
     ["reading-list", "recipes", "release-plan"]),
    ({"type": "ref/resource", "uri": "demo://notes/{note_id}"}, {"name": "other", "value": ""}, []),
]


def test_completion_of_prompt_and_template_arguments(wire):
    w = wire()
    w.initialize()
    for ref, argument, values in COMPLETIONS:
        completion = w.result("completion/complete", {"ref": ref, "argument": argument})["completion"]
        assert completion == {"values": values, "total": len(values), "hasMore": False}, (ref, argument)
    for params, message in [
        ({"ref": "prompt:greeting", "argument": {}}, "params.ref and params.argument must be objects"),
        ({"ref": {"type": "ref/tool", "name": "echo"}, "argument": {"name": "x", "value": ""}},
         "Unknown completion reference type 'ref/tool'"),
        ({"ref": {"type": "ref/prompt", "name": "limerick"}, "argument": {"name": "x", "value": ""}},
         "Nothing to complete for limerick"),
        ({"ref": {"type": "ref/resource", "uri": "demo://other/{x}"}, "argument": {"name": "x", "value": ""}},
         "Nothing to complete for demo://other/{x}"),
    ]:
        assert w.error("completion/complete", params) == {"code": -32602, "message": message}, params


# --- questions to the client ----------------------------------------------------------------------

def test_legacy_elicitation_answered_badly_or_not_at_all(wire):
    w = wire()
    w.initialize("2025-06-18")  # no elicitation capability declared
    refused = w.call("ask_user", modern=False)
    assert refused["isError"] is True and "did not declare the 'elicitation' capability" in text_of(refused)
    w.initialize("2025-06-18", {"elicitation": {}})

    def asked(call_id):
        question = w.until(lambda m: m.get("method") == "elicitation/create", "elicitation request")
        assert question["id"].startswith("srv-") and question["params"]["requestedSchema"]["required"] == ["name"]
        return question["id"]

    for answer, words in [
        ({"result": {"action": "cancel"}}, "The question was dismissed without an answer."),
        ({"result": {"action": "maybe"}}, "The elicitation answer was not understood (expected an action)."),
        ({"result": {"action": "accept", "content": "Ada"}}, "Nice to meet you, mystery guest!"),
        ({"error": {"code": -1, "message": "the user closed the dialog"}},
         "The client could not ask the question: the user closed the dialog (code -1)"),
        ({"error": "not an object"}, "The client could not ask the question: error (code None)"),
    ]:
        call_id = w.start("tools/call", {"name": "ask_user", "arguments": {}})
        w.send({"jsonrpc": "2.0", "id": asked(call_id), **answer})
        assert text_of(w.response(call_id)["result"]) == words, answer
    # the client gives up on the call while the server waits for its answer: the server withdraws its question
    call_id = w.start("tools/call", {"name": "ask_user", "arguments": {}})
    question_id = asked(call_id)
    w.notify("notifications/cancelled", {"requestId": call_id})
    withdrawn = w.until(lambda m: m.get("method") == "notifications/cancelled", "cancellation")
    assert withdrawn["params"] == {"requestId": question_id, "reason": "The tool call that asked was cancelled"}
    # an answer that comes too late, and one to a question never asked, are ignored
    w.send({"jsonrpc": "2.0", "id": question_id, "result": {"action": "decline"}})
    w.send({"jsonrpc": "2.0", "id": 99, "result": {}})
    assert w.result("ping") == {}
    assert not [m for m in w.seen if m.get("id") == call_id]
    assert w.close() == 0
    assert f"response for unknown request '{question_id}' ignored" in w.log
    assert "response for unknown request 99 ignored" in w.log


def test_a_question_that_cannot_be_sent_ends_the_call_instead_of_waiting_forever(wire):
    w = wire()
    w.initialize(capabilities={"elicitation": {"form": {}}})
    w.raw(b'{"jsonrpc": "2.0", "id": "q", "method": "tools/call", "params": {"name": "ask_user", '
          b'"arguments": {"question": "who are you \\udc00"}}}\n')
    result = w.response("q")["result"]
    assert result["isError"] is True
    assert text_of(result) == ("The client could not ask the question: "
                               "elicitation/create could not be sent (see the log)")


def test_modern_elicitation_travels_in_sealed_request_state(wire):
    w = wire()
    first = w.call("ask_user", {"question": "Who goes there?"})
    spec_validator(MODERN, "InputRequiredResult").validate(first)
    asked = first["inputRequests"]["profile"]
    assert asked["method"] == "elicitation/create" and asked["params"]["message"] == "Who goes there?"
    assert asked["params"]["mode"] == "form"
    state = first["requestState"]
    for responses, words in [({"profile": {"action": "accept", "content": {"name": "Ada", "colour": "blue"}}},
                              "Nice to meet you, Ada! Blue is a great colour."),
                             ({"profile": {"action": "decline"}}, "You declined to answer. No problem!")]:
        done = w.call("ask_user", requestState=state, inputResponses=responses)
        assert text_of(done) == words
    # no answer in the responses yet: the server asks again
    assert w.call("ask_user", requestState=state, inputResponses="nothing")["resultType"] == "input_required"
    raw = base64.urlsafe_b64decode(state)
    forged = base64.urlsafe_b64encode(raw[:-2] + b'2}').decode()
    bad = "Invalid requestState: it was modified or was not issued by this server"
    for token in [forged, 5, "x", "é", base64.urlsafe_b64encode(b"\0" * 40).decode()]:
        error = w.error("tools/call", {"name": "ask_user", "requestState": token, "inputResponses": {}}, modern=True)
        assert error == {"code": -32602, "message": bad}, token
    elsewhere = w.error("tools/call", {"name": "echo", "arguments": {"message": "x"}, "requestState": state},
                        modern=True)
    assert elsewhere == {"code": -32602, "message": "requestState belongs to a different request (ask_user)"}


# --- listen streams -------------------------------------------------------------------------------

def test_listen_streams_get_only_what_they_asked_for(wire):
    w = wire()
    error = w.error("subscriptions/listen", {"notifications": ["toolsListChanged"]}, modern=True)
    assert error == {"code": -32602, "message": "params.notifications must be an object"}
    w.start("subscriptions/listen", {"notifications": {
        "toolsListChanged": True, "promptsListChanged": "yes",
        "resourceSubscriptions": ["demo://live/clock", "demo://nowhere", 5]}}, modern=True, id="tools")
    ack = w.until(lambda m: m.get("method") == "notifications/subscriptions/acknowledged", "acknowledgement")
    assert ack["params"] == {"_meta": {SUB_ID: "tools"}, "notifications": {
        "toolsListChanged": True, "resourceSubscriptions": ["demo://live/clock"]}}
    w.start("subscriptions/listen", {"notifications": {"promptsListChanged": True}}, modern=True, id="prompts")
    w.until(lambda m: m.get("method") == "notifications/subscriptions/acknowledged", "acknowledgement")
    w.initialize()
    w.call("toggle_bonus_tool", modern=False)  # legacy: the session is told, and the stream that asked
    w.call("toggle_bonus_tool")  # modern: only the stream
    changed = [m for m in w.seen if m.get("method") == "notifications/tools/list_changed"]
    assert [m.get("params") for m in changed] == [None, {"_meta": {SUB_ID: "tools"}},
                                                  {"_meta": {SUB_ID: "tools"}}]
    w.notify("notifications/cancelled", {"requestId": "tools"})
    w.seen.clear()
    w.call("toggle_bonus_tool")
    assert not [m for m in w.seen if m.get("method") == "notifications/tools/list_changed"]
    assert not [m for m in w.seen if m.get("id") == "tools"]  # a cancelled stream gets no response either
    started = time.monotonic()
    assert w.close() == 0  # the "prompts" stream is still open: closing stdin ends it
    assert time.monotonic() - started < 10


# --- how it ends ----------------------------------------------------------------------------------

def test_closing_stdin_stops_what_still_runs(wire):
    w = wire()
    w.initialize(capabilities={"elicitation": {}})
    w.start("tools/call", {"name": "long_task", "arguments": {"steps": 50, "step_ms": 2000}}, id="long")
    w.start("tools/call", {"name": "ask_user", "arguments": {}}, id="asks")
    w.until(lambda m: m.get("method") == "elicitation/create", "elicitation request")
    started = time.monotonic()
    assert w.close() == 0
    assert time.monotonic() - started < 10  # not the 100 s the task would take
    assert "request 'long' (tools/call) stopped without a response" in w.log
    assert "stdin closed, bye" in w.log


def test_a_client_that_stops_reading_is_noticed_once(wire):
    proc = subprocess.Popen(demo_cmd(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=str(ROOT), env={**os.environ, **DEMO_ENV})
    try:
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline()) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        proc.stdout.close()  # the client goes away, but keeps writing
        for i in range(2, 5):
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}).encode() + b"\n")
            proc.stdin.flush()
            time.sleep(0.1)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    assert err.decode().count("output is closed; dropping messages") == 1


# --- the JSON-RPC peer the demo is made of --------------------------------------------------------

class Collected(JsonRpcPeer):
    """A peer whose output is kept: what `JsonRpcPeer` writes, line by line."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        super().__init__(self.lines.append)

    def written(self) -> list:
        return [json.loads(line) for line in self.lines]


async def settle(peer: JsonRpcPeer) -> None:
    for _ in range(20):
        await asyncio.sleep(0)
    await peer.shutdown(grace=1)


async def test_a_bare_peer_knows_no_methods_and_ignores_notifications():
    peer = Collected()
    peer.on_line(b'{"jsonrpc": "2.0", "method": "notifications/anything", "params": {"a": 1}}')
    peer.on_line('{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}')
    await settle(peer)
    assert peer.written() == [{"jsonrpc": "2.0", "id": 3,
                               "error": {"code": -32601, "message": "Method not found: tools/list"}}]


class Exploding(Collected):
    async def handle_request(self, request_id, method, params):
        if method == "nan":
            return {"value": float("nan")}
        raise KeyError("boom")


async def test_a_failing_handler_is_an_internal_error_and_the_peer_goes_on(expect_log):
    expect_log("spyglass-demo", "request 1 (explode) failed", logging.ERROR)
    expect_log("spyglass-demo", "could not encode an outgoing message", logging.ERROR)
    peer = Exploding()
    peer.on_line(b'{"jsonrpc": "2.0", "id": 1, "method": "explode"}')
    peer.on_line(b'{"jsonrpc": "2.0", "id": 2, "method": "nan"}')
    await settle(peer)
    peer.notify("notifications/progress", {"progress": float("inf")})  # cannot be sent: dropped, not half-sent
    assert sorted(peer.written(), key=lambda m: m["id"]) == [
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error: 'boom'"}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "Result was not valid JSON"}}]


def test_ctrl_c_ends_the_server_quietly(wire):
    w = wire()
    assert w.result("ping") == {}
    w.proc.send_signal(signal.SIGINT)
    assert w.proc.wait(15) == 0
    w.close()
    assert "Traceback" not in w.log and "KeyboardInterrupt" not in w.log
