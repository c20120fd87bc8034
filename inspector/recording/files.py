"""Session files: opening one (the SQLite file every window session writes, or a portable `.mcpsession`)
and writing the portable one.

A `.mcpsession` is gzip'd JSON Lines (docs/sessions.md): a header line (`"format": "mcpsession"`, the
format version, the Spyglass version, the servers with their definitions and revisions), one line per
frame, and an end line with the count, so a file cut short is told from a whole one. Frames keep their
exact bytes (text when they are UTF-8, base64 otherwise), so a session exported and imported again is
the same frame for frame.

Secrets are masked as every export masks them (`inspector.secrets`): the servers' env values and
headers by name, the headers of each HTTP exchange, and in the JSON-RPC bodies the values of keys that
name a secret (`password`, `api_key`, `access_token`…). A damaged file opens with what can be read and
a list of what could not (`Opened.problems`), never an exception, except for a file that is no session
at all (`SessionFileError`).
"""

from __future__ import annotations

import base64
import collections
import datetime as dt
import gzip
import io
import json
import sqlite3
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from .. import __version__
from ..config import ServerSpec
from ..errors import UsageError
from ..portable import FORMAT, SUFFIX, VERSION, frame_line, mask_definition, mask_frame, mask_meta
from ..private import open_private, write_private
from ..protocol.jsonrpc import Malformed, decode, parse
from ..secrets import Tally
from ..traffic import Frame, TrafficStore
from ..traffic.columns import DIRECTIONS, HEAD_MAX
from .surface import ServerSurface, definitions, surfaces

SQLITE_MAGIC = b"SQLite format 3\x00"
GZIP_MAGIC = b"\x1f\x8b"

class SessionFileError(UsageError):
    """A file that is not a session at all (or cannot be read): nothing to show."""

    kind = "session"


@dataclass
class Opened:
    """A session read from a file: its frames (a read-only store), what each server was, and what of
    the file could not be read."""

    path: Path
    store: TrafficStore
    kind: str  # "sqlite" or "mcpsession"
    problems: list[str] = field(default_factory=list)
    header: dict[str, Any] = field(default_factory=dict)  # a .mcpsession's header line
    _surfaces: dict[str, ServerSurface] | None = None

    @property
    def surfaces(self) -> dict[str, ServerSurface]:
        if self._surfaces is None:
            self._surfaces = surfaces(self.store)
        return self._surfaces

    def rebuilt(self, found: dict[str, ServerSurface]) -> None:
        """The servers, rebuilt by whoever read the frames (a `SurfacesBuilder` as the file was read)."""
        self._surfaces = found

    def surface(self, name: str | None = None) -> ServerSurface:
        """One server: the one named (by id or name), or the only one; UsageError otherwise."""
        found = self.surfaces
        if name is None:
            real = [s for s in found.values() if s.frames]
            if len(real) == 1:
                return real[0]
            if not real and self.problems:  # damaged past reading: say so, not only that nothing was connected
                raise UsageError(f"{self.path.name}: no server traffic could be read: {'; '.join(self.problems)}")
            if not real:
                raise UsageError(f"{self.path.name}: the session has no server traffic")
            raise UsageError(f"{self.path.name} has {len(real)} servers ({', '.join(s.name for s in real)}): "
                             "name one with --server")
        for s in found.values():
            if name in (s.server_id, s.name):
                return s
        raise UsageError(f"{self.path.name}: no server {name!r} (it has {', '.join(s.name for s in found.values())})")


def open_session(path: str | Path) -> Opened:
    """Open a session file of either kind; `SessionFileError` when it is neither or cannot be read."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            magic = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise SessionFileError(f"cannot open {path}: {exc.strerror or exc}") from None
    if magic.startswith(GZIP_MAGIC):
        return _open_portable(path)
    if magic == SQLITE_MAGIC:
        problems: list[str] = []
        try:
            store = TrafficStore.open_session(path, problems)
            if not len(store) and problems:
                store = _salvage(path, store, problems)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise SessionFileError(f"{path.name} cannot be read as a session: {exc}") from None
        if not len(store) and not problems and not any(k.startswith("server:") for k in store.meta_items):
            problems.append("the session has no frames")
        return Opened(path, store, "sqlite", problems)
    if not magic:
        raise SessionFileError(f"{path.name} is empty: not a session file")
    raise SessionFileError(f"{path.name} is not a Spyglass session (neither a session database nor a "
                           f"{SUFFIX} file)")


def _salvage(path: Path, store: TrafficStore, problems: list[str]) -> TrafficStore:
    """A database cut short (a copy that stopped, a full disk) says it has more pages than the file holds,
    and SQLite then reads nothing. A copy whose header names the pages that are there gives back the
    frames on those pages."""
    data = path.read_bytes()
    page = int.from_bytes(data[16:18], "big")
    page = 65536 if page == 1 else page
    if page < 512 or len(data) < 100:
        return store
    pages = len(data) // page
    said = int.from_bytes(data[28:32], "big")
    if said <= pages:
        return store
    fixed = bytearray(data[: pages * page])
    fixed[28:32] = pages.to_bytes(4, "big")
    with tempfile.TemporaryDirectory(prefix="spyglass-salvage-") as folder:
        copy = Path(folder) / path.name
        write_private(copy, bytes(fixed))
        found: list[str] = []
        salvaged = TrafficStore.open_session(copy, found)
        for n in range(len(salvaged)):  # huge frames are read from the file on demand: read them while it exists
            if salvaged.size(n) > HEAD_MAX:
                try:
                    salvaged.columns.big[n] = salvaged.raw(n)
                except sqlite3.DatabaseError:
                    pass  # on a page that is gone: its head is all there is
        salvaged.close()
        salvaged.path = path
    if not len(salvaged):
        return store
    problems[:] = [f"{path.name} is cut short: it holds {pages} of its {said} pages; {len(salvaged)} frames "
                   "could be read from them"]
    problems += [p for p in found if "damaged after frame" not in p]
    return salvaged


def frame_of_line(line: dict[str, Any]) -> tuple[str, Frame]:
    """A frame line of a `.mcpsession` (or of a tap's live feed): its server id and the frame; KeyError,
    TypeError or ValueError when it is not one."""
    server = line["server"]
    direction = line["dir"]
    if not isinstance(server, str) or direction not in DIRECTIONS:
        raise ValueError("no server or direction")
    if "data_b64" in line:
        data = base64.b64decode(line["data_b64"], validate=True)
    else:
        data = str(line["data"]).encode("utf-8", "surrogatepass")
    meta = line.get("meta")
    malformed = line.get("malformed")
    return server, Frame(direction, data, float(line.get("mono", 0.0)), float(line["wall"]),
                         malformed if isinstance(malformed, str) else None, None,
                         meta if isinstance(meta, dict) else None)


def _judge(frames: list[tuple[str, Frame]]) -> None:
    """Mark the malformed frames of a file whose writer did not (the tap: it only passes bytes on)."""
    for _server, frame in frames:
        if frame.direction in ("in", "out") and frame.malformed is None:
            message = parse(frame.data)
            if isinstance(message, Malformed):
                frame.malformed = message.reason


def _open_portable(path: Path) -> Opened:
    opened, steps = _portable_reading(path)
    collections.deque(steps, maxlen=0)
    return opened


def _portable_reading(path: Path, batch: int = 2000) -> tuple[Opened, Iterator[int]]:
    """A `.mcpsession` read a slice at a time: its header at once (SessionFileError when it is none), then
    its frames `batch` at a time into the read-only store."""
    fh = gzip.open(path, "rb")
    try:
        first = fh.readline().decode("utf-8", "surrogateescape")
    except (OSError, EOFError, zlib.error) as exc:
        fh.close()
        raise SessionFileError(f"{path.name} cannot be read: {exc}") from None
    try:
        header = json.loads(first)
    except (ValueError, RecursionError):
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        fh.close()
        raise SessionFileError(f"{path.name} is not a {SUFFIX} file (its first line names no format "
                               f"{FORMAT!r})")
    problems: list[str] = []
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        problems.append(f"written in {SUFFIX} version {version} (a newer Spyglass?); this version reads "
                        f"version {VERSION} and shows what it knows of the file")
    meta: dict[str, str] = {}
    if isinstance(header.get("started"), (int, float)):
        meta["started"] = repr(float(header["started"]))
    for server in header.get("servers") or []:
        if isinstance(server, dict) and isinstance(server.get("id"), str):
            definition = server.get("definition")
            if isinstance(definition, dict):
                meta[f"server:{server['id']}"] = json.dumps(definition, ensure_ascii=False)
    opened = Opened(path, TrafficStore.from_frames([], meta), "mcpsession", problems, header)
    return opened, _portable_frames(fh, opened, batch)


class _FrameLine(msgspec.Struct):
    """A frame line as Spyglass writes it, decoded into its fields in one call. A line of any other shape (the
    end line, a damaged or hand-edited one) fails to decode this way and is read as `frame_of_line` reads it."""

    server: str
    dir: str
    wall: float
    mono: float = 0.0
    data: str | None = None
    data_b64: str | None = None
    meta: dict[str, Any] | None = None
    malformed: str | None = None
    end: Any = msgspec.UNSET


_decode_line = msgspec.json.Decoder(_FrameLine).decode
CHUNK = io.DEFAULT_BUFFER_SIZE  # unpacked bytes read from a .mcpsession at once, as reading it by lines did
# (a damaged stream loses what one read unpacked, and no more than before)


def _chunks(fh: Any) -> Iterator[list[bytes]]:
    """The lines of what is left of `fh`, a list per read (a line is cut at its newline, which it keeps as
    a line read from the file does). A read that fails raises, after every whole line before it."""
    rest = b""
    while True:
        got = fh.read1(CHUNK)
        if not got:
            if rest:
                yield [rest]
            return
        lines = (rest + got).split(b"\n")
        rest = lines.pop()
        if lines:
            yield [line + b"\n" for line in lines]


def _typed_frames(lines: list[bytes]) -> list[tuple[str, Frame]] | None:
    """The frames of `lines` when every one is a frame line of the usual shape; None when one is not."""
    out: list[tuple[str, Frame]] = []
    try:
        for line in map(_decode_line, lines):
            if line.end is not msgspec.UNSET or line.dir not in DIRECTIONS:
                return None
            if line.data_b64 is not None:
                data = base64.b64decode(line.data_b64, validate=True)
            elif line.data is not None:
                data = line.data.encode("utf-8", "surrogatepass")
            else:
                return None
            out.append((line.server, Frame(line.dir, data, line.mono, line.wall, line.malformed, None, line.meta)))
    except (msgspec.DecodeError, ValueError):
        return None
    return out


def _portable_frames(fh: Any, opened: Opened, batch: int) -> Iterator[int]:
    store, problems, header = opened.store, opened.problems, opened.header
    frames: list[tuple[str, Frame]] = []
    count = 0
    ended: int | None = None

    def take() -> None:
        nonlocal count, frames
        if not frames:
            return  # (an empty slice would take the last one from `last_read` before it was used)
        if header.get("unjudged") is True:  # written by a tap, which leaves judging the frames to the reader
            _judge(frames)
        store.append_read(frames)  # (it keeps the list as `last_read`: a new one is filled next)
        count += len(frames)
        frames = []

    def one(lines: int, raw: bytes) -> None:
        nonlocal ended
        item, problem = decode(raw)  # the frames' parser: the faster one when the client installed it
        if problem:
            try:  # not UTF-8 throughout: read as text, the bytes that are not kept as they were
                item = json.loads(raw.decode("utf-8", "surrogateescape"))
            except (ValueError, RecursionError):
                problems.append(f"line {lines} is not JSON (left out)")
                return
        if not isinstance(item, dict):
            problems.append(f"line {lines} is not an object (left out)")
        elif "end" in item:
            ended = item.get("frames") if isinstance(item.get("frames"), int) else -1
            if isinstance(item.get("masked_values"), dict):  # a tap's file: known at its end only
                header["masked_values"] = item["masked_values"]
        else:
            try:
                frames.append(frame_of_line(item))
            except (KeyError, TypeError, ValueError) as exc:
                problems.append(f"line {lines} is not a frame ({type(exc).__name__}: {exc}; left out)")

    lines = 1  # the header's
    try:
        with fh:
            for chunk in _chunks(fh):
                for start in range(0, len(chunk), batch):
                    part = chunk[start:start + batch]
                    typed = _typed_frames(part) if ended is None else None
                    if typed is not None:  # the usual case: every line a frame, decoded typed
                        frames += typed
                    else:
                        for k, raw in enumerate(part, lines + 1):
                            one(k, raw)
                    lines += len(part)
                    if len(frames) >= batch:
                        take()
                        yield count
    except (OSError, EOFError, zlib.error) as exc:
        take()
        problems.append(f"the file ends early ({exc}): {count} frames could be read")
        ended = count
    take()
    if ended is None:
        problems.append(f"the file has no end line (cut short?): {count} frames could be read")
    elif ended >= 0 and ended != count:
        problems.append(f"the file says it holds {ended} frames; {count} could be read")
    yield count


def reading(path: str | Path, batch: int = 2000) -> tuple[Opened, Iterator[int]]:
    """`open_session` a slice at a time, for a window that shows a session as it is read: the session at once
    with no frames yet (SessionFileError when the file is none), and an iterator each step of which reads up to
    `batch` more frames into its store (yielding how many it holds) and notes what could not be read. A
    database cut short is read whole at once (what can be saved of it is found in a copy)."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
        size = path.stat().st_size
    except OSError as exc:
        raise SessionFileError(f"cannot open {path}: {exc.strerror or exc}") from None
    if head.startswith(GZIP_MAGIC):
        return _portable_reading(path, batch)
    page = int.from_bytes(head[16:18], "big") if len(head) >= 100 else 0
    page = 65536 if page == 1 else page
    if not head.startswith(SQLITE_MAGIC) or page < 512 or int.from_bytes(head[28:32], "big") > size // page:
        return open_session(path), iter(())  # not a database, or one cut short: as open_session says
    problems: list[str] = []
    try:
        store, steps = TrafficStore.reading(path, problems, batch)
    except (sqlite3.DatabaseError, OSError) as exc:
        raise SessionFileError(f"{path.name} cannot be read as a session: {exc}") from None
    opened = Opened(path, store, "sqlite", problems)

    def frames() -> Iterator[int]:
        try:
            yield from steps
        except (sqlite3.DatabaseError, OSError) as exc:
            problems.append(f"{path.name} cannot be read as a session: {exc}")
        if not len(store) and not problems and not any(k.startswith("server:") for k in store.meta_items):
            problems.append("the session has no frames")

    return opened, frames()


def masked_values(header: dict[str, Any]) -> dict[str, int] | None:
    """What a `.mcpsession`'s header says was masked, kind -> number of secrets (None when the file does
    not say: written before the count, or without masking). Anything else in the field is ignored."""
    said = header.get("masked_values")
    if not isinstance(said, dict):
        return None
    tally = Tally()
    tally.merge(said)
    return tally.counts()


# ---------------------------------------------------------------------------- writing
def server_entries(store: TrafficStore, keep: Iterable[str] | None = None,
                   counts: Tally | None = None) -> list[dict[str, Any]]:
    """The header's servers: id, name, revision, era, serverInfo and the definition (masked; what was
    masked when the definition was first kept, `masked_marks`, is added to `counts`)."""
    wanted = set(keep) if keep is not None else None
    entries = []
    for sid, s in surfaces(store).items():
        if wanted is not None and sid not in wanted:
            continue
        entry: dict[str, Any] = {"id": sid, "name": s.name, "revision": s.revision, "era": s.era,
                                 "serverInfo": s.server_info}
        if s.definition is not None:
            entry["definition"] = mask_definition(s.definition, counts)
            if counts is not None:
                counts.add_marks(s.definition.get("masked_marks"))
        entries.append(entry)
    return entries


def export_session(store: TrafficStore, path: str | Path, *, drop_stderr: bool = False,
                   drop_servers: Iterable[str] = (), rows: Iterable[int] | None = None,
                   mask: bool = True, known: Iterable[str] = ()) -> int:
    """Write `store` (or the rows given) as a `.mcpsession`; returns the number of frames written.
    `drop_servers`: server ids or names left out; `drop_stderr`: no stderr lines; `known`: secrets to mask
    wherever a frame holds them (a server's own, `secrets.secrets_of`)."""
    drop = set(drop_servers)
    names = {sid: d.get("name") for sid, d in definitions(store).items()}
    keep = [sid for sid in store.servers() if sid not in drop and names.get(sid) not in drop]
    keep += [sid for sid in names if sid not in keep and sid not in drop and names.get(sid) not in drop]
    kept = set(keep)
    counts = Tally() if mask else None
    if counts is not None:
        counts.learn(known)
    header = {"format": FORMAT, "version": VERSION, "spyglass": __version__,
              "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "started": store.started,
              "servers": server_entries(store, keep, counts), "masked": mask,
              "dropped": {"stderr": drop_stderr, "servers": sorted(drop)}}
    count = 0
    target = Path(path)
    tmp = target.with_name(target.name + ".part")
    try:
        # the header says how much was masked, which is known once every frame has been: the frames wait
        # in an unnamed temporary file meanwhile
        with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
            for line in _frame_lines(store, rows, kept, drop_stderr, counts):
                spool.write(line)
                count += 1
            if counts is not None:
                header["masked_values"] = counts.counts()
            spool.seek(0)
            with open_private(tmp, "wb") as raw, gzip.open(raw, "wt", encoding="utf-8", compresslevel=6) as fh:
                fh.write(json.dumps(header, ensure_ascii=False) + "\n")
                while chunk := spool.read(1 << 20):
                    fh.write(chunk)
                fh.write(json.dumps({"end": True, "frames": count}) + "\n")
        tmp.replace(target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise SessionFileError(f"cannot write {target}: {exc.strerror or exc}") from None
    return count


def _frame_lines(store: TrafficStore, rows: Iterable[int] | None, kept: set[str], drop_stderr: bool,
                 counts: Tally | None) -> Iterator[str]:
    """Each frame's line; masked (meta too) when `counts` is given, which learns what was."""
    for n in rows if rows is not None else range(len(store)):
        server = store.server_id(n)
        direction = store.direction(n)
        if server not in kept or (drop_stderr and direction == "err"):
            continue
        data = store.raw(n)
        meta = store.meta(n)
        if counts is not None:
            data = mask_frame(direction, data, counts)
            meta = mask_meta(meta, counts)
        yield frame_line(server, direction, data, store.wall(n), store.mono(n), store.malformed(n), meta)


def definition_of(spec: ServerSpec) -> dict[str, Any]:
    """What a session file keeps of a server's definition: enough to start it again, secrets masked."""
    definition: dict[str, Any] = {"name": spec.name, "transport": spec.transport or ("stdio" if spec.command else
                                                                                    "http")}
    if spec.command:
        definition["command"] = list(spec.command)
    if spec.url:
        definition["url"] = spec.url
    if spec.cwd:
        definition["cwd"] = spec.cwd
    if spec.env:
        definition["env"] = dict(spec.env)
    if spec.headers:
        definition["headers"] = dict(spec.headers)
    if spec.trace_context:
        definition["trace_context"] = True
    counts = Tally()
    masked = mask_definition(definition, counts)
    if counts:
        # so that a file written later can say what was (marks of this process: a keyed digest, no secret)
        masked["masked_marks"] = counts.marks()
    return masked


def spec_of(definition: dict[str, Any]) -> ServerSpec:
    """A server definition read from a session file as a ServerSpec (masked secrets stay masked)."""
    command = definition.get("command")
    env = definition.get("env")
    headers = definition.get("headers")
    return ServerSpec(name=str(definition.get("name") or "server"),
                      command=[str(c) for c in command] if isinstance(command, list) else [],
                      env={str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {},
                      cwd=definition.get("cwd") if isinstance(definition.get("cwd"), str) else None,
                      url=definition.get("url") if isinstance(definition.get("url"), str) else None,
                      transport=definition.get("transport") if definition.get("transport") in
                      ("stdio", "http", "sse") else None,
                      headers={str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else {},
                      trace_context=definition.get("trace_context") is True)
