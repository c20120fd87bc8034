"""The token view (`tokenView`): expiry, scopes, decoded JWT claims, refresh and forget.

The raw access token is never shown, logged or copied unless the user presses
Reveal… and confirms; it then shows in a read-only field that hides itself again
after a minute, on Hide, or when the token changes.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QTimer
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QLineEdit, QMessageBox, QPushButton, QVBoxLayout, QWidget

from ..base.json_view import JsonView
from ..base.layout import label_grid
from ..base.text import visible

REVEAL_SECONDS = 60
FIELDS = (("status", "Token"), ("issuer", "Issuer"), ("type", "Type"), ("scopes", "Scopes"),
          ("expires", "Expires"), ("refresh", "Refresh token"))


def when(wall: float | None, now: float | None = None) -> str:
    """'10:42:07 (in 59 min)', 'expired 3 min ago', or 'not said' for a token without expiry."""
    if wall is None:
        return "not said by the server"
    now = time.time() if now is None else now
    stamp = datetime.datetime.fromtimestamp(wall).strftime("%Y-%m-%d %H:%M:%S")
    delta = wall - now
    span = abs(delta)
    text = (f"{int(span)} s" if span < 90 else f"{int(span // 60)} min" if span < 5400
            else f"{span / 3600:.1f} h" if span < 172800 else f"{span / 86400:.0f} days")
    return f"{stamp} (in {text})" if delta >= 0 else f"{stamp} (expired {text} ago)"


class TokenView(QGroupBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Access token", parent)
        self.setObjectName("tokenView")
        self.session: Any = None
        self.spawn: Callable[[Any, str], Any] | None = None
        form, self.labels = label_grid(self, FIELDS, "token", wrap=True)
        self.labels["status"].setToolTip("Tokens never reach a log, a trace, an export or a config file.")
        self.raw = QLineEdit(self)
        self.raw.setObjectName("tokenRaw")
        self.raw.setReadOnly(True)
        self.raw.hide()
        form.addRow(self.raw)
        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.setObjectName("tokenRefresh")
        self.refresh_button.setToolTip("Use the refresh token now for a new access token")
        self.refresh_button.clicked.connect(self._refresh)
        self.forget_button = QPushButton("Forget", self)
        self.forget_button.setObjectName("tokenForget")
        self.forget_button.setToolTip("Drop the tokens here and in the keyring; the next request signs in again")
        self.forget_button.clicked.connect(self._forget)
        self.reveal_button = QPushButton("Reveal…", self)
        self.reveal_button.setObjectName("tokenReveal")
        self.reveal_button.setToolTip("Show the raw access token (asks first)")
        self.reveal_button.clicked.connect(self.ask_reveal)
        self.hide_button = QPushButton("Hide", self)
        self.hide_button.setObjectName("tokenHide")
        self.hide_button.clicked.connect(self.hide_raw)
        self.hide_button.hide()
        buttons = QHBoxLayout()
        for b in (self.refresh_button, self.forget_button, self.reveal_button, self.hide_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        left = QVBoxLayout()
        left.addLayout(form)
        left.addStretch(1)
        left.addLayout(buttons)
        claims_box = QVBoxLayout()
        heading = QLabel("Claims (decoded, not verified)", self)
        heading.setObjectName("tokenClaimsHeading")
        claims_box.addWidget(heading)
        self.claims = JsonView(self)
        self.claims.setObjectName("tokenClaims")
        self.claims.setPlaceholderText("No claims: the access token is not a JWT (opaque), or there is none.")
        claims_box.addWidget(self.claims, 1)
        lay = QHBoxLayout(self)
        lay.addLayout(left, 3)
        lay.addLayout(claims_box, 2)
        self.confirm: QMessageBox | None = None
        self._hide_timer = QTimer(self)
        self._hide_timer.setSingleShot(True)
        self._hide_timer.timeout.connect(self.hide_raw)
        self._tick = QTimer(self)
        self._tick.setInterval(15_000)
        self._tick.timeout.connect(self.update_view)
        self._tick.start()
        self._shown_for: Any = None
        self._claims: Any = None
        self.update_view()

    # ------------------------------------------------------------------ showing
    def show_session(self, session: Any) -> None:
        if session is not self.session:
            self.hide_raw()
        self.session = session
        self.update_view()

    def update_view(self) -> None:
        info = self.session.describe() if self.session is not None else {"authorized": False}
        authorized = bool(info.get("authorized"))
        busy = self.session is not None and (self.session.running or self.session.busy_refreshing)
        if not authorized:
            text = "none" if self.session is not None else "this server does not use OAuth"
            values = {"status": text, "issuer": "", "type": "", "scopes": "", "expires": "", "refresh": ""}
        else:
            scopes = info.get("scopes") or []
            kept = ("in the OS keyring" if getattr(self.session.store, "persistent", False) else
                    "in memory for this session only (no OS keyring)")
            values = {"status": f"held · {kept}",
                      "issuer": info.get("issuer") or "",
                      "type": info.get("token_type") or "",
                      "scopes": " ".join(str(s) for s in scopes) if scopes else "(none granted or said)",
                      "expires": when(info.get("expires_at")),
                      "refresh": "yes" if info.get("has_refresh_token") else "no"}
        for key, label in self.labels.items():
            label.setText(visible(values.get(key, ""), 2000))
        claims = info.get("claims") if authorized else None
        identity = (id(self.session), info.get("expires_at"), repr(claims)) if authorized else None
        if identity != self._shown_for:
            self._shown_for = identity
            self._claims = claims
            if isinstance(claims, dict):
                self.claims.set_json(claims)
            else:
                self.claims.setPlainText("")
            if self.raw.isVisible():
                self.hide_raw()  # the token changed: show the new one only when asked again
        self.refresh_button.setEnabled(authorized and bool(info.get("has_refresh_token")) and not busy)
        self.forget_button.setEnabled(self.session is not None and not busy)
        self.reveal_button.setEnabled(authorized)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange):
            if isinstance(self._claims, dict):  # the highlighting follows the light or dark theme
                self.claims.set_json(self._claims)

    # ------------------------------------------------------------------ actions
    def _refresh(self) -> None:
        if self.session is not None and self.spawn is not None:
            self.spawn(self.session.refresh(), "refreshing the access token")

    def _forget(self) -> None:
        if self.session is not None:
            self.hide_raw()
            self.session.forget()
            self.update_view()

    def ask_reveal(self) -> QMessageBox | None:
        """A window-modal question (no nested event loop); Yes shows the token."""
        if self.session is None or self.session.reveal() is None:
            return None
        box = QMessageBox(QMessageBox.Warning, "Reveal the access token?",
                          "The raw access token will be shown on screen. Anyone who sees it (or a screenshot, "
                          "or a screen share) can act as you on this server until it expires.\n\nShow it?",
                          QMessageBox.Yes | QMessageBox.Cancel, self)
        box.setObjectName("revealConfirm")
        box.setDefaultButton(QMessageBox.Cancel)
        box.finished.connect(lambda result, b=box: self._answered(b, result))
        self.confirm = box
        box.open()
        return box

    def _answered(self, box: QMessageBox, result: int) -> None:
        if self.confirm is box:
            self.confirm = None
        box.deleteLater()
        if result == QMessageBox.Yes:
            self.reveal_now()

    def reveal_now(self) -> None:
        token = self.session.reveal() if self.session is not None else None
        if token is None:
            return
        self.raw.setText(token)
        self.raw.show()
        self.hide_button.show()
        self._hide_timer.start(REVEAL_SECONDS * 1000)

    def hide_raw(self) -> None:
        self._hide_timer.stop()
        self.raw.clear()
        self.raw.hide()
        self.hide_button.hide()
