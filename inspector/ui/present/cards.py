"""The tools as large cards in a grid (`presentCards`, one item per tool, `Qt.UserRole` = its name): icon, title,
the description's first sentence, "Changes or deletes data" in words for a destructive tool; app-only tools left
out; filtered as the search (`presentSearch`) is typed. A click or Enter opens a tool (`opened(name)`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRect, QRectF, QSize, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QFont, QIcon, QKeyEvent, QPainter, QPalette, QPen, QPixmap, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QLineEdit,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from ...session.tools import decode_data_uri
from ..base import theme
from . import words

SEARCH_ROLE = Qt.UserRole + 1
DESTRUCTIVE_ROLE = Qt.UserRole + 2
CARD_WIDTH, CARD_HEIGHT, ICON = 300, 170, 48


def tool_icon(tool: dict[str, Any]) -> QIcon:
    """The tool's own icon (a data: URI, never fetched from the network), else the tool mark."""
    for icon in tool.get("icons") or [] if isinstance(tool.get("icons"), list) else []:
        decoded = decode_data_uri(icon.get("src")) if isinstance(icon, dict) else None
        if decoded is not None:
            pix = QPixmap()
            if pix.loadFromData(decoded[0]) and not pix.isNull():
                return QIcon(pix)
    return QIcon(theme.tool_glyph(ICON))


def card_text(tool: dict[str, Any]) -> str:
    lines = [words.tool_title(tool)]
    sentence = words.first_sentence(tool.get("description"))
    if sentence:
        lines.append(sentence)
    if words.destructive(tool):
        lines.append("⚠ " + words.DESTRUCTIVE_WORDS)
    return "\n".join(lines)


class CardDelegate(QStyledItemDelegate):
    """A card: the icon, the title in bold and larger, the first sentence, the warning in words."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Any) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        selected = bool(opt.state & QStyle.State_Selected)
        pal = opt.palette
        rect = opt.rect.adjusted(4, 4, -4, -4)
        painter.save()
        painter.setRenderHint(QPainter.Antialiasing)
        edge = pal.color(QPalette.Highlight) if selected else pal.color(QPalette.Mid)
        painter.setPen(QPen(edge, 4 if selected else 2))
        painter.setBrush(pal.color(QPalette.Base))
        painter.drawRoundedRect(QRectF(rect), 12, 12)
        inner = rect.adjusted(16, 14, -16, -12)
        opt.icon.paint(painter, QRect(inner.left(), inner.top(), ICON, ICON))
        lines = str(index.data() or "").split("\n")
        title_font = QFont(opt.font)
        title_font.setBold(True)
        title_font.setPointSizeF(opt.font.pointSizeF() * 1.2)
        painter.setPen(pal.color(QPalette.Text))
        painter.setFont(title_font)
        title_rect = QRect(inner.left() + ICON + 12, inner.top(), inner.width() - ICON - 12, ICON)
        painter.drawText(title_rect, int(Qt.AlignVCenter | Qt.TextWordWrap), lines[0])
        painter.setFont(opt.font)
        body = QRect(inner.left(), inner.top() + ICON + 8, inner.width(), inner.height() - ICON - 8)
        text = "\n".join(lines[1:])
        painter.drawText(body, int(Qt.AlignTop | Qt.TextWordWrap), text)
        if selected:  # not by colour alone: a mark, too
            painter.setFont(title_font)
            painter.drawText(rect.adjusted(0, 8, -12, 0), int(Qt.AlignRight | Qt.AlignTop), "▶")
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Any) -> QSize:
        return QSize(CARD_WIDTH, CARD_HEIGHT)


class CardView(QListView):
    """The grid; Enter (and Return) opens the current card."""

    opened = Signal(str)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key_Return, Qt.Key_Enter) and self.currentIndex().isValid():
            self.opened.emit(self.currentIndex().data(Qt.UserRole))
            return
        super().keyPressEvent(event)


class SearchEdit(QLineEdit):
    """The search; Down moves to the cards, Enter opens the first card shown."""

    def __init__(self, cards: CardView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cards = cards

    def keyPressEvent(self, event: QKeyEvent) -> None:
        model = self.cards.model()
        if event.key() == Qt.Key_Down and model.rowCount():
            self.cards.setFocus(Qt.TabFocusReason)
            if not self.cards.currentIndex().isValid():
                self.cards.setCurrentIndex(model.index(0, 0))
            return
        if event.key() in (Qt.Key_Return, Qt.Key_Enter) and model.rowCount():
            self.cards.opened.emit(model.index(0, 0).data(Qt.UserRole))
            return
        super().keyPressEvent(event)


class ToolCards(QWidget):
    opened = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = QStandardItemModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterRole(SEARCH_ROLE)
        self.proxy.setFilterCaseSensitivity(Qt.CaseInsensitive)
        self.view = CardView(self)
        self.view.setObjectName("presentCards")
        self.view.setModel(self.proxy)
        self.view.setItemDelegate(CardDelegate(self.view))
        self.view.setViewMode(QListView.IconMode)
        self.view.setFlow(QListView.LeftToRight)
        self.view.setWrapping(True)
        self.view.setResizeMode(QListView.Adjust)
        self.view.setMovement(QListView.Static)
        self.view.setUniformItemSizes(True)
        self.view.setWordWrap(True)
        self.view.setSpacing(12)
        self.view.setIconSize(QSize(ICON, ICON))
        self.view.setGridSize(QSize(CARD_WIDTH + 24, CARD_HEIGHT + 24))
        self.view.setTextElideMode(Qt.ElideNone)
        self.view.setAccessibleName("Tools")
        self.view.setAccessibleDescription("Choose a tool with the arrow keys and press Enter to open it")
        self.view.clicked.connect(lambda index: self.opened.emit(index.data(Qt.UserRole)))
        self.view.opened.connect(self.opened.emit)
        self.search = SearchEdit(self.view, self)
        self.search.setObjectName("presentSearch")
        self.search.setPlaceholderText("Search the tools")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search the tools")
        self.search.setAccessibleDescription("Type to show only the tools that match; Down goes to the tools")
        self.search.textChanged.connect(self._filter)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(12)
        lay.addWidget(self.search)
        lay.addWidget(self.view, 1)
        self.setTabOrder(self.search, self.view)

    def set_tools(self, tools: list[dict[str, Any]]) -> None:
        current = self.current_name()
        self.model.clear()
        for tool in tools:
            if not words.for_people(tool):
                continue
            item = QStandardItem(tool_icon(tool), card_text(tool))
            item.setData(tool["name"], Qt.UserRole)
            item.setData(" ".join([words.tool_title(tool), str(tool.get("description") or "")]), SEARCH_ROLE)
            item.setData(words.destructive(tool), DESTRUCTIVE_ROLE)
            item.setData(QSize(CARD_WIDTH, CARD_HEIGHT), Qt.SizeHintRole)
            item.setData(int(Qt.AlignLeft | Qt.AlignTop), Qt.TextAlignmentRole)
            item.setToolTip(str(tool.get("description") or words.tool_title(tool)))
            item.setData(card_text(tool).replace("\n", ". "), Qt.AccessibleTextRole)
            item.setEditable(False)
            self.model.appendRow(item)
        self.select(current)

    def _filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.strip())
        if self.proxy.rowCount() and not self.view.currentIndex().isValid():
            self.view.setCurrentIndex(self.proxy.index(0, 0))

    def names(self) -> list[str]:
        return [self.proxy.index(r, 0).data(Qt.UserRole) for r in range(self.proxy.rowCount())]

    def current_name(self) -> str | None:
        index = self.view.currentIndex()
        return index.data(Qt.UserRole) if index.isValid() else None

    def select(self, name: str | None) -> None:
        names = self.names()
        if names:
            row = names.index(name) if name in names else 0
            self.view.setCurrentIndex(self.proxy.index(row, 0))

    def next_name(self, name: str | None) -> str | None:
        """The card after `name` (the first when `name` is the last or not shown)."""
        names = self.names()
        if not names:
            return None
        return names[(names.index(name) + 1) % len(names)] if name in names else names[0]
