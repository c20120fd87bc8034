"""The HTTP tap's side towards the server: HTTP/1.1 on h11 over asyncio streams, with kept-alive connections
to the one origin a tap forwards to. A request goes out with exactly the headers it is given (and the Host the
origin needs), and its answer comes back as h11 reads it: status, reason and headers as sent, then the body's
bytes as they arrive (de-chunked, still content-encoded), so an event stream passes on unbuffered.

It is the proxy's own client rather than httpx's because a tap adds its cost to every request of a host: httpx
and httpcore spend several times the proxy's own work per request on things a reverse proxy to one origin does
not need (URL and header models, a pool with locks, per-request socket checks), which a fast server on loopback
made plain (calls/s through the tap at 0.6x direct). h11 is the parser httpx itself uses underneath."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import h11

READ_CHUNK = 64 * 1024
KEEP_IDLE = 32  # idle connections kept for the next requests


IDEMPOTENT = frozenset({b"GET", b"HEAD", b"OPTIONS", b"DELETE", b"PUT"})


class UpstreamError(Exception):
    """The server could not be reached, or its answer could not be read; `str()` says why, in words.
    `before_answer`: nothing of an answer had come (the request may not have reached the server)."""

    def __init__(self, text: str, *, before_answer: bool = False) -> None:
        super().__init__(text)
        self.before_answer = before_answer


def why(exc: BaseException) -> str:
    """An OS or TLS failure in words (the OS's own, when it says)."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (is the server running, on that port?)"
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed: {exc.reason or exc}"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]


@dataclass(eq=False)
class _Conn:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    h11: h11.Connection = field(default_factory=lambda: h11.Connection(h11.CLIENT))

    def usable(self) -> bool:
        """Still open and quiet: a server that closed an idle connection has sent its end by now."""
        return not self.writer.is_closing() and not self.reader.at_eof() and self.h11.our_state is h11.IDLE

    def close(self) -> None:
        self.writer.transport.abort()


@dataclass(eq=False)
class Answer:
    """A response being read: `status`, `reason`, `headers` as the server sent them; `body()` its bytes."""

    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]
    sent: list[tuple[bytes, bytes]]  # the request's headers as they went out (Host and length included)
    _conn: _Conn
    _pool: Upstream
    _done: bool = False

    def header(self, name: bytes) -> str:
        """The first header of that (lower-case) name, or ''."""
        return next((v.decode("latin-1") for k, v in self.headers if k.lower() == name), "")

    async def body(self) -> AsyncIterator[bytes]:
        """The body's bytes as they come, and b"" each time what has come is all there is for now (before the
        next wait: a place to pass on what was gathered); UpstreamError when the answer breaks off."""
        conn = self._conn.h11
        while True:
            try:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    yield b""
                    try:
                        data = await self._conn.reader.read(READ_CHUNK)
                    except OSError as exc:
                        raise UpstreamError(why(exc)) from exc
                    conn.receive_data(data)
                    continue
            except h11.RemoteProtocolError as exc:
                raise UpstreamError(str(exc)) from exc
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                self._done = isinstance(event, h11.EndOfMessage)
                return

    async def aclose(self) -> None:
        """Done with it: a whole answer on a connection that may go on is kept for the next request."""
        conn = self._conn
        if self._done and conn.h11.our_state is h11.DONE and conn.h11.their_state is h11.DONE:
            conn.h11.start_next_cycle()
            self._pool.keep(conn)
        else:
            conn.close()


class Upstream:
    """Kept-alive HTTP/1.1 connections to one origin. `await send(...)` → an `Answer`; `await close()`."""

    def __init__(self, scheme: str, host: str, port: int, *, tls: ssl.SSLContext | bool = True,
                 connect_timeout: float = 10.0) -> None:
        self.scheme, self.host, self.port = scheme, host, port
        default = 443 if scheme == "https" else 80
        name = f"[{host}]" if ":" in host else host
        self.authority = name if port == default else f"{name}:{port}"
        self.connect_timeout = connect_timeout
        self.ssl: ssl.SSLContext | None = None
        if scheme == "https":
            if isinstance(tls, ssl.SSLContext):
                self.ssl = tls
            else:
                self.ssl = ssl.create_default_context()
                if tls is False:  # --insecure
                    self.ssl.check_hostname = False
                    self.ssl.verify_mode = ssl.CERT_NONE
        self._idle: list[_Conn] = []
        self._open: set[_Conn] = set()
        self.opened = 0  # connections made so far

    async def _connect(self) -> _Conn:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(
                self.host, self.port, ssl=self.ssl, server_hostname=self.host if self.ssl else None,
                limit=READ_CHUNK), self.connect_timeout)
        except (TimeoutError, OSError, ssl.SSLError) as exc:
            raise UpstreamError(why(exc) + (f" after {self.connect_timeout:g} s" if isinstance(
                exc, TimeoutError) else ""), before_answer=True) from exc
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):  # a request's headers and body are two writes
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.opened += 1
        conn = _Conn(reader, writer)
        self._open.add(conn)
        return conn

    def _take(self) -> _Conn | None:
        while self._idle:
            conn = self._idle.pop()
            if conn.usable():
                return conn
            conn.close()
            self._open.discard(conn)
        return None

    def keep(self, conn: _Conn) -> None:
        if conn.usable() and len(self._idle) < KEEP_IDLE:
            self._idle.append(conn)
        else:
            conn.close()
            self._open.discard(conn)

    async def send(self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]],
                   body: bytes | None) -> Answer:
        """Sends one request (`headers` as given, Host first when they have none; `body` None: no body and no
        length) and reads its answer's head. UpstreamError when the server cannot be reached or answers with
        something that is not HTTP."""
        if not any(k.lower() == b"host" for k, _ in headers):
            headers = [(b"Host", self.authority.encode("ascii")), *headers]
        if body is not None and not any(k.lower() == b"content-length" for k, _ in headers):
            headers = [*headers, (b"Content-Length", str(len(body)).encode())]
        conn = self._take()
        reused = conn is not None
        if conn is None:
            conn = await self._connect()
        try:
            return await self._exchange(conn, method, target, headers, body)
        except UpstreamError as exc:
            self._drop(conn)
            # A kept connection the server closed as the request went out: a request that changes nothing
            # goes once more on a new one; a POST is never sent twice (the server may have acted on it).
            if not reused or method not in IDEMPOTENT or not exc.before_answer:
                raise
        except BaseException:  # cancelled (the host left): the connection is in no state to be kept
            self._drop(conn)
            raise
        conn = await self._connect()
        try:
            return await self._exchange(conn, method, target, headers, body)
        except BaseException:
            self._drop(conn)
            raise

    def _drop(self, conn: _Conn) -> None:
        conn.close()
        self._open.discard(conn)

    async def _exchange(self, conn: _Conn, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]],
                        body: bytes | None) -> Answer:
        machine = conn.h11
        try:
            out = machine.send(h11.Request(method=method, target=target, headers=headers)) or b""
            if body:
                out += machine.send(h11.Data(data=body)) or b""
            out += machine.send(h11.EndOfMessage()) or b""
        except h11.LocalProtocolError as exc:
            raise UpstreamError(f"the request cannot be sent as HTTP/1.1: {exc}") from exc
        got = 0  # bytes of the answer read
        try:
            conn.writer.write(out)
            await conn.writer.drain()
            while True:
                event = machine.next_event()
                if event is h11.NEED_DATA:
                    data = await conn.reader.read(READ_CHUNK)
                    got += len(data)
                    machine.receive_data(data)
                    continue
                if isinstance(event, h11.InformationalResponse):
                    continue  # 100 Continue and the like: the answer is still to come
                if isinstance(event, h11.Response):
                    return Answer(event.status_code, bytes(event.reason), list(event.headers.raw_items()), headers,
                                  conn, self)
                raise UpstreamError("the server closed the connection without answering", before_answer=True)
        except h11.RemoteProtocolError as exc:
            if not got:
                raise UpstreamError("the server closed the connection without answering", before_answer=True) from exc
            raise UpstreamError(f"the server's answer is not HTTP/1.1: {exc}") from exc
        except OSError as exc:
            raise UpstreamError(why(exc), before_answer=not got) from exc

    async def close(self) -> None:
        for conn in list(self._open):
            conn.close()
        self._open.clear()
        self._idle.clear()
