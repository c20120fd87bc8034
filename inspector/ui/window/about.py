"""Help → About (`aboutDialog`): version, Qt and Python versions, and where data lives."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from ... import __version__
from ...catalog import Catalog
from ...traffic.sessions import sessions_dir
from ..base import design
from ..servers.catalog_link import MemoryCatalog


def app_icon() -> QIcon:
    """Spyglass's icon from resources/icons (a checkout, or the bundle's copy); null when absent."""
    roots = [Path(__file__).resolve().parents[3] / "resources"]
    if getattr(sys, "_MEIPASS", None):
        roots.insert(0, Path(sys._MEIPASS) / "resources")
    icon = QIcon()
    for root in roots:
        folder = root / "icons"
        pngs = sorted(folder.glob("spyglass-*.png")) if folder.is_dir() else []
        for png in pngs:
            icon.addFile(str(png))
        if pngs:
            break
    return icon


def app_version() -> str:
    try:
        from importlib.metadata import version

        return version("mcp-spyglass")
    except Exception:  # a frozen bundle or a plain checkout
        return __version__


def facts(catalog: Catalog | None = None) -> list[tuple[str, str]]:
    rows = [
        ("Version", app_version() + (" (bundle)" if getattr(sys, "frozen", False) else "")),
        ("Qt", f"{qVersion()} (PySide6 {pyside_version})"),
        ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ("Platform", platform.platform(terse=True)),
        ("Traffic sessions", str(sessions_dir())),
    ]
    if catalog is not None and not isinstance(catalog, MemoryCatalog):
        rows.append(("Server catalog", str(catalog.path)))
        rows.append(("Secrets", "the OS keyring" if catalog.secrets_persistent
                     else "kept in memory (no OS keyring available)"))
    return rows


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, catalog: Catalog | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle("About Spyglass")
        title = QLabel("Spyglass", self)
        f = title.font()
        f.setPointSizeF(design.size("title", f.pointSizeF()))
        f.setBold(True)
        title.setFont(f)
        blurb = QLabel("An inspector for MCP servers: their tools, resources and prompts, and every message on "
                       "the wire. Everything a server sends is shown as plain text; tool annotations are hints "
                       "from the server, not guarantees.", self)
        blurb.setWordWrap(True)
        form = QFormLayout()
        self.values: dict[str, str] = {}
        for key, value in facts(catalog):
            label = QLabel(value, self)
            label.setObjectName(f"about:{key}")
            label.setTextFormat(Qt.PlainText)
            label.setTextInteractionFlags(Qt.TextSelectableByMouse)
            label.setWordWrap(True)
            form.addRow(f"{key}:", label)
            self.values[key] = value
        buttons = QDialogButtonBox(QDialogButtonBox.Close, self)
        buttons.rejected.connect(self.reject)
        head = QHBoxLayout()
        icon = QApplication.windowIcon()
        if icon.isNull():
            icon = app_icon()
        if not icon.isNull():
            picture = QLabel(self)
            picture.setObjectName("aboutIcon")
            picture.setPixmap(icon.pixmap(64, 64))
            head.addWidget(picture)
        head.addWidget(title, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(head)
        lay.addWidget(blurb)
        lay.addSpacing(design.space("m"))
        lay.addLayout(form)
        lay.addStretch(1)
        lay.addWidget(buttons)
        self.setMinimumWidth(520)
