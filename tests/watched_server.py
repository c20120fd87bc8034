"""A server whose source a test rewrites: versions of an SDK (MCPServer) server, written to a folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HEADER = '''import sys

if "coverage" in sys.modules:  # a peer, not Spyglass: untraced by the suite's coverage of subprocesses
    _current = sys.modules["coverage"].Coverage.current()
    if _current is not None:
        _current.stop()

from mcp.server.mcpserver import MCPServer

app = MCPServer("watched")
'''

GREET_V1 = '''
@app.tool(description="Greets someone.")
def greet(name: str) -> str:
    return f"Hello, {name}!"
'''

GREET_V2 = '''
@app.tool(description="Greets someone, perhaps loudly.")
def greet(name: str, loud: bool = False) -> str:
    text = f"Hi, {name}!"
    return text.upper() if loud else text
'''

WAVE = '''
@app.tool(description="Waves.")
def wave() -> str:
    return "o/"
'''

FAREWELL = '''
@app.tool(description="Says goodbye.")
def farewell(name: str) -> str:
    return f"Bye, {name}."
'''

BROKEN = '''
print("watched: cannot start, the config is broken", file=sys.stderr, flush=True)
raise SystemExit(3)
'''

FOOTER = '''
app.run()
'''

VERSIONS = {
    "v1": HEADER + GREET_V1 + FAREWELL + FOOTER,
    "v2": HEADER + GREET_V2 + WAVE + FOOTER,
    "broken": HEADER + BROKEN,
}


def write(folder: Path, version: str) -> Path:
    """Write `version` as folder/server.py, atomically (as editors that save by rename do)."""
    path = folder / "server.py"
    tmp = folder / ".server.py.tmp"
    tmp.write_text(VERSIONS[version], encoding="utf-8")
    os.replace(tmp, path)
    return path


def command(folder: Path) -> list[str]:
    return [sys.executable, str(folder / "server.py")]
