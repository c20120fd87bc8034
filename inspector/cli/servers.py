"""`--method servers/list` and `servers/show`: the servers of a `--config` or `--catalog` file, read without
connecting to any, in the official CLI's shapes (secret values shown as `[redacted]`); `servers/add`,
`servers/edit` and `servers/remove` write the catalog (`--catalog`, else `MCP_CATALOG_PATH`, else
`~/.mcp-inspector/mcp.json`, as the official CLI does), never `--config`. A secret (an environment
variable or header named like one) is not written into a file: Spyglass keeps secrets in the OS keyring.
Never imports Qt."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from .. import errors as E
from ..config import ConfigError, read_json
from ..private import write_atomic
from ..secrets import is_secret_name, mask_args, mask_url, mask_value
from .common import pairs

METHODS = ("servers/list", "servers/show", "servers/add", "servers/edit", "servers/remove")
WRITES = ("servers/add", "servers/edit", "servers/remove")
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
        return " ".join(mask_args(str(p) for p in [entry["command"], *(entry.get("args") or [])]))
    return mask_url(str(entry.get("url") or entry.get("serverUrl") or ""))


def _redacted(entry: dict[str, Any]) -> dict[str, Any]:
    out = dict(entry)
    if isinstance(entry.get("env"), dict):
        out["env"] = {k: REDACTED for k in entry["env"]}  # every env value may be a secret
    if isinstance(entry.get("headers"), dict):
        out["headers"] = {k: REDACTED if is_secret_name(k) or k.lower() == "authorization" else
                          mask_value(str(k), str(v)) for k, v in entry["headers"].items()}
    for key in ("url", "serverUrl"):  # a URL's password, secret query keys: masked by shape
        if isinstance(entry.get(key), str):
            out[key] = mask_url(entry[key])
    if isinstance(entry.get("args"), list):
        out["args"] = mask_args(str(a) for a in entry["args"])
    out["type"] = _kind(entry)
    return out


def catalog_path(args: argparse.Namespace) -> str:
    """Where the catalog methods write: --catalog, else MCP_CATALOG_PATH, else the official default."""
    return str(args.catalog or os.environ.get("MCP_CATALOG_PATH")
               or Path.home() / ".mcp-inspector" / "mcp.json")


def _entry(args: argparse.Namespace, old: dict[str, Any] | None = None) -> dict[str, Any]:
    """The catalog entry the flags describe (`old`: the entry they change)."""
    entry = dict(old or {})
    target = list(args.command or [])
    url = target[0] if len(target) == 1 and target[0].startswith(("http://", "https://")) else None
    if url:
        kind = args.transport or ("sse" if url.rstrip("/").endswith("/sse") else "streamable-http")
        entry = {"type": "streamable-http" if kind == "http" else kind, "url": url}
    elif target:
        entry = {"type": "stdio", "command": target[0], "args": target[1:]}
    for key in ("env", "cwd") if "command" in entry else ("headers",):  # an edit keeps what it does not change
        if old and key in old and key not in entry:
            entry[key] = old[key]
    env = dict(pairs(args.env, "-e"))
    headers = {}
    for item in args.header:
        name, _sep, value = item.partition(":")
        headers[name.strip()] = value.strip()
    secret = [k for k in [*env, *headers] if is_secret_name(k) or k.lower() == "authorization"]
    if secret:
        raise E.UsageError(f"{', '.join(secret)}: Spyglass does not write secrets into a catalog file; add the "
                           "server in the window (Server → Save to catalog keeps them in the OS keyring), or set "
                           "them in the environment of the run")
    if env:
        entry["env"] = {**(entry.get("env") or {}), **env}
    if headers:
        entry["headers"] = {**(entry.get("headers") or {}), **headers}
    if args.cwd:
        entry["cwd"] = args.cwd
    if not entry.get("command") and not entry.get("url"):
        raise E.UsageError(f"{args.method} needs the server: a command, or a URL (--server-url)")
    return entry


def write(args: argparse.Namespace) -> dict[str, Any]:
    """servers/add, servers/edit, servers/remove on the catalog."""
    if args.config:
        raise E.UsageError("--config names a read-only file; catalog writes need --catalog FILE")
    if not args.server:
        raise E.UsageError(f"{args.method} needs --server NAME")
    path = catalog_path(args)
    data = read_json(path) if Path(path).exists() else {"mcpServers": {}}
    servers = data.setdefault("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f'{path}: no "mcpServers" object', file=path)
    name = args.server
    if args.method == "servers/add":
        if name in servers:
            raise E.UsageError(f"server {name!r} already exists in {path}")
        servers[name], action = _entry(args), "added"
    elif name not in servers:
        raise E.UsageError(f"server {name!r} not found in catalog {path}")
    elif args.method == "servers/remove":
        extra = [flag for flag, given in (("-e", args.env), ("--cwd", args.cwd), ("--header", args.header),
                                          ("--transport", args.transport), ("a target", args.command),
                                          ("--rename", args.rename)) if given]
        if extra:
            raise E.UsageError(f"servers/remove takes only --server NAME; remove {', '.join(extra)}")
        del servers[name]
        action = "removed"
    else:
        entry = _entry(args, servers[name]) if (args.command or args.env or args.header or args.cwd) else servers[name]
        if args.rename:
            if args.rename in servers:
                raise E.UsageError(f"server {args.rename!r} already exists in {path}")
            del servers[name]
            name = args.rename
        servers[name], action = entry, "updated"
    try:
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise E.UsageError(f"cannot write the catalog {path}: {exc.strerror or exc}") from None
    return {"ok": True, "action": action, "server": name, "catalog": str(Path(path).resolve())}


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.method in WRITES:
        return write(args)
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
