"""How the window is laid out: its first size, its docks, and the geometry and dock layout kept
between runs (Qt's settings, `window/geometry` and `window/state`)."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QDockWidget, QMainWindow, QSplitter, QWidget

STATE_VERSION = 1  # of the dock layout kept in the settings

DEFAULT_SIZE = (1240, 890)  # where no screen can be asked


FRAME_ALLOWANCE = 40  # a title bar and window borders, which the available area does not count
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

    def first_start(self, splitter: QSplitter, bottom_dock: QDockWidget) -> None:
        """Most of the screen; the sidebar a fifth of the width, the bottom dock a quarter of the height
        (so a tool's result has the room). This is also what *Reset layout* goes back to."""
        w = self.window
        width, height = first_size(w.screen() or QGuiApplication.primaryScreen())
        w.resize(width, height)
        side = max(250, width // 5)
        splitter.setSizes([side, width - side])
        self._bottom = (bottom_dock, max(180, height // 4))
        w.resizeDocks([bottom_dock], [self._bottom[1]], Qt.Vertical)
        self.default = w.saveState(STATE_VERSION)

    def shown(self) -> None:
        """Once the window is on screen (docks are laid out only then): the first start's dock height,
        unless a saved layout was restored."""
        if self._bottom is not None and not self.restored:
            dock, height = self._bottom
            self.window.resizeDocks([dock], [height], Qt.Vertical)
            self.default = self.window.saveState(STATE_VERSION)
        self._bottom = None

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
