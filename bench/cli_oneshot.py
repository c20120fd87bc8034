"""Benchmark: `spyglass --cli` one-shot (connect + tools/list + tools/call get-sum)
against server-everything, versus a minimal raw stdio client doing the same.

Both run as fresh processes, alternated, in one run; prints the medians and the
ratio (goal: <= 1.15). Usage: python bench/cli_oneshot.py [ROUNDS]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ROOT / "tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
SERVER = ["node", str(EVERYTHING), "stdio"]

# The floor: spawn, initialize, initialized, tools/list, tools/call, close stdin, wait.
RAW_CLIENT = r'''
import json, subprocess, sys
server = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def ask(i, method, params=None):
    msg = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        msg["params"] = params
    server.stdin.write(json.dumps(msg).encode() + b"\n"); server.stdin.flush()
    while True:
        reply = json.loads(server.stdout.readline())
        if reply.get("id") == i:
            return reply
ask(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "raw", "version": "0"}})
server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'); server.stdin.flush()
ask(2, "tools/list")
result = ask(3, "tools/call", {"name": "get-sum", "arguments": {"a": 2, "b": 3}})
print(json.dumps(result["result"]))
server.stdin.close(); server.wait()
'''

SPYGLASS = [sys.executable, "-m", "inspector", "--cli", "--tool-name", "get-sum",
            "--tool-arg", "a=2", "--tool-arg", "b=3", "--", *SERVER]
RAW = [sys.executable, "-c", RAW_CLIENT, *SERVER]


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=str(ROOT))
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or "5" not in proc.stdout:
        raise SystemExit(f"run failed ({proc.returncode}): {' '.join(cmd[:4])}...\n{proc.stderr[-800:]}")
    return elapsed


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    if not EVERYTHING.exists():
        raise SystemExit("server-everything is missing: run `make test` first (npm ci in tests/peers)")
    # An installed package has its bytecode compiled at install time; a checkout run
    # with PYTHONDONTWRITEBYTECODE=1 would recompile every module on every start.
    import compileall

    compileall.compile_dir(str(ROOT / "inspector"), quiet=1)
    timed(SPYGLASS), timed(RAW)  # warm the OS caches
    ours, raw = [], []
    for _ in range(rounds):
        ours.append(timed(SPYGLASS))
        raw.append(timed(RAW))
    m_ours, m_raw = statistics.median(ours), statistics.median(raw)
    print(f"rounds: {rounds}")
    print(f"raw stdio client  median {m_raw * 1000:7.1f} ms  (min {min(raw) * 1000:.1f})")
    print(f"spyglass --cli    median {m_ours * 1000:7.1f} ms  (min {min(ours) * 1000:.1f})")
    print(f"ratio (spyglass / raw): {m_ours / m_raw:.3f}  (goal <= 1.15)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
