"""Benchmark: tools/call per second against `spyglass mock` and against the server it recorded, over stdio
and over Streamable HTTP, in one run.

stdio: a session of N `echo` calls is recorded against the demo server; the same N calls are then sent, by
one Spyglass Client each time, to the demo server and to `spyglass mock` of that session. Over HTTP the same
with the demo server serving Streamable HTTP (`python -m inspector.demo --http`) and `spyglass mock --http`
of the session recorded against it (the official SDK peer answers about 20 calls a second here: against it
any mock looks fast). Rounds alternate; medians are printed with the ratio (mock / server, calls per second). Exit 1
when the mock is the slower one on either transport.

    python bench/mock_calls.py [ROUNDS] [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from inspector.client import Client
from inspector.config import ServerSpec
from inspector.recording.files import definition_of
from inspector.session import ServerSession, SessionOptions
from inspector.traffic import TrafficStore
from inspector.transport.factory import TransportOptions, open_transport

ROOT = Path(__file__).resolve().parent.parent
DEMO = ServerSpec(name="demo", command=[sys.executable, "-m", "inspector.demo"])
DEMO_HTTP = [sys.executable, "-m", "inspector.demo", "--http", "--port", "0"]
OPTIONS = SessionOptions(mode="legacy", load_lists=False, listen=False, heartbeat_s=None)


async def record(spec: ServerSpec, path: Path, n: int, key: str) -> None:
    store = TrafficStore(path)
    store.set_meta(f"server:{spec.name}", json.dumps(definition_of(spec)))
    session = ServerSession(spec, spec.name, OPTIONS, traffic=store.hook(spec.name))
    await session.open(open_transport(spec, TransportOptions()))
    client = session.need_client()
    for i in range(n):
        await client.call_tool("echo", {key: f"message {i}"})
    await session.close()
    store.close()


async def timed(spec: ServerSpec, n: int, key: str) -> float:
    """Calls per second of N echo calls over one connection (the connection itself not timed)."""
    client = Client(open_transport(spec, TransportOptions()).transport, mode="legacy")
    async with client:
        start = time.perf_counter()
        for i in range(n):
            await client.request("tools/call", {"name": "echo", "arguments": {key: f"message {i}"}})
        return n / (time.perf_counter() - start)


class Listening:
    """A process that serves HTTP and says its URL on stderr (the demo server's, the mock's)."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv

    def __enter__(self) -> str:
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, cwd=str(ROOT))
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            found = re.search(r"http://127\.0\.0\.1:\d+/mcp", raw.decode())
            if found:
                return found.group(0)
        raise SystemExit(f"{self.argv[:3]} did not start")

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        if self.proc.stderr:
            self.proc.stderr.close()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("rounds", nargs="?", type=int, default=3)
    p.add_argument("--calls", type=int, default=300)
    a = p.parse_args()
    n = a.calls
    mock = [sys.executable, "-m", "inspector", "mock"]
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        demo_session = Path(folder) / "demo.sqlite"
        asyncio.run(record(DEMO, demo_session, n, "message"))
        mock_stdio = ServerSpec(name="mock", command=[*mock, str(demo_session)])
        server, mocked = [], []
        for _ in range(a.rounds):
            server.append(asyncio.run(timed(DEMO, n, "message")))
            mocked.append(asyncio.run(timed(mock_stdio, n, "message")))
        rows.append(("stdio (demo server)", statistics.median(server), statistics.median(mocked)))

        http_session = Path(folder) / "demo-http.sqlite"
        server, mocked = [], []
        with Listening(DEMO_HTTP) as url:
            asyncio.run(record(ServerSpec(name="demo", url=url), http_session, n, "message"))
            for _ in range(a.rounds):
                server.append(asyncio.run(timed(ServerSpec(name="demo", url=url), n, "message")))
                with Listening([*mock, str(http_session), "--http", "0"]) as mock_url:
                    mocked.append(asyncio.run(timed(ServerSpec(name="mock", url=mock_url), n, "message")))
        rows.append(("Streamable HTTP (demo server)", statistics.median(server), statistics.median(mocked)))
    print(f"rounds: {a.rounds}, calls per round: {n} (medians, calls per second)")
    slower = False
    for name, real, mocked_rate in rows:
        ratio = mocked_rate / real
        slower |= ratio < 1
        print(f"{name:30} server {real:8.0f}/s   mock {mocked_rate:8.0f}/s   ratio (mock / server) {ratio:5.2f}")
    if slower:
        print("the mock is slower than the server it stands in for")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
