"""A non-blocking message strip at the top of the window (never a modal dialog)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from . import design, theme
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
        self.action = QPushButton(self)  # one thing to do about the message (Undo), when it offers one
        self.action.setObjectName("errorBannerAction")
        self.action.hide()
        self.action.clicked.connect(self._act)
        self._do: Callable[[], object] | None = None
        close = QToolButton(self)
        close.setObjectName("errorBannerClose")
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.dismiss)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(design.margins("m", "s", "s", "s"))
        lay.addWidget(self.label, 1)
        lay.addWidget(self.action, 0, Qt.AlignTop)
        lay.addWidget(close, 0, Qt.AlignTop)
        self.hide()

    def restyle(self) -> None:
        kind = "banner" if self.level == "error" else "info-banner"
        self.setStyleSheet(design.box_css("#errorBanner", theme.colour(kind).name(),
                                          theme.colour(kind + "-border").name()))

    def show_message(self, text: str, details: str | None = None, level: str = "error", *,
                     action: tuple[str, str, Callable[[], object]] | None = None) -> None:
        """`action`: (label, objectName, what it does) of a button beside the message, gone with it."""
        if level != "error" and self.isVisible() and self.level == "error" and action is None:
            return  # never hide an error behind a notice (one offering an Undo is worth more)
        self._do = action[2] if action is not None else None
        self.action.setText(action[0] if action is not None else "")
        self.action.setObjectName(action[1] if action is not None else "errorBannerAction")
        self.action.setVisible(action is not None)
        self.level = level
        self.count = self.count + 1 if level == "error" else 0
        more = f"  (+{self.count - 1} earlier)" if self.count > 1 else ""
        self.label.setText(visible_block(text, 2000) + more)
        self.label.setToolTip(plain_tooltip(details[-4000:]) if details else "")
        self.details = details
        self.restyle()
        self.show()

    def offers(self, name: str) -> bool:
        """Whether the banner shows the action button `name` now."""
        return self.isVisible() and self.action.isVisible() and self.action.objectName() == name

    def _act(self) -> None:
        do = self._do
        self.dismiss()
        if do is not None:
            do()

    def dismiss(self) -> None:
        self.count = 0
        self._do = None
        self.action.hide()
        self.hide()
