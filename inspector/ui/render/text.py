"""Text as results show it: read-only, opening fast whatever its size (a preview at once, "Show all"
appending the rest a slice per event-loop turn, never one long stall), coloured by pygments when small,
and Markdown rendered safely on request (no HTML, no images, links only shown).
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import QTimer, QUrl, Signal
from PySide6.QtGui import QFont, QTextCursor, QTextDocument
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QPlainTextEdit, QSizePolicy, QTextBrowser, QVBoxLayout, QWidget

from ...private import open_private
from ..base import design, theme
from ..base.highlight import JsonHighlighter
from ..base.layout import mono_font as fixed_font
from ..base.layout import small_button, text_label
from ..base.text import hidden_tooltip, visible_block

log = logging.getLogger("spyglass.ui.results")

PREVIEW_CHARS = 64_000          # text shown at once; the rest on "Show all"
LINE_PREVIEW_CHARS = 16_000     # ... of a longer text that starts with a line longer than this (minified JSON):
                                # Qt lays a line out in one piece, 64,000 characters of one took 20 ms


JSON_PARSE_MAX = 1_000_000      # text longer than this is not tried as JSON


HIGHLIGHT_LIMIT = 100_000       # pygments colours only below this many characters


CHUNK_CHARS = 32_000            # "Show all" starts with slices this big, then adapts them ...


TURN_TARGET_S = 0.025           # ... so that one event-loop turn (insert + Qt's layout) takes about this long


MARKDOWN_MAX = 100_000          # Markdown renders at most this much (a note says so)
MARKDOWN_STEP = 2_000           # Markdown rendered in one turn of the loop (a table of 100,000 froze it 11 s)
_FEATURES = QTextDocument.MarkdownFeature(QTextDocument.MarkdownDialectGitHub.value
                                          | QTextDocument.MarkdownNoHTML.value)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def mono_font() -> QFont:
    return fixed_font()


def human_size(n: int | float | None) -> str:
    if not isinstance(n, (int, float)) or isinstance(n, bool) or n < 0:
        return "unknown size"
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"


def save_bytes(parent: QWidget, data: bytes, suggested: str) -> str | None:
    """Ask where to save `data` (non-native dialog, window-modal); returns the path written."""
    path, _ = QFileDialog.getSaveFileName(parent, "Save", suggested)
    if not path:
        return None
    try:
        with open_private(path, "wb") as f:
            f.write(data)
    except OSError as exc:
        log.warning("could not save %s: %s", path, exc)
        return None
    return path


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


_MD_SIGNS = (
    ("heading", re.compile(r"^#{1,6} \S", re.M)),
    ("list", re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)]) \S.*\n\s{0,3}(?:[-*+]|\d{1,3}[.)]) \S", re.M)),
    ("table", re.compile(r"^\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$", re.M)),
    ("code", re.compile(r"^(?:```|~~~)", re.M)),
    ("emphasis", re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")),
    ("link", re.compile(r"\[[^\]\n]+\]\([^)\s]+\)")),
    ("quote", re.compile(r"^> \S", re.M)),
)
MD_SNIFF = 20_000  # characters looked at to tell Markdown from plain text


def looks_like_markdown(text: str) -> bool:
    """Whether a text is Markdown a reader would rather see rendered: two kinds of Markdown in its first
    20,000 characters (a heading and a list, a table and emphasis...), or a heading or a table above more
    text. A plain sentence with an asterisk, a path or a log is not."""
    head = text[:MD_SNIFF]
    found = {kind for kind, sign in _MD_SIGNS if sign.search(head)}
    return len(found) >= 2 or bool(found & {"heading", "table"}) and head.count("\n") >= 2


def _bytes(text: str) -> int:
    """A text's size in UTF-8 (its length in characters when it is too big to encode just to measure)."""
    return len(text.encode("utf-8", "replace")) if len(text) < 4_000_000 else len(text)


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
        lay.setSpacing(design.space("hair"))
        lay.addWidget(self.edit)
        self.more = QWidget(self)
        ml = QHBoxLayout(self.more)
        ml.setContentsMargins(0, 0, 0, 0)
        self.more_label = text_label("", self.more, name="textPreviewNote", role="warning", wrap=False)
        self.show_all = small_button("Show all", "Load the whole text (in the background)", name="showAllButton")
        self.save = small_button("Save…", "Save the whole text to a file", name="saveTextButton")
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
        if len(preview) < len(text) and "\n" not in preview[:LINE_PREVIEW_CHARS]:
            preview = preview[:LINE_PREVIEW_CHARS]
        shown = visible_block(preview, limit=PREVIEW_CHARS + 1)
        self.edit.setToolTip(hidden_tooltip(text))
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
                                    f"({human_size(_bytes(text))}).")

    def _lines(self) -> int:
        doc = self.edit.document()
        lines = doc.blockCount()
        if self.edit.lineWrapMode() != QPlainTextEdit.NoWrap:
            width = max(1, self.edit.viewport().width() // max(1, self.edit.fontMetrics().averageCharWidth()))
            lines += doc.characterCount() // max(40, min(width, 200))
        else:
            lines += 1  # room for a horizontal scroll bar
        return max(1, lines)

    def _fit_height(self, max_height: int) -> None:
        fm = self.edit.fontMetrics()
        self.edit.setFixedHeight(min(max_height, min(self._lines(), 60) * fm.lineSpacing() + 14))

    def fill(self, room: int) -> None:
        """Take up to `room` pixels (the answer's whole viewport, when this text is all it shows): as tall
        as the text, no taller, so its own scroll bar is the only one."""
        wanted = self._lines() * self.edit.fontMetrics().lineSpacing() + 14
        self.edit.setMaximumHeight(16777215)
        self.edit.setFixedHeight(max(60, min(room, wanted)))

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
        cursor.insertText(visible_block(self.full[self._shown : end], limit=self._chunk + 1))
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


def markdown_pieces(text: str, size: int = MARKDOWN_STEP) -> Iterator[str]:
    """`text` in pieces of about `size` characters that each render as Markdown on their own: cut at a blank
    line where there is one, else at a line's end; a table cut in two gets its header rows again, a code
    block cut in two is closed and opened again."""
    pos, total = 0, len(text)
    header = fence = ""
    while pos < total:
        end = total
        if pos + size < total:
            end = text.rfind("\n\n", pos + 1, pos + size)
            if end <= pos:
                end = text.rfind("\n", pos + 1, pos + size)
            if end <= pos:
                end = text.find("\n", pos + size)
                end = total if end == -1 else end
        piece = text[pos:end].strip("\n")
        pos = end
        if fence:
            piece = fence + "\n" + piece
        elif header and piece.startswith("|"):
            piece = header + "\n" + piece
        lines = piece.split("\n")
        fence, header = "", ""
        for i, line in enumerate(lines):
            mark = line.lstrip()[:3]
            if mark in ("```", "~~~"):
                fence = "" if fence else line.strip()
            elif not fence and i and _TABLE_RULE.match(line) and lines[i - 1].lstrip().startswith("|"):
                header = lines[i - 1] + "\n" + line
            elif not line.lstrip().startswith("|"):
                header = "" if not fence else header
        if fence:
            piece += "\n" + fence[:3]
        yield piece


class SafeMarkdown(QTextBrowser):
    """Markdown rendered without HTML, images or navigation: a clicked link only shows its target. A long
    text is rendered a piece at a time (`MARKDOWN_STEP` characters a turn of the loop: laying out a table
    costs about 15 ms a thousand characters here), up to `MARKDOWN_MAX`; `grew` says a piece was added and
    `done` is True once all of it is there."""

    linkShown = Signal(str)
    grew = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("markdownView")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(lambda url: self.linkShown.emit(url.toString()))
        self.done = True
        self._pieces: Iterator[str] = iter(())

    def set_markdown(self, text: str) -> None:
        self._pieces = markdown_pieces(text[:MARKDOWN_MAX])
        self.document().setMarkdown(next(self._pieces, ""), _FEATURES)
        self.done = False
        pieces = self._pieces
        QTimer.singleShot(0, lambda: self._step(pieces))

    def _step(self, pieces: Iterator[str]) -> None:
        import shiboken6

        if not shiboken6.isValid(self) or pieces is not self._pieces:
            return  # gone, or given another text since
        piece = next(pieces, None)
        if piece is None:
            self.done = True
        else:
            cursor = QTextCursor(self.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertBlock()
            cursor.insertMarkdown(piece, _FEATURES)
            QTimer.singleShot(0, lambda: self._step(pieces))
        self.grew.emit()

    def loadResource(self, kind: int, name: QUrl) -> Any:
        return None  # no image, remote or local, is ever loaded


def fill_one_text(host: QWidget, viewport_height: int, around: QWidget) -> None:
    """When `host` shows one text (an answer, a resource's contents), let it fill what `around` leaves of
    a scroll area's viewport `viewport_height` tall: the text's own scroll bar is then the only one."""
    texts = [v for v in host.findChildren(TextView) if v.isVisibleTo(host)]
    if len(texts) != 1:
        return
    view = texts[0]
    others = around.sizeHint().height() - view.edit.height()
    view.fill(max(viewport_height - others - 2, 0))

