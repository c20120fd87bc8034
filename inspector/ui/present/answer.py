"""The answer of one call in presentation mode (`presentResult`), or what went wrong (`presentError`), in large
type: Markdown rendered safely, images large and centred, audio with a play button, structured content as
labelled fields and tables, resource links as buttons that open their content inside the card. The JSON, codes
and timings wait behind `presentDetails`, a disclosure that starts closed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPixmap
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ... import media
from ...session.calls import CallRecord
from ..base import design
from ..render.media import AudioView
from ..render.result_view import text_matches
from ..render.text import SafeMarkdown
from . import words
from .friendly_form import plain_label

Reader = Callable[[str], Awaitable[dict[str, Any]]]
IMAGE_MAX = 640  # the longest side an image is shown at, before zoom
SCALES = (125, 150, 200, 250, 300)  # the answer's text sizes, in % of the stage's body text (`presentScale`)
FIELDS_SCALE = 150  # structured answers: label and value rows (a few short ones larger)


def fields_scale(value: dict[str, Any], room: QSize | None = None, body_pt: float = 14.0) -> int:
    """Label and value rows at two and a half times the body's size when there are a few short ones (at most
    four), twice for up to six, else one and a half; smaller when the rows would not fit in `room` (the stage's
    page, in pixels) side by side and all in view."""
    short = all(words.table_of(v) is None and len(words.value_text(v)) <= 40 for v in value.values())
    best = (250 if len(value) <= 4 else 200 if len(value) <= 6 else FIELDS_SCALE) if short else FIELDS_SCALE
    if room is None or not value:
        return best
    for scale in sorted((s for s in SCALES if FIELDS_SCALE <= s <= best), reverse=True):
        font = QFont()
        font.setPointSizeF(body_pt * scale / 100)
        plain = QFontMetrics(font)
        font.setBold(True)
        bold = QFontMetrics(font)
        wide = max(bold.horizontalAdvance(words.label_of(str(k), None) + ":") for k in value) + \
            max(plain.horizontalAdvance(words.value_text(v)) for v in value.values()) + 24
        tall = len(value) * (plain.lineSpacing() + 10) + 3 * plain.lineSpacing()  # the rows, Details, margins
        if wide <= room.width() - 80 and tall <= room.height():
            return scale
    return FIELDS_SCALE


def text_scale(text: str) -> int:
    """How large an answer's text is shown: a value or a few words at three times the body's size, a short text
    at twice, a paragraph at one and a half, anything longer at one and a quarter."""
    flat = " ".join(str(text).split())
    if len(flat) <= 40 and "\n" not in str(text).strip():
        return 300
    if len(flat) <= 160:
        return 200
    return 150 if len(flat) <= 600 else 125


def scaled(widget: Any, scale: int) -> Any:
    """`widget` at `scale` % of the body text (the stage's style sheet sizes it by this property)."""
    widget.setProperty("presentScale", str(scale))
    return widget


class Markdown(SafeMarkdown):
    """Text of the answer: Markdown without HTML, images or navigation, as tall as its text (no inner scrolling)."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("presentText")
        self.setFrameShape(QFrame.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Minimum)
        self.set_markdown(text)
        self.setAccessibleName("Answer text")
        self.setAccessibleDescription(self.toPlainText()[:500])
        self.document().contentsChanged.connect(self.updateGeometry)

    def sizeHint(self) -> Any:
        hint = super().sizeHint()
        self.document().setTextWidth(max(200, self.viewport().width()))
        hint.setHeight(int(self.document().size().height()) + 12)
        return hint

    def minimumSizeHint(self) -> Any:
        return self.sizeHint()

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self.updateGeometry()


def image_label(data: Any, parent: QWidget | None = None, what: str = "Picture") -> QLabel:
    """An image large and centred; its refusal in words when it cannot be shown."""
    label = QLabel(parent)
    label.setObjectName("presentImage")
    label.setAlignment(Qt.AlignCenter)
    try:
        raw = media.decode_base64(data, "the image")
        info = media.image_info(raw)
        image = QImage.fromData(raw) if info.format != "SVG" else QImage()
    except media.MediaError:
        image = QImage()
    if image.isNull():
        label.setText("This picture can't be shown.")
        return label
    pix = QPixmap.fromImage(image)
    if max(pix.width(), pix.height()) < IMAGE_MAX // 2:
        pix = pix.scaled(pix.width() * 2, pix.height() * 2, Qt.KeepAspectRatio, Qt.SmoothTransformation)
    elif max(pix.width(), pix.height()) > IMAGE_MAX:
        pix = pix.scaled(IMAGE_MAX, IMAGE_MAX, Qt.KeepAspectRatio, Qt.SmoothTransformation)
    label.setPixmap(pix)
    label.setAccessibleName(what)
    label.setAccessibleDescription(f"{what}, {image.width()} by {image.height()} pixels")
    return label


def fields_widget(value: dict[str, Any], schema: Any, parent: QWidget | None = None, scale: int = 100) -> QWidget:
    """An object as "label: value" rows (a value goes under its label when the two do not fit side by side);
    an array of objects inside it as a table."""
    box = QWidget(parent)
    box.setObjectName("presentFields")
    form = QFormLayout(box)
    form.setLabelAlignment(Qt.AlignLeft)
    form.setRowWrapPolicy(QFormLayout.WrapLongRows)
    form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
    form.setHorizontalSpacing(design.space("xxl"))
    form.setVerticalSpacing(design.space("m"))
    for key, item in value.items():
        label = plain_label(words.label_of(str(key), schema) + ":")
        label.setObjectName("presentFieldLabel")
        label.setWordWrap(False)  # whole: the value moves under it instead
        scaled(label, scale)
        bold = label.font()
        bold.setBold(True)
        label.setFont(bold)
        table = words.table_of(item)
        shown: QWidget = table_widget(*table, box) if table is not None else plain_label(words.value_text(item))
        if isinstance(shown, QLabel):
            scaled(shown, scale)
            shown.setObjectName("presentFieldValue")
            shown.setTextInteractionFlags(Qt.TextSelectableByMouse)
            shown.setAccessibleName(f"{label.text()} {shown.text()}")
        form.addRow(label, shown)
    return box


def table_widget(columns: list[str], rows: list[list[str]], parent: QWidget | None = None) -> QTableWidget:
    table = QTableWidget(len(rows), len(columns), parent)
    table.setObjectName("presentTable")
    table.setHorizontalHeaderLabels(columns)
    table.verticalHeader().hide()
    table.setEditTriggers(QTableWidget.NoEditTriggers)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            table.setItem(r, c, QTableWidgetItem(text))
    table.setAccessibleName("Table")
    table.setAccessibleDescription(f"{len(rows)} rows, columns: {', '.join(columns)}")
    height = table.horizontalHeader().sizeHint().height() + sum(table.rowHeight(r) for r in range(len(rows))) + 6
    table.setMinimumHeight(min(height, 420))
    return table


def structured_shown(result: dict[str, Any]) -> bool:
    """Whether the structured content adds something the text blocks do not already say."""
    structured = result.get("structuredContent")
    if structured is None:
        return False
    blocks = result.get("content")
    texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"] \
        if isinstance(blocks, list) else []
    if isinstance(structured, dict) and list(structured) == ["result"] and structured["result"] in texts:
        return False  # the SDK's wrapping of a plain answer
    return True


class AnswerCard(QFrame):
    """One call's outcome for an audience: the answer, or a calm message; Details (closed) with the rest."""

    def __init__(self, rec: CallRecord, tool: dict[str, Any], reader: Reader | None = None,
                 parent: QWidget | None = None, *, room: QSize | None = None, body_pt: float = 14.0) -> None:
        """`room`: the stage's page the card is shown in, at `body_pt` body text (the answer's sizes fit it)."""
        super().__init__(parent)
        self.rec = rec
        self.room, self.body_pt = room, body_pt
        self.reader = reader
        self.tasks: set[asyncio.Future[Any]] = set()
        self.setFrameShape(QFrame.StyledPanel)
        self.lay = QVBoxLayout(self)
        self.lay.setContentsMargins(design.margins("xl", "xxl"))
        self.lay.setSpacing(design.space("l"))
        result = rec.result if isinstance(rec.result, dict) else {}
        self.failed = rec.outcome != "ok" and rec.outcome != "tool error"
        self.tool_error = rec.outcome == "tool error" or result.get("isError") is True
        self.setObjectName("presentError" if self.failed or self.tool_error else "presentResult")
        self.tool = tool
        title = words.tool_title(tool)
        if self.failed or self.tool_error:
            self._problem(result, title)
        else:
            self._answer(result, tool)
        self._details(rec)
        self.lay.addStretch(1)  # the room left (the card fills the stage) goes under Details

    # ------------------------------------------------------------------ what is shown
    def _answer(self, result: dict[str, Any], tool: dict[str, Any]) -> None:
        blocks = result.get("content") if isinstance(result.get("content"), list) else []
        structured = result.get("structuredContent")
        show_structured = structured_shown(result)
        skip_text = show_structured and text_matches(structured, blocks)
        said = False
        texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
                 and isinstance(b.get("text"), str)] if not skip_text else []
        alone = len(texts) == 1 and len(blocks) == 1 and not show_structured  # the answer is this text
        largest = 300 if alone else 200
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                if not skip_text:
                    self.lay.addWidget(scaled(Markdown(block["text"], self), min(largest, text_scale(block["text"]))))
                    said = True
            elif kind == "image":
                self.lay.addWidget(image_label(block.get("data"), self))
                said = True
            elif kind == "audio":
                audio = AudioView(block.get("data"), block.get("mimeType"), self)
                audio.setObjectName("presentAudio")
                audio.setAccessibleName("Sound")
                self.lay.addWidget(audio)
                said = True
            elif kind == "resource_link" and isinstance(block.get("uri"), str):
                self.lay.addWidget(self._link(block))
                said = True
            elif kind == "resource" and isinstance(block.get("resource"), dict):
                self.lay.addWidget(self._contents([block["resource"]], block["resource"].get("title") or
                                                  block["resource"].get("name") or "Attached document"))
                said = True
        if show_structured:
            if isinstance(structured, dict):
                self.lay.addWidget(fields_widget(structured, tool.get("outputSchema"), self,
                                                 fields_scale(structured, self.room, self.body_pt)))
            else:
                table = words.table_of(structured)
                self.lay.addWidget(table_widget(*table, self) if table is not None else scaled(
                    plain_label(words.value_text(structured), "presentFieldValue"),
                    text_scale(words.value_text(structured))))
            said = True
        if not said:
            self.lay.addWidget(plain_label("Done. The tool had nothing more to say.", "presentText", self))

    def _problem(self, result: dict[str, Any], title: str) -> None:
        head = plain_label("⚠ That didn't work", "presentErrorTitle", self)
        f = head.font()
        f.setBold(True)
        f.setPointSizeF(design.size("heading", f.pointSizeF()))
        head.setFont(f)
        self.lay.addWidget(head)
        if self.tool_error:
            texts = [b.get("text") for b in result.get("content") or [] if isinstance(b, dict)
                     and isinstance(b.get("text"), str) and b.get("text").strip()]
            said = words.server_words(" ".join(texts), self.tool) if texts else \
                f"“{title}” couldn't finish, and the server didn't say why."
        else:
            code = getattr(self.rec.error, "code", None)
            said = words.failure_words(self.rec.outcome, code)
            server_said = self.rec.error_text if self.rec.outcome == "rejected" else ""
            if server_said and server_said not in said:
                said += f" The server said: “{words.server_words(server_said, self.tool)}”"
        message = plain_label(said, "presentErrorText", self)
        message.setAccessibleName("What went wrong")
        message.setAccessibleDescription(said)
        message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.lay.addWidget(message)

    def _link(self, block: dict[str, Any]) -> QWidget:
        box = QWidget(self)
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        name = block.get("title") or block.get("name") or "the document"
        button = QPushButton(f"Open “{name}”", box)
        button.setObjectName("presentOpenLink")
        button.setAccessibleName(f"Open {name}")
        button.setAccessibleDescription(str(block.get("description") or "Show this document here"))
        button.setEnabled(self.reader is not None)
        lay.addWidget(button, 0, Qt.AlignLeft)
        if isinstance(block.get("description"), str):
            lay.addWidget(plain_label(block["description"], "presentLinkNote", box))

        def opened() -> None:
            button.setEnabled(False)
            button.setText(f"Opening “{name}”…")
            job = asyncio.ensure_future(self._open(block["uri"], name, box, button))
            self.tasks.add(job)
            job.add_done_callback(self.tasks.discard)
        button.clicked.connect(opened)
        return box

    async def _open(self, uri: str, name: str, box: QWidget, button: QPushButton) -> None:
        import shiboken6

        try:
            assert self.reader is not None
            result = await self.reader(uri)
            contents = result.get("contents") if isinstance(result, dict) else None
            shown: QWidget = self._contents(contents if isinstance(contents, list) else [], name)
        except asyncio.CancelledError:
            raise
        except Exception:
            shown = plain_label(f"“{name}” couldn't be opened.", "presentErrorText")
        if shiboken6.isValid(box):
            box.layout().addWidget(shown)
            button.setText(f"“{name}”")

    def _contents(self, contents: list[Any], name: str) -> QWidget:
        box = QFrame(self)
        box.setObjectName("presentDocument")
        box.setFrameShape(QFrame.StyledPanel)
        lay = QVBoxLayout(box)
        lay.addWidget(plain_label(str(name), "presentDocumentTitle", box))
        for item in contents:
            if not isinstance(item, dict):
                continue
            mime = str(item.get("mimeType") or "")
            if isinstance(item.get("text"), str):
                if mime == "application/json":
                    ok, value = _json(item["text"])
                    if ok and isinstance(value, dict):
                        lay.addWidget(fields_widget(value, None, box))
                        continue
                lay.addWidget(Markdown(item["text"], box))
            elif mime.startswith("image/"):
                lay.addWidget(image_label(item.get("blob"), box))
            else:
                lay.addWidget(plain_label("This document can't be shown here.", "presentText", box))
        return box

    def _details(self, rec: CallRecord) -> None:
        self.details = QToolButton(self)
        self.details.setObjectName("presentDetails")
        self.details.setText("Details")
        self.details.setCheckable(True)
        self.details.setChecked(False)
        self.details.setArrowType(Qt.RightArrow)
        self.details.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        self.details.setAccessibleName("Details")
        self.details.setAccessibleDescription("Show the technical details of this answer")
        self.details_view = QPlainTextEdit(self)
        self.details_view.setObjectName("presentDetailsText")
        self.details_view.setReadOnly(True)
        self.details_view.setAccessibleName("Technical details")
        self.details_view.hide()
        self.details.toggled.connect(self._toggle_details)
        self.lay.addWidget(self.details, 0, Qt.AlignLeft)
        self.lay.addWidget(self.details_view)

    def _toggle_details(self, on: bool) -> None:
        self.details.setArrowType(Qt.DownArrow if on else Qt.RightArrow)
        if on and not self.details_view.toPlainText():
            lines = [f"tool: {self.rec.tool}", f"outcome: {self.rec.outcome}",
                     f"time: {self.rec.elapsed * 1000:.0f} ms"]
            code = getattr(self.rec.error, "code", None)
            if code is not None:
                lines.append(f"error code: {code}")
            if self.rec.error_text:
                lines.append(f"error: {self.rec.error_text}")
            lines += ["", "arguments:", json.dumps(self.rec.arguments, indent=2, ensure_ascii=False)]
            if self.rec.result is not None:
                lines += ["", "result:", json.dumps(self.rec.result, indent=2, ensure_ascii=False)[:200_000]]
            self.details_view.setPlainText("\n".join(lines))
        self.details_view.setVisible(on)

    def text(self) -> str:
        """Everything the card says (what a screen reader reads), Details left out while closed."""
        out = []
        for w in self.findChildren(QWidget):
            if not w.isVisibleTo(self):
                continue
            if isinstance(w, QLabel):
                out.append(w.text())
            elif isinstance(w, QTextBrowser | QPlainTextEdit):
                out.append(w.toPlainText())
        return "\n".join(t for t in out if t)


def _json(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None
