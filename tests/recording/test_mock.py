"""`spyglass mock` as a client's CI runs it: sessions recorded against the demo server, server-everything and
the SDK peer (both eras) served as mocks, over stdio and Streamable HTTP; `spyglass replay` of a session
against its own mock finds no difference, the official SDK client gets the same answers from the mock as
from the real server, and `--strict` reports every unmatched request, changed argument and changed answer
to a server's question."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import socket
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from recordings import SDK, Ada, record, record_everything, record_sdk, spyglass
from support import PEERS, PY, ROOT, SLOWDOWN, demo_cmd

from inspector import errors as E
from inspector.config import ServerSpec

MOCK = [PY, "-m", "inspector", "mock"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


async def demo_script(client: Any) -> None:
    await client.list_tools()
    await client.call_tool("echo", {"message": "hello demo"})
    await client.call_tool("long_task", {"steps": 3, "step_ms": 10}, on_progress=lambda *a: None)
    await client.call_tool("divide", {"a": 1, "b": 0})
    await client.call_tool("ask_user", {})
    await client.list_resources()
    await client.list_prompts()
    try:
        await client.call_tool("no-such-tool", {})
    except E.RemoteError:
        pass


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mock")
    out = {f"sdk-{era}": record_sdk(folder / f"sdk-{era}.sqlite", era) for era in ("legacy", "modern")}
    for era in ("legacy", "modern"):
        out[f"demo-{era}"] = record(folder / f"demo-{era}.sqlite", ServerSpec(name="demo", command=demo_cmd()), era,
                                    demo_script)
    return out


def mock(session: Path, *flags: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MOCK, str(session), *flags], input=stdin, capture_output=True, text=True, env=ENV,
                          cwd=str(ROOT), timeout=60 * SLOWDOWN)


@pytest.mark.parametrize("name", ["sdk-legacy", "sdk-modern", "demo-legacy", "demo-modern"])
def test_replay_of_a_session_against_its_own_mock_finds_no_difference(recorded, name):
    era = name.split("-")[1]
    run = spyglass("replay", str(recorded[name]), "--protocol", era, "--format", "json", "--",
                   *MOCK, str(recorded[name]), "--strict")
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["same"] is True and report["counts"]["same"] == len(report["steps"]) >= 8
    assert report["revision"] == report["recordedRevision"]


@pytest.mark.parametrize("recorded_era,served", [("legacy", "modern"), ("modern", "legacy")])
def test_a_recording_served_in_the_other_era(recorded, recorded_era, served):
    """--era: a 2025-11-25 recording to a 2026-07-28 client (its elicitation asked as an MRTR round) and the
    other way round (the MRTR round asked as an elicitation request), answers unchanged."""
    session = str(recorded[f"sdk-{recorded_era}"])
    run = spyglass("replay", session, "--protocol", served, "--format", "json", "--", *MOCK, session, "--era", served,
                   "--strict")
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["revision"] == ("2026-07-28" if served == "modern" else "2025-11-25")
    assert report["counts"]["same"] == 9
    asked = next(s for s in report["steps"] if s["target"] == "ask_name")
    assert asked["replayed"]["result"]["content"][0]["text"] == "Hello, Ada!"


def test_everything_served_as_a_mock(tmp_path):
    session = record_everything(tmp_path / "everything.sqlite")
    run = spyglass("replay", str(session), "--format", "json", "--", *MOCK, str(session), "--strict")
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout)["same"] is True


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_mock_over_http_answers_as_recorded(recorded, era):
    """Streamable HTTP on loopback: the handshake, the calls, and the server's question (elicitation on
    the POST's event stream in 2025-11-25, an MRTR round in 2026-07-28) as recorded."""
    with serving(recorded[f"sdk-{era}"], "--strict") as (url, proc):
        run = spyglass("replay", str(recorded[f"sdk-{era}"]), "--protocol", era, "--format", "json", url)
        assert run.returncode == 0, run.stdout + run.stderr
        assert json.loads(run.stdout)["counts"]["same"] == 9
    assert proc.returncode == 0, proc.stderr_text


class serving:
    """`spyglass mock --http 0` running until the block ends (SIGTERM: it reports and exits)."""

    def __init__(self, session: Path, *flags: str) -> None:
        self.argv = [*MOCK, str(session), "--http", "0", *flags]

    def __enter__(self) -> tuple[str, subprocess.Popen[bytes]]:
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=ENV, cwd=str(ROOT))
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline().decode()
        found = re.search(r"http://127\.0\.0\.1:\d+/mcp", line)
        if found is None:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the mock did not start: {line}")
        return found.group(0), self.proc

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        _out, err = self.proc.communicate(timeout=30)
        self.proc.stderr_text = err.decode()  # type: ignore[attr-defined]


def rpc(*messages: dict[str, Any]) -> str:
    return "".join(json.dumps({"jsonrpc": "2.0", **m}) + "\n" for m in messages)


HELLO = ({"id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                      "clientInfo": {"name": "ci", "version": "1"}}},
         {"method": "notifications/initialized"})


def answers(stdout: str) -> dict[Any, dict[str, Any]]:
    return {m["id"]: m for m in map(json.loads, stdout.splitlines()) if "id" in m}


def test_listings_come_page_by_page_as_recorded(tmp_path):
    async def lists(client: Any) -> None:
        await client.list_tools()
        await client.list_prompts()

    paged = ServerSpec(name="demo", command=demo_cmd(), env={"SPYGLASS_DEMO_PAGE_SIZE": "4"})
    session = record(tmp_path / "paged.sqlite", paged, "legacy", lists)
    run = mock(session, "--strict", stdin=rpc(*HELLO, {"id": 1, "method": "tools/list"}))
    first = answers(run.stdout)[1]["result"]
    assert len(first["tools"]) == 4 and isinstance(first["nextCursor"], str)
    page_2 = {"id": 2, "method": "tools/list", "params": {"cursor": first["nextCursor"]}}
    run = mock(session, "--strict", stdin=rpc(*HELLO, {"id": 1, "method": "tools/list"}, page_2))
    second = answers(run.stdout)[2]["result"]
    assert run.returncode == 0 and len(second["tools"]) >= 1
    assert {t["name"] for t in second["tools"]}.isdisjoint(t["name"] for t in first["tools"])
    replayed = spyglass("replay", str(session), "--protocol", "legacy", "--format", "json", "--", *MOCK, str(session),
                        "--strict")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def test_strict_reports_an_unmatched_request_and_a_changed_argument(recorded):
    run = mock(recorded["sdk-legacy"], "--strict", stdin=rpc(
        *HELLO,
        {"id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hello"}}},
        {"id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "changed"}}},
        {"id": 3, "method": "tools/call", "params": {"name": "ech", "arguments": {}}},
        {"id": 4, "method": "nothing/here"}))
    assert run.returncode == 9, run.stderr
    got = answers(run.stdout)
    assert got[0]["result"]["protocolVersion"] == "2025-11-25" and got[0]["result"]["serverInfo"]["name"]
    assert got[1]["result"]["content"][0]["text"] == "hello"
    # the closest recorded answer, said as it happens and in the report
    assert got[2]["result"]["content"][0]["text"] == "hello"
    assert got[3]["error"]["code"] == -32602
    assert "closest recorded request: tools/call echo" in got[3]["error"]["message"]
    assert got[4]["error"]["code"] == -32601
    report = run.stderr[run.stderr.index("spyglass mock: 5 requests"):]
    assert "1 unmatched" not in report and "2 unmatched, 1 different" in report
    assert '/message: "hello" → "changed"' in report
    assert "unmatched: tools/call ech" in report and "unmatched: nothing/here" in report


def test_without_strict_the_same_run_exits_0(recorded):
    run = mock(recorded["sdk-legacy"], stdin=rpc(*HELLO, {"id": 3, "method": "tools/call",
                                                          "params": {"name": "ech", "arguments": {}}}))
    assert run.returncode == 0, run.stderr
    assert "no recorded answer for tools/call ech" in run.stderr


def test_a_server_question_is_asked_again_and_the_new_answer_checked(recorded):
    """The recorded elicitation is asked again; a client answering otherwise gets the recorded result and
    the difference is reported under --strict."""
    proc = subprocess.Popen([*MOCK, str(recorded["sdk-legacy"]), "--strict"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=str(ROOT), text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(rpc(*HELLO))  # a client waits for the handshake's answer before it calls
        proc.stdin.flush()
        assert "result" in json.loads(proc.stdout.readline())
        proc.stdin.write(rpc({"id": 1, "method": "tools/call", "params": {"name": "ask_name", "arguments": {}}}))
        proc.stdin.flush()
        question = json.loads(proc.stdout.readline())
        assert question["method"] == "elicitation/create" and "id" in question
        proc.stdin.write(rpc({"id": question["id"], "result": {"action": "accept", "content": {"name": "Bob"}}}))
        proc.stdin.close()
        final = json.loads(proc.stdout.readline())
        assert final["id"] == 1 and final["result"]["content"][0]["text"] == "Hello, Ada!"
        assert proc.wait(timeout=30) == 9
        err = proc.stderr.read() if proc.stderr else ""
        assert 'the client answered elicitation/create differently (/content/name: "Ada" → "Bob")' in err
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
               "io.modelcontextprotocol/clientInfo": {"name": "ci", "version": "1"}}


def test_a_multi_round_call_checks_the_clients_input_responses(recorded):
    """2026-07-28: the recorded input_required round comes back, the client's re-send with its answers is
    matched by its requestState and its inputResponses compared with the recorded ones."""
    proc = subprocess.Popen([*MOCK, str(recorded["sdk-modern"]), "--strict"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=str(ROOT), text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        call = {"name": "ask_name", "arguments": {}, "_meta": MODERN_META}
        proc.stdin.write(rpc({"id": 1, "method": "tools/call", "params": call}))
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())["result"]
        assert first["resultType"] == "input_required"
        [(key, question)] = first["inputRequests"].items()
        assert question["method"] == "elicitation/create"
        answer = {"action": "accept", "content": {"name": "Bob"}}
        proc.stdin.write(rpc({"id": 2, "method": "tools/call", "params": {
            **call, "inputResponses": {key: answer}, "requestState": first["requestState"]}}))
        proc.stdin.close()
        final = json.loads(proc.stdout.readline())
        assert final["id"] == 2 and final["result"]["content"][0]["text"] == "Hello, Ada!"
        assert proc.wait(timeout=30) == 9
        err = proc.stderr.read() if proc.stderr else ""
        assert "2 requests, 0 unmatched, 1 different" in err
        assert f'/{key}/content/name: "Ada" → "Bob"' in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


def test_notifications_during_a_request_come_again_in_order(recorded):
    run = mock(recorded["demo-legacy"], stdin=rpc(
        *HELLO, {"id": 1, "method": "tools/call", "params": {"name": "long_task",
                                                             "arguments": {"steps": 3, "step_ms": 10},
                                                             "_meta": {"progressToken": "mine"}}}))
    assert run.returncode == 0, run.stderr
    lines = [m for m in map(json.loads, run.stdout.splitlines()) if m.get("id") != 0]  # not the handshake
    progress = [m["params"] for m in lines if m.get("method") == "notifications/progress"]
    assert [(p["progressToken"], p["progress"]) for p in progress] == [("mine", 1), ("mine", 2), ("mine", 3)]
    logged = [m["params"]["data"] for m in lines if m.get("method") == "notifications/message"]
    assert logged == [f"long_task: finished step {n} of 3" for n in (1, 2, 3)]
    sent = [m.get("method") for m in lines]
    assert sent == ["notifications/progress", "notifications/message"] * 3 + [None]
    assert lines[-1]["id"] == 1 and lines[-1]["result"]["content"][0]["text"].startswith("Done: 3 steps")


def test_sdk_client_gets_the_same_answers_from_the_mock_as_from_the_server(recorded):
    async def steps(command: list[str]) -> list[Any]:
        from mcp import ClientSession, StdioServerParameters, types
        from mcp.client.stdio import stdio_client

        async def elicit(context: Any, params: Any) -> Any:
            return types.ElicitResult(action="accept", content={"name": "Ada"})

        server = StdioServerParameters(command=command[0], args=command[1:], env=ENV)
        with open(os.devnull, "w") as quiet:
            async with stdio_client(server, errlog=quiet) as (read, write), ClientSession(
                    read, write, elicitation_callback=elicit) as s:
                hello = await s.initialize()
                out: list[Any] = [hello.server_info.model_dump(), hello.capabilities.model_dump()]
                out.append((await s.list_tools()).model_dump())
                for name, args in (("add", {"a": 2, "b": 3}), ("echo", {"message": "hello"}), ("fail", {}),
                                   ("ask_name", {})):
                    out.append((await s.call_tool(name, args)).model_dump())
                out.append((await s.read_resource("sdk://hello")).model_dump())
                out.append((await s.list_prompts()).model_dump())
                return [_no_meta(x) for x in out]

    real = asyncio.run(steps(SDK))
    mocked = asyncio.run(steps([*MOCK, str(recorded["sdk-legacy"])]))
    assert mocked == real


OFFICIAL_CALLS = [["--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hello"]]


def test_official_inspector_cli_gets_the_same_answers_from_the_mock_as_from_the_server(recorded, tmp_path):
    """The official inspector CLI (pinned in tests/peers, on Node 22), a call against the SDK peer and against
    the mock of its recording, run side by side (one call: each run is a Node start, seconds on a busy
    machine)."""
    node = PEERS / "node_modules" / ".bin" / "node"
    cli = (PEERS / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "cli" / "build" /
           "index.js").resolve()  # the CLI runs only when started by its real path
    assert node.exists() and cli.exists(), "run `make peers` (npm ci in tests/peers)"
    env = {**ENV, "HOME": str(tmp_path), "MCP_STORAGE_DIR": str(tmp_path / "store"), "NO_COLOR": "1"}

    def run(target: list[str], flags: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(node), str(cli), *target, "--", *flags, "--format", "json"], capture_output=True,
                              text=True, env=env, cwd=str(ROOT), timeout=60 * SLOWDOWN)

    targets = (SDK, [*MOCK, str(recorded["sdk-legacy"]), "--strict"])
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = [[pool.submit(run, target, flags) for target in targets] for flags in OFFICIAL_CALLS]
    for flags, (real, mocked) in zip(OFFICIAL_CALLS, runs):
        real_run, mocked_run = real.result(), mocked.result()
        assert real_run.returncode == mocked_run.returncode, (flags, real_run.stderr, mocked_run.stderr)
        assert mocked_run.stdout == real_run.stdout or _no_meta(json.loads(mocked_run.stdout)) == _no_meta(
            json.loads(real_run.stdout)), flags
        assert "0 unmatched, 0 different" in mocked_run.stderr, mocked_run.stderr


def _no_meta(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_meta(v) for k, v in value.items() if k not in ("meta", "_meta")}
    if isinstance(value, list):
        return [_no_meta(v) for v in value]
    return value


def test_timing_recorded_plays_the_delays(recorded):
    """--timing recorded: each notification no sooner than it came after the request, the answer no sooner
    than the recorded latency; x4: a quarter of that; off: at once."""
    from inspector.mock.load import load
    from inspector.mock.server import MockServer

    book, _problems = load(recorded["demo-legacy"])
    entry = next(e for e in book.entries if e.target == "long_task")
    assert [e.notification["method"] for e in entry.events] == ["notifications/progress",
                                                                 "notifications/message"] * 3
    params = {"name": "long_task", "arguments": {"steps": 3, "step_ms": 10}, "_meta": {"progressToken": 7}}

    async def played(timing: float | None) -> tuple[list[float], float]:
        loop = asyncio.get_running_loop()
        begun = loop.time()
        sent: list[float] = []
        await MockServer(book, timing=timing).answer("tools/call", params, lambda _m: sent.append(loop.time() - begun),
                                                      None)
        return sent, loop.time() - begun

    slack = 0.002  # the loop may wake a clock tick early
    for timing in (1.0, 4.0):
        sent, total = asyncio.run(played(timing))
        assert all(at >= e.offset / timing - slack for at, e in zip(sent, entry.events, strict=True))
        assert total >= entry.latency / timing - slack and entry.latency >= 0.03
    sent, total = asyncio.run(played(None))
    assert len(sent) == 6 and total < entry.latency
    bad = mock(recorded["demo-legacy"], "--timing", "slow")
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "--timing 'slow'" in bad.stderr


# ---------------------------------------------------------------------- bad input


def test_a_damaged_session_serves_what_can_be_read_and_says_what_could_not(recorded, tmp_path):
    whole = tmp_path / "whole.mcpsession"
    assert spyglass("export", str(recorded["sdk-legacy"]), str(whole)).returncode == 0
    lines = gzip.decompress(whole.read_bytes()).decode().splitlines(keepends=True)
    cut = tmp_path / "cut.mcpsession"
    cut.write_bytes(gzip.compress("".join(lines[:-2]).encode()))  # the end line and the last answer
    run = mock(cut, stdin=rpc(*HELLO, {"id": 1, "method": "tools/call", "params": {"name": "add",
                                                                                   "arguments": {"a": 2, "b": 3}}}))
    assert run.returncode == 0, run.stderr
    assert answers(run.stdout)[1]["result"]["content"][0]["text"] == "5"
    assert "cut.mcpsession: the file has no end line (cut short?): 22 frames could be read" in run.stderr
    assert ("1 recorded request(s) have no answer in the session and are not served: tools/call no-such-tool"
            in run.stderr)


def test_a_session_damaged_past_reading_says_why_nothing_is_served(recorded, tmp_path):
    """A database cut to its first pages, where no frame can be read: one line that says the file is damaged, not
    only that the session has no server traffic (as if nothing had been connected)."""
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(recorded["demo-legacy"].read_bytes()[:8192])
    run = mock(cut)
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("spyglass mock: cut.sqlite: no server traffic could "
                                                                  "be read: "), run.stderr
    assert "malformed" in run.stderr


def test_a_port_in_use_is_one_line_and_exit_4(recorded):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = mock(recorded["sdk-legacy"], "--http", str(port))
    assert run.returncode == 4
    # as docs/mock.md says it, not asyncio's "error while attempting to bind on address (...): address already in use"
    assert run.stderr == f"spyglass mock: cannot listen on 127.0.0.1:{port}: Address already in use\n"


def test_a_session_with_no_server_or_no_session_is_one_line_and_exit_1(tmp_path):
    empty = tmp_path / "empty.mcpsession"
    header = {"format": "mcpsession", "version": 1, "servers": []}
    text = json.dumps(header) + "\n" + json.dumps({"end": True, "frames": 0}) + "\n"
    empty.write_bytes(gzip.compress(text.encode()))
    run = mock(empty)
    assert run.returncode == 1 and run.stderr.strip().count("\n") == 0 and "no server" in run.stderr, run.stderr
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    run = mock(other)
    assert run.returncode == 1 and "not a Spyglass session" in run.stderr and "Traceback" not in run.stderr


__all__ = ["Ada"]


# ---------------------------------------------------------------------- stubs

STUBS = """\
stubs:
  - tool: echo                      # overrides the recorded answer, for one argument only
    when:
      /arguments/message: {contains: stub}
    result: {content: [{type: text, text: "stubbed ${/arguments/message}"}], isError: false}
  - tool: weather                   # a tool the recording never saw
    when:
      /arguments: {contains: {units: metric}}
    result: {content: [{type: text, text: "Sunny in ${/arguments/city}"}], structuredContent: {
             city: "${/arguments/city}", days: "${/arguments/days}"}}
  - method: resources/read
    uri: sdk://down
    error: {code: -32002, message: "Resource ${/uri} not found", data: {uri: "${/uri}"}}
    delay: 0.01
"""


def test_stubs_override_and_add_answers(recorded, tmp_path):
    stubs = tmp_path / "stubs.yaml"
    stubs.write_text(STUBS)
    run = mock(recorded["sdk-legacy"], "--stubs", str(stubs), "--strict", stdin=rpc(
        *HELLO,
        {"id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "a stub please"}}},
        {"id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hello"}}},
        {"id": 3, "method": "tools/call", "params": {"name": "weather",
                                                     "arguments": {"city": "Paris", "units": "metric", "days": 3}}},
        {"id": 4, "method": "resources/read", "params": {"uri": "sdk://down"}},
        {"id": 5, "method": "tools/call", "params": {"name": "weather", "arguments": {"city": "Oslo"}}}))
    got = answers(run.stdout)
    assert got[1]["result"]["content"][0]["text"] == "stubbed a stub please"
    assert got[2]["result"]["content"][0]["text"] == "hello"  # not matched by the stub: the recording answers
    assert got[3]["result"]["content"][0]["text"] == "Sunny in Paris"
    assert got[3]["result"]["structuredContent"] == {"city": "Paris", "days": 3}  # a whole template keeps its type
    assert got[4]["error"] == {"code": -32002, "message": "Resource sdk://down not found",
                               "data": {"uri": "sdk://down"}}
    assert "error" in got[5]  # without units: no stub, and no recording of weather
    assert run.returncode == 9 and "1 unmatched, 0 different" in run.stderr and "weather" in run.stderr


def test_a_stub_file_with_problems_names_each_at_its_line(recorded, tmp_path):
    stubs = tmp_path / "bad.yaml"
    stubs.write_text("stubs:\n  - tool: echo\n    reslt: {}\n  - method: tools/call\n    when: {arguments: 1}\n"
                     "    result: {}\n    delay: soon\n")
    run = mock(recorded["sdk-legacy"], "--stubs", str(stubs))
    assert run.returncode == 1, run.stderr
    assert "bad.yaml:3:5: unknown key 'reslt' in stub 1 (did you mean 'result'?)" in run.stderr
    assert "bad.yaml:2:5: stub 1 needs one answer: result or error" in run.stderr
    assert "bad.yaml:5:12: 'arguments' is not a JSON pointer" in run.stderr
    assert "bad.yaml:7:12: delay is a number of seconds" in run.stderr
    assert "Traceback" not in run.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text("stubs: [\n")
    run = mock(recorded["sdk-legacy"], "--stubs", str(broken))
    assert run.returncode == 1 and "broken.yaml:2:1: not valid YAML" in run.stderr, run.stderr


# ---------------------------------------------------------------------- collections

COLLECTION = """\
name: demo smoke
server: {command: [PYTHON, -m, inspector.demo]}
protocol: legacy
steps:
  - name: tools
    list: tools
    expect: {snapshot: true}
  - name: echo
    call: echo
    arguments: {message: "hello"}
    expect: {snapshot: true}
    save: {said: /content/0/text}
  - name: echo again
    call: echo
    arguments: {message: "${said}!"}
    expect: {snapshot: true, text: {equals: "hello!"}}
  - name: zero
    call: divide
    arguments: {a: 1, b: 0}
    expect: {isError: true, snapshot: true}
  - name: welcome
    read: demo://docs/welcome.txt
    expect: {snapshot: true}
  - name: unknown
    call: no_such_tool
    expect: {error: {code: -32602}, snapshot: true}
  - name: not stored
    call: echo
    arguments: {message: "x"}
"""


def test_a_collection_is_served_from_its_snapshots(tmp_path):
    collection = tmp_path / "smoke.yaml"
    collection.write_text(COLLECTION.replace("PYTHON", PY))
    assert mock(collection).returncode == 1  # no snapshot stored yet: nothing to serve
    stored = spyglass("test", str(collection), "--update-snapshots")
    assert stored.returncode == 0, stored.stdout + stored.stderr
    run = spyglass("test", str(collection), "--step", "tools", "--step", "echo", "--step", "echo again",
                   "--step", "zero", "--step", "welcome", "--step", "unknown", "--", *MOCK, str(collection),
                   "--strict")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "6 passed, 0 failed" in run.stdout
    hello = mock(collection, stdin=rpc(*HELLO, {"id": 1, "method": "tools/call",
                                                "params": {"name": "echo", "arguments": {"message": "hello!"}}}))
    got = answers(hello.stdout)
    assert got[0]["result"]["serverInfo"]["name"] == "demo smoke"
    assert set(got[0]["result"]["capabilities"]) == {"tools", "resources"}
    assert got[1]["result"]["content"][0]["text"] == "hello!"  # the saved value went into the stored request
    assert "1 step(s) have no snapshot and are not served: not stored" in hello.stderr
