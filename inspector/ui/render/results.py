"""Renderers for MCP content: one widget per content block, and resource contents.

Public API (also used by the resources and prompts panes):

- `ContentView(QWidget)`: `set_blocks(blocks, *, reader=None)` shows each content block in its own
  widget named `result:<kind>` (`text`, `image`, `audio`, `resource`, `resource_link`, `unknown`), in
  order. `reader(uri)` is awaited by a resource link's "Read" button (a `resources/read` result).
- `render_resource_contents(contents) -> QWidget`: the `contents` of a `resources/read` result (text
  highlighted by `mimeType`, blobs previewed as image or audio, otherwise size, hex and save).
- `block_widget(block, reader=None) -> QWidget`: one block alone.

Everything here is untrusted: text is plain unless the user asks for Markdown, and then it
is rendered without HTML, without any image, and with links that only show where they point. Images are
checked (strict base64, known format, pixel count from the header) before any decoder sees them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from ... import media, urlpolicy
from ..base import design, theme
from ..base.badge import Badge, BadgeRow
from ..base.highlight import json_lexer, lexer_for
from ..base.layout import small_button, text_label
from ..base.text import pretty_json, visible
from .media import AudioView, ImageView, PixelBudget, extension_for
from .text import MARKDOWN_MAX, SafeMarkdown, TextView, human_size, looks_like_markdown, save_bytes, try_json

log = logging.getLogger("spyglass.ui.results")


Reader = Callable[[str], Awaitable[dict]]


KNOWN_KINDS = ("text", "image", "audio", "resource", "resource_link")
MARKDOWN_TYPES = ("text/markdown", "text/x-markdown")  # a resource's text read rendered, its source a click away


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
        lay.setContentsMargins(design.margins("m", "s", "m", "m"))
        lay.setSpacing(design.space("xs"))
        head = QHBoxLayout()
        head.setSpacing(design.space("s"))
        self.heading = text_label(title or kind.replace("_", " "), self, name="blockKind", wrap=False, selectable=False)
        f = self.heading.font()
        f.setBold(True)
        self.heading.setFont(f)
        head.addWidget(self.heading)
        self.badges: list[QLabel] = []
        for text, tip in annotation_badges(block):
            b = Badge(text, self, key="muted", tip=tip, name="annotationBadge")
            self.badges.append(b)
            head.addWidget(b)
        head.addStretch(1)
        self.head = head
        self.extra: list[QWidget] = []
        meta = block.get("_meta") if isinstance(block, dict) else None
        self.meta_button = None
        if meta is not None:
            self.meta_button = small_button("_meta", "Show the block's _meta", name="metaButton")
            self.meta_button.setCheckable(True)
            head.addWidget(self.meta_button)
        self.raw_button = small_button("{ }", "Show this block's raw JSON", name="blockRawButton")
        self.raw_button.setCheckable(True)
        head.addWidget(self.raw_button)
        lay.addLayout(head)
        self.body = QVBoxLayout()
        self.body.setSpacing(design.space("xs"))
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
            self._raw_view = TextView(_raw_text(self.block), self, lexer=json_lexer(), name="blockRaw", wrap=False,
                                      max_height=260)
            self.layout().addWidget(self._raw_view)
        self._raw_view.setVisible(on)

    def _toggle_meta(self, on: bool) -> None:
        if self._meta_view is None:
            self._meta_view = TextView(pretty_json(self.block.get("_meta")), self, lexer=json_lexer(),
                                       name="blockMeta", wrap=False, max_height=200)
            self.layout().insertWidget(2, self._meta_view)
        self._meta_view.setVisible(on)


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


class MarkdownSwitch:
    """A text shown as sent (`view`) or rendered as Markdown, one checkable button between them (`markdownToggle`,
    the same on a tool's text result and on a resource's text). The rendered view goes right under the source in
    `body`; a link clicked in it is only shown (`linkTarget`)."""

    def __init__(self, text: str, view: QWidget, body: QVBoxLayout, parent: QWidget) -> None:
        self.text, self.view, self.body, self.parent = text, view, body, parent
        self.markdown: SafeMarkdown | None = None
        self.button = small_button("Markdown", "Render this text as Markdown (no HTML, no images; links only "
                                   "show where they point); off: the text exactly as sent", name="markdownToggle")
        self.button.setCheckable(True)
        self.button.toggled.connect(self.set_markdown)
        self.link_note = text_label("", parent, name="linkTarget")
        self.link_note.hide()
        body.addWidget(self.link_note)

    def set_markdown(self, on: bool) -> None:
        if on and self.markdown is None:
            self.markdown = SafeMarkdown(self.parent)
            self.markdown.grew.connect(self._fit_markdown)
            self.markdown.set_markdown(self.text)
            self._fit_markdown()
            self.markdown.linkShown.connect(self._show_link)
            self.body.insertWidget(self.body.indexOf(self.view) + 1, self.markdown)
            if len(self.text) > MARKDOWN_MAX:
                self.link_note.setText(f"Markdown shows the first {MARKDOWN_MAX:,} of {len(self.text):,} characters; "
                                       "turn Markdown off to see all of the text.")
                self.link_note.show()
        if self.button.isChecked() != on:
            self.button.setChecked(on)
        self.view.setVisible(not on)
        if self.markdown is not None:
            self.markdown.setVisible(on)

    def _fit_markdown(self) -> None:
        """The Markdown's height follows what is rendered so far (each piece laid out once, as it comes)."""
        if self.markdown is None:
            return
        if not self.markdown.isVisible():  # once shown, the view sets the width: setting another lays it all out
            self.markdown.document().setTextWidth(max(200, self.view.width() - 12))
        height = int(self.markdown.document().size().height()) + 12
        self.markdown.setFixedHeight(min(600, max(60, height)))

    def _show_link(self, target: str) -> None:
        shown = urlpolicy.for_display(target)  # a look-alike host as the browser would show it
        said = shown.full if shown.address is not None else visible(target, 2000)
        self.link_note.setText(f"Link (not opened): {said}")
        self.link_note.show()
        QGuiApplication.clipboard().setText(target)
        self.link_note.setToolTip("The link's full target; it was copied to the clipboard.")


class TextBlock(BlockFrame):
    def __init__(self, block: dict, parent: QWidget | None = None) -> None:
        super().__init__("text", block, parent)
        text = block.get("text")
        text = text if isinstance(text, str) else pretty_json(text)
        self.text = text
        self.is_json, value = try_json(text)
        if self.is_json:
            self.heading.setText("text · JSON")
            self.view = TextView(pretty_json(value), self, lexer=json_lexer(), name="resultText", wrap=False)
        else:
            self.view = TextView(text, self, name="resultText")
        self.body.addWidget(self.view)
        self.switch = MarkdownSwitch(text, self.view, self.body, self)
        self.md_button = self.switch.button
        self.add_header_button(self.md_button)
        if not self.is_json and looks_like_markdown(text):  # Markdown is read rendered; the source a click away
            self.set_markdown(True)

    @property
    def markdown(self) -> SafeMarkdown | None:
        return self.switch.markdown

    @property
    def link_note(self) -> QLabel:
        return self.switch.link_note

    def set_markdown(self, on: bool) -> None:
        self.switch.set_markdown(on)


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
    lay.setSpacing(design.space("hair"))
    if not isinstance(item, dict):
        lay.addWidget(text_label(f"⚠ Not a resource contents object: {visible(pretty_json(item), 300)}", box,
                             role="warning"))
        return box
    uri = item.get("uri")
    mime = item.get("mimeType") if isinstance(item.get("mimeType"), str) else None
    head = f"{visible(uri, 400) if uri is not None else '(no uri)'}" + (f"  ·  {visible(mime, 80)}" if mime else "")
    uri_label = text_label(head, box, name="resourceUri", role="muted")
    lay.addWidget(uri_label)
    if isinstance(item.get("text"), str):
        text = item["text"]
        lexer = lexer_for(mime, uri if isinstance(uri, str) else None)
        is_json = False
        if lexer is None:
            is_json, value = try_json(text) if mime in (None, "text/plain") else (False, None)
            if is_json:
                text, lexer = pretty_json(value), json_lexer()
        view = TextView(text, box, lexer=lexer, name="resourceText", wrap=lexer is None)
        lay.addWidget(view)
        kind = (mime or "").split(";")[0].strip().lower()
        markdown = kind in MARKDOWN_TYPES or getattr(lexer, "name", "") == "Markdown"  # or a .md file's name
        if markdown or (lexer is None and not is_json and looks_like_markdown(text)):
            # read rendered, as a tool's Markdown answer is; the source a click away (the same switch)
            switch = MarkdownSwitch(text, view, lay, box)
            box.markdown_switch = switch  # type: ignore[attr-defined]
            lay.removeWidget(uri_label)
            row = QHBoxLayout()
            row.setContentsMargins(0, 0, 0, 0)
            row.addWidget(uri_label, 1)
            row.addWidget(switch.button)
            lay.insertLayout(0, row)
            switch.set_markdown(True)
    elif "blob" in item:
        try:
            raw = media.decode_base64(item.get("blob"), "the blob")
        except media.MediaError as exc:
            lay.addWidget(text_label(f"⚠ Blob not shown: {exc}", box, name="mediaError", role="error"))
            return box
        kind = (mime or "").split("/")[0].lower()
        sniffed_image = _sniff(media.image_info, raw)
        as_text = _utf8(raw) if kind == "text" or _texty(mime) else None
        if as_text is not None:
            lay.addWidget(text_label(f"blob · {human_size(len(raw))}, shown as UTF-8 text", box, name="blobInfo",
                                 role="muted"))
            lexer = lexer_for(mime, uri if isinstance(uri, str) else None)
            lay.addWidget(TextView(as_text, box, lexer=lexer, name="resourceText", wrap=lexer is None))
        elif kind == "image" or (not mime and sniffed_image):
            lay.addWidget(ImageView(None, mime, box, raw=raw))
        elif kind == "audio" or (not mime and _sniff(media.audio_info, raw)):
            lay.addWidget(AudioView(None, mime, box, raw=raw))
        else:
            lay.addWidget(text_label(f"binary · {human_size(len(raw))}", box, name="blobInfo"))
            lay.addWidget(TextView(media.hex_preview(raw, 256), box, name="hexPreview", wrap=False, max_height=180))
            save = small_button("Save…", "Save the blob as sent", name="saveBlobButton")
            name = uri.rstrip("/").rsplit("/", 1)[-1] if isinstance(uri, str) and "/" in uri else ""
            save.clicked.connect(lambda: save_bytes(box, raw, name or "resource." + extension_for(mime, "bin")))
            row = QHBoxLayout()
            row.addStretch(1)
            row.addWidget(save)
            lay.addLayout(row)
    else:
        lay.addWidget(text_label("⚠ Neither text nor blob: shown raw.", box, role="warning"))
        lay.addWidget(TextView(pretty_json(item), box, lexer=json_lexer(), wrap=False, max_height=200))
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
        grid.setSpacing(design.space("hair"))
        for key in ("name", "title", "uri", "mimeType", "size", "description"):
            if key in block and block[key] is not None:
                value = block[key]
                if key == "size" and isinstance(value, int) and not isinstance(value, bool):
                    text = human_size(value) + (f" ({value:,} bytes)" if value >= 1024 else "")
                else:
                    text = visible(value, 2000)
                grid.addWidget(text_label(f"{key}: {text}", self, name=f"link:{key}"))
        self.body.addLayout(grid)
        row = QHBoxLayout()
        self.read_button = small_button("Read", "Fetch this resource with resources/read and show it here",
                                   name="readLinkButton", tool=False)
        self.read_button.setEnabled(reader is not None and isinstance(block.get("uri"), str))
        if reader is None:
            self.read_button.setToolTip("Reading needs a connected server")
        self.read_button.clicked.connect(self.read)
        self.status = text_label("", self, name="readStatus", role="muted")
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
        self.body.addWidget(text_label(f"⚠ Content of {what}: Spyglass does not know how to show it; here it is raw.",
                                   self, name="unknownWarning", role="warning"))
        self.body.addWidget(TextView(_raw_text(block), self, lexer=json_lexer(), name="unknownRaw", wrap=False,
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
        w.body.insertWidget(0, text_label(f"⚠ Could not render this {kind} block: {type(exc).__name__}: {exc}", w,
                                      role="error"))
        return w
    return UnknownBlock(block, parent)


STEP_S = 0.015  # making block widgets, a turn of the loop
AT_ONCE = 8  # blocks made at once however long they take (a usual result is all there when set_blocks returns)


class ContentView(QWidget):
    """Content blocks, one widget each (`result:<kind>`), in order."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contentView")
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self._lay.setSpacing(design.space("s"))
        self.widgets: list[QWidget] = []
        self._todo: Any = iter(())
        self._reader: Reader | None = None
        self.done = True
        self.empty = text_label("(no content blocks)", self, name="noContent", role="muted")
        self._lay.addWidget(self.empty)

    def set_blocks(self, blocks: list[dict], *, reader: Reader | None = None) -> None:
        """The blocks' widgets: the first `AT_ONCE` now, the rest a loop turn's worth at a time (`STEP_S`): a
        result of many images must not hold the window (36 image blocks took 130 ms in one turn)."""
        for w in self.widgets:
            w.hide()
            w.deleteLater()
        self.widgets = []
        self.pixel_budget = PixelBudget()  # what this result's images may decode by themselves
        items = blocks if isinstance(blocks, list) else []
        self.empty.setVisible(not items)
        self._todo = iter(items)
        self._reader = reader
        self.done = False
        self._build(self._todo)

    def _build(self, todo: Any) -> None:
        import shiboken6

        if not shiboken6.isValid(self) or todo is not self._todo:
            return  # replaced, or given other blocks since
        started = time.perf_counter()
        for block in todo:
            w = block_widget(block, self._reader, self)
            self.widgets.append(w)
            self._lay.addWidget(w)
            if len(self.widgets) >= AT_ONCE and time.perf_counter() - started > STEP_S:
                QTimer.singleShot(0, lambda: self._build(todo))
                return
        self.done = True

    def blocks(self, kind: str | None = None) -> list[QWidget]:
        return [w for w in self.widgets if kind is None or w.objectName() == f"result:{kind}"]


def render_resource_contents(contents: list[dict]) -> QWidget:
    """The `contents` of a resources/read result, one framed item each (`resourceContents`)."""
    box = QWidget()
    box.setObjectName("resourceContents")
    box.pixel_budget = PixelBudget()  # type: ignore[attr-defined]
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(design.space("s"))
    items = contents if isinstance(contents, list) else []
    if not items:
        lay.addWidget(text_label("(the resource has no contents)", box, role="muted", name="noContent"))
    for item in items:
        frame = QFrame(box)
        frame.setObjectName("resourceItem")
        frame.setFrameShape(QFrame.StyledPanel)
        fl = QVBoxLayout(frame)
        fl.setContentsMargins(design.margins("s", "xs", "s", "s"))
        try:
            fl.addWidget(_resource_body(item, frame))
        except Exception as exc:
            log.exception("rendering resource contents")
            fl.addWidget(text_label(f"⚠ Could not render: {type(exc).__name__}: {exc}", frame, role="error"))
        if isinstance(item, dict) and (item.get("_meta") is not None or item.get("annotations")):
            badges = annotation_badges(item)
            if badges:
                row = BadgeRow(frame, name="annotationBadges")
                row.set_badges([(b, "muted") for b, _ in badges], tips=dict(badges))
                fl.addWidget(row)
        lay.addWidget(frame)
    return box
