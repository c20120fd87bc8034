"""A read-only JSON view highlighted with pygments (text inserted as plain text, never HTML)."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor, QFont, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from . import design, theme
from .text import pretty_json

HIGHLIGHT_LIMIT = 200_000  # beyond this, plain text only

_LIGHT = {k: v[0] for k, v in design.named("json-").items()}
_DARK = {k: v[1] for k, v in design.named("json-").items()}


def _kind(token: Any) -> str | None:
    from pygments.token import Keyword, Name, Number, Punctuation, String

    if token in Name.Tag:
        return "key"
    if token in String:
        return "string"
    if token in Number:
        return "number"
    if token in Keyword:
        return "keyword"
    if token in Punctuation:
        return "punct"
    return None


class JsonView(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.NoWrap)
        font = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        font.setStyleHint(QFont.Monospace)
        self.setFont(font)

    def set_json(self, value: Any) -> None:
        self.set_json_text(pretty_json(value))

    def set_json_text(self, text: str) -> None:
        self.clear()
        if len(text) > HIGHLIGHT_LIMIT:
            self.setPlainText(text)
            return
        from pygments.lexers import JsonLexer

        colours = _DARK if theme.is_dark() else _LIGHT
        formats: dict[str | None, QTextCharFormat] = {None: QTextCharFormat()}
        for name, c in colours.items():
            f = QTextCharFormat()
            f.setForeground(QColor(c))
            formats[name] = f
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        for token, value in JsonLexer().get_tokens(text):
            cursor.insertText(value, formats[_kind(token)])
        cursor.endEditBlock()
        self.moveCursor(QTextCursor.Start)
