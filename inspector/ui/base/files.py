"""Files the window writes from what Qt holds: a pixmap as a PNG, encoded in memory and written 0600
through `inspector.private` like every file Spyglass writes (Qt's own `QPixmap.save(path)` would make
it as the umask says)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QPixmap

from ...private import write_private


def save_png(pixmap: QPixmap, path: str | Path) -> str | None:
    """`pixmap` written to `path` as a PNG readable by this user only; why not, or None."""
    data = QByteArray()
    buffer = QBuffer(data)
    if not (buffer.open(QIODevice.OpenModeFlag.WriteOnly) and pixmap.save(buffer, "PNG")):
        return f"could not write {path}"
    buffer.close()
    try:
        write_private(path, bytes(data.data()))
    except OSError as exc:
        return f"could not write {path}: {exc.strerror or exc}"
    return None
