"""Pygments → Qt: syntax colours for one document (the selected message only).

`JsonHighlighter` is a QSyntaxHighlighter whose colours come from a pygments
lexer run once over the whole text (`set_text`); `highlightBlock` only looks the
ranges of its line up. Formats are built once per (style, palette) and reused.
Texts over `HIGHLIGHT_MAX` characters are shown without colours.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pygments.lexer import Lexer
from pygments.lexers import JsonLexer, TextLexer
from pygments.styles import get_style_by_name
from pygments.token import Token, _TokenType
from PySide6.QtGui import QColor, QFont, QPalette, QSyntaxHighlighter, QTextCharFormat, QTextDocument

HIGHLIGHT_MAX = 400_000
LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"

Ranges = list[tuple[int, int, QTextCharFormat]]


def palette_is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


@lru_cache(maxsize=8)
def _formats(style_name: str) -> dict[_TokenType, QTextCharFormat]:
    style = get_style_by_name(style_name)
    formats: dict[_TokenType, QTextCharFormat] = {}
    for ttype, spec in style:
        if not (spec["color"] or spec["bold"] or spec["italic"]):
            continue
        fmt = QTextCharFormat()
        if spec["color"]:
            fmt.setForeground(QColor(f"#{spec['color']}"))
        if spec["bold"]:
            fmt.setFontWeight(QFont.Weight.Bold)
        if spec["italic"]:
            fmt.setFontItalic(True)
        formats[ttype] = fmt
    return formats


def format_for(ttype: _TokenType, style_name: str) -> QTextCharFormat | None:
    """The Qt format of a pygments token type (inherits from the parent types)."""
    if ttype in Token.Text.Whitespace:
        return None
    formats = _formats(style_name)
    while ttype is not Token:
        fmt = formats.get(ttype)
        if fmt is not None:
            return fmt
        ttype = ttype.parent
    return None


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def token_ranges(text: str, lexer: Lexer, style_name: str) -> list[Ranges]:
    """Per line of `text`: (start, length, format) in UTF-16 units, as Qt counts."""
    lines: list[Ranges] = [[]]
    line_start = 0
    wide = _utf16_len(text) != len(text)  # characters outside the BMP count twice in Qt
    for index, ttype, value in lexer.get_tokens_unprocessed(text):
        fmt = format_for(ttype, style_name)
        pos = index
        for k, piece in enumerate(value.split("\n")):
            if k:
                lines.append([])
                line_start = pos
            if fmt is not None and piece:
                if wide:
                    lines[-1].append((_utf16_len(text[line_start:pos]), _utf16_len(piece), fmt))
                else:
                    lines[-1].append((pos - line_start, len(piece), fmt))
            pos += len(piece) + 1
    return lines


class JsonHighlighter(QSyntaxHighlighter):
    """Colours one document with pygments. Call `set_text()` instead of setting
    the document's text yourself."""

    def __init__(self, document: QTextDocument, *, dark: bool = False, lexer: Lexer | None = None) -> None:
        super().__init__(document)
        self._lexer = lexer or JsonLexer()
        self._ranges: list[Ranges] = []
        self.dark = dark

    @property
    def style_name(self) -> str:
        return DARK_STYLE if self.dark else LIGHT_STYLE

    def set_text(self, text: str, *, json: bool = True) -> bool:
        """Replace the document's text; returns True when it was highlighted."""
        colour = len(text) <= HIGHLIGHT_MAX
        lexer = self._lexer if json else TextLexer()
        self._ranges = token_ranges(text, lexer, self.style_name) if colour else []
        self.document().setPlainText(text)  # triggers highlightBlock per line
        return colour and json

    def recolour(self) -> bool:
        """Colour the document's text as it is now (an editor's: its text, cursor and undo stay)."""
        text = self.document().toPlainText()
        colour = len(text) <= HIGHLIGHT_MAX
        self._ranges = token_ranges(text, self._lexer, self.style_name) if colour else []
        self.rehighlight()
        return colour

    def highlightBlock(self, text: str) -> None:
        number = self.currentBlock().blockNumber()
        if 0 <= number < len(self._ranges):
            for start, length, fmt in self._ranges[number]:
                self.setFormat(start, length, fmt)

    def ranges(self) -> list[Ranges]:
        return self._ranges


def lexer_for(mime: str | None, uri: str | None = None) -> Any:
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


def json_lexer() -> Any:
    """Pygments' JSON lexer (imported when first needed)."""
    from pygments.lexers import JsonLexer

    return JsonLexer()
