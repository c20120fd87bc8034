"""Opening a server: the one place where a server definition and the user's options become a transport.

The window, `--cli` and every other caller go through `open_transport`, so a server is reached the
same way everywhere: a command runs over stdio with the message size limit; a URL gets Streamable HTTP
(or HTTP+SSE when forced, or when the URL ends in `/sse`) with the headers, the TLS choice, the connect
timeout and authorization; and when the transport is not forced and Streamable HTTP finds no endpoint,
the fallback is HTTP+SSE with the same settings and the same authorization.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..config import ServerSpec
from ..protocol.framing import DEFAULT_MAX_MESSAGE
from .base import Transport

if TYPE_CHECKING:
    import subprocess

    from .http_common import AuthProvider

DEFAULT_CONNECT_TIMEOUT = 10.0


@dataclass(frozen=True)
class TransportOptions:
    """Everything about how to reach a server that is not part of its definition."""

    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    insecure: bool = False  # do not verify TLS certificates (self-signed development servers only)
    max_message: int = DEFAULT_MAX_MESSAGE  # the largest message read from a stdio server
    auth_token: str | None = None  # sent as `Authorization: Bearer TOKEN`
    # OAuth for a URL server: called once per connection attempt, only when `uses_oauth` holds.
    auth: Callable[[], AuthProvider | None] | None = None


@dataclass(frozen=True)
class Opened:
    """The transport to start with, and what to try when it finds no MCP endpoint (or None)."""

    transport: Transport
    fallback: Callable[[], Transport] | None = None


def uses_oauth(spec: ServerSpec, auth_token: str | None = None) -> bool:
    """A URL server gets the OAuth flow unless it is sent an Authorization header as it is."""
    return spec.url is not None and not auth_token and not any(k.lower() == "authorization" for k in spec.headers)


def transport_kind(spec: ServerSpec) -> str:
    """"stdio", "http" or "sse": forced by the definition, else guessed from it."""
    if spec.url is None:
        return "stdio"
    if spec.transport in ("http", "sse"):
        return spec.transport
    return "sse" if spec.url.rstrip("/").endswith("/sse") else "http"


def start_process(spec: ServerSpec, *, preexec_fn: Callable[[], object] | None = None
                  ) -> subprocess.Popen[bytes] | None:
    """Start a stdio server's process now, without an event loop (None for a URL server), to hand to
    `open_transport(started=...)`: `spyglass --cli` lets the server boot while the rest of it imports.
    `preexec_fn` runs in the child first (`process.die_with_parent`). Raises ConnectError when the command
    cannot run."""
    if spec.url is not None:
        return None
    from .process import start

    command, env, cwd = _command_of(spec)
    return start(command, env=env, cwd=cwd, preexec_fn=preexec_fn)


def _command_of(spec: ServerSpec) -> tuple[list[str], dict[str, str], str | None]:
    """The command, environment and folder a stdio server starts with: confined when `spec.sandbox`."""
    if not spec.sandbox:
        return list(spec.command), dict(spec.env), spec.cwd
    from .sandbox import confine

    confined = confine(spec.command, env=spec.env, cwd=spec.cwd)
    return confined.command, {**spec.env, **confined.env}, confined.cwd


def open_transport(spec: ServerSpec, options: TransportOptions | None = None, *,
                   started: subprocess.Popen[bytes] | None = None) -> Opened:
    """The transport for `spec` (not started yet, or `started` by `start_process`). Raises ConnectError
    when there is nothing to start."""
    options = options or TransportOptions()
    if spec.url is None:
        from .stdio import StdioTransport

        command, env, cwd = _command_of(spec) if started is None else (spec.command, spec.env, spec.cwd)
        return Opened(StdioTransport(command, env=env, cwd=cwd, max_message=options.max_message, started=started))
    if spec.sandbox:
        from ..errors import ConnectError

        raise ConnectError("only a server Spyglass starts (a command) can be sandboxed; a URL server runs "
                           "elsewhere")
    from .http import HttpTransport
    from .http_common import HttpSettings
    from .sse import SseTransport

    auth = options.auth() if options.auth is not None and uses_oauth(spec, options.auth_token) else None
    settings = HttpSettings(headers=spec.headers, auth_token=options.auth_token, insecure=options.insecure,
                            connect_timeout=options.connect_timeout, auth=auth, tls_pin=spec.tls_pin)
    url = spec.url
    kind = transport_kind(spec)
    if kind == "sse":
        return Opened(SseTransport(url, settings))
    if spec.transport == "http":
        return Opened(HttpTransport(url, settings))
    return Opened(HttpTransport(url, settings), lambda: SseTransport(url, settings))
