"""resources/: the icon (SVG + PNG 16…512), the desktop entry and the AppStream metainfo agree."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RES = ROOT / "resources"
APP_ID = "io.github.mcp_spyglass.Spyglass"


def test_icon_pngs_are_rendered_at_every_size():
    from PySide6.QtGui import QImage

    assert (RES / "spyglass.svg").read_text().lstrip().startswith("<?xml")
    for size in (16, 24, 32, 48, 64, 128, 256, 512):
        image = QImage(str(RES / "icons" / f"spyglass-{size}.png"))
        assert (image.width(), image.height()) == (size, size)
        assert image.hasAlphaChannel()


def test_desktop_entry():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(RES / f"{APP_ID}.desktop")
    d = entry["Desktop Entry"]
    assert d["Type"] == "Application" and d["Exec"].split()[0] == "spyglass" and d["Icon"] == APP_ID
    assert "Development;" in d["Categories"]


def test_metainfo_names_the_desktop_entry_and_real_screenshots():
    tree = ET.parse(RES / f"{APP_ID}.metainfo.xml")
    root = tree.getroot()
    assert root.findtext("id") == APP_ID
    assert root.find("launchable").text == f"{APP_ID}.desktop"
    shots = [img.text for img in root.iter("image")]
    assert shots
    for url in shots:
        name = re.sub(r"^.*/resources/screenshots/", "", url)
        assert (RES / "screenshots" / name).is_file(), name
    if shutil.which("appstreamcli"):
        r = subprocess.run(["appstreamcli", "validate", "--no-net", str(RES / f"{APP_ID}.metainfo.xml")],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
