"""Renderers for MCP content: one widget per content block, and resource contents.

Public API (also used by the resources and prompts panes):

- `ContentView(QWidget)`: `set_blocks(blocks, *, reader=None)` shows each content block in its own
  widget named `result:<kind>` (`text`, `image`, `audio`, `resource`, `resource_link`, `unknown`), in
  order. `reader(uri)` is awaited by a resource link's "Read" button (a `resources/read` result).
- `render_resource_contents(contents) -> QWidget`: the `contents` of a `resources/read` result (text
  highlighted by `mimeType`, blobs previewed as image or audio, otherwise size, hex and save).
- `block_widget(block, reader=None) -> QWidget`: one block alone.

Everything here is untrusted (DESIGN §8): text is plain unless the user asks for Markdown, and then it
is rendered without HTML, without any image, and with links that only show where they point. Images are
checked (strict base64, known format, pixel count from the header) before any decoder sees them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Awaitable, Callable

from PySide6.QtCore import QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication, QImage, QPixmap, QTextCursor, QTextDocument
from PySide6.QtWidgets import (QFileDialog, QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QScrollArea,
                               QSizePolicy, QTextBrowser, QToolButton, QVBoxLayout, QWidget)

from ... import media
from ..base import theme
from ..base.text import plain_tooltip, pretty_json, visible, visible_block
from ..base.highlight import JsonHighlighter

log = logging.getLogger("spyglass.ui.results")

Reader = Callable[[str], Awaitable[dict]]

PREVIEW_CHARS = 64_000          # text shown at once; the rest on "Show all"
JSON_PARSE_MAX = 1_000_000      # text longer than this is not tried as JSON
HIGHLIGHT_LIMIT = 100_000       # pygments colours only below this many characters
CHUNK_CHARS = 32_000            # "Show all" starts with slices this big, then adapts them ...
TURN_TARGET_S = 0.025           # ... so that one event-loop turn (insert + Qt's layout) takes about this long
MARKDOWN_MAX = 100_000          # Markdown renders at most this much (a note says so)
IMAGE_VIEW_MAX = 4096           # a decoded image is scaled down to fit this box before showing
KNOWN_KINDS = ("text", "image", "audio", "resource", "resource_link")

# ---------------------------------------------------------------------------------------------- helpers


def mono_font() -> QFont:
    f = QFontDatabase.systemFont(QFontDatabase.FixedFont)
    f.setStyleHint(QFont.Monospace)
    return f


def human_size(n: int | float | None) -> str:
    if not isinstance(n, (int, float)) or isinstance(n, bool) or n < 0:
        return "unknown size"
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"


def _label(text: str, parent: QWidget | None = None, *, name: str = "", wrap: bool = True,
           selectable: bool = True, role: str | None = None) -> QLabel:
    lab = QLabel(parent)
    lab.setTextFormat(Qt.PlainText)
    lab.setText(text)
    lab.setWordWrap(wrap)
    if selectable:
        lab.setTextInteractionFlags(Qt.TextSelectableByMouse)
    if name:
        lab.setObjectName(name)
    if role:
        lab.setStyleSheet(f"color: {theme.colour(role).name()};")
    return lab


def _button(text: str, tip: str = "", *, name: str = "", tool: bool = True) -> QToolButton | QPushButton:
    b: QToolButton | QPushButton = QToolButton() if tool else QPushButton()
    b.setText(text)
    if tip:
        b.setToolTip(tip)
    if name:
        b.setObjectName(name)
    b.setFocusPolicy(Qt.TabFocus)
    return b


def save_bytes(parent: QWidget, data: bytes, suggested: str) -> str | None:
    """Ask where to save `data` (non-native dialog, window-modal); returns the path written."""
    path, _ = QFileDialog.getSaveFileName(parent, "Save", suggested)
    if not path:
        return None
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as exc:
        log.warning("could not save %s: %s", path, exc)
        return None
    return path


def _extension(mime: str | None, fallback: str) -> str:
    table = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp", "image/bmp": "bmp",
             "image/svg+xml": "svg", "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav",
             "audio/mpeg": "mp3", "audio/ogg": "ogg", "audio/flac": "flac", "audio/mp4": "m4a",
             "application/json": "json", "text/plain": "txt", "text/markdown": "md", "text/html": "html",
             "text/csv": "csv", "application/gzip": "gz", "application/pdf": "pdf"}
    return table.get((mime or "").split(";")[0].strip().lower(), fallback)


def lexer_for(mime: str | None, uri: str | None = None):
    """A pygments lexer for a mimeType (then the uri's file name); None for plain text."""
    from pygments.lexers import JsonLexer, get_lexer_for_filename, get_lexer_for_mimetype
    from pygments.util import ClassNotFound

    m = (mime or "").split(";")[0].strip().lower()
    if m in ("text/plain", ""):
        lexer = None
    elif m == "application/json" or m.endswith("+json"):
        return JsonLexer()
    else:
        try:
            return get_lexer_for_mimetype(m)
        except ClassNotFound:
            lexer = None
    if uri and not m:
        name = uri.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
        if "." in name:
            try:
                return get_lexer_for_filename(name)
            except ClassNotFound:
                return None
    return lexer


def try_json(text: str) -> tuple[bool, Any]:
    """(True, value) when `text` is a JSON object or array (small enough to parse at once)."""
    if len(text) > JSON_PARSE_MAX:
        return False, None
    s = text.strip()
    if not s or s[0] not in "[{":
        return False, None
    try:
        return True, json.loads(s)
    except (ValueError, RecursionError):
        return False, None


# ---------------------------------------------------------------------------------------------- text view


class TextView(QWidget):
    """Read-only text that opens fast whatever its size: a preview at once, then "Show all" appends the
    rest a chunk per event-loop turn (never one long stall). Optional pygments colours (small texts)."""

    def __init__(self, text: str, parent: QWidget | None = None, *, lexer: Any = None, name: str = "",
                 wrap: bool = True, max_height: int = 420) -> None:
        super().__init__(parent)
        self.full = text
        self.edit = QPlainTextEdit(self)
        self.edit.setObjectName(name or "resultText")
        self.edit.setReadOnly(True)
        self.edit.setFont(mono_font())
        self.edit.setLineWrapMode(QPlainTextEdit.WidgetWidth if wrap else QPlainTextEdit.NoWrap)
        self.edit.setMaximumHeight(max_height)
        self.edit.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        self._highlighter: JsonHighlighter | None = None
        self._loading: QTimer | None = None
        self._shown = 0
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.edit)
        self.more = QWidget(self)
        ml = QHBoxLayout(self.more)
        ml.setContentsMargins(0, 0, 0, 0)
        self.more_label = _label("", self.more, name="textPreviewNote", role="warning", wrap=False)
        self.show_all = _button("Show all", "Load the whole text (in the background)", name="showAllButton")
        self.save = _button("Save…", "Save the whole text to a file", name="saveTextButton")
        self.show_all.clicked.connect(self.load_all)
        self.save.clicked.connect(lambda: save_bytes(self, self.full.encode("utf-8"), "result.txt"))
        ml.addWidget(self.more_label, 1)
        ml.addWidget(self.show_all)
        ml.addWidget(self.save)
        lay.addWidget(self.more)
        self._set(text, lexer)
        self._fit_height(max_height)

    def _set(self, text: str, lexer: Any) -> None:
        preview = text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS]
        shown = visible_block(preview, limit=PREVIEW_CHARS + 1)
        if lexer is not None and len(text) <= HIGHLIGHT_LIMIT:
            self._highlighter = JsonHighlighter(self.edit.document(), dark=theme.is_dark(), lexer=lexer)
            self._highlighter.set_text(shown, json=True)
        else:
            self.edit.setPlainText(shown)
        self._shown = len(preview)
        big = len(text) > len(preview)
        self.more.setVisible(big)
        if big:
            self.more_label.setText(f"Showing the first {self._shown:,} of {len(text):,} characters "
                                    f"({human_size(len(text.encode('utf-8', 'replace')) if len(text) < 4_000_000 else len(text))}).")

    def _fit_height(self, max_height: int) -> None:
        fm = self.edit.fontMetrics()
        doc = self.edit.document()
        lines = doc.blockCount()
        if self.edit.lineWrapMode() != QPlainTextEdit.NoWrap:
            lines += doc.characterCount() // 90
        else:
            lines += 1  # room for a horizontal scroll bar
        self.edit.setFixedHeight(min(max_height, max(1, min(lines, 60)) * fm.lineSpacing() + 14))

    def text(self) -> str:
        return self.edit.toPlainText()

    def fully_shown(self) -> bool:
        return self._shown >= len(self.full)

    def load_all(self) -> None:
        """Append the rest a slice per event-loop turn (each well under 100 ms). The progress note is
        updated a few times a second only: a label changing size re-lays the whole result page out."""
        if self._loading is not None or self.fully_shown():
            return
        if self._highlighter is not None:
            self._highlighter.setDocument(None)
            self._highlighter = None
        self.show_all.setEnabled(False)
        self.edit.document().setUndoRedoEnabled(False)
        self._noted = 0.0
        self._chunk = CHUNK_CHARS
        self._last_start: float | None = None
        self._loading = QTimer(self)
        self._loading.setInterval(0)
        self._loading.timeout.connect(self._step)
        self._loading.start()

    def _step(self) -> None:
        """One slice. Qt lays the new lines out after the slice (about twice the insertion time), so the
        slice size adapts to the measured length of whole turns, aiming at TURN_TARGET_S each."""
        start = time.perf_counter()
        if self._last_start is not None:
            turn = start - self._last_start
            if turn > TURN_TARGET_S * 1.3:
                self._chunk = max(2_000, int(self._chunk * TURN_TARGET_S / turn))
            elif turn < TURN_TARGET_S * 0.7:
                self._chunk = min(CHUNK_CHARS * 4, int(self._chunk * 1.3))
        self._last_start = start
        cursor = QTextCursor(self.edit.document())
        cursor.movePosition(QTextCursor.End)
        total = len(self.full)
        end = min(total, self._shown + self._chunk)
        cursor.insertText(visible_block(self.full[self._shown:end], limit=self._chunk + 1))
        self._shown = end
        if self._shown < total:
            if start - self._noted > 0.25:
                self._noted = start
                self.more_label.setText(f"Loading… {self._shown * 100 // total} %")
            return
        if self._loading is not None:
            self._loading.stop()
            self._loading.deleteLater()
            self._loading = None
        self.more_label.setText(f"All {total:,} characters shown.")
        self.show_all.hide()


class SafeMarkdown(QTextBrowser):
    """Markdown rendered without HTML, images or navigation: a clicked link only shows its target."""

    linkShown = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("markdownView")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(lambda url: self.linkShown.emit(url.toString()))

    def set_markdown(self, text: str) -> None:
        features = QTextDocument.MarkdownFeature(QTextDocument.MarkdownDialectGitHub.value
                                                 | QTextDocument.MarkdownNoHTML.value)
        self.document().setMarkdown(text[:MARKDOWN_MAX], features)

    def loadResource(self, kind: int, name: QUrl) -> Any:  # noqa: N802 - Qt name
        return None  # no image, remote or local, is ever loaded


# ---------------------------------------------------------------------------------------------- block frame


class BlockFrame(QFrame):
    """The common frame of one content block: a header (kind, annotation badges, _meta, raw), a body."""

    def __init__(self, kind: str, block: Any, parent: QWidget | None = None, *, title: str | None = None) -> None:
        super().__init__(parent)
        self.kind = kind
        self.block = block
        self.setObjectName(f"result:{kind}")
        self.setFrameShape(QFrame.StyledPanel)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Maximum)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 8)
        lay.setSpacing(4)
        head = QHBoxLayout()
        head.setSpacing(6)
        self.heading = _label(title or kind.replace("_", " "), self, name="blockKind", wrap=False, selectable=False)
        f = self.heading.font()
        f.setBold(True)
        self.heading.setFont(f)
        head.addWidget(self.heading)
        self.badges: list[QLabel] = []
        for text, tip in annotation_badges(block):
            b = _label(text, self, name="annotationBadge", wrap=False, selectable=False)
            b.setToolTip(plain_tooltip(tip))
            b.setStyleSheet(f"QLabel {{ border: 1px solid {theme.colour('muted').name()}; border-radius: 7px;"
                            f" padding: 0 6px; color: {theme.colour('muted').name()}; }}")
            self.badges.append(b)
            head.addWidget(b)
        head.addStretch(1)
        self.head = head
        self.extra: list[QWidget] = []
        meta = block.get("_meta") if isinstance(block, dict) else None
        self.meta_button = None
        if meta is not None:
            self.meta_button = _button("_meta", "Show the block's _meta", name="metaButton")
            self.meta_button.setCheckable(True)
            head.addWidget(self.meta_button)
        self.raw_button = _button("{ }", "Show this block's raw JSON", name="blockRawButton")
        self.raw_button.setCheckable(True)
        head.addWidget(self.raw_button)
        lay.addLayout(head)
        self.body = QVBoxLayout()
        self.body.setSpacing(4)
        lay.addLayout(self.body)
        self._raw_view: QWidget | None = None
        self._meta_view: QWidget | None = None
        self.raw_button.toggled.connect(self._toggle_raw)
        if self.meta_button is not None:
            self.meta_button.toggled.connect(self._toggle_meta)

    def add_header_button(self, b: QWidget) -> None:
        self.head.insertWidget(self.head.count() - (3 if self.meta_button else 2), b)

    def _toggle_raw(self, on: bool) -> None:
        if self._raw_view is None:
            self._raw_view = TextView(_raw_text(self.block), self, lexer=_json_lexer(), name="blockRaw", wrap=False,
                                      max_height=260)
            self.layout().addWidget(self._raw_view)
        self._raw_view.setVisible(on)

    def _toggle_meta(self, on: bool) -> None:
        if self._meta_view is None:
            self._meta_view = TextView(pretty_json(self.block.get("_meta")), self, lexer=_json_lexer(),
                                       name="blockMeta", wrap=False, max_height=200)
            self.layout().insertWidget(2, self._meta_view)
        self._meta_view.setVisible(on)


def _json_lexer():
    from pygments.lexers import JsonLexer

    return JsonLexer()


def _raw_text(block: Any) -> str:
    """The block as JSON, with very long strings (base64) cut so the view stays light."""
    def cut(v: Any) -> Any:
        if isinstance(v, str) and len(v) > 2000:
            return v[:2000] + f"… ({len(v):,} characters)"
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        if isinstance(v, list):
            return [cut(x) for x in v[:1000]]
        return v
    return pretty_json(cut(block))


def annotation_badges(block: Any) -> list[tuple[str, str]]:
    """Content annotations (audience, priority, lastModified) as (badge, tooltip)."""
    ann = block.get("annotations") if isinstance(block, dict) else None
    if not isinstance(ann, dict):
        return []
    out = []
    aud = ann.get("audience")
    if isinstance(aud, list) and aud:
        out.append(("for " + ", ".join(visible(a, 20) for a in aud),
                    "audience: who this content is meant for (a hint from the server)"))
    pr = ann.get("priority")
    if isinstance(pr, (int, float)) and not isinstance(pr, bool):
        out.append((f"priority {pr:g}", "priority: 0 (optional) to 1 (most important), a hint from the server"))
    lm = ann.get("lastModified")
    if isinstance(lm, str) and lm:
        out.append((f"modified {visible(lm, 40)}", "lastModified"))
    extra = [k for k in ann if k not in ("audience", "priority", "lastModified")]
    if extra:
        out.append(("+" + ", ".join(visible(k, 20) for k in extra[:3]), pretty_json(ann)))
    return out


# ---------------------------------------------------------------------------------------------- blocks


class TextBlock(BlockFrame):
    def __init__(self, block: dict, parent: QWidget | None = None) -> None:
        super().__init__("text", block, parent)
        text = block.get("text")
        text = text if isinstance(text, str) else pretty_json(text)
        self.text = text
        self.is_json, value = try_json(text)
        self.markdown: SafeMarkdown | None = None
        if self.is_json:
            self.heading.setText("text · JSON")
            self.view = TextView(pretty_json(value), self, lexer=_json_lexer(), name="resultText", wrap=False)
        else:
            self.view = TextView(text, self, name="resultText")
        self.body.addWidget(self.view)
        self.md_button = _button("Markdown", "Render this text as Markdown (no HTML, no images; links only "
                                 "show where they point)", name="markdownToggle")
        self.md_button.setCheckable(True)
        self.md_button.toggled.connect(self.set_markdown)
        self.add_header_button(self.md_button)
        self.link_note = _label("", self, name="linkTarget")
        self.link_note.hide()
        self.body.addWidget(self.link_note)

    def set_markdown(self, on: bool) -> None:
        if on and self.markdown is None:
            self.markdown = SafeMarkdown(self)
            self.markdown.set_markdown(self.text)
            self.markdown.document().setTextWidth(max(200, self.view.width() - 12))
            height = int(self.markdown.document().size().height()) + 12
            self.markdown.setFixedHeight(min(600, max(60, height)))
            self.markdown.linkShown.connect(self._show_link)
            self.body.insertWidget(1, self.markdown)
            if len(self.text) > MARKDOWN_MAX:
                self.link_note.setText(f"Markdown shows the first {MARKDOWN_MAX:,} of {len(self.text):,} characters; "
                                       "turn Markdown off to see all of the text.")
                self.link_note.show()
        if self.md_button.isChecked() != on:
            self.md_button.setChecked(on)
        self.view.setVisible(not on)
        if self.markdown is not None:
            self.markdown.setVisible(on)

    def _show_link(self, target: str) -> None:
        self.link_note.setText(f"Link (not opened): {visible(target, 2000)}")
        self.link_note.show()
        QGuiApplication.clipboard().setText(target)
        self.link_note.setToolTip("The link's full target; it was copied to the clipboard.")


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
            msg = _label(f"⚠ Image not shown: {self.error}", self, name="mediaError", role="error")
            lay.addWidget(msg)
            if self.raw:
                lay.addWidget(_label(f"{human_size(len(self.raw))}; first bytes:", self, role="muted"))
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
            self.caption = _label(f"{self.info.format} · {self.info.width}×{self.info.height} · "
                                  f"{human_size(len(self.raw or b''))}", self, name="imageInfo", role="muted", wrap=False)
            row.addWidget(self.caption)
            for text, z, name in (("Fit", 0.0, "zoomFit"), ("100%", 1.0, "zoom100"), ("−", -1, "zoomOut"),
                                  ("+", -2, "zoomIn")):
                b = _button(text, name=name)
                b.clicked.connect(lambda _=False, z=z: self.set_zoom(z))
                row.addWidget(b)
        row.addStretch(1)
        if self.raw:
            save = _button("Save…", "Save the data as sent", name="saveMediaButton")
            save.clicked.connect(lambda: save_bytes(self, self.raw or b"", "image." + _extension(self.mime, "bin")))
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


def _multimedia():
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
            row.addWidget(_label(" · ".join(bits), self, name="audioInfo", wrap=False))
            self.info = info
        else:
            row.addWidget(_label(f"⚠ Audio not recognised: {self.error}", self, name="mediaError", role="error"))
        row.addStretch(1)
        mm = _multimedia() if info is not None else None
        if mm is not None:
            self.play = _button("▶ Play", "Play the clip", name="playButton")
            self.play.clicked.connect(self._toggle_play)
            row.addWidget(self.play)
        elif info is not None:
            row.addWidget(_label("(no playback: QtMultimedia is not available here)", self, role="muted",
                                 name="noPlayback", wrap=False))
        if self.raw:
            save = _button("Save…", "Save the clip as sent", name="saveMediaButton")
            save.clicked.connect(lambda: save_bytes(self, self.raw or b"", "audio." + _extension(self.mime, "bin")))
            row.addWidget(save)
        lay.addLayout(row)

    def _toggle_play(self) -> None:
        mm = _multimedia()
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


class ImageBlock(BlockFrame):
    def __init__(self, block: dict, parent: QWidget | None = None) -> None:
        mime = block.get("mimeType") if isinstance(block.get("mimeType"), str) else None
        super().__init__("image", block, parent, title=f"image · {visible(mime, 60)}" if mime else "image")
        self.view = ImageView(block.get("data"), mime, self)
        self.body.addWidget(self.view)


class AudioBlock(BlockFrame):
    def __init__(self, block: dict, parent: QWidget | None = None) -> None:
        mime = block.get("mimeType") if isinstance(block.get("mimeType"), str) else None
        super().__init__("audio", block, parent, title=f"audio · {visible(mime, 60)}" if mime else "audio")
        self.view = AudioView(block.get("data"), mime, self)
        self.body.addWidget(self.view)


def _resource_body(item: Any, parent: QWidget) -> QWidget:
    """One resource contents item (uri, mimeType, text | blob) as a widget."""
    box = QWidget(parent)
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(3)
    if not isinstance(item, dict):
        lay.addWidget(_label(f"⚠ Not a resource contents object: {visible(pretty_json(item), 300)}", box,
                             role="warning"))
        return box
    uri = item.get("uri")
    mime = item.get("mimeType") if isinstance(item.get("mimeType"), str) else None
    head = f"{visible(uri, 400) if uri is not None else '(no uri)'}" + (f"  ·  {visible(mime, 80)}" if mime else "")
    lay.addWidget(_label(head, box, name="resourceUri", role="muted"))
    if isinstance(item.get("text"), str):
        text = item["text"]
        lexer = lexer_for(mime, uri if isinstance(uri, str) else None)
        if lexer is None:
            is_json, value = try_json(text) if mime in (None, "text/plain") else (False, None)
            if is_json:
                text, lexer = pretty_json(value), _json_lexer()
        lay.addWidget(TextView(text, box, lexer=lexer, name="resourceText", wrap=lexer is None))
    elif "blob" in item:
        try:
            raw = media.decode_base64(item.get("blob"), "the blob")
        except media.MediaError as exc:
            lay.addWidget(_label(f"⚠ Blob not shown: {exc}", box, name="mediaError", role="error"))
            return box
        kind = (mime or "").split("/")[0].lower()
        sniffed_image = _sniff(media.image_info, raw)
        as_text = _utf8(raw) if kind == "text" or _texty(mime) else None
        if as_text is not None:
            lay.addWidget(_label(f"blob · {human_size(len(raw))}, shown as UTF-8 text", box, name="blobInfo",
                                 role="muted"))
            lexer = lexer_for(mime, uri if isinstance(uri, str) else None)
            lay.addWidget(TextView(as_text, box, lexer=lexer, name="resourceText", wrap=lexer is None))
        elif kind == "image" or (not mime and sniffed_image):
            lay.addWidget(ImageView(None, mime, box, raw=raw))
        elif kind == "audio" or (not mime and _sniff(media.audio_info, raw)):
            lay.addWidget(AudioView(None, mime, box, raw=raw))
        else:
            lay.addWidget(_label(f"binary · {human_size(len(raw))}", box, name="blobInfo"))
            lay.addWidget(TextView(media.hex_preview(raw, 256), box, name="hexPreview", wrap=False, max_height=180))
            save = _button("Save…", "Save the blob as sent", name="saveBlobButton")
            name = uri.rstrip("/").rsplit("/", 1)[-1] if isinstance(uri, str) and "/" in uri else ""
            save.clicked.connect(lambda: save_bytes(box, raw, name or "resource." + _extension(mime, "bin")))
            row = QHBoxLayout()
            row.addStretch(1)
            row.addWidget(save)
            lay.addLayout(row)
    else:
        lay.addWidget(_label("⚠ Neither text nor blob: shown raw.", box, role="warning"))
        lay.addWidget(TextView(pretty_json(item), box, lexer=_json_lexer(), wrap=False, max_height=200))
    return box


def _texty(mime: str | None) -> bool:
    m = (mime or "").split(";")[0].strip().lower()
    return m in ("application/json", "application/xml", "application/javascript", "application/yaml",
                 "application/x-yaml", "application/toml", "application/sql") or m.endswith(("+json", "+xml"))


def _utf8(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _sniff(fn: Callable[[bytes], Any], raw: bytes) -> bool:
    try:
        fn(raw)
        return True
    except media.MediaError:
        return False


class ResourceBlock(BlockFrame):
    def __init__(self, block: dict, parent: QWidget | None = None) -> None:
        super().__init__("resource", block, parent, title="embedded resource")
        self.body.addWidget(_resource_body(block.get("resource"), self))


class ResourceLinkBlock(BlockFrame):
    def __init__(self, block: dict, parent: QWidget | None = None, reader: Reader | None = None) -> None:
        super().__init__("resource_link", block, parent, title="resource link")
        self.reader = reader
        self.task: asyncio.Task[Any] | None = None
        grid = QVBoxLayout()
        grid.setSpacing(1)
        for key in ("name", "title", "uri", "mimeType", "size", "description"):
            if key in block and block[key] is not None:
                value = block[key]
                if key == "size" and isinstance(value, int) and not isinstance(value, bool):
                    text = human_size(value) + (f" ({value:,} bytes)" if value >= 1024 else "")
                else:
                    text = visible(value, 2000)
                grid.addWidget(_label(f"{key}: {text}", self, name=f"link:{key}"))
        self.body.addLayout(grid)
        row = QHBoxLayout()
        self.read_button = _button("Read", "Fetch this resource with resources/read and show it here",
                                   name="readLinkButton", tool=False)
        self.read_button.setEnabled(reader is not None and isinstance(block.get("uri"), str))
        if reader is None:
            self.read_button.setToolTip("Reading needs a connected server")
        self.read_button.clicked.connect(self.read)
        self.status = _label("", self, name="readStatus", role="muted")
        row.addWidget(self.read_button)
        row.addWidget(self.status, 1)
        self.body.addLayout(row)
        self.contents: QWidget | None = None

    def read(self) -> None:
        if self.reader is None or (self.task and not self.task.done()):
            return
        self.status.setText("Reading…")
        self.read_button.setEnabled(False)
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            result = await self.reader(self.block["uri"])  # type: ignore[misc]
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            self._safe(lambda: (self.status.setText(f"⚠ resources/read failed: {message}"),
                                self.status.setStyleSheet(f"color: {theme.colour('error').name()};"),
                                self.read_button.setEnabled(True)))
            return

        def show() -> None:
            contents = result.get("contents") if isinstance(result, dict) else None
            if self.contents is not None:
                self.contents.deleteLater()
            self.contents = render_resource_contents(contents if isinstance(contents, list) else [])
            self.contents.setParent(self)
            self.body.addWidget(self.contents)
            self.status.setText("Read just now." if isinstance(contents, list)
                                else "⚠ The result has no contents list.")
            self.read_button.setText("Read again")
            self.read_button.setEnabled(True)
        self._safe(show)

    def _safe(self, fn: Callable[[], Any]) -> None:
        import shiboken6

        if shiboken6.isValid(self):
            fn()


class UnknownBlock(BlockFrame):
    def __init__(self, block: Any, parent: QWidget | None = None) -> None:
        kind = block.get("type") if isinstance(block, dict) else None
        super().__init__("unknown", block, parent, title="unknown content")
        what = f"type {visible(kind, 80)!s}" if isinstance(kind, str) else \
            ("no type" if isinstance(block, dict) else f"a {type(block).__name__}, not an object")
        self.body.addWidget(_label(f"⚠ Content of {what}: Spyglass does not know how to show it; here it is raw.",
                                   self, name="unknownWarning", role="warning"))
        self.body.addWidget(TextView(_raw_text(block), self, lexer=_json_lexer(), name="unknownRaw", wrap=False,
                                     max_height=240))


def block_widget(block: Any, reader: Reader | None = None, parent: QWidget | None = None) -> QWidget:
    """The widget of one content block (`result:<kind>`); never raises."""
    kind = block.get("type") if isinstance(block, dict) else None
    try:
        if kind == "text":
            return TextBlock(block, parent)
        if kind == "image":
            return ImageBlock(block, parent)
        if kind == "audio":
            return AudioBlock(block, parent)
        if kind == "resource":
            return ResourceBlock(block, parent)
        if kind == "resource_link":
            return ResourceLinkBlock(block, parent, reader)
    except Exception as exc:  # a renderer bug must not hide the content: show it raw
        log.exception("rendering a %s block", kind)
        w = UnknownBlock(block, parent)
        w.body.insertWidget(0, _label(f"⚠ Could not render this {kind} block: {type(exc).__name__}: {exc}", w,
                                      role="error"))
        return w
    return UnknownBlock(block, parent)


# ---------------------------------------------------------------------------------------------- containers


class ContentView(QWidget):
    """Content blocks, one widget each (`result:<kind>`), in order."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contentView")
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self._lay.setSpacing(6)
        self.widgets: list[QWidget] = []
        self.empty = _label("(no content blocks)", self, name="noContent", role="muted")
        self._lay.addWidget(self.empty)

    def set_blocks(self, blocks: list[dict], *, reader: Reader | None = None) -> None:
        for w in self.widgets:
            w.hide()
            w.deleteLater()
        self.widgets = []
        items = blocks if isinstance(blocks, list) else []
        self.empty.setVisible(not items)
        for block in items:
            w = block_widget(block, reader, self)
            self.widgets.append(w)
            self._lay.addWidget(w)

    def blocks(self, kind: str | None = None) -> list[QWidget]:
        return [w for w in self.widgets if kind is None or w.objectName() == f"result:{kind}"]


def render_resource_contents(contents: list[dict]) -> QWidget:
    """The `contents` of a resources/read result, one framed item each (`resourceContents`)."""
    box = QWidget()
    box.setObjectName("resourceContents")
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(6)
    items = contents if isinstance(contents, list) else []
    if not items:
        lay.addWidget(_label("(the resource has no contents)", box, role="muted", name="noContent"))
    for item in items:
        frame = QFrame(box)
        frame.setObjectName("resourceItem")
        frame.setFrameShape(QFrame.StyledPanel)
        fl = QVBoxLayout(frame)
        fl.setContentsMargins(6, 4, 6, 6)
        try:
            fl.addWidget(_resource_body(item, frame))
        except Exception as exc:
            log.exception("rendering resource contents")
            fl.addWidget(_label(f"⚠ Could not render: {type(exc).__name__}: {exc}", frame, role="error"))
        if isinstance(item, dict) and (item.get("_meta") is not None or item.get("annotations")):
            badges = annotation_badges(item)
            if badges:
                fl.addWidget(_label(" · ".join(b for b, _ in badges), frame, role="muted", name="annotationBadge"))
        lay.addWidget(frame)
    return box


__all__ = ["ContentView", "render_resource_contents", "block_widget", "TextView", "SafeMarkdown", "lexer_for",
           "human_size", "annotation_badges", "Reader"]
