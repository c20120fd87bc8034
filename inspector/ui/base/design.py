"""The window's design tokens, in one place: the spacing scale, the type scale, the accent colour of each theme,
and every other colour the window draws with. Nothing else in `inspector/ui` writes a pixel margin, a point size
or a colour literal (tests/ui/test_ui_design.py reads the source to keep it so).

- Spacing: `space(step)` in pixels, `margins(*steps)` for `setContentsMargins` (CSS order: one step for all
  sides; vertical, horizontal; or left, top, right, bottom). The steps are `SPACE`'s names; those of 16 px and
  more grow with the text size (half as fast: 1.5 times at 200 % text), for what is built after it is set.
- Type: `size(role, base)` is a role's point size from the body's (`TYPE`: small, body, heading, title,
  display), `font(role, base)` the font.
- Colour: `accent(look)` and `on_accent(look)` (one accent per theme: primary buttons, selection, links, focus);
  `pair(name)` the (light, dark) pair of a named colour; `PALETTES` the roles of each theme's palette; `CSS` the
  few style-sheet pieces (a frame's outline, a bar on its left) that take a token rather than a number.
"""

from __future__ import annotations

from PySide6.QtCore import QMargins
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QApplication

# ---------------------------------------------------------------------- spacing
SPACE = {"none": 0, "hair": 2, "xs": 4, "s": 6, "m": 8, "l": 12, "xl": 16, "xxl": 24, "xxxl": 32}
_scale = {"text": 1.0}


def set_text_scale(ratio: float) -> None:
    """The text size against the system's (1.0 at 100 %): what is laid out from now on is spaced for it."""
    _scale["text"] = ratio if ratio > 0 else 1.0


GROWS_FROM = 16  # px: the steps from this one up frame a page and grow with the text; the smaller ones, between
# the lines and controls of a pane, stay (grown, at 200 % the traffic message kept 7 lines, not 8)


def space(step: str) -> int:
    """A step of the spacing scale, in pixels at the text size in use."""
    if step not in SPACE:
        raise ValueError(f"unknown spacing step {step!r}: use {', '.join(SPACE)}")
    px = SPACE[step]
    return round(px * (1 + (_scale["text"] - 1) / 2)) if px >= GROWS_FROM else px


def margins(*steps: str) -> QMargins:
    """Contents margins from steps, in CSS order: (all), (vertical, horizontal) or (left, top, right, bottom)."""
    if len(steps) == 1:
        px = [space(steps[0])] * 4
    elif len(steps) == 2:
        v, h = space(steps[0]), space(steps[1])
        px = [h, v, h, v]
    elif len(steps) == 4:
        px = [space(s) for s in steps]
    else:
        raise ValueError("margins takes 1, 2 or 4 steps")
    return QMargins(*px)


BORDER = 1  # px: a frame's line
BAR = 4  # px: the bar on the left of a result or an error frame
RADIUS = 3  # px: a frame's corners
BADGE_RADIUS = 4  # px: a badge's corners

# ---------------------------------------------------------------------- type
TYPE = {"small": 0.85, "body": 1.0, "heading": 1.2, "title": 1.5, "display": 2.0}
MIN_POINTS = 6.5  # no text is drawn smaller


def size(role: str, base: float | None = None) -> float:
    """The point size of `role`, from `base` (the body's size: the application font's when None)."""
    if role not in TYPE:
        raise ValueError(f"unknown type role {role!r}: use {', '.join(TYPE)}")
    body = base if base is not None and base > 0 else QApplication.font().pointSizeF()
    return max(MIN_POINTS, body * TYPE[role])


def font(role: str, base: QFont | None = None, *, bold: bool | None = None) -> QFont:
    """`base` (the application's font when None) at `role`'s size; headings and titles bold unless told."""
    f = QFont(base if base is not None else QApplication.font())
    f.setPointSizeF(size(role, f.pointSizeF()))
    if bold if bold is not None else role in ("heading", "title", "display"):
        f.setBold(True)
    return f


# ---------------------------------------------------------------------- colour
# One accent per theme: primary buttons, the selection, links and the focus frame. Light and dark keep white or
# ink on it at 4.5:1 or better, and the accent itself at 4.5:1 on the base (links).
ACCENT = {"light": "#2f6fdd", "dark": "#58a6ff", "high-contrast": "#ffff00"}
ON_ACCENT = {"light": "#ffffff", "dark": "#0d1117", "high-contrast": "#000000"}
ACCENT_TINT = {"light": "#dbe6fb", "dark": "#23406f", "high-contrast": "#3a3a00"}  # a checked tool button


def look_of(dark: bool, high_contrast: bool = False) -> str:
    return "high-contrast" if high_contrast else "dark" if dark else "light"


def accent(look: str) -> QColor:
    return QColor(ACCENT.get(look, ACCENT["light"]))


def on_accent(look: str) -> QColor:
    return QColor(ON_ACCENT.get(look, ON_ACCENT["light"]))


def accent_tint(look: str) -> QColor:
    return QColor(ACCENT_TINT.get(look, ACCENT_TINT["light"]))


# Each theme's palette: role name (QPalette.ColorRole) -> colour; Highlight and Link are the accent.
PALETTES: dict[str, dict[str, str]] = {
    "light": {
        "Window": "#f3f4f6", "WindowText": "#1f2328", "Base": "#ffffff", "AlternateBase": "#f6f8fa",
        "ToolTipBase": "#ffffff", "ToolTipText": "#1f2328", "PlaceholderText": "#6e7781", "Text": "#1f2328",
        "Button": "#eceef1", "ButtonText": "#1f2328", "BrightText": "#cf222e", "LinkVisited": "#6f42c1",
        "Light": "#ffffff", "Midlight": "#e6e8eb", "Mid": "#c4c8cf", "Dark": "#8c959f", "Shadow": "#57606a",
        "disabled": "#8c959f",
    },
    "dark": {
        "Window": "#1f2227", "WindowText": "#e6e8eb", "Base": "#16181c", "AlternateBase": "#1c1f24",
        "ToolTipBase": "#2a2e35", "ToolTipText": "#e6e8eb", "PlaceholderText": "#8b949e", "Text": "#e6e8eb",
        "Button": "#2a2e35", "ButtonText": "#e6e8eb", "BrightText": "#ff7b72", "LinkVisited": "#bc8cff",
        "Light": "#3a3f47", "Midlight": "#30343b", "Mid": "#2a2e35", "Dark": "#101215", "Shadow": "#000000",
        "disabled": "#6e7681",
    },
    "high-contrast": {  # white on black, yellow focus and links (for projectors and low vision)
        "Window": "#000000", "WindowText": "#ffffff", "Base": "#000000", "AlternateBase": "#101010",
        "ToolTipBase": "#000000", "ToolTipText": "#ffffff", "PlaceholderText": "#d0d0d0", "Text": "#ffffff",
        "Button": "#000000", "ButtonText": "#ffffff", "BrightText": "#ffff00", "LinkVisited": "#ffd700",
        "Light": "#ffffff", "Midlight": "#ffffff", "Mid": "#ffffff", "Dark": "#ffffff", "Shadow": "#ffffff",
        "disabled": "#b0b0b0",
    },
}

# Named colours, (light, dark): what a status, a badge, a banner or a chart series is drawn in.
COLOURS = {
    "connected": ("#1a7f37", "#3fb950"),
    "connecting": ("#9a6700", "#d29922"),
    "error": ("#cf222e", "#ff7b72"),
    "exited": ("#bc4c00", "#f0883e"),
    "idle": ("#6e7781", "#8b949e"),
    "muted": ("#57606a", "#9da7b3"),
    "read-only": ("#1a7f37", "#3fb950"),
    "destructive": ("#cf222e", "#ff7b72"),
    "may change things (not declared)": ("#bc4c00", "#db6d28"),
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
    "subscribed": ("#0969da", "#58a6ff"),
    "banner": ("#fff1e5", "#3d2212"),
    "banner-border": ("#bc4c00", "#f0883e"),
    "info-banner": ("#ddf4ff", "#0c2d48"),
    "info-banner-border": ("#0969da", "#58a6ff"),
    "log-error": ("#c62828", "#ff7b72"),  # a server's log line at error or worse
    "log-warning": ("#b26a00", "#f0883e"),
    "ribbon": ("#8b949e", "#8b949e"),  # a saved filter's bookmark, on either base
    "ink": ("#16181c", "#16181c"),  # text on a light bar
    "paper": ("#ffffff", "#ffffff"),  # text on a dark bar
    # JSON, highlighted
    "json-key": ("#0550ae", "#79c0ff"), "json-string": ("#0a3069", "#a5d6ff"), "json-number": ("#953800", "#ffa657"),
    "json-keyword": ("#cf222e", "#ff7b72"), "json-punct": ("#57606a", "#8b949e"),
    # the load test's charts
    "chart-p50": ("#0969da", "#58a6ff"), "chart-p90": ("#8250df", "#bc8cff"), "chart-max": ("#bc4c00", "#f0883e"),
    "chart-calls": ("#1a7f37", "#3fb950"), "chart-tool": ("#9a6700", "#d29922"),
    "chart-errors": ("#cf222e", "#ff7b72"), "chart-a": ("#0969da", "#58a6ff"), "chart-b": ("#bc4c00", "#f0883e"),
    # the timeline's outcomes and ticks, readable on either base
    "timeline-ok": ("#2f6fdd", "#58a6ff"), "timeline-cancelled": ("#8250df", "#bc8cff"),
    "timeline-unanswered": ("#6e7781", "#8b949e"), "timeline-tool error": ("#bf8700", "#d29922"),
    "timeline-error": ("#cf222e", "#ff7b72"), "timeline-notification": ("#6e7781", "#9da7b3"),
    "timeline-our notification": ("#8c959f", "#6e7681"), "timeline-server request": ("#1b7c83", "#39c5cf"),
    "timeline-malformed": ("#cf222e", "#ff7b72"),
    # an MCP App's semantic CSS variables (the spec's names)
    "--color-text-info": ("#0969da", "#58a6ff"), "--color-text-danger": ("#cf222e", "#ff7b72"),
    "--color-text-success": ("#1a7f37", "#3fb950"), "--color-text-warning": ("#bc4c00", "#f0883e"),
    "--color-text-secondary": ("#57606a", "#9da7b3"), "--color-background-info": ("#ddf4ff", "#0c2d48"),
    "--color-background-danger": ("#ffebe9", "#3d1214"), "--color-background-success": ("#dafbe1", "#12261e"),
    "--color-background-warning": ("#fff1e5", "#3d2212"),
}


def pair(name: str) -> tuple[str, str]:
    """The (light, dark) colours of `name` (the muted grey for a name not listed)."""
    return COLOURS.get(name, COLOURS["muted"])


def named(prefix: str) -> dict[str, tuple[str, str]]:
    """Every named colour under `prefix` ("timeline-", "chart-"), keyed without it."""
    return {k[len(prefix):]: v for k, v in COLOURS.items() if k.startswith(prefix)}


# ---------------------------------------------------------------------- style-sheet pieces
def outline_css(selector: str, colour: str, *, bar: bool = False) -> str:
    """A framed block in `colour` (`bar`: with a thicker line on its left, as results and errors have)."""
    left = f" border-left: {BAR}px solid {colour};" if bar else ""
    return f"{selector} {{ border: {BORDER}px solid {colour};{left} border-radius: {RADIUS}px; }}"


def box_css(selector: str, background: str, border: str) -> str:
    """A filled box with a border: banners, a problem strip."""
    return (f"{selector} {{ background: {background}; border: {BORDER}px solid {border};"
            f" border-radius: {BADGE_RADIUS}px; }}")


def border_css(colour: str) -> str:
    """A plain line around a field (one marked wrong)."""
    return f"border: {BORDER}px solid {colour};"


def padding_css(vertical: str, horizontal: str) -> str:
    return f"padding: {space(vertical)}px {space(horizontal)}px;"


def high_contrast_stage_css(scope: str) -> str:
    """Presentation mode's high-contrast look: fields, answer cards and sliders white on black, yellow marks."""
    white, black, yellow = PALETTES["high-contrast"]["Text"], PALETTES["high-contrast"]["Base"], ACCENT["high-contrast"]
    line = f"{BORDER * 2}px solid {white}"
    return (f"{scope} QLineEdit, {scope} QFrame#presentResult, {scope} QFrame#presentError,"
            f" {scope} QFrame#presentQuestion, {scope} QPlainTextEdit {{ border: {line}; background-color: {black};"
            f" color: {white}; }}"
            f"{scope} QSlider::groove:horizontal {{ border: {line}; height: {space('s')}px; background: {black}; }}"
            f"{scope} QSlider::sub-page:horizontal {{ background: {yellow}; }}"
            f"{scope} QSlider::handle:horizontal {{ background: {yellow}; border: {line};"
            f" width: {space('xl') + 2}px; margin: -{space('m')}px 0; }}")


APP_RADII = {"--border-radius-sm": f"{RADIUS}px", "--border-radius-md": f"{RADIUS * 2}px",
             "--border-width-regular": f"{BORDER}px"}
