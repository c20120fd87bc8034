"""An SDK server (`MCPServer`) that keeps a call waiting until it is cancelled, and writes down what it saw.

    python tests/agent/cancel_server.py RECORD_FILE

Its tool `wait(tag)` (read-only) never answers on its own: it writes `start TAG REQUEST-ID` to the
record file and waits. Every `notifications/cancelled` the server receives writes `cancel REQUEST-ID` (seen by
a middleware, before the SDK interrupts the call's handler), and the handler so interrupted writes
`stop TAG`. `poke(tag)`, not marked read-only, answers at once and writes `poke TAG REQUEST-ID`. `sleep(seconds)`
(read-only) answers after that long, sending nothing meanwhile (no progress to reset a timeout). A test
reads the file to learn that the cancel reached the server itself, not only Spyglass.
"""

from __future__ import annotations

import sys

if "coverage" in sys.modules:  # a peer, not Spyglass: untraced by the suite's coverage of subprocesses
    _current = sys.modules["coverage"].Coverage.current()
    if _current is not None:
        _current.stop()

from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

RECORD = sys.argv[1]


def note(line: str) -> None:
    with open(RECORD, "a", encoding="utf-8") as f:
        f.write(line + "\n")


async def cancels_seen(ctx: Any, call_next: Any) -> Any:
    if ctx.method == "notifications/cancelled":
        params = ctx.params if isinstance(ctx.params, dict) else {}
        note(f"cancel {params.get('requestId')}")
    return await call_next(ctx)


app = MCPServer("cancel-recorder", middleware=[cancels_seen])


@app.tool(description="Waits until the call is cancelled.", annotations=ToolAnnotations(readOnlyHint=True))
async def wait(tag: str, ctx: Context) -> str:
    note(f"start {tag} {ctx.request_id}")
    try:
        await anyio.sleep_forever()
    finally:
        note(f"stop {tag}")
    return "never"


@app.tool(description="Pokes (may change things: a watching person is asked first).")
async def poke(tag: str, ctx: Context) -> str:
    note(f"poke {tag} {ctx.request_id}")
    return "poked"


@app.tool(description="Answers after `seconds`, sending nothing meanwhile.",
          annotations=ToolAnnotations(readOnlyHint=True))
async def sleep(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "slept"


if __name__ == "__main__":
    app.run()
