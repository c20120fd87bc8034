"""What both HTTP transports share: the user's settings and the client they make, authorization (a
provider the transports ask for headers and tell of 401 and 403 answers), and reading an answer's body
and saying what went wrong, briefly and in words (asyncio + httpx, no Qt).
"""

from __future__ import annotations

import hashlib
import socket
import ssl
import weakref
from collections.abc import Mapping
from typing import Protocol

import httpx

from ..errors import AuthRequired
from ..secrets import MASK, mask_mapping

MAX_BODY = 64 * 1024 * 1024
EXCERPT = 300


class PinnedSSLObject(ssl.SSLObject):
    """A TLS connection that trusts one certificate: after the handshake, before any byte of the request,
    the server's certificate must have the SHA-256 fingerprint pinned on its context."""

    def do_handshake(self) -> None:
        super().do_handshake()
        der = self.getpeercert(binary_form=True) or b""
        pin = getattr(self.context, "pin", "")
        if hashlib.sha256(der).hexdigest().upper() != pin:
            raise ssl.SSLCertVerificationError(
                1, "the server's certificate is not the one trusted for this server (its SHA-256 fingerprint "
                   "differs from the pinned one)")


class PinnedContext(ssl.SSLContext):
    """The context of a server whose certificate the user trusted, for that server only (the catalog keeps
    the pin): no trust store is asked, only the fingerprint is (PinnedSSLObject)."""

    sslobject_class = PinnedSSLObject
    pin = ""


def pinned_context(pin: str) -> PinnedContext:
    ctx = PinnedContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the fingerprint is checked instead, before anything is sent
    ctx.pin = pin.upper()
    return ctx


def ssl_context(insecure: bool, pin: str = "") -> ssl.SSLContext | bool:
    """The operating system's trust store, one pinned certificate (a server's `tls_pin`), or no verification
    with --insecure."""
    if insecure:
        return False
    if pin:
        return pinned_context(pin)
    try:
        import truststore

        return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    except Exception:  # pragma: no cover - truststore unavailable on this platform
        return ssl.create_default_context()


class AuthProvider(Protocol):
    """Authorization for HTTP transports (implemented by inspector.auth)."""

    async def request_headers(self, method: str, url: str) -> dict[str, str]:
        """Headers for one request: Authorization (and a DPoP proof where used)."""

    async def on_unauthorized(self, client: httpx.AsyncClient, url: str, response: httpx.Response) -> bool:
        """A 401: run or refresh the authorization flow. True: retry the request.
        Raises AuthRequired naming the failing step when it cannot complete."""

    async def on_forbidden(self, client: httpx.AsyncClient, url: str, response: httpx.Response) -> bool:
        """A 403 (e.g. insufficient_scope): step up. True: retry the request."""


MAX_AUTH_ROUNDS = 3


class HttpSettings:
    """What the user configures per HTTP server."""

    def __init__(self, *, headers: Mapping[str, str] | None = None, auth_token: str | None = None,
                 insecure: bool = False, connect_timeout: float = 10.0, auth: AuthProvider | None = None,
                 tls_pin: str = "") -> None:
        self.auth = auth
        self.tls_pin = tls_pin
        self.headers = dict(headers or {})
        if auth_token:
            self.headers["Authorization"] = f"Bearer {auth_token}"
        self.insecure = insecure
        self.connect_timeout = connect_timeout

    def client(self) -> httpx.AsyncClient:
        timeout = httpx.Timeout(connect=self.connect_timeout, read=None, write=30.0, pool=self.connect_timeout)
        verify = ssl_context(self.insecure, self.tls_pin)
        # TCP_NODELAY: a request's headers and body go out as separate writes;
        # with Nagle's algorithm the body waits for the server's delayed ACK
        # (40 ms on Linux) on every request.
        transport = httpx.AsyncHTTPTransport(verify=verify, socket_options=[
            (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        return httpx.AsyncClient(transport=transport, verify=verify, timeout=timeout, follow_redirects=True,
                                 headers={"User-Agent": "spyglass"})


_read: weakref.WeakKeyDictionary[httpx.Response, bytes] = weakref.WeakKeyDictionary()


async def read_capped(resp: httpx.Response) -> bytes:
    """The body, read up to MAX_BODY (a server's error page must not fill the memory). Asked again for
    the same response (the authorization flow read it first), the same bytes."""
    if resp in _read:
        return _read[resp]
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_BODY:
            break
    body = _read[resp] = b"".join(chunks)
    return body


def excerpt(body: bytes) -> str:
    """The start of a body on one line, for a message."""
    text = body.decode("utf-8", errors="replace")
    text = " ".join(text.split())
    return text[:EXCERPT] + ("…" if len(text) > EXCERPT else "")


def failure_text(exc: BaseException) -> str:
    """Why a connection failed, in words (the OS's, when it says)."""
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and len(chain) < 10:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    if any(isinstance(c, ConnectionRefusedError) for c in chain):
        return "connection refused (is the server running, on that port?)"
    for c in reversed(chain):
        if isinstance(c, OSError) and c.strerror:
            return c.strerror
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]


def auth_required(resp: httpx.Response, url: str) -> AuthRequired:
    """A 401 that no authorization flow could answer, with the server's challenge."""
    challenge = resp.headers.get("www-authenticate", "")
    message = f"{url} requires authorization (HTTP 401)"
    if challenge:
        message += f"; WWW-Authenticate: {challenge[:300]}"
    return AuthRequired(message, url=url, www_authenticate=challenge or None)


def shown_headers(headers: Mapping[str, str], settings: HttpSettings) -> dict[str, str]:
    """Headers as a hand-made frame's editor shows them: secrets masked (a value left masked is sent as the
    session's own), and the authorization provider's header as a mask (its value is made when sent)."""
    out = mask_mapping(headers)
    holds = getattr(settings.auth, "has_token", None)  # a provider that can tell: only when it has a token
    if settings.auth is not None and (holds is None or holds()) and not any(k.lower() == "authorization" for k in out):
        out["Authorization"] = MASK
    return out


async def real_headers(headers: Mapping[str, str], settings: HttpSettings, method: str, url: str) -> dict[str, str]:
    """The headers to send for a hand-made frame: a value still masked is replaced by the session's own secret
    (a static header, or what the authorization provider makes now: a fresh DPoP proof with its token)."""
    if not any(MASK in value for value in headers.values()):
        return dict(headers)
    real = {k.lower(): v for k, v in settings.headers.items()}
    if settings.auth is not None:
        real.update({k.lower(): v for k, v in (await settings.auth.request_headers(method, url)).items()})
    named = {k.lower() for k in headers}
    out: dict[str, str] = {}
    for name, value in headers.items():
        if MASK not in value:
            out[name] = value
            continue
        if name.lower() in real:  # a mask with nothing behind it is dropped
            out[name] = real[name.lower()]
        if name.lower() == "authorization" and "dpop" in real and "dpop" not in named:
            out["DPoP"] = real["dpop"]  # a DPoP token is no use without its proof
    return out
