"""How the window is laid out: its first size, its docks, and the geometry and dock layout kept
between runs (Qt's settings, `window/geometry` and `window/state`)."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QByteArray, QEvent, QSettings, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QPlainTextEdit, QSplitter, QWidget

STATE_VERSION = 1  # of the dock layout kept in the settings

DEFAULT_SIZE = (1240, 890)  # where no screen can be asked


FRAME_ALLOWANCE = 40  # a title bar and window borders, which the available area does not count
SMALL_SCREEN_HEIGHT = 800  # a window shorter than this (a 768-pixel screen's) starts with its docks at their least
READABLE_LINES = 8  # of the selected traffic message, at the first start, at any text size
READABLE = ("trafficDetailPretty", "trafficDetailRaw")
READABLE_AGAIN_MS = 30
BOTTOM_MOST = 0.5  # of the window's height: the most the bottom dock starts with
SMALLEST_SCREEN_HEIGHT = 600  # an area shorter than this cannot hold the window in a common desktop font


def first_size(screen: QScreen | None) -> tuple[int, int]:
    """Most of the screen (88 %), within sensible bounds: a result gets room without scrolling."""
    if screen is None:
        return DEFAULT_SIZE
    area = screen.availableGeometry()
    return first_size_in(area.width(), area.height())


def first_size_in(width: int, height: int) -> tuple[int, int]:
    """The first size in an available area of `width` x `height`: never more than the area holds with
    the window's frame (a 1366x768 laptop has about 720 px under its panel, so not the 700 px plus a
    title bar it got before), never less than a comfortable least size where there is room for it. An area
    that cannot hold the window's least height (about 600 px) gets the comfortable size all the same."""
    w = min(max(int(width * 0.88), 1000), 1800)
    h = min(max(int(height * 0.88), 700), 1200)
    if height - FRAME_ALLOWANCE >= SMALLEST_SCREEN_HEIGHT:
        h = min(h, height - FRAME_ALLOWANCE)
    return w, h


def dock(window: QMainWindow, title: str, name: str, widget: QWidget) -> QDockWidget:
    """A dock at the bottom that the user can move, float and close (View menu brings it back)."""
    d = QDockWidget(title, window)
    d.setObjectName(name)
    d.setWidget(widget)
    d.setAllowedAreas(Qt.AllDockWidgetAreas)
    d.setFeatures(QDockWidget.DockWidgetClosable | QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable)
    window.addDockWidget(Qt.BottomDockWidgetArea, d)
    return d


class WindowLayout:
    def __init__(self, window: QMainWindow, settings: QSettings) -> None:
        self.window = window
        self.settings = settings
        self.default = QByteArray()
        self.restored = False
        self._bottom: tuple[QDockWidget, int] | None = None
        self._asked = 0  # the bottom dock's height last asked of resizeDocks

    def first_start(self, splitter: QSplitter, bottom_dock: QDockWidget) -> None:
        """Most of the screen; the sidebar a fifth of the width, the bottom dock a quarter of the height
        (so a tool's result has the room). This is also what *Reset layout* goes back to."""
        self._splitter = splitter
        self._bottom_dock = bottom_dock
        self.arrange(*first_size(self.window.screen() or QGuiApplication.primaryScreen()))

    def arrange(self, width: int, height: int) -> None:
        """The first start's layout for a window of `width` x `height` (what a screen of that size gets)."""
        w = self.window
        w.resize(width, height)
        side = max(250, width // 5)
        self._splitter.setSizes([side, width - side])
        self._bottom = (self._bottom_dock, self.bottom_height(height))
        w.resizeDocks([self._bottom_dock], [self._bottom[1]], Qt.Vertical)
        self.default = w.saveState(STATE_VERSION)

    def bottom_height(self, height: int) -> int:
        """The bottom dock's first height in a window `height` tall: the least it needs on a small screen
        (the answer needs the room more), else a quarter of the height (`make_readable` then adds what
        the traffic message needs to show READABLE_LINES at the text size in use)."""
        dock = self._bottom_dock
        # what its contents need: the dock's own least size is its current height for a moment after a resize
        least = dock.layout().minimumSize().height() if dock.layout() is not None else dock.minimumSizeHint().height()
        if height < SMALL_SCREEN_HEIGHT:
            return least
        return max(least, min(height // 4, int(height * BOTTOM_MOST)))

    def shown(self) -> None:
        """Once the window is on screen (docks are laid out only then): the first start's dock height,
        unless a saved layout was restored."""
        if self._bottom is not None and not self.restored:
            dock, _before = self._bottom
            height = self.bottom_height(self.window.height())  # now that the dock's least size is known
            self.window.resizeDocks([dock], [height], Qt.Vertical)
            self._asked = height
            self.default = self.window.saveState(STATE_VERSION)
            if self.window.height() >= SMALL_SCREEN_HEIGHT:
                QTimer.singleShot(0, lambda: self.make_readable(dock, tries=6))
        self._bottom = None

    def make_readable(self, dock: QDockWidget, tries: int = 1) -> None:
        """Grow the dock until the traffic message and its bytes show READABLE_LINES each (within
        BOTTOM_MOST of the window): the lines, not pixels, are what a larger text size must keep."""
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)  # measure the dock as it now is
        edits = [e for e in dock.findChildren(QPlainTextEdit) if e.objectName() in READABLE and e.isVisible()]
        if not edits or not dock.isVisible():
            return
        short = max(READABLE_LINES * e.fontMetrics().lineSpacing() + 4 - e.viewport().height()
                    + (e.horizontalScrollBar().sizeHint().height()  # a long line of JSON will need it
                       if e.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap else 0) for e in edits)
        height = min(self._asked + short, int(self.window.height() * BOTTOM_MOST))
        if short > 0 and height > self._asked:  # (resizeDocks counts not quite the dock's height: add to it)
            self._asked = height
            self.window.resizeDocks([dock], [height], Qt.Vertical)
            self.default = self.window.saveState(STATE_VERSION)
        if tries > 1:  # the dock keeps its old height for a moment after a resize: look again
            QTimer.singleShot(READABLE_AGAIN_MS, lambda: self.make_readable(dock, tries - 1))

    def restore(self) -> None:
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.window.restoreGeometry(geometry)
        state = self.settings.value("window/state")
        if isinstance(state, QByteArray) and not state.isEmpty():
            self.restored = self.window.restoreState(state, STATE_VERSION)

    def save(self) -> None:
        self.settings.setValue("window/geometry", self.window.saveGeometry())
        self.settings.setValue("window/state", self.window.saveState(STATE_VERSION))

    def reset(self, docks: Iterable[QDockWidget]) -> None:
        self.window.restoreState(self.default, STATE_VERSION)
        for dock in docks:
            dock.show()
