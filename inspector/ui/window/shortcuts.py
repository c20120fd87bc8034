"""Help → Keyboard shortcuts (`shortcutsDialog`): every shortcut of the window, read from its actions and
QShortcuts when the dialog opens (so panels added by others are listed too), plus the ones that
belong to a widget's own keys."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QHeaderView,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

# Keys handled by widgets rather than actions, listed so the view is complete.
WIDGET_KEYS = [
    ("Ctrl+Return", "Call the selected tool (in the tool panel)"),
    ("Escape", "Close a dialog or the command palette"),
    ("Up / Down, Enter", "Pick and run a command in the palette"),
]


def collect(window: Any) -> list[tuple[str, str]]:
    """(keys, what) for every QAction and QShortcut under `window` that has a shortcut."""
    seen: dict[str, str] = {}
    rows: list[tuple[str, str]] = []
    for action in window.findChildren(QAction):
        for seq in action.shortcuts():
            keys = seq.toString(QKeySequence.NativeText)
            what = (action.toolTip() if action.text() == "" else action.text()).replace("&", "").rstrip("…")
            if isinstance(action.parent(), QDockWidget):
                what = f"Show or hide the {what} pane"
            if keys and (keys, what) not in seen.items():
                seen[keys] = what
                rows.append((keys, what))
    for sc in window.findChildren(QShortcut):
        keys = sc.key().toString(QKeySequence.NativeText)
        what = sc.whatsThis() or _described_by_tooltip(window, keys) or sc.objectName() or "(shortcut)"
        if keys and keys not in seen:
            seen[keys] = what
            rows.append((keys, what))
    for keys, what in WIDGET_KEYS:
        native = QKeySequence(keys).toString(QKeySequence.NativeText) if "/" not in keys and "," not in keys \
            else keys
        if native not in seen:
            rows.append((native, what))
    return sorted(rows, key=lambda r: r[1].casefold())


def _described_by_tooltip(window: Any, keys: str) -> str:
    """A widget whose tooltip ends with "(KEYS)" describes what KEYS does (e.g. the traffic pair button)."""
    mark = f"({keys})"
    for widget in window.findChildren(QWidget):
        tip = widget.toolTip()
        if tip.endswith(mark):
            return tip[: -len(mark)].strip()
    return ""


class ShortcutsDialog(QDialog):
    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle("Keyboard shortcuts")
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("shortcutList")
        self.tree.setHeaderLabels(["Action", "Keys"])
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        for keys, what in collect(window):
            item = QTreeWidgetItem(self.tree, [what, keys])
            item.setTextAlignment(1, Qt.AlignLeft | Qt.AlignVCenter)
        self.tree.header().setSectionResizeMode(0, QHeaderView.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.Close, self)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.tree)
        lay.addWidget(buttons)
        self.resize(600, 480)

    def rows(self) -> list[tuple[str, str]]:
        return [(self.tree.topLevelItem(i).text(1), self.tree.topLevelItem(i).text(0))
                for i in range(self.tree.topLevelItemCount())]
