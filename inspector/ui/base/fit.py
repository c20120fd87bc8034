"""Rows and columns that give way when room is short (large text on a laptop's screen) instead of making
the window wider or taller than the screen: a row whose last items go into a » menu (`overflow_row`, Qt's
tool bar extension), a row that wraps into more lines (`FlowLayout`), and a column that scrolls
(`scroll_column`). Each keeps the widgets it holds, their object names and their signals. A checkbox whose sentence
wraps (`wrapped_check`) and a dialog sized to the screen's available area (`fit_to_available`) serve the same end."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QEvent, QMargins, QObject, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QTabWidget,
    QToolBar,
    QWidget,
)

FRAME_ALLOWANCE = 40  # a title bar and window borders, which a screen's available area does not count


def overflow_row(parent: QWidget, name: str, widgets: Iterable[QWidget | None], spacing: int = 4) -> QToolBar:
    """`widgets` on one line (None: a stretch) that asks for the width of its first one only: what does not fit
    goes into the row's » button, from the end."""
    bar = QToolBar(parent)
    bar.setObjectName(name)
    bar.setMovable(False)
    bar.setFloatable(False)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    bar.setContentsMargins(0, 0, 0, 0)
    bar.layout().setContentsMargins(0, 0, 0, 0)
    bar.layout().setSpacing(spacing)
    for widget in widgets:
        if widget is None:
            stretch = QWidget(bar)
            stretch.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
            bar.addWidget(stretch)
        else:
            bar.addWidget(widget)
    return bar


class _Column(QScrollArea):
    """Asks for its content's least width (it never scrolls sideways) and next to no height."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched in (self.widget(), self.viewport()) and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()  # its content's least width changed (an answer's header): the window learns it
        return super().eventFilter(watched, event)

    def minimumSizeHint(self) -> QSize:
        inner = self.widget()
        width = inner.minimumSizeHint().width() if inner is not None else 0
        return QSize(width + self.verticalScrollBar().sizeHint().width() + 2 * self.frameWidth(),
                     super().minimumSizeHint().height())


class _WholeColumn(_Column):
    """A `_Column` that asks for its content's whole size where there is room (QScrollArea asks for 24 lines)."""

    def sizeHint(self) -> QSize:
        inner = self.widget()
        if inner is None:
            return super().sizeHint()
        hint = inner.sizeHint()
        return QSize(hint.width() + self.verticalScrollBar().sizeHint().width() + 2 * self.frameWidth(),
                     hint.height() + 2 * self.frameWidth())


def scroll_column(widget: QWidget, name: str, parent: QWidget | None = None, *, sideways: bool = False,
                  whole: bool = False) -> QScrollArea:
    """`widget` in a frameless scroll area (objectName `name`) as wide as the widget's least width and
    asking next to no height: a column taller than a short window scrolls, instead of the window growing.
    With `sideways`, it still scrolls sideways where even the screen is too narrow for that width; with
    `whole`, its size hint is its content's (a dialog opens showing all of it where the screen has room)."""
    scroll = (_WholeColumn if whole else _Column)(parent)
    scroll.setObjectName(name)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    if not sideways:
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setWidget(widget)
    widget.installEventFilter(scroll)
    scroll.viewport().installEventFilter(scroll)  # where a change of the content's least size is posted
    return scroll


def shown_page_counts(tabs: QTabWidget) -> None:
    """Only the page on show asks `tabs` (and so the window) for room: a tab not shown, however wide or tall its
    page, does not make the window larger than the screen (a QTabWidget asks for the most any page needs)."""
    policies: dict[QWidget, QSizePolicy] = {}
    ignored = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)

    def follow(*_: object) -> None:
        current = tabs.currentWidget()
        for i in range(tabs.count()):
            page = tabs.widget(i)
            policies.setdefault(page, page.sizePolicy())
            page.setSizePolicy(policies[page] if page is current else ignored)

    tabs.currentChanged.connect(follow)
    stack = tabs.findChild(QStackedWidget, "qt_tabwidget_stackedwidget")
    if stack is not None:
        stack.widgetAdded.connect(follow)  # pages added later (Collections, Skills…)
        stack.widgetRemoved.connect(follow)
    follow()


class FlowLayout(QLayout):
    """Items left to right, wrapping onto a new line where the width ends (Qt's flow layout example): as wide
    as its widest item at least; `columns` items a line in its size hint. With `fill`, a line's items share
    out what is left of its width (they end together at the right)."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 4, columns: int = 3, fill: bool = True) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.columns, self.fill = columns, fill
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._place(rect, move=True)

    def _shown(self) -> list[QLayoutItem]:
        return [i for i in self._items if not i.isEmpty()]

    def _margins(self) -> QMargins:
        return self.contentsMargins()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._shown():
            size = size.expandedTo(item.minimumSize())
        m = self._margins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def sizeHint(self) -> QSize:
        shown = self._shown()
        lines = [shown[i:i + self.columns] for i in range(0, len(shown), self.columns)]
        width = max((sum(i.sizeHint().width() for i in line) + self._spacing * (len(line) - 1) for line in lines),
                    default=0)
        height = sum(max(i.sizeHint().height() for i in line) for line in lines)
        height += self._spacing * max(0, len(lines) - 1)
        m = self._margins()
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def _place(self, rect: QRect, move: bool) -> int:
        """Lay the items out in `rect` (or only measure): the height they take."""
        m = self._margins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        lines: list[list[QLayoutItem]] = [[]]
        used = 0
        for item in self._shown():
            w = item.sizeHint().width()
            if lines[-1] and used + self._spacing + w > area.width():
                lines.append([])
                used = 0
            used += (self._spacing if lines[-1] else 0) + w
            lines[-1].append(item)
        y = area.y()
        for n_line, line in enumerate(lines):
            if not line:
                continue
            height = max(i.sizeHint().height() for i in line)
            if move:
                natural = sum(i.sizeHint().width() for i in line) + self._spacing * (len(line) - 1)
                # a short last line keeps its items' widths (one button is not stretched across the row)
                short = len(lines) > 1 and n_line == len(lines) - 1 and len(line) < len(lines[0])
                extra = max(0, area.width() - natural) if self.fill and not short else 0
                x = area.x()
                for n, item in enumerate(line):
                    grow = extra // len(line) + (1 if n < extra % len(line) else 0)
                    width = min(item.sizeHint().width() + grow, area.right() + 1 - x)
                    item.setGeometry(QRect(QPoint(x, y), QSize(max(width, 0), height)))
                    x += width + self._spacing
            y += height + self._spacing
        return y - self._spacing - area.y() + m.top() + m.bottom() if any(lines) else m.top() + m.bottom()


class _Toggle(QLabel):
    """A checkbox's sentence, wrapped: a click on it toggles the box, as a click on a checkbox's text does."""

    def __init__(self, text: str, box: QAbstractButton, parent: QWidget) -> None:
        super().__init__(text, parent)
        self._box = box
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setBuddy(box)
        self.setToolTip(box.toolTip())

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.rect().contains(event.position().toPoint()) \
                and self._box.isEnabled():
            self._box.click()
        super().mouseReleaseEvent(event)


def wrapped_check(box: QCheckBox, text: str, parent: QWidget) -> QWidget:
    """`box` with its sentence `text` in a label beside it that wraps (objectName: the box's + "Label"): a
    QCheckBox's own text never wraps, so a long one made a dialog wider than a laptop or was cut at large text.
    The box keeps its object name, signals and `text` as its accessible name."""
    row = QWidget(parent)
    lay = QHBoxLayout(row)
    lay.setContentsMargins(0, 0, 0, 0)
    box.setText("")
    box.setAccessibleName(text)
    lay.addWidget(box, 0, Qt.AlignmentFlag.AlignTop)
    label = _Toggle(text, box, row)
    label.setObjectName(f"{box.objectName()}Label")
    lay.addWidget(label, 1)
    return row


def fit_to_available(window: QWidget, available: QRect) -> None:
    """`window` at most as large as `available` (a screen's area under its panels) less a title bar, and as large
    as it asks within that: its least size must fit (a column that scrolls inside it gives way)."""
    most = QSize(available.width(), max(0, available.height() - FRAME_ALLOWANCE))
    window.setMaximumSize(most)
    window.resize(window.sizeHint().expandedTo(window.minimumSizeHint()).boundedTo(most))
