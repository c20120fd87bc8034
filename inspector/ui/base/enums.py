"""Fast short enum names for PySide6: `Qt.DisplayRole`, `QStyle.State_Selected`, `Qt.AlignCenter`.

PySide6 finds such a short name (the member of an enum nested in the class) through its "forgiveness mode"
on every lookup: 5-35 µs each, against a few hundredths of a µs for a plain class attribute. A delegate's
paint or a model's data() names a dozen of them per row and runs for every row on screen, many times a
second while a server floods; measured, those lookups were a tenth of the window's work during a flood.
`install()` sets the members of the enums the window uses as plain attributes of their classes (the same
objects the long names give), once. A name that two of these enums share is left to PySide6.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont, QPainter, QPalette
from PySide6.QtWidgets import QAbstractItemView, QFrame, QHeaderView, QSizePolicy, QStyle

# Only these enums, named one by one: listing every enum of `Qt` would make PySide6 build all of them
# (a quarter of a second at start).
HOT: dict[type, tuple[str, ...]] = {
    Qt: ("ItemDataRole", "AlignmentFlag", "TextElideMode", "ItemFlag", "Orientation", "SortOrder", "CheckState",
         "KeyboardModifier", "PenStyle", "BrushStyle", "FocusReason", "TextFormat", "CursorShape",
         "ScrollBarPolicy", "MouseButton", "TextInteractionFlag", "WidgetAttribute", "GlobalColor",
         "ShortcutContext", "TimerType", "ContextMenuPolicy", "FocusPolicy", "WindowState", "TextFlag",
         "LayoutDirection", "MatchFlag"),
    QStyle: ("StateFlag", "ControlElement", "PixelMetric", "PrimitiveElement", "StandardPixmap"),
    QPainter: ("RenderHint",),
    QPalette: ("ColorRole", "ColorGroup"),
    QFont: ("Weight", "StyleHint"),
    QAbstractItemView: ("ScrollHint", "SelectionMode", "SelectionBehavior", "EditTrigger", "ScrollMode"),
    QHeaderView: ("ResizeMode",),
    QEvent: ("Type",),
    QSizePolicy: ("Policy",),
    QFrame: ("Shape", "Shadow"),
}
_installed = False


def install() -> int:
    """Set the short names (once); returns how many were set."""
    global _installed
    if _installed:
        return 0
    _installed = True
    count = 0
    for cls, enums in HOT.items():
        seen: dict[str, list[object]] = {}
        for name in enums:
            for member_name, member in getattr(cls, name).__members__.items():
                seen.setdefault(member_name, []).append(member)
        for member_name, members in seen.items():
            if len(members) == 1:
                setattr(cls, member_name, members[0])
                count += 1
    return count
