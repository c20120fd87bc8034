"""Benchmark: sequential `tools/call` over Streamable HTTP on loopback through the HTTP tap
(`spyglass tap --listen`, inspector/tap/http.py) against the same calls made directly, alternated in one run
against the same server with the same client (Spyglass's own).

The tap runs in its own process, as `spyglass tap` does, recording every frame to a session file. The server
is server-everything in streamableHttp mode (its `get-sum` tool, a legacy-era session whose answers come as
SSE streams) by default; `--sdk` uses the SDK peer in tests/peers/sdk_server.py in the 2026-07-28 era instead.

Prints calls per second for each and the ratio (goal: through the tap >= 0.8x direct).
Usage: python bench/tap_http.py [CALLS] [--sdk]
"""

from __future__ import annotations

import asyncio
import gzip
import os
import statistics
import subprocess
import sys
import tempfile
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
TAP = """
import sys
from pathlib import Path
from inspector.tap.http import run_proxy
from inspector.tap.record import TapRecorder
rec = TapRecorder(Path(sys.argv[2]), "bench", {"name": "bench", "url": sys.argv[1]}, live=False)
code = run_proxy("127.0.0.1", 0, sys.argv[1], rec, ready=lambda port: print(port, flush=True))
rec.close()
sys.exit(code)
"""


async def calls(url: str, n: int, mode: str, tool: str):
    async with Client(HttpTransport(url), mode=mode, timeout=30) as client:
        await client.call_tool(tool, {"a": 1, "b": 2})  # warm up
        for _ in range(ROUNDS):
            start = time.perf_counter()
            for i in range(n // ROUNDS):
                result = await client.call_tool(tool, {"a": i, "b": 1})
                assert str(i + 1) in result["content"][0]["text"], result
            yield time.perf_counter() - start


async def run(url: str, tapped: str, n: int, modern: bool) -> None:
    mode, tool = ("auto", "add") if modern else ("legacy", "get-sum")
    direct = calls(url, n, mode, tool).__aiter__()
    through = calls(tapped, n, mode, tool).__aiter__()
    t_direct, t_tap = await alternate(direct, through, ROUNDS)  # batches of n/ROUNDS calls, in turn
    per = n // ROUNDS
    direct_rate = per / statistics.median(t_direct)
    tap_rate = per / statistics.median(t_tap)
    print(f"calls: {n} each ({ROUNDS} alternated batches of {per}), era: {'modern' if modern else 'legacy'}, "
          f"tool: {tool}")
    print(f"direct           {direct_rate:8.1f} calls/s  (median batch {statistics.median(t_direct) * 1000:.1f} ms)")
    print(f"through the tap  {tap_rate:8.1f} calls/s  (median batch {statistics.median(t_tap) * 1000:.1f} ms)")
    print(f"ratio (tap / direct): {tap_rate / direct_rate:.2f}  (goal >= 0.8)")


def bench(url: str, n: int, modern: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="spyglass-bench-tap-") as folder:
        session = Path(folder) / "bench.mcpsession"
        tap = subprocess.Popen([sys.executable, "-c", TAP, url, str(session)], stdout=subprocess.PIPE,
                               cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            port = int(tap.stdout.readline())
            tapped = f"http://127.0.0.1:{port}{url[url.index('/', 8):]}"
            asyncio.run(run(url, tapped, n, modern))
        finally:
            tap.terminate()
            tap.wait(10)
            tap.stdout.close()
        with gzip.open(session, "rt") as fh:
            print(f"the tap recorded {sum(1 for _ in fh) - 2} frames")


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 1000
    if "--sdk" in sys.argv:
        with http_peers.sdk() as url:
            bench(url, n, modern=True)
    else:
        with http_peers.everything("streamableHttp") as url:
            bench(url, n, modern=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
