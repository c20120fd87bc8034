"""Benchmark: from saving a watched server's source to the re-run call's answer, against the server's
own start, both measured in this run.

A Python server (the official SDK's `MCPServer`) is written to a temporary folder. The baseline is what
no tool can take away: spawning it, the handshake and its tool list (`ServerSession.open`), ROUNDS times.
Then `DevLoop` watches the folder with "re-run the last call": each round rewrites the source (an atomic
save, as editors do) and times until the re-run call has answered and been compared. What the loop adds
(total minus the server's start) has a goal of <= 1.5 s; the watch's own part is the burst end
(`watch.STEP_MS`) plus the settling quiet (`watch.SETTLE_S`).

    python bench/devloop_restart.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import watched_server as watched  # noqa: E402  (tests/watched_server.py: the versions of the server)

from inspector.config import ServerSpec  # noqa: E402
from inspector.devloop import DevLoop, WatchSettings  # noqa: E402
from inspector.devloop import watch as watch_module  # noqa: E402
from inspector.session import ServerSession, SessionOptions  # noqa: E402


def session_for(folder: Path) -> ServerSession:
    spec = ServerSpec(name="bench", command=watched.command(folder), cwd=str(folder))
    return ServerSession(spec, options=SessionOptions(mode="legacy", heartbeat_s=None))


async def starts(folder: Path, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        session = session_for(folder)
        t0 = time.perf_counter()
        await session.open()
        out.append(time.perf_counter() - t0)
        await session.disconnect()
    return out


async def saves(folder: Path, rounds: int) -> list[float]:
    session = session_for(folder)
    loop = DevLoop(session, WatchSettings(rerun="last"))
    out = []
    try:
        await session.open()
        first = session.calls.call("greet", {"name": "Ada"})
        await first.job
        loop.start()
        await asyncio.sleep(0.5)
        for i in range(rounds):
            before = loop.rerun_at
            t0 = time.perf_counter()
            watched.write(folder, "v2" if i % 2 == 0 else "v1")
            while loop.rerun_at == before:
                await asyncio.sleep(0.005)
            out.append(time.perf_counter() - t0)
            assert loop.reruns and loop.reruns[0].after is not None and not loop.reruns[0].after.running
            await asyncio.sleep(1.5)  # a person saving again, not a loop (LOOP_GAP_S)
    finally:
        await loop.stop()
        await session.disconnect()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        watched.write(folder, "v1")
        start = asyncio.run(starts(folder, args.rounds))
        total = asyncio.run(saves(folder, args.rounds))
    s, t = statistics.median(start), statistics.median(total)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {args.rounds} rounds each")
    print(f"server's own start (spawn, handshake, tools/list): median {s * 1000:.0f} ms "
          f"(min {min(start) * 1000:.0f}, max {max(start) * 1000:.0f})")
    print(f"save -> re-run answered and compared:               median {t * 1000:.0f} ms "
          f"(min {min(total) * 1000:.0f}, max {max(total) * 1000:.0f})")
    print(f"added by the loop: {(t - s) * 1000:.0f} ms (goal <= 1500 ms; burst end {watch_module.STEP_MS} ms + "
          f"settle {watch_module.SETTLE_S * 1000:.0f} ms of it); ratio {t / s:.2f}x the server's start")
    return 0 if t - s <= 1.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
