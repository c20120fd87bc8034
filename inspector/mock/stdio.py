"""A mock server on stdin and stdout: newline-delimited JSON-RPC, as a host launches a server. The framing,
the concurrent handling of requests and the questions to the client are the demo server's
(`inspector.demo.jsonrpc`), which speaks both eras' framing as the recorded server did; what is answered
is the recording's (`server.MockServer`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..demo.jsonrpc import JsonRpcPeer, RemoteError, run_stdio
from .server import Declined, MockServer


class MockPeer(JsonRpcPeer):
    def __init__(self, write: Callable[[bytes], None], mock: MockServer) -> None:
        super().__init__(write)
        self.mock = mock

    async def handle_request(self, request_id: Any, method: str, params: dict[str, Any]) -> Any:
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
    """Answer on stdin/stdout until stdin closes."""
    return run_stdio(lambda write: MockPeer(write, mock))
