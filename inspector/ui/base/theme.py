"""Light and dark palettes (Fusion), following the system unless forced; a high-contrast palette (a theme of the
window, and presentation mode's third look); status colours and icons."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleFactory, QStyleOptionToolButton

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
        self.fill, self.edge = QColor("#dbe6fb"), QColor("#2f6fdd")

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
_STATE_ON = QStyle.StateFlag.State_On


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
    style.fill, style.edge = (QColor("#23406f"), QColor("#2f6fdd")) if dark else \
        (QColor("#dbe6fb"), QColor("#2f6fdd"))
    if mode == "high-contrast":
        style.fill, style.edge = QColor("#3a3a00"), QColor("#ffff00")
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


def light_palette() -> QPalette:
    p = QPalette()
    c = {
        QPalette.Window: "#f3f4f6", QPalette.WindowText: "#1f2328", QPalette.Base: "#ffffff",
        QPalette.AlternateBase: "#f6f8fa", QPalette.ToolTipBase: "#ffffff", QPalette.ToolTipText: "#1f2328",
        QPalette.PlaceholderText: "#6e7781", QPalette.Text: "#1f2328", QPalette.Button: "#eceef1",
        QPalette.ButtonText: "#1f2328", QPalette.BrightText: "#cf222e", QPalette.Highlight: "#2f6fdd",
        QPalette.HighlightedText: "#ffffff", QPalette.Link: "#0a58ca", QPalette.LinkVisited: "#6f42c1",
        QPalette.Light: "#ffffff", QPalette.Midlight: "#e6e8eb", QPalette.Mid: "#c4c8cf",
        QPalette.Dark: "#8c959f", QPalette.Shadow: "#57606a",
    }
    for role, colour in c.items():
        p.setColor(role, QColor(colour))
    for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
        p.setColor(QPalette.Disabled, role, QColor("#8c959f"))
    return p


def dark_palette() -> QPalette:
    p = QPalette()
    c = {
        QPalette.Window: "#1f2227", QPalette.WindowText: "#e6e8eb", QPalette.Base: "#16181c",
        QPalette.AlternateBase: "#1c1f24", QPalette.ToolTipBase: "#2a2e35", QPalette.ToolTipText: "#e6e8eb",
        QPalette.PlaceholderText: "#8b949e", QPalette.Text: "#e6e8eb", QPalette.Button: "#2a2e35",
        QPalette.ButtonText: "#e6e8eb", QPalette.BrightText: "#ff7b72", QPalette.Highlight: "#2f6fdd",
        QPalette.HighlightedText: "#ffffff", QPalette.Link: "#58a6ff", QPalette.LinkVisited: "#bc8cff",
        QPalette.Light: "#3a3f47", QPalette.Midlight: "#30343b", QPalette.Mid: "#2a2e35",
        QPalette.Dark: "#101215", QPalette.Shadow: "#000000",
    }
    for role, colour in c.items():
        p.setColor(role, QColor(colour))
    for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
        p.setColor(QPalette.Disabled, role, QColor("#6e7681"))
    return p



def high_contrast_palette() -> QPalette:
    """White on black with yellow focus and links (for projectors and low vision; presentation mode's third look)."""
    p = QPalette()
    c = {
        QPalette.Window: "#000000", QPalette.WindowText: "#ffffff", QPalette.Base: "#000000",
        QPalette.AlternateBase: "#101010", QPalette.ToolTipBase: "#000000", QPalette.ToolTipText: "#ffffff",
        QPalette.PlaceholderText: "#d0d0d0", QPalette.Text: "#ffffff", QPalette.Button: "#000000",
        QPalette.ButtonText: "#ffffff", QPalette.BrightText: "#ffff00", QPalette.Highlight: "#ffff00",
        QPalette.HighlightedText: "#000000", QPalette.Link: "#ffff00", QPalette.LinkVisited: "#ffd700",
        QPalette.Light: "#ffffff", QPalette.Midlight: "#ffffff", QPalette.Mid: "#ffffff",
        QPalette.Dark: "#ffffff", QPalette.Shadow: "#ffffff",
    }
    for role, colour in c.items():
        p.setColor(role, QColor(colour))
    for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
        p.setColor(QPalette.Disabled, role, QColor("#b0b0b0"))
    return p

# ---------------------------------------------------------------------- semantic colours
_COLOURS = {
    # name: (light, dark)
    "connected": ("#1a7f37", "#3fb950"),
    "connecting": ("#9a6700", "#d29922"),
    "error": ("#cf222e", "#ff7b72"),
    "exited": ("#bc4c00", "#f0883e"),
    "idle": ("#6e7781", "#8b949e"),
    "muted": ("#57606a", "#9da7b3"),
    "read-only": ("#1a7f37", "#3fb950"),
    "destructive": ("#cf222e", "#ff7b72"),
    "may change things (not declared)": ("#bc4c00", "#db6d28"),  # filled (FILLED_BADGES)
    "on-filled": ("#ffffff", "#0d1117"),  # the text of a filled badge
    "idempotent": ("#0969da", "#58a6ff"),
    "open-world": ("#9a6700", "#d29922"),
    "task": ("#8250df", "#bc8cff"),
    "task optional": ("#8250df", "#bc8cff"),
    "app": ("#0e7c86", "#39c5cf"),  # a tool with an MCP App (an interactive view)
    "app-only": ("#6639ba", "#d2a8ff"),  # a tool only apps see
    "warning": ("#bc4c00", "#f0883e"),
    "new": ("#1a7f37", "#3fb950"),
    "removed": ("#6e7781", "#8b949e"),
    "changed": ("#0969da", "#58a6ff"),  # a definition that changed (after a restart, or list_changed)
    "banner": ("#fff1e5", "#3d2212"),
    "banner-border": ("#bc4c00", "#f0883e"),
    "info-banner": ("#ddf4ff", "#0c2d48"),
    "info-banner-border": ("#0969da", "#58a6ff"),
}


FILLED_BADGES = frozenset({"may change things (not declared)"})  # badges drawn filled, not tinted


def colour(name: str) -> QColor:
    light, dark = _COLOURS.get(name, _COLOURS["muted"])
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
        p.setPen(QPen(QColor("white"), 2))
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


def tool_glyph(size: int = 20) -> QPixmap:
    """The icon of a tool that brings none of its own: a small wrench-like mark."""
    pm = QPixmap(size, size)
    pm.fill(Qt.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.Antialiasing)
    c = colour("muted")
    p.setPen(QPen(c, 1.5))
    p.setBrush(Qt.NoBrush)
    p.drawRoundedRect(QRectF(2.5, 2.5, size - 5, size - 5), 4, 4)
    p.setPen(QPen(c, 2, Qt.SolidLine, Qt.RoundCap))
    p.drawLine(QPointF(size * 0.32, size * 0.68), QPointF(size * 0.68, size * 0.32))
    p.drawEllipse(QPointF(size * 0.68, size * 0.32), 1.6, 1.6)
    p.end()
    return pm


_SEVERITY_ICONS: list[QIcon] = []


def severity_icon(severity: int) -> QIcon:
    """The style's icon for a finding's severity code (0 error, 1 warning, 2 info)."""
    if not _SEVERITY_ICONS:
        style = QApplication.style()
        _SEVERITY_ICONS.extend(style.standardIcon(p) for p in (QStyle.StandardPixmap.SP_MessageBoxCritical,
                                                                QStyle.StandardPixmap.SP_MessageBoxWarning,
                                                                QStyle.StandardPixmap.SP_MessageBoxInformation))
    return _SEVERITY_ICONS[severity]
