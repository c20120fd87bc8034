"""The HTTP+SSE transport of protocol 2024-11-05 (asyncio + httpx + httpx-sse, no Qt).

GET the SSE URL, wait for the `endpoint` event, POST every message there, and
read every server message (answers included) from `message` events on the GET
stream.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
from httpx_sse import EventSource

from ..errors import ConnectError, HttpStatusError, SpyglassError, TransportClosed
from ..secrets import mask_mapping
from .base import Closed, RawSent, Transport
from .http_common import (
    MAX_AUTH_ROUNDS,
    MAX_BODY,
    HttpSettings,
    auth_required,
    excerpt,
    failure_text,
    read_capped,
    real_headers,
    shown_headers,
)

log = logging.getLogger("spyglass.sse")


class SseTransport(Transport):
    max_message = MAX_BODY

    def __init__(self, url: str, settings: HttpSettings | None = None) -> None:
        self.url = url
        self.settings = settings or HttpSettings()
        self.endpoint: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._reader: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closing = False
        self._posts = itertools.count(1)
        self._authorizing = 0  # authorization flows under way
        self._authorized_at = 0.0  # when the last one ended (monotonic)

    def describe(self) -> str:
        return self.url

    async def open(self) -> None:
        if self._client is not None:
            return
        self._client = self.settings.client()
        endpoint_ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.ensure_future(self._read(endpoint_ready))
        try:
            while True:
                try:
                    self.endpoint = await asyncio.wait_for(asyncio.shield(endpoint_ready),
                                                           self.settings.connect_timeout)
                    break
                except TimeoutError:
                    # the user signing in is not the server being slow: its time starts when they are done
                    if not self.authorizing and time.monotonic() - self._authorized_at > self.settings.connect_timeout:
                        raise
        except TimeoutError:
            await self._abort()
            raise ConnectError(f"{self.url} sent no `endpoint` event within {self.settings.connect_timeout:g} s; "
                               "it may not be an HTTP+SSE MCP server", url=self.url) from None
        except BaseException:
            await self._abort()
            raise

    async def _abort(self) -> None:
        self._closing = True
        if self._reader:
            self._reader.cancel()
        if self._client:
            await self._client.aclose()

    @property
    def authorizing(self) -> bool:
        """An authorization flow is under way (the user may be signing in): not the server's delay."""
        return self._authorizing > 0

    @property
    def authorized_at(self) -> float | None:
        return self._authorized_at or None

    async def _authorized_again(self, resp: httpx.Response, attempt: int) -> bool:
        """A 401 (or 403 for more scope) with an authorization provider: run its flow; True means
        send the same request again."""
        auth = self.settings.auth
        if auth is None or resp.status_code not in (401, 403) or attempt >= MAX_AUTH_ROUNDS:
            return False
        await read_capped(resp)  # the flow reads the headers; a 401 page has a cap too
        handler = auth.on_unauthorized if resp.status_code == 401 else auth.on_forbidden
        assert self._client is not None  # a response came: the client is open
        self._authorizing += 1
        try:
            return await handler(self._client, self.url, resp)
        finally:
            self._authorizing -= 1
            self._authorized_at = time.monotonic()

    async def _read(self, endpoint_ready: asyncio.Future[str]) -> None:
        for attempt in range(MAX_AUTH_ROUNDS + 1):
            if not await self._read_once(endpoint_ready, attempt):
                return

    async def _read_once(self, endpoint_ready: asyncio.Future[str], attempt: int) -> bool:
        """One GET of the SSE stream; True when authorization asks for another."""
        assert self._client is not None
        headers = dict(self.settings.headers)
        if self.settings.auth:
            headers.update(await self.settings.auth.request_headers("GET", self.url))
        headers["Accept"] = "text/event-stream"
        reason = "the server closed the SSE stream"
        try:
            async with self._client.stream("GET", self.url, headers=headers) as resp:
                self._exchange("GET", headers, resp, "GET#sse")
                ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
                if not endpoint_ready.done() and await self._authorized_again(resp, attempt):
                    return True
                if resp.status_code == 401:
                    raise auth_required(resp, self.url)
                if resp.status_code != 200 or ctype != "text/event-stream":
                    body = await read_capped(resp)
                    raise HttpStatusError(f"GET {self.url} answered HTTP {resp.status_code} "
                                          f"({ctype or 'no content type'}), not an SSE stream"
                                          + (f": {excerpt(body)}" if body else ""),
                                          status=resp.status_code, url=self.url)
                async for event in EventSource(resp).aiter_sse():
                    if event.event == "endpoint":
                        target = urljoin(self.url, event.data.strip())
                        if urlsplit(target).netloc != urlsplit(self.url).netloc:
                            raise ConnectError(f"the server's endpoint {target} is on another host than {self.url}; "
                                               "refusing to post there")
                        if not endpoint_ready.done():
                            endpoint_ready.set_result(target)
                        continue
                    if event.data:
                        self._frame(event.data.encode("utf-8"), {"stream": "GET#sse", "event_id": event.id or None,
                                                                 "event": event.event})
        except asyncio.CancelledError:
            raise
        except SpyglassError as exc:  # a refusal, a bad answer, or a failed authorization flow
            if not endpoint_ready.done():
                endpoint_ready.set_exception(exc)
                return False
            reason = exc.message
        except httpx.ConnectError as exc:
            error = ConnectError(f"cannot connect to {self.url}: {failure_text(exc)}", url=self.url)
            if not endpoint_ready.done():
                endpoint_ready.set_exception(error)
                return False
            reason = error.message  # pragma: no cover - httpx raises it only while connecting, before any endpoint
        except (httpx.TransportError, httpx.StreamError) as exc:
            reason = f"the SSE stream broke: {failure_text(exc)}"
        if not endpoint_ready.done():
            endpoint_ready.set_exception(ConnectError(f"{self.url}: {reason} before sending its endpoint"))
            return False
        if not self._closing:
            self.on_close(Closed(reason))
        return False

    async def send(self, data: bytes) -> None:
        if self._client is None or self.endpoint is None or self._closing:
            raise TransportClosed("the SSE connection is closed")
        if self.on_sent is not None:
            self.on_sent(data, time.monotonic())
        try:
            msg = json.loads(data)
        except ValueError:
            msg = {}
        wire_id = msg.get("id") if isinstance(msg, dict) and "method" in msg else None
        task = asyncio.ensure_future(self._post(data, wire_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, data: bytes, wire_id: Any) -> None:
        assert self._client is not None and self.endpoint is not None
        stream = f"POST#{next(self._posts)}"
        try:
            for attempt in range(MAX_AUTH_ROUNDS + 1):
                headers = dict(self.settings.headers)
                headers["Content-Type"] = "application/json"
                if self.settings.auth:
                    headers.update(await self.settings.auth.request_headers("POST", self.endpoint))
                async with self._client.stream("POST", self.endpoint, content=data, headers=headers) as resp:
                    self._exchange("POST", headers, resp, stream)
                    if await self._authorized_again(resp, attempt):
                        continue
                    body = await read_capped(resp)  # an endless error page must not fill the memory
                break
            if resp.status_code == 401:
                self._fail(wire_id, auth_required(resp, self.url))
            elif resp.status_code >= 400:
                self._fail(wire_id, HttpStatusError(f"HTTP {resp.status_code} from {self.endpoint}: "
                                                    f"{excerpt(body)}", status=resp.status_code))
        except asyncio.CancelledError:
            raise
        except SpyglassError as exc:  # the authorization flow failed, naming its step
            self._fail(wire_id, exc)
        except httpx.HTTPError as exc:
            self._fail(wire_id, ConnectError(f"cannot post to {self.endpoint}: {failure_text(exc)}"))

    def headers_for(self, data: bytes) -> dict[str, str]:
        return shown_headers({**self.settings.headers, "Content-Type": "application/json"}, self.settings)

    async def send_raw(self, data: bytes, *, headers: Mapping[str, str] | None = None,
                       meta: dict[str, Any] | None = None) -> RawSent:
        """POST a hand-made frame to the endpoint as given; its answer, if any, comes on the SSE stream."""
        if self._client is None or self.endpoint is None or self._closing:
            raise TransportClosed("the SSE connection is closed")
        chosen = dict(headers) if headers is not None else self.headers_for(data)
        stream = f"POST#{next(self._posts)}"
        if self.on_sent is not None:
            self.on_sent(data, time.monotonic(), {"stream": stream, **(meta or {})})
        ended = asyncio.ensure_future(self._post_raw(data, chosen, stream, meta or {}))
        self._tasks.add(ended)
        ended.add_done_callback(self._tasks.discard)
        return RawSent(data, None, ended)

    async def _post_raw(self, data: bytes, headers: dict[str, str], stream: str,
                        meta: dict[str, Any]) -> tuple[int | None, str | None]:
        assert self._client is not None and self.endpoint is not None
        try:
            sent = await real_headers(headers, self.settings, "POST", self.endpoint)
            async with self._client.stream("POST", self.endpoint, content=data, headers=sent) as resp:
                self._exchange("POST", sent, resp, stream, meta)
                body = await read_capped(resp)
            if resp.status_code >= 400:
                return resp.status_code, f"HTTP {resp.status_code} {resp.reason_phrase}" + (
                    f": {excerpt(body)}" if body.strip() else "")
            return resp.status_code, None
        except asyncio.CancelledError:
            raise
        except SpyglassError as exc:
            return None, exc.message
        except httpx.HTTPError as exc:
            return None, f"the POST to {self.endpoint} failed: {failure_text(exc)}"
        except ValueError as exc:  # a header the user typed that HTTP cannot carry (not ASCII)
            return None, f"not sent: a header cannot be sent as typed ({exc})"
        except Exception as exc:  # a bug of ours must still end the frame's wait clearly
            log.exception("POST of a hand-made frame failed")
            return None, f"the POST to {self.endpoint} failed: {type(exc).__name__}: {exc}"

    def _fail(self, wire_id: Any, error: Exception) -> None:
        if wire_id is not None and self.on_request_error is not None:
            self.on_request_error(wire_id, error)
        else:
            self.on_log(f"[sse] {error}".encode(), time.monotonic())

    def _frame(self, raw: bytes, meta: dict[str, Any]) -> None:
        try:
            self.on_frame(raw, time.monotonic(), meta)
        except Exception:
            log.exception("frame consumer failed")

    def _exchange(self, method: str, headers: dict[str, str], resp: httpx.Response, stream: str,
                  meta: dict[str, Any] | None = None) -> None:
        if self.on_exchange is None:
            return
        try:
            self.on_exchange({"method": method, "url": str(resp.request.url), "status": resp.status_code,
                              "reason": resp.reason_phrase, "stream": stream,
                              "request_headers": mask_mapping(headers),
                              "response_headers": mask_mapping(dict(resp.headers)), **(meta or {})},
                             time.monotonic())
        except Exception:
            log.exception("exchange consumer failed")

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        for task in list(self._tasks):
            task.cancel()
        if self._reader:
            self._reader.cancel()
        if self._client:
            await self._client.aclose()
        pending = [t for t in [*self._tasks, self._reader] if t is not None and not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=3.0)
        self.on_close(Closed("connection closed", expected=True))
