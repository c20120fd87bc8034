"""What passes through the HTTP tap, read on the side while it goes on unchanged: a server-sent event stream's
events (`SseRelay`, by the HTML standard's rules, holding back only an HTTP+SSE `endpoint` event that is to be
rewritten), and a body's bytes as the server meant them (`Decoded`: gzip and deflate undone for the record)."""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..transport.http_common import MAX_BODY

HOLD_MAX = 64 * 1024  # an `endpoint` event longer than this is passed on as it is, not rewritten
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(slots=True)
class SseEvent:
    data: bytes
    event: str
    id: str | None
    rewritten: str | None = None  # an endpoint event: the endpoint the host was given instead
    cut: bool = False  # the stream ended before the event's blank line (a reader drops it)


class SseRelay:
    """An event stream's bytes passed on as they come, read on the side by the HTML standard's rules (lines
    end in CRLF, LF or CR; `data` lines are joined with LF; the last event id carries over; events without
    data are not messages). `rewrite(endpoint)` names the endpoint the host is given for an `endpoint` event
    (None: as it is); only that event's bytes are held back until it is whole, from its `event:` line on."""

    def __init__(self, rewrite: Callable[[str], str | None] | None = None) -> None:
        self.rewrite = rewrite
        self.events: list[SseEvent] = []
        self.last_id = ""
        self._partial = bytearray()
        self._after_cr = False
        self._started = False
        self._data: list[bytes] = []
        self._size = 0
        self._type = ""
        self._held: bytearray | None = None
        self._hold_now = False

    def feed(self, chunk: bytes) -> bytes:
        """Reads `chunk`; returns the bytes to pass on now (all of them, but an endpoint event being held)."""
        out = bytearray()
        start = pos = 0
        if not self._started and chunk:
            self._started = True
            if chunk.startswith(b"\xef\xbb\xbf"):
                pos = start = 3
                out += chunk[:3]
        if self._after_cr and chunk.startswith(b"\n", pos):
            pos += 1  # the LF of a CRLF cut between two chunks
        self._after_cr = False
        for match in _LINE_END.finditer(chunk, pos):
            line = bytes(self._partial) + chunk[pos:match.start()] if self._partial else chunk[pos:match.start()]
            self._partial.clear()
            pos = match.end()
            self._after_cr = match.group() == b"\r" and pos == len(chunk)
            event = self._line(line)
            if self._hold_now:
                self._hold_now = False
                out += chunk[start:pos]
                start = pos
                self._held = bytearray()
            if self._held is not None:
                self._held += chunk[start:pos]
                start = pos
                if not line or len(self._held) > HOLD_MAX:  # the event ended (or will not be rewritten)
                    out += self._release(event)
            if event is not None and event.data:
                self.events.append(event)
        self._partial += chunk[pos:]
        if self._held is not None:
            self._held += chunk[start:]
        else:
            out += chunk[start:]
        return bytes(out)

    def end(self) -> bytes:
        """The stream ended: what was held back, and an event cut short kept (marked)."""
        held, self._held = bytes(self._held or b""), None
        if self._partial:
            self._line(bytes(self._partial))
            self._partial.clear()
        if self._data:
            data = b"\n".join(self._data)
            if data:
                self.events.append(SseEvent(data, self._type or "message", self.last_id or None, cut=True))
        return held

    def _line(self, line: bytes) -> SseEvent | None:
        if not line:
            event = None
            if self._data:
                event = SseEvent(b"\n".join(self._data), self._type or "message", self.last_id or None)
            self._data, self._size, self._type = [], 0, ""
            return event
        if line.startswith(b":"):
            return None
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            if self._size <= MAX_BODY:  # a runaway event: what came first is kept
                self._data.append(value)
                self._size += len(value)
        elif name == b"event":
            self._type = value.decode("utf-8", "replace")
            if self._type == "endpoint" and self.rewrite is not None and self._held is None and not self._data:
                self._hold_now = True
        elif name == b"id" and b"\0" not in value:
            self.last_id = value.decode("utf-8", "replace")
        return None

    def _release(self, event: SseEvent | None) -> bytes:
        held, self._held = bytes(self._held or b""), None
        if event is None or event.event != "endpoint" or self.rewrite is None or event.data.count(b"\n"):
            return held
        new = self.rewrite(event.data.decode("utf-8", "replace").strip())
        if new is None:
            return held
        parts = re.split(rb"(\r\n|\r|\n)", held)
        for i in range(0, len(parts), 2):
            if parts[i].startswith(b"data:"):
                parts[i] = (b"data: " if parts[i].startswith(b"data: ") else b"data:") + new.encode()
        event.rewritten = new
        return b"".join(parts)


class Decoded:
    """A body's bytes as the server meant them, for the record (the host is given them encoded, as sent)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self.failed: str | None = None
        self._z: Any = None
        if encoding in ("gzip", "x-gzip", "deflate"):
            self._z = zlib.decompressobj(zlib.MAX_WBITS | 32 if encoding != "deflate" else zlib.MAX_WBITS)
        elif encoding not in ("", "identity"):
            self.failed = f"the body is {encoding}-encoded, which the tap does not decode: not recorded"

    def __call__(self, chunk: bytes) -> bytes:
        if self.failed:
            return b""
        if self._z is None:
            return chunk
        try:
            return bytes(self._z.decompress(chunk))
        except zlib.error as exc:
            self.failed = f"the {self.encoding} body could not be decoded ({exc}): recorded no further"
            return b""
