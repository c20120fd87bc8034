"""Putting `spyglass mcp` into an agent: the entry each host wants (`print_config`), that entry written into
the host's configuration and taken out again byte for byte (`install`, `uninstall`), and the agent skill.

Installing reuses the tap's reading of host configurations (`tap.install.read`: comments, BOM and layout
kept; `hosts()` says where each host keeps its file) and its safety: the file is written atomically, the
whole original is kept beside it (`<file>.spyglass-mcp.json`, 0600) with the text written, and uninstalling
puts the original back exactly when the file is still as Spyglass left it (else it says what changed and
leaves it alone). Only the new entry is inserted: every other byte stays where it was. No Qt here.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from ..config import strip_jsonc
from ..errors import UsageError
from ..private import write_atomic
from ..tap import install as tap_install
from .remote import spyglass_program

ENTRY = "spyglass"
RECORD_SUFFIX = ".spyglass-mcp.json"
CODEX_PATH = Path("~/.codex/config.toml")


def command(allow_writes: bool = False) -> list[str]:
    """How a host starts `spyglass mcp`: this bundle when frozen, else the `spyglass` on PATH, else this Python
    running the package."""
    found = None if getattr(sys, "frozen", False) else shutil.which("spyglass")
    base = [found] if found else spyglass_program()
    return [*base, "mcp", *(["--allow-writes"] if allow_writes else [])]


def entry(host: str, allow_writes: bool = False) -> dict[str, Any]:
    argv = command(allow_writes)
    out: dict[str, Any] = {"command": argv[0], "args": argv[1:]}
    if host == "vscode":
        out = {"type": "stdio", **out}
    return out


def print_config(host: str, *, allow_writes: bool = False) -> str:
    argv = command(allow_writes)
    if host == "codex":
        return (f"# ~/.codex/config.toml\n[mcp_servers.{ENTRY}]\ncommand = {json.dumps(argv[0])}\n"
                f"args = {json.dumps(argv[1:])}\n")
    container = "servers" if host == "vscode" else "mcpServers"
    text = json.dumps({container: {ENTRY: entry(host, allow_writes)}}, indent=2) + "\n"
    if host == "claude-code":
        return f"# claude mcp add {ENTRY} -- {shlex.join(argv)}\n# or in .mcp.json:\n{text}"
    return text


def skill_text() -> str:
    return resources.files(__package__).joinpath("SKILL.md").read_text(encoding="utf-8")


def default_path(host: str) -> Path:
    if host == "codex":  # Codex reads <codex home>/config.toml, its home $CODEX_HOME or ~/.codex
        home = os.environ.get("CODEX_HOME")
        return Path(home).expanduser() / "config.toml" if home else CODEX_PATH.expanduser()
    for found in tap_install.hosts():
        if found.kind == host and found.path.name != "settings.json":
            return found.path
    raise UsageError(f"no configuration file is known for {host}; give it with --config-file")


def _record(path: Path) -> Path:
    return path.with_name(path.name + RECORD_SUFFIX)


def _real(path: Path) -> Path:
    """Where to write `path`: a symbolic link's target, so that a linked config (dotfiles) stays a link."""
    return Path(os.path.realpath(path))


def install(host: str, path: str | None = None, *, allow_writes: bool = False) -> str:
    target = Path(path).expanduser() if path else default_path(host)
    if _record(target).exists():
        raise UsageError(f"{target} already has Spyglass installed (see {_record(target)}); --uninstall first")
    existed = target.is_file()
    original = target.read_bytes() if existed else b""
    if host == "codex":
        new = _toml_added(target, original, allow_writes)
    elif existed and original.strip():
        config = tap_install.read(target, "claude-code" if host == "claude-code" else host)
        if ENTRY in config.names:
            raise UsageError(f"{target} already has a server named {ENTRY!r}; nothing was changed")
        new = _json_added(config.text, config.container, entry(host, allow_writes))
    else:
        container = "servers" if host == "vscode" else "mcpServers"
        new = json.dumps({container: {ENTRY: entry(host, allow_writes)}}, indent=2) + "\n"
    if not target.parent.is_dir():
        raise UsageError(f"folder {target.parent} does not exist; is {host} installed?")
    record = {"format": "spyglass-mcp", "existed": existed, "original": original.decode("utf-8"), "written": new}
    write_atomic(_record(target), json.dumps(record, ensure_ascii=False))
    write_atomic(_real(target), new.encode("utf-8"), keep_mode=existed)
    return f"added {ENTRY!r} to {target} (undo: spyglass mcp --uninstall {host})"


def uninstall(host: str, path: str | None = None) -> str:
    target = Path(path).expanduser() if path else default_path(host)
    record_file = _record(target)
    if not record_file.exists():
        raise UsageError(f"{target} has no Spyglass entry installed by `spyglass mcp --install` (no {record_file})")
    try:
        record = json.loads(record_file.read_text(encoding="utf-8"))
        written, existed, original = (record["written"].encode("utf-8"), bool(record["existed"]),
                                      record["original"].encode("utf-8"))
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise UsageError(f"{record_file} is damaged ({exc}); {target} was left as it is: remove the {ENTRY!r} "
                         "entry by hand") from None
    now = target.read_bytes() if target.exists() else None
    if now != written:
        raise UsageError(f"{target} changed since Spyglass was installed into it; remove the {ENTRY!r} entry by "
                         f"hand (the original is kept in {record_file})")
    if existed:
        write_atomic(_real(target), original, keep_mode=True)
    else:
        target.unlink()
    record_file.unlink()
    return f"restored {target} as it was before --install"


def _json_added(text: str, container: tuple[str, ...], value: dict[str, Any]) -> str:
    """`text` with `"spyglass": value` inserted first in the `container` object (created when missing)."""
    scan = strip_jsonc(text)
    start = scan.index("{", len(text) - len(text.lstrip("\ufeff \t\r\n")))
    inner_start, path = start, list(container)
    while path:
        found = _member(scan, inner_start, path[0])
        if found is None:
            nested: Any = {ENTRY: value}
            for key in reversed(path[1:]):
                nested = {key: nested}
            return _insert(text, scan, inner_start, json.dumps(path[0]) + ": " + json.dumps(nested, indent=2))
        inner_start = found
        path.pop(0)
    return _insert(text, scan, inner_start, json.dumps(ENTRY) + ": " + json.dumps(value, indent=2))


def _member(scan: str, brace: int, key: str) -> int | None:
    """The position of the `{` of member `key` of the object whose `{` is at `brace`."""
    decoder = json.JSONDecoder()
    i = brace + 1
    while True:
        i = _skip(scan, i)
        if scan[i] == "}":
            return None
        name, i = decoder.raw_decode(scan, i)
        i = _skip(scan, i) + 1  # the colon
        i = _skip(scan, i)
        if name == key and scan[i] == "{":
            return i
        _, i = decoder.raw_decode(scan, i)
        i = _skip(scan, i)
        if scan[i] == ",":
            i += 1


def _skip(scan: str, i: int) -> int:
    while scan[i] in " \t\r\n":
        i += 1
    return i


def _insert(text: str, scan: str, brace: int, block: str) -> str:
    empty = scan[_skip(scan, brace + 1)] == "}"
    newline = "\r\n" if "\r\n" in text else "\n"
    block = block.replace("\n", newline + "  ")
    return text[:brace + 1] + newline + "  " + block + ("" if empty else ",") + text[brace + 1:]


def _toml_added(path: Path, original: bytes, allow_writes: bool) -> str:
    """The TOML text with `[mcp_servers.spyglass]` appended: refused when the file is not TOML Codex can read,
    already has the entry (however it is spelled), or would not read back with it."""
    try:
        text = original.decode("utf-8")
        servers = tomllib.loads(text).get("mcp_servers")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not UTF-8 text (byte {exc.start}); it was left untouched") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path} is not valid TOML ({exc}); it was left untouched") from None
    if isinstance(servers, dict) and ENTRY in servers:
        raise UsageError(f"{path} already has a server named {ENTRY!r} under mcp_servers; nothing was changed")
    sep = "" if not text or text.endswith("\n") else "\n"
    new = text + sep + ("\n" if text else "") + print_config("codex", allow_writes=allow_writes).split("\n", 1)[1]
    try:
        tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path} would not be valid TOML with [mcp_servers.{ENTRY}] appended ({exc}); add the "
                         "entry `spyglass mcp --print-config codex` prints by hand. Nothing was changed") from None
    return new


def installed(host: str, path: str | os.PathLike[str] | None = None) -> bool:
    target = Path(path).expanduser() if path else default_path(host)
    return _record(target).exists()
