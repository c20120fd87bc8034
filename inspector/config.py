"""Server definitions, and reading them from `mcpServers` files (no Qt).

Reads the format Claude Desktop, Cursor and the official inspector share
(`{"mcpServers": {name: {command, args, env, cwd | url, type, headers}}}`)
and VS Code's (`{"servers": {...}}`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from .errors import UsageError


@dataclass
class ServerSpec:
    name: str
    command: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    transport: str | None = None  # "stdio" | "http" | "sse"
    headers: dict[str, str] = field(default_factory=dict)
    # OAuth client for a URL server: client_id, scope, and (in memory only; kept in the keyring, never in a
    # config file) client_secret. Empty: discovery picks the client (metadata document or registration).
    oauth: dict[str, str] = field(default_factory=dict)
    # W3C trace context: a `traceparent` in every request's `_meta`, so a server that traces itself joins
    # the client's traces (inspector.protocol.tracecontext); off unless asked for, as it changes the wire
    trace_context: bool = False
    # run a command server confined: no network, the home folder hidden, writes only to a temporary folder
    # (inspector.transport.sandbox); a URL server cannot be
    sandbox: bool = False
    # a lock file written by `spyglass pin`: the window marks what differs from it (inspector.checks.pin)
    pin: str | None = None
    # the SHA-256 fingerprint (64 hex digits) of a certificate the user trusted for this server only (a
    # self-signed or private-CA development server): its HTTP transport trusts that certificate and no other
    tls_pin: str = ""


def url_problem(url: str) -> str | None:
    """Why `url` cannot be a server's address (not http or https, no host, a port out of range, a bracket not
    closed), or None: said before anything tries to connect, where the parser's ValueError would escape."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"not a valid URL: {exc}"
    if parts.scheme not in ("http", "https"):
        return f"{parts.scheme or 'no'} scheme: the URL must start with http:// or https://"
    if not parts.hostname:
        return "no host in the URL"
    if port == 0:
        return "port 0: the port is a number from 1 to 65535"
    return None


class ConfigError(UsageError):
    """A config, catalog or import file that cannot be used; details may name file, line, column, entry."""

    kind = "config"


def load_servers(path: str) -> dict[str, ServerSpec]:
    """All servers in an `mcpServers`/`servers` file; ConfigError names what is wrong."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level", file=path)
    if "mcpServers" not in data and "servers" not in data and isinstance(data.get("mcp"), dict):
        data = data["mcp"]  # VS Code's settings.json keeps them under "mcp"
    servers = data.get("mcpServers", data.get("servers"))
    if not isinstance(servers, dict):
        raise ConfigError(f'{path}: no "mcpServers" (or "servers") object', file=path)
    return {name: _spec(path, name, entry) for name, entry in servers.items()}


def read_json(path: str | os.PathLike[str]) -> Any:
    """The parsed contents of a JSON (or JSON with comments) file.

    ConfigError names the file and, for a syntax error, the line and column where
    the parser stopped (also in `.details["line"]` / `["column"]`).
    """
    path = os.fspath(path)
    return parse_json(read_text(path), path)


def read_text(path: str, error: type[ConfigError] = ConfigError, max_bytes: int | None = None,
              kind: str = "config file") -> str:
    """A `kind` of file's text (UTF-8, with or without Notepad's byte order mark); `error` says clearly why
    it cannot be read: missing, a folder, bigger than `max_bytes`, not UTF-8, or an OS error."""
    try:
        if max_bytes is not None and (size := os.path.getsize(path)) > max_bytes:
            raise error(f"{path} is {size // (1024 * 1024)} MiB: too big for a {kind}", file=path)
        with open(path, encoding="utf-8-sig") as fh:
            return fh.read()
    except FileNotFoundError:
        raise error(f"{kind} not found: {path}", file=path) from None
    except IsADirectoryError:
        raise error(f"{path} is a folder, not a {kind}", file=path) from None
    except UnicodeDecodeError as exc:
        what = "JSON config file" if kind == "config file" else kind
        raise error(f"{path} is not UTF-8 text (byte {exc.start}): not a {what}", file=path) from None
    except OSError as exc:
        raise error(f"cannot read {kind} {path}: {exc.strerror or exc}", file=path) from None


def parse_json(text: str, source: str = "<text>") -> Any:
    """Strict JSON first; then JSONC (// and /* */ comments, trailing commas, as VS Code writes).

    Comments are blanked out in place, so a syntax error still points at the
    right line and column of the original text.
    """
    text = text.lstrip("\ufeff")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return json.loads(strip_jsonc(text))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                          file=source, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise ConfigError(f"{source}: invalid JSON: nested too deeply", file=source) from None


def strip_jsonc(text: str) -> str:
    """`text` with comments and trailing commas replaced by spaces (newlines kept)."""
    out = list(text)
    i, n = 0, len(text)
    in_string = False
    last_comma = -1  # index of a comma that may turn out to be trailing
    prev = ""  # the last significant character outside strings and comments
    while i < n:
        c = text[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_string = False
                prev = '"'
            i += 1
            continue
        if c == '"':
            in_string = True
            last_comma = -1
        elif c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        elif c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = ["\n" if ch == "\n" else " " for ch in text[i:end]]
            i = end
            continue
        elif c == ",":
            # only a comma after a value can be trailing: "{,}" and "[1,,]" stay errors
            last_comma = i if prev not in ("", "{", "[", ",", ":") else -1
            prev = c
        elif c in "}]":
            if last_comma >= 0:
                out[last_comma] = " "
            last_comma = -1
            prev = c
        elif not c.isspace():
            last_comma = -1
            prev = c
        i += 1
    return "".join(out)


def pick_server(path: str, name: str | None) -> ServerSpec:
    servers = load_servers(path)
    if name is None:
        if len(servers) == 1:
            return next(iter(servers.values()))
        raise ConfigError(f"{path} defines {len(servers)} servers; choose one with --server "
                          f"({', '.join(sorted(servers)) or 'none defined'})")
    if name not in servers:
        raise ConfigError(f"{path} has no server named {name!r} (it has: {', '.join(sorted(servers)) or 'none'})")
    return servers[name]


def _spec(path: str, name: str, entry: Any) -> ServerSpec:
    where = f"{path}: server {name!r}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} is not an object", file=path, entry=name)
    url = entry.get("url") or entry.get("serverUrl")
    command = entry.get("command")
    if url is None and not command:
        raise ConfigError(f'{where} has neither "command" nor "url"')
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
        raise ConfigError(f'{where}: "args" must be a list of strings')
    env = entry.get("env", {}) or {}
    if not isinstance(env, dict):
        raise ConfigError(f'{where}: "env" must be an object')
    headers = entry.get("headers", {}) or {}
    if not isinstance(headers, dict):
        raise ConfigError(f'{where}: "headers" must be an object')
    kind = entry.get("type") or entry.get("transport")
    transport = {"streamable-http": "http", "streamableHttp": "http", "http": "http", "sse": "sse",
                 "stdio": "stdio", None: None}.get(kind, kind)
    cwd = entry.get("cwd")
    if cwd is not None:
        cwd = os.path.expanduser(str(cwd))
    if command is not None and not isinstance(command, str):
        raise ConfigError(f'{where}: "command" must be a string')
    return ServerSpec(name=name, command=[command, *map(str, args)] if command else [],
                      env={str(k): str(v) for k, v in env.items()}, cwd=cwd,
                      url=str(url) if url else None, transport=transport,
                      headers={str(k): str(v) for k, v in headers.items()}, sandbox=entry.get("sandbox") is True)
