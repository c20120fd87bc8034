"""Tapping a configured host's server: its config rewritten so one server entry runs through
`spyglass tap`, and restored exactly (no Qt).

    config = read(path)                     # hosts() says where each host keeps its config
    change = plan_tap(config, "github", tap_command=["spyglass"])
    print(change.preview())                 # a short unified diff, for the window and the CLI
    apply(change)                           # atomic; refused when the file changed since the plan
    apply(plan_untap(read(path), "github"))

Text surgery, not re-serialisation: people keep comments, key order and their own layout in these
files, so only the values of the tapped entry's `command` and `args` (or its URL) are replaced, and
every byte outside them stays as it was (BOM, CRLF, a missing final newline). The spans come from a
position-aware scan of the text with its comments blanked in place (`config.strip_jsonc`).

Undoing is exact because nothing is guessed: before the first change the whole file is copied to
`<file>.spyglass-backup` (never overwritten later), and `<file>.spyglass-taps.json` keeps, per tapped
entry, its original text and its tapped text. Untap puts the original text back where the tapped text
still is, so the file comes back byte for byte, and other entries edited meanwhile stay as edited.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import os
import platform
import re
import shlex
import socket
import stat
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..config import strip_jsonc
from ..errors import UsageError
from ..private import FILE_MODE, write_atomic

MAX_BYTES = 5 * 1024 * 1024  # a host's config, not a data dump: larger is refused, not scanned
BACKUP_SUFFIX = ".spyglass-backup"
RECORD_SUFFIX = ".spyglass-taps.json"
RECORD_FORMAT = "spyglass-taps"
KINDS = {"claude-desktop": "Claude Desktop", "cursor": "Cursor", "vscode": "VS Code", "claude-code": "Claude Code",
         "mcp-servers": "an mcpServers file"}
URL_TYPES = {"http", "sse", "streamable-http", "streamableHttp", "streamable_http"}
PORT_RANGE = (20000, 40000)  # where a picked proxy port is looked for (above most dev servers' defaults)

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class TapConfigError(UsageError):
    """A host config that cannot be read or parsed; it was left untouched. `details` name file, line, column."""

    kind = "tap_config"


@dataclass(frozen=True)
class HostConfig:
    kind: str
    label: str
    path: Path
    exists: bool


@dataclass(frozen=True)
class ServerEntry:
    name: str
    transport: str  # "stdio", "url", or "unknown" (neither a command nor a URL: nothing to tap)
    command: tuple[str, ...]  # the command line of a stdio entry as the file has it; () for the others
    url: str | None
    tapped: bool
    line: int
    restorable: bool = False  # tapped, and untap can put the original entry back exactly
    problem: str | None = None  # why an "unknown" entry is not usable


@dataclass(frozen=True)
class TapConfig:
    path: Path
    kind: str
    text: str  # the file's whole text as its bytes decode (a BOM and CRLF kept)
    container: tuple[str, ...]  # where the servers are: ("mcpServers",), ("servers",), ("mcp", "servers")
    entries: tuple[ServerEntry, ...]
    record_text: str | None  # the .spyglass-taps.json beside it, as read
    writable: bool

    @property
    def label(self) -> str:
        return KINDS.get(self.kind, self.kind)

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def entry(self, name: str) -> ServerEntry:
        found = [e for e in self.entries if e.name == name]
        if not found:
            have = ", ".join(repr(n) for n in self.names) or "none"
            raise UsageError(f"{self.path} has no server named {name!r} (it has: {have})", file=str(self.path))
        return found[-1]  # the one a host reads when a name is there twice

    @property
    def backup_path(self) -> Path:
        return backup_path(self.path)

    @property
    def record_path(self) -> Path:
        return record_path(self.path)


@dataclass(frozen=True)
class Change:
    path: Path
    action: str  # "tap" | "untap"
    name: str
    before: str
    after: str
    notes: tuple[str, ...] = ()
    url: str | None = None  # a URL entry: the address the proxy must forward to
    proxy_url: str | None = None  # ... and the local one the host now connects to
    proxy_command: tuple[str, ...] | None = None  # what must run meanwhile for the host to reach its server
    record_before: str | None = None
    record_after: str | None = None  # None: no entry is tapped any more, the record goes

    def preview(self, context: int = 1) -> str:
        """The change as a unified diff (line endings and BOM left out: they do not change)."""
        done = {"tap": "tapped", "untap": "untapped"}.get(self.action, self.action)
        lines = difflib.unified_diff(_lines(self.before), _lines(self.after), str(self.path),
                                     f"{self.path} ({self.name} {done})", n=context, lineterm="")
        return "\n".join(lines)


def backup_path(path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    return p.with_name(p.name + BACKUP_SUFFIX)


def record_path(path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    return p.with_name(p.name + RECORD_SUFFIX)


# -- where hosts keep their configs -----------------------------------------------------------------


def hosts(folder: str | os.PathLike[str] | None = None, *, system: str | None = None,
          environ: Mapping[str, str] | None = None, home: str | os.PathLike[str] | None = None) -> list[HostConfig]:
    """Each host's config on this machine, user ones first, then those of `folder` (the current one).

    `system`, `environ` and `home` default to this machine's; passing them shows another OS's paths.
    """
    system = system or platform.system()
    environ = os.environ if environ is None else environ
    home_dir = Path(home) if home is not None else Path.home()
    project = Path(folder) if folder is not None else Path.cwd()
    if system == "Windows":
        app = Path(environ["APPDATA"]) if environ.get("APPDATA") else home_dir / "AppData" / "Roaming"
    elif system == "Darwin":
        app = home_dir / "Library" / "Application Support"
    else:
        app = home_dir / ".config"
    found = [
        ("claude-desktop", "Claude Desktop", app / "Claude" / "claude_desktop_config.json"),
        ("cursor", "Cursor", home_dir / ".cursor" / "mcp.json"),
        ("vscode", "VS Code (user mcp.json)", app / "Code" / "User" / "mcp.json"),
        ("vscode", "VS Code (user settings.json)", app / "Code" / "User" / "settings.json"),
        ("vscode", "VS Code (this folder's .vscode/mcp.json)", project / ".vscode" / "mcp.json"),
        ("claude-code", "Claude Code (this folder's .mcp.json)", project / ".mcp.json"),
    ]
    return [HostConfig(kind, label, path, path.is_file()) for kind, label, path in found]


# -- reading ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Member:
    key: str
    before: int  # just after the "{" or "," that comes before the key
    key_start: int
    key_end: int
    start: int  # the value's span
    end: int
    value: Any


def read(path: str | os.PathLike[str], kind: str | None = None) -> TapConfig:
    """A host's config with each server entry, whether it is tapped, and what the tap can restore.

    `kind` (one of KINDS) is guessed from the file's name and content when not given. TapConfigError
    (a UsageError) names the file, and the line and column of a syntax error; nothing is written.
    """
    if kind is not None and kind not in KINDS:
        raise UsageError(f"unknown host kind {kind!r} (one of: {', '.join(KINDS)})")
    path = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
    text, st = _read_config(path)
    scan, data = _parse(text, str(path))
    if not isinstance(data, dict):
        raise TapConfigError(f"{path}: expected a JSON object at the top level; the file was left untouched",
                             file=str(path))
    kind = kind or _detect_kind(path, data)
    container = _container_of(kind, path, data)
    record_text, taps = _read_record(path)
    entries = tuple(_describe(text, scan, m, taps.get(m.key)) for m in _servers(scan, container, str(path)))
    return TapConfig(path=path, kind=kind, text=text, container=container, entries=entries,
                     record_text=record_text, writable=_writable(path, st))


def _read_config(path: Path) -> tuple[str, os.stat_result]:
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise TapConfigError(f"{path} is a folder, not a config file", file=str(path))
        if st.st_size > MAX_BYTES:
            raise TapConfigError(f"{path} is {st.st_size / (1024 * 1024):.1f} MiB: too big for a config file "
                                 f"(at most {MAX_BYTES // (1024 * 1024)} MiB); it was left untouched",
                                 file=str(path))
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise TapConfigError(f"config file not found: {path}", file=str(path)) from None
    except PermissionError:
        raise TapConfigError(f"cannot read {path}: permission denied", file=str(path)) from None
    except OSError as exc:
        raise TapConfigError(f"cannot read {path}: {exc.strerror or exc}", file=str(path)) from None
    if len(raw) > MAX_BYTES:
        raise TapConfigError(f"{path} grew past {MAX_BYTES // (1024 * 1024)} MiB while being read", file=str(path))
    try:
        # strict decoding, no newline translation: the text is the bytes, so writing it back changes nothing
        return raw.decode("utf-8"), st
    except UnicodeDecodeError as exc:
        raise TapConfigError(f"{path} is not UTF-8 text (byte {exc.start}); it was left untouched",
                             file=str(path)) from None


def _parse(text: str, source: str) -> tuple[str, Any]:
    """(scan, data): `scan` is `text` with its BOM, comments and trailing commas blanked, at the same positions."""
    bom = text.startswith("\ufeff")
    body = strip_jsonc(text[1:] if bom else text)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        # positions in the text after the BOM, as an editor counts them
        raise TapConfigError(f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}; "
                             f"the file was left untouched", file=source, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise TapConfigError(f"{source}: invalid JSON: nested too deeply; the file was left untouched",
                             file=source) from None
    return (" " if bom else "") + body, data


def _detect_kind(path: Path, data: dict[str, Any]) -> str:
    mcp = data.get("mcp")
    if isinstance(data.get("servers"), dict) or (isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict)):
        return "vscode"
    if path.name == "claude_desktop_config.json":
        return "claude-desktop"
    if path.name == ".mcp.json":
        return "claude-code"
    if path.name == "mcp.json" and path.parent.name == ".cursor":
        return "cursor"
    if path.name == "settings.json" or path.parent.name == ".vscode":
        return "vscode"
    return "mcp-servers"


def _container_of(kind: str, path: Path, data: dict[str, Any]) -> tuple[str, ...]:
    if kind != "vscode":
        return ("mcpServers",)
    if "servers" in data:
        return ("servers",)
    if isinstance(data.get("mcp"), dict) or path.name == "settings.json":
        return ("mcp", "servers")
    return ("servers",)


def _members(scan: str, start: int) -> list[_Member]:
    """The members of the object whose "{" is at `start` (the text is valid JSON: json.loads said so)."""
    out: list[_Member] = []
    before = start + 1
    i = _end_ws(scan, before)
    while scan[i] != "}":
        key, key_end = _DECODER.raw_decode(scan, i)
        colon = _end_ws(scan, key_end)
        value_start = _end_ws(scan, colon + 1)
        value, value_end = _DECODER.raw_decode(scan, value_start)
        out.append(_Member(key, before, i, key_end, value_start, value_end, value))
        i = _end_ws(scan, value_end)
        if scan[i] == ",":
            before = i + 1
            i = _end_ws(scan, before)
    return out


def _items(scan: str, start: int) -> list[tuple[int, int]]:
    """The spans of the items of the array whose "[" is at `start`."""
    out: list[tuple[int, int]] = []
    i = _end_ws(scan, start + 1)
    while scan[i] != "]":
        _value, end = _DECODER.raw_decode(scan, i)
        out.append((i, end))
        i = _end_ws(scan, end)
        if scan[i] == ",":
            i = _end_ws(scan, i + 1)
    return out


def _end_ws(scan: str, i: int) -> int:
    match = _WS.match(scan, i)
    return match.end() if match else i


def _servers(scan: str, container: tuple[str, ...], source: str) -> list[_Member]:
    """The members of the servers object; [] when the file has none yet."""
    members = _members(scan, _end_ws(scan, 0))
    for depth, key in enumerate(container):
        found = [m for m in members if m.key == key]
        if not found:
            return []
        where = ".".join(container[:depth + 1])
        if len(found) > 1:
            raise TapConfigError(f'{source}: "{where}" appears {len(found)} times; keep one and try again',
                                 file=source)
        if not isinstance(found[0].value, dict):
            raise TapConfigError(f'{source}: "{where}" is not an object', file=source)
        members = _members(scan, found[0].start)
    return members


def _fields(scan: str, member: _Member) -> dict[str, list[_Member]]:
    out: dict[str, list[_Member]] = {}
    if isinstance(member.value, dict):
        for m in _members(scan, member.start):
            out.setdefault(m.key, []).append(m)
    return out


def _shape(raw: Any) -> tuple[str, tuple[str, ...], str | None, str | None]:
    """(transport, command line, URL, problem) of one entry, read as the importers read it."""
    if not isinstance(raw, dict):
        return "unknown", (), None, "the entry is not an object"
    command, kind = raw.get("command"), raw.get("type", raw.get("transport"))
    url = raw.get("url", raw.get("serverUrl"))
    if isinstance(command, str) and command.strip() and not (isinstance(url, str) and kind in URL_TYPES):
        args = raw.get("args", [])
        if args is None:
            args = []
        if not isinstance(args, list) or not all(isinstance(a, (str, int, float, bool)) for a in args):
            return "unknown", (), None, '"args" is not a list of strings'
        return "stdio", (command, *(_text(a) for a in args)), None, None
    if isinstance(url, str) and url.strip():
        return "url", (), url, None
    return "unknown", (), None, 'it has neither a "command" nor a "url"'


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _looks_tapped(argv: Sequence[str]) -> bool:
    return any(argv[i] == "tap" and argv[i + 1] == "--name" and "--" in argv[i + 3:] for i in range(len(argv) - 1))


def _describe(text: str, scan: str, member: _Member, tap: Mapping[str, Any] | None) -> ServerEntry:
    transport, command, url, problem = _shape(member.value)
    current = text[member.start:member.end]
    tapped, restorable = _looks_tapped(command), False
    if tap is not None and current != tap["original"]:
        if current == tap["tapped"]:
            tapped = restorable = True
        elif transport == "url" and url == tap.get("proxy_url"):
            tapped = True
        # else: put back by hand (or changed beyond recognition): what the command line says holds
    return ServerEntry(name=member.key, transport=transport, command=command, url=url, tapped=tapped,
                       line=text.count("\n", 0, member.key_start) + 1, restorable=restorable, problem=problem)


def _read_record(path: Path) -> tuple[str | None, dict[str, dict[str, Any]]]:
    where = record_path(path)
    try:
        with open(where, encoding="utf-8", newline="") as fh:
            text = fh.read()
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as exc:
        raise TapConfigError(f"cannot read the record of taps {where}: {exc}", file=str(where)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        data = exc
    taps = data.get("taps") if isinstance(data, dict) and data.get("format") == RECORD_FORMAT else None
    if not isinstance(taps, dict) or not all(
            isinstance(t, dict) and isinstance(t.get("original"), str) and isinstance(t.get("tapped"), str)
            for t in taps.values()):
        raise TapConfigError(f"{where} is damaged: it no longer says what the tapped entries were; the file as it "
                             f"was before the first tap is {backup_path(path)}", file=str(where))
    return text, taps


def _writable(path: Path, st: os.stat_result) -> bool:
    # the mode bits too: os.access says yes to root even for a file its owner made read-only
    return bool(st.st_mode & stat.S_IWUSR) and os.access(path, os.W_OK)


# -- planning ---------------------------------------------------------------------------------------


def plan_tap(config: TapConfig, name: str, *, tap_command: Sequence[str], session: str | None = None,
             port: int | None = None) -> Change:
    """The change that makes the host run `name` through the tap; nothing is written yet.

    A stdio entry runs `tap_command + ["tap", "--name", NAME, "--", command, *args]`. A URL entry
    connects to a local reverse proxy instead, `http://127.0.0.1:PORT/<its path>`: `port` says which
    (0: a free one, picked from the file and name so it stays the same), and the proxy must be started
    separately (`Change.proxy_command`); without `port` a URL entry is refused.
    """
    tap_command = list(tap_command)
    if not tap_command or not all(isinstance(a, str) and a for a in tap_command):
        raise UsageError("the tap command must be a program and its arguments, none of them empty")
    entry = config.entry(name)
    _check_writable(config)
    if entry.tapped:
        raise UsageError(f"{name!r} in {config.path} is tapped already" + (
            "; untap it first" if entry.restorable else
            ", and Spyglass cannot undo that tap exactly: put the entry back by hand" + _backup_hint(config)))
    if entry.transport == "unknown":
        raise UsageError(f"{name!r} in {config.path} cannot be tapped: {entry.problem}")
    scan, member = _locate(config, name)
    fields = _fields(scan, member)
    twice = [k for k in ("command", "args", "url", "serverUrl") if len(fields.get(k, [])) > 1]
    if twice:
        raise UsageError(f"{name!r} in {config.path} has {twice[0]!r} twice; keep one and try again")
    text = config.text
    notes: list[str] = []
    extra = ["--session", session] if session else []
    url = proxy_url = None
    proxy_command: tuple[str, ...] | None = None
    if entry.transport == "stdio":
        argv = list(entry.command)
        if len(argv) == 1 and " " in argv[0].strip() and not os.path.exists(argv[0]):
            # the host would have handed it to a shell; the tap starts a program, so the words go apart
            argv = shlex.split(argv[0], posix=os.name != "nt")
            notes.append(f"its command {entry.command[0]!r} holds its arguments: the tap runs {shlex.join(argv)}")
        new_args = [*tap_command[1:], "tap", "--name", name, *extra, "--", *argv]
        command = fields["command"][0]
        args = fields["args"][0] if "args" in fields else None
        edits = [*_args_edits(text, scan, command, args, new_args),
                 (command.start, command.end, _dumps(tap_command[0]))]
        notes.append(f"the host now starts {shlex.join([tap_command[0], *new_args])}; restart the host (or "
                     f"reload its servers) for it to take effect")
    else:
        url = entry.url
        assert url is not None
        key = "url" if "url" in fields else "serverUrl"
        parts = urlsplit(url.strip())
        if parts.scheme.lower() not in ("http", "https"):
            raise UsageError(f"{name!r} in {config.path}: {url!r} is not an http:// or https:// address")
        if port is None:
            raise UsageError(f"{name!r} in {config.path} is a URL server ({url}): the host connects to it itself, so "
                             f"the tap runs as a local proxy. Start `spyglass tap --listen 127.0.0.1:PORT {url}`, "
                             f"then tap it with --port PORT (or --port 0 to have a free port picked)")
        if port == 0:
            port = pick_port(f"{config.path}\n{name}")
        if not 0 < port < 65536:
            raise UsageError(f"port {port} is not a TCP port (1 to 65535)")
        proxy_url = urlunsplit(("http", f"127.0.0.1:{port}", parts.path, parts.query, parts.fragment))
        proxy_command = (*tap_command, "tap", "--listen", f"127.0.0.1:{port}", "--name", name, *extra, url)
        edits = [(fields[key][0].start, fields[key][0].end, _dumps(proxy_url))]
        notes.append(f"the host now connects to {proxy_url}: start {shlex.join(proxy_command)} and keep it running "
                     f"while the host uses {name!r}, or the host finds nothing there")
    tapped_entry = _splice(text, member.start, member.end, edits)
    after = text[:member.start] + tapped_entry + text[member.end:]
    taps = _record_taps(config)
    taps[name] = {"transport": entry.transport, "original": text[member.start:member.end], "tapped": tapped_entry,
                  "url": url, "proxy_url": proxy_url,
                  "tapped_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    if not os.path.lexists(config.backup_path):
        notes.append(f"the file as it is now is kept in {config.backup_path}")
    return Change(path=config.path, action="tap", name=name, before=text, after=after, notes=tuple(notes), url=url,
                  proxy_url=proxy_url, proxy_command=proxy_command, record_before=config.record_text,
                  record_after=_record_text(config, taps))


def plan_untap(config: TapConfig, name: str) -> Change:
    """The change that puts `name`'s original entry back, exactly as it was before it was tapped."""
    entry = config.entry(name)
    _check_writable(config)
    if not entry.tapped:
        raise UsageError(f"{name!r} in {config.path} is not tapped")
    taps = _record_taps(config)
    tap = taps.get(name)
    if tap is None:
        raise UsageError(f"{name!r} in {config.path} runs through a tap, but {config.record_path} has no record of "
                         f"its original entry: change it back by hand" + _backup_hint(config))
    if not entry.restorable:
        raise UsageError(f"{name!r} in {config.path} was edited by hand since it was tapped, so Spyglass will not "
                         f"guess how to undo it: its original entry is in {config.record_path}"
                         + _backup_hint(config))
    _scan, member = _locate(config, name)
    text = config.text
    after = text[:member.start] + tap["original"] + text[member.end:]
    del taps[name]
    notes = [f"the host runs {name!r} as before once it is restarted (or reloads its servers)"]
    if tap.get("proxy_url"):
        notes.append(f"the proxy at {tap['proxy_url']} is no longer needed")
    return Change(path=config.path, action="untap", name=name, before=text, after=after, notes=tuple(notes),
                  url=tap.get("url"), record_before=config.record_text,
                  record_after=_record_text(config, taps) if taps else None)


def _backup_hint(config: TapConfig) -> str:
    if os.path.lexists(config.backup_path):
        return f"; the whole file as it was before the first tap is {config.backup_path}"
    return ""


def _check_writable(config: TapConfig) -> None:
    if not config.writable:
        raise UsageError(f"{config.path} is read-only: Spyglass changes nothing in it. Make it writable "
                         f"(or change it by hand) and try again", file=str(config.path))


def _locate(config: TapConfig, name: str) -> tuple[str, _Member]:
    scan, _data = _parse(config.text, str(config.path))
    found = [m for m in _servers(scan, config.container, str(config.path)) if m.key == name]
    if len(found) != 1:
        raise UsageError(f"{name!r} appears {len(found)} times in {config.path}; keep one and try again")
    return scan, found[0]


def _record_taps(config: TapConfig) -> dict[str, dict[str, Any]]:
    """The record's taps, less those of entries put back by hand (their original text is there again)."""
    if config.record_text is None:
        return {}
    taps: dict[str, dict[str, Any]] = json.loads(config.record_text)["taps"]  # read() checked its shape
    scan, _data = _parse(config.text, str(config.path))
    undone = {m.key for m in _servers(scan, config.container, str(config.path))
              if m.key in taps and config.text[m.start:m.end] == taps[m.key]["original"]}
    return {name: tap for name, tap in taps.items() if name not in undone}


def _record_text(config: TapConfig, taps: Mapping[str, Any]) -> str:
    record = {"format": RECORD_FORMAT, "version": 1, "config": str(config.path), "backup": str(config.backup_path),
              "taps": dict(taps)}
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def _dumps(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _splice(text: str, start: int, end: int, edits: list[tuple[int, int, str]]) -> str:
    """text[start:end] with each (from, to, new) edit made (absolute positions, not overlapping)."""
    out = text[start:end]
    for a, b, new in sorted(edits, reverse=True):
        out = out[:a - start] + new + out[b - start:]
    return out


def _newline_at(text: str, i: int) -> str:
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def _gap(text: str, scan: str, a: int, b: int) -> str:
    """The whitespace between two tokens, for new text laid out the same way: a line break with the
    indentation of the next line, else one space if there was any (a blanked comment is no layout)."""
    nl = scan.rfind("\n", a, b)
    if nl >= 0:
        return _newline_at(text, nl) + scan[nl + 1:b]
    return " " if b > a else ""


def _args_edits(text: str, scan: str, command: _Member, args: _Member | None,
                new_args: list[str]) -> list[tuple[int, int, str]]:
    """Edits that make `args` hold new_args, laid out like the entry's own args (or its command line)."""
    items = [_dumps(a) for a in new_args]
    if args is None:
        # a new member right after "command", on a line of its own when the entry has one per line
        colon = text[command.key_end:command.start]
        sep = _gap(text, scan, command.before, command.key_start)
        return [(command.end, command.end, f",{sep or ' '}\"args\"{colon}[{', '.join(items)}]")]
    spans = _items(scan, args.start) if isinstance(args.value, list) else []
    if not spans:
        return [(args.start, args.end, f"[{', '.join(items)}]")]
    lead = _gap(text, scan, args.start + 1, spans[0][0])
    trail = _gap(text, scan, spans[-1][1], args.end - 1)
    if len(spans) > 1:
        comma = scan.index(",", spans[0][1])
        between = _gap(text, scan, comma + 1, spans[1][0])
    else:
        between = lead if "\n" in lead else " "
    return [(args.start, args.end, "[" + lead + ("," + between).join(items) + trail + "]")]


def pick_port(seed: str) -> int:
    """A free port on 127.0.0.1, the same for the same `seed` while it stays free (so tapping again after
    an untap gives the host the same address)."""
    low, high = PORT_RANGE
    base = zlib.crc32(seed.encode("utf-8")) % (high - low)
    for k in range(200):
        candidate = low + (base + k) % (high - low)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", candidate))
            except OSError:
                continue
            return candidate
    raise UsageError(f"no free port found on 127.0.0.1 between {low} and {high}; give one with --port")


# -- writing ----------------------------------------------------------------------------------------


def apply(change: Change) -> None:
    """Write `change`: the backup first (once), the record of taps and the config, each atomically.

    Refused (UsageError, nothing written) when the file or its record of taps changed since the plan.
    """
    path = change.path
    text, st = _read_config(path)
    if text != change.before:
        raise UsageError(f"{path} changed since the preview: read it again and look at the new preview; "
                         f"nothing was written", file=str(path))
    record_now, _taps = _read_record(path)
    if record_now != change.record_before:
        raise UsageError(f"{record_path(path)} changed since the preview: read {path} again; nothing was written",
                         file=str(path))
    if not _writable(path, st):
        raise UsageError(f"{path} is read-only: Spyglass changes nothing in it. Make it writable (or change it "
                         f"by hand) and try again", file=str(path))
    mode = stat.S_IMODE(st.st_mode)
    target = Path(os.path.realpath(path))  # a symlinked config (dotfiles) stays a symlink
    if change.action == "tap":
        if not os.path.lexists(backup_path(path)):
            _atomic_write(backup_path(path), text.encode("utf-8"), FILE_MODE)
        # the record before the config: a tapped entry never exists without its original text kept
        _atomic_write(record_path(path), (change.record_after or "").encode("utf-8"), FILE_MODE)
        _atomic_write(target, change.after.encode("utf-8"), mode)
        return
    _atomic_write(target, change.after.encode("utf-8"), mode)
    if change.record_after is None:
        try:
            os.unlink(record_path(path))
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise UsageError(f"{path} is restored, but {record_path(path)} could not be removed: "
                             f"{exc.strerror or exc}") from None
    else:
        _atomic_write(record_path(path), change.record_after.encode("utf-8"), FILE_MODE)


def _atomic_write(target: Path, data: bytes, mode: int) -> None:
    """A temporary file in the same folder, synced, then renamed over `target`: a reader sees the old
    file or the new one, never half of one. The host's config keeps its own mode (the host's file); the
    backup and the record Spyglass makes beside it are 0600: they hold the same secrets."""
    try:
        write_atomic(target, data, mode=mode, suffix=".tmp")
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}; it was left as it was") from None


def _lines(text: str) -> list[str]:
    return re.split(r"\r?\n", text.removeprefix("\ufeff"))
