"""The tools as large cards in a grid (`presentCards`, one item per tool, `Qt.UserRole` = its name): icon, title,
the description's first sentence, "Changes or deletes data" in words for a destructive tool; app-only tools left
out; filtered as the search (`presentSearch`) is typed. A click or Enter opens a tool (`opened(name)`).

The grid reflows: the cards are as wide as a comfortable line of the current text size (and never narrower than
their longest word), as many columns as fit the stage, as tall as the tallest card's wrapped text, and the grid
is centred. Titles and descriptions wrap at whole words; nothing is cut."""

from __future__ import annotations

from typing import Any, NamedTuple

from PySide6.QtCore import QModelIndex, QPoint, QRect, QRectF, QSize, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import (
    QFont,
    QFontMetrics,
    QIcon,
    QKeyEvent,
    QPainter,
    QPalette,
    QPen,
    QPixmap,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import (
    QFrame,
    QLineEdit,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from ...session.tools import decode_data_uri
from ..base import design
from . import words

SEARCH_ROLE = Qt.UserRole + 1
DESTRUCTIVE_ROLE = Qt.UserRole + 2
ICON = 48  # the icon's side at 100 %; it grows with the title's text
GAP = 20  # between two cards
PAD_X, PAD_Y, INNER = 18, 16, 10  # inside a card: the sides, the top and bottom, between its parts
LINE_CHARS, MAX_LINE_CHARS = 26, 40  # a card's description line: at least and at most this many characters
WRAP = int(Qt.TextWordWrap)
SLACK = 4  # pixels of a row kept free


def tool_icon(tool: dict[str, Any]) -> QIcon:
    """The tool's own icon (a data: URI, never fetched from the network), else none: no stand-in drawing, the
    card's text takes the room."""
    for icon in tool.get("icons") or [] if isinstance(tool.get("icons"), list) else []:
        decoded = decode_data_uri(icon.get("src")) if isinstance(icon, dict) else None
        if decoded is not None:
            pix = QPixmap()
            if pix.loadFromData(decoded[0]) and not pix.isNull():
                return QIcon(pix)
    return QIcon()


def card_text(tool: dict[str, Any]) -> str:
    lines = [words.tool_title(tool)]
    sentence = words.first_sentence(tool.get("description"))
    if sentence:
        lines.append(sentence)
    if words.destructive(tool):
        lines.append("⚠ " + words.destructive_words(tool))
    return "\n".join(lines)


def title_font(font: QFont) -> QFont:
    title = QFont(font)
    title.setBold(True)
    title.setPointSizeF(design.size("heading", font.pointSizeF()))
    return title


def split(text: str) -> tuple[str, str]:
    """A card's text as (title, the rest)."""
    title, _, rest = str(text or "").partition("\n")
    return title, rest


def needed(fm: QFontMetrics, width: int, text: str) -> int:
    """The height `text` takes wrapped at whole words in `width` (0 for no text)."""
    return fm.boundingRect(QRect(0, 0, max(1, width), 1 << 20), WRAP, text).height() if text else 0


def longest_word(fm: QFontMetrics, text: str) -> int:
    return max((fm.horizontalAdvance(w) for w in text.split()), default=0)


class CardParts(NamedTuple):
    """Where a card's parts are drawn, inside the item's rectangle."""

    card: QRect
    icon: QRect
    title: QRect
    body: QRect
    title_font: QFont


def icon_side(font: QFont, icon: bool = True) -> int:
    """The icon's side (drawn as large as the title's two lines); 0 for a card without an icon."""
    return max(ICON, QFontMetrics(title_font(font)).height() * 2) if icon else 0


def parts(font: QFont, rect: QRect, text: str, icon: bool = True) -> CardParts:
    """The card drawn in the item `rect`: the icon (if `icon`) and the title beside it (as tall as the title's
    wrapped lines), the description under both; the card is `rect` less half the gap on each side."""
    card = rect.adjusted(GAP // 2, GAP // 2, -(GAP // 2), -(GAP // 2))
    inner = card.adjusted(PAD_X, PAD_Y, -PAD_X, -PAD_Y)
    tf = title_font(font)
    side = icon_side(font, icon)
    indent = side + INNER if icon else 0
    title, rest = split(text)
    title_w = inner.width() - indent
    title_h = needed(QFontMetrics(tf), title_w, title)
    head = max(side, title_h)
    icon_rect = QRect(inner.left(), inner.top() + (head - side) // 2, side, side)
    title_rect = QRect(inner.left() + indent, inner.top() + (head - title_h) // 2, title_w, title_h)
    body_h = needed(QFontMetrics(font), inner.width(), rest)
    body = QRect(inner.left(), inner.top() + head + INNER, inner.width(), body_h)
    return CardParts(card, icon_rect, title_rect, body, tf)


def card_size(font: QFont, width: int, texts: list[str], icons: list[bool] | None = None) -> QSize:
    """The item size of every card at `width`: as tall as the tallest card's text (`icons`: which have one)."""
    probe = QRect(0, 0, width, 1 << 20)
    has = icons if icons is not None else [True] * len(texts)
    shapes = [(parts(font, probe, t, i), bool(split(t)[1])) for t, i in zip(texts, has, strict=True)]
    bottom = max((p.body.bottom() if rest else p.title.bottom() for p, rest in shapes), default=0)
    head = icon_side(font, any(has))
    least = GAP // 2 + PAD_Y + head + PAD_Y + GAP // 2
    return QSize(width, max(least, bottom + 1 + PAD_Y + GAP // 2))


def card_widths(font: QFont, texts: list[str], icons: list[bool] | None = None) -> tuple[int, int]:
    """The narrowest and the widest a card's item may be at this text size: a line of at least `LINE_CHARS`
    average characters (and room for the longest word of any title, beside its icon, or description), at most
    `MAX_LINE_CHARS`."""
    fm, tfm = QFontMetrics(font), QFontMetrics(title_font(font))
    frame = GAP + 2 * PAD_X
    has = icons if icons is not None else [True] * len(texts)
    word = max([0, *(max(longest_word(tfm, split(t)[0]) + (icon_side(font) + INNER if i else 0),
                         longest_word(fm, split(t)[1])) for t, i in zip(texts, has, strict=True))])
    least = max(fm.averageCharWidth() * LINE_CHARS, word) + frame
    return least, max(least, fm.averageCharWidth() * MAX_LINE_CHARS + frame)


def grid(font: QFont, texts: list[str], room: int, icons: list[bool] | None = None) -> tuple[int, QSize]:
    """(columns, item size) for the cards in `room` pixels of width (`icons`: which cards have one)."""
    least, most = card_widths(font, texts, icons)
    columns = max(1, min(len(texts) or 1, room // least))
    width = max(1, min(most, room // columns)) if room >= least else room
    return columns, card_size(font, width, texts, icons)


class CardDelegate(QStyledItemDelegate):
    """A card: the icon, the title in bold and larger, the first sentence, the warning in words."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Any) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        selected = bool(opt.state & QStyle.State_Selected)
        pal = opt.palette
        shape = parts(opt.font, opt.rect, str(index.data() or ""), not opt.icon.isNull())
        painter.save()
        painter.setRenderHint(QPainter.Antialiasing)
        edge = pal.color(QPalette.Highlight) if selected else pal.color(QPalette.Mid)
        painter.setPen(QPen(edge, 4 if selected else 2))
        painter.setBrush(pal.color(QPalette.Base))
        painter.drawRoundedRect(QRectF(shape.card), 12, 12)
        side = shape.icon.width()
        pix = opt.icon.pixmap(QSize(side, side)) if side else None
        if pix is not None and not pix.isNull():  # scaled to its room, up as well as down (QIcon.paint never enlarges)
            shown = pix.size().scaled(side, side, Qt.KeepAspectRatio)
            painter.setRenderHint(QPainter.SmoothPixmapTransform)
            at = shape.icon.topLeft() + QPoint((side - shown.width()) // 2, (side - shown.height()) // 2)
            painter.drawPixmap(QRect(at, shown), pix)
        title, rest = split(str(index.data() or ""))
        painter.setPen(pal.color(QPalette.Text))
        painter.setFont(shape.title_font)
        painter.drawText(shape.title, WRAP, title)
        painter.setFont(opt.font)
        painter.drawText(shape.body, int(Qt.AlignTop) | WRAP, rest)
        if selected:  # not by colour alone: a mark, too
            painter.setFont(shape.title_font)
            painter.drawText(shape.card.adjusted(0, 6, -10, 0), int(Qt.AlignRight | Qt.AlignTop), "▶")
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Any) -> QSize:
        view = self.parent()
        return view.gridSize() if isinstance(view, QListView) and view.gridSize().isValid() else QSize(300, 170)


class CardView(QListView):
    """The grid; Enter (and Return) opens the current card. It lays itself out again when its width, its font
    or its cards change."""

    opened = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.columns = 1
        self._laying = False

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key_Return, Qt.Key_Enter) and self.currentIndex().isValid():
            self.opened.emit(self.currentIndex().data(Qt.UserRole))
            return
        super().keyPressEvent(event)

    def texts(self) -> list[str]:
        model = self.model()
        return [str(model.index(r, 0).data() or "") for r in range(model.rowCount())] if model is not None else []

    def icons(self) -> list[bool]:
        """Which cards have an icon (a tool's own: there is no stand-in)."""
        model = self.model()
        shown = [model.index(r, 0).data(Qt.DecorationRole) for r in range(model.rowCount())] if model else []
        return [isinstance(icon, QIcon) and not icon.isNull() for icon in shown]

    def relayout(self) -> None:
        """Columns and card size for the width and text size now, the grid centred between equal margins."""
        if self._laying:
            return
        self._laying = True
        try:
            margins = self.viewportMargins()
            whole = self.maximumViewportSize().width() + margins.left() + margins.right()
            # the list view wraps a row at its largest viewport less a scroll bar's room (shown or not): the
            # columns leave that room on both sides, and the left margin centres them on what is seen
            extent = self.style().pixelMetric(QStyle.PM_ScrollBarExtent, None, self.verticalScrollBar())
            texts = self.texts()
            self.columns, size = grid(self.font(), texts, max(1, whole - 2 * extent - SLACK), self.icons())
            used = min(len(texts) or 1, self.columns) * size.width()
            shown_bar = self.verticalScrollBar().width() if self.verticalScrollBar().isVisible() else 0
            side = max(0, (whole - shown_bar - used) // 2)
            if self.gridSize() != size or margins.left() != side or margins.right():
                self.setViewportMargins(side, 0, 0, 0)
                self.setGridSize(size)
                self.scheduleDelayedItemsLayout()
        finally:
            self._laying = False

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self.relayout()

    def changeEvent(self, event: Any) -> None:
        super().changeEvent(event)
        if event.type() in (event.Type.FontChange, event.Type.StyleChange):
            self.relayout()

    def updateGeometries(self) -> None:
        super().updateGeometries()
        self.relayout()  # the scroll bar came or went

    def rowsInserted(self, parent: QModelIndex, start: int, end: int) -> None:
        super().rowsInserted(parent, start, end)
        self.relayout()


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
        self.view.setSpacing(0)  # the gap is inside each item (`GAP`), so that the grid's edges are the cards'
        self.view.setFrameShape(QFrame.NoFrame)
        self.view.viewport().setAutoFillBackground(False)  # the stage's background between the cards
        self.view.setIconSize(QSize(ICON, ICON))
        self.view.setTextElideMode(Qt.ElideNone)
        self.view.setAccessibleName("Tools")
        self.view.setAccessibleDescription("Choose a tool with the arrow keys and press Enter to open it")
        self.view.clicked.connect(lambda index: self.opened.emit(index.data(Qt.UserRole)))
        self.view.opened.connect(self.opened.emit)
        self.proxy.layoutChanged.connect(self.view.relayout)
        self.proxy.rowsRemoved.connect(self.view.relayout)
        self.proxy.modelReset.connect(self.view.relayout)
        self.search = SearchEdit(self.view, self)
        self.search.setObjectName("presentSearch")
        self.search.setPlaceholderText("Search the tools")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search the tools")
        self.search.setAccessibleDescription("Type to show only the tools that match; Down goes to the tools")
        self.search.textChanged.connect(self._filter)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(design.space("l"))
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
            item.setData(int(Qt.AlignLeft | Qt.AlignTop), Qt.TextAlignmentRole)
            item.setToolTip(str(tool.get("description") or words.tool_title(tool)))
            item.setData(card_text(tool).replace("\n", ". "), Qt.AccessibleTextRole)
            item.setEditable(False)
            self.model.appendRow(item)
        self.view.relayout()
        self.select(current)

    def _filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.strip())
        self.view.relayout()
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
