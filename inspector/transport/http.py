"""Streamable HTTP, both eras (asyncio + httpx + httpx-sse, no Qt).

Every message is its own POST. A request's answer comes back as one JSON body
or as an SSE stream scoped to it; each JSON-RPC message on it is delivered as a
frame, with the SSE event id and the stream it came on.

Legacy era (2025-03-26 … 2025-11-25): `Mcp-Session-Id` from `initialize` is
echoed on every request, `MCP-Protocol-Version` from 2025-06-18 on, the optional
GET stream carries server messages, a broken stream is resumed with GET and
`Last-Event-ID` after the server's `retry` delay, 404 on a known session means
it expired, and DELETE ends the session on close.

Modern era (2026-07-28): no sessions, `MCP-Protocol-Version`, `Mcp-Method` and
`Mcp-Name` on every request, `Mcp-Param-*` for `x-mcp-header` parameters, and a
request is cancelled by closing its stream; a stream that breaks before the
answer is reported (`on_stream_lost`) so the client re-issues the request.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections.abc import Coroutine, Mapping
from typing import Any

import httpx
from httpx_sse import EventSource

from ..errors import ConnectError, HttpStatusError, InvalidResponse, SessionExpired, SpyglassError, TransportClosed
from ..protocol.headers import HeaderParam, param_headers, standard_headers
from ..protocol.versions import Era
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

log = logging.getLogger("spyglass.http")

DEFAULT_RETRY_MS = 1000
RESUME_ATTEMPTS = 5
PROTOCOL_HEADER_SINCE = "2025-06-18"


class HttpTransport(Transport):
    max_message = MAX_BODY

    def __init__(self, url: str, settings: HttpSettings | None = None) -> None:
        self.url = url
        self.settings = settings or HttpSettings()
        self.session_id: str | None = None
        self.era: Era | None = None
        self.version: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._inflight: dict[Any, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._tool_headers: dict[str, list[HeaderParam]] = {}
        self._streams = itertools.count(1)
        self._closing = False
        self._get_task: asyncio.Task[None] | None = None
        self._get_open: asyncio.Future[None] | None = None  # settled once the GET stream is up (or refused)
        self._authorizing = 0  # authorization flows under way (the user may be signing in)
        self._authorized_at: float | None = None  # when the last one ended (monotonic)

    def describe(self) -> str:
        return self.url

    # ------------------------------------------------------------------ lifecycle
    async def open(self) -> None:
        if self._client is None:
            self._client = self.settings.client()

    def negotiated(self, era: Any, version: str) -> None:
        self.era, self.version = era, version
        self.cancels_by_closing = era is Era.MODERN
        if era is Era.LEGACY and self._get_task is None and not self._closing:
            self._get_open = asyncio.get_running_loop().create_future()
            self._get_task = self._spawn(self._standalone_stream())

    async def settle(self) -> None:
        if self._get_open is not None and not self._get_open.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._get_open), self.settings.connect_timeout)
            except TimeoutError:
                pass

    def _mark_get_open(self) -> None:
        if self._get_open is not None and not self._get_open.done():
            self._get_open.set_result(None)

    def set_tool_headers(self, tools: dict[str, Any]) -> None:
        self._tool_headers = dict(tools)

    @property
    def authorizing(self) -> bool:
        return self._authorizing > 0

    @property
    def authorized_at(self) -> float | None:
        return self._authorized_at

    @property
    def mirrors_tool_headers(self) -> bool:
        return self.era is Era.MODERN

    def abort(self, wire_id: Any) -> bool:
        task = self._inflight.pop(wire_id, None)
        if task is None or not self.cancels_by_closing:
            return False
        task.cancel()
        return True

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        for task in [*self._inflight.values(), *self._tasks]:
            task.cancel()
        if self._client is not None:
            if self.session_id and self.era is Era.LEGACY:
                try:
                    headers = {**self._base_headers(), **await self._auth_headers("DELETE")}
                    resp = await asyncio.wait_for(self._client.delete(self.url, headers=headers), 3.0)
                    self._exchange("DELETE", headers, resp, "session end")
                except Exception as exc:
                    log.debug("DELETE of the session failed: %s", exc)
            await self._client.aclose()
        tasks = [*self._inflight.values(), *self._tasks]
        if tasks:
            await asyncio.wait(tasks, timeout=3.0)
        self.on_close(Closed("connection closed", expected=True))

    # ------------------------------------------------------------------ sending
    async def send(self, data: bytes) -> None:
        if self._client is None or self._closing:
            raise TransportClosed("the HTTP connection is closed")
        try:
            msg = json.loads(data)
        except ValueError:
            msg = {}
        headers = self._headers_for(msg)
        stream = f"POST#{next(self._streams)}"
        if self.on_sent is not None:
            # the frame names the POST that carries it, so the exchange and its body are paired exactly
            self.on_sent(data, time.monotonic(), {"stream": stream})
        is_request = isinstance(msg, dict) and "method" in msg and "id" in msg
        wire_id = msg.get("id") if is_request else None
        task = self._spawn(self._post(data, msg, headers, wire_id, stream))
        if is_request:
            self._inflight[wire_id] = task

    async def _auth_headers(self, method: str) -> dict[str, str]:
        auth = self.settings.auth
        return await auth.request_headers(method, self.url) if auth else {}

    def _base_headers(self) -> dict[str, str]:
        headers = dict(self.settings.headers)
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.version and self.era is Era.LEGACY and self.version >= PROTOCOL_HEADER_SINCE:
            headers["MCP-Protocol-Version"] = self.version
        return headers

    def _headers_for(self, msg: Any) -> dict[str, str]:
        headers = self._base_headers()
        headers["Accept"] = "application/json, text/event-stream"
        headers["Content-Type"] = "application/json"
        if not isinstance(msg, dict):
            return headers
        params: dict[str, Any] = msg["params"] if isinstance(msg.get("params"), dict) else {}
        meta: dict[str, Any] = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
        modern_version = meta.get("io.modelcontextprotocol/protocolVersion")
        if isinstance(modern_version, str):  # a modern-era request (the auto probe too)
            headers["MCP-Protocol-Version"] = modern_version
            headers.pop("Mcp-Session-Id", None)
            headers.update(standard_headers(msg))
            if msg.get("method") == "tools/call":
                name = params.get("name")
                tool = self._tool_headers.get(name) if isinstance(name, str) else None
                if tool:
                    headers.update(param_headers(tool, params.get("arguments")))
        elif msg.get("method") == "initialize":
            headers.pop("MCP-Protocol-Version", None)
        return headers

    # ------------------------------------------------------------------ hand-made frames
    def headers_for(self, data: bytes) -> dict[str, str]:
        try:
            msg = json.loads(data)
        except (ValueError, RecursionError):
            msg = {}
        return shown_headers(self._headers_for(msg), self.settings)

    async def send_raw(self, data: bytes, *, headers: Mapping[str, str] | None = None,
                       meta: dict[str, Any] | None = None) -> RawSent:
        """POST a hand-made frame exactly as given, with `headers` as given (None: the session's). Its answer
        is read like any other (a JSON body, an SSE stream); it is never retried, re-issued nor authorized."""
        if self._client is None or self._closing:
            raise TransportClosed("the HTTP connection is closed")
        chosen = dict(headers) if headers is not None else self.headers_for(data)
        stream = f"POST#{next(self._streams)}"
        if self.on_sent is not None:
            self.on_sent(data, time.monotonic(), {"stream": stream, **(meta or {})})
        ended = asyncio.ensure_future(self._post_raw(data, chosen, stream, meta or {}))
        self._tasks.add(ended)
        ended.add_done_callback(self._tasks.discard)
        return RawSent(data, stream, ended)

    async def _post_raw(self, data: bytes, headers: dict[str, str], stream: str,
                        meta: dict[str, Any]) -> tuple[int | None, str | None]:
        assert self._client is not None
        try:
            sent = await real_headers(headers, self.settings, "POST", self.url)
            async with self._client.stream("POST", self.url, content=data, headers=sent) as resp:
                self._exchange("POST", sent, resp, stream, meta)
                status = resp.status_code
                ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
                if status < 400 and ctype == "text/event-stream":
                    await self._read_sse(resp, None, stream)
                    return status, None
                body = await read_capped(resp)
                if body.strip() and ("json" in ctype or body.lstrip()[:1] in (b"{", b"[")):
                    self._frame(body, {"stream": stream, "status": status})
                if status < 400:
                    return status, None
                return status, f"HTTP {status} {resp.reason_phrase}" + (f": {excerpt(body)}" if body.strip() else "")
        except asyncio.CancelledError:
            raise
        except SpyglassError as exc:
            return None, exc.message
        except httpx.HTTPError as exc:
            return None, f"the POST to {self.url} failed: {failure_text(exc)}"
        except ValueError as exc:  # a header the user typed that HTTP cannot carry (not ASCII)
            return None, f"not sent: a header cannot be sent as typed ({exc})"
        except Exception as exc:  # a bug of ours must still end the frame's wait clearly
            log.exception("POST of a hand-made frame failed")
            return None, f"the POST to {self.url} failed: {type(exc).__name__}: {exc}"

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ------------------------------------------------------------------ receiving
    async def _post(self, data: bytes, msg: Any, headers: dict[str, str], wire_id: Any, stream: str) -> None:
        assert self._client is not None
        auth = self.settings.auth
        try:
            for attempt in range(MAX_AUTH_ROUNDS + 1):
                sent = {**headers, **(await auth.request_headers("POST", self.url) if auth else {})}
                async with self._client.stream("POST", self.url, content=data, headers=sent) as resp:
                    self._exchange("POST", sent, resp, stream)
                    if auth and resp.status_code in (401, 403) and attempt < MAX_AUTH_ROUNDS:
                        await read_capped(resp)  # the flow reads the headers; a 401 page has a cap too
                        handler = auth.on_unauthorized if resp.status_code == 401 else auth.on_forbidden
                        self._authorizing += 1
                        try:
                            retry = await handler(self._client, self.url, resp)
                        finally:
                            self._authorizing -= 1
                            self._authorized_at = time.monotonic()
                        if retry:
                            continue  # authorized now: the same message again
                        await self._answer(resp, wire_id, stream, had_session="Mcp-Session-Id" in sent)
                        break
                    if isinstance(msg, dict) and msg.get("method") == "initialize":
                        sid = resp.headers.get("mcp-session-id")
                        if sid:
                            self.session_id = sid
                    await self._answer(resp, wire_id, stream, had_session="Mcp-Session-Id" in sent)
                    break
        except asyncio.CancelledError:
            raise
        except SpyglassError as exc:  # the authorization flow failed, naming its step
            self._fail(wire_id, exc)
        except httpx.ConnectError as exc:
            self._fail(wire_id, ConnectError(f"cannot connect to {self.url}: {failure_text(exc)}", url=self.url))
        except httpx.TimeoutException:
            self._fail(wire_id, ConnectError(f"connecting to {self.url} timed out after "
                                             f"{self.settings.connect_timeout:g} s", url=self.url))
        except (httpx.TransportError, httpx.StreamError) as exc:
            self._fail(wire_id, TransportClosed(f"the connection to {self.url} broke: {failure_text(exc)}"))
        except Exception as exc:  # a bug of ours must still end the request clearly
            log.exception("POST failed")
            self._fail(wire_id, TransportClosed(f"POST to {self.url} failed: {type(exc).__name__}: {exc}"))
        finally:
            if wire_id is not None and self._inflight.get(wire_id) is asyncio.current_task():
                self._inflight.pop(wire_id, None)

    async def _answer(self, resp: httpx.Response, wire_id: Any, stream: str, had_session: bool) -> None:
        status = resp.status_code
        ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
        if status == 202 or (status in (200, 204) and wire_id is None and not ctype):
            return
        if status == 401:
            self._fail(wire_id, auth_required(resp, self.url))
            return
        if status >= 400:
            body = await read_capped(resp)
            if self._deliver_error_body(body, ctype, wire_id, stream, status):
                return
            if status == 404 and had_session:
                self.session_id = None
                self._fail(wire_id, SessionExpired(
                    "the server ended the session (HTTP 404 for Mcp-Session-Id); reconnect to start a new one",
                    url=self.url))
                return
            self._fail(wire_id, HttpStatusError(
                f"HTTP {status} {resp.reason_phrase} from {self.url}" + (f": {excerpt(body)}" if body else ""),
                status=status, excerpt=excerpt(body) or None, url=self.url))
            return
        if ctype == "application/json":
            body = await read_capped(resp)
            if body.strip():
                self._frame(body, {"stream": stream, "status": status, "request": wire_id})
            elif wire_id is not None:
                self._fail(wire_id, InvalidResponse(f"HTTP {status} with an empty JSON body for request {wire_id}"))
            return
        if ctype == "text/event-stream":
            await self._read_sse(resp, wire_id, stream)
            return
        body = await read_capped(resp)
        if wire_id is None and not body.strip():
            return
        self._fail(wire_id, InvalidResponse(
            f"HTTP {status} reply has Content-Type {ctype or '(none)'}; expected application/json or "
            f"text/event-stream" + (f": {excerpt(body)}" if body else ""), status=status, url=self.url))

    def _deliver_error_body(self, body: bytes, ctype: str, wire_id: Any, stream: str, status: int) -> bool:
        """A 4xx/5xx whose body is a JSON-RPC error: deliver it as the answer."""
        if "json" not in ctype and not body.lstrip().startswith(b"{"):
            return False
        try:
            obj = json.loads(body)
        except ValueError:
            return False
        if not isinstance(obj, dict) or not isinstance(obj.get("error"), dict):
            return False
        if obj.get("id") is None and wire_id is not None:
            # An error without an id answers the request this POST carried.
            obj = dict(obj, id=wire_id)
            body = json.dumps(obj).encode()
        self._frame(body, {"stream": stream, "status": status, "request": wire_id})
        return True

    async def _read_sse(self, resp: httpx.Response, wire_id: Any, stream: str, attempt: int = 0) -> None:
        last_id: str | None = None
        retry_ms: int | None = None
        answered = False
        try:
            async for event in EventSource(resp).aiter_sse():
                if event.id:
                    last_id = event.id
                if event.retry is not None:
                    retry_ms = event.retry
                if not event.data:
                    continue  # a priming event (id only) or a keep-alive
                raw = event.data.encode("utf-8")
                if wire_id is not None and _answers(raw, wire_id):
                    answered = True
                self._frame(raw, {"stream": stream, "event_id": event.id or None, "event": event.event,
                                  "request": wire_id})
        except asyncio.CancelledError:
            raise
        except (httpx.TransportError, httpx.StreamError) as exc:
            log.info("%s broke: %s", stream, failure_text(exc))
        if wire_id is None or answered or self._closing:
            return
        if self.era is Era.MODERN or (self.era is None and last_id is None):
            if self.on_stream_lost is not None and self.era is Era.MODERN:
                self.on_stream_lost(wire_id)
            else:
                self._fail(wire_id, TransportClosed(f"the server closed the stream of request {wire_id} "
                                                    "before answering"))
            return
        if last_id is None:
            self._fail(wire_id, TransportClosed(f"the server closed the stream of request {wire_id} before "
                                                "answering, without event ids to resume from"))
            return
        if attempt >= RESUME_ATTEMPTS:
            self._fail(wire_id, TransportClosed(f"the stream of request {wire_id} broke {attempt + 1} times; "
                                                "gave up resuming"))
            return
        await asyncio.sleep((retry_ms if retry_ms is not None else DEFAULT_RETRY_MS) / 1000)
        await self._resume(wire_id, last_id, attempt + 1)

    async def _resume(self, wire_id: Any, last_id: str, attempt: int) -> None:
        assert self._client is not None
        headers = self._base_headers()
        headers.update(await self._auth_headers("GET"))
        headers["Accept"] = "text/event-stream"
        headers["Last-Event-ID"] = last_id
        stream = f"GET#{next(self._streams)} (resume after {last_id})"
        async with self._client.stream("GET", self.url, headers=headers) as resp:
            self._exchange("GET", headers, resp, stream)
            ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
            if resp.status_code != 200 or ctype != "text/event-stream":
                await read_capped(resp)
                self._fail(wire_id, TransportClosed(f"the stream of request {wire_id} broke and resuming it "
                                                    f"failed (HTTP {resp.status_code})"))
                return
            await self._read_sse(resp, wire_id, stream, attempt)

    async def _standalone_stream(self) -> None:
        """The legacy GET stream for server-initiated messages (optional for servers)."""
        assert self._client is not None
        last_id: str | None = None
        failures = 0
        while not self._closing and failures < RESUME_ATTEMPTS:
            headers = self._base_headers()
            headers.update(await self._auth_headers("GET"))
            headers["Accept"] = "text/event-stream"
            if last_id:
                headers["Last-Event-ID"] = last_id
            stream = f"GET#{next(self._streams)}"
            retry_ms = DEFAULT_RETRY_MS
            try:
                async with self._client.stream("GET", self.url, headers=headers) as resp:
                    self._exchange("GET", headers, resp, stream)
                    self._mark_get_open()
                    ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
                    if resp.status_code != 200 or ctype != "text/event-stream":
                        await read_capped(resp)
                        return  # 405: the server offers no GET stream
                    failures = 0
                    async for event in EventSource(resp).aiter_sse():
                        if event.id:
                            last_id = event.id
                        if event.retry is not None:
                            retry_ms = event.retry
                        if event.data:
                            self._frame(event.data.encode("utf-8"),
                                        {"stream": stream, "event_id": event.id or None, "event": event.event})
            except asyncio.CancelledError:
                raise
            except (httpx.TransportError, httpx.StreamError) as exc:
                log.info("GET stream broke: %s", failure_text(exc))
            finally:
                self._mark_get_open()
            failures += 1
            await asyncio.sleep(retry_ms / 1000)

    # ------------------------------------------------------------------ reporting
    def _frame(self, raw: bytes, meta: dict[str, Any]) -> None:
        """`meta["request"]`: the wire id of the request whose answer stream carried the frame."""
        if meta.get("request") is None:
            meta.pop("request", None)
        try:
            self.on_frame(raw, time.monotonic(), meta)
        except Exception:
            log.exception("frame consumer failed")

    def _fail(self, wire_id: Any, error: Exception) -> None:
        if wire_id is None:
            log.warning("%s", error)
            self.on_log(f"[http] {error}".encode(), time.monotonic())
            return
        if self.on_request_error is not None:
            self.on_request_error(wire_id, error)

    def _exchange(self, method: str, headers: Mapping[str, str], resp: httpx.Response, stream: str,
                  meta: dict[str, Any] | None = None) -> None:
        if self.on_exchange is None:
            return
        record = {"method": method, "url": str(resp.request.url) if resp.request else self.url,
                  "status": resp.status_code, "reason": resp.reason_phrase, "stream": stream,
                  "request_headers": mask_mapping(dict(headers)),
                  "response_headers": mask_mapping(dict(resp.headers)), **(meta or {})}
        try:
            self.on_exchange(record, time.monotonic())
        except Exception:
            log.exception("exchange consumer failed")


def _answers(raw: bytes, wire_id: Any) -> bool:
    try:
        obj = json.loads(raw)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("id") == wire_id and ("result" in obj or "error" in obj)

