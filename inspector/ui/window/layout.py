"""How the window is laid out: its first size, its docks, and the geometry and dock layout kept
between runs (Qt's settings, `window/geometry` and `window/state`)."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetrics, QGuiApplication, QScreen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDockWidget,
    QMainWindow,
    QPlainTextEdit,
    QSplitter,
    QWidget,
)

from ..base import fit
from ..servers.sidebar import ServerSidebar, core_name
from ..traffic.pane import TrafficDetail

STATE_VERSION = 1  # of the dock layout kept in the settings
SPLITTER_KEY = "window/splitters/"  # + a divider's object name: where it was left (QSplitter.saveState)
NAME_PADDING = 2 * 6 + 22 + 4  # the server list's margins and status icon around a name
RESTORED = "spyglassKept"  # a divider's property: placed by the user (now or at an earlier run), not by code

DEFAULT_SIZE = (1240, 890)  # where no screen can be asked


FRAME_ALLOWANCE = fit.FRAME_ALLOWANCE  # a title bar and window borders, which the available area does not count
SMALL_SCREEN_HEIGHT = 800  # a window shorter than this (a 768-pixel screen's) starts with its docks at their least
READABLE_LINES = 8  # of the selected traffic message, at the first start, at any text size
READABLE = ("trafficDetailPretty", "trafficDetailRaw")
READABLE_AGAIN_MS = 30
BOTTOM_MOST = 0.5  # of the window's height: the most the bottom dock starts with
SMALL_BOTTOM_MOST = 0.62  # of a small screen's window: the most the traffic dock takes to be read (the tabs scroll)
BOTTOM_READABLE_MOST = 0.3  # of a large screen's window: a bottom dock that needs more to be readable goes right
SIDE_SHARE = 0.3  # of the window's width: a dock on the right starts with (at least its least width)
LIST_LINES = 4  # of the traffic list kept in a side dock (its header and count included): the message takes the rest
BOTTOM_LEAST_MOST = 0.21  # of a small screen's window: a bottom dock whose least is more starts closed
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


class _KeptOnShow(QObject):
    """Puts a divider back where it was left once it is on screen with its real size: a splitter restored
    while hidden (a tab not yet shown, a dock not yet laid out) shares out its first size by its stretch
    factors, not as it was left."""

    def __init__(self, splitter: QSplitter, state: QByteArray) -> None:
        super().__init__(splitter)
        self.splitter, self.state = splitter, state
        splitter.restoreState(state)  # the orientation and the sizes at once; again once it is shown
        splitter.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Show, QEvent.Type.Resize) and self.splitter.isVisible() \
                and min(self.splitter.width(), self.splitter.height()) > 0:
            self.splitter.removeEventFilter(self)
            QTimer.singleShot(0, self, self._restore)
        return False

    def _restore(self) -> None:
        self.splitter.restoreState(self.state)
        self.deleteLater()


class WindowLayout:
    def __init__(self, window: QMainWindow, settings: QSettings) -> None:
        self.window = window
        self.settings = settings
        self.default = QByteArray()
        self.restored = False
        self._bottom: tuple[QDockWidget, int] | None = None
        self._asked = 0  # the bottom dock's height last asked of resizeDocks
        self._state: QByteArray | None = None  # the dock layout restored, until the window is shown

    def first_start(self, splitter: QSplitter, bottom_dock: QDockWidget) -> None:
        """Most of the screen; the sidebar a fifth of the width, the bottom dock a quarter of the height
        (so a tool's result has the room). This is also what *Reset layout* goes back to."""
        self._splitter = splitter
        self._bottom_dock = bottom_dock
        for detail in bottom_dock.findChildren(TrafficDetail):  # its header wrapped: its 8 lines again
            detail.reflowed.connect(lambda: self._reflowed(bottom_dock))
        self.arrange(*first_size(self.window.screen() or QGuiApplication.primaryScreen()))

    def arrange(self, width: int, height: int) -> None:
        """The first start's layout for a window of `width` x `height` (what a screen of that size gets)."""
        w = self.window
        w.resize(width, height)
        self._first = (width, height)
        self._group = list(dict.fromkeys([*getattr(self, "_group", []), self._bottom_dock,
                                          *w.tabifiedDockWidgets(self._bottom_dock)]))
        for d in self._group:  # as at a first start: closed or put on the right by one on another screen
            if w.dockWidgetArea(d) != Qt.DockWidgetArea.BottomDockWidgetArea:
                w.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, d)
                if d is not self._bottom_dock:
                    w.tabifyDockWidget(self._bottom_dock, d)
            d.show()
        self._bottom_dock.raise_()
        side = self.side_width(width) if getattr(self, "_names", None) is not None else max(250, width // 5)
        self._splitter.setSizes([side, width - side])
        self._bottom = (self._bottom_dock, self.bottom_height(height))
        w.resizeDocks([self._bottom_dock], [self._bottom[1]], Qt.Vertical)
        self.default = w.saveState(STATE_VERSION)

    def bottom_height(self, height: int) -> int:
        """The bottom dock's first height in a window `height` tall: the least it needs on a small screen
        (the answer needs the room more; opened again, it is made readable), else a quarter of the height
        (`make_readable` then adds what the traffic message needs to show READABLE_LINES at the text size in use)."""
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
            first = getattr(self, "_first", (self.window.width(), self.window.height()))
            height = self.bottom_height(first[1])  # now that the dock's least size is known
            if first[1] < SMALL_SCREEN_HEIGHT and height > first[1] * BOTTOM_LEAST_MOST:
                # a large text size on a laptop: even at its least the dock would take the answer's room, so
                # it starts closed (View → Traffic, Ctrl+Shift+T, opens it readable: see `opened`)
                for d in [dock, *self.window.tabifiedDockWidgets(dock)]:
                    d.hide()
                # the window grew to hold the docks while they were there: its first size again, once they
                # have let go of their least height
                QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
                self.window.resize(*first)
                QTimer.singleShot(0, self.window, lambda: self.window.resize(*first))
            self.window.resizeDocks([dock], [height], Qt.Vertical)
            self._asked = height
            self.default = self.window.saveState(STATE_VERSION)
            if self.window.height() >= SMALL_SCREEN_HEIGHT:  # on a laptop the answer's half comes first
                QTimer.singleShot(0, dock, lambda: self.make_readable(dock, tries=6))
        elif self._state is not None:  # restored while hidden, the docks shared out its first size: again
            self.window.restoreState(self._state, STATE_VERSION)
        self._state = None
        self._bottom = None

    def opened(self, visible: bool) -> None:
        """The traffic dock opened (View → Traffic, Ctrl+Shift+T, its tab raised): its message made readable
        again, from the height it now has (on a laptop at a large text size it starts closed, and at its least)."""
        dock = self._bottom_dock
        if visible and self._bottom is None and not dock.isFloating():
            QTimer.singleShot(0, dock, lambda: self._readable_from_here(dock))

    def _reflowed(self, dock: QDockWidget) -> None:
        if dock.isVisible() and not dock.isFloating() and self._bottom is None:
            QTimer.singleShot(0, dock, lambda: self._readable_from_here(dock, tries=2))

    def _readable_from_here(self, dock: QDockWidget, tries: int = 6) -> None:
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        if dock.isVisible():
            self._asked = dock.height()
            self.make_readable(dock, tries=tries)

    def make_readable(self, dock: QDockWidget, tries: int = 1) -> None:
        """Grow the dock until the traffic message and its bytes show READABLE_LINES each (within
        BOTTOM_MOST of the window, SMALL_BOTTOM_MOST of a small screen's, where the servers and the tabs scroll
        to give it the room): the lines, not pixels, are what a larger text size must keep."""
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)  # measure the dock as it now is
        edits = [e for e in dock.findChildren(QPlainTextEdit) if e.objectName() in READABLE and e.isVisible()]
        if not edits or not dock.isVisible():
            return
        small = self.window.height() < SMALL_SCREEN_HEIGHT
        short = max(READABLE_LINES * e.fontMetrics().lineSpacing() + 4 - e.viewport().height()
                    + (e.horizontalScrollBar().sizeHint().height()  # a long line of JSON will need it
                       if e.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap else 0) for e in edits)
        beside = self.window.dockWidgetArea(dock) == Qt.DockWidgetArea.RightDockWidgetArea
        if beside:
            self._readable_beside(dock, short)
        elif not small and self._asked + short > self.window.height() * BOTTOM_READABLE_MOST:
            self.to_the_side(dock)
            beside = True
        height = min(self._asked + short, int(self.window.height() * (SMALL_BOTTOM_MOST if small else BOTTOM_MOST)))
        # (resizeDocks counts not quite the dock's height: add to it)
        if not beside and short > 0 and height > self._asked:
            self._asked = height
            self.window.resizeDocks([dock], [height], Qt.Vertical)
            self.default = self.window.saveState(STATE_VERSION)
        if tries > 1:  # the dock keeps its old height for a moment after a resize: look again
            QTimer.singleShot(READABLE_AGAIN_MS, dock, lambda: self.make_readable(dock, tries - 1))

    def to_the_side(self, dock: QDockWidget) -> None:
        """A large text size on a large screen: the bottom dock made readable would take the answer's half, so
        it and the docks in its tabs start on the right, with the window's whole height: the traffic pane then
        stands its list, message and bytes one above the other, as Wireshark does."""
        w = self.window
        group = [dock, *w.tabifiedDockWidgets(dock)]
        for d in group:
            w.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, d)
        for d in group[1:]:
            w.tabifyDockWidget(dock, d)
        dock.raise_()
        w.resizeDocks([dock], [max(dock.minimumSizeHint().width(), int(w.width() * SIDE_SHARE))], Qt.Horizontal)
        self.default = w.saveState(STATE_VERSION)

    def _readable_beside(self, dock: QDockWidget, short: int) -> None:
        """In a side dock: the message and its bytes share their room equally, and take from the list what
        their lines still need (the list keeps LIST_LINES rows)."""
        outer = dock.findChild(QSplitter, "trafficSplitter")
        inner = dock.findChild(QSplitter, "trafficDetailSplitter")
        if outer is None or inner is None or outer.orientation() != Qt.Orientation.Vertical:
            return
        room = sum(inner.sizes())
        inner.setSizes([room - room // 2, room // 2])
        listed, detail = outer.sizes()
        give = min(max(0, short), max(0, listed - LIST_LINES * outer.fontMetrics().lineSpacing()))
        if give > 0:
            outer.setSizes([listed - give, detail + give])

    def splitters(self) -> dict[str, QSplitter]:
        """Every divider of the window by its object name (a name used twice is left out: which is which
        could not be told at the next start)."""
        found: dict[str, QSplitter] = {}
        twice: set[str] = set()
        for splitter in self.window.findChildren(QSplitter):
            name = splitter.objectName()
            if name and not name.startswith("qt_"):
                if name in found:
                    twice.add(name)
                found[name] = splitter
        return {name: splitter for name, splitter in found.items() if name not in twice}

    def restore(self) -> None:
        self._default_splitters = {name: sp.saveState() for name, sp in self.splitters().items()}
        for splitter in self.splitters().values():  # a divider the user moves stays where it was left
            splitter.splitterMoved.connect(lambda *_, s=splitter: s.setProperty(RESTORED, True))
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.window.restoreGeometry(geometry)
        state = self.settings.value("window/state")
        if isinstance(state, QByteArray) and not state.isEmpty():
            self.restored = self.window.restoreState(state, STATE_VERSION)
            self._state = state if self.restored else None
        for name, splitter in self.splitters().items():
            kept = self.settings.value(SPLITTER_KEY + name)
            if isinstance(kept, QByteArray) and not kept.isEmpty():
                splitter.setProperty(RESTORED, True)  # the panes that size their dividers leave it as it is
                _KeptOnShow(splitter, kept)

    def save(self) -> None:
        self.settings.setValue("window/geometry", self.window.saveGeometry())
        self.settings.setValue("window/state", self.window.saveState(STATE_VERSION))
        for name, splitter in self.splitters().items():
            self.settings.setValue(SPLITTER_KEY + name, splitter.saveState())

    def reset(self, docks: Iterable[QDockWidget]) -> None:
        self.window.restoreState(self.default, STATE_VERSION)
        for dock in docks:
            dock.show()
        defaults = getattr(self, "_default_splitters", {})
        for name, splitter in self.splitters().items():
            if name in defaults:
                splitter.restoreState(defaults[name])
            splitter.setProperty(RESTORED, False)
        self.follow_names()

    # ------------------------------------------------------------------ the server list's width
    def watch_names(self, view: QAbstractItemView, sidebar: ServerSidebar) -> None:
        """Keep the server list as wide as its names need (within a quarter of the window) until the user
        moves its divider, or a saved one was restored."""
        self._names = (view, sidebar)
        model = view.model()
        for signal in (model.rowsInserted, model.rowsRemoved, model.dataChanged, model.modelReset):
            signal.connect(lambda *_: QTimer.singleShot(0, view, self.follow_names))
        self._splitter.splitterMoved.connect(lambda *_: self._splitter.setProperty(RESTORED, True))
        self._splitter.setCollapsible(0, True)  # drag it to the edge to hide the servers; View brings them back
        self._splitter.setCollapsible(1, False)
        self.follow_names()

    def names_width(self, core: bool = False) -> int:
        """The server list's width that shows its names whole (with `core`, without a note in brackets such as
        "(built-in)", and not counting the buttons' comfortable width)."""
        view, sidebar = self._names
        bold = QFont(view.font())
        bold.setBold(True)  # as the list draws a name, after its status icon
        fm = QFontMetrics(bold)
        model = view.model()
        shown = core_name if core else str
        names = max((fm.horizontalAdvance(shown(str(model.index(r, 0).data() or ""))) for r in range(model.rowCount())),
                    default=0)
        frame = 2 * view.frameWidth() + view.verticalScrollBar().sizeHint().width() + NAME_PADDING
        outside = max(0, sidebar.width() - view.width()) if sidebar.isVisible() else 16
        return names + frame + outside if core else max(sidebar.comfortable_width(), names + frame + outside)

    def side_width(self, total: int) -> int:
        """The server list's width in a window `total` wide: its names' (within a fifth of the window, where
        its buttons wrap into more rows at a large text size, and never less than its widest button), and at
        least its names without their notes in brackets (at 200 % a fifth of a laptop's window cut "demo")."""
        least = max(total // 5, self._names[1].minimumSizeHint().width(), self.names_width(core=True))
        return min(self.names_width(), least)

    def follow_names(self) -> None:
        if getattr(self, "_names", None) is None or self._splitter.property(RESTORED):
            return
        sizes = self._splitter.sizes()
        total = sum(sizes)
        if total <= 0 or sizes[0] == 0:  # collapsed: it stays so
            return
        side = self.side_width(total)
        if side != sizes[0]:
            self._splitter.setSizes([side, total - side])
