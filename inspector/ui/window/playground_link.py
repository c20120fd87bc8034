"""What the model playground reaches in the window: the model connections (`ModelBook`, edited in
Preferences → Models, keys in the catalog's secret store: the OS keyring), the Playground and Tool choice
tabs (after Collections), the servers they follow, the traffic pane (every exchange with a model is a
`model` frame under the server id `model:<connection>`), and the sampling requests the playground's model
may answer (`DialogAnswers.sampler`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QObject
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

from ..calls import confirm
from ..calls.questions import HANDED_BACK
from ..playground.choice_view import ToolChoiceView
from ..playground.connections import ModelBook
from ..playground.view import PlaygroundView

if TYPE_CHECKING:
    from .main_window import MainWindow


def scrolling(widget: QWidget, name: str) -> QScrollArea:
    """`widget` in a tab that scrolls when the window is small (a 768-pixel screen still holds the window)."""
    area = QScrollArea()
    area.setObjectName(name)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.NoFrame)
    area.setWidget(widget)
    return area


class PlaygroundLink(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self._was_here = False
        self._stale: set[QWidget] = set()  # the views to bring up to date when their tab is shown
        self.book = ModelBook(window.settings, window.catalog.secrets, window)
        self.book.record = lambda server_id: window.traffic.recorder_for(server_id)
        window.model_book = self.book  # Preferences → Models edits it
        self.view = PlaygroundView(self.book, window.connections, window.calls,
                                   lambda: confirm.policy_from(window.settings), window)
        self.choice = ToolChoiceView(self.book, window.selected_connection, window, window.settings)
        after = next((i for i in range(window.tabs.count()) if window.tabs.tabText(i) == "Collections"),
                     window.tabs.count() - 1)
        self.pages = {self.view: scrolling(self.view, "playgroundTab"),
                      self.choice: scrolling(self.choice, "toolChoiceTab")}
        window.tabs.insertTab(after + 1, self.pages[self.view], "Playground")
        window.tabs.insertTab(after + 2, self.pages[self.choice], "Tool choice")
        window.servers.rowsInserted.connect(self._servers_added)
        window.servers.rowsRemoved.connect(lambda *_: self._changed())
        window.selectionChanged.connect(lambda: self._refresh({self.choice}))
        window.tabs.currentChanged.connect(self._tab_changed)
        window.selectionChanged.connect(lambda: self._tab_changed(0))
        window.answers.sampler = self
        window.collections.pane.ask_model = self.ask_model

    def ask_model(self) -> Any:
        """What a collection's ask steps ask in the window: the Playground's model (None without one)."""
        connection = self.view.model.connection()
        return self.book.open(connection) if connection is not None else None

    async def close(self) -> None:
        """Stop a turn or a run in flight and close the model clients (the window is going away)."""
        await self.view.close()
        await self.choice.close()

    def show(self, view: QWidget) -> None:
        """Bring the Playground (`view`) or Tool choice (`choice`) tab forward."""
        self.window.tabs.setCurrentWidget(self.pages[view])

    def _tab_changed(self, _index: int) -> None:
        """On the Playground and Tool choice tabs the traffic pane shows every server's frames: the model's
        exchanges are not the selected server's, and a chat may call several servers."""
        here = self.window.tabs.currentWidget() in self.pages.values()
        if here:
            self.window.traffic.follow(None)
            self._refresh(set(self._stale))
        elif self._was_here:
            self.window.apply_traffic_filter()
        self._was_here = here

    def _servers_added(self, _parent: QModelIndex, first: int, last: int) -> None:
        for conn in self.window.servers.connections[first:last + 1]:
            conn.statusChanged.connect(self._changed)
            conn.toolsChanged.connect(self._changed)
        self._changed()

    def _changed(self) -> None:
        self._refresh({self.view, self.choice})

    def _refresh(self, views: set[QWidget]) -> None:
        """Bring the shown view up to date now, the other when its tab is shown (a big server's tool list
        changing costs the window nothing here while neither tab is shown)."""
        current = self.window.tabs.currentWidget()
        for view in views:
            if current is not self.pages[view]:
                self._stale.add(view)
                continue
            self._stale.discard(view)
            if view is self.view:
                self.view.refresh_servers()
            else:
                self.choice.show_connection()

    async def sample(self, session: Any, params: dict[str, Any], call: Any) -> Any:
        """A server's sampling request: the playground's model answers it when the user lets it."""
        if not self.view.answers_sampling():
            return HANDED_BACK
        return await self.view.sample(session.name, params)
