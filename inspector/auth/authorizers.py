"""How the authorization page is visited and the redirect comes back.

- `LoopbackAuthorizer`: the page is handed to `open_url` (the window's sign-in dialog or the command
  line's question: each asks the user before a browser opens; with none, nothing opens and the address
  is logged); a one-shot listener on 127.0.0.1 (random port) receives the redirect and closes. Pasting
  the redirect URL by hand is the fallback (`paste`). The address is checked by the URL policy first.
- `HeadlessAuthorizer`: for automation against test authorization servers that
  redirect at once: the page is fetched directly and its redirect followed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol
from urllib.parse import urljoin, urlsplit

import httpx

from .. import urlpolicy
from .errors import AuthFailed

log = logging.getLogger("spyglass.auth")


class Fetch(Protocol):
    """An HTTP request recorded on the authorization step."""

    def __call__(self, method: str, url: str, *, headers: dict[str, str] | None = None,
                 follow_redirects: bool = True) -> Awaitable[httpx.Response]: ...


MAX_REDIRECTS = 10
HEADLESS_REDIRECT_URI = "http://127.0.0.1/callback"
_PAGE = (b"<!doctype html><meta charset=utf-8><title>Spyglass</title>"
         b"<p>Spyglass received the authorization response. You can close this tab.</p>")


class Authorizer(Protocol):
    async def prepare(self) -> str:
        """The redirect URI to register and send (starts a listener where one is used)."""

    async def authorize(self, url: str, fetch: Fetch) -> str:
        """Visit the authorization URL; return the redirect URL that came back."""

    async def close(self) -> None:
        ...


class HeadlessAuthorizer:
    """Fetch the authorization URL and follow its redirects until one reaches the redirect URI."""

    def __init__(self, redirect_uri: str = HEADLESS_REDIRECT_URI) -> None:
        self.redirect_uri = redirect_uri

    async def prepare(self) -> str:
        return self.redirect_uri

    async def authorize(self, url: str, fetch: Fetch) -> str:
        current = url
        for _ in range(MAX_REDIRECTS):
            resp = await fetch("GET", current, follow_redirects=False, headers={"Accept": "text/html"})
            location: str | None = resp.headers.get("location")
            if resp.status_code in (301, 302, 303, 307, 308) and location:
                target = urljoin(current, location)
                if _same_endpoint(target, self.redirect_uri):
                    return target
                refused = urlpolicy.refusal(target, who="the authorization server", purpose=urlpolicy.FETCH)
                if refused:
                    raise AuthFailed("authorization", f"a redirect was not followed: {refused}")
                current = target
                continue
            if resp.status_code >= 400:
                raise AuthFailed("authorization", f"the authorization endpoint answered HTTP {resp.status_code}")
            raise AuthFailed("authorization", f"the authorization page (HTTP {resp.status_code}) wants a person "
                                              "to sign in; --auth-headless only works with servers that "
                                              "redirect at once: run without it to use the browser")
        raise AuthFailed("authorization", f"more than {MAX_REDIRECTS} redirects without reaching "
                                          f"{self.redirect_uri}")

    async def close(self) -> None:
        pass


class LoopbackAuthorizer:
    """The system browser plus a one-shot redirect listener on 127.0.0.1."""

    def __init__(self, *, open_url: Callable[[str], Any] | None = None, timeout: float = 300.0,
                 paste: Callable[[str], Awaitable[str]] | None = None, path: str = "/callback",
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self.open_url = open_url or _not_opened
        self.timeout = timeout
        self.paste = paste
        self.path = path
        self.host = host
        self.listen_port = port  # 0: any free port (`--callback-url` may fix one)
        self.port: int | None = None
        self._server: asyncio.base_events.Server | None = None
        self._answer: asyncio.Future[str] | None = None

    @property
    def listening(self) -> bool:
        return self._server is not None

    async def prepare(self) -> str:
        if self._server is None:
            self._answer = asyncio.get_running_loop().create_future()
            try:
                self._server = await asyncio.start_server(self._handle, self.host, self.listen_port)
            except OSError as exc:
                raise AuthFailed("authorization", f"cannot listen for the redirect on {self._url_host}:"
                                                  f"{self.listen_port}: {exc.strerror or exc}") from None
            self.port = self._server.sockets[0].getsockname()[1]
        return f"http://{self._url_host}:{self.port}{self.path}"

    @property
    def _url_host(self) -> str:
        return f"[{self.host}]" if ":" in self.host else self.host

    async def authorize(self, url: str, fetch: Fetch) -> str:
        refused = urlpolicy.refusal(url, who="the authorization server")
        if refused:  # the flow checks its endpoint first; an authorizer handed an address directly checks too
            await self.close()
            raise AuthFailed("authorization", refused)
        redirect_uri = await self.prepare()
        assert self._answer is not None
        try:
            opened = self.open_url(url)
            if asyncio.iscoroutine(opened):
                opened = await opened
            if opened is False:
                log.warning("could not open a browser; open this URL to authorize: %s", url)
            waiters: list[asyncio.Future[str]] = [self._answer]
            if self.paste is not None:
                waiters.append(asyncio.ensure_future(self.paste(url)))
            done, pending = await asyncio.wait(waiters, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                if task is not self._answer:
                    task.cancel()
            if not done:
                raise AuthFailed("authorization", f"no redirect reached {redirect_uri} within {self.timeout:g} s "
                                                  "(was the sign-in finished in the browser?)")
            answer = done.pop().result()
            if not _same_endpoint(answer, redirect_uri) and not answer.startswith("?"):
                raise AuthFailed("authorization", "the pasted URL is not the redirect to "
                                                  f"{redirect_uri}")
            return answer if not answer.startswith("?") else redirect_uri + answer
        finally:
            await self.close()

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            try:
                await asyncio.wait_for(server.wait_closed(), 2.0)
            except Exception:  # a slow or failing close must not fail the sign-in
                pass

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10.0)
            request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = request_line.split(" ")
            target = parts[1] if len(parts) >= 3 else ""
            if parts[0] != "GET" or urlsplit(target).path != self.path:
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: "
                         + str(len(_PAGE)).encode() + b"\r\nConnection: close\r\n\r\n" + _PAGE)
            if self._answer is not None and not self._answer.done():
                self._answer.set_result(f"http://{self._url_host}:{self.port}{target}")
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            try:
                await writer.drain()
                writer.close()
            except Exception:
                pass


def _same_endpoint(url: str, redirect_uri: str) -> bool:
    a, b = urlsplit(url), urlsplit(redirect_uri)
    return (a.scheme, a.netloc, a.path) == (b.scheme, b.netloc, b.path)


def _not_opened(url: str) -> bool:
    """No way to ask the user was given: nothing opens (the authorizer logs the address instead)."""
    return False
