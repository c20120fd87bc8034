"""Images and audio a server sends: looked at before any decoder sees them (strict base64, a known
format, the pixel count from the header), shown with Fit / 100% / zoom, played where QtMultimedia
works, and saved as sent.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from ... import media
from ..base import design
from ..base.fit import FlowLayout
from ..base.layout import small_button, text_label
from .text import TextView, human_size, save_bytes

log = logging.getLogger("spyglass.ui.results")

IMAGE_VIEW_MAX = 4096           # a decoded image is scaled down to fit this box before showing
# Rendering budgets: each image may be under media.MAX_IMAGE_PIXELS, but together they add up (36 PNGs of
# 7000x7000, 9.8 MB of message, took 7 GB and froze the window 40 s).
RESULT_PIXELS = 100_000_000     # full-size pixels one result's images may have decoded by themselves
KEPT_PIXELS = 64_000_000        # pixels of decoded copies the window keeps, all results together
KEPT_MAX = 2048                 # a decoded copy is kept at most this many pixels wide and high (Save: the original)
AT_ONCE_PIXELS = 1_000_000      # an image up to this is decoded at once; a bigger one off the loop, when first shown

def extension_for(mime: str | None, fallback: str) -> str:
    table = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp", "image/bmp": "bmp",
             "image/svg+xml": "svg", "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav",
             "audio/mpeg": "mp3", "audio/ogg": "ogg", "audio/flac": "flac", "audio/mp4": "m4a",
             "application/json": "json", "text/plain": "txt", "text/markdown": "md", "text/html": "html",
             "text/csv": "csv", "application/gzip": "gz", "application/pdf": "pdf"}
    return table.get((mime or "").split(";")[0].strip().lower(), fallback)


_kept = [0]  # pixels of the decoded copies alive
_decoder: list[Any] = []  # the one thread that decodes big images (one full-size copy in memory at a time)


class PixelBudget:
    """Full-size pixels the images of one result (a ContentView, a resource's contents) may decode by
    themselves; an image beyond it waits for the user's click."""

    def __init__(self, total: int = RESULT_PIXELS) -> None:
        self.left = total

    def take(self, pixels: int) -> bool:
        if pixels > self.left or _kept[0] >= KEPT_PIXELS:
            return False
        self.left -= pixels
        return True


def kept_pixels() -> int:
    """Pixels of the decoded image copies the window holds now."""
    return _kept[0]


def kept_size(width: int, height: int) -> QSize:
    """The size a decoded copy is kept at: the image's, within KEPT_MAX."""
    return QSize(width, height).scaled(QSize(min(width, KEPT_MAX), min(height, KEPT_MAX)), Qt.KeepAspectRatio)


def read_image(raw: bytes, size: QSize) -> QImage:
    """`raw` decoded straight to `size` (QImageReader.setScaledSize: the reader scales as it reads where the
    format can, JPEG; a PNG is read whole and scaled before it is handed back, the full copy dropped)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QImageReader

    buf = QBuffer()
    buf.setData(QByteArray(raw))
    buf.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buf)
    reader.setAllocationLimit(512)
    reader.setScaledSize(size)
    return reader.read()


class _Pending(QLabel):
    """Where a big image will be: its first paint (it is on screen) starts the decoding."""

    def __init__(self, text: str, parent: QWidget, shown: Any) -> None:
        super().__init__(text, parent)
        self.shown = shown

    def paintEvent(self, event: Any) -> None:
        super().paintEvent(event)
        if self.shown is not None:
            shown, self.shown = self.shown, None
            QTimer.singleShot(0, shown)


class ImageView(QWidget):
    """A checked image with fit / 100% / zoom and save, decoded within the rendering budgets; or the reason it
    was refused. A small image is decoded at once; a big one when it is first on screen, off the window's
    loop, and only while its result's budget lasts (else a sentence and "Show this image")."""

    def __init__(self, data: Any, mime: str | None, parent: QWidget | None = None, *, raw: bytes | None = None) -> None:
        super().__init__(parent)
        self.raw = raw
        self.mime = mime
        self.image: QImage | None = None
        self.error: str | None = None
        self.zoom = 0.0  # 0 = fit
        self.deferred: str | None = None  # why it is not decoded yet (None: decoded, or being decoded)
        self._kept = 0
        lay = self._lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        try:
            if self.raw is None:
                self.raw = media.decode_base64(data, "the image data")
            info = media.image_info(self.raw)
            if info.format == "SVG":
                raise media.MediaError("SVG images are not rendered (they can reference remote content)")
            self.info = info
            if info.pixels <= AT_ONCE_PIXELS:
                image = read_image(self.raw, kept_size(info.width, info.height))
                if image.isNull():
                    raise media.MediaError(f"the {info.format} data could not be decoded")
                self._keep(image)
        except media.MediaError as exc:
            self.error = str(exc)
        if self.error:
            self._show_error()
            return
        self.label = QLabel(self)
        self.label.setObjectName("imageLabel")
        self.label.setAlignment(Qt.AlignCenter)
        self.scroll = QScrollArea(self)
        self.scroll.setWidget(self.label)
        self.scroll.setWidgetResizable(False)
        self.scroll.setAlignment(Qt.AlignCenter)
        shown = min(info.height, KEPT_MAX)
        self.scroll.setMinimumHeight(min(360, max(104, shown + 8)))
        self.scroll.setMaximumHeight(420)
        lay.addWidget(self.scroll)
        self._save_row(lay)
        if self.image is not None:
            QTimer.singleShot(0, self._render)
            return
        self.pending = _Pending(f"Decoding the image ({info.width}×{info.height})…", self, self._shown)
        self.pending.setObjectName("imagePending")
        self.scroll.hide()
        lay.insertWidget(0, self.pending)
        self.show_anyway = small_button("Show this image", "Decode it all the same (up to "
                                        f"{media.MAX_IMAGE_PIXELS / 1e6:.0f} megapixels an image)",
                                        name="imageShowAnyway")
        self.show_anyway.clicked.connect(lambda: self._decode(forced=True))
        self.show_anyway.hide()
        lay.insertWidget(1, self.show_anyway)

    def _show_error(self) -> None:
        lay = self._lay
        msg = text_label(f"⚠ Image not shown: {self.error}", self, name="mediaError", role="error")
        lay.insertWidget(0, msg)
        if self.raw:
            lay.insertWidget(1, text_label(f"{human_size(len(self.raw))}; first bytes:", self, role="muted"))
            hexv = TextView(media.hex_preview(self.raw, 64), self, name="hexPreview", wrap=False, max_height=90)
            lay.insertWidget(2, hexv)
        if not hasattr(self, "scroll"):
            self._save_row(lay, saved_only=True)

    def _budget(self) -> PixelBudget:
        w = self.parentWidget()
        while w is not None:
            budget = getattr(w, "pixel_budget", None)
            if isinstance(budget, PixelBudget):
                return budget
            w = w.parentWidget()
        return PixelBudget()

    def _shown(self) -> None:
        import shiboken6

        if shiboken6.isValid(self) and self.image is None and self.error is None:
            self._decode(forced=False)

    def _decode(self, *, forced: bool) -> None:
        import asyncio

        if not forced and not self._budget().take(self.info.pixels):
            over = ("the window already holds as many decoded images as it keeps "
                    f"({KEPT_PIXELS / 1e6:.0f} megapixels)") if _kept[0] >= KEPT_PIXELS else \
                   f"this result's images add up to more than {RESULT_PIXELS / 1e6:.0f} megapixels"
            self.deferred = (f"Not decoded: {over}; this one is {self.info.width}×{self.info.height} "
                             f"({self.info.pixels / 1e6:.1f} megapixels).")
            self.pending.setText(self.deferred)
            self.show_anyway.show()
            return
        self.deferred = None
        self.show_anyway.hide()
        self.pending.setText(f"Decoding the image ({self.info.width}×{self.info.height})…")
        size = kept_size(self.info.width, self.info.height)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._decoded(read_image(self.raw or b"", size))
            return
        if not _decoder:
            from concurrent.futures import ThreadPoolExecutor

            _decoder.append(ThreadPoolExecutor(1, thread_name_prefix="spyglass-image"))
        # QImageReader.read lets go of the interpreter while it decodes: the window's loop keeps turning
        future = loop.run_in_executor(_decoder[0], read_image, self.raw or b"", size)
        future.add_done_callback(lambda f: self._decoded(f.result() if not f.exception() else QImage()))

    def _decoded(self, image: QImage) -> None:
        import shiboken6

        if not shiboken6.isValid(self):
            return  # the result was replaced while it decoded
        if image.isNull():
            self.error = f"the {self.info.format} data could not be decoded"
            self.pending.hide()
            self._show_error()
            return
        self._keep(image)
        self.pending.hide()
        self.scroll.show()
        self._render()

    def _keep(self, image: QImage) -> None:
        self.image = image
        self._kept = image.width() * image.height()
        _kept[0] += self._kept
        self.destroyed.connect(lambda _=None, n=self._kept: _release(n))

    def _save_row(self, lay: QVBoxLayout, saved_only: bool = False) -> None:
        """The image's size and its buttons (Fit, 100%, −, +, Save…), wrapping onto more lines where the result is
        narrow (a large text size on a laptop): they never make the result page wider than its viewport."""
        holder = QWidget(self)
        holder.setObjectName("imageButtons")
        row = FlowLayout(holder, spacing=design.space("xs"), columns=8, fill=False)
        if not saved_only:
            kept = kept_size(self.info.width, self.info.height)
            scaled = f" (shown at {kept.width()}×{kept.height()})" if kept.width() < self.info.width else ""
            self.caption = text_label(
                f"{self.info.format} · {self.info.width}×{self.info.height}{scaled} · "
                f"{human_size(len(self.raw or b''))}",
                self,
                name="imageInfo",
                role="muted",
                wrap=True,
            )
            lay.addWidget(self.caption)
            for text, z, name in (
                ("Fit", 0.0, "zoomFit"),
                ("100%", 1.0, "zoom100"),
                ("−", -1, "zoomOut"),
                ("+", -2, "zoomIn"),
            ):
                b = small_button(text, name=name)
                b.clicked.connect(lambda _=False, z=z: self.set_zoom(z))
                row.addWidget(b)
        if self.raw:
            save = small_button("Save…", "Save the data as sent", name="saveMediaButton")
            save.clicked.connect(lambda: save_bytes(self, self.raw or b"", "image." + extension_for(self.mime, "bin")))
            row.addWidget(save)
        lay.addWidget(holder)

    def set_zoom(self, z: float) -> None:
        current = self.zoom or self._fit_factor()
        if z == -1:
            z = max(0.05, current / 1.25)
        elif z == -2:
            z = min(16.0, current * 1.25)
        self.zoom = z
        self._render()

    def _fit_factor(self) -> float:
        if self.image is None:
            return 1.0
        w = max(50, self.scroll.viewport().width() - 4)
        h = max(50, self.scroll.maximumHeight() - 8)
        iw, ih = self.image.width(), self.image.height()
        grow = max(1.0, min(4.0, 96 / max(iw, ih)))  # icons and other tiny images: up to 4x, to about 96 px
        return min(grow, w / iw, h / ih)

    def _render(self) -> None:
        import shiboken6

        if self.image is None or not shiboken6.isValid(self) or not shiboken6.isValid(self.scroll):
            return  # a timer fired after the result view was replaced
        factor = self.zoom or self._fit_factor()
        size = QSize(max(1, int(self.image.width() * factor)), max(1, int(self.image.height() * factor)))
        size = size.boundedTo(QSize(IMAGE_VIEW_MAX * 4, IMAGE_VIEW_MAX * 4))
        pm = QPixmap.fromImage(self.image.scaled(size, Qt.KeepAspectRatio, Qt.SmoothTransformation))
        self.label.setPixmap(pm)
        self.label.resize(pm.size())

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        if self.image is not None and not self.zoom:
            self._render()


def _release(pixels: int) -> None:
    _kept[0] = max(0, _kept[0] - pixels)


def multimedia():
    """QtMultimedia when it loads on this machine (it needs system audio libraries), else None."""
    try:
        from PySide6 import QtMultimedia

        return QtMultimedia
    except Exception:  # ImportError, or a missing shared library
        return None


class AudioView(QWidget):
    def __init__(self, data: Any, mime: str | None, parent: QWidget | None = None, *, raw: bytes | None = None) -> None:
        super().__init__(parent)
        self.raw = raw
        self.mime = mime
        self.error: str | None = None
        self._player: Any = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        info = None
        try:
            if self.raw is None:
                self.raw = media.decode_base64(data, "the audio data")
            info = media.audio_info(self.raw)
        except media.MediaError as exc:
            self.error = str(exc)
        row = QHBoxLayout()
        if info is not None:
            bits = [info.format]
            if info.duration is not None:
                bits.append(f"{info.duration:.2f} s")
            if info.channels:
                bits.append("mono" if info.channels == 1 else f"{info.channels} channels")
            if info.sample_rate:
                bits.append(f"{info.sample_rate:,} Hz")
            bits.append(human_size(len(self.raw or b"")))
            row.addWidget(text_label(" · ".join(bits), self, name="audioInfo", wrap=False))
            self.info = info
        else:
            row.addWidget(text_label(f"⚠ Audio not recognised: {self.error}", self, name="mediaError", role="error"))
        row.addStretch(1)
        mm = multimedia() if info is not None else None
        if mm is not None:
            self.play = small_button("▶ Play", "Play the clip", name="playButton")
            self.play.clicked.connect(self._toggle_play)
            row.addWidget(self.play)
        elif info is not None:
            row.addWidget(
                text_label(
                    "(no playback: QtMultimedia is not available here)",
                    self,
                    role="muted",
                    name="noPlayback",
                    wrap=False,
                )
            )
        if self.raw:
            save = small_button("Save…", "Save the clip as sent", name="saveMediaButton")
            save.clicked.connect(lambda: save_bytes(self, self.raw or b"", "audio." + extension_for(self.mime, "bin")))
            row.addWidget(save)
        lay.addLayout(row)

    def _toggle_play(self) -> None:
        mm = multimedia()
        if mm is None:
            return
        from PySide6.QtCore import QBuffer, QByteArray, QIODevice

        if self._player is None:
            self._buffer = QBuffer(self)
            self._buffer.setData(QByteArray(self.raw or b""))
            self._buffer.open(QIODevice.ReadOnly)
            self._output = mm.QAudioOutput(self)
            self._player = mm.QMediaPlayer(self)
            self._player.setAudioOutput(self._output)
            self._player.setSourceDevice(self._buffer)
        if self._player.playbackState() == mm.QMediaPlayer.PlayingState:
            self._player.pause()
            self.play.setText("▶ Play")
        else:
            self._player.play()
            self.play.setText("⏸ Pause")
