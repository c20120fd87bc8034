"""`spyglass do` and the background process it shares with `spyglass mcp`: connections that stay open between
commands, the same servers and traffic seen from a shell and from an agent's MCP session, `--cli`'s envelope
and exit codes, and no server process left behind when the background process is killed."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest
from mcp import Client, StdioServerParameters
from support import demo_cmd

import inspector
from inspector.agent.remote import IDLE_ENV, SOCKET_ENV


@pytest.fixture
def env(tmp_path):
    environ = {**os.environ, SOCKET_ENV: str(tmp_path / "s" / "agent.sock"),
               IDLE_ENV: "120"}  # a test that fails midway leaves no process for long
    yield environ
    subprocess.run([sys.executable, "-m", "inspector", "do", "stop"], env=environ, capture_output=True, timeout=30)


def do(env, *words, code=0, cwd=None):
    run = subprocess.run([sys.executable, "-m", "inspector", "do", *words], env=env, capture_output=True, text=True,
                         timeout=60, cwd=cwd)
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
    assert "open it first with `spyglass do open ghost …`" in out["error"]["message"]  # what a shell does
    do(env, "open", "demo", "--catalog", "demo")
    out, _ = do(env, "demo", "call", "nope", code=5)
    assert out["error"]["code"] == "tool_not_found"
    out, _ = do(env, "demo", "call", "weather", "city=5", "units=kelvin", code=1)
    assert out["error"]["kind"] == "invalid_arguments" and "/units" in out["error"]["message"]
    assert "add --no-validate to test the server's own checking" in out["error"]["message"]
    out, _ = do(env, "demo", "call", "delete_item", "id=item-1", "confirm=true", code=1)
    assert out["error"]["kind"] == "refused"
    assert "or when you add --allow-writes to the command" in out["error"]["message"]
    out, _ = do(env, "demo", "call", "delete_item", "id=item-1", "confirm=true", "--allow-writes")
    assert out["outcome"] == "ok"
    out, err = do(env, "demo", "call", "divide", "a=6", "b=0", code=5)  # the tool's isError: as --cli says it
    assert out["outcome"] == "tool error"
    cli = subprocess.run([sys.executable, "-m", "inspector", "--cli", "--method", "tools/call", "--tool-name", "divide",
                          "--tool-arg", "a=6", "--tool-arg", "b=0", "--", *demo_cmd()], env=env, capture_output=True,
                         text=True, timeout=60)
    assert cli.returncode == 5
    assert err.splitlines()[-2:] == ["spyglass do: " + cli.stderr.splitlines()[-2].removeprefix("spyglass: "),
                                     cli.stderr.splitlines()[-1]]
    assert "Cannot divide 6 by zero" in err.splitlines()[-1]
    out, _ = do(env, "demo", "traffic", "latency >", code=1)
    assert out["error"]["kind"] == "bad_filter"
    out, err = do(env, "frob", code=1)
    assert out["error"]["kind"] == "usage"
    assert err.splitlines()[0] == ("spyglass do: expected one of tools, call, read, traffic, restart, close, log, "
                                   "check, prompt, save after the name 'frob' (or open, ls, stop)")


def test_a_server_that_cannot_be_reached_exits_as_cli_does(env):
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/mcp"
    out, _ = do(env, "open", "gone", url, code=4)
    cli = subprocess.run([sys.executable, "-m", "inspector", "--cli", url, "--method", "tools/list"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 4 and out["error"]["code"] == json.loads(cli.stdout)["error"]["code"] == "unreachable"
    out, _ = do(env, "gone", "tools", code=1)  # it stays listed, in error: said once
    message = out["error"]["message"]
    assert message.startswith("server 'gone' is not connected (error: cannot connect to ") and message.count(url) == 1


def test_relative_paths_are_the_callers_not_the_background_process(env, tmp_path):
    """The background process runs in the folder of the command that started it; a later command in another
    folder names its server, its program and the file it saves from where it stands."""
    first, project = tmp_path / "first", tmp_path / "project"
    first.mkdir()
    project.mkdir()
    (project / "server.py").write_text("from inspector.demo.server import main\nmain()\n")
    # the server below runs on a link to Python outside the venv's folder, which starts the base interpreter
    # (no pyvenv.cfg beside it): it finds `inspector` by the path the background process passes on
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(inspector.__file__)))
    env = {**env, "PYTHONPATH": os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)}
    do(env, "ls", cwd=first)  # starts the background process in `first`
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mypython").symlink_to(sys.executable)
    here = {**env, "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"}
    opened, _ = do(here, "open", "mine", "--", "mypython", "server.py", cwd=project)
    assert opened["status"] == "connected" and opened["target"].startswith(str(bin_dir / "mypython"))
    saved, _ = do(env, "mine", "save", "run.mcpsession", cwd=project)
    assert saved["path"] == str(project / "run.mcpsession") and (project / "run.mcpsession").is_file()
    assert not (first / "run.mcpsession").exists()


# the demo server, living on after its stdin closes: only the kernel's parent-death signal ends it
STUBBORN = [sys.executable, "-c", "import time; from inspector.demo.server import main; main(); time.sleep(600)"]


def members(group):
    """The processes of a process group (their pids), read from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[2]) == group:
                        found.append(int(entry))
            except (OSError, IndexError):
                continue
    return found


def test_a_killed_background_process_leaves_no_server(env, tmp_path):
    """Nor what a server started: one run through a wrapper (here `sh -c`, as `npx` or `uv run` do) is the
    wrapper's child, which the kernel's parent-death signal does not reach: the watchdog ends its group."""
    do(env, "open", "a", "--", *STUBBORN)
    do(env, "open", "b", "--", *demo_cmd())
    do(env, "open", "c", "--", "sh", "-c", shlex.join(STUBBORN) + "; :")
    pids = [s["pid"] for s in do(env, "ls")[0]["servers"]]
    wrapped = [p for p in members(pids[2]) if p != pids[2]]
    assert wrapped  # the server itself, under sh
    pids += wrapped
    assert all(alive(p) for p in pids)
    with open(f"/proc/{pids[0]}/stat") as f:
        daemon = int(f.read().split(")")[-1].split()[1])  # the server's parent: the background process
    os.kill(daemon, signal.SIGKILL)
    end = time.monotonic() + 10
    try:
        while any(alive(p) for p in pids):
            assert time.monotonic() < end, "a server outlived the killed background process"
            time.sleep(0.02)
    finally:
        for pid in pids:  # what a failure left running goes now
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


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
