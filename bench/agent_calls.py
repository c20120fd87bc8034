"""Benchmark: what an agent pays to reach a server through Spyglass, against a raw call, in one run.

On one open stdio connection to the demo server, a `tools/call` of `echo`:

* raw: a minimal newline-JSON client in this process, on its own open connection (the floor);
* do (hop): the same call through the background process's socket from this process (`Remote.request`),
  what `spyglass do NAME call` costs beyond starting its own process (goal <= 1.5x raw);
* do (command): `spyglass do NAME call echo message=hi` as a shell runs it, and the start of that
  process alone (`python -m inspector do --help`), stated separately;
* mcp: `tools/call spyglass_call` from the SDK's client to `spyglass mcp` (forwarding to the background
  process, and `--private`), against raw (goal <= 1.3x).

Usage: python bench/agent_calls.py [ROUNDS]   (prints medians in ms and the ratios; exits 1 when a goal is
missed)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp import Client, StdioServerParameters  # noqa: E402

from inspector.agent.remote import SOCKET_ENV, Remote  # noqa: E402

DEMO = [sys.executable, "-m", "inspector.demo"]
ARGS = {"message": "hi"}


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def raw(rounds: int) -> list[float]:
    proc = await asyncio.create_subprocess_exec(*DEMO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                stderr=subprocess.DEVNULL)
    assert proc.stdin and proc.stdout

    async def ask(i: int, method: str, params: dict | None = None) -> dict:
        msg = {"jsonrpc": "2.0", "id": i, "method": method, **({"params": params} if params else {})}
        proc.stdin.write(json.dumps(msg).encode() + b"\n")
        while True:
            reply = json.loads(await proc.stdout.readline())
            if reply.get("id") == i:
                return reply

    await ask(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "raw", "version": "0"}})
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    out = []
    for i in range(1, rounds + 1):
        t = time.perf_counter()
        await ask(i, "tools/call", {"name": "echo", "arguments": ARGS})
        out.append(time.perf_counter() - t)
    proc.stdin.close()
    await proc.wait()
    return out


async def hop(rounds: int) -> list[float]:
    remote = Remote()
    await remote.connect()
    await remote.request("spyglass_connect", {"name": "bench", "command": DEMO})
    call = {"server": "bench", "tool": "echo", "arguments": ARGS}
    await remote.request("spyglass_call", call, allow_writes=True)
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        await remote.request("spyglass_call", call, allow_writes=True)
        out.append(time.perf_counter() - t)
    await remote.close()
    return out


def command(rounds: int, env: dict[str, str]) -> tuple[list[float], list[float]]:
    calls, starts = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "inspector", "do", "bench", "call", "echo", "message=hi",
                        "--allow-writes"], env=env, check=True, capture_output=True)
        calls.append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "inspector", "do", "--help"], env=env, check=True, capture_output=True)
        starts.append(time.perf_counter() - t)
    return calls, starts


async def mcp(rounds: int, env: dict[str, str], *extra: str) -> list[float]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "inspector", "mcp", "--allow-writes", *extra],
                                   env=env)
    out = []
    async with Client(params, mode="legacy") as client:
        if extra:
            await client.call_tool("spyglass_connect", {"name": "bench", "command": DEMO})
        call = {"server": "bench", "tool": "echo", "arguments": ARGS}
        await client.call_tool("spyglass_call", call)
        for _ in range(rounds):
            t = time.perf_counter()
            result = await client.call_tool("spyglass_call", call)
            out.append(time.perf_counter() - t)
            assert not result.is_error, result.content
    return out


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    folder = tempfile.mkdtemp(prefix="sg-bench-")
    os.environ[SOCKET_ENV] = os.path.join(folder, "agent.sock")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        r = median_ms(asyncio.run(raw(rounds)))
        h = median_ms(asyncio.run(hop(rounds)))
        shared = median_ms(asyncio.run(mcp(rounds, env)))
        private = median_ms(asyncio.run(mcp(rounds, env, "--private")))
        calls, starts = command(max(3, rounds // 10), env)
        c, s = median_ms(calls), median_ms(starts)
    finally:
        subprocess.run([sys.executable, "-m", "inspector", "do", "stop"], env=env, capture_output=True)
    print(f"raw tools/call, open connection:        {r:7.2f} ms")
    print(f"spyglass do hop (socket, in-process):   {h:7.2f} ms  ratio {h / r:.2f}x (goal <= 1.5x)")
    print(f"spyglass do NAME call (a command):      {c:7.2f} ms  of which process start {s:.1f} ms; "
          f"beyond it {c - s:.2f} ms ({(c - s) / r:.2f}x raw)")
    print(f"MCP tools/call via spyglass mcp:        {shared:7.2f} ms  ratio {shared / r:.2f}x (goal <= 1.3x)")
    print(f"MCP tools/call via spyglass mcp --private: {private:5.2f} ms  ratio {private / r:.2f}x")
    if h / r > 1.5 or shared / r > 1.3:
        sys.exit(1)  # as every bench: a missed goal is a failure


if __name__ == "__main__":
    main()
