"""Benchmark: what `spyglass tap -- COMMAND…` costs a host, against the same server reached directly,
both measured in this run with the same raw client (bytes in, bytes out).

1. Latency: ROUNDS sequential pings to a small fast stdio server; the median and p99 round trip,
   direct and through the tap (recording to a session file, the live feed on with no window), and
   what the tap adds (goals: median <= 0.3 ms, p99 <= 2 ms). The two alternate in blocks of 100 so a
   busy machine slows both alike.
2. Flood: the server sends FLOOD notifications and then an answer; the time until the client has the
   answer, direct and through the tap (goal <= 1.3x), and every notification checked in the session.
3. Start: from spawning the demo server to its answer to `initialize`, direct and through the tap;
   and the tap's own start (`spyglass tap --no-session --no-live -- true`) against `python -c pass`.

    python bench/tap_stdio.py [--rounds N] [--flood N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

# The smallest honest server: raw reads and writes, an answer per request, a flood on demand.
SERVER = r'''
import json, os, sys
out = sys.stdout.buffer
rest = b""
while chunk := os.read(0, 65536):
    *lines, rest = (rest + chunk).split(b"\n")
    for line in lines:
        msg = json.loads(line)
        if msg.get("method") == "flood":
            note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood %d"}}\n'
            for i in range(msg["params"]["count"]):
                out.write(note % i)
        out.write(b'{"jsonrpc":"2.0","id":%s,"result":{}}\n' % json.dumps(msg["id"]).encode())
        out.flush()
'''


class Raw:
    """A host's side: requests written, answers read line by line from the raw pipe."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env, cwd=str(ROOT), bufsize=0)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.w = self.proc.stdin.fileno()
        self.r = self.proc.stdout.fileno()
        self.buf = b""

    def ask(self, data: bytes, answer: bytes) -> int:
        """Send `data`, read until a line ending with `answer` comes; the lines read meanwhile."""
        os.write(self.w, data)
        seen = 0
        while True:
            end = self.buf.find(answer)
            if end >= 0:
                cut = end + len(answer)
                seen += self.buf.count(b"\n", 0, cut)
                self.buf = self.buf[cut:]
                return seen
            seen += self.buf.count(b"\n")
            tail = self.buf.rfind(b"\n")
            self.buf = self.buf[tail + 1:] if tail >= 0 else self.buf
            chunk = os.read(self.r, 65536)
            if not chunk:
                raise SystemExit(f"the server went away (exit {self.proc.wait()})")
            self.buf += chunk

    def close(self) -> float:
        """Close stdin; seconds until the process has exited."""
        start = time.perf_counter()
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)
        took = time.perf_counter() - start
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return took


def pings(raw: Raw, count: int, start: int) -> list[float]:
    times = []
    for i in range(start, start + count):
        t = time.perf_counter()
        raw.ask(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i, b'"id":%d,"result":{}}\n' % i)
        times.append(time.perf_counter() - t)
    return times


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency(rounds: int, env: dict[str, str], folder: Path) -> None:
    server = [PY, "-c", SERVER]
    direct = Raw(server, env)
    tapped = Raw([PY, "-m", "inspector", "tap", "--session", str(folder / "latency.mcpsession"), "--", *server], env)
    pings(direct, 200, 0), pings(tapped, 200, 0)  # warm up both (and let the tap's recorder import its parser)
    d: list[float] = []
    t: list[float] = []
    for block in range(0, rounds, 100):
        d += pings(direct, min(100, rounds - block), 1000 + block)
        t += pings(tapped, min(100, rounds - block), 1000 + block)
    direct.close(), tapped.close()
    md, mt = statistics.median(d), statistics.median(t)
    pd, pt = pct(d, 0.99), pct(t, 0.99)
    print(f"latency: {rounds} sequential pings")
    print(f"  direct        median {md * 1e3:6.3f} ms  p99 {pd * 1e3:6.3f} ms")
    print(f"  through tap   median {mt * 1e3:6.3f} ms  p99 {pt * 1e3:6.3f} ms")
    print(f"  added         median {(mt - md) * 1e3:6.3f} ms (goal <= 0.3)  p99 {(pt - pd) * 1e3:6.3f} ms (goal <= 2)")


def flood(count: int, env: dict[str, str], folder: Path) -> None:
    server = [PY, "-c", SERVER]
    ask = b'{"jsonrpc":"2.0","id":"f","method":"flood","params":{"count":%d}}\n' % count
    answer = b'"id":"f","result":{}}\n'
    results: dict[str, list[float]] = {"direct": [], "tap": []}
    exits: list[float] = []
    for n in range(5):
        for kind in ("direct", "tap"):
            session = folder / f"flood-{n}.mcpsession"
            cmd = server if kind == "direct" else [PY, "-m", "inspector", "tap", "--session", str(session), "--",
                                                   *server]
            raw = Raw(cmd, env)
            raw.ask(b'{"jsonrpc":"2.0","id":0,"method":"ping"}\n', b'"id":0,"result":{}}\n')  # started
            start = time.perf_counter()
            lines = raw.ask(ask, answer)
            results[kind].append(time.perf_counter() - start)
            took = raw.close()
            if lines != count + 1:
                raise SystemExit(f"{kind}: {lines} lines came, not {count + 1}")
            if kind == "tap":
                exits.append(took)
                check_session(session, count)
    md, mt = statistics.median(results["direct"]), statistics.median(results["tap"])
    print(f"flood: {count:,} notifications, then the answer (median of 5)")
    print(f"  direct        {md * 1e3:8.1f} ms")
    print(f"  through tap   {mt * 1e3:8.1f} ms   ratio {mt / md:.2f} (goal <= 1.3)")
    print(f"  then the tap's exit, the session written to its end: {statistics.median(exits) * 1e3:.0f} ms; "
          "every frame checked in the session")


def check_session(path: Path, count: int) -> None:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        items = [json.loads(text) for text in fh]
    flood_frames = [x["data"] for x in items[1:-1] if x.get("dir") == "in" and "flood" in x.get("data", "")]
    expected = ['{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood %d"}}' % i
                for i in range(count)]
    if flood_frames != expected or items[-1] != {"end": True, "frames": len(items) - 2}:
        raise SystemExit(f"{path.name}: {len(flood_frames)} of {count} notifications, end line {items[-1]}")


def start_times(env: dict[str, str], folder: Path, rounds: int = 9) -> None:
    init = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
            b'"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n')
    demo = [PY, "-m", "inspector.demo"]
    firsts: dict[str, list[float]] = {"direct": [], "tap": []}
    for n in range(rounds):
        for kind in ("direct", "tap"):
            cmd = demo if kind == "direct" else [PY, "-m", "inspector", "tap", "--session",
                                                 str(folder / f"start-{n}.mcpsession"), "--", *demo]
            start = time.perf_counter()
            raw = Raw(cmd, env)
            raw.ask(init, b'"id":1,"result"')
            firsts[kind].append(time.perf_counter() - start)
            raw.close()
    bare: list[float] = []
    tap: list[float] = []
    for _ in range(rounds):
        for into, cmd in ((bare, [PY, "-c", "pass"]),
                          (tap, [PY, "-m", "inspector", "tap", "--no-session", "--no-live", "--", "true"])):
            start = time.perf_counter()
            subprocess.run(cmd, env=env, cwd=str(ROOT), stdin=subprocess.DEVNULL, check=True)
            into.append(time.perf_counter() - start)
    md, mt = statistics.median(firsts["direct"]), statistics.median(firsts["tap"])
    print(f"start: spawn to the answer to initialize, demo server (median of {rounds})")
    print(f"  direct        {md * 1e3:7.1f} ms")
    print(f"  through tap   {mt * 1e3:7.1f} ms   added {(mt - md) * 1e3:.1f} ms")
    print(f"  spyglass tap -- true {statistics.median(tap) * 1e3:.1f} ms against python -c pass "
          f"{statistics.median(bare) * 1e3:.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--flood", type=int, default=100_000)
    args = parser.parse_args()
    # An installed package has its bytecode compiled at install time; a checkout run
    # with PYTHONDONTWRITEBYTECODE=1 would recompile every module on every start.
    import compileall

    compileall.compile_dir(str(ROOT / "inspector"), quiet=1)
    with tempfile.TemporaryDirectory(prefix="spyglass-bench-tap-") as tmp:
        folder = Path(tmp)
        env = dict(os.environ, SPYGLASS_TAP_SOCKET=str(folder / "no-window.sock"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        latency(args.rounds, env, folder)
        flood(args.flood, env, folder)
        start_times(env, folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
