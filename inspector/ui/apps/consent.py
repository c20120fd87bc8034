"""What an app may do only with the user's yes: open a link in the system browser (`ui/open-link`) and save
files (`ui/download-file`). Each is a window-modal dialog awaited without a nested event loop; Cancel
(the default) refuses, and the app is told so."""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ... import urlpolicy
from ..base import design
from ..base.layout import text_label
from ..base.text import visible

MAX_FILE = 64 * 1024 * 1024  # bytes of one file an app may hand over


class LinkDialog(QDialog):
    """`appOpenLinkDialog`: the full address and its host as the browser will show it (a look-alike name in its
    `xn--` form), with Open in browser and Cancel (the default). An address the URL policy refuses says why
    (`appOpenLinkRefused`) and cannot be opened."""

    def __init__(self, url: str, app: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("appOpenLinkDialog")
        self.setWindowTitle("Open a link from an app?")
        lay = QVBoxLayout(self)
        shown = urlpolicy.for_display(url, who="the app")
        lay.addWidget(text_label(f"The app {visible(app, 120)} asks to open this in your browser:", self))
        big = text_label(shown.host or "(nothing that can be opened)", self, name="appOpenLinkHost")
        font = big.font()
        font.setPointSizeF(design.size("title", font.pointSizeF()))
        font.setBold(True)
        big.setFont(font)
        lay.addWidget(big)
        full = QLineEdit(shown.full, self)
        full.setObjectName("appOpenLinkUrl")
        full.setReadOnly(True)
        full.setCursorPosition(0)
        lay.addWidget(full)
        if shown.refusal is not None:
            lay.addWidget(text_label(f"Not opened: {shown.refusal}.", self, name="appOpenLinkRefused",
                                     role="warning"))
        lay.addWidget(text_label("Nothing opens unless you choose Open in browser.", self, role="muted"))
        buttons = QDialogButtonBox(self)
        self.open_button = buttons.addButton("Open in browser", QDialogButtonBox.AcceptRole)
        self.open_button.setObjectName("appOpenLinkOpen")
        self.open_button.setEnabled(shown.refusal is None)
        self.cancel_button = buttons.addButton("Cancel", QDialogButtonBox.RejectRole)
        self.cancel_button.setObjectName("appOpenLinkCancel")
        self.cancel_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.resize(520, self.sizeHint().height())


@dataclass
class Offered:
    """One file an app offers: a safe name, its bytes (None for a link not yet read), its type."""

    name: str
    data: bytes | None
    mime: str
    uri: str
    problem: str | None = None


def safe_name(uri: Any, mime: Any, index: int) -> str:
    """The last segment of the URI, without anything that could leave the folder or hide the type."""
    path = urllib.parse.urlsplit(uri).path if isinstance(uri, str) else ""
    name = urllib.parse.unquote(path.rstrip("/").rsplit("/", 1)[-1]) if path else ""
    name = re.sub(r"[^\w.\- ()]+", "_", name).strip(". ")[:120]
    return name or f"download-{index + 1}" + (".txt" if isinstance(mime, str) and mime.startswith("text/") else "")


def offered(contents: list[dict[str, Any]]) -> list[Offered]:
    """The files in a `ui/download-file` request (embedded resources and resource links)."""
    out = []
    for i, item in enumerate(contents):
        if item.get("type") == "resource_link":
            out.append(Offered(safe_name(item.get("uri"), item.get("mimeType"), i), None,
                               str(item.get("mimeType") or "?"), str(item.get("uri") or "")))
            continue
        res = item.get("resource") if item.get("type") == "resource" else item
        if not isinstance(res, dict):
            out.append(Offered(f"download-{i + 1}", b"", "?", "", "not a resource"))
            continue
        uri, mime = res.get("uri"), res.get("mimeType")
        data: bytes | None
        problem = None
        if isinstance(res.get("text"), str):
            data = res["text"].encode("utf-8")
        elif isinstance(res.get("blob"), str):
            try:
                data = base64.b64decode(res["blob"], validate=True)
            except (binascii.Error, ValueError):
                data, problem = b"", "its blob is not valid base64"
        else:
            data, problem = b"", "neither text nor blob"
        if data is not None and len(data) > MAX_FILE:
            data, problem = b"", f"over {MAX_FILE // (1024 * 1024)} MiB"
        out.append(Offered(safe_name(uri, mime, i), data, str(mime or "?"), str(uri or ""), problem))
    return out


def free_path(folder: Path, name: str) -> Path:
    """`folder/name`, or `name (2)`… when that exists: nothing is overwritten."""
    target = folder / name
    stem, suffix = target.stem, target.suffix
    n = 2
    while target.exists():
        target = folder / f"{stem} ({n}){suffix}"
        n += 1
    return target


class DownloadDialog(QDialog):
    """`appDownloadDialog`: the files, the folder they go to (`appDownloadFolder`), Save and Cancel."""

    def __init__(self, files: list[Offered], app: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("appDownloadDialog")
        self.setWindowTitle("Save files from an app?")
        lay = QVBoxLayout(self)
        lay.addWidget(text_label(f"The app {visible(app, 120)} offers {len(files)} file"
                                 f"{'s' if len(files) != 1 else ''} to save:", self))
        for f in files:
            size = f"{len(f.data):,} bytes" if f.data is not None else "read from the server when saved"
            line = f"• {f.name} · {visible(f.mime, 60)} · {size}" + (f" · ✗ {f.problem}" if f.problem else "")
            lay.addWidget(text_label(line, self, name="appDownloadFile", role="warning" if f.problem else None))
        row = QHBoxLayout()
        row.addWidget(QLabel("Into", self))
        where = QStandardPaths.StandardLocation.DownloadLocation
        downloads = QStandardPaths.writableLocation(where) or str(Path.home())
        self.folder = QLineEdit(downloads, self)
        self.folder.setObjectName("appDownloadFolder")
        row.addWidget(self.folder, 1)
        browse = QPushButton("Choose…", self)
        browse.setObjectName("appDownloadBrowse")
        browse.clicked.connect(self._browse)
        row.addWidget(browse)
        lay.addLayout(row)
        buttons = QDialogButtonBox(self)
        self.save_button = buttons.addButton("Save", QDialogButtonBox.AcceptRole)
        self.save_button.setObjectName("appDownloadSave")
        self.cancel_button = buttons.addButton("Cancel", QDialogButtonBox.RejectRole)
        self.cancel_button.setObjectName("appDownloadCancel")
        self.cancel_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def _browse(self) -> None:
        chooser = QFileDialog(self, "Save the app's files into", self.folder.text())
        chooser.setFileMode(QFileDialog.FileMode.Directory)
        chooser.fileSelected.connect(self.folder.setText)
        chooser.open()
