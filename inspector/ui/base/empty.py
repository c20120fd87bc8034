"""The empty state every list-and-detail pane shows when it has nothing to list (`EmptyState`): a title, a
sentence that says why and what to do, and the actions that do it — never a blank white box.

The sentence wraps at a readable measure (about 70 characters) and is centred with the title and the buttons.
A word-wrapped QLabel given a layout alignment is laid out at its size hint and cut ("A collection keeps calls
with"); here the label spans the width and the widget narrows it with its margins instead, so the whole
sentence is always shown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from . import design, theme

MEASURE_CHARS = 70  # the longest line of the sentence, in average characters


class EmptyState(QWidget):
    """`name` names the widget; its title is `<name>Title`, its sentence `<name>Text`, its buttons as given."""

    def __init__(self, parent: QWidget | None, name: str, title: str = "", text: str = "",
                 actions: Sequence[tuple[str, str, Callable[[], Any]]] = ()) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.title = QLabel(title, self)
        self.title.setObjectName(f"{name}Title")
        self.title.setTextFormat(Qt.PlainText)
        self.title.setAlignment(Qt.AlignCenter)
        self.title.setWordWrap(True)
        f = self.title.font()
        f.setBold(True)
        f.setPointSizeF(design.size("heading", f.pointSizeF()))
        self.title.setFont(f)
        self.text = QLabel(text, self)
        self.text.setObjectName(f"{name}Text")
        self.text.setTextFormat(Qt.PlainText)
        self.text.setWordWrap(True)
        self.text.setAlignment(Qt.AlignHCenter | Qt.AlignTop)
        self.text.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
        self.text.setStyleSheet(f"color: {theme.colour('muted').name()};")
        self.buttons: dict[str, QPushButton] = {}
        row = QHBoxLayout()
        row.addStretch(1)
        for label, object_name, slot in actions:
            button = QPushButton(label, self)
            button.setObjectName(object_name)
            button.clicked.connect(lambda _=False, s=slot: s())
            self.buttons[object_name] = button
            row.addWidget(button)
        row.addStretch(1)
        lay = QVBoxLayout(self)
        lay.addStretch(1)
        lay.addWidget(self.title)
        lay.addWidget(self.text)
        lay.addSpacing(design.space("m"))
        lay.addLayout(row)
        lay.addStretch(2)
        self._narrow()

    def say(self, title: str, text: str) -> None:
        self.title.setText(title)
        self.title.setVisible(bool(title))
        self.text.setText(text)
        self.text.setVisible(bool(text))

    def _narrow(self) -> None:
        measure = self.fontMetrics().averageCharWidth() * MEASURE_CHARS
        edge = design.space("l")
        side = max(edge, (self.width() - measure) // 2)
        self.layout().setContentsMargins(side, edge, side, edge)

    def resizeEvent(self, event: Any) -> None:
        self._narrow()
        super().resizeEvent(event)

    def changeEvent(self, event: Any) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._narrow()
