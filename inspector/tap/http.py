"""The HTTP tap (asyncio and h11, no Qt): a reverse proxy on loopback in front of a remote MCP server
(`spyglass tap --listen 127.0.0.1:PORT URL`), recording the conversation of whatever host is pointed at it.

Paths: the host's path and query go to URL's scheme and host as they are, but for the proxy's root (`/`),
which stands for URL's own path and query. So a host is pointed at the proxy's origin with URL's path
(`proxy_url`: URL `https://x.example/mcp` → `http://127.0.0.1:PORT/mcp`), or at its root; the server's other
paths (the legacy `/sse` + `/message`, OAuth metadata under `/.well-known/`) are reached the same way.

On the wire the host and the server see each other unchanged: method, path, query, headers (but the hop-by-hop
ones, and Host, which names the server), status, reason and bodies, byte for byte and chunk by chunk as they
come (SSE unbuffered, event ids and `retry:` lines included). Only one thing is rewritten: an HTTP+SSE
`endpoint` event naming the server's own origin in full names the proxy's instead, or the host would post
past the tap (a relative endpoint already resolves against the proxy).

What is recorded, in the shapes Spyglass's own HTTP transports record (`inspector.transport.http`), so the
window, HAR and OpenTelemetry read a tapped session as their own:
- the POST body as one "out" frame when it has arrived (meta `stream`: `POST#n`), as it came (a batch array is
  one frame, as Spyglass's parser sees it: one malformed message);
- an "http" frame when the server's headers arrive: method, url, status, reason, stream, request_headers,
  response_headers (timing is the frames' times, as for the transport);
- each JSON body and each SSE `data` event from the server as an "in" frame (meta `stream`, `status` or
  `event_id` and `event`, and `request`: the id of the request the POST carried, or that a resumed stream
  belongs to);
- what the tap itself saw go wrong as "err" frames (an unreachable server, a stream cut on either side).
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import ipaddress
import json
import logging
import signal
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import h11
import httpx

from ..errors import UsageError
from ..secrets import mask_mapping
from ..transport.http_common import MAX_BODY, excerpt, ssl_context
from .record import TapRecorder
from .relay import Decoded, SseEvent, SseRelay
from .upstream import Answer, Upstream, UpstreamError

log = logging.getLogger("spyglass.tap")

# RFC 9110 §7.6.1: these describe one connection, not the message; Host is the server's, and Expect is
# answered by the proxy itself (the body is read whole before it is forwarded).
HOP_BY_HOP = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"proxy-authenticate",
                        b"proxy-authorization", b"te", b"trailer", b"transfer-encoding", b"upgrade"})
NOT_FORWARDED = HOP_BY_HOP | {b"host", b"expect"}
READ_CHUNK = 64 * 1024
REMEMBERED_EVENTS = 4096  # event ids of POST streams kept to name the request a resumed stream belongs to
CONNECT_TIMEOUT = 10.0


def check_listen(host: str, allow_remote: bool = False) -> None:
    """Refuses (UsageError) an address that is not loopback, unless `allow_remote` (`--allow-remote`)."""
    if allow_remote or host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise UsageError(f"the tap listens on a loopback address only (127.0.0.1, ::1), not {host}: whoever can "
                         "reach it reaches the server with the host's credentials; pass --allow-remote to listen "
                         f"on {host} all the same")


def parse_listen(text: str) -> tuple[str, int]:
    """`--listen HOST:PORT` (`[::1]:PORT` for IPv6, a bare PORT on 127.0.0.1) as (host, port)."""
    host, colon, port = text.rpartition(":")
    if not port.isdigit() or int(port) > 65535 or (colon and not host.strip("[]")):
        raise UsageError(f"--listen {text}: expected HOST:PORT, such as 127.0.0.1:8808 (port 0: any free one)")
    return (host.strip("[]") if colon else "127.0.0.1"), int(port)


def upstream_of(url: str) -> httpx.URL:
    """The server's URL, checked: http or https with a host."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise UsageError(f"{url} is not a URL: {exc}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise UsageError(f"{url} is not an http:// or https:// URL of a server")
    return parsed


def proxy_url(url: str, host: str, port: int) -> str:
    """Where to point a host so that it reaches `url` through a tap listening on host:port."""
    upstream = upstream_of(url)
    name = f"[{host}]" if ":" in host else host
    return f"http://{name}:{port}{upstream.raw_path.decode('ascii')}"


def _loopback_authority(authority: str) -> bool:
    """A Host header naming a loopback address (a page of a rebinding DNS name is refused)."""
    name = authority[1:].split("]", 1)[0] if authority.startswith("[") else authority.rsplit(":", 1)[0]
    if name.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _header_dict(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """Headers as the transports record them: one key per name (as first spelled), repeats joined."""
    out: dict[str, str] = {}
    spelled: dict[str, str] = {}
    for name, value in raw:
        key = name.decode("latin-1")
        first = spelled.setdefault(key.lower(), key)
        text = value.decode("latin-1")
        out[first] = f"{out[first]}, {text}" if first in out else text
    return out


def _forwarded(raw: Iterable[tuple[bytes, bytes]], drop: frozenset[bytes]) -> list[tuple[bytes, bytes]]:
    """Headers minus `drop` and whatever the Connection header names as this connection's own."""
    items = list(raw)
    named = {t.strip().lower() for k, v in items if k.lower() == b"connection" for t in v.split(b",")}
    return [(k, v) for k, v in items if k.lower() not in drop and k.lower() not in named]


def _phrase(status: int) -> str:
    """The standard reason phrase of a status, for an answer that sent none."""
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def _wire_id(body: bytes) -> Any:
    """The id of the request a POST carries (None for anything else)."""
    try:
        msg = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return msg.get("id") if isinstance(msg, dict) and "method" in msg and "id" in msg else None


class _Cut(Exception):
    """The host's connection ends at once: the host left, or the answer cannot be passed on whole (the host
    sees it cut, as the tap did)."""


# ---------------------------------------------------------------------------- the proxy
class HttpTap:
    """One reverse proxy to `url`, recording into `recorder`. `await start(host, port)`, then `await close()`
    (or `async with`), in the loop that serves it."""

    def __init__(self, url: str, recorder: TapRecorder, *, insecure: bool = False) -> None:
        self.url = url
        self.upstream = upstream_of(url)
        self.recorder = recorder
        self.host = "127.0.0.1"
        self.port = 0
        self.allow_remote = False
        self.connections = 0  # host connections accepted so far
        # The host's headers go out as they are (no cookie jar, nothing added but Host), redirects are the host's
        # to follow, and there is no read timeout: a quiet SSE stream can last for hours.
        up = self.upstream
        self.client = Upstream(up.scheme, up.host, up.port or (443 if up.scheme == "https" else 80),
                               tls=ssl_context(insecure), connect_timeout=CONNECT_TIMEOUT)
        self.base = f"{up.scheme}://{self.client.authority}"
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._numbers = iter(range(1, 1 << 62))
        self._others = iter(range(1, 1 << 62))
        self._event_requests: dict[str, Any] = {}

    async def __aenter__(self) -> HttpTap:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def authority(self) -> str:
        """host:port of the proxy, as a host reaches it."""
        return f"{f'[{self.host}]' if ':' in self.host else self.host}:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://{self.authority}"

    def proxy_url(self) -> str:
        """Where to point the host: the proxy's origin with the server URL's path and query."""
        return proxy_url(self.url, self.host, self.port)

    async def start(self, host: str = "127.0.0.1", port: int = 0, *, allow_remote: bool = False) -> int:
        """Listens on host:port (0: a free port); returns the port. UsageError when that cannot be."""
        check_listen(host, allow_remote)
        # one address: "localhost" would be two sockets, and with port 0 two different ports
        self.host = "127.0.0.1" if host == "localhost" else host.strip("[]")
        self.allow_remote = allow_remote
        try:
            self._server = await asyncio.start_server(self._accept, self.host, port, reuse_address=True)
        except OSError as exc:
            raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def close(self) -> None:
        """Stops listening, ends every host connection (and so every stream to the server), closes the client."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
        await self.client.close()

    # ------------------------------------------------------------------ one host connection
    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                got = await self._request(conn, reader, writer)
                if got is None:
                    break
                await self._exchange(conn, reader, writer, *got)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    break
                conn.start_next_cycle()
        except (_Cut, ConnectionError, h11.ProtocolError):
            writer.transport.abort()
        except asyncio.CancelledError:
            writer.transport.abort()  # the tap is closing
        except Exception:  # a bug of ours: said, and this connection ends (the others go on)
            log.exception("the tap's connection from the host failed")
            writer.transport.abort()
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _request(self, conn: h11.Connection, reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> tuple[h11.Request, bytes] | None:
        """The host's next request with its whole body, or None when the host is done."""
        request: h11.Request | None = None
        body = bytearray()
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as exc:
                if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                    await self._plain(conn, writer, exc.error_status_hint, f"spyglass tap: bad request: {exc}\n")
                return None
            if event is h11.NEED_DATA:
                if conn.they_are_waiting_for_100_continue:
                    await self._write(writer, conn.send(h11.InformationalResponse(status_code=100, headers=[])))
                conn.receive_data(await reader.read(READ_CHUNK))
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage) and request is not None:
                return request, bytes(body)
            else:  # the host closed the connection between requests
                return None

    @staticmethod
    async def _write(writer: asyncio.StreamWriter, data: bytes | None) -> None:
        if data:
            writer.write(data)
            await writer.drain()

    async def _plain(self, conn: h11.Connection, writer: asyncio.StreamWriter, status: int, text: str) -> None:
        """An answer of the tap's own (a short text), the connection closed after it."""
        body = text.encode()
        headers = [(b"Content-Type", b"text/plain; charset=utf-8"), (b"Content-Length", str(len(body)).encode()),
                   (b"Connection", b"close")]
        await self._write(writer, conn.send(h11.Response(status_code=status, headers=headers)))
        await self._write(writer, conn.send(h11.Data(data=body)))
        await self._write(writer, conn.send(h11.EndOfMessage()))

    async def _exchange(self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        request: h11.Request, body: bytes) -> None:
        """One request forwarded and its answer passed back, while the host's side is watched: a host that
        hangs up ends the stream to the server too (which is how a 2026-07-28 request is cancelled)."""
        authority = next((v.decode("latin-1") for k, v in request.headers if k == b"host"), "")
        if not self.allow_remote and authority and not _loopback_authority(authority):
            await self._plain(conn, writer, 403, f"spyglass tap: this proxy answers requests for a loopback "
                                                 f"address only, not Host {authority}\n")
            return
        method = request.method.decode("ascii", "replace")
        last_event_id = next((v.decode("latin-1") for k, v in request.headers if k == b"last-event-id"), None)
        if method in ("POST", "GET"):
            stream = f"{method}#{next(self._numbers)}"
            if last_event_id:
                stream += f" (resume after {last_event_id})"
        else:  # numbered apart: HAR reads a gap in the POST and GET numbers as a POST that got no answer
            stream = f"{method}#{next(self._others)}"
        work = asyncio.ensure_future(self._forward(conn, writer, request, body, stream, last_event_id,
                                                   authority or self.authority))
        watch: asyncio.Future[bytes] = asyncio.ensure_future(reader.read(READ_CHUNK))
        try:
            while not work.done():
                await asyncio.wait((work, watch), return_when=asyncio.FIRST_COMPLETED)
                if not watch.done() or work.done():
                    continue
                data = b"" if watch.exception() is not None else watch.result()
                if not data:
                    work.cancel()
                    await asyncio.wait((work,))
                    self._err(f"the host closed {stream} before its answer ended; the stream to the server was "
                              "closed", {"stream": stream})
                    raise _Cut
                conn.receive_data(data)  # a pipelined request: h11 keeps it for the next cycle
                watch = asyncio.ensure_future(reader.read(READ_CHUNK))
            work.result()
        finally:
            if not work.done():  # the tap is closing: the stream to the server is closed before the client is
                work.cancel()
                await asyncio.wait((work,))
            if watch.done() and not watch.cancelled() and watch.exception() is None:
                conn.receive_data(watch.result())  # what came as the answer ended (b"": the host is done)
            else:
                watch.cancel()
                with contextlib.suppress(BaseException):
                    await watch

    async def _forward(self, conn: h11.Connection, writer: asyncio.StreamWriter, request: h11.Request,
                       body: bytes, stream: str, last_event_id: str | None, authority: str) -> None:
        method = request.method.decode("ascii", "replace")
        raw = list(request.headers.raw_items())
        wire_id = None
        if body:
            self.recorder.frame("out", body, {"stream": stream})
            wire_id = _wire_id(body)
        elif last_event_id is not None:
            wire_id = self._event_requests.get(last_event_id)
        target = self._target(request.target)
        url = self.base + target.decode("ascii", "replace")
        has_length = any(k.lower() == b"content-length" for k, _ in raw)
        try:
            resp = await self.client.send(request.method, target, _forwarded(raw, NOT_FORWARDED),
                                          body if body or has_length else None)
        except UpstreamError as exc:
            why = f"cannot reach {url}: {exc}" if exc.before_answer else f"{url}: {exc}"
            self._err(f"{stream}: {why}", {"stream": stream, "url": url})
            await self._plain(conn, writer, 502, f"spyglass tap: {why}\n")
            return
        try:
            await self._answer(conn, writer, method, url, resp, stream, wire_id, authority)
        finally:
            await resp.aclose()

    def _target(self, target: bytes) -> bytes:
        """The server's path and query for the host's: the same, but for the root, which stands for URL's."""
        if target.startswith((b"http://", b"https://")):  # absolute-form: only its path and query count
            target = b"/" + target.split(b"/", 3)[3] if target.count(b"/") >= 3 else b"/"
        path, mark, query = target.partition(b"?")
        if path in (b"", b"/", b"*"):
            own, own_mark, own_query = self.upstream.raw_path.partition(b"?")
            return own + (mark + query if mark else own_mark + own_query)
        return target

    def _err(self, text: str, meta: dict[str, Any]) -> None:
        self.recorder.frame("err", f"spyglass tap: {text}".encode(), meta)

    def _exchange_frame(self, method: str, url: str, resp: Answer, stream: str) -> None:
        asked, answered = _header_dict(resp.sent), _header_dict(resp.headers)
        reason = resp.reason.decode("latin-1") or _phrase(resp.status)
        record = {"method": method, "url": url, "status": resp.status, "reason": reason, "stream": stream,
                  "request_headers": asked, "response_headers": answered}
        meta = record
        if self.recorder.mask:  # the recorder masks a frame's data; the meta, which the views read, is ours
            meta = dict(record, request_headers=mask_mapping(asked), response_headers=mask_mapping(answered))
        self.recorder.frame("http", json.dumps(record, ensure_ascii=False).encode(), meta)

    async def _answer(self, conn: h11.Connection, writer: asyncio.StreamWriter, method: str, url: str,
                      resp: Answer, stream: str, wire_id: Any, authority: str) -> None:
        self._exchange_frame(method, url, resp, stream)
        status = resp.status
        ctype = resp.header(b"content-type").split(";")[0].strip().lower()
        decode = Decoded(resp.header(b"content-encoding").strip().lower())
        relay = None
        drop = HOP_BY_HOP
        if ctype == "text/event-stream":
            plain = decode.encoding in ("", "identity")  # an encoded stream passes as it is, not rewritten
            relay = SseRelay(self._rewriter(authority) if plain else None)
            if plain:
                drop = HOP_BY_HOP | {b"content-length"}  # a rewritten endpoint changes the length
        headers = _forwarded(resp.headers, drop)
        # What is ready goes to the host in one write: the head with the body's first bytes, the last bytes with
        # the end, when they came together; whatever has come is passed on before the tap waits for more (a
        # quiet stream's head at once, each event as it arrives).
        try:
            pending = bytearray(conn.send(h11.Response(status_code=status, headers=headers, reason=resp.reason))
                                or b"")
        except h11.LocalProtocolError as exc:  # a 1xx (an upgrade) the proxy cannot pass on
            self._err(f"{stream}: HTTP {status} cannot be passed on ({exc})", {"stream": stream})
            raise _Cut from None
        kept = bytearray()
        cut = False
        try:
            async for chunk in resp.body():
                if not chunk:  # nothing more is ready: pass on what is
                    if pending:
                        await self._write(writer, bytes(pending))
                        pending.clear()
                    continue
                if relay is not None:
                    passed = relay.feed(decode(chunk))
                    if relay.rewrite is None:
                        passed = chunk
                    if passed:
                        pending += conn.send(h11.Data(data=passed)) or b""
                    self._events(relay, stream, wire_id)
                    continue
                if len(kept) <= MAX_BODY:
                    kept += decode(chunk)
                pending += conn.send(h11.Data(data=chunk)) or b""
                if len(pending) >= READ_CHUNK:
                    await self._write(writer, bytes(pending))
                    pending.clear()
        except UpstreamError as exc:
            self._err(f"{stream}: the server's answer broke off: {exc}", {"stream": stream})
            cut = True
        if relay is not None:
            rest = relay.end()
            if rest and relay.rewrite is not None:
                pending += conn.send(h11.Data(data=rest)) or b""
            self._events(relay, stream, wire_id)
        else:
            self._body(bytes(kept), ctype, status, stream, wire_id)
        if decode.failed:
            self._err(f"{stream}: {decode.failed}", {"stream": stream})
        if cut:
            await self._write(writer, bytes(pending))  # what came before the break, as the tap saw it
            raise _Cut
        try:
            pending += conn.send(h11.EndOfMessage()) or b""
        except h11.LocalProtocolError as exc:  # shorter than its Content-Length said
            self._err(f"{stream}: the server's answer ended early ({exc})", {"stream": stream})
            await self._write(writer, bytes(pending))
            raise _Cut from None
        await self._write(writer, bytes(pending))

    def _body(self, body: bytes, ctype: str, status: int, stream: str, wire_id: Any) -> None:
        """A whole body, recorded as the transport reads it: JSON as an "in" frame; a JSON-RPC error as one
        whatever the status; anything else that should have been an answer as a note with its start."""
        if not body.strip():
            return
        meta: dict[str, Any] = {"stream": stream, "status": status}
        if wire_id is not None:
            meta["request"] = wire_id
        if len(body) > MAX_BODY:
            body, meta["cut"] = body[:MAX_BODY], f"the body was longer than {MAX_BODY} bytes: its start is kept"
        if ctype == "application/json" or ctype.endswith("+json"):
            if status < 400 or b'"jsonrpc"' in body[:4096]:
                self.recorder.frame("in", body, meta)
                return
        if status >= 300:  # a 2xx body of another type (HTTP+SSE's "Accepted") is no answer, nor an error
            self._err(f"{stream}: HTTP {status} with {ctype or 'no Content-Type'}: {excerpt(body)}", meta)

    def _events(self, relay: SseRelay, stream: str, wire_id: Any) -> None:
        events, relay.events = relay.events, []
        if wire_id is not None and relay.last_id:  # data-less priming events count: a resume names them
            self._event_requests[relay.last_id] = wire_id
            if len(self._event_requests) > REMEMBERED_EVENTS:
                del self._event_requests[next(iter(self._event_requests))]
        for event in events:
            if event.event == "endpoint":
                self._endpoint(event, stream)
                continue
            meta: dict[str, Any] = {"stream": stream, "event_id": event.id, "event": event.event}
            if wire_id is not None:
                meta["request"] = wire_id
            if event.cut:
                meta["cut"] = "the stream ended before this event's blank line: a reader drops it"
            self.recorder.frame("in", event.data, meta)

    def _rewriter(self, authority: str) -> Callable[[str], str | None]:
        def rewrite(endpoint: str) -> str | None:
            if not self._same_origin(endpoint):
                return None
            parts = urlsplit(endpoint)
            return urlunsplit(("http", authority, parts.path, parts.query, parts.fragment))

        return rewrite

    def _same_origin(self, endpoint: str) -> bool:
        defaults, up = {"http": 80, "https": 443}, self.upstream
        try:
            parts = urlsplit(endpoint)
            port = parts.port or defaults.get(parts.scheme.lower())
        except ValueError:
            return False
        return (parts.scheme.lower(), parts.hostname, port) == (up.scheme, up.host, up.port or defaults[up.scheme])

    def _endpoint(self, event: SseEvent, stream: str) -> None:
        """An HTTP+SSE endpoint event: said in the session when it was rewritten, or when it sends the host
        past the tap (what it posts there is not recorded)."""
        endpoint = event.data.decode("utf-8", "replace").strip()
        meta = {"stream": stream, "event": "endpoint", "endpoint": endpoint}
        if event.rewritten:
            self._err(f"the server's endpoint {endpoint} was given to the host as {event.rewritten}, so that its "
                      "posts come through the tap", {**meta, "rewritten": event.rewritten})
        elif urlsplit(endpoint).netloc:
            why = ("could not be rewritten (an encoded stream, or its data came before its event line)"
                   if self._same_origin(endpoint) else "is on another origin")
            self._err(f"the server's endpoint {endpoint} {why}: the host posts there past the tap, and those "
                      "messages are not recorded", meta)


# ---------------------------------------------------------------------------- entry points
async def serve(host: str, port: int, url: str, recorder: TapRecorder, *, ready: Callable[[int], None] | None = None,
                allow_remote: bool = False, insecure: bool = False, stop: asyncio.Event | None = None) -> None:
    """Serves in the running loop until `stop` is set (or the task is cancelled), then ends every connection
    and returns. `ready(port)` once listening."""
    tap = HttpTap(url, recorder, insecure=insecure)
    try:
        actual = await tap.start(host, port, allow_remote=allow_remote)
        if ready is not None:
            ready(actual)
        await (stop or asyncio.Event()).wait()
    finally:
        await tap.close()


def run_proxy(host: str, port: int, url: str, recorder: TapRecorder, *, ready: Callable[[int], None] | None = None,
              allow_remote: bool = False, insecure: bool = False) -> int:
    """`spyglass tap --listen host:port URL`: serves until SIGINT or SIGTERM, then returns 0. Raises UsageError
    (before anything listens) for a non-loopback address without `allow_remote`, a bad URL, a busy port."""
    check_listen(host, allow_remote)
    upstream_of(url)
    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        handled = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not on this platform
                loop.add_signal_handler(sig, stop.set)
                handled.append(sig)
        try:
            await serve(host, port, url, recorder, ready=ready, allow_remote=allow_remote, insecure=insecure,
                        stop=stop)
        finally:
            for sig in handled:
                loop.remove_signal_handler(sig)

    with contextlib.suppress(KeyboardInterrupt):  # where signal handlers cannot be installed
        asyncio.run(main())
    return 0
