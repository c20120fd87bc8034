"""Reading a file into an ImportPreview: detect the format by content, parse, check, compare."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from typing import Any

from ..catalog import Catalog, same_definition
from ..config import ConfigError, parse_json, read_text
from ..keystore import MemorySecrets
from . import _mcpservers, _registry
from ._model import FORMAT_LABELS, Conflict, ImportEntry, ImportFileError, ImportPreview
from ._placeholders import has_placeholder, resolve

MAX_BYTES = 16 * 1024 * 1024  # a config file, not a data dump


def preview_file(path: str | os.PathLike[str], catalog: Catalog | None = None, *,
                 env: Mapping[str, str] | None = None) -> ImportPreview:
    """What importing `path` would add, with conflicts against `catalog`; writes nothing.

    Raises ImportFileError (naming the file, and the line and column for invalid JSON)
    when the file as a whole cannot be read or is not a format Spyglass knows.
    """
    path = os.fspath(path)
    return preview_text(read_text(path, ImportFileError, MAX_BYTES), path, catalog, env=env)


def preview_text(text: str, source: str = "<pasted text>", catalog: Catalog | None = None, *,
                 env: Mapping[str, str] | None = None) -> ImportPreview:
    """Like preview_file, for text dropped or pasted onto the window."""
    env = os.environ if env is None else env
    try:
        data = parse_json(text, source)
    except ConfigError as exc:
        raise ImportFileError(exc.message, **exc.details) from None
    if not isinstance(data, dict):
        raise ImportFileError(f"{source}: expected a JSON object at the top level, found "
                              f"{type(data).__name__ if data is not None else 'null'}", file=source)
    fmt, entries, warnings = _parse(data, text, source, env)
    if not entries:
        raise ImportFileError(f"{source}: this {FORMAT_LABELS.get(fmt, fmt)} file defines no servers",
                              file=source)
    for entry in entries:
        _finish(entry, env)
    preview = ImportPreview(path=source, format=fmt, entries=entries, warnings=warnings)
    if catalog is not None:
        check_conflicts(preview, catalog)
    return preview


def detect_format(data: Any) -> str:
    """The format of a parsed file: vscode, claude-desktop, cursor, mcp-inspector, registry, spyglass."""
    if not isinstance(data, dict):
        raise ImportFileError("expected a JSON object at the top level")
    if data.get("format") == "spyglass-catalog" and isinstance(data.get("servers"), list):
        return "spyglass"
    if isinstance(data.get("servers"), list) or isinstance(data.get("server"), dict) \
            or _registry.looks_like_server_json(data):
        return "registry"
    if isinstance(data.get("servers"), dict) or (isinstance(data.get("mcp"), dict)
                                                 and isinstance(data["mcp"].get("servers"), dict)):
        return "vscode"
    if isinstance(data.get("mcpServers"), dict):
        return _mcpservers.detect_flavour(data["mcpServers"])
    raise ImportFileError('not a server list Spyglass knows: expected "mcpServers" (Claude Desktop, Cursor, '
                          'the MCP Inspector), "servers" (VS Code) or "packages"/"remotes" (a registry '
                          'server.json)')


def _parse(data: dict[str, Any], text: str, source: str, env: Mapping[str, str]
           ) -> tuple[str, list[ImportEntry], list[str]]:
    try:
        fmt = detect_format(data)
    except ImportFileError as exc:
        raise ImportFileError(f"{source}: {exc.message}", file=source) from None
    warnings: list[str] = []
    if fmt == "registry":
        entries: list[ImportEntry] = []
        for server in _registry.registry_servers(data):
            entries.extend(_registry.server_entries(server, source))
        return fmt, entries, warnings
    if fmt == "spyglass":
        return fmt, _spyglass_entries(data, source), warnings
    if fmt == "vscode":
        block = data if isinstance(data.get("servers"), dict) else data["mcp"]
        servers, container = block["servers"], "servers"
        defs = _mcpservers.parse_inputs(block.get("inputs"), source, warnings)
    else:
        servers, container, defs = data["mcpServers"], "mcpServers", {}
    start = _key_position(text, container, 0)
    entries = []
    for name, raw in servers.items():
        entry = _mcpservers.parse_entry(str(name), raw, source=source, flavour=fmt,
                                        line=_line_of_key(text, str(name), start), env=env)
        entry.placeholders = list(defs.values())  # definitions; _finish keeps those used
        entries.append(entry)
    return fmt, entries, warnings


def _spyglass_entries(data: dict[str, Any], source: str) -> list[ImportEntry]:
    reader = Catalog(os.devnull, secrets=MemorySecrets())
    entries = []
    for i, raw in enumerate(data["servers"]):
        given = raw.get("name") if isinstance(raw, dict) else None
        name = given if isinstance(given, str) else f"server {i + 1}"
        entry = ImportEntry(key=name, name=name, spec=None, source=source, entry=name)
        try:
            loaded = reader.entry_from_json(raw)
        except Exception as exc:
            entry.error = str(exc)
        else:
            entry.spec, entry.mode, entry.timeout = loaded.spec, loaded.mode, loaded.timeout
            entry.secret_marks = set(loaded.secret_marks)
            for missing in sorted(loaded.missing_secrets):
                entry.warnings.append(f"server {name!r}: the secret {missing.split(':', 1)[1]} is in the other "
                                      f"machine's keyring, not in the file: enter it after importing")
        entries.append(entry)
    return entries


def _finish(entry: ImportEntry, env: Mapping[str, str]) -> None:
    """Resolve placeholders and check what can be checked on this machine."""
    if entry.spec is None:
        entry.placeholders = []
        return
    defs = {p.token: p for p in entry.placeholders}
    entry.spec, entry.placeholders, secret = resolve(entry.spec, defs=defs, env=env, entry_name=entry.name,
                                                     warnings=entry.warnings)
    entry.secret_marks |= secret
    _check_here(entry, env)


def _check_here(entry: ImportEntry, env: Mapping[str, str]) -> None:
    spec = entry.spec
    assert spec is not None
    where = f"server {entry.name!r}"
    if spec.command and not has_placeholder(spec.command[0]):
        program = spec.command[0]
        if os.path.dirname(program):
            if not os.path.exists(os.path.expanduser(program)):
                entry.warnings.append(f"{where}: the command {program} does not exist on this machine")
        elif shutil.which(program, path=env.get("PATH", os.defpath)) is None:
            entry.warnings.append(f"{where}: the command {program!r} was not found on this machine (not on PATH)")
    if spec.cwd and not has_placeholder(spec.cwd) and not os.path.isdir(spec.cwd):
        entry.warnings.append(f"{where}: the working folder {spec.cwd} does not exist on this machine")
    if spec.url and not spec.url.startswith("${") and not re.match(r"^https?://[^/\s]+", spec.url, re.I):
        entry.error = f"the URL {spec.url!r} is not an http:// or https:// address"


def check_conflicts(preview: ImportPreview, catalog: Catalog) -> None:
    """Fill each entry's `conflict` and `suggested_name` against the catalog as it is now."""
    taken: list[str] = []
    for entry in preview.entries:
        entry.conflict, entry.suggested_name = None, None
        if entry.spec is None:
            continue
        same_name = catalog.find(entry.name)
        twin = next((e for e in catalog.servers if same_definition(e.spec, entry.spec)), None)
        if twin is not None:
            entry.conflict = Conflict("duplicate", twin.id, twin.name)
        elif same_name is not None:
            entry.conflict = Conflict("same-name", same_name.id, same_name.name)
        entry.suggested_name = catalog.unique_name(entry.name, taken=taken)
        taken.append(entry.suggested_name)


def _key_position(text: str, key: str, start: int) -> int:
    match = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(text, start)
    return match.end() if match else 0


def _line_of_key(text: str, key: str, start: int) -> int | None:
    match = re.compile(re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:").search(text, start)
    return text.count("\n", 0, match.start()) + 1 if match else None

