"""A mock server over Streamable HTTP on loopback (asyncio and h11, as the HTTP tap): every POST carries one
message; a request's answer comes back as a JSON body, or as an event stream when the recorded server sent
notifications or asked questions while it answered (they come first, in order, then the answer). The
client's answers to those questions arrive as POSTs of their own (202). A legacy `initialize` gets an
`Mcp-Session-Id`; GET (no server stream) is 405, DELETE ends the session. Any path is served, `/mcp` is
the one printed.

The official SDK's Streamable HTTP server is not used: it negotiates and checks protocol versions itself
(refusing 2026-07-28) and builds its own `initialize` answer, where a mock must answer as recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import secrets
from collections.abc import Callable
from typing import Any

import h11

from ..demo.wire import RpcError
from ..protocol.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from .server import Declined, MockServer

READ_CHUNK = 64 * 1024
PATH = "/mcp"


def _error(request_id: Any, exc: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": exc.to_json()}


def _dumps(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class HttpMock:
    def __init__(self, mock: MockServer) -> None:
        self.mock = mock
        self.server: asyncio.Server | None = None
        self.pending: dict[str, asyncio.Future[Any]] = {}
        self.ids = itertools.count(1)
        self.tasks: set[asyncio.Task[Any]] = set()

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        self.server = await asyncio.start_server(self._accept, host, port)
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=2)
        if self.server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 2)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                got = await self._request(conn, reader)
                if got is None:
                    break
                await self._exchange(conn, writer, *got)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    break
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, asyncio.CancelledError):
            writer.transport.abort()
        finally:
            self.tasks.discard(task)
            writer.close()

    @staticmethod
    async def _request(conn: h11.Connection, reader: asyncio.StreamReader) -> tuple[h11.Request, bytes] | None:
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await reader.read(READ_CHUNK)
                conn.receive_data(data)
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage) and request is not None:
                return request, bytes(body)
            else:
                return None

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, data: bytes | None) -> None:
        if data:
            writer.write(data)
            await writer.drain()

    async def _reply(self, conn: h11.Connection, writer: asyncio.StreamWriter, status: int, body: bytes = b"",
                     ctype: bytes = b"application/json", extra: list[tuple[bytes, bytes]] | None = None) -> None:
        headers = [(b"Content-Type", ctype), (b"Content-Length", str(len(body)).encode()), *(extra or [])]
        data = conn.send(h11.Response(status_code=status, headers=headers)) or b""
        if body:
            data += conn.send(h11.Data(data=body)) or b""
        await self._send(writer, data + (conn.send(h11.EndOfMessage()) or b""))  # one write: no Nagle wait

    async def _exchange(self, conn: h11.Connection, writer: asyncio.StreamWriter, request: h11.Request,
                        body: bytes) -> None:
        method = request.method.upper()
        if method == b"DELETE":
            await self._reply(conn, writer, 200)
            return
        if method != b"POST":
            await self._reply(conn, writer, 405, extra=[(b"Allow", b"POST, DELETE")])
            return
        try:
            message = json.loads(body)
        except (ValueError, RecursionError) as exc:
            await self._reply(conn, writer, 400, _dumps(_error(None, RpcError(PARSE_ERROR, f"Parse error: {exc}"))))
            return
        if not isinstance(message, dict):
            await self._reply(conn, writer, 400, _dumps(_error(None, RpcError(INVALID_REQUEST,
                                                                           "Invalid Request: one object a POST"))))
            return
        if "method" not in message:  # the client's answer to one of our questions
            future = self.pending.pop(str(message.get("id")), None)
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(Declined(str(message.get("error"))))
                else:
                    future.set_result(message.get("result"))
            await self._reply(conn, writer, 202)
            return
        if "id" not in message:  # a notification
            await self._reply(conn, writer, 202)
            return
        await self._answer(conn, writer, message)

    async def _answer(self, conn: h11.Connection, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        queue: asyncio.Queue[tuple[bool, dict[str, Any]]] = asyncio.Queue()
        request_id = message["id"]
        rpc_method = str(message.get("method"))
        params = message.get("params") if isinstance(message.get("params"), dict) else {}

        def send(note: dict[str, Any]) -> None:
            queue.put_nowait((False, note))

        async def ask(method: str, question: dict[str, Any]) -> Any:
            wire_id = f"mock-{next(self.ids)}"
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self.pending[wire_id] = future
            send({"jsonrpc": "2.0", "id": wire_id, "method": method, "params": question})
            try:
                return await future
            finally:
                self.pending.pop(wire_id, None)

        async def run() -> None:
            try:
                result = await self.mock.answer(rpc_method, params, send, ask, request_id)
                reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": result}
            except RpcError as exc:
                reply = _error(request_id, exc)
            except Exception as exc:  # a bug of ours ends this request clearly, never the server
                reply = _error(request_id, RpcError(INTERNAL_ERROR, f"spyglass mock: {exc}"))
            queue.put_nowait((True, reply))

        task = asyncio.ensure_future(run())
        extra: list[tuple[bytes, bytes]] = []
        if rpc_method == "initialize":
            extra.append((b"Mcp-Session-Id", secrets.token_hex(16).encode()))
        try:
            final, first = await queue.get()
            if final:
                await self._reply(conn, writer, 200, _dumps(first), extra=extra)
                return
            headers = [(b"Content-Type", b"text/event-stream"), (b"Cache-Control", b"no-cache"), *extra]
            await self._send(writer, conn.send(h11.Response(status_code=200, headers=headers)))
            item = first
            while True:
                await self._send(writer, conn.send(h11.Data(data=b"event: message\ndata: " + _dumps(item) + b"\n\n")))
                if final:
                    break
                final, item = await queue.get()
            await self._send(writer, conn.send(h11.EndOfMessage()))
        finally:
            if not task.done():
                task.cancel()


async def serve_http(mock: MockServer, port: int, ready: Callable[[int], None], stop: asyncio.Event) -> None:
    """Serve on 127.0.0.1:port until `stop` is set; `ready(port)` once listening. OSError when the port
    cannot be had."""
    front = HttpMock(mock)
    bound = await front.start("127.0.0.1", port)
    ready(bound)
    try:
        await stop.wait()
    finally:
        await front.close()
