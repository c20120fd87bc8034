"""The traffic filter bar's own widgets: the filter line (plain text or a display-filter expression, see
`inspector.traffic.expr`) with completion as you type and its fault underlined, and the saved filters.

Object names: `trafficFilter` (the line), `trafficFilterCompletions` (the completion popup),
`trafficSavedFilters` (the bookmark button at the start of the line, whose menu saves, applies and deletes
named filters).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QModelIndex, QObject, QPointF, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QIcon,
    QInputMethodEvent,
    QKeyEvent,
    QPainter,
    QPixmap,
    QPolygonF,
    QStandardItem,
    QStandardItemModel,
    QTextCharFormat,
)
from PySide6.QtWidgets import QCompleter, QInputDialog, QLineEdit, QMenu, QStyle, QToolButton, QWidget

from ...traffic import TrafficStore
from ...traffic.expr import FIELDS, FLAGS, Context, FilterSyntaxError, context_at, is_expression, quote
from ...traffic.filter import known_tools
from ..base import design
from ..base.highlight import palette_is_dark

WORD_ROLE = Qt.ItemDataRole.UserRole  # what the typed prefix is matched against
INSERT_ROLE = Qt.ItemDataRole.UserRole + 1  # what replaces the prefix
SAVED_KEY = "traffic/savedFilters"  # QSettings: a JSON list of [name, filter text]
TIP = ("Plain text searches the method, the malformed reason and the raw text (all lowercase ignores case). "
       'An expression filters by field: method == "tools/call" && latency > 500ms, tool == weather, '
       "dir == in, kind == error, size > 1MB, text contains \"Oslo\", expert, severity >= warning… "
       "(docs/filters.md)")
_OPERATOR_DOCS = {"==": "equals", "!=": "differs from", "<": "less than", "<=": "at most", ">": "more than",
                  ">=": "at least", "~": "matches the regular expression", "contains": "holds the text"}
_EXAMPLES = {"latency": ["1ms", "100ms", "500ms", "1s"], "size": ["100B", "1kB", "100kB", "1MB"]}


def error_colour(dark: bool) -> str:
    return design.pair("error")[1 if dark else 0]


class FilterEdit(QLineEdit):
    """The filter line. `show_error` underlines a `FilterSyntaxError`'s span (red wavy) and says it in the
    tooltip; completion offers field names, operators and the values the store has seen."""

    def __init__(self, store: TrafficStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trafficFilter")
        self.store = store
        self.error: FilterSyntaxError | None = None
        self._underlined = False
        self.setToolTip(TIP)
        self.items = QStandardItemModel(self)
        self.completer = QCompleter(self.items, self)
        self.completer.setWidget(self)
        self.completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setCompletionRole(WORD_ROLE)
        self.completer.setMaxVisibleItems(14)
        popup = self.completer.popup()
        popup.setObjectName("trafficFilterCompletions")
        # a frame that shows on the dark palette too, and some air around the words
        popup.setStyleSheet(f"QListView#trafficFilterCompletions {{ {design.border_css('palette(mid)')} }}"
                            f" QListView#trafficFilterCompletions::item {{ {design.padding_css('hair', 's')} }}")
        self.completer.activated[QModelIndex].connect(self._complete)
        self.context: Context | None = None
        self._error_action = QAction(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical), "", self)
        self._error_action.setObjectName("trafficFilterErrorMark")
        self._error_action.triggered.connect(self._go_to_error)
        self.textEdited.connect(self.update_completion)
        self.textChanged.connect(lambda _t: self._underline(None))

    # ------------------------------------------------------------------ the fault
    def show_error(self, error: FilterSyntaxError | None) -> None:
        """Underline what `error` points at (None: nothing is wrong)."""
        self.error = error
        self._underline(error)
        if error is None:
            self.setToolTip(TIP)
            self.removeAction(self._error_action)
            return
        self.setToolTip(f"{error} — the previous filter stays applied")
        self._error_action.setToolTip(str(error))
        if self._error_action not in self.actions():
            self.addAction(self._error_action, QLineEdit.ActionPosition.TrailingPosition)

    def _underline(self, error: FilterSyntaxError | None) -> None:
        # QLineEdit draws the text formats of an input-method event: the one public way to style a range.
        # Only sent when something changes, so that it never ends what an input method is composing.
        if error is None and not self._underlined:
            return
        self._underlined = error is not None
        attributes = []
        size = len(self.text())
        if error is not None and size:
            start = min(error.start, size - 1)
            length = max(1, min(error.end, size) - start)
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(QColor(error_colour(palette_is_dark(self.palette()))))
            attributes.append(QInputMethodEvent.Attribute(QInputMethodEvent.AttributeType.TextFormat,
                                                          start - self.cursorPosition(), length, fmt))
        QCoreApplication.sendEvent(self, QInputMethodEvent("", attributes))

    def _go_to_error(self) -> None:
        if self.error is not None:
            self.setFocus()
            self.setSelection(self.error.start, max(1, self.error.end - self.error.start))

    # ------------------------------------------------------------------ completion
    def event(self, event: QEvent) -> bool:
        # Tab would move the focus before keyPressEvent sees it: leave it to the open popup, which takes the offer
        if (event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
                and event.key() in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab) and self.completer.popup().isVisible()):
            event.ignore()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self.completer.popup().isVisible() and event.key() in (
                Qt.Key.Key_Enter, Qt.Key.Key_Return, Qt.Key.Key_Escape, Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
            event.ignore()  # the completer's own keys
            return
        super().keyPressEvent(event)

    def offers(self, ctx: Context) -> list[tuple[str, str, str]]:
        """(word matched, text inserted, text shown) for what can come at `ctx`."""
        if ctx.kind == "field":
            return [(name, name, f"{name}  —  {field.doc}") for name, field in FIELDS.items()] + \
                [(name, name, f"{name}  —  {doc}") for name, doc in FLAGS.items()] + [("not", "!", "!  —  not")]
        if ctx.kind == "operator":
            return [(op, op, f"{op}  —  {_OPERATOR_DOCS[op]}") for op in FIELDS[ctx.field].ops]
        if ctx.kind == "logic":
            return [("&&", "&&", "&&  —  and"), ("||", "||", "||  —  or"), ("and", "&&", "and"), ("or", "||", "or")]
        if ctx.kind != "value":
            return []
        field = FIELDS[ctx.field]
        if field.choices:
            return [(v, v, v) for v in field.choices]
        if ctx.field in _EXAMPLES:
            return [(v, v, v) for v in _EXAMPLES[ctx.field]]
        seen = {"method": self.store.methods, "server": self.store.servers,
                "tool": lambda: known_tools(self.store)}.get(ctx.field)
        return [(v, quote(v), v) for v in seen()] if seen is not None else []

    def update_completion(self, _text: str = "") -> None:
        """Offer what completes the word at the cursor (the popup shows when something fits)."""
        text, cursor = self.text(), self.cursorPosition()
        ctx = context_at(text, cursor)
        self.context = ctx
        popup = self.completer.popup()
        wanted = bool(ctx.prefix) or ctx.kind in ("operator", "value") or (ctx.kind == "field" and ctx.start > 0)
        # plain text stays plain: past its first word (a field's operators aside), only an expression gets offers
        words = text[:ctx.start].split()
        plain = not is_expression(text) and bool(words) and not (ctx.kind == "operator" and len(words) == 1)
        if ctx.kind == "none" or not wanted or plain:
            popup.hide()
            return
        self.items.clear()
        for word, insert, shown in self.offers(ctx):
            item = QStandardItem(shown)
            item.setData(word, WORD_ROLE)
            item.setData(insert, INSERT_ROLE)
            item.setEditable(False)
            self.items.appendRow(item)
        self.completer.setFilterMode(Qt.MatchFlag.MatchContains if ctx.kind == "value"
                                     else Qt.MatchFlag.MatchStartsWith)
        self.completer.setCompletionPrefix(ctx.prefix)
        if self.completer.completionCount() == 0:
            popup.hide()
            return
        popup.setCurrentIndex(self.completer.completionModel().index(0, 0))
        rect = self.cursorRect()
        rect.translate(-self.fontMetrics().horizontalAdvance(text[ctx.start:cursor]), 0)
        rect.setTop(0)
        rect.setBottom(self.height() - 1)  # the popup opens under the line, not over it
        rect.setWidth(max(popup.sizeHintForColumn(0) + popup.verticalScrollBar().sizeHint().width() + 8, 160))
        self.completer.complete(rect)

    def _complete(self, index: QModelIndex) -> None:
        ctx = self.context
        if ctx is None:
            return
        insert = str(index.data(INSERT_ROLE))
        text, cursor = self.text(), self.cursorPosition()
        before = text[:ctx.start]
        lead = " " if before and not before[-1].isspace() and before[-1] not in "(!" else ""
        trail = "" if text[cursor:cursor + 1].isspace() else " "
        self.setSelection(ctx.start, cursor - ctx.start)
        self.insert(lead + insert + trail)
        # a field is followed by its operators, an operator by the values: once the completer has hidden its popup
        QTimer.singleShot(0, self.update_completion)


def bookmark_icon(size: int = 16) -> QIcon:
    """A bookmark ribbon in a grey that reads on light and dark bases."""
    pm = QPixmap(size, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor(design.pair("ribbon")[0]))
    w, h = size * 0.55, size * 0.8
    x, y = (size - w) / 2, (size - h) / 2
    p.drawPolygon(QPolygonF([QPointF(x, y), QPointF(x + w, y), QPointF(x + w, y + h), QPointF(x + w / 2, y + h * 0.7),
                             QPointF(x, y + h)]))
    p.end()
    return QIcon(pm)


class SavedFilters(QObject):
    """Named filters kept in the settings, behind a bookmark button at the start of the filter line
    (`button`, object name `trafficSavedFilters`; it takes no room of the bar): save the current filter,
    apply one, delete one."""

    applied = Signal(str)  # the text of the saved filter chosen

    def __init__(self, edit: QLineEdit, settings: Callable[[], QSettings], current: Callable[[], str]) -> None:
        super().__init__(edit)
        self._settings = settings
        self._current = current
        action = edit.addAction(bookmark_icon(), QLineEdit.ActionPosition.LeadingPosition)
        action.setToolTip("Saved filters: save the current filter under a name, apply or delete one")
        self.button = next(b for b in edit.findChildren(QToolButton) if b.defaultAction() is action)
        self.button.setObjectName("trafficSavedFilters")
        self.menu = QMenu(edit)
        self.menu.setObjectName("trafficSavedFiltersMenu")
        self.menu.setToolTipsVisible(True)
        self.menu.aboutToShow.connect(self.refresh_menu)
        self.button.setMenu(self.menu)
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)

    def filters(self) -> list[tuple[str, str]]:
        """(name, filter text) pairs, in the order they were saved."""
        try:
            raw = json.loads(str(self._settings().value(SAVED_KEY) or "[]"))
        except ValueError:
            return []
        if not isinstance(raw, list):
            return []
        return [(str(p[0]), str(p[1])) for p in raw if isinstance(p, list) and len(p) == 2]

    def save(self, name: str, text: str) -> None:
        """Keep `text` under `name` (replacing a filter of that name)."""
        name = name.strip()
        if not name:
            return
        kept = [(n, t) for n, t in self.filters() if n != name] + [(name, text)]
        self._write(kept)

    def delete(self, name: str) -> None:
        self._write([(n, t) for n, t in self.filters() if n != name])

    def apply(self, name: str) -> bool:
        text = dict(self.filters()).get(name)
        if text is None:
            return False
        self.applied.emit(text)
        return True

    def _write(self, filters: list[tuple[str, str]]) -> None:
        settings = self._settings()
        settings.setValue(SAVED_KEY, json.dumps([list(p) for p in filters], ensure_ascii=False))
        settings.sync()
        self.refresh_menu()

    def ask_and_save(self) -> None:
        text = self._current().strip()
        if not text:
            return
        name, ok = QInputDialog.getText(self.button, "Save filter", f"Name for the filter\n{text}", text=text[:40])
        if ok and name.strip():
            self.save(name, text)

    def refresh_menu(self) -> None:
        menu = self.menu
        menu.clear()
        save = menu.addAction("Save current filter…")
        save.setObjectName("trafficSaveFilter")
        save.setEnabled(bool(self._current().strip()))
        save.triggered.connect(self.ask_and_save)
        filters = self.filters()
        if not filters:
            empty = menu.addAction("No saved filters")
            empty.setEnabled(False)
            return
        menu.addSeparator()
        for name, text in filters:
            action = menu.addAction(name)
            action.setObjectName(f"trafficSavedFilter:{name}")
            action.setToolTip(text)
            action.triggered.connect(lambda _c=False, n=name: self.apply(n))
        menu.addSeparator()
        remove = menu.addMenu("Delete")
        remove.setObjectName("trafficDeleteFilter")
        for name, _text in filters:
            action = remove.addAction(name)
            action.triggered.connect(lambda _c=False, n=name: self.delete(n))


__all__ = ["FilterEdit", "SavedFilters"]
