"""Light and dark palettes (Fusion), following the system unless forced; a high-contrast palette (a theme of the
window, and presentation mode's third look); status colours and icons. The colours themselves, the accent of
each theme included, are design tokens (`design`); the style fills a primary button (`mark_primary`) and edges
a checked tool button with the accent."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import (
    QApplication,
    QProxyStyle,
    QPushButton,
    QStyle,
    QStyleFactory,
    QStyleOptionButton,
    QStyleOptionToolButton,
)

from . import design

THEMES = ("system", "light", "dark", "high-contrast")
THEME_NAMES = {"system": "Follow the system", "light": "Light", "dark": "Dark", "high-contrast": "High contrast"}

_current: dict[str, Any] = {"mode": "system", "dark": False}


def system_is_dark() -> bool:
    try:
        return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark
    except AttributeError:  # pragma: no cover - Qt < 6.5
        return False


def is_dark() -> bool:
    return _current["dark"]


class _Style(QProxyStyle):
    """Fusion, with one change: a checked tool button (Form | JSON, Pause, Raw JSON) is filled with an accent
    tint and edged in the accent colour. Fusion draws it one shade darker than the others, which the dark
    palette makes invisible. (An application style sheet did this before; it made Qt build every widget
    through its style-sheet machinery, three times slower: a window took a second to build, not a third.)"""

    def __init__(self) -> None:
        super().__init__(QStyleFactory.create("Fusion"))
        self.fill, self.edge = design.accent_tint("light"), design.accent("light")

    def drawControl(self, element: Any, option: Any, painter: QPainter, widget: Any = None) -> None:
        if element == _CE_PUSHBUTTON and isinstance(widget, QPushButton) and widget.property("primary") \
                and option.state & _STATE_ENABLED:
            self._primary(option, painter, widget)
            return
        super().drawControl(element, option, painter, widget)

    def _primary(self, option: Any, painter: QPainter, widget: Any) -> None:
        """A primary button: flat, filled with the accent of the palette it is drawn with (the window's theme, or
        presentation mode's look), its label in the colour that reads on the accent, a ring when focused."""
        fill = QColor(option.palette.color(QPalette.ColorRole.Highlight))
        ink = option.palette.color(QPalette.ColorRole.HighlightedText)
        if option.state & _STATE_SUNKEN:
            fill = fill.darker(115)
        elif option.state & _STATE_HOVER:
            fill = fill.lighter(108)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(fill.darker(125), design.BORDER))
        painter.setBrush(fill)
        box = QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.drawRoundedRect(box, design.RADIUS, design.RADIUS)
        if option.state & _STATE_FOCUS:
            painter.setPen(QPen(ink, design.BORDER, Qt.PenStyle.DotLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(box.adjusted(2.5, 2.5, -2.5, -2.5), design.RADIUS, design.RADIUS)
        painter.restore()
        label = QStyleOptionButton(option)
        palette = QPalette(option.palette)
        palette.setColor(QPalette.ColorRole.ButtonText, ink)
        label.palette = palette
        super().drawControl(_CE_PUSHBUTTON_LABEL, label, painter, widget)

    def drawComplexControl(self, control: Any, option: Any, painter: QPainter, widget: Any = None) -> None:
        if control == _CC_TOOLBUTTON and option.state & _STATE_ON:
            tinted = QStyleOptionToolButton(option)
            palette = QPalette(option.palette)
            palette.setColor(QPalette.ColorRole.Button, self.fill)
            tinted.palette = palette
            super().drawComplexControl(control, tinted, painter, widget)
            painter.save()
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(QPen(self.edge, 1))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5), 3, 3)
            painter.restore()
            return
        super().drawComplexControl(control, option, painter, widget)


_CC_TOOLBUTTON = QStyle.ComplexControl.CC_ToolButton
_CE_PUSHBUTTON = QStyle.ControlElement.CE_PushButton
_CE_PUSHBUTTON_LABEL = QStyle.ControlElement.CE_PushButtonLabel
_STATE_SUNKEN = QStyle.StateFlag.State_Sunken
_STATE_HOVER = QStyle.StateFlag.State_MouseOver
_STATE_FOCUS = QStyle.StateFlag.State_HasFocus
_STATE_ON = QStyle.StateFlag.State_On
_STATE_ENABLED = QStyle.StateFlag.State_Enabled


def mark_primary(button: QPushButton) -> QPushButton:
    """The one obvious action of a pane (Call, Read, Get prompt, Run): drawn filled with the theme's accent."""
    button.setProperty("primary", True)
    return button


def apply_theme(app: QApplication, mode: str = "system") -> bool:
    """Set Fusion and a light or dark palette; returns True when dark. `system` follows changes."""
    if mode not in THEMES:
        raise ValueError(f"unknown theme {mode!r}: use {', '.join(THEMES)}")
    first = _current.get("hooked") is not app
    _current["mode"] = mode
    dark = system_is_dark() if mode == "system" else mode in ("dark", "high-contrast")
    _current["dark"] = dark
    # Setting the style or the palette again re-polishes every widget of the application: only what changes
    style = _current.get("style")
    if style is None or app.style() is not style:
        style = _current["style"] = _Style()
        app.setStyle(style)
    now = look()
    style.fill, style.edge = design.accent_tint(now), design.accent(now)
    palette = high_contrast_palette() if mode == "high-contrast" else dark_palette() if dark else light_palette()
    if app.palette() != palette:
        app.setPalette(palette)
    if first:
        _current["hooked"] = app
        try:
            QGuiApplication.styleHints().colorSchemeChanged.connect(lambda *_: _follow(app))
        except AttributeError:  # pragma: no cover
            pass
    return dark


def _follow(app: QApplication) -> None:
    if _current["mode"] == "system":
        apply_theme(app, "system")


def _palette(look: str) -> QPalette:
    """The theme's palette from the design tokens; the selection, links and focus in the theme's accent."""
    p = QPalette()
    for role, value in design.PALETTES[look].items():
        if role != "disabled":
            p.setColor(getattr(QPalette.ColorRole, role), QColor(value))
    p.setColor(QPalette.ColorRole.Highlight, design.accent(look))
    p.setColor(QPalette.ColorRole.HighlightedText, design.on_accent(look))
    p.setColor(QPalette.ColorRole.Link, design.accent(look))
    for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
        p.setColor(QPalette.Disabled, role, QColor(design.PALETTES[look]["disabled"]))
    return p


def light_palette() -> QPalette:
    return _palette("light")


def dark_palette() -> QPalette:
    return _palette("dark")


def high_contrast_palette() -> QPalette:
    """White on black with yellow focus and links (for projectors and low vision; presentation mode's third look)."""
    return _palette("high-contrast")


def look() -> str:
    """The theme in use: "light", "dark" or "high-contrast"."""
    return "high-contrast" if _current["mode"] == "high-contrast" else "dark" if is_dark() else "light"


def accent() -> QColor:
    """The theme's one accent colour: primary buttons, the selection, links, the focus frame."""
    return design.accent(look())


FILLED_BADGES = frozenset(k for k in design.COLOURS)  # every badge is drawn filled (kept for older callers)


def colour(name: str) -> QColor:
    light, dark = design.pair(name)
    return QColor(dark if is_dark() else light)


def status_colour(status_value: str) -> QColor:
    key = {"connected": "connected", "connecting": "connecting", "error": "error", "exited": "exited"}
    return colour(key.get(status_value, "idle"))


def status_icon(status_value: str, size: int = 16) -> QIcon:
    """A filled dot (connected), ring (connecting), cross (error), square (exited), hollow dot (idle)."""
    pm = QPixmap(size, size)
    pm.fill(Qt.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.Antialiasing)
    c = status_colour(status_value)
    r = QRectF(2.5, 2.5, size - 5, size - 5)
    if status_value == "connected":
        p.setPen(Qt.NoPen)
        p.setBrush(c)
        p.drawEllipse(r)
    elif status_value == "connecting":
        p.setPen(QPen(c, 2.2))
        p.setBrush(Qt.NoBrush)
        p.drawArc(r, 90 * 16, 270 * 16)
    elif status_value == "error":
        p.setPen(Qt.NoPen)
        p.setBrush(c)
        p.drawEllipse(r)
        p.setPen(QPen(colour("paper"), 2))
        m = size * 0.34
        p.drawLine(QPointF(m, m), QPointF(size - m, size - m))
        p.drawLine(QPointF(size - m, m), QPointF(m, size - m))
    elif status_value == "exited":
        p.setPen(Qt.NoPen)
        p.setBrush(c)
        p.drawRoundedRect(r.adjusted(1, 1, -1, -1), 2, 2)
    else:
        p.setPen(QPen(c, 1.6))
        p.setBrush(Qt.NoBrush)
        p.drawEllipse(r.adjusted(1, 1, -1, -1))
    p.end()
    return QIcon(pm)


_SEVERITY_ICONS: list[QIcon] = []


def severity_icon(severity: int) -> QIcon:
    """The style's icon for a finding's severity code (0 error, 1 warning, 2 info)."""
    if not _SEVERITY_ICONS:
        style = QApplication.style()
        _SEVERITY_ICONS.extend(style.standardIcon(p) for p in (QStyle.StandardPixmap.SP_MessageBoxCritical,
                                                                QStyle.StandardPixmap.SP_MessageBoxWarning,
                                                                QStyle.StandardPixmap.SP_MessageBoxInformation))
    return _SEVERITY_ICONS[severity]
