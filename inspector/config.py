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

    @property
    def is_remote(self) -> bool:
        return self.url is not None


class ConfigError(UsageError):
    kind = "config"


def load_servers(path: str) -> dict[str, ServerSpec]:
    """All servers in an `mcpServers`/`servers` file; ConfigError names what is wrong."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level")
    servers = data.get("mcpServers", data.get("servers"))
    if not isinstance(servers, dict):
        raise ConfigError(f'{path}: no "mcpServers" (or "servers") object')
    return {name: _spec(path, name, entry) for name, entry in servers.items()}


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
        raise ConfigError(f"{where} is not an object")
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
                      headers={str(k): str(v) for k, v in headers.items()})
