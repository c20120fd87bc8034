"""Locustfiles written from Spyglass: a load run (`spyglass --cli --load … --locust FILE`, the Load tab's *Export for
Locust…*) or a collection's steps (`spyglass test COLLECTION --locust FILE`) as a plain Python file a person reads
and edits, run by Locust with the MCP user of `locust_user.py`.

What maps to what: `--load-concurrency N` is N simulated users (each has one call in flight at a time, as each of
the load run's N workers does); `--load-rate R` is R calls a second in all, so each user keeps to R / N
(`constant_throughput`); `--load-duration` is Locust's `--run-time`; `--load-requests` gives each user its share of
the calls, after which it stops. No secret is written: a bearer token is read from MCP_BEARER_TOKEN when Locust
runs, and a header whose name says it is secret from an environment variable named after it.
"""

from __future__ import annotations

import math
import pprint
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..private import write_private
from ..secrets import is_secret_name, mask_url, mask_value

TOKEN_ENV = "MCP_BEARER_TOKEN"
URL_ENV = "MCP_SERVER_URL"  # where the URL is read from when it holds a secret (a key in its query, a password)
# names a task must not take: McpUser's and Locust's own
RESERVED = frozenset({"request", "call_tool", "list_tools", "read_resource", "get_prompt", "ping", "notify",
                      "initialize", "on_start", "on_stop", "run", "start", "stop", "client", "host", "tasks",
                      "wait", "wait_time", "environment", "context", "modern", "headers", "protocol", "token"})


@dataclass(frozen=True)
class Step:
    """One task: an MCP request, how often it is picked against the others, what its answer must be."""

    name: str
    method: str
    params: dict[str, Any]
    weight: int = 1
    expect: dict[str, Any] | None = None  # a collection step's `expect`, judged on every answer


@dataclass(frozen=True)
class Scenario:
    url: str
    protocol: str
    steps: tuple[Step, ...]
    users: int = 10
    duration_s: float | None = None
    requests: int | None = None
    rate: float | None = None  # tasks a second in all
    headers: dict[str, str] = field(default_factory=dict)
    title: str = ""
    source: str = ""  # the command that wrote it


def header_env(name: str) -> str:
    """The environment variable a secret header's value is read from: `X-Api-Key` -> `MCP_HEADER_X_API_KEY`."""
    return "MCP_HEADER_" + re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper()


def secret_header(name: str, value: str) -> bool:
    """A header whose name says it is secret, or whose value has a secret's shape (a token, a key)."""
    return is_secret_name(name) or mask_value(name, value) != value


def run_time(seconds: float) -> str:
    return f"{seconds:g}s" if seconds < 60 or seconds % 60 else f"{int(seconds // 60)}m"


def commands(scenario: Scenario, path: str, prefix: str) -> list[str]:
    """How to run it: on this machine headless, with the web UI, and as a master with workers."""
    u = scenario.users
    bound = f" -t {run_time(scenario.duration_s)}" if scenario.duration_s else ""
    return [
        "On this machine, headless, with CSV files (PREFIX_stats.csv, PREFIX_stats_history.csv, PREFIX_failures.csv):",
        f"    locust -f {path} --headless -u {u} -r {u}{bound} --csv {prefix}",
        "With Locust's web UI (http://localhost:8089): set the users there, or give them here:",
        f"    locust -f {path} -u {u} -r {u}{bound}",
        "On several machines: one master, then any number of workers (the same file on each) that reach it:",
        f"    locust -f {path} --master --headless --expect-workers 2 -u {u} -r {u}{bound} --csv {prefix}",
        f"    locust -f {path} --worker --master-host MASTER_ADDRESS",
        "Read the CSV files back into Spyglass, beside a local run's summary (spyglass --cli --load --format json):",
        f"    spyglass --cli --load-compare {prefix} RUN.json",
    ]


def render(scenario: Scenario, path: str = "locustfile.py", prefix: str = "locust") -> str:
    """The locustfile's text."""
    s = scenario
    lines = ['"""' + _doc(s.title or "A Locust load test of an MCP server") + ", written by Spyglass.", ""]
    if s.source:
        lines += [f"Written by: {_doc(s.source)}", ""]
    lines += [_doc(line) for line in commands(s, path, prefix)]
    lines += ["",
              f"A bearer token, if the server wants one, is read from the environment variable {TOKEN_ENV}.",
              "This is a plain Locust file: edit the tasks, weights, users and pacing as you like",
              "(https://docs.locust.io/en/stable/writing-a-locustfile.html).",
              '"""', ""]
    url_secret = mask_url(s.url) != s.url
    if url_secret or any(secret_header(n, v) for n, v in s.headers.items()):
        lines += ["import os", ""]
    names = sorted(["task", "constant_throughput" if s.rate else "constant"])
    lines.append(f"from locust import {', '.join(names)}")
    if s.requests is not None:
        lines.append("from locust.exception import StopUser")
    lines.append("")
    if any(step.expect for step in s.steps):
        lines.append("from inspector.loadtest.expectations import checker")
    lines.append("from inspector.loadtest.locust_user import McpUser")
    lines.append("")
    lines += [f"HOST = os.environ[{URL_ENV!r}]  # the URL holds a secret: {_doc(mask_url(s.url))}" if url_secret else
              f"HOST = {s.url!r}",
              f"USERS = {s.users}  # simulated MCP clients, one request in flight each (locust -u)"]
    if s.rate:
        lines.append(f"RATE = {s.rate:g}  # tasks a second, all users together")
    if s.requests is not None:
        lines.append(f"CALLS_PER_USER = {math.ceil(s.requests / s.users)}  # {s.requests} in all, then users stop")
    lines += ["", "", "class McpLoad(McpUser):", "    host = HOST",
              f"    protocol = {s.protocol!r}  # 2026-07-28: stateless; older: initialize once per user"]
    if s.headers:
        lines.append("    headers = {")
        for name, value in s.headers.items():
            shown = f"os.environ.get({header_env(name)!r}, '')" if secret_header(name, value) else repr(value)
            lines.append(f"        {name!r}: {shown},")
        lines.append("    }")
    lines.append("    wait_time = constant_throughput(RATE / USERS)" if s.rate else
                 "    wait_time = constant(0)  # as fast as the answers come")
    if s.requests is not None:
        lines += ["", "    def on_start(self):", "        self.calls = 0", "        super().on_start()"]
    taken: set[str] = set()
    for i, step in enumerate(s.steps):
        method = _identifier(step.name, i)
        method = method if method not in taken and method not in RESERVED else f"{method}_{i + 1}"
        taken.add(method)
        lines += ["", f"    @task({step.weight})" if step.weight != 1 else "    @task", f"    def {method}(self):"]
        if s.requests is not None:
            lines += ["        self.calls += 1", "        if self.calls > CALLS_PER_USER:",
                      "            raise StopUser()"]
        expect = f", expect=checker({step.method!r}, {_literal(step.expect, 12)})" if step.expect else ""
        lines.append(f"        {_call(step, expect)}")
    return "\n".join(lines) + "\n"


def _doc(text: str) -> str:
    """Text for the file's docstring: a name a server chose cannot end the string or start a line of code."""
    return "".join(c if c.isprintable() and c not in "\\\"" else repr(c)[1:-1] if c != '"' else '\\"' for c in text)


def _call(step: Step, expect: str) -> str:
    p = step.params
    if step.method == "tools/call":
        return f"self.call_tool({p.get('name')!r}, {_literal(p.get('arguments') or {}, 8)}{expect})"
    if step.method == "resources/read":
        return f"self.read_resource({p.get('uri')!r}{expect})"
    if step.method == "prompts/get":
        return f"self.get_prompt({p.get('name')!r}, {_literal(p.get('arguments') or {}, 8)}{expect})"
    if not p:
        return f"self.request({step.method!r}{expect})"
    return f"self.request({step.method!r}, {_literal(p, 8)}{expect})"


def _literal(value: Any, indent: int) -> str:
    """A Python literal of a JSON value, wrapped to the file's width."""
    text = pprint.pformat(value, width=max(40, 110 - indent), sort_dicts=False)
    return text.replace("\n", "\n" + " " * indent)


def _identifier(name: str, index: int) -> str:
    word = re.sub(r"\W+", "_", name).strip("_").lower()
    if not word or word[0].isdigit() or not word.isascii():
        word = f"step_{index + 1}"
    return word


def load_scenario(url: str, protocol: str, tool: str, arguments: dict[str, Any], *, concurrency: int,
                  duration_s: float | None, requests: int | None, rate: float | None,
                  headers: dict[str, str] | None = None, source: str = "") -> Scenario:
    """A load run of one tool (the Load tab's and `--cli --load`'s bounds) as a Locust scenario."""
    step = Step(tool, "tools/call", {"name": tool, "arguments": arguments})
    return Scenario(url=url, protocol=protocol, steps=(step,), users=concurrency, duration_s=duration_s,
                    requests=requests, rate=rate, headers=dict(headers or {}),
                    title=f"A Locust load test of the MCP tool {tool!r}", source=source)


def write(path: str, scenario: Scenario, prefix: str | None = None) -> str:
    """Write the locustfile (readable by its user only, as every file Spyglass writes); returns its text."""
    stem = Path(path).stem
    text = render(scenario, path, prefix or (stem if stem != "locustfile" else "locust"))
    write_private(path, text)
    return text
