"""Small layout pieces shared by the panes."""

from __future__ import annotations

from PySide6.QtWidgets import QScrollArea, QVBoxLayout, QWidget


def scrolling_column(parent: QWidget, name: str, *widgets: QWidget) -> QScrollArea:
    """A frameless scroll area (objectName `name`) stacking `widgets` from the top."""
    scroll = QScrollArea(parent)
    scroll.setObjectName(name)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.NoFrame)
    inner = QWidget(scroll)
    lay = QVBoxLayout(inner)
    lay.setContentsMargins(0, 0, 6, 0)
    for widget in widgets:
        lay.addWidget(widget)
    lay.addStretch(1)
    scroll.setWidget(inner)
    return scroll
