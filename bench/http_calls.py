"""Benchmark: sequential `tools/call` over Streamable HTTP on loopback, through
Spyglass's client and through the official Python SDK's client, alternated in
one run against the same server.

The server is server-everything in streamableHttp mode (its `get-sum` tool, a
legacy-era session) by default; `--sdk` uses the SDK peer in
tests/peers/sdk_server.py in the 2026-07-28 era instead (whose own tools/call
handling takes ~45 ms, so it measures the server more than the clients).

A third contender is the floor: the same calls as bare `httpx` POSTs in the
same session, each answer read whole and nothing else done with it (no SSE
parsing, no JSON, no pairing): what any client on that HTTP library costs.

Prints calls per second for each and the ratios; goal: Spyglass >= 1.2x the
SDK (exit 1 when missed).
Usage: python bench/http_calls.py [CALLS] [--sdk]
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from alternate import alternate_all

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import http_peers  # noqa: E402

from inspector.client import Client  # noqa: E402
from inspector.transport.http import HttpTransport  # noqa: E402

ROUNDS = 10
GOAL = 1.2  # Spyglass's calls per second over the SDK's


def check(result_text: str, i: int) -> None:
    assert str(i + 1) in result_text, result_text


async def spyglass_calls(url: str, n: int, mode: str, tool: str):
    async with Client(HttpTransport(url), mode=mode, timeout=30) as client:
        await client.call_tool(tool, {"a": 1, "b": 2})  # warm up
        for _ in range(ROUNDS):
            start = time.perf_counter()
            for i in range(n // ROUNDS):
                result = await client.call_tool(tool, {"a": i, "b": 1})
                check(result["content"][0]["text"], i)
            yield time.perf_counter() - start


async def floor_calls(url: str, n: int, mode: str, tool: str):
    """Bare httpx POSTs in a session of Spyglass's client (kept open meanwhile)."""
    import httpx

    async with Client(HttpTransport(url), mode=mode, timeout=30) as client:
        transport = client.transport
        assert isinstance(transport, HttpTransport)
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                   "Mcp-Protocol-Version": client.protocol_version or ""}
        if transport.session_id:
            headers["Mcp-Session-Id"] = transport.session_id
        async with httpx.AsyncClient() as http:
            wire_id = 10 ** 6
            for _ in range(ROUNDS):
                start = time.perf_counter()
                for i in range(n // ROUNDS):
                    wire_id += 1
                    body = json.dumps({"jsonrpc": "2.0", "id": wire_id, "method": "tools/call",
                                       "params": {"name": tool, "arguments": {"a": i, "b": 1}}}).encode()
                    async with http.stream("POST", url, content=body, headers=headers) as resp:
                        answer = b"".join([chunk async for chunk in resp.aiter_bytes()])
                    check(answer.decode(), i)
                yield time.perf_counter() - start


async def sdk_calls(url: str, n: int, mode: str, tool: str):
    from mcp import Client as SdkClient

    async with SdkClient(url, mode=mode) as client:
        await client.call_tool(tool, {"a": 1, "b": 2})
        for _ in range(ROUNDS):
            start = time.perf_counter()
            for i in range(n // ROUNDS):
                result = await client.call_tool(tool, {"a": i, "b": 1})
                check(result.content[0].text, i)
            yield time.perf_counter() - start


async def run(url: str, n: int, modern: bool) -> bool:
    mode, tool = ("auto", "add") if modern else ("legacy", "get-sum")
    gens = [spyglass_calls(url, n, mode, tool).__aiter__(), sdk_calls(url, n, mode, tool).__aiter__(),
            floor_calls(url, n, mode, tool).__aiter__()]
    t_ours, t_sdk, t_floor = await alternate_all(gens, ROUNDS)  # batches of n/ROUNDS calls, in turn
    per = n // ROUNDS
    ours_rate, sdk_rate, floor_rate = (per / statistics.median(t) for t in (t_ours, t_sdk, t_floor))
    print(f"calls: {n} each ({ROUNDS} alternated batches of {per}), era: {'modern' if modern else 'legacy'}, "
          f"tool: {tool}")
    print(f"spyglass client  {ours_rate:8.1f} calls/s  (median batch {statistics.median(t_ours) * 1000:.1f} ms)")
    print(f"official SDK     {sdk_rate:8.1f} calls/s  (median batch {statistics.median(t_sdk) * 1000:.1f} ms)")
    print(f"bare httpx       {floor_rate:8.1f} calls/s  (median batch {statistics.median(t_floor) * 1000:.1f} ms)")
    print(f"ratio (spyglass / SDK): {ours_rate / sdk_rate:.2f}  (goal >= {GOAL})")
    print(f"ratio (spyglass / bare httpx): {ours_rate / floor_rate:.2f}  (1.0 is all a client on httpx can reach)")
    return ours_rate / sdk_rate >= GOAL


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 1000
    if "--sdk" in sys.argv:
        with http_peers.sdk() as url:
            met = asyncio.run(run(url, n, modern=True))
    else:
        with http_peers.everything("streamableHttp") as url:
            met = asyncio.run(run(url, n, modern=False))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
