"""An MCP user for Locust: `McpUser` speaks MCP over Streamable HTTP with Locust's own HTTP client, so every request
is in Locust's statistics, its CSV files and its web UI, from one process or from a master and many workers.

Only Locust imports this module (from a locustfile: `from inspector.loadtest.locust_user import McpUser`); it
needs the `mcp-spyglass[locust]` extra. Locust's gevent patches the process it is imported in, so nothing else in
Spyglass imports it.

    class Weather(McpUser):
        protocol = "2026-07-28"            # or a legacy revision: "2025-11-25" (the default), "2025-06-18", …
        wait_time = constant_throughput(5)  # Locust's own pacing: 5 tasks a second per simulated user

        @task
        def weather(self):
            self.call_tool("weather", {"city": "Paris"})

The era follows `protocol`. 2026-07-28: every request stands on its own, with the revision, the client's
capabilities and its name in `params._meta` and the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers;
no handshake, no session. A legacy revision: each simulated user sends `initialize` once when it starts (reported
as `initialize`), then `notifications/initialized`, and every later request carries the `Mcp-Session-Id` the server
gave; the session is ended (DELETE) when the user stops. An answer may come as JSON or as an event stream
(`text/event-stream`): the stream is read to the response to the request's id.

Each request is reported under its method and, for a call, a prompt or a read, what it names (`tools/call
get_weather`, `prompts/get greeting`, `resources/read demo://clock`). An answer counts as a failure of its kind,
the kind first in Locust's error text:

    tool_error: <the result's text>              a result with isError: true
    rpc_error -32602: <the error's message>       a JSON-RPC error, with its code
    http_error 404: <the body's start>           an HTTP status other than 200 and 202
    invalid_response: <what is wrong>            not JSON-RPC, no answer to this request's id in the stream
    expectation: <what was expected>             the answer broke an expectation given with `expect`

A bearer token (`token`, or the environment variable named by `token_env`) is sent as `Authorization: Bearer`,
and `headers` with every request, as a server in Spyglass's catalog sends them.
"""

from __future__ import annotations

import csv
import itertools
import json
import logging
import os
from typing import Any

import gevent.event
from locust import FastHttpUser, events
from locust.env import Environment
from locust.runners import STATE_MISSING, MasterRunner, WorkerRunner
from locust.stats import PERCENTILES_TO_REPORT, StatsCSV

from inspector import __version__
from inspector.loadtest.answers import SNIPPET, Check, McpFailure, judge, read_answer, request_name
from inspector.private import open_private
from inspector.protocol.headers import standard_headers
from inspector.protocol.versions import (
    LATEST_LEGACY,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    MODERN_VERSION,
    Era,
    era_of,
)

ACCEPT = "application/json, text/event-stream"
logger = logging.getLogger(__name__)


class McpUser(FastHttpUser):
    """A simulated MCP client; subclass it with tasks (see the module's help). `host` is the server's MCP URL."""

    abstract = True
    protocol: str = LATEST_LEGACY  # "2026-07-28" for the stateless era, or a legacy revision
    token: str | None = None
    token_env: str | None = "MCP_BEARER_TOKEN"  # the token from this environment variable when `token` is None
    headers: dict[str, str] = {}
    client_info: dict[str, Any] = {"name": "spyglass-locust", "version": __version__}
    capabilities: dict[str, Any] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.session_id: str | None = None
        self.version = self.protocol
        self._ids = itertools.count(1)

    @property
    def modern(self) -> bool:
        return era_of(self.protocol) is Era.MODERN

    def on_start(self) -> None:
        if not self.modern:
            self.initialize()

    def on_stop(self) -> None:
        if self.session_id is not None:
            with self.client.request("DELETE", "", headers=self._headers(None), name="session end",
                                     catch_response=True) as response:
                response.success()  # a server may not let clients end sessions (405): not the load's failure
            self.session_id = None

    def initialize(self) -> dict[str, Any] | None:
        """The legacy handshake: `initialize`, then `notifications/initialized`; keeps the session's id."""
        result = self.request("initialize", {"protocolVersion": self.protocol, "capabilities": self.capabilities,
                                             "clientInfo": self.client_info})
        if result is not None:
            version = result.get("protocolVersion")
            self.version = version if isinstance(version, str) else self.protocol
            self.notify("notifications/initialized")
        return result

    # ------------------------------------------------------------------ what tasks call

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                  expect: Check | None = None) -> dict[str, Any] | None:
        """`tools/call`, reported as `tools/call NAME`; the result, or None when it failed."""
        return self.request("tools/call", {"name": name, "arguments": arguments or {}}, expect=expect)

    def list_tools(self) -> dict[str, Any] | None:
        return self.request("tools/list", {})

    def read_resource(self, uri: str, *, expect: Check | None = None) -> dict[str, Any] | None:
        return self.request("resources/read", {"uri": uri}, expect=expect)

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None, *,
                   expect: Check | None = None) -> dict[str, Any] | None:
        return self.request("prompts/get", {"name": name, "arguments": arguments or {}}, expect=expect)

    def ping(self) -> dict[str, Any] | None:
        return self.request("ping", {})

    def request(self, method: str, params: dict[str, Any] | None = None, *, name: str | None = None,
                expect: Check | None = None) -> dict[str, Any] | None:
        """Send one request, report it to Locust (a failure with its kind), and return its result or None. With
        `expect`, the check decides: what it says was expected is a failure of kind `expectation`."""
        params = dict(params or {})
        if self.modern:
            params["_meta"] = {**params.get("_meta", {}), META_PROTOCOL_VERSION: MODERN_VERSION,
                               META_CLIENT_CAPABILITIES: self.capabilities, META_CLIENT_INFO: self.client_info}
        request_id = next(self._ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        with self.client.request("POST", "", data=json.dumps(message), headers=self._headers(message),
                                 name=name or request_name(method, params), catch_response=True) as response:
            try:
                answer = self._answer(response, request_id, method)
                if expect is None:
                    result = judge(answer)
                else:
                    wrong = expect(answer, float(response.request_meta.get("response_time") or 0.0))
                    if wrong:
                        raise McpFailure("expectation", wrong)
                    found = answer.get("result")
                    result = found if isinstance(found, dict) else {}
            except McpFailure as failure:
                response.failure(str(failure))
                return None
            response.success()
            return result

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (reported under its method; the server answers 202 with no body)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        with self.client.request("POST", "", data=json.dumps(message), headers=self._headers(message),
                                 name=method, catch_response=True) as response:
            if response.status_code in (200, 202):
                response.success()
            else:
                response.failure(str(McpFailure("http_error", _body_start(response), response.status_code)))

    # ------------------------------------------------------------------ the wire

    def _headers(self, message: dict[str, Any] | None) -> dict[str, str]:
        out = {"Accept": ACCEPT, "Content-Type": "application/json", **self.headers}
        token = self.token if self.token is not None else os.environ.get(self.token_env or "") or None
        if token:
            out["Authorization"] = f"Bearer {token}"
        if self.modern:
            out["MCP-Protocol-Version"] = MODERN_VERSION
            if message is not None:
                out.update(standard_headers(message))
        elif message is None or message.get("method") != "initialize":
            out["MCP-Protocol-Version"] = self.version
        if self.session_id is not None:
            out["Mcp-Session-Id"] = self.session_id
        return out

    def _answer(self, response: Any, request_id: int, method: str) -> dict[str, Any]:
        """The JSON-RPC response to the request, or McpFailure when the HTTP exchange did not carry one."""
        status = response.status_code
        if status != 200:
            if not status:  # no HTTP answer at all: the connection failed
                raise McpFailure("connect", repr(getattr(response, "error", None) or "no answer"))
            raise McpFailure("http_error", _body_start(response), status)
        headers = response.headers or {}
        if method == "initialize":
            sid = headers.get("Mcp-Session-Id") or headers.get("mcp-session-id")
            self.session_id = sid or None
        return read_answer(response.content or b"", headers.get("Content-Type") or "", request_id)


FLUSH = "spyglass_flush"  # master -> workers: stop, and send your last report now
FLUSHED = "spyglass_flushed"  # worker -> master: my last report was sent before this
FLUSH_WAIT_S = 10.0  # beyond --stop-timeout: how long the master waits for a worker that does not answer


def _on_init(environment: Environment, **_kwargs: Any) -> None:
    environment.events.quit.add_listener(lambda **_kw: final_csv(environment))  # type: ignore[no-untyped-call]
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        runner.register_message(FLUSH, lambda environment, **_kw: _flush(environment), concurrent=True)
    elif isinstance(runner, MasterRunner):
        _LastReports(environment, runner)


def _flush(environment: Environment) -> None:
    """A worker: its users stopped (each lets its request finish, up to --stop-timeout), its figures sent at once
    (as Locust's own report is made), then FLUSHED — after the report on the same connection, so it arrives after."""
    runner = environment.runner
    assert isinstance(runner, WorkerRunner)
    runner.stop()
    data: dict[str, Any] = {}
    environment.events.report_to_master.fire(client_id=runner.client_id, data=data)  # type: ignore[no-untyped-call]
    runner.send_message("stats", data)
    runner.send_message(FLUSHED)


class _LastReports:
    """The master waits for every worker's last report when a run stops. Locust's master waits 0.5 s for them as it
    quits and then stops listening: a worker whose users were still in a request (it lets them finish, up to
    --stop-timeout), or a loaded machine, lost the run's last requests from the statistics and the CSV files. So at
    `test_stop` the master asks each worker to stop and report (FLUSH) and waits until each has said FLUSHED."""

    def __init__(self, environment: Environment, runner: MasterRunner) -> None:
        self.environment = environment
        self.runner = runner
        self.waiting: set[str] = set()
        self.done = gevent.event.Event()
        runner.register_message(FLUSHED, self.flushed)
        environment.events.test_stop.add_listener(self.wait)  # type: ignore[no-untyped-call]

    def flushed(self, msg: Any, **_kw: Any) -> None:
        self.waiting.discard(msg.node_id)
        if not self.waiting:
            self.done.set()

    def wait(self, **_kw: Any) -> None:
        self.waiting = {c.id for c in self.runner.clients.all if c.state != STATE_MISSING}  # a lost one cannot
        if not self.waiting:
            return
        self.done.clear()
        for client_id in list(self.waiting):
            self.runner.send_message(FLUSH, None, client_id)
        limit = (self.environment.stop_timeout or 0) + FLUSH_WAIT_S
        if not self.done.wait(limit):
            logger.warning("no last report from %d worker(s) after %g s: their last requests are not counted",
                           len(self.waiting), limit)


events.init.add_listener(_on_init)  # type: ignore[no-untyped-call]


def final_csv(environment: Environment) -> None:
    """Locust writes its CSV statistics once a second and not when it stops, so the requests of a run's last second
    would be missing from `PREFIX_stats.csv` and `PREFIX_failures.csv` (not from its printed summary): they are
    written once more, whole, as it quits (by the master, or the one process of a local run)."""
    prefix = getattr(environment.parsed_options, "csv_prefix", None)
    if not prefix or isinstance(environment.runner, WorkerRunner):
        return
    writer = StatsCSV(environment, PERCENTILES_TO_REPORT)
    for suffix, write in (("_stats.csv", writer.requests_csv), ("_failures.csv", writer.failures_csv),
                          ("_exceptions.csv", writer.exceptions_csv)):
        with open_private(prefix + suffix, "w", newline="", encoding="utf-8") as f:
            write(csv.writer(f))


def _body_start(response: Any) -> str:
    return (response.content or b"")[:SNIPPET].decode("utf-8", "replace")
