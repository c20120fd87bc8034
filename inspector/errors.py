"""Errors the client raises, each with the exit code of Spyglass's headless subcommands (`check`, `replay`…;
`spyglass --cli` reports them with the official inspector CLI's codes instead: inspector.cli.official).

No Qt here: the command line and the window share these.
"""

from __future__ import annotations

from typing import Any

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_AUTH = 3
EXIT_CONNECT = 4
EXIT_TOOL_ERROR = 5
EXIT_RPC_ERROR = 6
EXIT_TIMEOUT = 7
EXIT_INVALID = 8
EXIT_FINDINGS = 9  # spyglass check: findings at or above the failure bar


class SpyglassError(Exception):
    """Base class; `kind` names the failure in JSON output."""

    exit_code = EXIT_CONNECT
    kind = "error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def as_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "message": self.message}
        d.update({k: v for k, v in self.details.items() if v is not None})
        return d


class UsageError(SpyglassError):
    exit_code = EXIT_USAGE
    kind = "usage"


class InvalidArguments(SpyglassError):
    exit_code = EXIT_USAGE
    kind = "invalid_arguments"


class ConnectError(SpyglassError):
    """Could not start or reach the server."""

    exit_code = EXIT_CONNECT
    kind = "connect"


class ServerExited(SpyglassError):
    exit_code = EXIT_CONNECT
    kind = "server_exited"


class TransportClosed(SpyglassError):
    exit_code = EXIT_CONNECT
    kind = "closed"


class VersionError(SpyglassError):
    exit_code = EXIT_CONNECT
    kind = "protocol_version"


class AuthRequired(SpyglassError):
    exit_code = EXIT_AUTH
    kind = "auth_required"


class RemoteError(SpyglassError):
    """The server answered with a JSON-RPC error."""

    exit_code = EXIT_RPC_ERROR
    kind = "rpc_error"

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{method}: server error {code}: {message}", code=code, data=data, method=method)
        self.method = method
        self.code = code
        self.rpc_message = message
        self.data = data


class RequestTimeout(SpyglassError):
    exit_code = EXIT_TIMEOUT
    kind = "timeout"


class InvalidResponse(SpyglassError):
    """The server's answer is malformed or not the shape the method requires."""

    exit_code = EXIT_INVALID
    kind = "invalid_response"


class Cancelled(SpyglassError):
    exit_code = EXIT_TIMEOUT
    kind = "cancelled"


class HttpStatusError(InvalidResponse):
    """An HTTP answer that carries no JSON-RPC message (e.g. 500 with an HTML page)."""

    kind = "http_status"

    def __init__(self, message: str, *, status: int, excerpt: str | None = None, **details: Any) -> None:
        super().__init__(message, status=status, excerpt=excerpt, **details)
        self.status = status
        self.excerpt = excerpt

    @property
    def means_no_endpoint(self) -> bool:
        """400/404/405: what a server without this transport's endpoint answers."""
        return self.status in (400, 404, 405)


class SessionExpired(ConnectError):
    """HTTP 404 on a known Mcp-Session-Id: the server ended the session."""

    kind = "session_expired"
