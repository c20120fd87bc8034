"""Benchmark: Spyglass's own time per step of a collection, against the same calls made directly with the
client (the baseline, measured in the same run).

A collection of N steps (tools/call echo, each with a text expectation and every fifth saving a value
used by the next) runs against the demo server over one connection; the baseline sends the same N
calls with `Client.request` over a connection of its own. Both connect the same way; the connection is
not timed. Prints the medians, the ratio and the overhead per step (goal: under 2 ms).

    python bench/collection_steps.py [ROUNDS] [--steps N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from inspector.collection.load import load
from inspector.collection.run import StepAnswers, run
from inspector.config import ServerSpec
from inspector.session import ServerSession, SessionOptions
from inspector.transport.factory import TransportOptions, open_transport

SPEC = ServerSpec(name="demo", command=[sys.executable, "-m", "inspector.demo"])
OPTIONS = SessionOptions(mode="legacy", load_lists=False, listen=False, heartbeat_s=None)
GOAL_MS = 2.0


def write_collection(path: Path, steps: int) -> None:
    lines = ["name: bench", "steps:"]
    for i in range(steps):
        message = f"${{said{i - 1}}} {i}" if i % 5 == 1 else f"message {i}"
        lines.append(f"  - name: step {i}")
        lines.append("    call: echo")
        lines.append(f"    arguments: {{message: \"{message}\"}}")
        lines.append(f"    expect: {{isError: false, text: {{contains: \"{i}\"}}, maxMs: 10000}}")
        if i % 5 == 0:
            lines.append(f"    save: {{said{i}: /content/0/text}}")
    path.write_text("\n".join(lines) + "\n")


async def opened() -> ServerSession:
    session = ServerSession(SPEC, "demo", OPTIONS, answerer=StepAnswers())
    await session.open(open_transport(SPEC, TransportOptions()))
    return session


async def baseline(messages: list[str]) -> float:
    session = await opened()
    client = session.need_client()
    start = time.perf_counter()
    for message in messages:
        await client.request("tools/call", {"name": "echo", "arguments": {"message": message}})
    elapsed = time.perf_counter() - start
    await session.close()
    return elapsed


async def collection_run(path: Path) -> float:
    session = await opened()
    start = time.perf_counter()
    collection = load(path)  # reading and checking the file is part of the run
    report = await run(collection, session, StepAnswers())
    elapsed = time.perf_counter() - start
    await session.close()
    if report.failed:
        raise SystemExit(f"{report.failed} steps failed: {report.text()[-500:]}")
    return elapsed


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("rounds", nargs="?", type=int, default=5)
    p.add_argument("--steps", type=int, default=500)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.yaml"
        write_collection(path, a.steps)
        messages = [f"message {i}" for i in range(a.steps)]
        asyncio.run(baseline(messages)), asyncio.run(collection_run(path))  # warm up
        base, coll = [], []
        for _ in range(a.rounds):
            base.append(asyncio.run(baseline(messages)))
            coll.append(asyncio.run(collection_run(path)))
    m_base, m_coll = statistics.median(base), statistics.median(coll)
    per_step = (m_coll - m_base) / a.steps * 1000
    print(f"rounds: {a.rounds}, steps: {a.steps}")
    print(f"client, same calls      median {m_base * 1000:8.1f} ms  ({m_base / a.steps * 1000:.3f} ms/call)")
    print(f"spyglass test (steps)   median {m_coll * 1000:8.1f} ms  ({m_coll / a.steps * 1000:.3f} ms/step)")
    print(f"Spyglass's own time per step: {per_step:.3f} ms (goal < {GOAL_MS:g} ms); ratio {m_coll / m_base:.2f}")
    return 0 if per_step < GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
