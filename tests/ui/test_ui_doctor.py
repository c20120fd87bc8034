"""*Diagnose* on the status card of a server that failed to connect: the live checklist, copying it as
text, and trusting a self-signed certificate for that one server (pinned in the catalog, used by the HTTP
transport on Retry)."""

from __future__ import annotations

import json

from doctor_peers import make_certificate, serving
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QFontMetrics, QGuiApplication
from PySide6.QtWidgets import QLabel, QPushButton, QTreeWidget
from uikit import find, hostile_cmd, shot, until

from inspector.catalog import Catalog
from inspector.config import ServerSpec
from inspector.session import Status
from inspector.ui.servers.doctor_dialog import DoctorDialog


def checklist(dialog: DoctorDialog) -> dict[str, str]:
    tree = find(dialog, QTreeWidget, "doctorChecklist")
    return {tree.topLevelItem(i).data(0, Qt.UserRole): tree.topLevelItem(i).text(1)
            for i in range(tree.topLevelItemCount())}


async def diagnose(window) -> DoctorDialog:
    button = find(window, QPushButton, "diagnoseButton")
    assert button.isVisible() and button.isEnabled()
    button.click()
    dialog = window.findChild(DoctorDialog, "doctorDialog")
    assert dialog is not None and dialog.isVisible()
    await until(lambda: not dialog.running(), 20, "the doctor to finish")
    return dialog


async def test_diagnose_a_server_that_exits_at_once(open_window):
    async with open_window() as window:
        conn = window.add_server(ServerSpec(name="broken", command=hostile_cmd("die-at-start")), save=False)
        await until(lambda: conn.session.status is Status.ERROR, 20, "the error state")
        dialog = await diagnose(window)
        outcomes = checklist(dialog)
        assert outcomes == {"command": "passed", "start": "passed", "stays-up": "failed", "stdout": "not reached",
                            "handshake": "not reached", "stderr": "not reached"}
        tree = find(dialog, QTreeWidget, "doctorChecklist")
        failed = tree.topLevelItem(2)
        assert failed.isExpanded()
        lines = [failed.child(i).text(0) for i in range(failed.childCount())]
        assert lines[-1].startswith("Fix: set DATABASE_PATH") and "exited with code 3" in lines[0]
        assert find(dialog, QLabel, "doctorResult").text().startswith("Failed at “process stays up”")
        assert not find(dialog, QPushButton, "doctorTrustButton").isVisible()
        find(dialog, QPushButton, "doctorCopyButton").click()
        copied = QGuiApplication.clipboard().text()
        assert copied == dialog.report.as_text() and "✗ process stays up: failed" in copied
        await shot(dialog, "doctor-stdio-failed")
        dialog.reject()
        assert not dialog.isVisible() and not dialog.running()
        window.findChild(QAction, "actionDiagnose").trigger()  # the Server menu's way in, for any server
        again = window.doctor.dialog
        assert again is not dialog and again.objectName() == "doctorDialog"
        await until(lambda: again.isVisible() and not again.running(), 20, "the second run")
        assert checklist(again)["stays-up"] == "failed"
        again.reject()


async def test_trust_a_self_signed_certificate_for_one_server(open_window, tmp_path):
    cert = make_certificate(tmp_path, "dev")
    path = tmp_path / "servers.json"
    with serving("healthy", cert.server_context()) as peer:
        async with open_window(catalog=Catalog(path).load()) as window:
            conn = window.add_server(ServerSpec(name="dev", url=peer.url))
            other = window.add_server(ServerSpec(name="other", url=peer.url), select=False)
            await until(lambda: conn.session.status is Status.ERROR, 20, "the TLS error")
            window.select_connection(conn)
            dialog = await diagnose(window)
            assert checklist(dialog)["tls"] == "failed"
            trust = find(dialog, QPushButton, "doctorTrustButton")
            assert trust.isVisible()
            await shot(dialog, "doctor-self-signed")
            # what a person sees of each line of the failed step: a line too long for the row shows its start
            # (it was wrapped into a row one line high, so "SHA-256 fingerprint: …" showed no digit at all)
            tree = find(dialog, QTreeWidget, "doctorChecklist")
            tls = next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
                       if tree.topLevelItem(i).data(0, Qt.UserRole) == "tls")
            for i in range(tls.childCount()):
                item = tls.child(i)
                rect = tree.visualItemRect(item)
                fm = QFontMetrics(item.font(0))
                avail = tree.viewport().width() - rect.x() - 8
                text = item.text(0)
                if tree.wordWrap():  # wrapped: the row must be as tall as its lines
                    needed = fm.boundingRect(0, 0, avail, 100_000, Qt.TextWordWrap, text).height()
                    assert rect.height() >= needed, (text, rect.height(), needed)
                else:
                    assert fm.elidedText(text, Qt.ElideRight, avail).startswith(text[:min(len(text), 30)]), text
            row = next(tls.child(i) for i in range(tls.childCount())
                       if tls.child(i).text(0).startswith("SHA-256 fingerprint:"))
            assert cert.sha256[-2:].upper() in row.toolTip(0).upper()  # whole on hover
            trust.click()
            await until(lambda: not dialog.running() and checklist(dialog)["tls"] == "passed", 20, "the rerun")
            assert dialog.report.connected, dialog.report.as_text()
            assert conn.spec.tls_pin == cert.sha256 and other.spec.tls_pin == ""
            saved = {s["name"]: s.get("tls_pin") for s in json.loads(path.read_text())["servers"]}
            assert saved == {"dev": cert.sha256, "other": None}
            dialog.reject()
            find(window, QPushButton, "retryButton").click()
            await until(lambda: conn.session.status is Status.CONNECTED, 20, "the pinned connection")


def test_editing_a_server_keeps_its_pin_while_the_host_stays(qapp):
    from inspector.ui.servers.add_dialog import AddServerDialog

    pin = "AB" * 32
    dialog = AddServerDialog(spec=ServerSpec(name="dev", url="https://127.0.0.1:8443/mcp", tls_pin=pin), editing=True)
    assert dialog.spec().tls_pin == pin
    dialog.url.setText("https://127.0.0.1:8443/other")
    assert dialog.spec().tls_pin == pin
    dialog.url.setText("https://127.0.0.1:9443/mcp")
    assert dialog.spec().tls_pin == ""
    dialog.deleteLater()
