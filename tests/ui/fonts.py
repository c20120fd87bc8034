"""The fonts the repository ships for the window tests (tests/data/fonts, open licences beside them).

Every UI test measures the window in one of these, never in whatever the machine has installed: a desktop
with DejaVu or Noto gave a window 74 px taller than CI's, and a layout test that passed in one place failed
in the other. `DEFAULT` is the font of the whole UI suite; the others are the common desktop fonts the
window must also fit a small screen with."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import QApplication

FOLDER = Path(__file__).resolve().parents[1] / "data" / "fonts"

FILES = {  # family -> its regular and bold faces
    "DejaVu Sans": ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf"),
    "Noto Sans": ("NotoSans-Regular.ttf", "NotoSans-Bold.ttf"),
    "Cantarell": ("Cantarell-Regular.otf", "Cantarell-Bold.otf"),
}
DESKTOP_POINTS = 11  # the largest common default (GNOME, Ubuntu; KDE Plasma and Windows use 10 and 9)
DEFAULT = "DejaVu Sans"
DEFAULT_SIZE = 9.0


def load() -> None:
    """Register the shipped faces with Qt (once per process; Qt ignores a file added twice)."""
    for family, files in FILES.items():
        for name in files:
            fid = QFontDatabase.addApplicationFont(str(FOLDER / name))
            if fid < 0 or family not in QFontDatabase.applicationFontFamilies(fid):
                raise RuntimeError(f"the shipped font {name} did not load as {family!r}")


def font(family: str = DEFAULT, points: float = DEFAULT_SIZE) -> QFont:
    f = QFont(family)
    f.setPointSizeF(points)
    f.setStyleHint(QFont.SansSerif)
    return f


@contextlib.contextmanager
def using(app: QApplication, family: str, points: float) -> Iterator[QFont]:
    """The whole application in `family` at `points` for a while, then the suite's font again."""
    before = QFont(app.font())
    chosen = font(family, points)
    app.setFont(chosen)
    try:
        yield chosen
    finally:
        app.setFont(before)
