"""Looking inside media a server sends before decoding it (no Qt).

`image_info` reads an image's dimensions from its header alone, so a
decompression bomb (a tiny file claiming 60000×60000 pixels) is refused before
any decoder allocates for it. `audio_info` reads a clip's format and duration.
`decode_base64` checks base64 strictly and says what is wrong.
"""

from __future__ import annotations

import base64
import binascii
import struct
from dataclasses import dataclass

MAX_IMAGE_PIXELS = 50_000_000  # about 7000×7000
MAX_MEDIA_BYTES = 64 * 1024 * 1024


class MediaError(ValueError):
    """Media that will not be shown, with the reason in words."""


@dataclass(frozen=True)
class ImageInfo:
    format: str
    width: int
    height: int

    @property
    def pixels(self) -> int:
        return self.width * self.height


@dataclass(frozen=True)
class AudioInfo:
    format: str
    duration: float | None = None  # seconds, when the header tells
    channels: int | None = None
    sample_rate: int | None = None


def decode_base64(data: object, what: str = "data") -> bytes:
    if not isinstance(data, str):
        raise MediaError(f"{what} is not a base64 string")
    if len(data) * 3 // 4 > MAX_MEDIA_BYTES:
        raise MediaError(f"{what} is larger than {MAX_MEDIA_BYTES // (1024 * 1024)} MiB")
    try:
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise MediaError(f"{what} is not valid base64 ({exc})") from None


def image_info(raw: bytes) -> ImageInfo:
    """Format and size from the header; raises MediaError when unknown or too big."""
    info = _sniff_image(raw)
    if info is None:
        raise MediaError(f"not an image format Spyglass knows (starts with {raw[:8].hex(' ') or 'nothing'})")
    if info.width <= 0 or info.height <= 0:
        raise MediaError(f"{info.format} header claims {info.width}×{info.height} pixels")
    if info.pixels > MAX_IMAGE_PIXELS:
        raise MediaError(f"{info.format} header claims {info.width}×{info.height} pixels "
                         f"({info.pixels / 1e6:.0f} megapixels); refusing to decode more than "
                         f"{MAX_IMAGE_PIXELS / 1e6:.0f} megapixels")
    return info


def _sniff_image(b: bytes) -> ImageInfo | None:
    if b.startswith(b"\x89PNG\r\n\x1a\n") and len(b) >= 24 and b[12:16] == b"IHDR":
        w, h = struct.unpack(">II", b[16:24])
        return ImageInfo("PNG", w, h)
    if b[:6] in (b"GIF87a", b"GIF89a") and len(b) >= 10:
        w, h = struct.unpack("<HH", b[6:10])
        return ImageInfo("GIF", w, h)
    if b.startswith(b"\xff\xd8"):
        return _jpeg(b)
    if b.startswith(b"RIFF") and b[8:12] == b"WEBP":
        return _webp(b)
    if b.startswith(b"BM") and len(b) >= 26:
        w, h = struct.unpack("<ii", b[18:26])
        return ImageInfo("BMP", w, abs(h))
    head = b[:512].lstrip()
    if head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in b[:2048]):
        return ImageInfo("SVG", 1, 1)  # vector: size is decided when rendering
    return None


def _jpeg(b: bytes) -> ImageInfo | None:
    i = 2
    while i + 9 < len(b):
        if b[i] != 0xFF:
            return None
        marker = b[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = struct.unpack(">H", b[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            h, w = struct.unpack(">HH", b[i + 5:i + 9])
            return ImageInfo("JPEG", w, h)
        i += 2 + length
    return None


def _webp(b: bytes) -> ImageInfo | None:
    kind = b[12:16]
    if kind == b"VP8 " and len(b) >= 30:
        w, h = struct.unpack("<HH", b[26:30])
        return ImageInfo("WebP", w & 0x3FFF, h & 0x3FFF)
    if kind == b"VP8L" and len(b) >= 25:
        bits = int.from_bytes(b[21:25], "little")
        return ImageInfo("WebP", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if kind == b"VP8X" and len(b) >= 30:
        w = int.from_bytes(b[24:27], "little") + 1
        h = int.from_bytes(b[27:30], "little") + 1
        return ImageInfo("WebP", w, h)
    return None


def audio_info(raw: bytes) -> AudioInfo:
    if raw.startswith(b"RIFF") and raw[8:12] == b"WAVE":
        return _wav(raw)
    if raw.startswith(b"OggS"):
        return AudioInfo("Ogg")
    if raw.startswith(b"fLaC"):
        return AudioInfo("FLAC")
    if raw.startswith(b"ID3") or (len(raw) > 1 and raw[0] == 0xFF and raw[1] & 0xE0 == 0xE0):
        return AudioInfo("MP3")
    if raw[4:8] == b"ftyp":
        return AudioInfo("MP4/M4A")
    raise MediaError(f"not an audio format Spyglass knows (starts with {raw[:8].hex(' ') or 'nothing'})")


def _wav(b: bytes) -> AudioInfo:
    i = 12
    channels = rate = byte_rate = None
    while i + 8 <= len(b):
        chunk, size = b[i:i + 4], struct.unpack("<I", b[i + 4:i + 8])[0]
        if chunk == b"fmt " and i + 24 <= len(b):
            _fmt, channels, rate, byte_rate = struct.unpack("<HHII", b[i + 8:i + 20])
        elif chunk == b"data":
            duration = size / byte_rate if byte_rate else None
            return AudioInfo("WAV", duration, channels, rate)
        i += 8 + size + (size & 1)
    return AudioInfo("WAV", None, channels, rate)


def hex_preview(raw: bytes, limit: int = 256) -> str:
    """A hex dump of the first bytes, 16 a line, with printable ASCII beside."""
    lines = []
    for off in range(0, min(len(raw), limit), 16):
        chunk = raw[off:off + 16]
        hexes = " ".join(f"{x:02x}" for x in chunk)
        text = "".join(chr(x) if 32 <= x < 127 else "." for x in chunk)
        lines.append(f"{off:08x}  {hexes:<47}  {text}")
    if len(raw) > limit:
        lines.append(f"… {len(raw) - limit} more bytes")
    return "\n".join(lines)
