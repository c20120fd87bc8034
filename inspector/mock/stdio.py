"""A mock server on stdin and stdout: newline-delimited JSON-RPC, as a host launches a server. The framing,
the concurrent handling of requests and the questions to the client are the demo server's
(`inspector.demo.jsonrpc`), which speaks both eras' framing as the recorded server did; what is answered
is the recording's (`server.MockServer`).

A request the recording answers with nothing to wait for (no notifications, questions, delays or stubs:
most of them) is answered by the thread that reads stdin, as soon as its line is read, its recorded
result written as JSON text made once: no hop to the event loop, no task. Everything else goes to the
loop as the demo server's lines do. One lock keeps the two writers' lines whole and the mock's book in
order.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from ..demo.jsonrpc import JsonRpcPeer, RemoteError, error_response, id_key, valid_id
from .book import Match
from .server import Declined, MockServer


class MockPeer(JsonRpcPeer):
    def __init__(self, write: Callable[[bytes], None], mock: MockServer, lock: threading.Lock | None = None) -> None:
        super().__init__(write)
        self.mock = mock
        self.lock = lock or threading.Lock()
        self.prepared: dict[str, Match] = {}  # matched by the reader, played by a task of the loop

    def answer_now(self, raw: bytes) -> bool:
        """Answer a request line at once when it needs no waiting (True); else leave it to the loop."""
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError):
            return False
        params = message.get("params", {}) if isinstance(message, dict) else None
        if (not isinstance(message, dict) or not isinstance(message.get("method"), str) or "id" not in message
                or not valid_id(message["id"]) or not isinstance(params, dict)):
            return False  # answers, notifications, bad lines: the demo's peer handles them on the loop
        with self.lock:
            got = self.mock.quick(message["method"], params)
            if got is None:
                return False
            if isinstance(got, Match):
                self.prepared[id_key(message["id"])] = got
                return False
        if got.error is not None:
            self.send(error_response(message["id"], got.error))
        else:
            self.line(f'{{"jsonrpc":"2.0","id":{json.dumps(message["id"])},"result":{got.result}}}\n'.encode())
        return True

    def line(self, data: bytes) -> None:
        try:
            self._write(data)
        except (OSError, ValueError):  # the client went away: as the peer's own send, quietly
            self.closing = True

    async def handle_request(self, request_id: Any, method: str, params: dict[str, Any]) -> Any:
        found = self.prepared.pop(id_key(request_id), None)
        if found is not None:
            return await self.mock.finish(found, params, self.send, self._ask)
        return await self.mock.answer(method, params, self.send, self._ask, request_id)

    async def _ask(self, method: str, params: dict[str, Any]) -> Any:
        try:
            return await self.request(method, params)
        except RemoteError as exc:
            raise Declined(str(exc)) from None

    def handle_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/cancelled":
            self.cancel_request(params.get("requestId"))


def serve_stdio(mock: MockServer) -> int:
    """Answer on stdin/stdout until stdin closes (the demo server's `run_stdio`, with the reader answering
    what needs no waiting)."""
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print() must never corrupt the protocol stream
    lock = threading.Lock()

    def write(data: bytes) -> None:
        with lock:
            try:
                out.write(data)
                out.flush()
            except OSError:  # the client went away: also silence the final flush at exit
                os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
                raise

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        peer = MockPeer(write, mock, lock=threading.Lock())

        def pump() -> None:
            try:
                with os.fdopen(os.dup(sys.stdin.fileno()), "rb") as stdin:
                    for line in iter(stdin.readline, b""):
                        if not peer.answer_now(line):
                            loop.call_soon_threadsafe(lines.put_nowait, line)
            except (OSError, ValueError) as exc:
                print(f"spyglass mock: stdin failed: {exc}", file=sys.stderr)
            finally:
                try:
                    loop.call_soon_threadsafe(lines.put_nowait, None)
                except RuntimeError:
                    pass  # the loop has already gone

        threading.Thread(target=pump, name="stdin-reader", daemon=True).start()
        await peer.serve(lines)

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0
