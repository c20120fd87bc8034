"""Newline framing for the stdio transport, with a per-message size cap.

`LineFramer.feed(data)` returns complete frames. A line longer than the cap is
not buffered whole: its first bytes are kept for display and the rest is
skipped up to the next newline, then an `Oversize` frame reports it.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024
OVERSIZE_KEEP = 4096
SPLIT_MAX = 1024 * 1024  # complete lines up to this much in all are split in one step


@dataclass(frozen=True)
class Oversize:
    """A line that exceeded the cap; `head` holds its first bytes."""

    head: bytes
    size: int


class LineFramer:
    def __init__(self, max_size: int = DEFAULT_MAX_MESSAGE) -> None:
        if max_size < 1:
            raise ValueError("max_size must be positive")
        self.max_size = max_size
        self._buf = bytearray()
        self._scan = 0  # bytes of _buf already known to hold no newline
        self._skipping: tuple[bytes, int] | None = None  # (head, size so far)

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line held back."""
        return len(self._buf) + (self._skipping[1] if self._skipping else 0)

    def feed(self, data: bytes) -> list[bytes | Oversize]:
        out: list[bytes | Oversize] = []
        if self._skipping is not None:
            data = self._skip(data, out)
            if not data:
                return out
        buf = self._buf
        buf += data
        last = buf.rfind(b"\n", self._scan)
        if 0 <= last <= SPLIT_MAX and last <= self.max_size:
            # a read of many short lines (a flood's): split in one step rather than a find and a copy a line
            with memoryview(buf) as whole:
                lines = bytes(whole[:last]).split(b"\n")
            out.extend([_strip_cr(line) for line in lines] if buf.find(b"\r", 0, last) >= 0 else lines)
            del buf[:last + 1]
            self._scan = 0
        view = memoryview(buf)  # a frame is copied out of the buffer once (a slice of a bytearray is a copy too)
        start = 0
        while True:
            nl = buf.find(b"\n", max(start, self._scan))
            if nl < 0:
                break
            if nl - start > self.max_size:
                out.append(Oversize(bytes(view[start:start + OVERSIZE_KEEP]), nl - start))
            else:
                out.append(_strip_cr(bytes(view[start:nl])))
            start = nl + 1
            self._scan = 0
        view.release()  # before the buffer changes size
        if start:
            del buf[:start]
        self._scan = len(buf)
        if len(buf) > self.max_size:
            self._skipping = (bytes(buf[:OVERSIZE_KEEP]), len(buf))
            buf.clear()
            self._scan = 0
        return out

    def _skip(self, data: bytes, out: list[bytes | Oversize]) -> bytes:
        head, size = self._skipping  # type: ignore[misc]
        nl = data.find(b"\n")
        if nl < 0:
            self._skipping = (head, size + len(data))
            return b""
        out.append(Oversize(head, size + nl))
        self._skipping = None
        return data[nl + 1:]

    def eof(self) -> list[bytes | Oversize]:
        """The unterminated tail, if any, as a last frame."""
        out: list[bytes | Oversize] = []
        if self._skipping is not None:
            out.append(Oversize(*self._skipping))
            self._skipping = None
        elif self._buf:
            out.append(_strip_cr(bytes(self._buf)))
        self._buf.clear()
        self._scan = 0
        return out


def _strip_cr(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\r") else line
