"""`spyglass do` and the background process it shares with `spyglass mcp`: connections that stay open between
commands, the same servers and traffic seen from a shell and from an agent's MCP session, `--cli`'s envelope
and exit codes, and no server process left behind when the background process is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from mcp import Client, StdioServerParameters
from support import demo_cmd

from inspector.agent.remote import IDLE_ENV, SOCKET_ENV


@pytest.fixture
def env(tmp_path):
    environ = {**os.environ, SOCKET_ENV: str(tmp_path / "s" / "agent.sock"),
               IDLE_ENV: "120"}  # a test that fails midway leaves no process for long
    yield environ
    subprocess.run([sys.executable, "-m", "inspector", "do", "stop"], env=environ, capture_output=True, timeout=30)


def do(env, *words, code=0):
    run = subprocess.run([sys.executable, "-m", "inspector", "do", *words], env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == code, run.stderr
    assert "Traceback" not in run.stderr
    return json.loads(run.stdout), run.stderr


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"


async def test_a_shell_and_an_agent_share_the_servers(env, tmp_path):
    opened, _ = do(env, "open", "demo", "--", *demo_cmd())
    assert opened["status"] == "connected"
    assert (tmp_path / "s").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "s" / "agent.sock").stat().st_mode & 0o777 == 0o600
    done, _ = do(env, "demo", "call", "weather", "city=Oslo")
    assert done["outcome"] == "ok"
    params = StdioServerParameters(command=sys.executable, args=["-m", "inspector", "mcp"], env=env)
    async with Client(params, mode="legacy") as client:
        servers = (await client.call_tool("spyglass_servers", {})).structured_content["servers"]
        assert [s["name"] for s in servers] == ["demo"] and servers[0]["calls"] == 1
        await client.call_tool("spyglass_call", {"server": "demo", "tool": "echo", "arguments": {"message": "hi"}})
    page, _ = do(env, "demo", "traffic", 'method == "tools/call" && dir == out', "--no-bodies")
    assert page["matched"] == 2  # the shell's call and the agent's, in one traffic
    listed, _ = do(env, "demo", "tools")
    assert listed["count"] > 5
    assert do(env, "demo", "read", "demo://docs/welcome.txt")[0]["result"]["contents"]
    restarted, _ = do(env, "demo", "restart")
    assert restarted["status"] == "connected"
    assert do(env, "ls")[0]["servers"][0]["name"] == "demo"
    assert do(env, "demo", "close")[0]["closed"] is True


def test_failures_have_the_cli_envelope_and_exit_codes(env):
    out, err = do(env, "ghost", "tools", code=1)
    assert out["error"]["kind"] == "unknown_server" and json.loads(err.strip().splitlines()[-1]) == out
    do(env, "open", "demo", "--catalog", "demo")
    out, _ = do(env, "demo", "call", "nope", code=5)
    assert out["error"]["code"] == "tool_not_found"
    out, _ = do(env, "demo", "call", "weather", "city=5", "units=kelvin", code=1)
    assert out["error"]["kind"] == "invalid_arguments" and "/units" in out["error"]["message"]
    out, _ = do(env, "demo", "call", "delete_item", "id=item-1", "confirm=true", code=1)
    assert out["error"]["kind"] == "refused"
    out, _ = do(env, "demo", "call", "delete_item", "id=item-1", "confirm=true", "--allow-writes")
    assert out["outcome"] == "ok"
    out, _ = do(env, "demo", "traffic", "latency >", code=1)
    assert out["error"]["kind"] == "bad_filter"
    out, _ = do(env, "frob", code=1)
    assert out["error"]["kind"] == "usage"


# the demo server, living on after its stdin closes: only the kernel's parent-death signal ends it
STUBBORN = [sys.executable, "-c", "import time; from inspector.demo.server import main; main(); time.sleep(600)"]


def test_a_killed_background_process_leaves_no_server(env, tmp_path):
    do(env, "open", "a", "--", *STUBBORN)
    do(env, "open", "b", "--", *demo_cmd())
    pids = [s["pid"] for s in do(env, "ls")[0]["servers"]]
    assert all(alive(p) for p in pids)
    with open(f"/proc/{pids[0]}/stat") as f:
        daemon = int(f.read().split(")")[-1].split()[1])  # the server's parent: the background process
    os.kill(daemon, signal.SIGKILL)
    end = time.monotonic() + 10
    while any(alive(p) for p in pids):
        assert time.monotonic() < end, "a server outlived the killed background process"
        time.sleep(0.02)


async def test_requests_however_the_bytes_arrive_and_a_client_that_leaves_mid_request(env):
    """The background process reads its socket a line at a time however the bytes come (a request split over two
    writes, two requests in one write: each answered); a client that closes while its request runs gets "went
    away" at once (it waited for ever: its reader was cancelled before it could say so)."""
    import asyncio
    from pathlib import Path

    from support import hostile_cmd

    from inspector.agent.errors import AgentError
    from inspector.agent.remote import Remote

    path = Path(env[SOCKET_ENV])
    first = Remote(path)
    await first.connect()
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(b'{"id": 1, "tool": "spyglass_ser')
    await writer.drain()
    writer.write(b'vers", "arguments": {}}\n{"id": 2, "tool": "spyglass_servers", "arguments": {}}\n')
    replies = [json.loads(await reader.readline()) for _ in range(2)]
    assert sorted(r["id"] for r in replies) == [1, 2] and all(r["ok"] for r in replies)
    writer.close()
    await first.request("spyglass_connect", {"name": "hang", "command": hostile_cmd("no-reply")})
    call = asyncio.ensure_future(first.request("spyglass_call", {"server": "hang", "tool": "echo",
                                                                 "arguments": {"message": "x"}}, allow_writes=True))
    other = Remote(path)
    await other.connect(start=False)
    while (await other.request("spyglass_servers"))["servers"][0]["calls"] < 1:
        pass  # each answer is a round trip through the background process: the call is recorded when sent
    await first.close()
    with pytest.raises(AgentError, match="went away during the request"):
        await asyncio.wait_for(call, 30)
    await other.close()
