"""A read's worth of frames handed to the client at once (`on_frames`) is recorded and handled exactly as
the same frames one by one: same traffic, same notifications in the same order, same malformed count."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from inspector.client import Client
from inspector.protocol.framing import Oversize
from inspector.transport.stdio import StdioTransport


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def note(method: str, params: Any = None) -> bytes:
    return line({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})


FRAMES: list[Any] = [
    *(note("notifications/message", {"level": "info", "data": f"line {i}"}) for i in range(5)),
    note("notifications/progress", {"progressToken": 7, "progress": 1}),
    note("notifications/message", {"level": "warning", "data": {"n": 10 ** 30}}),
    line({"jsonrpc": "2.0", "id": 99, "result": {}}),  # an answer to nothing
    b"{not json",
    Oversize(b'{"jsonrpc":"2.0","method":"notifications/message","params":', 10 ** 9),
    note("notifications/tools/list_changed"),
    note("notifications/message", "not an object"),
    note("notifications/tasks/status", {"taskId": "t1", "status": "working"}),
    line([{"jsonrpc": "2.0", "method": "notifications/message"}]),  # a batch: not MCP
    *(note("notifications/resources/updated", {"uri": f"file:///{i}"}) for i in range(3)),
]


def run(feed: str) -> tuple[list[tuple[Any, ...]], list[tuple[str, Any]], int]:
    traffic: list[tuple[Any, ...]] = []
    notified: list[tuple[str, Any]] = []

    async def main() -> None:
        client = Client(StdioTransport([sys.executable, "-c", "pass"]), mode="legacy",
                        traffic=lambda f: traffic.append(("one", f.direction, f.data, f.malformed, f.message, f.meta)),
                        on_notification=lambda m, p: notified.append((m, p)))
        if feed == "many":
            client.traffic_many = lambda frames: traffic.extend(
                ("one", f.direction, f.data, f.malformed, f.message, f.meta) for f in frames)
        if feed == "one":
            for raw in FRAMES:
                client._on_frame(raw, 1.0)
        else:
            client._on_frames(FRAMES[:3], 1.0)
            client._on_frames(FRAMES[3:], 1.0)
        traffic.append(("malformed", client.malformed_count))

    asyncio.run(main())
    return traffic, notified, len(traffic)


def test_frames_of_one_read_are_recorded_and_handled_as_one_by_one():
    one = run("one")
    assert run("batched") == one
    assert run("many") == one
    traffic, notified, _ = one
    assert [m for m, _p in notified].count("notifications/message") == 6
    assert traffic[-1] == ("malformed", 5)  # the answer to nothing, bad JSON, too big, params, a batch
