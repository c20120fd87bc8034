"""The doctor's steps for a server reached by URL: the URL, a proxy from the environment, DNS (every
address), TCP to each, TLS, the answer to a POST, authorization when it is asked for (authz.py), the
protocol revisions spoken, the legacy HTTP+SSE transport when Streamable HTTP is refused, and the session.
Every wait is bounded by the doctor's timeout; nothing is sent that the user did not give."""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
from httpx_sse import EventSource

from .. import errors as E
from ..config import ServerSpec
from ..protocol import jsonrpc as rpc
from ..protocol.versions import MODERN_VERSION
from ..secrets import mask_url
from ..transport.http_common import HttpSettings, excerpt, failure_text
from . import eras
from .authz import AUTH_STEPS, Authorization
from .report import Report, Step, StepFailed, StepSkipped
from .tls import check_tls

STEPS: tuple[tuple[str, str], ...] = (
    ("url", "URL parses"), ("proxy", "HTTP proxy"), ("dns", "DNS"), ("tcp", "TCP connect"), ("tls", "TLS"),
    ("post", "answer to a POST"), *AUTH_STEPS, ("revisions", "protocol revisions"),
    ("legacy-sse", "legacy HTTP+SSE transport"), ("session", "session"))
MAX_READ = 1024 * 1024
ACCEPT = "application/json, text/event-stream"
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


@dataclass
class Exchange:
    """One request and what came back: status, headers, the body's start, the JSON-RPC messages in it."""

    method: str
    status: int
    headers: httpx.Headers
    body: bytes = b""
    messages: list[rpc.Message | rpc.Malformed] = field(default_factory=list)

    @property
    def ctype(self) -> str:
        return str(self.headers.get("content-type", "")).split(";")[0].strip().lower()

    def answer(self, request_id: str) -> rpc.Message | rpc.Malformed | None:
        return next((m for m in self.messages if eras.answer_to(m, request_id)), None)

    def describe(self) -> str:
        return f"{self.method}: HTTP {self.status}, {self.ctype or 'no content type'}"


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def proxy_for(scheme: str, host: str) -> str | None:
    """The proxy httpx takes from the environment for `scheme://host`, or None: `NO_PROXY` entries as httpx
    reads them (`*`, a host, a domain suffix, an address; loopback is not left out unless named)."""
    proxies = urllib.request.getproxies()
    chosen = proxies.get(scheme) or proxies.get("all")
    if not chosen:
        return None
    host = host.lower().strip("[]")
    for entry in (e.strip().lower() for e in proxies.get("no", "").split(",")):
        if not entry:
            continue
        if entry == "*" or host == entry.strip("[]") or (not entry.replace(".", "").isdigit() and
                                                          host.endswith(entry) and entry != "localhost"):
            return None
    return chosen if "://" in chosen else f"http://{chosen}"


def html_title(body: bytes) -> str | None:
    found = _TITLE.search(body[:65536])
    if found is None:
        return None
    return " ".join(found.group(1).decode("utf-8", "replace").split())[:120] or None


def looks_html(ex: Exchange) -> bool:
    return ex.ctype in ("text/html", "application/xhtml+xml") or ex.body.lstrip()[:15].lower().startswith(
        (b"<!doctype html", b"<html"))


class HttpDoctor:
    """One run of the URL steps against `spec`."""

    def __init__(self, spec: ServerSpec, timeout: float, auth_token: str | None = None,
                 client_id: str | None = None) -> None:
        assert spec.url is not None
        self.spec = spec
        self.url = spec.url
        self.timeout = timeout
        self.auth_token = auth_token
        self.unparsed: str | None = None  # why the URL does not parse: the first step says so
        try:
            self.parts = urlsplit(self.url)
            self.parts.hostname  # noqa: B018 - raises too ("Invalid IPv6 URL")
        except ValueError as exc:
            self.parts, self.unparsed = urlsplit(""), str(exc)
        self.host = self.parts.hostname or ""
        self.port = 0
        self.addresses: list[str] = []
        self.reachable: str | None = None
        self.exchanges: dict[str, Exchange] = {}
        self.legacy = False
        self.proxy_url: str | None = None
        self.legacy_endpoint: str | None = None
        self.settings = HttpSettings(headers=spec.headers, auth_token=auth_token, connect_timeout=timeout,
                                     tls_pin=spec.tls_pin)
        self.client: httpx.AsyncClient | None = None
        self.authz = Authorization(self, client_id or spec.oauth.get("client_id"))

    @property
    def sends_credentials(self) -> bool:
        return bool(self.auth_token) or any(k.lower() == "authorization" for k in self.spec.headers)

    async def run(self, report: Report) -> None:
        try:
            for step_id, body in (("url", self.check_url), ("proxy", self.proxy), ("dns", self.dns),
                                  ("tcp", self.tcp), ("tls", self.tls), ("post", self.post)):
                if not await report.run(step_id, body):
                    return
            if not await self.authz.run(report):
                return
            for step_id, body in (("revisions", self.revisions), ("legacy-sse", self.legacy_sse),
                                  ("session", self.session)):
                if not await report.run(step_id, body):
                    return
            report.connected = True
        finally:
            if self.client is not None:
                await self.client.aclose()

    def http(self) -> httpx.AsyncClient:
        if self.client is None:
            self.client = self.settings.client()
        return self.client

    # -- reaching the host -------------------------------------------------------------------------
    async def check_url(self, step: Step) -> None:
        p = self.parts
        if self.unparsed is not None:
            raise StepFailed(f"the URL does not parse: {self.unparsed}",
                             "give the server's URL, e.g. http://127.0.0.1:3000/mcp", E.EXIT_USAGE)
        if p.scheme not in ("http", "https"):
            raise StepFailed(f"scheme {p.scheme or '(none)'}: not http or https",
                             "give the server's URL, e.g. http://127.0.0.1:3000/mcp", E.EXIT_USAGE)
        if not self.host:
            raise StepFailed("no host in the URL", "give the server's URL, e.g. http://127.0.0.1:3000/mcp",
                             E.EXIT_USAGE)
        try:
            self.port = p.port or (443 if p.scheme == "https" else 80)
        except ValueError as exc:
            raise StepFailed(f"bad port: {exc}", "the port is a number from 1 to 65535", E.EXIT_USAGE) from None
        step.saw(f"{p.scheme}://, host {self.host}, port {self.port}, path {p.path or '/'}")
        if p.username or p.password:
            step.saw("the URL carries a user name or password (masked when shown)")

    async def proxy(self, step: Step) -> None:
        chosen = proxy_for(self.parts.scheme, self.host)
        if chosen is None:
            raise StepSkipped("no proxy in the environment applies (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY)")
        self.proxy_url = chosen
        # Spyglass's HTTP client is built on a transport of its own (TCP_NODELAY, the TLS context), and httpx
        # reads no proxy from the environment for a client given its own transport: every request goes direct.
        step.saw(f"the environment names the proxy {mask_url(chosen)} for this URL, but Spyglass does not use "
                 "proxies from the environment: it connects directly, as the steps below do")

    async def dns(self, step: Step) -> None:
        loop = asyncio.get_running_loop()
        try:
            infos = await asyncio.wait_for(loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM),
                                           self.timeout)
        except TimeoutError:
            raise StepFailed(f"no DNS answer for {self.host} within {self.timeout:g} s",
                             "check the network and the DNS server (resolv.conf / your VPN)") from None
        except (OSError, UnicodeError) as exc:  # UnicodeError: a name IDNA cannot encode (an empty label)
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise StepFailed(f"{self.host} does not resolve: {why}",
                             "check the host name; a Docker container's name resolves only inside its network: "
                             "from this machine use localhost and the published port" + self._proxy_note()) from None
        self.addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        step.saw(f"{self.host}: " + ", ".join(self.addresses))

    async def tcp(self, step: Step) -> None:
        failures: list[str] = []
        for address in self.addresses:
            begun = time.monotonic()
            try:
                _, writer = await asyncio.wait_for(asyncio.open_connection(address, self.port), self.timeout)
            except TimeoutError:
                failures.append(f"{address}:{self.port}: no answer within {self.timeout:g} s")
                step.saw(failures[-1])
                continue
            except OSError as exc:
                failures.append(f"{address}:{self.port}: {failure_text(exc)}")
                step.saw(failures[-1])
                continue
            writer.close()
            with contextlib.suppress(OSError, TimeoutError):
                await asyncio.wait_for(writer.wait_closed(), self.timeout)
            step.saw(f"{address}:{self.port}: connected in {(time.monotonic() - begun) * 1000:.0f} ms")
            if self.reachable is None:
                self.reachable = address
        if self.reachable is None:
            refused = any("refused" in f for f in failures)
            raise StepFailed(
                f"nothing accepts connections on port {self.port} of {self.host}" if refused else
                f"no address of {self.host} answered on port {self.port}",
                f"start the server, or check the port ({self.port}); a server in Docker must publish it "
                "(-p HOST:CONTAINER) and listen on 0.0.0.0 inside the container" if refused else
                "a firewall may drop the packets, or the server is on another network" + self._proxy_note())

    def _proxy_note(self) -> str:
        if self.proxy_url is None:
            return ""
        return (f"; this network may reach it only through the proxy {mask_url(self.proxy_url)}, which Spyglass "
                "does not use")

    async def tls(self, step: Step) -> None:
        if self.parts.scheme != "https":
            raise StepSkipped("http:// URL: no TLS" + ("" if self.host in ("127.0.0.1", "localhost", "::1") else
                                                       " (traffic and tokens travel in clear text)"))
        assert self.reachable is not None
        await check_tls(step, self.reachable, self.port, self.host, self.timeout, self.spec.tls_pin)

    # -- the endpoint ------------------------------------------------------------------------------
    async def exchange(self, method: str, url: str, message: dict[str, Any] | None,
                       headers: dict[str, str]) -> Exchange:
        """One request, its answer read within the timeout: a JSON body, or an event stream up to the answer
        to `message`."""
        body = eras.encoded(message) if message is not None else None
        sent = {"Accept": ACCEPT, **headers}
        if body is not None:
            sent["Content-Type"] = "application/json"
        request_id = message.get("id") if message else None

        async def go() -> Exchange:
            async with self.http().stream(method, url, content=body, headers=sent, follow_redirects=False,
                                          timeout=httpx.Timeout(self.timeout)) as resp:
                ex = Exchange(f"{method} {message['method'] if message else ''}".strip(), resp.status_code,
                              resp.headers)
                if ex.ctype == "text/event-stream":
                    async for event in EventSource(resp).aiter_sse():
                        if event.data:
                            msg = rpc.parse(event.data.encode())
                            ex.messages.append(msg)
                            if request_id is not None and eras.answer_to(msg, request_id):
                                break
                    return ex
                chunks = []
                async for chunk in resp.aiter_bytes():
                    chunks.append(chunk)
                    if sum(map(len, chunks)) > MAX_READ:
                        break
                ex.body = b"".join(chunks)
                if ex.ctype == "application/json" or (ex.body.lstrip()[:1] in (b"{", b"[")):
                    ex.messages.append(rpc.parse(ex.body))
                return ex

        try:
            return await asyncio.wait_for(go(), self.timeout)
        except TimeoutError:
            raise StepFailed(f"{method} {mask_url(url)}: no complete answer within {self.timeout:g} s",
                             "the server accepted the connection but did not answer: it may be busy, waiting on "
                             "something, or it keeps the response open without sending the answer",
                             E.EXIT_TIMEOUT) from None
        except httpx.HTTPError as exc:
            raise StepFailed(f"{method} {mask_url(url)}: {failure_text(exc)}",
                             "the connection broke during the request (see the TLS step)") from None

    async def post(self, step: Step) -> None:
        modern = {"MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": "server/discover"}
        discover = self.exchanges["discover"] = await self.exchange("POST", self.url, eras.discover_message(), modern)
        step.saw(discover.describe())
        if discover.status == 401:
            self.authz.challenged(discover)
            step.saw("authorization required: see the authorization steps")
            return
        self._judge_status(discover)
        initialize = self.exchanges["initialize"] = await self.exchange("POST", self.url, eras.initialize_message(),
                                                                        {})
        step.saw(initialize.describe())
        if initialize.status == 401:
            self.authz.challenged(initialize)
            return
        if any(ex.messages and not all(isinstance(m, rpc.Malformed) for m in ex.messages)
               for ex in (discover, initialize)):
            return
        self._judge_status(initialize)
        if {discover.status, initialize.status} <= {400, 404, 405}:
            if await self._legacy_endpoint():
                self.legacy = True
                step.saw(f"Streamable HTTP refused (HTTP {initialize.status}); a GET opens a legacy HTTP+SSE stream")
                return
            raise StepFailed(*self._refusal(initialize))
        if initialize.status < 300:
            first = next((m for m in initialize.messages if isinstance(m, rpc.Malformed)), None)
            why = f"the body is not JSON-RPC ({first.reason})" if first else \
                f"content type {initialize.ctype or '(none)'}, neither JSON nor an event stream"
            raise StepFailed(f"{why}: {excerpt(initialize.body)}",
                             "this URL does not serve MCP: check the path (often /mcp)", E.EXIT_INVALID)
        raise StepFailed(f"HTTP {initialize.status}: {excerpt(initialize.body)}",
                         "the server refused the request: see its log")

    def _judge_status(self, ex: Exchange) -> None:
        """Raise for the answers that end the run whatever was sent: a redirect, an HTML page, a 403, a 5xx."""
        if 300 <= ex.status < 400:
            target = ex.headers.get("location", "")
            to = urljoin(self.url, target) if target else "(no Location)"
            fix = f"use the URL it points to: {mask_url(to)}"
            if urlsplit(to).scheme == "https" and self.parts.scheme == "http":
                fix += " (the server wants https)"
            elif to.rstrip("/") == self.url.rstrip("/"):
                fix += " (only a trailing slash differs: MCP clients do not follow redirects of a POST)"
            raise StepFailed(f"a redirect (HTTP {ex.status}) to {mask_url(to)}", fix)
        if looks_html(ex) and not ex.messages:
            title = html_title(ex.body)
            raise StepFailed(f"an HTML page (HTTP {ex.status}{', title: ' + repr(title) if title else ''}), "
                             "not an MCP answer",
                             "this URL serves a web page: check the path (MCP servers usually serve /mcp, or /sse "
                             "for the legacy transport); behind a company proxy or captive portal the page may be "
                             "its sign-in", E.EXIT_CONNECT if ex.status >= 400 else E.EXIT_INVALID)
        if ex.status == 403 and not ex.messages:
            text = excerpt(ex.body)
            if re.search(r"origin|host|rebind", text, re.IGNORECASE):
                raise StepFailed(f"HTTP 403: {text}",
                                 "the server refuses this Host or Origin (protection against DNS rebinding, not "
                                 "CORS: Spyglass is not a browser). A server in Docker or behind a proxy must allow "
                                 "the host name you use: add it to its allowed hosts/origins, or connect as "
                                 "localhost", E.EXIT_AUTH)
            raise StepFailed(f"HTTP 403: {text}", "the server refuses this client: check the token's permissions",
                             E.EXIT_AUTH)
        if ex.status >= 500 and not ex.messages:
            raise StepFailed(f"HTTP {ex.status}: {excerpt(ex.body)}", "the server failed: see its log")

    def _refusal(self, ex: Exchange) -> tuple[str, str]:
        what = {404: "nothing at this path (HTTP 404)", 405: "this path refuses POST (HTTP 405)",
                400: "the server refused the request (HTTP 400)"}[ex.status]
        return (f"{what}, and no legacy HTTP+SSE stream either" + (f": {excerpt(ex.body)}" if ex.body else ""),
                "check the path: MCP servers usually serve /mcp (Streamable HTTP) or /sse (the legacy "
                "HTTP+SSE transport); the server's README or log names it")

    async def _legacy_endpoint(self) -> bool:
        """GET the URL as an SSE stream: an `endpoint` event means the legacy HTTP+SSE transport."""

        async def go() -> str | None:
            async with self.http().stream("GET", self.url, headers={"Accept": "text/event-stream"},
                                          follow_redirects=False, timeout=httpx.Timeout(self.timeout)) as resp:
                if resp.status_code != 200 or "text/event-stream" not in resp.headers.get("content-type", ""):
                    return None
                async for event in EventSource(resp).aiter_sse():
                    if event.event == "endpoint":
                        return urljoin(self.url, event.data.strip())
            return None

        try:
            self.legacy_endpoint = await asyncio.wait_for(go(), self.timeout)
        except (TimeoutError, httpx.HTTPError):
            return False
        return self.legacy_endpoint is not None

    # -- what it speaks --------------------------------------------------------------------------
    async def revisions(self, step: Step) -> None:
        if self.legacy:
            raise StepSkipped("Streamable HTTP refused: see the legacy HTTP+SSE step")
        discover = eras.read_discover(self.exchanges["discover"].answer(eras.DISCOVER_ID))
        initialize = eras.read_initialize(self.exchanges["initialize"].answer(eras.INITIALIZE_ID))
        step.saw(discover.text)
        step.saw(initialize.text)
        speaks = [v for v in (discover.speaks, initialize.speaks) if v]
        if not speaks:
            raise StepFailed("neither handshake was accepted: no protocol revision in common",
                             "update the server's MCP SDK, or ask for a revision it names (--protocol VERSION)")
        step.saw("speaks: " + ", ".join(speaks))

    async def legacy_sse(self, step: Step) -> None:
        if not self.legacy:
            raise StepSkipped("not needed: the server speaks Streamable HTTP")
        assert self.legacy_endpoint is not None
        step.saw(f"endpoint: {mask_url(self.legacy_endpoint)}")
        if urlsplit(self.legacy_endpoint).netloc != self.parts.netloc:
            raise StepFailed("the endpoint is on another host than the stream",
                             "Spyglass refuses to post elsewhere: the server must name an endpoint on its own host")
        answer: asyncio.Future[rpc.Message | rpc.Malformed] = asyncio.get_running_loop().create_future()

        async def listen() -> None:
            async with self.http().stream("GET", self.url, headers={"Accept": "text/event-stream"},
                                          timeout=httpx.Timeout(self.timeout, read=None)) as resp:
                async for event in EventSource(resp).aiter_sse():
                    if event.event == "endpoint":
                        endpoint = urljoin(self.url, event.data.strip())
                        posted = await self.http().post(endpoint, content=eras.encoded(eras.initialize_message()),
                                                        headers={"Content-Type": "application/json"},
                                                        timeout=httpx.Timeout(self.timeout))
                        step.saw(f"POST initialize to the endpoint: HTTP {posted.status_code}")
                    elif event.data:
                        msg = rpc.parse(event.data.encode())
                        if eras.answer_to(msg, eras.INITIALIZE_ID) and not answer.done():
                            answer.set_result(msg)
                            return

        task = asyncio.create_task(listen())
        try:
            msg = await asyncio.wait_for(asyncio.shield(answer), self.timeout)
        except TimeoutError:
            raise StepFailed(f"no answer to initialize on the event stream within {self.timeout:g} s",
                             "the server must send its answers as `message` events on the GET stream",
                             E.EXIT_TIMEOUT) from None
        finally:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        read = eras.read_initialize(msg)
        step.saw(read.text)
        if read.speaks is None:
            raise StepFailed("the legacy transport answered, but not with a protocol revision in common",
                             "update the server's MCP SDK")

    async def session(self, step: Step) -> None:
        if self.legacy:
            step.saw("HTTP+SSE: the session is the GET stream (and the endpoint it named)")
            return
        initialize = self.exchanges["initialize"]
        sid = initialize.headers.get("mcp-session-id")
        if initialize.answer(eras.INITIALIZE_ID) is None or isinstance(initialize.answer(eras.INITIALIZE_ID),
                                                                        rpc.ErrorResponse):
            step.saw("2026-07-28 is stateless: no session")
            return
        if not sid:
            step.saw("no Mcp-Session-Id: a stateless server (every request stands alone)")
            return
        if not all(0x21 <= ord(c) <= 0x7E for c in sid):
            raise StepFailed("the Mcp-Session-Id holds characters outside visible ASCII",
                             "the server must use visible ASCII for session ids", E.EXIT_INVALID)
        step.saw(f"Mcp-Session-Id given ({len(sid)} characters)")
        try:
            done = await asyncio.wait_for(self.http().delete(self.url, headers={"Mcp-Session-Id": sid}), self.timeout)
            step.saw(f"ended with DELETE: HTTP {done.status_code}"
                     + (" (the server does not let clients end sessions)" if done.status_code == 405 else ""))
        except (TimeoutError, httpx.HTTPError) as exc:
            step.saw(f"DELETE of the session failed: {failure_text(exc)}")


