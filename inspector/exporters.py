"""Giving servers to other tools: the Claude Desktop format, and a `spyglass` command line. No Qt.

Secrets are masked here as everywhere else, unless the caller asks for them with
`reveal_secrets=True` (the UI asks the user first). In a command line, a secret environment
variable becomes a reference to the same variable in the user's shell (`-e TOKEN="$TOKEN"`),
which works where it is set and shows nothing.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .catalog import CatalogEntry, is_secret_field, mask_field, write_atomic
from .config import ConfigError, ServerSpec, parse_json
from .secrets import mask_args, mask_url

Server = CatalogEntry | ServerSpec
_SHELL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _parts(server: Server) -> tuple[ServerSpec, set[str], str]:
    if isinstance(server, CatalogEntry):
        return server.spec, set(server.secret_marks), server.mode
    return server, set(), "auto"


def _timeout(server: Server) -> float | None:
    return server.timeout if isinstance(server, CatalogEntry) else None


def claude_desktop_entry(server: Server, *, reveal_secrets: bool = False) -> dict[str, Any]:
    """One `mcpServers` value. Remote servers get `type`/`url`/`headers`, as Cursor and Claude Code read."""
    spec, marks, _ = _parts(server)
    if spec.url is not None and not spec.command:
        out: dict[str, Any] = {"type": "sse" if spec.transport == "sse" else "http",
                               "url": spec.url if reveal_secrets else mask_url(spec.url)}
        if spec.headers:
            out["headers"] = {k: v if reveal_secrets else mask_field("header", k, v, marks)
                              for k, v in spec.headers.items()}
        return out
    words = list(spec.command) if reveal_secrets else mask_args(spec.command)
    out = {"command": words[0] if words else "", "args": words[1:]}
    if spec.env:
        out["env"] = {k: v if reveal_secrets else mask_field("env", k, v, marks) for k, v in spec.env.items()}
    if spec.cwd:
        out["cwd"] = spec.cwd
    return out


def claude_desktop_config(servers: Iterable[Server], *, reveal_secrets: bool = False) -> dict[str, Any]:
    """`{"mcpServers": {...}}` for these servers (the whole catalog, or one)."""
    out: dict[str, Any] = {}
    for server in servers:
        name = _parts(server)[0].name
        key, k = name, 2
        while key in out:
            key, k = f"{name} ({k})", k + 1
        out[key] = claude_desktop_entry(server, reveal_secrets=reveal_secrets)
    return {"mcpServers": out}


def claude_desktop_json(servers: Iterable[Server], *, reveal_secrets: bool = False) -> str:
    return json.dumps(claude_desktop_config(servers, reveal_secrets=reveal_secrets), indent=2,
                      ensure_ascii=False) + "\n"


def export_claude_desktop(path: str | os.PathLike[str], servers: Iterable[Server], *,
                          reveal_secrets: bool = False, merge: bool = True) -> None:
    """Write the servers to a Claude Desktop config file, atomically.

    With `merge` (the default) an existing file keeps its other settings and servers (ours
    replace those with the same name); an existing file that is not valid JSON is never
    overwritten: ConfigError names its line instead.
    """
    path = Path(path)
    data: dict[str, Any] = {}
    if merge and path.exists():
        try:
            existing = parse_json(path.read_text(encoding="utf-8-sig"), str(path))
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}", file=str(path)) from None
        if not isinstance(existing, dict) or not isinstance(existing.get("mcpServers", {}), dict):
            raise ConfigError(f"{path} is not a Claude Desktop config file; not overwritten", file=str(path))
        data = existing
    new = claude_desktop_config(servers, reveal_secrets=reveal_secrets)["mcpServers"]
    data["mcpServers"] = {**data.get("mcpServers", {}), **new}
    try:
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}", file=str(path)) from None


def spyglass_command(server: Server, *, reveal_secrets: bool = False, program: str = "spyglass") -> str:
    """One server as a shell command line: `spyglass -e K=V -- CMD ARGS` or `spyglass URL --header ...`."""
    spec, marks, mode = _parts(server)
    words: list[str] = [shlex.quote(program)]
    if mode and mode != "auto":
        words += ["--protocol", shlex.quote(mode)]
    timeout = _timeout(server)
    if timeout:
        words += ["--timeout", f"{timeout:g}"]
    if spec.url is not None and not spec.command:
        words.append(shlex.quote(spec.url if reveal_secrets else mask_url(spec.url)))
        if spec.transport == "sse":
            words += ["--transport", "sse"]
        for k, v in spec.headers.items():
            shown = v if reveal_secrets else mask_field("header", k, v, marks)
            words += ["--header", shlex.quote(f"{k}: {shown}")]
        return " ".join(words)
    for k, v in spec.env.items():
        if not reveal_secrets and is_secret_field("env", k, v, marks):
            shown = f'{k}="${k}"' if _SHELL_NAME.match(k) else shlex.quote(f"{k}={mask_field('env', k, v, marks)}")
            words += ["-e", shown]
        else:
            words += ["-e", shlex.quote(f"{k}={v if reveal_secrets else mask_field('env', k, v, marks)}")]
    if spec.cwd:
        words += ["--cwd", shlex.quote(spec.cwd)]
    words.append("--")
    words += [shlex.quote(a) for a in (spec.command if reveal_secrets else mask_args(spec.command))]
    return " ".join(words)
