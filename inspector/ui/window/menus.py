"""The window's actions and menu bar, laid out from a plain description.

Every action is added to the window itself, so its shortcut works even while the menu bar is hidden,
and carries an object name (`action…`) for automation and the shortcuts list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QWidget

SEPARATOR = None
Entry = QAction | QMenu | None


def action(window: QWidget, text: str, slot: Callable[[], Any], shortcut: Any = None, name: str = "",
           tip: str = "") -> QAction:
    a = QAction(text, window)
    a.setObjectName(name)
    if shortcut:
        a.setShortcut(QKeySequence(shortcut))
        a.setShortcutContext(Qt.WindowShortcut)
    if tip:
        a.setToolTip(tip)
        a.setStatusTip(tip)
    a.triggered.connect(lambda _=False: slot())
    window.addAction(a)
    return a


def preferences_shortcut() -> Any:
    """The platform's Preferences key (Ctrl+, where it has none)."""
    return QKeySequence.Preferences if not QKeySequence(QKeySequence.Preferences).isEmpty() else "Ctrl+,"


def choice_menu(parent: QWidget, title: str, choices: Sequence[tuple[str, str]], current: str, prefix: str,
                pick: Callable[[str], Any]) -> tuple[QMenu, QActionGroup]:
    """A submenu of exclusive choices (value, label): actions named `prefix + value`, `pick(value)` on one."""
    menu = QMenu(title, parent)
    group = QActionGroup(parent)
    for value, label in choices:
        a = QAction(label, parent, checkable=True)
        a.setObjectName(prefix + value)
        a.setChecked(value == current)
        a.triggered.connect(lambda _=False, v=value: pick(v))
        group.addAction(a)
        menu.addAction(a)
    return menu, group


def fill(menu_bar: QMenuBar, menus: Sequence[tuple[str, str, Sequence[Entry]]]) -> dict[str, QMenu]:
    """(title, objectName, entries) for each menu; an entry is an action, a submenu or SEPARATOR."""
    out = {}
    for title, name, entries in menus:
        menu = menu_bar.addMenu(title)
        menu.setObjectName(name)
        for entry in entries:
            if entry is None:
                menu.addSeparator()
            elif isinstance(entry, QMenu):
                menu.addMenu(entry)
            else:
                menu.addAction(entry)
        out[name] = menu
    return out


def insert_after_group(menu: QMenu, actions: Sequence[QAction]) -> None:
    """Put `actions` at the end of the Server menu's group of what is done to the selected server: after
    Refresh tools and what other links added after it, before the next separator."""
    existing = menu.actions()
    names = [a.objectName() for a in existing]
    start = names.index("actionRefreshTools") if "actionRefreshTools" in names else len(existing) - 1
    end = next((i for i in range(start + 1, len(existing)) if existing[i].isSeparator()), len(existing))
    menu.insertActions(existing[end] if end < len(existing) else None, list(actions))
