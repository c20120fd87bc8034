import base64
import struct
import sys
import zlib

import pytest
from support import HOSTILE

from inspector.media import MediaError, audio_info, decode_base64, hex_preview, image_info

sys.path.insert(0, str(HOSTILE.parent))


def png(w: int, h: int) -> bytes:
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IEND", b"")


def test_png_dimensions_from_the_header():
    assert (image_info(png(160, 100)).width, image_info(png(160, 100)).height) == (160, 100)


def test_decompression_bomb_is_refused_before_decoding():
    from server import OddContent  # the hostile server's 60000x60000 PNG
    raw = base64.b64decode(OddContent.bomb_png())
    with pytest.raises(MediaError, match="60000×60000"):
        image_info(raw)


def test_gif_jpeg_webp_headers():
    assert image_info(b"GIF89a" + struct.pack("<HH", 3, 4) + b"\0" * 10).format == "GIF"
    jpeg = b"\xff\xd8\xff\xe0" + struct.pack(">H", 16) + b"\0" * 14 + b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 20, 30)
    info = image_info(jpeg + b"\0" * 20)
    assert (info.format, info.width, info.height) == ("JPEG", 30, 20)
    vp8x = b"RIFF" + b"\0" * 4 + b"WEBPVP8X" + b"\0" * 8 + (99).to_bytes(3, "little") + (49).to_bytes(3, "little")
    assert (image_info(vp8x).width, image_info(vp8x).height) == (100, 50)


def test_unknown_format_and_bad_base64_say_why():
    with pytest.raises(MediaError, match="not an image format"):
        image_info(b"hello world")
    with pytest.raises(MediaError, match="not valid base64"):
        decode_base64("not base64 at all!!")


def test_wav_duration():
    import io
    import wave
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(8000)
        w.writeframes(b"\0\0" * 4000)
    info = audio_info(buf.getvalue())
    assert info.format == "WAV" and info.duration == pytest.approx(0.5) and info.sample_rate == 8000


def test_hex_preview():
    assert hex_preview(b"AB\x00", 16).startswith("00000000  41 42 00")
