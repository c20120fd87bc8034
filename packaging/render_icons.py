"""Render resources/spyglass.svg to resources/icons/spyglass-<N>.png (16 … 512) with QtSvg.

    python packaging/render_icons.py        # after editing the SVG; the PNGs are committed
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def render(svg: Path = ROOT / "resources" / "spyglass.svg", out: Path = ROOT / "resources" / "icons") -> list[Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 - needed for painting
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not a valid SVG")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for size in SIZES:
        image = QImage(size, size, QImage.Format_ARGB32_Premultiplied)
        image.fill(Qt.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.Antialiasing)
        painter.setRenderHint(QPainter.SmoothPixmapTransform)
        renderer.render(painter)
        painter.end()
        path = out / f"spyglass-{size}.png"
        if not image.save(str(path), "PNG"):
            raise SystemExit(f"cannot write {path}")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in render():
        print(p.relative_to(ROOT))
