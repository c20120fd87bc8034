"""A recorded session as a HAR 1.2 file (no Qt): one entry per HTTP exchange of its HTTP servers.

The traffic store keeps an HTTP exchange as a summary (method, URL, status, headers with secrets
masked, the stream it opened) and the JSON-RPC messages as frames of their own; this module puts them
back together. A POST carried exactly one message we sent: the request body is that frame. Which one is
recorded on the frame itself (`meta["stream"]`, since sessions recorded after that was added); for
older sessions it is known from the answers on the POST's stream (they name the request's id), else
from the order the client sends in, which the stream numbers (`POST#n`) keep. The response body is the JSON body as
received, or the SSE stream rebuilt from its events (ids, event names and data as received; comments,
keep-alives and priming events are not recorded, so its bytes may differ from the wire's).

What both exports share is here too: which servers a session had (`server_infos`), and `ExportError`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .. import __version__
from .. import errors as E
from ..portable import mask_frame
from ..private import open_private
from ..secrets import Tally, mask_mapping, mask_url
from ..traffic.store import TrafficStore
from .surface import definitions

HTTP_VERSION = "HTTP/1.1"  # httpx speaks HTTP/1.1 to MCP servers unless HTTP/2 is configured, which it is not
UNKNOWN_MIME = "x-unknown"
_NUMBERED = re.compile(r"^(POST|GET)#(\d+)")
_AUTH_RETRY = (401, 403)


class ExportError(E.UsageError):
    """A session cannot be exported as asked: a server it does not have, nothing of the kind to export, a
    file that cannot be written. The message says which."""

    kind = "export"


class NothingToExport(ExportError):
    """The servers asked for have nothing this format holds (HAR: they are all stdio servers)."""

    kind = "nothing_to_export"


@dataclass(frozen=True)
class ServerInfo:
    """A server of a recorded session: its definition as the session file kept it (`server:<id>` in the
    session's meta, secrets masked), else what its frames show."""

    server_id: str
    name: str
    transport: str  # stdio | http | sse
    url: str | None = None
    command: tuple[str, ...] = ()
    definition: Mapping[str, Any] = field(default_factory=dict)

    def address(self) -> tuple[str, int] | None:
        """The host and port of an HTTP server's URL (the scheme's port when it names none)."""
        try:
            parts = urlsplit(self.url or "")
            return (parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)) if parts.hostname \
                else None
        except ValueError:
            return None


def server_infos(store: TrafficStore, servers: Iterable[str] | None = None) -> dict[str, ServerInfo]:
    """The servers of `store` (all of them, or those of `servers`, in the session's order), those the
    session file defines without a frame of theirs included. Raises ExportError naming a server the
    session does not have."""
    given = definitions(store)
    known = store.servers()
    known += [sid for sid in given if sid not in known]
    wanted = known if servers is None else list(dict.fromkeys(servers))
    missing = [s for s in wanted if s not in known]
    if missing:
        raise ExportError(f"this session has no server {', '.join(map(repr, missing))} "
                          f"(it has: {', '.join(map(repr, known)) or 'none'})")
    seen: dict[str, tuple[bool, bool, str | None]] = {}  # server -> (HTTP exchanges, an SSE GET, first URL)
    for n in range(len(store)):
        if store.kind(n) != "http":
            continue
        server = store.server_id(n)
        http, sse, url = seen.get(server, (False, False, None))
        meta = store.meta(n) or {}
        if url is None and isinstance(meta.get("url"), str):
            url = meta["url"]
        seen[server] = (True, sse or meta.get("stream") == "GET#sse", url)
    out: dict[str, ServerInfo] = {}
    for server in [s for s in known if s in wanted]:
        definition = given.get(server, {})
        http, sse, url = seen.get(server, (False, False, None))
        transport = definition.get("transport")
        if transport not in ("stdio", "http", "sse"):
            transport = ("sse" if sse else "http") if http else "stdio"
        given_url = definition.get("url")
        command = definition.get("command")
        name = definition.get("name")
        out[server] = ServerInfo(
            server, name if isinstance(name, str) and name else server, transport,
            given_url if isinstance(given_url, str) else url,
            tuple(str(c) for c in command) if isinstance(command, list) else (), definition)
    return out


def iso_time(wall: float) -> str:
    """ISO 8601 with milliseconds and the UTC offset, as HAR's startedDateTime wants it."""
    try:
        return dt.datetime.fromtimestamp(wall, dt.UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return "1970-01-01T00:00:00.000+00:00"


def as_dict(value: Any) -> dict[Any, Any]:
    """`value` if it is a JSON object, else an empty one: what a damaged frame gives is read as nothing."""
    return value if isinstance(value, dict) else {}


def json_key(value: Any) -> str | int | None:
    """A JSON-RPC id or progress token usable as a key (a string or an integer), else None."""
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def header(headers: Any, name: str) -> str | None:
    """A header's value from a recorded header mapping, whatever the case of its name."""
    if not isinstance(headers, dict):
        return None
    low = name.lower()
    for key, value in headers.items():
        if isinstance(key, str) and key.lower() == low:
            return str(value)
    return None


# ---------------------------------------------------------------------------------------------- HAR

def export_har(store: TrafficStore, path: str | Path, *, servers: Iterable[str] | None = None,
               known: Iterable[str] = ()) -> int:
    """Write the HTTP exchanges of the session's HTTP servers (all, or `servers`) to `path` as HAR 1.2;
    returns the number of entries. stdio servers are skipped (the log's comment names them); when every
    server asked for is a stdio server, NothingToExport says so and no file is written."""
    infos = server_infos(store, servers)
    http = [i for i in infos.values() if i.transport != "stdio"]
    stdio = [i for i in infos.values() if i.transport == "stdio"]
    if not http:
        names = ", ".join(repr(i.name) for i in stdio) or "none"
        raise NothingToExport(f"no HTTP server to export as HAR: this session's servers ({names}) speak stdio, "
                              "and HAR holds HTTP exchanges only (export OpenTelemetry traces instead)")
    records: dict[str, list[int]] = {i.server_id: [] for i in http}
    for n in range(len(store)):
        rows = records.get(store.server_id(n))
        if rows is not None:
            rows.append(n)
    entries: list[tuple[float, int, dict[str, Any]]] = []
    masked = Tally()
    masked.learn(known)  # the servers' own secrets, wherever a body repeats them
    for info in http:
        masked.add_marks(info.definition.get("masked_marks"))  # what was masked when the server was kept
        entries.extend(_Exchanges(store, info, records[info.server_id], masked).entries())
    entries.sort(key=lambda e: (e[0], e[1]))
    # HAR allows fields of one's own when their names start with "_": what was masked, as a session's header
    log: dict[str, Any] = {"version": "1.2", "creator": {"name": "Spyglass", "version": __version__},
                           "_masked": True, "_masked_values": masked.counts(), "entries": [e[2] for e in entries]}
    if stdio:
        log["comment"] = "not included (stdio servers have no HTTP exchanges): " + ", ".join(i.name for i in stdio)
    try:
        with open_private(path, "w", encoding="utf-8", errors="replace") as fh:  # a lone surrogate must not stop it
            json.dump({"log": log}, fh, ensure_ascii=False, indent=1)
            fh.write("\n")
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
    return len(entries)


@dataclass
class _Stream:
    key: tuple[int, str]  # (connection, stream name): stream numbers start again on each connection
    number: int | None
    exchanges: list[int] = field(default_factory=list)
    frames: list[int] = field(default_factory=list)
    answers: list[Any] = field(default_factory=list)  # ids of our requests its frames answered


class _Exchanges:
    """The exchanges of one HTTP server, with the frames that were their bodies."""

    def __init__(self, store: TrafficStore, info: ServerInfo, rows: list[int], masked: Tally) -> None:
        self.store = store
        self.info = info
        self.masked = masked
        self.outs: list[int] = []
        self.streams: dict[tuple[int, str], _Stream] = {}
        self.order: list[int] = []  # exchange records, in order
        self.stream_of: dict[int, _Stream] = {}
        self.numbers: dict[int, set[int]] = {}  # connection -> stream numbers that had an exchange
        epoch = 0
        latest: dict[str, _Stream] = {}
        carried: dict[str, int] = {}  # POST stream name -> the out frame that says it went on it
        self.exact: dict[tuple[int, str], int] = {}  # POST stream -> its body, as the frames say
        for n in rows:
            direction = store.direction(n)
            if direction == "out":
                self.outs.append(n)
                sent_meta = store.meta(n)
                if isinstance(sent_meta, dict) and isinstance(sent_meta.get("stream"), str):
                    carried[sent_meta["stream"]] = n
            elif direction == "http":
                meta = store.meta(n)
                if not isinstance(meta, dict):
                    continue
                name = str(meta.get("stream") or "")
                m = _NUMBERED.match(name)
                number = int(m.group(2)) if m else None
                old = latest.get(name)
                again = old is not None and old.key[0] == epoch
                retry = again and old is not None and _status(store.meta(old.exchanges[-1])) in _AUTH_RETRY
                if again and number is not None and not retry:
                    epoch += 1  # a stream number used again: the client connected again
                stream = old if retry else self.streams.get((epoch, name))
                if stream is None:
                    stream = self.streams[(epoch, name)] = _Stream((epoch, name), number)
                    if name in carried:
                        self.exact[stream.key] = carried.pop(name)
                latest[name] = stream
                stream.exchanges.append(n)
                self.order.append(n)
                self.stream_of[n] = stream
                if number is not None:
                    self.numbers.setdefault(epoch, set()).add(number)
            elif direction == "in":
                meta = store.meta(n) or {}
                target = latest.get(str(meta.get("stream") or ""))
                if target is not None:
                    target.frames.append(n)
                    rid = json_key(meta.get("request"))
                    if rid is not None:
                        target.answers.append(rid)
        self.bodies = self._pair_bodies()

    def _pair_bodies(self) -> dict[tuple[int, str], int]:
        """Which out frame each POST carried: anchored by the ids its answers name, else by send order."""
        store = self.store
        posts = sorted((s for s in self.streams.values() if s.key[1].startswith("POST")),
                       key=lambda s: (s.key[0], s.number if s.number is not None else 1 << 62, s.exchanges[0]))
        by_id: dict[Any, list[int]] = {}
        for n in self.outs:
            rid = store.request_id(n)
            if rid is not None and store.kind(n) == "request":
                by_id.setdefault(rid, []).append(n)
        taken: set[int] = set(self.exact.values())
        anchors: dict[tuple[int, str], int] = dict(self.exact)  # recorded with its stream: known, not guessed
        for stream in posts:
            if stream.key in anchors:
                continue
            for rid in stream.answers:
                candidates = [n for n in by_id.get(rid, ()) if n < stream.exchanges[0] and n not in taken]
                if candidates:
                    anchors[stream.key] = candidates[-1]
                    taken.add(candidates[-1])
                    break
        free = [n for n in self.outs if n not in taken]
        bodies: dict[tuple[int, str], int] = {}
        j = 0
        previous: tuple[int, int] = (-1, 0)  # (connection, stream number) of the POST before
        for stream in posts:
            epoch, number = stream.key[0], stream.number
            if stream.key in anchors:
                bodies[stream.key] = anchors[stream.key]
                while j < len(free) and free[j] < anchors[stream.key]:
                    j += 1
            else:
                if number is not None:
                    # numbers with no exchange at all: POSTs that failed before an answer, each one message
                    low = previous[1] if previous[0] == epoch else 0
                    gaps = sum(1 for k in range(low + 1, number) if k not in self.numbers.get(epoch, ()))
                    j += gaps
                if j < len(free) and free[j] < stream.exchanges[0]:
                    bodies[stream.key] = free[j]
                    j += 1
            if number is not None:
                previous = (epoch, number)
        return bodies

    def entries(self) -> list[tuple[float, int, dict[str, Any]]]:
        out = []
        for n in self.order:
            try:
                out.append(self._entry(n))
            except Exception:  # a damaged record must not cost the rest of the file  # pragma: no cover
                continue
        return out

    def _entry(self, n: int) -> tuple[float, int, dict[str, Any]]:
        store = self.store
        meta = store.meta(n) or {}
        stream = self.stream_of[n]
        method = str(meta.get("method") or "GET")
        url = mask_url(str(meta.get("url") or self.info.url or ""), self.masked)
        req_headers = mask_mapping({str(k): str(v) for k, v in as_dict(meta.get("request_headers")).items()},
                                   self.masked)
        resp_headers = mask_mapping({str(k): str(v) for k, v in as_dict(meta.get("response_headers")).items()},
                                    self.masked)
        at = stream.exchanges.index(n)
        body_n = self.bodies.get(stream.key) if method == "POST" else None
        if at > 0:
            started = store.wall(stream.exchanges[at - 1])  # sent again once the authorization flow was done
        elif body_n is not None:
            started = store.wall(body_n)
        else:
            started = store.wall(n)
        following = stream.exchanges[at + 1] if at + 1 < len(stream.exchanges) else None
        frames = [f for f in stream.frames if f > n and (following is None or f < following)]
        answered = store.wall(n)
        ended = max([answered, *(store.wall(f) for f in frames)])
        request: dict[str, Any] = {
            "method": method, "url": url, "httpVersion": HTTP_VERSION, "cookies": [],
            "headers": _headers(req_headers), "queryString": _query(url), "headersSize": -1, "bodySize": 0}
        if body_n is not None:
            body = self._text(body_n)
            request["bodySize"] = store.size(body_n)
            request["postData"] = {"mimeType": header(req_headers, "content-type") or "application/json",
                                   "text": body}
        mime = header(resp_headers, "content-type") or ""
        content: dict[str, Any] = {"size": 0, "mimeType": mime or UNKNOWN_MIME}
        body_size = -1
        if frames:
            if mime.split(";")[0].strip().lower() == "text/event-stream":
                text = "".join(self._event(f) for f in frames)
                content["comment"] = "rebuilt from the recorded events (comments and keep-alives are not recorded)"
            else:
                text = "\n".join(self._text(f) for f in frames)
                body_size = sum(store.size(f) for f in frames)
            content["text"] = text
            content["size"] = len(text.encode("utf-8"))
        elif _status(meta) in _AUTH_RETRY or (_status(meta) or 0) >= 400:
            content["comment"] = "the body was read by the client, not recorded"
        elif _status(meta) in (202, 204):
            body_size = 0
        status = _status(meta)
        response: dict[str, Any] = {
            "status": status if status is not None else 0, "statusText": str(meta.get("reason") or ""),
            "httpVersion": HTTP_VERSION, "cookies": [], "headers": _headers(resp_headers), "content": content,
            "redirectURL": header(resp_headers, "location") or "", "headersSize": -1, "bodySize": body_size}
        wait = max(0.0, (answered - started) * 1000)
        receive = max(0.0, (ended - answered) * 1000)
        entry = {"startedDateTime": iso_time(started), "time": round(wait + receive, 3), "request": request,
                 "response": response, "cache": {},
                 "timings": {"blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": round(wait, 3),
                             "receive": round(receive, 3), "ssl": -1},
                 "_server": self.info.server_id, "_stream": stream.key[1]}
        return started, n, entry

    def _text(self, n: int) -> str:
        """A frame's text with its secrets masked as in a session file (`portable.mask_frame`)."""
        raw = self.store.raw(n)
        masked = mask_frame(self.store.direction(n), raw, self.masked)
        return self.store.text(n) if masked is raw else masked.decode("utf-8", errors="replace")

    def _event(self, n: int) -> str:
        meta = self.store.meta(n) or {}
        lines = []
        if meta.get("event_id"):
            lines.append(f"id: {meta['event_id']}")
        if meta.get("event"):
            lines.append(f"event: {meta['event']}")
        lines.extend(f"data: {line}" for line in self._text(n).split("\n"))
        return "\n".join(lines) + "\n\n"


def _status(meta: Any) -> int | None:
    status = meta.get("status") if isinstance(meta, dict) else None
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _headers(headers: Mapping[Any, Any]) -> list[dict[str, str]]:
    return [{"name": str(k), "value": str(v)} for k, v in headers.items()]


def _query(url: str) -> list[dict[str, str]]:
    try:
        return [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)]
    except ValueError:
        return []
