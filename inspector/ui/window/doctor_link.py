"""*Diagnose* on the status card of a server that failed to connect: the connection doctor's dialog for it,
and trusting its certificate — pinned for that server only, in its catalog entry and its live definition,
so the next connection (and Retry) uses it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from ...doctor import DoctorOptions
from ...doctor.tls import shown_fingerprint
from ..servers.doctor_dialog import DoctorDialog
from . import menus

if TYPE_CHECKING:
    from .main_window import MainWindow

MAX_TIMEOUT = 30.0  # a step's longest wait in the window, whatever the connect timeout says


class DoctorLink(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.dialog: DoctorDialog | None = None
        window.status_card.diagnose.connect(self.open)
        # also for a server that connects but misbehaves, from the Server menu, the list and the command palette
        self.act_diagnose = QAction("Diagnose connection…", window)
        self.act_diagnose.setObjectName("actionDiagnose")
        self.act_diagnose.setToolTip("Run the steps of the selected server's connection one by one: where it "
                                     "breaks, and what to do")
        self.act_diagnose.triggered.connect(lambda _=False: self.open())
        menu = window.findChild(QMenu, "serverMenu")
        if menu is not None:
            menus.insert_after_group(menu, [self.act_diagnose])
        window.server_view.addAction(self.act_diagnose)

    def open(self) -> DoctorDialog | None:
        conn = self.window.selected_connection()
        if conn is None:
            return None
        if self.dialog is not None and shiboken6.isValid(self.dialog):
            self.dialog.reject()  # one checklist at a time: the last one asked for
            self.dialog.deleteLater()
        transport = conn.session.options.transport
        options = DoctorOptions(timeout=min(float(transport.connect_timeout), MAX_TIMEOUT),
                                auth_token=transport.auth_token, client_id=conn.spec.oauth.get("client_id"))
        dialog = self.dialog = DoctorDialog(conn.spec, options, self.window)
        dialog.trust.connect(lambda pin, c=conn: self.trust(c, pin))
        dialog.show()
        dialog.start()
        return dialog

    def trust(self, conn: Any, pin: str) -> None:
        """Pin `pin` for `conn`'s server only: its definition now, its catalog entry on disk; then check again."""
        conn.spec.tls_pin = pin
        link = self.window.catalog_link
        entry = link.entry_of(conn)
        kept = ""
        if entry is not None:
            entry.spec.tls_pin = pin
            kept = " (kept in the catalog)" if link.save() else ""
        self.window.show_banner(f"Trusting the certificate {shown_fingerprint(pin)} for {conn.name} only{kept}",
                                level="info")
        if self.dialog is not None and shiboken6.isValid(self.dialog):
            self.dialog.start()
