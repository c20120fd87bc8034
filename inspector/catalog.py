"""The server catalog: the servers a user has added, kept between runs. No Qt.

Stored as JSON in `<user config dir>/spyglass/servers.json` (platformdirs; the
`SPYGLASS_CONFIG_DIR` environment variable overrides the folder), written
atomically: a temporary file in the same folder, flushed and fsynced, then
`os.replace`d over the old one, so a crash at any moment leaves either the old
catalog or the new one, never half of one.

Secrets (env values and headers named like *TOKEN*, *KEY*, *SECRET*, *PASSWORD*,
Authorization, bearer tokens, and anything an imported file marked as a password)
never reach the file, which is plain text: it holds a marker
`{"keyring": SERVICE, "key": "<server id>/env:NAME"}` and the value goes to the
OS keyring through `inspector.keystore`. Without a keyring the values live in
memory for this session only, and `Catalog.secrets_warning` says so.

    catalog = Catalog().load()
    entry = catalog.add(ServerSpec(name="weather", command=["uvx", "weather-mcp"]))
    catalog.save()
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import logging
import os
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import messages, private
from .config import ConfigError, ServerSpec, parse_json
from .keystore import Secrets, SecretStore
from .secrets import MASK, is_secret_name, mask_env_value, mask_value

log = logging.getLogger("spyglass.catalog")

APP = "spyglass"
FILE_NAME = "servers.json"
FORMAT = "spyglass-catalog"
VERSION = 1
OAUTH_KEPT = ("client_id", "scope")  # what a server's OAuth options keep in the file (not the client secret)
_TEMP_PREFIX = "."  # temp files: .servers.json.<random>.tmp beside the catalog
_TEMP_SUFFIX = ".tmp"
_STALE_TEMP_SECONDS = 60.0


class CatalogError(ConfigError):
    kind = "catalog"


def default_catalog_path() -> Path:
    folder = os.environ.get("SPYGLASS_CONFIG_DIR")
    if folder:
        return Path(folder) / FILE_NAME
    import platformdirs

    return platformdirs.user_config_path(APP, appauthor=False) / FILE_NAME


# --- secrets ------------------------------------------------------------------------------------

def is_secret_field(kind: str, name: str, value: str = "", marked: Iterable[str] = ()) -> bool:
    """Whether `env`/`header` field `name` holds a secret (by its name, its value, or a mark)."""
    if f"{kind}:{name}" in set(marked) or is_secret_name(name):
        return True
    return kind == "header" and value.lower().startswith(("bearer ", "basic ", "token "))


def mask_field(kind: str, name: str, value: str, marked: Iterable[str] = ()) -> str:
    """A field's value as shown or exported: masked whole when it is a secret field, else its secret
    shapes (and for env values, a high-entropy value: `secrets.mask_env_value`)."""
    if not value:
        return value
    if not is_secret_field(kind, name, value, marked):
        return mask_env_value(name, value) if kind == "env" else mask_value(name, value)
    if is_secret_name(name):
        return mask_value(name, value)
    # secret by mark or by value, not by name: masked whole (a header keeps its scheme)
    scheme = value.split(" ", 1)[0] if kind == "header" and " " in value else ""
    return f"{scheme} {MASK}" if scheme else MASK


@dataclass
class CatalogEntry:
    """One server in the catalog. `spec` holds the real secret values (from the keyring)."""

    id: str
    spec: ServerSpec
    mode: str = "auto"                      # protocol mode: auto | legacy | modern | a version
    timeout: float | None = None            # request timeout in seconds; None = the app's default
    secret_marks: set[str] = field(default_factory=set)   # "env:NAME" / "header:NAME" marked secret
    source: dict[str, str] | None = None    # where it was imported from: file, entry, format
    added: str = ""                         # ISO 8601 UTC
    missing_secrets: set[str] = field(default_factory=set)  # secret fields the keyring did not have
    roots: list[dict[str, str]] | None = None  # the roots offered to this server; None: never set
    # the development loop (inspector.devloop.WatchSettings as JSON, with "on"); None: never set
    watch: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    def secret_fields(self) -> set[str]:
        """The "env:NAME" / "header:NAME" fields of this server that are secrets."""
        out = {f"env:{k}" for k, v in self.spec.env.items() if is_secret_field("env", k, v, self.secret_marks)}
        out |= {f"header:{k}" for k, v in self.spec.headers.items()
                if is_secret_field("header", k, v, self.secret_marks)}
        return out

    def masked_spec(self) -> ServerSpec:
        """A copy of the spec with secret values masked, for display and logs."""
        spec = copy.deepcopy(self.spec)
        spec.env = {k: mask_field("env", k, v, self.secret_marks) for k, v in spec.env.items()}
        spec.headers = {k: mask_field("header", k, v, self.secret_marks) for k, v in spec.headers.items()}
        return spec


def same_definition(a: ServerSpec, b: ServerSpec) -> bool:
    """Whether two specs start the same server the same way (names aside)."""
    return _definition(a) == _definition(b)


def _definition(spec: ServerSpec) -> tuple[object, ...]:
    transport = spec.transport
    if spec.url is None and transport in (None, "stdio"):
        transport = "stdio"
    elif spec.url is not None and transport in (None, "http", "streamable-http"):
        transport = "http"
    return (tuple(spec.command), tuple(sorted(spec.env.items())), spec.cwd or None, spec.url, transport,
            tuple(sorted((k.lower(), v) for k, v in spec.headers.items())))


# --- atomic files -------------------------------------------------------------------------------

def write_atomic(path: str | os.PathLike[str], text: str, *, mode: int = 0o600) -> None:
    """Replace `path` with `text` so that a crash leaves the old file or the new one, never a mix
    (`inspector.private.write_atomic`: a 0600 temporary file in the same folder, fsynced, renamed)."""
    private.write_atomic(path, text, mode=mode, prefix=f"{_TEMP_PREFIX}{Path(path).name}.", suffix=_TEMP_SUFFIX)


def _remove_stale_temps(path: Path) -> None:
    """Temp files left by a crash between writing and renaming (never one still being written)."""
    try:
        candidates = list(path.parent.glob(f"{_TEMP_PREFIX}{path.name}.*{_TEMP_SUFFIX}"))
    except OSError:
        return
    now = time.time()
    for tmp in candidates:
        try:
            if now - tmp.stat().st_mtime > _STALE_TEMP_SECONDS:
                tmp.unlink()
        except OSError:
            pass


# --- the catalog --------------------------------------------------------------------------------

class Catalog:
    """The user's servers, in order. Mutations stay in memory until `save()`."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, secrets: Secrets | None = None) -> None:
        self.path = Path(path) if path is not None else default_catalog_path()
        self.secrets: Secrets = secrets if secrets is not None else SecretStore(what="Secrets of saved servers")
        self.warnings: list[str] = []     # what load() had to say (broken file moved aside, ...)
        self.read_only = False            # written by a newer Spyglass: never overwritten
        self._entries: list[CatalogEntry] = []
        self._unreadable: list[Any] = []  # raw entries load() could not use, written back unchanged
        self._saved_keys: set[str] = set()  # keyring keys the file on disk refers to

    # -- reading -----------------------------------------------------------------------------

    @property
    def servers(self) -> list[CatalogEntry]:
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[CatalogEntry]:
        return iter(list(self._entries))

    @property
    def secrets_persistent(self) -> bool:
        return bool(getattr(self.secrets, "persistent", False))

    @property
    def secrets_warning(self) -> str | None:
        return getattr(self.secrets, "warning", None)

    def get(self, server_id: str) -> CatalogEntry:
        for entry in self._entries:
            if entry.id == server_id:
                return entry
        raise KeyError(server_id)

    def find(self, name: str) -> CatalogEntry | None:
        """The server with this name (case-insensitive), or None."""
        folded = name.casefold()
        return next((e for e in self._entries if e.name.casefold() == folded), None)

    def unique_name(self, name: str, *, taken: Iterable[str] = (), ignore: str | None = None) -> str:
        """`name`, or `name (2)`, `name (3)`... whichever no other server has."""
        used = {e.name.casefold() for e in self._entries if e.id != ignore} | {t.casefold() for t in taken}
        if name.casefold() not in used:
            return name
        k = 2
        while f"{name} ({k})".casefold() in used:
            k += 1
        return f"{name} ({k})"

    def load(self) -> Catalog:
        """Read the file (a missing file is an empty catalog). Never raises for a broken file:
        it is moved aside to `servers.json.broken-<time>` and `warnings` says where; the user is told
        each warning through inspector.messages (the window's banner, once it listens)."""
        self.warnings = []
        self._entries, self._unreadable, self._saved_keys = [], [], set()
        self.read_only = False
        self._read()
        for warning in self.warnings:
            messages.warning(warning)
        return self

    def _read(self) -> None:
        if not self.path.exists():
            return
        try:
            text = self.path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            self._move_aside(f"{self.path} is not UTF-8 text (byte {exc.start})")
            return
        except OSError as exc:
            # unreadable is not broken: leave the file alone and never overwrite it
            self.read_only = True
            why = exc.strerror or str(exc)
            self.warnings.append(f"cannot read the server catalog {self.path} ({why}); it is left as it is "
                                 f"and changes will not be saved")
            return
        try:
            data = parse_json(text, str(self.path))
            if not isinstance(data, dict) or not isinstance(data.get("servers", []), list):
                raise CatalogError(f"{self.path}: not a Spyglass server catalog")
            version = data.get("version", VERSION)
            if not isinstance(version, int):
                raise CatalogError(f"{self.path}: the catalog version is not a number")
        except ConfigError as exc:
            self._move_aside(exc.message)
            return
        if version > VERSION:
            self.read_only = True
            self.warnings.append(f"{self.path} was written by a newer Spyglass (catalog version {version}); "
                                 f"it is shown read-only and will not be changed")
        for position, raw in enumerate(data.get("servers", [])):
            try:
                self._entries.append(self.entry_from_json(raw))
            except (CatalogError, TypeError, ValueError) as exc:
                self._unreadable.append(raw)
                what = raw.get("name") if isinstance(raw, dict) else None
                self.warnings.append(f"{self.path}: server {what or position + 1!r} cannot be used and is "
                                     f"kept unchanged in the file: {exc}")

    def _move_aside(self, why: str) -> None:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H-%M-%SZ")
        backup = self.path.with_name(f"{self.path.name}.broken-{stamp}")
        try:
            os.replace(self.path, backup)
            self.warnings.append(f"{why}. The catalog was moved to {backup} and a new, empty one started; "
                                 f"nothing was deleted.")
        except OSError as exc:
            self.read_only = True
            self.warnings.append(f"{why}. It could not be moved aside ({exc.strerror or exc}), so it is left "
                                 f"as it is and will not be overwritten.")
        log.warning("%s", self.warnings[-1])

    def entry_from_json(self, raw: Any) -> CatalogEntry:
        """One server as a catalog file holds it. Its secrets are read from this catalog's store; those
        the store lacks are named in `missing_secrets` and `warnings`. Raises CatalogError (or TypeError,
        ValueError) for an entry that cannot be used."""
        if not isinstance(raw, dict):
            raise CatalogError("not an object")
        server_id = raw.get("id")
        name = raw.get("name")
        if not isinstance(server_id, str) or not server_id or not isinstance(name, str):
            raise CatalogError('"id" and "name" must be strings')
        command = raw.get("command") or []
        url = raw.get("url")
        if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
            raise CatalogError('"command" must be a list of strings')
        if not command and not isinstance(url, str):
            raise CatalogError('neither "command" nor "url"')
        entry = CatalogEntry(id=server_id, spec=ServerSpec(name=name), mode=str(raw.get("mode") or "auto"),
                             secret_marks={str(m) for m in raw.get("secret", []) if isinstance(m, str)},
                             added=str(raw.get("added") or ""))
        timeout = raw.get("timeout")
        entry.timeout = float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None
        source = raw.get("source")
        entry.source = {str(k): str(v) for k, v in source.items()} if isinstance(source, dict) else None
        spec = entry.spec
        spec.command = list(command)
        spec.url = url if isinstance(url, str) else None
        spec.cwd = raw.get("cwd") if isinstance(raw.get("cwd"), str) else None
        spec.transport = raw.get("transport") if isinstance(raw.get("transport"), str) else None
        spec.env = self._fields_from_json(entry, "env", raw.get("env"))
        spec.headers = self._fields_from_json(entry, "header", raw.get("headers"))
        roots = raw.get("roots")
        if isinstance(roots, list):
            entry.roots = [{k: r[k] for k in ("uri", "name") if isinstance(r.get(k), str)} for r in roots
                           if isinstance(r, dict) and isinstance(r.get("uri"), str)]
        oauth = raw.get("oauth")
        spec.oauth = {k: v for k, v in oauth.items() if k in OAUTH_KEPT and isinstance(v, str) and v} \
            if isinstance(oauth, dict) else {}
        spec.trace_context = raw.get("trace_context") is True
        spec.sandbox = raw.get("sandbox") is True
        pin = raw.get("pin")
        spec.pin = pin if isinstance(pin, str) and pin else None
        pin = raw.get("tls_pin")
        spec.tls_pin = pin.upper() if isinstance(pin, str) and len(pin) == 64 and all(
            c in "0123456789abcdefABCDEF" for c in pin) else ""  # a SHA-256 fingerprint, or nothing trusted
        watch = raw.get("watch")
        entry.watch = dict(watch) if isinstance(watch, dict) else None
        return entry

    def _fields_from_json(self, entry: CatalogEntry, kind: str, raw: Any) -> dict[str, str]:
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            raise CatalogError(f'"{kind}" must be an object')
        out: dict[str, str] = {}
        for key, value in raw.items():
            if isinstance(value, dict) and "key" in value:
                secret_key = str(value["key"])
                self._saved_keys.add(secret_key)
                entry.secret_marks.add(f"{kind}:{key}")
                found = self.secrets.get(secret_key)
                if found is None:
                    entry.missing_secrets.add(f"{kind}:{key}")
                    self.warnings.append(f"server {entry.name!r}: the secret {key} is not in the keyring "
                                         f"(it was kept for one session only, or removed): enter it again")
                out[str(key)] = found or ""
            else:
                out[str(key)] = "" if value is None else str(value)
        return out

    # -- changing ----------------------------------------------------------------------------

    def add(self, spec: ServerSpec, *, mode: str = "auto", timeout: float | None = None,
            secret_marks: Iterable[str] = (), source: dict[str, str] | None = None,
            index: int | None = None) -> CatalogEntry:
        """Add a server (its name made unique) at the end, or at `index`."""
        spec = copy.deepcopy(spec)
        spec.name = self.unique_name(spec.name.strip() or _fallback_name(spec))
        entry = CatalogEntry(id=uuid.uuid4().hex[:12], spec=spec, mode=mode, timeout=timeout,
                             secret_marks=set(secret_marks), source=dict(source) if source else None,
                             added=dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat())
        self._entries.insert(len(self._entries) if index is None else index, entry)
        return entry

    def update(self, server_id: str, spec: ServerSpec | None = None, *, mode: str | None = None,
               timeout: float | None = None, secret_marks: Iterable[str] | None = None) -> CatalogEntry:
        """Change a server in place (same id, same position). A name another server has is refused."""
        entry = self.get(server_id)
        if spec is not None:
            spec = copy.deepcopy(spec)
            spec.name = spec.name.strip() or _fallback_name(spec)
            if self.unique_name(spec.name, ignore=server_id) != spec.name:
                raise CatalogError(f"another server is already called {spec.name!r}")
            entry.spec = spec
            entry.missing_secrets = {f for f in entry.missing_secrets if not _field_value(spec, f)}
        if mode is not None:
            entry.mode = mode
        if timeout is not None:
            entry.timeout = timeout if timeout > 0 else None
        if secret_marks is not None:
            entry.secret_marks = set(secret_marks)
        return entry

    def replace(self, server_id: str, spec: ServerSpec, **kwargs: Any) -> CatalogEntry:
        """Put a new definition (name included) in the place of an existing server."""
        entry = self.get(server_id)
        entry.missing_secrets = set()
        return self.update(server_id, spec, **kwargs)

    def remove(self, server_id: str) -> CatalogEntry:
        entry = self.get(server_id)
        self._entries.remove(entry)
        return entry

    def duplicate(self, server_id: str) -> CatalogEntry:
        """A copy (secrets included) right after the original, named "<name> (copy)"."""
        entry = self.get(server_id)
        spec = copy.deepcopy(entry.spec)
        spec.name = f"{entry.name} (copy)"
        return self.add(spec, mode=entry.mode, timeout=entry.timeout, secret_marks=entry.secret_marks,
                        source=entry.source, index=self._entries.index(entry) + 1)

    def put_back(self, entry: CatalogEntry, index: int) -> CatalogEntry:
        """A removed server back at `index`, as it was (id, secrets, roots, watch settings); its name made
        unique again if another server took it meanwhile."""
        entry = copy.deepcopy(entry)
        entry.spec.name = self.unique_name(entry.spec.name)
        self._entries.insert(max(0, min(index, len(self._entries))), entry)
        return entry

    def move(self, server_id: str, index: int) -> None:
        entry = self.get(server_id)
        self._entries.remove(entry)
        self._entries.insert(max(0, min(index, len(self._entries))), entry)

    def snapshot(self) -> list[CatalogEntry]:
        """The servers as they are now, for `restore` (used to undo a failed import)."""
        return copy.deepcopy(self._entries)

    def restore(self, snapshot: list[CatalogEntry]) -> None:
        self._entries = copy.deepcopy(snapshot)

    # -- writing -----------------------------------------------------------------------------

    def to_json(self, *, store_secrets: bool = False) -> dict[str, Any]:
        """The file's contents; with `store_secrets`, secret values go to the keystore on the way."""
        servers: list[Any] = []
        for entry in self._entries:
            spec = entry.spec
            item: dict[str, Any] = {"id": entry.id, "name": spec.name}
            if spec.url is not None:
                item["url"] = spec.url
            if spec.command:
                item["command"] = list(spec.command)
            if spec.transport:
                item["transport"] = spec.transport
            if spec.cwd:
                item["cwd"] = spec.cwd
            secret = entry.secret_fields()
            item["env"] = self._fields_to_json(entry, "env", spec.env, secret, store_secrets)
            item["headers"] = self._fields_to_json(entry, "header", spec.headers, secret, store_secrets)
            oauth = {k: v for k, v in spec.oauth.items() if k in OAUTH_KEPT and v}
            if oauth:
                item["oauth"] = oauth  # a client secret is never written here: the token store keeps it
            item["mode"] = entry.mode
            if spec.trace_context:
                item["trace_context"] = True
            if spec.sandbox:
                item["sandbox"] = True
            if spec.pin:
                item["pin"] = spec.pin
            if spec.tls_pin:
                item["tls_pin"] = spec.tls_pin
            if entry.roots is not None:
                item["roots"] = [dict(r) for r in entry.roots]
            if entry.watch is not None:
                item["watch"] = dict(entry.watch)
            if entry.timeout:
                item["timeout"] = entry.timeout
            marks = sorted(entry.secret_marks)
            if marks:
                item["secret"] = marks
            if entry.source:
                item["source"] = dict(entry.source)
            if entry.added:
                item["added"] = entry.added
            servers.append(item)
        servers.extend(copy.deepcopy(self._unreadable))
        return {"format": FORMAT, "version": VERSION, "servers": servers}

    def _fields_to_json(self, entry: CatalogEntry, kind: str, values: dict[str, str], secret: set[str],
                        store: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in values.items():
            field_id = f"{kind}:{key}"
            if field_id in secret and (value or field_id in entry.missing_secrets):
                secret_key = f"{entry.id}/{field_id}"
                if store and value:
                    self.secrets.set(secret_key, value)
                out[key] = {"keyring": getattr(self.secrets, "service", APP), "key": secret_key}
            else:
                out[key] = value
        return out

    def save(self) -> None:
        """Write the catalog atomically; secrets go to the keyring first, stale ones are removed after."""
        if self.read_only:
            raise CatalogError(f"{self.path} is read-only here (see the catalog warnings); not saved")
        data = self.to_json(store_secrets=True)
        keys = {v["key"] for s in data["servers"] if isinstance(s, dict)
                for part in ("env", "headers") if isinstance(s.get(part), dict)
                for v in s[part].values() if isinstance(v, dict) and "key" in v}
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        _remove_stale_temps(self.path)
        try:
            write_atomic(self.path, text)
        except OSError as exc:
            raise CatalogError(f"cannot save the server catalog {self.path}: {exc.strerror or exc}",
                               file=str(self.path)) from None
        for stale in self._saved_keys - keys:
            self.secrets.delete(stale)
        self._saved_keys = keys


def _fallback_name(spec: ServerSpec) -> str:
    if spec.url:
        return spec.url
    return os.path.basename(spec.command[0]) if spec.command else "server"


def _field_value(spec: ServerSpec, field_id: str) -> str:
    kind, _, key = field_id.partition(":")
    return (spec.env if kind == "env" else spec.headers).get(key, "")
