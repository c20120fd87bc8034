"""The official MCP registry's `server.json`: one entry per package and per remote.

Schema: https://static.modelcontextprotocol.io/schemas/ (registry repo, docs/reference/server-json).
camelCase since 2025-09-16; the snake_case of the first (2025-07-09) schema is read too. The
registry API's `{"server": {...}, "_meta": ...}` wrapper and `{"servers": [...]}` lists are accepted.

Packages become commands: npm `npx -y ID@VERSION`, pypi `uvx ID==VERSION`, oci
`docker run -i --rm [-e NAME ...] IMAGE:VERSION`, nuget `dnx ID@VERSION --yes [-- ARGS]`.
Values the user must supply (arguments with a `valueHint`, required environment variables and
headers, `{variables}` in URLs and values) become placeholders, pre-filled with their `default`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..config import ServerSpec
from ..secrets import is_secret_name
from ._model import ImportEntry, Placeholder

_VAR = re.compile(r"\{([A-Za-z0-9_.-]+)\}")
_SNAKE = re.compile(r"(?<!^)(?=[A-Z])")
_REMOTE_TRANSPORTS = {"streamable-http": "http", "http": "http", "sse": "sse"}


def looks_like_server_json(data: dict[str, Any]) -> bool:
    if isinstance(data.get("packages"), list) or isinstance(data.get("remotes"), list):
        return True
    schema = data.get("$schema")
    return isinstance(schema, str) and "server.schema.json" in schema


def _get(obj: dict[str, Any], key: str, default: Any = None) -> Any:
    """A camelCase field, or its snake_case spelling from the 2025-07-09 schema."""
    if key in obj:
        return obj[key]
    return obj.get(_SNAKE.sub("_", key).lower(), default)


class _Builder:
    """Collects the placeholders of one entry while its command or URL is assembled."""

    def __init__(self, entry: ImportEntry) -> None:
        self.entry = entry
        self.defs: dict[str, Placeholder] = {}

    def ask(self, token: str, inp: dict[str, Any], label: str, *, kind: str = "argument",
            secret: bool = False) -> str:
        default = _get(inp, "default")
        choices = _get(inp, "choices") or []
        ph = Placeholder(token=token, kind=kind, label=label, description=str(_get(inp, "description") or ""),
                         password=bool(_get(inp, "isSecret", False)) or secret,
                         default=None if default is None else str(default),
                         choices=[str(c) for c in choices if isinstance(c, (str, int, float))],
                         required=bool(_get(inp, "isRequired", False)))
        self.defs.setdefault(token, ph)
        return ph.marker

    def value(self, inp: dict[str, Any], token: str, label: str, *, kind: str = "argument",
              secret: bool = False) -> str | None:
        """The input's fixed value (with its {variables} filled in), a placeholder to ask for it,
        or None for an optional input nobody gave a value or default."""
        fixed = _get(inp, "value")
        if isinstance(fixed, (str, int, float)) and not isinstance(fixed, bool):
            return self.fill(str(fixed), _get(inp, "variables") or {}, token)
        if not _get(inp, "isRequired", False) and _get(inp, "default") is None:
            return None
        return self.ask(token, inp, label, kind=kind, secret=secret)

    def fill(self, text: str, variables: dict[str, Any], scope: str,
             known: Callable[[str], str | None] | None = None) -> str:
        """Replace `{name}` by the variable's value, a known value, or a placeholder; unknown names stay."""
        def sub(match: re.Match[str]) -> str:
            name = match.group(1)
            var = variables.get(name) if isinstance(variables, dict) else None
            if isinstance(var, dict):
                fixed = _get(var, "value")
                if isinstance(fixed, str):
                    return fixed
                return self.ask(f"var:{scope}:{name}", var, name, kind="variable")
            if known is not None:
                value = known(name)
                if value is not None:
                    return value
            return match.group(0)

        return _VAR.sub(sub, text)


def registry_servers(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The server.json objects in a file: itself, an API wrapper, or an API list."""
    if isinstance(data.get("servers"), list):
        return [s["server"] if isinstance(s, dict) and isinstance(s.get("server"), dict) else s
                for s in data["servers"]]
    if isinstance(data.get("server"), dict):
        return [data["server"]]
    return [data]


def server_entries(server: Any, source: str, *, line: int | None = None) -> list[ImportEntry]:
    if not isinstance(server, dict):
        return [ImportEntry(key="server", name="server", spec=None, source=source, entry="server",
                            error="is not an object")]
    full_name = str(server.get("name") or "server")
    short = str(server.get("title") or full_name.rsplit("/", 1)[-1] or full_name)
    packages = [p for p in server.get("packages") or [] if p is not None]
    remotes = [r for r in server.get("remotes") or [] if r is not None]
    options: list[tuple[str, Any]] = [("package", p) for p in packages] + [("remote", r) for r in remotes]
    labels = [_label(kind, item) for kind, item in options]
    entries: list[ImportEntry] = []
    for (kind, item), label in zip(options, labels, strict=True):
        if labels.count(label) > 1:
            label = f"{label} {labels[:len(entries) + 1].count(label)}"
        name = short if len(options) == 1 else f"{short} ({label})"
        entry = ImportEntry(key=f"{full_name} ({label})", name=name, spec=None, source=source,
                            entry=f"{full_name} {label}", line=line)
        if not isinstance(item, dict):
            entry.error = f"the {kind} is not an object"
        elif kind == "package":
            _package(item, entry, short)
        else:
            _remote(item, entry, short)
        entries.append(entry)
    return entries


def _label(kind: str, item: Any) -> str:
    if not isinstance(item, dict):
        return kind
    if kind == "package":
        return str(_get(item, "registryType") or _get(item, "registryName") or "package")
    transport = _get(item, "type") or _get(item, "transportType") or "http"
    return f"remote {'http' if transport == 'streamable-http' else transport}"


def _package(pkg: dict[str, Any], entry: ImportEntry, short: str) -> None:
    b = _Builder(entry)
    registry = str(_get(pkg, "registryType") or _get(pkg, "registryName") or "")
    ident = _get(pkg, "identifier") or pkg.get("name")
    version = _get(pkg, "version")
    if not isinstance(ident, str) or not ident:
        entry.error = 'the package has no "identifier"'
        return
    version = str(version) if isinstance(version, (str, int, float)) and str(version) else None
    if version == "latest":
        entry.warnings.append(f"{entry.name}: version 'latest' is not pinned")

    env: dict[str, str] = {}
    for ev in _get(pkg, "environmentVariables") or []:
        if not isinstance(ev, dict) or not isinstance(ev.get("name"), str):
            continue
        name = ev["name"]
        secret = bool(_get(ev, "isSecret", False))
        value = b.value(ev, f"env-var:{name}", name, kind="env", secret=secret or is_secret_name(name))
        if value is None:
            continue
        env[name] = value
        if secret:
            entry.secret_marks.add(f"env:{name}")

    def known(name: str) -> str | None:
        return env.get(name)

    runtime = _arguments(_get(pkg, "runtimeArguments") or [], b, "runtime")
    package_args = _arguments(_get(pkg, "packageArguments") or [], b, "arg")
    hint = _get(pkg, "runtimeHint")
    if registry == "npm":
        command = ["npx", "-y", *runtime, f"{ident}@{version}" if version else ident, *package_args]
    elif registry == "pypi":
        command = ["uvx", *runtime, f"{ident}=={version}" if version else ident, *package_args]
    elif registry == "oci":
        image = ident
        if version and "@" not in ident and ":" not in ident.rsplit("/", 1)[-1]:
            image = f"{ident}:{version}"
        passes = [x for name in env for x in ("-e", name)]  # docker passes only the env it is told to
        command = ["docker", "run", "-i", "--rm", *runtime, *passes, image, *package_args]
    elif registry == "nuget":
        command = ["dnx", *runtime, f"{ident}@{version}" if version else ident, "--yes",
                   *(["--", *package_args] if package_args else [])]
    elif registry == "mcpb":
        entry.error = (f"MCP bundles (.mcpb) must be downloaded and unpacked before they run; Spyglass cannot "
                       f"start {ident} directly")
        return
    else:
        entry.error = f"unknown registryType {registry!r} (Spyglass knows npm, pypi, oci, nuget)"
        return
    default_runner = command[0]
    if isinstance(hint, str) and hint and hint != default_runner:
        entry.warnings.append(f"{entry.name}: runtimeHint {hint!r} noted; started with {default_runner}")

    transport = _get(pkg, "transport") or {"type": "stdio"}
    kind = transport.get("type", "stdio") if isinstance(transport, dict) else "stdio"
    if kind in ("streamable-http", "sse") and isinstance(transport, dict) and isinstance(transport.get("url"), str):
        url = b.fill(transport["url"], transport.get("variables") or {}, "url", known)
        headers = _headers(transport.get("headers") or [], b, entry)
        entry.warnings.append(f"{entry.name}: this package serves {kind} at {url}; start it yourself with: "
                              f"{' '.join(command)}")
        entry.spec = ServerSpec(name=entry.name, url=url, transport=_REMOTE_TRANSPORTS[kind], headers=headers)
    else:
        if kind != "stdio":
            entry.warnings.append(f"{entry.name}: unknown transport {kind!r}; started over stdio")
        entry.spec = ServerSpec(name=entry.name, command=command, env=env, transport="stdio")
    entry.placeholders = list(b.defs.values())


def _arguments(args: list[Any], b: _Builder, scope: str) -> list[str]:
    out: list[str] = []
    for i, arg in enumerate(args):
        if not isinstance(arg, dict):
            continue
        kind = arg.get("type", "positional")
        hint = _get(arg, "valueHint")
        if kind == "named":
            flag = arg.get("name")
            if not isinstance(flag, str) or not flag:
                continue
            value = b.value(arg, f"{scope}:{flag.lstrip('-')}", str(hint or flag))
            if value is None:
                continue
            out.extend([flag, value])
        else:
            label = str(hint or f"argument {i + 1}")
            value = b.value(arg, f"{scope}:{hint or i + 1}", label)
            if value is not None:
                out.append(value)
    return out


def _headers(items: list[Any], b: _Builder, entry: ImportEntry) -> dict[str, str]:
    out: dict[str, str] = {}
    for h in items:
        if not isinstance(h, dict) or not isinstance(h.get("name"), str):
            continue
        name = h["name"]
        secret = bool(_get(h, "isSecret", False))
        value = b.value(h, f"header:{name}", name, kind="input", secret=secret or is_secret_name(name))
        if value is None:
            continue
        out[name] = value
        if secret:
            entry.secret_marks.add(f"header:{name}")
    return out


def _remote(remote: dict[str, Any], entry: ImportEntry, short: str) -> None:
    b = _Builder(entry)
    kind = _get(remote, "type") or _get(remote, "transportType") or "streamable-http"
    url = remote.get("url")
    if kind not in _REMOTE_TRANSPORTS:
        entry.error = f"unknown remote type {kind!r} (expected streamable-http or sse)"
        return
    if not isinstance(url, str) or not url:
        entry.error = 'the remote has no "url"'
        return
    url = b.fill(url, remote.get("variables") or {}, "url")
    headers = _headers(_get(remote, "headers") or [], b, entry)
    entry.spec = ServerSpec(name=entry.name, url=url, transport=_REMOTE_TRANSPORTS[kind], headers=headers)
    entry.placeholders = list(b.defs.values())
