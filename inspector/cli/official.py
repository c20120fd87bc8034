"""What makes `spyglass --cli` a drop-in for the official inspector's CLI (2.12): its exit codes and the
`error.code` vocabulary of its error envelope, its `TARGET -- OPTIONS` order, `--connect-timeout` in
milliseconds, and the OAuth state file its `--use-stored-auth` reads. Never imports Qt.

Spyglass's own finer failure name stays in the envelope as `kind`; `code` is the official one.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from .. import errors as E
from ..private import write_private

# The official exit codes (docs/cli.md#exit-codes); 7-9 belong to skills verification.
EXIT_OK, EXIT_USAGE, EXIT_NO_APP, EXIT_AUTH, EXIT_UNREACHABLE, EXIT_TOOL, EXIT_UNPORTABLE = 0, 1, 2, 3, 4, 5, 6
EXIT_INTERRUPTED = 130

# Spyglass's failure kinds that the official CLI reports otherwise than with its catch-all `error` (exit 1).
_BY_KIND: dict[str, tuple[int, str]] = {
    "auth_required": (EXIT_AUTH, "auth_required"),
    "auth": (EXIT_AUTH, "auth_required"),
    "no_stored_token": (EXIT_AUTH, "no_stored_token"),
    "tool_error": (EXIT_TOOL, "tool_is_error"),
    "tool_not_found": (EXIT_TOOL, "tool_not_found"),
    "schema_unportable": (EXIT_UNPORTABLE, "schema_unportable"),
    "no_app": (EXIT_NO_APP, "no_app"),
}


class ToolNotFound(E.SpyglassError):
    """`tools/call` of a tool the server does not list (the official CLI checks before calling)."""

    exit_code = EXIT_TOOL
    kind = "tool_not_found"


class ToolIsError(E.SpyglassError):
    exit_code = EXIT_TOOL
    kind = "tool_error"


class SchemaUnportable(E.SpyglassError):
    exit_code = EXIT_UNPORTABLE
    kind = "schema_unportable"


class OutputError(E.SpyglassError):
    """`--output` could not be written, or the result has no `raw` form."""

    exit_code = EXIT_USAGE
    kind = "output"

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.official_code = code


class NoStoredToken(E.SpyglassError):
    exit_code = EXIT_AUTH
    kind = "no_stored_token"


def _unreachable(exc: E.SpyglassError) -> bool:
    """A remote server that could not be reached at all (what the official CLI exits 4 for): a network
    failure on an HTTP transport, not a stdio command that failed to start or a server that hung up."""
    return exc.kind == "connect" and exc.details.get("url") is not None


def failure(exc: E.SpyglassError) -> tuple[int, dict[str, Any]]:
    """The official exit code of `exc`, and its envelope: `code` (official vocabulary), `kind` (Spyglass's),
    `message`, and the details (a JSON-RPC error's own numeric code as `rpc_code`).

    An error raised by `--cli` itself with an `official_code` (class or instance attribute) is reported with
    that code and its own `exit_code` (how e.g. a skills verification failure gets 7, `skills_nonconformant`);
    others by their kind (`_BY_KIND`), else as the official catch-all: 1, `error`."""
    exit_code, code = _BY_KIND.get(exc.kind, (EXIT_USAGE, "error"))
    if getattr(exc, "official_code", None):  # an error of --cli's own that names its official code and exit
        exit_code, code = exc.exit_code, exc.official_code  # type: ignore[attr-defined]
    named = exc.details.get("code")
    if isinstance(named, str):  # a usage error that names its official code (`skills_unsupported`)
        code = named
    if isinstance(exc, E.AuthRequired) or exc.exit_code == E.EXIT_AUTH:
        exit_code, code = EXIT_AUTH, "auth_required" if code == "error" else code
    elif _unreachable(exc):
        exit_code, code = EXIT_UNREACHABLE, "unreachable"
    body: dict[str, Any] = {"code": code, "kind": exc.kind, "message": exc.message}
    for key, value in exc.details.items():
        if value is None or (key == "code" and isinstance(value, str)):
            continue
        body["rpc_code" if key == "code" else key] = value
    return exit_code, body


def envelope_line(body: dict[str, Any]) -> str:
    return json.dumps({"error": body}, ensure_ascii=False, separators=(",", ":")) + "\n"


_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*")


def duration_ms(text: str) -> float | None:
    """`--connect-timeout`: milliseconds as the official CLI reads it (`15000`), or with a unit (`10s`,
    `500ms`, `1m`); in seconds for the transport, None for 0 (no timeout)."""
    match = _DURATION.fullmatch(text)
    if not match:
        raise ValueError(f"--connect-timeout takes milliseconds or a duration such as 10s or 500ms, got {text!r}")
    value = float(match.group(1)) * {"ms": 0.001, None: 0.001, "s": 1.0, "m": 60.0}[match.group(2)]
    return value or None


def official_order(argv: list[str]) -> list[str]:
    """The official order, `TARGET... -- OPTIONS...` (the target before `--`, the inspector's options after),
    rewritten as Spyglass's `OPTIONS... -- TARGET...`. Spyglass's own order starts with an option."""
    if "--" not in argv:
        return argv
    cut = argv.index("--")
    head = [a for a in argv[:cut] if a != "--cli"]
    if not head or head[0].startswith("-"):
        return argv
    lead = [a for a in argv[:cut] if a == "--cli"]
    return [*lead, *argv[cut + 1:], "--", *head]


def oauth_state_path() -> Path:
    """Where the official inspector keeps its OAuth state (its own precedence of variables)."""
    if os.environ.get("MCP_INSPECTOR_OAUTH_STATE_PATH"):
        return Path(os.environ["MCP_INSPECTOR_OAUTH_STATE_PATH"])
    base = os.environ.get("MCP_STORAGE_DIR") or str(Path.home() / ".mcp-inspector" / "storage")
    return Path(base) / "oauth.json"


def _servers(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise E.UsageError(f"cannot read the OAuth state file {path}: {exc}") from None
    servers = data.get("servers") if isinstance(data, dict) else None
    return servers if isinstance(servers, dict) else {}


def _access_token(state: Any) -> str | None:
    if not isinstance(state, dict):
        return None
    by_issuer = state.get("byIssuer")
    issuer = state.get("activeIssuer")
    slot = by_issuer.get(issuer) if isinstance(by_issuer, dict) and isinstance(issuer, str) else None
    tokens = slot.get("tokens") if isinstance(slot, dict) and slot.get("tokens") else state.get("tokens")
    token = tokens.get("access_token") if isinstance(tokens, dict) else None
    return token if isinstance(token, str) and token else None


def _normal(url: str) -> str:
    return url.rstrip("/")


def stored_token(url: str) -> str:
    """`--use-stored-auth`: the access token the official inspector stored for `url`; exit 3 when none."""
    path = oauth_state_path()
    servers = _servers(path)
    state = next((v for k, v in servers.items() if _normal(k) == _normal(url)), None)
    token = _access_token(state)
    if token is None:
        raise NoStoredToken(f"no stored OAuth token for {url} in {path}", url=url)
    return token


def stored_urls() -> dict[str, Any]:
    """`--list-stored-auth`: the state file and the server URLs it holds a token for."""
    path = oauth_state_path()
    return {"oauthStatePath": str(path),
            "storedServerUrls": [k for k, v in _servers(path).items() if _access_token(v) is not None]}


def seed_catalog(path: str) -> None:
    """`--catalog FILE`: the official inspector creates its catalog, empty, when it is missing."""
    target = Path(path).expanduser()
    if target.exists():
        return
    try:
        write_private(target, json.dumps({"mcpServers": {}}, indent=2) + "\n")
    except OSError as exc:
        raise E.UsageError(f"cannot create the catalog {path}: {exc.strerror or exc}") from None
