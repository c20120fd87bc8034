"""A tool call written out so it can be run again elsewhere (no Qt): as a
`spyglass --cli` command line, as the JSON-RPC request, or as a `curl` command
for HTTP servers. Secrets are masked unless the caller asks for them."""

from __future__ import annotations

import json
import shlex
from typing import Any

from .config import ServerSpec
from .protocol.versions import META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, MODERN_VERSION
from .secrets import mask_args, mask_env_value, mask_url, mask_value


def _env_value(name: str, value: str, reveal: bool) -> str:
    """A secret env value (by name, shape or entropy) as a reference to the user's own environment."""
    return value if reveal or mask_env_value(name, value) == value else f"${{{name}}}"


def cli_command(spec: ServerSpec, tool: str, arguments: dict[str, Any] | None, *, protocol: str | None = None,
                reveal_secrets: bool = False, task: bool = False) -> str:
    parts = ["spyglass", "--cli", "--tool-name", tool]
    if task:
        parts.append("--task")
    if arguments:
        parts += ["--tool-args-json", json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))]
    if protocol and protocol != "auto":
        parts += ["--protocol", protocol]
    for name, value in spec.env.items():
        parts += ["-e", f"{name}={_env_value(name, value, reveal_secrets)}"]
    if spec.cwd:
        parts += ["--cwd", spec.cwd]
    if spec.url:
        for name, value in spec.headers.items():
            parts += ["--header", f"{name}: {value if reveal_secrets else mask_value(name, value)}"]
        if spec.transport in ("http", "sse"):
            parts += ["--transport", spec.transport]
        parts.append(spec.url if reveal_secrets else mask_url(spec.url))
    else:
        parts += ["--", *(spec.command if reveal_secrets else mask_args(spec.command))]
    return shlex.join(parts)


def jsonrpc_request(tool: str, arguments: dict[str, Any] | None, *, request_id: int = 1,
                    protocol_version: str | None = None, client_info: dict[str, Any] | None = None,
                    task: bool = False) -> str:
    params: dict[str, Any] = {"name": tool, "arguments": arguments or {}}
    if task:
        params["task"] = {}
    if protocol_version == MODERN_VERSION:
        params["_meta"] = {META_PROTOCOL_VERSION: MODERN_VERSION, META_CLIENT_CAPABILITIES: {},
                           META_CLIENT_INFO: client_info or {"name": "spyglass", "version": "0.1.0"}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params},
                      indent=2, ensure_ascii=False)


def curl_command(spec: ServerSpec, tool: str, arguments: dict[str, Any] | None, *,
                 protocol_version: str | None = None, session_id: str | None = None,
                 reveal_secrets: bool = False, task: bool = False) -> str:
    if not spec.url:
        raise ValueError("curl commands are for HTTP servers")
    body = json.loads(jsonrpc_request(tool, arguments, protocol_version=protocol_version, task=task))
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if protocol_version:
        headers["MCP-Protocol-Version"] = protocol_version
    if protocol_version == MODERN_VERSION:
        from .protocol.headers import standard_headers

        headers.update(standard_headers(body))
    if session_id:
        headers["Mcp-Session-Id"] = session_id
    for name, value in spec.headers.items():
        headers[name] = value if reveal_secrets else mask_value(name, value)
    parts = ["curl", "-sS", "-N", "-X", "POST", spec.url if reveal_secrets else mask_url(spec.url)]
    for name, value in headers.items():
        parts += ["-H", f"{name}: {value}"]
    parts += ["--data-binary", json.dumps(body, ensure_ascii=False, separators=(",", ":"))]
    return shlex.join(parts)
