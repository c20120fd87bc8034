"""`{"mcpServers": {...}}` (Claude Desktop, Cursor, the official inspector) and `{"servers": {...}}`
(VS Code) files: one entry per server, problems reported per entry instead of failing the file."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from typing import Any

from ..config import ServerSpec
from ._model import ImportEntry, Placeholder

_COMMON = {"command", "args", "env", "cwd", "url", "serverUrl", "type", "transport", "headers"}
_INSPECTOR = {"metadata", "protocolEra", "modernLogLevel", "connectionTimeout", "requestTimeout", "taskTtl",
              "autoRefreshOnListChanged", "paginatedLists", "advertisedExtensions", "maxFetchRequests", "oauth",
              "roots"}
_VSCODE = {"envFile", "dev", "sandboxEnabled", "sandbox", "gallery", "version"}
_CURSOR = {"envFile", "auth"}
# written by other clients (Cline, Windsurf, Claude Code...): known, not used by Spyglass, not worth a warning
_QUIET = {"description", "disabled", "enabled", "autoApprove", "alwaysAllow", "timeout", "name", "title",
          "trust", "includeTools", "excludeTools", "icon", "notes"}
KNOWN = _COMMON | _INSPECTOR | _VSCODE | _CURSOR | _QUIET

_TRANSPORTS = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http",
               "streamable_http": "http", "sse": "sse"}
_ERAS = {"legacy": "legacy", "auto": "auto", "modern": "modern"}


def detect_flavour(servers: Mapping[str, Any]) -> str:
    """Which tool wrote an `mcpServers` file, from what its entries use."""
    entries = [e for e in servers.values() if isinstance(e, dict)]
    if any(e.get("type") == "streamable-http" or _INSPECTOR & e.keys() for e in entries):
        return "mcp-inspector"
    if any(e.keys() & {"url", "serverUrl", "headers", "envFile", "auth"} or e.get("type") in ("http", "sse")
           or "${" in repr(e) for e in entries):
        return "cursor"
    return "claude-desktop"


def parse_inputs(raw: Any, source: str, warnings: list[str]) -> dict[str, Placeholder]:
    """VS Code's `inputs` array, as placeholder definitions keyed by `input:ID`."""
    defs: dict[str, Placeholder] = {}
    if raw is None:
        return defs
    if not isinstance(raw, list):
        warnings.append(f'{source}: "inputs" is not an array; ignored')
        return defs
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            warnings.append(f'{source}: input {i + 1} has no "id"; ignored')
            continue
        kind = item.get("type", "promptString")
        description = str(item.get("description") or "")
        options: list[str] = []
        if kind == "pickString":
            for opt in item.get("options") or []:
                value = opt.get("value", opt.get("label")) if isinstance(opt, dict) else opt
                if value is not None:
                    options.append(str(value))
        elif kind == "command":
            description = (description + " " if description else "") + \
                f"(VS Code runs the command {item.get('command')!r} to get this value; enter it here)"
        elif kind != "promptString":
            warnings.append(f"{source}: input {item['id']!r} has an unknown type {kind!r}; it will be asked for")
        default = item.get("default")
        defs[f"input:{item['id']}"] = Placeholder(
            token=f"input:{item['id']}", kind="input", label=item["id"], description=description,
            password=bool(item.get("password", False)), default=None if default is None else str(default),
            choices=options)
    return defs


def parse_entry(name: str, raw: Any, *, source: str, flavour: str, line: int | None,
                env: Mapping[str, str]) -> ImportEntry:
    """One server of an mcpServers/servers file (placeholders not resolved yet)."""
    entry = ImportEntry(key=name, name=name, spec=None, source=source, entry=name, line=line)
    where = f"server {name!r}"

    def fail(message: str) -> ImportEntry:
        entry.error = message
        return entry

    if not isinstance(raw, dict):
        return fail("is not an object")
    for key in raw:
        if key not in KNOWN:
            entry.warnings.append(f"{where}: unknown key {key!r} ignored")
    if raw.get("disabled") is True or raw.get("enabled") is False:
        entry.warnings.append(f"{where} is disabled in {os.path.basename(source)}")

    kind = raw.get("type", raw.get("transport"))
    if kind is not None and (not isinstance(kind, str) or kind not in _TRANSPORTS):
        entry.warnings.append(f"{where}: unknown type {kind!r}; guessed from the other fields")
        kind = None
    transport = _TRANSPORTS.get(kind) if kind else None
    command = raw.get("command")
    url = raw.get("url", raw.get("serverUrl"))
    if command is not None and not isinstance(command, str):
        return fail('"command" must be a string')
    if url is not None and not isinstance(url, str):
        return fail('"url" must be a string')
    if command and url:
        use_url = transport in ("http", "sse")
        entry.warnings.append(f"{where} has both \"command\" and \"url\"; using {'url' if use_url else 'command'}")
        if use_url:
            command = None
        else:
            url = None
    if not command and not url:
        return fail('has neither "command" nor "url"')
    if command and transport in ("http", "sse"):
        entry.warnings.append(f"{where}: type {kind!r} does not fit a command; started over stdio")
        transport = "stdio"
    if url and transport == "stdio":
        entry.warnings.append(f"{where}: type 'stdio' does not fit a URL; connecting over HTTP")
        transport = None

    args = raw.get("args", [])
    if args is None:
        args = []
    if not isinstance(args, list) or not all(isinstance(a, (str, int, float, bool)) for a in args):
        return fail('"args" must be a list of strings')
    args = [_text(a) for a in args]
    if command and not args and " " in command.strip() and not os.path.exists(command):
        parts = shlex.split(command, posix=os.name != "nt") if command.strip() else []
        if len(parts) > 1:
            entry.warnings.append(f"{where}: the command {command!r} holds its arguments; split at spaces")
            command, args = parts[0], parts[1:]

    env_map = _string_map(raw.get("env"), "env", entry)
    headers = _string_map(raw.get("headers"), "headers", entry)
    if env_map is None or headers is None:
        return entry
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        return fail('"cwd" must be a string')
    if headers and command:
        entry.warnings.append(f"{where}: \"headers\" only apply to remote servers; ignored")
        headers = {}
    if env_map and url and not command:
        entry.warnings.append(f"{where}: \"env\" only applies to servers Spyglass starts; ignored")
        env_map = {}

    env_file = raw.get("envFile")
    if isinstance(env_file, str) and env_file and command:
        _merge_env_file(env_file, env_map, source, entry, env)

    if flavour == "mcp-inspector":
        era = raw.get("protocolEra")
        if isinstance(era, str) and era in _ERAS:
            entry.mode = _ERAS[era]
        timeout = raw.get("requestTimeout")
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
            entry.timeout = timeout / 1000.0
        blank = [k for k, v in env_map.items() if v == ""]
        if blank:
            entry.warnings.append(f"{where}: {', '.join(blank)} {'is' if len(blank) == 1 else 'are'} empty: the "
                                  f"official inspector keeps env values in its own keychain; enter "
                                  f"{'it' if len(blank) == 1 else 'them'} after importing")
    oauth = raw.get("oauth") if isinstance(raw.get("oauth"), dict) else raw.get("auth")
    if isinstance(oauth, dict) and oauth:
        entry.warnings.append(f"{where}: its OAuth client settings are not imported; Spyglass authorizes when "
                              f"the server asks")

    if cwd:
        cwd = os.path.expanduser(cwd)
    entry.spec = ServerSpec(name=name, command=[command, *args] if command else [], env=env_map, cwd=cwd,
                            url=url if not command else None, transport=transport if transport else
                            ("stdio" if command else None), headers=headers)
    return entry


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _string_map(raw: Any, what: str, entry: ImportEntry) -> dict[str, str] | None:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        entry.error = f'"{what}" must be an object'
        return None
    out: dict[str, str] = {}
    for key, value in raw.items():
        if value is None:
            entry.warnings.append(f"server {entry.entry!r}: {what} {key} is null; left out")
        elif isinstance(value, (dict, list)):
            entry.warnings.append(f"server {entry.entry!r}: {what} {key} is not text; left out")
        else:
            out[str(key)] = _text(value)
    return out


def _merge_env_file(env_file: str, env_map: dict[str, str], source: str, entry: ImportEntry,
                    environ: Mapping[str, str]) -> None:
    """VS Code's and Cursor's `envFile`: read it now if its path needs no answers."""
    where = f"server {entry.entry!r}"
    path = env_file.replace("${userHome}", os.path.expanduser("~"))
    if "${" in path:
        entry.warnings.append(f"{where}: envFile {env_file!r} depends on a variable; its variables were not "
                              f"imported: add them by hand")
        return
    path = os.path.expanduser(path)
    if not os.path.isabs(path) and not source.startswith("<"):
        path = os.path.join(os.path.dirname(os.path.abspath(source)), path)
    try:
        with open(path, encoding="utf-8-sig") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        entry.warnings.append(f"{where}: cannot read envFile {path} ({exc.strerror or exc}); its variables "
                              f"were not imported")
        return
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        if line.startswith("export "):
            line = line[7:].lstrip()
        key, _, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if key and key not in env_map:  # the entry's own env wins, as in VS Code
            env_map[key] = value
