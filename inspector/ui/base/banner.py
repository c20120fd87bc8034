"""A non-blocking message strip at the top of the window (never a modal dialog)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from . import theme
from .text import plain_tooltip, visible_block


class Banner(QFrame):
    """A non-blocking message strip at the top of the window (errors of ours or of a server)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorBanner")
        self.label = QLabel(self)
        self.label.setObjectName("errorBannerText")
        self.label.setTextFormat(Qt.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.details: str | None = None
        self.count = 0
        self.level = "error"
        close = QToolButton(self)
        close.setObjectName("errorBannerClose")
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.dismiss)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 6, 6, 6)
        lay.addWidget(self.label, 1)
        lay.addWidget(close, 0, Qt.AlignTop)
        self.hide()

    def restyle(self) -> None:
        kind = "banner" if self.level == "error" else "info-banner"
        self.setStyleSheet(f"#errorBanner {{ background: {theme.colour(kind).name()}; "
                           f"border: 1px solid {theme.colour(kind + '-border').name()}; border-radius: 4px; }}")

    def show_message(self, text: str, details: str | None = None, level: str = "error") -> None:
        if level != "error" and self.isVisible() and self.level == "error":
            return  # never hide an error behind a notice
        self.level = level
        self.count = self.count + 1 if level == "error" else 0
        more = f"  (+{self.count - 1} earlier)" if self.count > 1 else ""
        self.label.setText(visible_block(text, 2000) + more)
        self.label.setToolTip(plain_tooltip(details[-4000:]) if details else "")
        self.details = details
        self.restyle()
        self.show()

    def dismiss(self) -> None:
        self.count = 0
        self.hide()
