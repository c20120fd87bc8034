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
from ..base.layout import small_button, text_label
from .text import TextView, human_size, save_bytes

log = logging.getLogger("spyglass.ui.results")

IMAGE_VIEW_MAX = 4096           # a decoded image is scaled down to fit this box before showing


def extension_for(mime: str | None, fallback: str) -> str:
    table = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp", "image/bmp": "bmp",
             "image/svg+xml": "svg", "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav",
             "audio/mpeg": "mp3", "audio/ogg": "ogg", "audio/flac": "flac", "audio/mp4": "m4a",
             "application/json": "json", "text/plain": "txt", "text/markdown": "md", "text/html": "html",
             "text/csv": "csv", "application/gzip": "gz", "application/pdf": "pdf"}
    return table.get((mime or "").split(";")[0].strip().lower(), fallback)


class ImageView(QWidget):
    """A checked, decoded image with fit / 100% / zoom and save; or the reason it was refused."""

    def __init__(self, data: Any, mime: str | None, parent: QWidget | None = None, *, raw: bytes | None = None) -> None:
        super().__init__(parent)
        self.raw = raw
        self.mime = mime
        self.image: QImage | None = None
        self.error: str | None = None
        self.zoom = 0.0  # 0 = fit
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        try:
            if self.raw is None:
                self.raw = media.decode_base64(data, "the image data")
            info = media.image_info(self.raw)
            if info.format == "SVG":
                raise media.MediaError("SVG images are not rendered (they can reference remote content)")
            image = QImage.fromData(self.raw)
            if image.isNull():
                raise media.MediaError(f"the {info.format} data could not be decoded")
            self.info = info
            self.image = image
        except media.MediaError as exc:
            self.error = str(exc)
        if self.error:
            msg = text_label(f"⚠ Image not shown: {self.error}", self, name="mediaError", role="error")
            lay.addWidget(msg)
            if self.raw:
                lay.addWidget(text_label(f"{human_size(len(self.raw))}; first bytes:", self, role="muted"))
                hexv = TextView(media.hex_preview(self.raw, 64), self, name="hexPreview", wrap=False, max_height=90)
                lay.addWidget(hexv)
            self._save_row(lay, saved_only=True)
            return
        self.label = QLabel(self)
        self.label.setObjectName("imageLabel")
        self.label.setAlignment(Qt.AlignCenter)
        self.scroll = QScrollArea(self)
        self.scroll.setWidget(self.label)
        self.scroll.setWidgetResizable(False)
        self.scroll.setAlignment(Qt.AlignCenter)
        self.scroll.setMinimumHeight(min(360, max(104, self.image.height() + 8)))
        self.scroll.setMaximumHeight(420)
        lay.addWidget(self.scroll)
        self._save_row(lay)
        QTimer.singleShot(0, self._render)

    def _save_row(self, lay: QVBoxLayout, saved_only: bool = False) -> None:
        row = QHBoxLayout()
        if not saved_only:
            self.caption = text_label(
                f"{self.info.format} · {self.info.width}×{self.info.height} · {human_size(len(self.raw or b''))}",
                self,
                name="imageInfo",
                role="muted",
                wrap=False,
            )
            row.addWidget(self.caption)
            for text, z, name in (
                ("Fit", 0.0, "zoomFit"),
                ("100%", 1.0, "zoom100"),
                ("−", -1, "zoomOut"),
                ("+", -2, "zoomIn"),
            ):
                b = small_button(text, name=name)
                b.clicked.connect(lambda _=False, z=z: self.set_zoom(z))
                row.addWidget(b)
        row.addStretch(1)
        if self.raw:
            save = small_button("Save…", "Save the data as sent", name="saveMediaButton")
            save.clicked.connect(lambda: save_bytes(self, self.raw or b"", "image." + extension_for(self.mime, "bin")))
            row.addWidget(save)
        lay.addLayout(row)

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
