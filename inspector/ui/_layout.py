"""Small layout pieces shared by the panes."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget


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


def label_grid(parent: QWidget, fields: tuple[tuple[str, str], ...], prefix: str, *,
               wrap: bool = False) -> tuple[QFormLayout, dict[str, QLabel]]:
    """A form of read-only, selectable plain-text values: one row per (key, caption) of `fields`, each
    value a QLabel named `<prefix>:<key>`. A long value is clipped (or wrapped), never widens the window."""
    form = QFormLayout()
    form.setLabelAlignment(Qt.AlignRight)
    form.setFieldGrowthPolicy(QFormLayout.ExpandingFieldsGrow)
    labels: dict[str, QLabel] = {}
    for key, caption in fields:
        label = QLabel(parent)
        label.setObjectName(f"{prefix}:{key}")
        label.setTextFormat(Qt.PlainText)
        label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        label.setWordWrap(wrap)
        label.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        label.setMinimumWidth(1)
        labels[key] = label
        form.addRow(caption + ":", label)
    return form, labels
