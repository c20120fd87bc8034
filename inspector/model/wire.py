"""Every exchange with a model endpoint as traffic: the request (`to-model`) and the response
(`from-model`, its whole body once read, an event stream included) as frames of the traffic store's
`model` kind, paired by `exchange`. The headers go into the frame's meta with every secret masked
(Authorization, x-api-key…) as the app masks a server's; the key never reaches a frame, a log or an
export. A response that never came is a `from-model` frame saying why."""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2

from ..secrets import mask_mapping
from ..traffic.frame import Frame

TO_MODEL, FROM_MODEL = "to-model", "from-model"
BODY_LIMIT = 8 * 1024 * 1024  # bytes of one response body kept in its frame (the rest is counted, not kept)
_exchanges = itertools.count(1)

Record = Callable[[Frame], None]


def masked_headers(headers: httpx2.Headers) -> dict[str, str]:
    return mask_mapping({k: v for k, v in headers.items()})


class RecordingTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that hands every request and its response to `record` (errors in `record` are
    the recorder's business: they never break the exchange)."""

    def __init__(self, record: Record | None, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self.record = record
        self.inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self.record is None:
            return await self.inner.handle_async_request(request)
        exchange = next(_exchanges)
        body = await request.aread()
        path = request.url.path
        meta: dict[str, Any] = {"exchange": exchange, "method": request.method, "url": str(request.url),
                                "path": path, "headers": masked_headers(request.headers)}
        self._emit(Frame(TO_MODEL, body, time.monotonic(), time.time(), meta=meta))
        try:
            response = await self.inner.handle_async_request(request)
        except Exception as exc:  # connection refused, timeout…: said in the traffic, then raised as it was
            said = f"no answer: {type(exc).__name__}: {exc}".rstrip(": ")
            self._emit(Frame(FROM_MODEL, b"", time.monotonic(), time.time(), said,
                             meta={"exchange": exchange, "path": path}))
            raise
        answer_meta = {"exchange": exchange, "path": path, "status": response.status_code,
                       "headers": masked_headers(response.headers)}
        stream = _Recorded(response.stream, lambda data, size, failed: self._answered(answer_meta, data, size, failed))
        return httpx2.Response(response.status_code, headers=response.headers, stream=stream,
                               extensions=response.extensions)

    def _answered(self, meta: dict[str, Any], data: bytes, size: int, failed: str | None) -> None:
        meta = dict(meta, size=size)
        self._emit(Frame(FROM_MODEL, data, time.monotonic(), time.time(), failed, meta=meta))

    def _emit(self, frame: Frame) -> None:
        if self.record is None:
            return
        try:
            self.record(frame)
        except Exception:  # a recorder that fails must not fail the model's answer
            import logging

            logging.getLogger("spyglass.model").exception("recording a model frame")

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Recorded(httpx2.AsyncByteStream):
    """A response body passed on as it comes, and kept; told once, when read to its end or closed."""

    def __init__(self, inner: Any, done: Callable[[bytes, int, str | None], None]) -> None:
        self.inner = inner
        self.done = done
        self.parts: list[bytes] = []
        self.kept = 0
        self.size = 0
        self.told = False
        self.ended = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.inner:
                self.size += len(chunk)
                if self.kept < BODY_LIMIT:
                    self.parts.append(chunk[: BODY_LIMIT - self.kept])
                    self.kept += len(self.parts[-1])
                yield chunk
        except Exception as exc:
            self._tell(f"the answer broke off: {type(exc).__name__}: {exc}")
            raise
        self.ended = True
        self._tell(None)

    def _tell(self, failed: str | None) -> None:
        if not self.told:
            self.told = True
            self.done(b"".join(self.parts), self.size, failed)

    async def aclose(self) -> None:
        self._tell(None if self.ended else "closed before its end (stopped, or the stream broke off)")
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()
