"""`spyglass mcp` driven by the official inspector's CLI (@modelcontextprotocol/inspector, pinned in tests/peers, on
its Node 22): it lists Spyglass's tools and calls them, one process per command as that CLI works, so the
connection opened by one command is found by the next through the background process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support import PEERS, PY, ROOT, SLOWDOWN

from inspector.agent.remote import IDLE_ENV, SOCKET_ENV
from inspector.agent.tools import TOOLS

# by their real paths: in a worktree node_modules is a link, and the CLI finds its own files from where it runs
NODE = os.path.realpath(PEERS / "node_modules" / ".bin" / "node")
OFFICIAL = os.path.realpath(PEERS / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "cli" / "build"
                            / "index.js")


def official(env: dict[str, str], *options: str) -> tuple[int, dict]:
    """One run of the official CLI against `spyglass mcp` (the server gets only the variables given with -e)."""
    passed = [f"{k}={env[k]}" for k in (SOCKET_ENV, IDLE_ENV, "PYTHONPATH")]
    argv = [NODE, OFFICIAL, PY, "-m", "inspector", "mcp", "--", *[w for kv in passed for w in ("-e", kv)],
            *options, "--format", "json"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60 * SLOWDOWN, env=env, cwd=str(ROOT))
    assert proc.stdout.strip(), proc.stderr[-2000:]
    return proc.returncode, json.loads(proc.stdout)


def test_the_official_cli_lists_and_calls_spyglass_tools(tmp_path):
    assert os.path.exists(NODE) and os.path.exists(OFFICIAL), "run `make peers` (npm ci in tests/peers)"
    env = {**os.environ, SOCKET_ENV: str(tmp_path / "s" / "agent.sock"), IDLE_ENV: "120", "HOME": str(tmp_path),
           "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "MCP_STORAGE_DIR": str(tmp_path / "store")}
    try:
        code, listed = official(env, "--method", "tools/list")
        assert code == 0
        tools = {t["name"]: t for t in listed["result"]["tools"]}
        assert set(tools) == set(TOOLS)
        assert tools["spyglass_call"]["annotations"]["destructiveHint"] is True
        assert tools["spyglass_connect"]["annotations"]["destructiveHint"] is True  # a command is any program
        traffic = tools["spyglass_traffic"]
        assert traffic["annotations"]["readOnlyHint"] is True and traffic["outputSchema"]["type"] == "object"

        code, opened = official(env, "--method", "tools/call", "--tool-name", "spyglass_connect",
                                "--tool-args-json", json.dumps({"name": "demo", "catalog": "demo"}))
        assert code == 0 and opened["result"]["structuredContent"]["status"] == "connected", opened

        # a second run of the CLI is a second spyglass mcp: the server opened by the first is still there
        code, called = official(env, "--method", "tools/call", "--tool-name", "spyglass_call", "--tool-args-json",
                                json.dumps({"server": "demo", "tool": "echo", "arguments": {"message": "hi"}}))
        answer = called["result"]["structuredContent"]
        assert code == 0 and answer["outcome"] == "ok" and answer["result"]["content"] == [{"type": "text",
                                                                                             "text": "hi"}]
        assert json.loads(called["result"]["content"][0]["text"]) == answer

        code, wrong = official(env, "--method", "tools/call", "--tool-name", "spyglass_call", "--tool-args-json",
                               json.dumps({"server": "demo", "tool": "echo", "arguments": {"message": 5}}))
        assert wrong["result"]["isError"] is True, wrong
        assert "/message: 5 is not of type 'string'" in wrong["result"]["content"][0]["text"]
    finally:
        subprocess.run([sys.executable, "-m", "inspector", "do", "stop"], env=env, capture_output=True, timeout=30)
