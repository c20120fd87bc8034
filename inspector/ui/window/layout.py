"""How the window is laid out when nothing says otherwise: its first size, and its docks."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QScreen
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

DEFAULT_SIZE = (1240, 890)  # where no screen can be asked


def first_size(screen: QScreen | None) -> tuple[int, int]:
    """Most of the screen (88 %), within sensible bounds: a result gets room without scrolling."""
    if screen is None:
        return DEFAULT_SIZE
    area = screen.availableGeometry()
    return (min(max(int(area.width() * 0.88), 1000), 1800), min(max(int(area.height() * 0.88), 700), 1200))


def dock(window: QMainWindow, title: str, name: str, widget: QWidget) -> QDockWidget:
    """A dock at the bottom that the user can move, float and close (View menu brings it back)."""
    d = QDockWidget(title, window)
    d.setObjectName(name)
    d.setWidget(widget)
    d.setAllowedAreas(Qt.AllDockWidgetAreas)
    d.setFeatures(QDockWidget.DockWidgetClosable | QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable)
    window.addDockWidget(Qt.BottomDockWidgetArea, d)
    return d
