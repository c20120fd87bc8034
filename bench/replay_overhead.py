"""Benchmark: the overhead of `spyglass replay` per request, against a raw client sending the same requests.

A session of N tools/call requests is recorded against the demo server (stdio), then, alternated in
one run, (a) the baseline: one Client connects and sends the N recorded requests back to back,
answers ignored; (b) the replay: the recording is opened from its file, the server rebuilt from the
frames, the N requests replayed and every answer compared with the recorded one. Both start one server
process and connect the same way; prints the medians, the overhead per request and the ratio.

    python bench/replay_overhead.py [ROUNDS] [--requests N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from inspector.client import Client
from inspector.config import ServerSpec
from inspector.recording.files import definition_of, open_session
from inspector.recording.replay import RecordedAnswers, clean_params, replay, requests_of
from inspector.session import ServerSession, SessionOptions
from inspector.traffic import TrafficStore
from inspector.transport.factory import TransportOptions, open_transport

SPEC = ServerSpec(name="demo", command=[sys.executable, "-m", "inspector.demo"])
OPTIONS = SessionOptions(mode="legacy", load_lists=False, listen=False, heartbeat_s=None)


async def record(path: Path, count: int) -> None:
    store = TrafficStore(path)
    store.set_meta("server:demo", json.dumps(definition_of(SPEC)))
    session = ServerSession(SPEC, "demo", OPTIONS, traffic=store.hook("demo"))
    await session.open(open_transport(SPEC, TransportOptions()))
    client = session.need_client()
    for i in range(count):
        await client.call_tool("echo", {"message": f"message {i}"})
    await session.close()
    store.close()


async def baseline(path: Path) -> float:
    surface = open_session(path).surface()  # not timed: the baseline knows its requests already
    todo = [(x.method, clean_params(x.params)) for x in requests_of(surface)]
    start = time.perf_counter()
    client = Client(open_transport(SPEC, TransportOptions()).transport, mode="legacy")
    async with client:
        for method, params in todo:
            await client.request(method, params)
    return time.perf_counter() - start


async def replayed(path: Path) -> float:
    start = time.perf_counter()
    surface = open_session(path).surface()
    session = ServerSession(SPEC, "demo", OPTIONS, answerer=RecordedAnswers(surface))
    await session.open(open_transport(SPEC, TransportOptions()))
    report = await replay(surface, session)
    await session.close()
    elapsed = time.perf_counter() - start
    if report.differs:
        raise SystemExit("the replay found differences against the server that made the recording")
    return elapsed


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("rounds", nargs="?", type=int, default=5)
    p.add_argument("--requests", type=int, default=1000)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "recorded.sqlite"
        asyncio.run(record(path, a.requests))
        asyncio.run(baseline(path)), asyncio.run(replayed(path))  # warm up
        base, rep = [], []
        for _ in range(a.rounds):
            base.append(asyncio.run(baseline(path)))
            rep.append(asyncio.run(replayed(path)))
    m_base, m_rep = statistics.median(base), statistics.median(rep)
    print(f"rounds: {a.rounds}, requests: {a.requests}")
    print(f"raw client, same requests   median {m_base * 1000:8.1f} ms  ({m_base / a.requests * 1e6:6.1f} us/request)")
    print(f"spyglass replay (+ compare) median {m_rep * 1000:8.1f} ms  ({m_rep / a.requests * 1e6:6.1f} us/request)")
    print(f"overhead per request: {(m_rep - m_base) / a.requests * 1e6:.1f} us; ratio (replay / raw): "
          f"{m_rep / m_base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
