"""The Intercept tab of a tapped server (`interceptPane`, shown only while a tapped server is selected):
hold the host's or the server's messages that match a filter of the traffic pane's language, edit one,
then forward or drop it (docs/tap.md#intercept). The tap does the holding; this pane is its remote control,
through the server's `InterceptLink` (`inspector.tap.held`).

Object names: `interceptState` (what intercept does now, or why it is unavailable), `interceptFilter` (the
filter line, with the traffic filter's completion and its fault underlined), `interceptDirection` (host →
server, server → host, both ways), `interceptToggle` (checkable: on / off), `interceptError`,
`interceptQueue` (how long the first held message waits, how many wait behind it), `interceptHeld` (the
held messages: number, direction, message, held for, decision; `Qt.UserRole` in column 0 is the number),
`interceptEditor` (the selected message's JSON), `interceptEditNote` (what Forward will send),
`interceptForward`, `interceptDrop`, `interceptRevert`.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...tap.held import HeldMessage, InterceptLink, edited
from ...traffic import TrafficStore
from ...traffic.expr import FilterSyntaxError
from ..base import theme
from ..base.layout import plain_label
from ..traffic.filter_edit import FilterEdit

DIRECTIONS = (("host → server", ("out",)), ("server → host", ("in",)), ("both ways", ("out", "in")))
EXAMPLE = 'tool == write_file  ·  method == "tools/call"  ·  text contains "secret"  (empty: every message)'
TICK_MS = 500


def _held_for(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"


class InterceptPane(QWidget):
    def __init__(self, store: TrafficStore | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.page: QWidget = self  # what the window's tabs hold: a scroll area around this pane
        self.setObjectName("interceptPane")
        self.link: InterceptLink | None = None
        self._shown_hold: int | None = None  # the message in the editor
        self.state = plain_label(self, "interceptState")
        self.filter_edit = FilterEdit(store if store is not None else TrafficStore(":memory:"), self)
        self.filter_edit.setObjectName("interceptFilter")
        self.filter_edit.setPlaceholderText(EXAMPLE)
        self.filter_edit.returnPressed.connect(self._apply)
        self.direction = QComboBox(self)
        self.direction.setObjectName("interceptDirection")
        for text, directions in DIRECTIONS:
            self.direction.addItem(text, directions)
        self.direction.setToolTip("Which messages are held: those the host sends, those the server sends, or both")
        self.direction.currentIndexChanged.connect(self._direction_chosen)
        self.toggle = QPushButton("Intercept", self)
        self.toggle.setObjectName("interceptToggle")
        self.toggle.setCheckable(True)
        self.toggle.setToolTip("Hold the messages that match (off: every message passes unchanged; turning it off "
                               "lets everything held go on)")
        self.toggle.clicked.connect(self._toggled)
        self.error = plain_label(self, "interceptError")
        self.error.hide()
        self.queue = plain_label(self, "interceptQueue")
        self.held = QTreeWidget(self)
        self.held.setObjectName("interceptHeld")
        self.held.setHeaderLabels(["#", "Direction", "Message", "Held for", "Decision"])
        self.held.setRootIsDecorated(False)
        self.held.setUniformRowHeights(True)
        self.held.setMinimumHeight(48)  # the window fits a 768-pixel screen: the splitter gives room when there is
        header = self.held.header()
        for column in (0, 1, 3, 4):
            header.setSectionResizeMode(column, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.Stretch)
        header.setStretchLastSection(False)
        self.held.currentItemChanged.connect(lambda *_: self._show_current())
        self.editor = QPlainTextEdit(self)
        self.editor.setObjectName("interceptEditor")
        self.editor.setMinimumHeight(48)
        self.editor.setPlaceholderText("Select a held message to see it here, edit it, then Forward or Drop it.")
        font = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        font.setStyleHint(QFont.Monospace)
        self.editor.setFont(font)
        self.editor.textChanged.connect(self._edited)
        self.note = plain_label(self, "interceptEditNote")
        self.forward = QPushButton("Forward", self)
        self.forward.setObjectName("interceptForward")
        self.forward.setToolTip("Send it on: as shown in the editor (an edit replaces the original on the wire)")
        self.forward.clicked.connect(self.forward_current)
        self.drop = QPushButton("Drop", self)
        self.drop.setObjectName("interceptDrop")
        self.drop.setToolTip("Never send it: the other side does not get it (the session file says so)")
        self.drop.clicked.connect(self.drop_current)
        self.revert = QPushButton("Revert", self)
        self.revert.setObjectName("interceptRevert")
        self.revert.setToolTip("Put the message back as it came")
        self.revert.clicked.connect(lambda: self._show_current(force=True))
        self._build()
        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self.show_link(None)

    def _build(self) -> None:
        top = QHBoxLayout()
        top.addWidget(QLabel("Filter:", self))
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.direction)
        top.addWidget(self.toggle)
        side = QWidget(self)
        right = QVBoxLayout(side)
        right.setContentsMargins(0, 0, 0, 0)
        right.addWidget(self.editor, 1)
        right.addWidget(self.note)
        buttons = QHBoxLayout()
        buttons.addWidget(self.revert)
        buttons.addStretch(1)
        buttons.addWidget(self.drop)
        buttons.addWidget(self.forward)
        right.addLayout(buttons)
        split = QSplitter(Qt.Vertical, self)  # the list above, the message below: both get the full width
        split.setObjectName("interceptSplitter")
        split.addWidget(self.held)
        split.addWidget(side)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.addWidget(self.state)
        lay.addLayout(top)
        lay.addWidget(self.error)
        lay.addWidget(self.queue)
        lay.addWidget(split, 1)

    # ------------------------------------------------------------------ the link shown
    def show_link(self, link: InterceptLink | None) -> None:
        if self.link is not None:
            self.link.changed.disconnect(self._changed)
        self.link = link
        self._shown_hold = None
        if link is not None:
            link.changed.connect(self._changed)
            self.filter_edit.setText(link.filter)
            index = next((i for i, (_t, d) in enumerate(DIRECTIONS) if d == link.directions), 0)
            self.direction.blockSignals(True)
            self.direction.setCurrentIndex(index)
            self.direction.blockSignals(False)
        self._refresh_state()
        self._refresh_held()

    def _changed(self, what: str) -> None:
        if what == "state":
            self._refresh_state()
            self._refresh_held()
        elif what == "held":
            self._refresh_held()
        self._tick()

    def _refresh_state(self) -> None:
        link = self.link
        usable = link is not None and link.available
        for widget in (self.filter_edit, self.direction, self.toggle):
            widget.setEnabled(usable and not (link is not None and link.asked))
        self.toggle.setChecked(link is not None and link.on)
        self.toggle.setText("Intercepting" if link is not None and link.on else "Intercept")
        if link is None:
            text = "Select a tapped server to intercept its messages."
        elif not link.available:
            text = f"Intercept is unavailable: {link.unavailable}."
        elif link.asked:
            text = "Asking the tap…"
        elif link.on:
            which = " and ".join({"out": "host → server", "in": "server → host"}[d] for d in link.directions)
            what = f"matching {link.filter}" if link.filter else "(every one: the filter is empty)"
            text = (f"Intercepting {which} messages {what}: each waits here, with every later message of its "
                    "direction behind it, until you forward or drop it.")
        else:
            text = ("Intercept is off: every message passes unchanged. Type a filter (the traffic pane's language), "
                    "choose which way, and press Intercept to hold what matches.")
        self.state.setText(text)
        role = "warning" if link is not None and link.on else "muted"
        self.state.setStyleSheet(f"color: {theme.colour(role).name()};")
        error = link.error if link is not None else None
        self.error.setVisible(bool(error))
        if error:
            self.error.setText(f"✖ {error}")
            self.error.setStyleSheet(f"color: {theme.colour('error').name()};")
        if link is not None and (link.on or link.held):
            self.timer.start()
        else:
            self.timer.stop()

    def _refresh_held(self) -> None:
        link = self.link
        messages = link.waiting() if link is not None else []
        keep = self._shown_hold
        self.held.blockSignals(True)
        self.held.clear()
        now = time.time()
        current = None
        for message in messages:
            item = QTreeWidgetItem([str(message.hold), message.arrow, message.summary(),
                                    _held_for(message.held_for(now)), message.decided or "waiting"])
            item.setData(0, Qt.UserRole, message.hold)
            item.setToolTip(2, message.data[:2000].decode("utf-8", "replace"))
            self.held.addTopLevelItem(item)
            if message.hold == keep:
                current = item
        if current is None:  # the first that still waits for the user
            current = next((self.held.topLevelItem(i) for i, m in enumerate(messages) if not m.decided), None)
        if current is not None:
            self.held.setCurrentItem(current)
        self.held.blockSignals(False)
        self._show_current()

    def _tick(self) -> None:
        link = self.link
        now = time.time()
        if link is None or not link.available:
            self.queue.setText("")
            return
        self.queue.setText(link.queue_text(now) if link.on or link.held else "")
        for i in range(self.held.topLevelItemCount()):
            item = self.held.topLevelItem(i)
            message = link.held.get(item.data(0, Qt.UserRole))
            if message is not None:
                item.setText(3, _held_for(message.held_for(now)))

    # ------------------------------------------------------------------ the selected message
    def current_message(self) -> HeldMessage | None:
        item = self.held.currentItem()
        if item is None or self.link is None:
            return None
        return self.link.held.get(item.data(0, Qt.UserRole))

    def _show_current(self, force: bool = False) -> None:
        message = self.current_message()
        hold = message.hold if message is not None else None
        if hold != self._shown_hold or force:
            self._shown_hold = hold
            self.editor.blockSignals(True)
            self.editor.setPlainText(message.shown() if message is not None else "")
            self.editor.blockSignals(False)
        waiting = message is not None and not message.decided
        for widget in (self.editor, self.forward, self.drop, self.revert):
            widget.setEnabled(waiting)
        self._edited()

    def _edited(self) -> None:
        message = self.current_message()
        if message is None:
            self.note.setText("")
            return
        if message.decided:
            self.note.setText(f"Decided ({message.decided}): it goes on when the messages before it have.")
            return
        _data, note = edited(message, self.editor.toPlainText())
        if not message.is_text():
            note += " · the original is not UTF-8: shown with replacement characters (unchanged, its exact bytes go on)"
        self.note.setText(note[:1].upper() + note[1:] + ".")

    def forward_current(self) -> bool:
        message = self.current_message()
        if message is None or self.link is None or message.decided:
            return False
        return bool(self.link.forward(message.hold, self.editor.toPlainText()))

    def drop_current(self) -> bool:
        message = self.current_message()
        return message is not None and self.link is not None and self.link.drop(message.hold)

    # ------------------------------------------------------------------ on and off
    def directions(self) -> tuple[str, ...]:
        return tuple(self.direction.currentData() or ("out",))

    def _direction_chosen(self, _index: int) -> None:
        if self.link is not None and self.link.on:
            self._apply()  # on already: the new direction applies from the next message

    def _toggled(self, checked: bool) -> None:
        if checked:
            self._apply()
        elif self.link is not None:
            self.link.turn_off()
        self._refresh_state()

    def _apply(self) -> None:
        """Turn intercept on with the filter and direction shown (again: a new filter while it is on)."""
        link = self.link
        if link is None or not link.available:
            return
        problem = link.turn_on(self.filter_edit.text(), self.directions())
        self.filter_edit.show_error(problem if isinstance(problem, FilterSyntaxError) else None)
        if problem is not None:
            link.error = str(problem)
        self._refresh_state()
