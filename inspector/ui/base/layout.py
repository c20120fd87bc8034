"""Small layout pieces shared by the panes."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QApplication,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from . import design, theme


def mono_font() -> QFont:
    """The platform's fixed-width font at the size of the interface's text: the text-size preference
    (applied to the application's font) reaches messages and results too, not only labels."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    size = QApplication.font().pointSizeF()
    if size > 0:
        font.setPointSizeF(size)
    return font


def scrolling_column(parent: QWidget, name: str, *widgets: QWidget) -> QScrollArea:
    """A frameless scroll area (objectName `name`) stacking `widgets` from the top."""
    scroll = QScrollArea(parent)
    scroll.setObjectName(name)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.NoFrame)
    inner = QWidget(scroll)
    lay = QVBoxLayout(inner)
    lay.setContentsMargins(design.margins("none", "none", "s", "none"))
    for widget in widgets:
        lay.addWidget(widget)
    lay.addStretch(1)
    scroll.setWidget(inner)
    return scroll


def scrolled_page(page: QWidget) -> QVBoxLayout:
    """The layout to fill `page` with, inside a frameless scroll area that fills it: a tab whose content
    needs more height than a short screen gives scrolls, instead of making the whole window taller."""
    outer = QVBoxLayout(page)
    outer.setContentsMargins(0, 0, 0, 0)
    scroll = QScrollArea(page)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.NoFrame)
    inner = QWidget(scroll)
    scroll.setWidget(inner)
    outer.addWidget(scroll)
    return QVBoxLayout(inner)


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


def title_label(parent: QWidget, name: str) -> QLabel:
    """The heading of a detail view (a tool, a prompt, a resource): plain text, bold, 1.2 times larger,
    selectable, wrapping."""
    label = QLabel(parent)
    label.setObjectName(name)
    label.setTextFormat(Qt.PlainText)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    label.setWordWrap(True)
    font = label.font()
    font.setPointSizeF(design.size("heading", font.pointSizeF()))
    font.setBold(True)
    label.setFont(font)
    return label


class ListHeader:
    """Above a pane's list, as on every list-and-detail tab (Tools, Resources, Prompts): a search box across the
    list's width, then the count and a Refresh button on one row beneath it, then the cache note and a message
    (hidden until there is one), each named as the caller says. `search`: (name, placeholder, called with the
    text as it is typed). Two rows, so a narrow list keeps a search box one can type in."""

    def __init__(self, parent: QWidget, *, refresh: tuple[str, str, Callable[[], None]], count: str, cache: str,
                 message: str, search: tuple[str, str, Callable[[str], None]] | None = None) -> None:
        name, tip, on_click = refresh
        self.refresh_button = QPushButton("Refresh", parent)
        self.refresh_button.setObjectName(name)
        self.refresh_button.setToolTip(tip)
        self.refresh_button.clicked.connect(on_click)
        self.count = plain_label(parent, count, wrap=False)
        self.cache = plain_label(parent, cache)
        self.message = plain_label(parent, message)
        self.message.hide()
        self.search: QLineEdit | None = None
        if search is not None:
            self.search = search_box(parent, search[0], search[1])
            self.search.textChanged.connect(search[2])
        self.count.setMinimumWidth(1)  # a narrow list: the count gives way, Refresh stays whole
        self.row = QHBoxLayout()
        self.row.addWidget(self.count, 1)
        self.row.addWidget(self.refresh_button)

    def add_to(self, layout: QVBoxLayout) -> None:
        if self.search is not None:
            layout.addWidget(self.search)
        layout.addLayout(self.row)
        layout.addWidget(self.cache)
        layout.addWidget(self.message)


def search_box(parent: QWidget, name: str, placeholder: str) -> QLineEdit:
    """The filter box of a list (the same on every tab): a placeholder that says what it matches, a clear button."""
    box = QLineEdit(parent)
    box.setObjectName(name)
    box.setPlaceholderText(placeholder)
    box.setClearButtonEnabled(True)
    return box


def heading_label(text: str, parent: QWidget) -> QLabel:
    """A section's heading: bold, plain text."""
    label = QLabel(text, parent)
    label.setTextFormat(Qt.PlainText)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


def plain_label(parent: QWidget, name: str = "", *, wrap: bool = True, selectable: bool = False,
                bold: bool = False) -> QLabel:
    """A label for text that is never rich text (a server's words included), named `name`."""
    label = QLabel(parent)
    if name:
        label.setObjectName(name)
    label.setTextFormat(Qt.PlainText)
    label.setWordWrap(wrap)
    if selectable:
        label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    if bold:
        font = label.font()
        font.setBold(True)
        label.setFont(font)
    return label


def text_label(text: str, parent: QWidget | None = None, *, name: str = "", wrap: bool = True,
               selectable: bool = True, role: str | None = None) -> QLabel:
    """Plain text (never rich text), selectable unless told otherwise, coloured by a theme `role`."""
    lab = QLabel(parent)
    lab.setTextFormat(Qt.PlainText)
    lab.setText(text)
    lab.setWordWrap(wrap)
    if selectable:
        lab.setTextInteractionFlags(Qt.TextSelectableByMouse)
    if name:
        lab.setObjectName(name)
    if role:
        lab.setStyleSheet(f"color: {theme.colour(role).name()};")
    return lab


def small_button(text: str, tip: str = "", *, name: str = "", tool: bool = True) -> QToolButton | QPushButton:
    """A compact button in a block's header or a media row, reached by Tab (not by a click's focus)."""
    b: QToolButton | QPushButton = QToolButton() if tool else QPushButton()
    b.setText(text)
    if tip:
        b.setToolTip(tip)
    if name:
        b.setObjectName(name)
    b.setFocusPolicy(Qt.TabFocus)
    return b
