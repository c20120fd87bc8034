"""`spyglass mcp` driven by the official Python SDK's client, in both protocol eras, through every tool:
against the demo server, server-everything and a server of the SDK's whose source the test edits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from mcp import Client, StdioServerParameters
from support import SDK_SERVER, demo_cmd, everything_cmd

from inspector.agent.tools import TOOLS, definitions
from inspector.checks.definitions import list_cost


def spyglass(*extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "inspector", "mcp", "--private", *extra],
                                 env=dict(os.environ))


async def call(client, tool, /, **arguments):
    return await client.call_tool(tool, arguments)


def ok(result):
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def refused(result, words):
    assert result.is_error and words in result.content[0].text, result.content[0].text
    return result.content[0].text


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_tool_in_both_eras(mode, tmp_path):
    async with Client(spyglass("--allow-writes"), mode=mode) as client:
        listed = (await client.list_tools()).tools
        assert {t.name for t in listed} == set(TOOLS)
        assert all(t.output_schema and t.annotations is not None for t in listed)
        ok(await call(client, "spyglass_connect", name="demo", command=demo_cmd()))
        ok(await call(client, "spyglass_connect", name="sdk", command=[sys.executable, str(SDK_SERVER)],
                      era="legacy"))
        servers = ok(await call(client, "spyglass_servers"))["servers"]
        assert [s["status"] for s in servers] == ["connected", "connected"]
        tools = ok(await call(client, "spyglass_list", server="demo"))
        assert tools["count"] > 5
        for kind in ("resources", "templates", "prompts"):
            assert ok(await call(client, "spyglass_list", server="demo", kind=kind))["count"] >= 1
        done = ok(await call(client, "spyglass_call", server="sdk", tool="add", arguments={"a": 2, "b": 3}))
        assert done["outcome"] == "ok" and done["result"]["structuredContent"] == {"result": 5}
        assert "Hello" in str(ok(await call(client, "spyglass_read", server="sdk", uri="sdk://hello")))
        assert ok(await call(client, "spyglass_prompt", server="sdk", name="review", arguments={"code": "x"}))
        assert "values" in ok(await call(client, "spyglass_complete", server="demo", ref="prompt:greeting",
                                         argument="style", value=""))
        page = ok(await call(client, "spyglass_traffic", server="sdk", filter='tool == "add"'))
        assert [f["dir"] for f in page["frames"]] == ["out", "in"]
        assert ok(await call(client, "spyglass_log", server="sdk"))["entries"]
        if mode == "legacy":  # the check itself is the same in both eras: once is enough
            report = ok(await call(client, "spyglass_check", server="sdk"))
            assert "summary" in report and report["server"]["name"] == "sdk"
        again = ok(await call(client, "spyglass_rerun", server="sdk"))
        assert again["same"] is True
        diff = ok(await call(client, "spyglass_diff", a="demo", b="sdk"))
        assert "echo" not in diff["tools"]["onlyA"] and "weather" in diff["tools"]["onlyA"]
        saved = ok(await call(client, "spyglass_save", path=str(tmp_path / "a.mcpsession"), server="sdk"))
        assert saved["frames"] > 0
        ok(await call(client, "spyglass_restart", server="sdk"))
        assert ok(await call(client, "spyglass_disconnect", server="sdk"))["closed"] is True


async def test_bad_input_gets_precise_tool_errors():
    async with Client(spyglass(), mode="legacy") as client:
        refused(await call(client, "spyglass_call", server="ghost", tool="x"), "no server named 'ghost' is open")
        ok(await call(client, "spyglass_connect", name="ev", command=everything_cmd()))
        refused(await call(client, "spyglass_call", server="ev", tool="nope"), "has no tool named 'nope'")
        text = refused(await call(client, "spyglass_call", server="ev", tool="get-sum", arguments={"a": "x"}),
                       "do not fit its inputSchema")
        assert "/a" in text and "'b' is a required property" in text
        refused(await call(client, "spyglass_traffic", filter="latency > "), "the filter does not parse")
        refused(await call(client, "spyglass_traffic", limit=100000), "limit")
        refused(await call(client, "spyglass_connect", name="x"), "exactly one of")
        refused(await call(client, "spyglass_list", server="ev", kind="widgets"), "kind")
        refused(await call(client, "spyglass_call", server="ev", tool="toggle-simulated-logging"),
                "may change things")
        big = ok(await call(client, "spyglass_call", server="ev", tool="get-sum", arguments={"a": 1, "b": 2}))
        assert big["outcome"] == "ok"
        huge = ok(await call(client, "spyglass_traffic", limit=500))
        assert len(json.dumps(huge)) < 200_000


BUGGY = '''
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("edited")


@server.tool(description="Divide a by b.")
def divide(a: float, b: float) -> float:
    {body}


if __name__ == "__main__":
    server.run("stdio")
'''


async def test_the_agent_loop_edit_restart_rerun_compare(tmp_path):
    source = tmp_path / "server.py"
    source.write_text(textwrap.dedent(BUGGY).format(body='raise ToolError("not implemented yet")'))
    async with Client(spyglass("--allow-writes"), mode="2026-07-28") as client:
        ok(await call(client, "spyglass_connect", name="mine", command=[sys.executable, str(source)]))
        first = ok(await call(client, "spyglass_call", server="mine", tool="divide", arguments={"a": 6, "b": 3}))
        assert first["outcome"] == "tool error"
        errors = ok(await call(client, "spyglass_traffic", server="mine", filter='tool == "divide" && dir == in'))
        assert "not implemented yet" in errors["frames"][0]["text"]
        source.write_text(textwrap.dedent(BUGGY).format(body="return a / b"))
        restarted = ok(await call(client, "spyglass_restart", server="mine"))
        assert restarted["status"] == "connected"
        compared = ok(await call(client, "spyglass_rerun", server="mine"))
        assert compared["same"] is False and compared["after"]["outcome"] == "ok"
        assert compared["after"]["result"]["structuredContent"] == {"result": 2.0}
        markers = ok(await call(client, "spyglass_traffic", server="mine", filter="restarted"))
        assert markers["matched"] == 1


def test_spyglass_check_finds_nothing_and_the_list_costs_under_4000_tokens():
    assert list_cost(definitions()).tokens < 4000
    server = [sys.executable, "-m", "inspector", "mcp", "--private"]  # no background process left behind
    run = subprocess.run([sys.executable, "-m", "inspector", "check", "--format", "json", "--call", "read-only", "--",
                          *server], capture_output=True, text=True, timeout=60, env=dict(os.environ))
    report = json.loads(run.stdout)
    assert run.returncode == 0 and report["findings"] == [], report["findings"]
    assert report["cost"]["tokens"] < 4000


def test_http_on_loopback_behind_the_printed_token():
    import httpx

    proc = subprocess.Popen([sys.executable, "-m", "inspector", "mcp", "--private", "--http", "0"],
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        lines = [proc.stderr.readline(), proc.stderr.readline()]
        url = lines[0].split("serving ")[1].split()[0]
        token = lines[1].split("token: ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        heads = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        assert httpx.post(url, json=hello, headers=heads, timeout=10).status_code == 401
        wrong = httpx.post(url, json=hello, headers={**heads, "Authorization": "Bearer nope"}, timeout=10)
        assert wrong.status_code == 401
        right = httpx.post(url, json=hello, headers={**heads, "Authorization": f"Bearer {token}"}, timeout=10)
        assert right.status_code == 200 and "spyglass" in right.text
        lower = httpx.post(url, json=hello, headers={**heads, "Authorization": f"bearer {token}"}, timeout=10)
        assert lower.status_code == 200  # the scheme's case is not significant (RFC 9110 §11.1)
        for near in (f"Bearer {token}x", f"Bearer  {token}", f"Basic {token}", token):
            assert httpx.post(url, json=hello, headers={**heads, "Authorization": near}, timeout=10).status_code == 401
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_an_agent_that_goes_away_mid_call_ends_spyglass_mcp_quietly():
    """The agent's host quits (both pipes closed) while a call waits on a server that never answers:
    spyglass mcp ends with 0 and says nothing, rather than an internal error about the closed pipe."""
    from support import hostile_cmd

    proc = subprocess.Popen([sys.executable, "-m", "inspector", "mcp", "--private", "--allow-writes"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def send(message):
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        proc.stdin.flush()

    try:
        send({"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                          "clientInfo": {"name": "t", "version": "1"}}})
        assert b'"id":1' in proc.stdout.readline()
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "tools/call", "params": {"name": "spyglass_connect", "arguments": {
            "name": "hang", "command": hostile_cmd("no-reply")}}})
        assert b'"connected"' in proc.stdout.readline()
        send({"id": 3, "method": "tools/call", "params": {"name": "spyglass_call", "arguments": {
            "server": "hang", "tool": "echo", "arguments": {"message": "x"}}}})
        proc.stdout.close()  # the host is gone: nobody reads, nobody writes
        proc.stdin.close()
        err = proc.stderr.read().decode()
        assert proc.wait(30) == 0 and "internal error" not in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
