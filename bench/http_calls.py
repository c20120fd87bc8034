"""Benchmark: sequential `tools/call` over Streamable HTTP on loopback, through
Spyglass's client and through the official Python SDK's client, alternated in
one run against the same server.

The server is server-everything in streamableHttp mode (its `get-sum` tool, a
legacy-era session) by default; `--sdk` uses the SDK peer in
tests/peers/sdk_server.py in the 2026-07-28 era instead (whose own tools/call
handling takes ~45 ms, so it measures the server more than the clients).

Prints calls per second for each and the ratio (goal: Spyglass >= the SDK).
Usage: python bench/http_calls.py [CALLS] [--sdk]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

from alternate import alternate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import http_peers  # noqa: E402

from inspector.client import Client  # noqa: E402
from inspector.transport.http import HttpTransport  # noqa: E402

ROUNDS = 10


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


async def run(url: str, n: int, modern: bool) -> None:
    mode, tool = ("auto", "add") if modern else ("legacy", "get-sum")
    ours = spyglass_calls(url, n, mode, tool).__aiter__()
    sdk = sdk_calls(url, n, mode, tool).__aiter__()
    t_ours, t_sdk = await alternate(ours, sdk, ROUNDS)  # batches of n/ROUNDS calls, in turn
    per = n // ROUNDS
    ours_rate = per / statistics.median(t_ours)
    sdk_rate = per / statistics.median(t_sdk)
    print(f"calls: {n} each ({ROUNDS} alternated batches of {per}), era: {'modern' if modern else 'legacy'}, "
          f"tool: {tool}")
    print(f"spyglass client  {ours_rate:8.1f} calls/s  (median batch {statistics.median(t_ours) * 1000:.1f} ms)")
    print(f"official SDK     {sdk_rate:8.1f} calls/s  (median batch {statistics.median(t_sdk) * 1000:.1f} ms)")
    print(f"ratio (spyglass / SDK): {ours_rate / sdk_rate:.2f}  (goal >= 1.0)")


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 1000
    if "--sdk" in sys.argv:
        with http_peers.sdk() as url:
            asyncio.run(run(url, n, modern=True))
    else:
        with http_peers.everything("streamableHttp") as url:
            asyncio.run(run(url, n, modern=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
