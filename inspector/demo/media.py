"""Tiny media builders (PNG, WAV, SVG) made with the standard library only."""

from __future__ import annotations

import array
import base64
import io
import math
import struct
import sys
import wave
import zlib

RGB = tuple[int, int, int]

PALETTES: dict[str, tuple[RGB, RGB]] = {
    "blue": ((37, 99, 235), (96, 165, 250)),
    "green": ((22, 163, 74), (74, 222, 128)),
    "orange": ((234, 88, 12), (251, 146, 60)),
    "purple": ((124, 58, 237), (167, 139, 250)),
    "red": ((220, 38, 38), (248, 113, 113)),
}


class Canvas:
    """A fixed-size RGB pixel buffer that can be written out as a PNG."""

    def __init__(self, width: int, height: int, background: RGB) -> None:
        self.width, self.height = width, height
        self.pixels = bytearray(bytes(background) * (width * height))

    def fill(self, x0: int, y0: int, x1: int, y1: int, colour: RGB) -> None:
        """Fill the rectangle [x0, x1) x [y0, y1), clipped to the canvas."""
        x0, x1 = max(0, x0), min(self.width, x1)
        row = bytes(colour) * max(0, x1 - x0)
        for y in range(max(0, y0), min(self.height, y1)):
            start = (y * self.width + x0) * 3
            self.pixels[start:start + len(row)] = row

    def dot(self, x: int, y: int, colour: RGB) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            start = (y * self.width + x) * 3
            self.pixels[start:start + 3] = bytes(colour)

    def png(self) -> bytes:
        stride = self.width * 3
        raw = b"".join(b"\x00" + bytes(self.pixels[y * stride:(y + 1) * stride])
                       for y in range(self.height))
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
                + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b""))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def bar_chart_png(values: list[float], colour: str = "blue", width: int = 160, height: int = 100) -> bytes:
    """A small bar chart: alternating shades of ``colour``, grid lines, zero baseline."""
    dark, light = PALETTES.get(colour, PALETTES["blue"])
    canvas = Canvas(width, height, (250, 250, 252))
    left, right, top, bottom = 8, width - 8, 8, height - 8
    low, high = min(0.0, *values), max(0.0, *values)
    span = (high - low) or 1.0

    def y_of(v: float) -> int:
        return bottom - round((v - low) / span * (bottom - top))

    for quarter in range(5):  # light horizontal grid
        y = top + quarter * (bottom - top) // 4
        canvas.fill(left, y, right, y + 1, (226, 232, 240))
    slot = (right - left) / len(values)
    bar = max(1, int(slot * 0.7))
    zero = y_of(0.0)
    for i, value in enumerate(values):
        x = left + int(i * slot + (slot - bar) / 2)
        y = y_of(value)
        canvas.fill(x, min(y, zero), x + bar, max(y, zero) + 1, dark if i % 2 == 0 else light)
    canvas.fill(left, zero, right, zero + 1, (71, 85, 105))  # baseline at zero
    canvas.fill(left - 1, top, left, bottom + 1, (71, 85, 105))  # y axis
    return canvas.png()


def logo_png(size: int = 48) -> bytes:
    """The demo's logo: a spyglass lens on a soft blue tile."""
    canvas = Canvas(size, size, (224, 236, 255))
    c, outer, inner = size * 0.42, size * 0.3, size * 0.21
    for y in range(size):
        for x in range(size):
            d = math.hypot(x - c, y - c)
            if inner <= d <= outer:
                canvas.dot(x, y, (30, 64, 175))
            elif d < inner:
                canvas.dot(x, y, (191, 219, 254) if x + y < 2 * c - 2 else (147, 197, 253))
    handle = int(size * 0.08)
    for t in range(int(size * 0.2), int(size * 0.55)):  # diagonal handle
        p = int(c + outer * 0.7 + t * 0.55)
        canvas.fill(p - handle // 2, p - handle // 2, p + handle, p + handle, (30, 41, 59))
    return canvas.png()


def sine_wav(frequency: float, duration_ms: int, rate: int = 22050) -> bytes:
    """A mono 16-bit WAV sine tone with short fades to avoid clicks."""
    count = rate * duration_ms // 1000
    fade = max(1, min(count // 4, rate // 100))
    step = 2 * math.pi * frequency / rate
    samples = array.array("h", (
        int(12000 * min(1.0, i / fade, (count - 1 - i) / fade) * math.sin(step * i))
        for i in range(count)
    ))
    if sys.byteorder == "big":
        samples.byteswap()
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())
    return buffer.getvalue()


ICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">'
    '<circle cx="10" cy="10" r="6.5" fill="#bfdbfe" stroke="#1e40af" stroke-width="2.5"/>'
    '<path d="M15 15l6 6" stroke="#1e293b" stroke-width="3" stroke-linecap="round"/>'
    "</svg>"
)


def svg_data_uri(svg: str = ICON_SVG) -> str:
    """``svg`` as a base64 ``data:`` URI, usable as an MCP icon ``src``."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode("ascii")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
