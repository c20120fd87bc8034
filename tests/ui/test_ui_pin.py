"""The window and a server's pin: a server whose definitions differ from the pin file its definition names
is marked in the sidebar (a badge, and a tooltip naming the changes) and has a pin-changed finding in the
Check tab; the Add/Edit dialog keeps the pin file and the sandbox choice, and the catalog saves both."""

from __future__ import annotations

import json
import os
import subprocess

from calling import connected
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QCheckBox, QDialog, QLineEdit, QPushButton
from support import PY, ROOT
from uikit import until

from inspector.catalog import Catalog
from inspector.config import ServerSpec
from inspector.keystore import MemorySecrets
from inspector.ui.servers.sidebar import PIN_BADGE, STATUS_TEXT_ROLE

TRUST = [PY, str(ROOT / "tests" / "trust_server.py")]


def pinned(path) -> str:
    proc = subprocess.run([PY, "-m", "inspector", "pin", "--output", str(path), "--", *TRUST], capture_output=True,
                          text=True, timeout=60, cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    return str(path)


def row(window, conn):
    model = window.server_view.model()
    return model.index(model.connections.index(conn), 0)


async def test_a_server_changed_since_its_pin_is_marked_and_a_faithful_one_is_not(open_window, tmp_path):
    pin = pinned(tmp_path / "trust.pin.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{}", encoding="utf-8")
    path = tmp_path / "servers.json"
    async with open_window(catalog=Catalog(path, secrets=MemorySecrets()).load()) as window:
        same = window.add_server(ServerSpec(name="faithful", command=TRUST, pin=pin))
        swapped = window.add_server(ServerSpec(name="swapped", command=[*TRUST, "--swapped"], pin=pin))
        unreadable = window.add_server(ServerSpec(name="unreadable", command=TRUST, pin=str(broken)))
        await connected(same)
        await connected(swapped)
        await connected(unreadable)
        await until(lambda: swapped.live.pin.changes, 20, "the swapped server to be compared with its pin")
        await until(lambda: same.live.pin.compared, 20, "the faithful server to be compared with its pin")
        assert [c.target for c in swapped.live.pin.changes] == ["tool:weather"]
        text = row(window, swapped).data(STATUS_TEXT_ROLE)
        assert PIN_BADGE in text
        tip = row(window, swapped).data(Qt.ToolTipRole)
        assert "Changed since its pin" in tip and "tool 'weather' changed since the pin: /description" in tip
        assert [f.target for f in swapped.live.findings() if f.rule == "pin-changed"] == ["tool:weather"]
        assert same.live.pin.changes == [] and PIN_BADGE not in row(window, same).data(STATUS_TEXT_ROLE)
        assert [f for f in same.live.findings() if f.rule == "pin-changed"] == []
        await until(lambda: unreadable.live.pin.findings, 20)  # a pin that cannot be read: a warning, no mark
        [f] = unreadable.live.pin.findings
        assert f.severity == "warning" and "not a pin file" in f.message and unreadable.live.pin.changes == []
        assert PIN_BADGE not in row(window, unreadable).data(STATUS_TEXT_ROLE)

        dlg = window.edits.edit(swapped)
        assert dlg.findChild(QLineEdit, "serverPin").text() == pin
        box = dlg.findChild(QCheckBox, "serverSandbox")
        assert not box.isChecked()
        box.setChecked(True)
        dlg.findChild(QPushButton, "addServerOk").click()
        await until(lambda: not any(isinstance(w, QDialog) and w.isVisible() for w in QApplication.topLevelWidgets()),
                    5)
        assert swapped.spec.sandbox and swapped.spec.pin == pin
    saved = {s["name"]: s for s in json.loads(path.read_text())["servers"]}
    assert saved["swapped"]["sandbox"] is True and saved["swapped"]["pin"] == pin
    assert "sandbox" not in saved["faithful"] and saved["faithful"]["pin"] == pin
    assert saved["unreadable"]["pin"] == str(broken)
    again = {e.name: e.spec for e in Catalog(path, secrets=MemorySecrets()).load().servers}
    assert again["swapped"].sandbox and again["swapped"].pin == pin and not again["faithful"].sandbox
