"""`--method servers/list` and `servers/show`: the servers of a `--config` or `--catalog` file, read without
connecting to any, in the official CLI's shapes (secret values shown as `[redacted]`). Never imports Qt."""

from __future__ import annotations

import argparse
from typing import Any

from .. import errors as E
from ..config import ConfigError, read_json
from ..secrets import is_secret_name

METHODS = ("servers/list", "servers/show")
REDACTED = "[redacted]"


def _entries(path: str) -> dict[str, Any]:
    data = read_json(path)
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f'{path}: no "mcpServers" (or "servers") object', file=path)
    return servers


def _kind(entry: dict[str, Any]) -> str:
    kind = entry.get("type") or entry.get("transport")
    if isinstance(kind, str) and kind:
        return "streamable-http" if kind == "http" else kind
    return "stdio" if entry.get("command") else "streamable-http"


def _detail(entry: dict[str, Any]) -> str:
    if entry.get("command"):
        return " ".join(str(p) for p in [entry["command"], *(entry.get("args") or [])])
    return str(entry.get("url") or entry.get("serverUrl") or "")


def _redacted(entry: dict[str, Any]) -> dict[str, Any]:
    out = dict(entry)
    if isinstance(entry.get("env"), dict):
        out["env"] = {k: REDACTED for k in entry["env"]}  # every env value may be a secret
    if isinstance(entry.get("headers"), dict):
        out["headers"] = {k: REDACTED if is_secret_name(k) or k.lower() == "authorization" else v
                          for k, v in entry["headers"].items()}
    out["type"] = _kind(entry)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    path = args.config
    if not path:
        raise E.UsageError(f"{args.method} needs --config FILE or --catalog FILE")
    entries = {name: e for name, e in _entries(path).items() if isinstance(e, dict)}
    if args.method == "servers/list":
        return {"servers": [{"name": n, "type": _kind(e), "detail": _detail(e)} for n, e in entries.items()]}
    if not args.server:
        raise E.UsageError("servers/show needs --server NAME")
    entry = entries.get(args.server)
    if entry is None:
        raise E.UsageError(f"server {args.server!r} not found; available servers: {', '.join(entries) or 'none'}")
    return {"name": args.server, "type": _kind(entry), "detail": _detail(entry), "config": _redacted(entry)}
