"""The window's one way to hand an address to the system opener (the browser), after the URL policy.

`open_address` opens only what `inspector.urlpolicy` allows, in its ASCII form (the host in punycode, as the
browser was shown it); `system_open` is the system opener itself, which tests replace with a recorder. The
question before opening belongs to the dialog that shows the address (its host as the browser will show it).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices

from ... import urlpolicy

log = logging.getLogger("spyglass.ui.opening")


def system_open(url: str) -> bool:
    """The system opener (QDesktopServices); False when nothing could open the address."""
    return bool(QDesktopServices.openUrl(QUrl.fromEncoded(url.encode("utf-8"))))


def open_address(url: str, *, who: str = "the server") -> bool:
    """Open `url` when the policy allows it; False (and nothing opened) otherwise."""
    try:
        address = urlpolicy.check(url, who=who)
    except urlpolicy.Refused as exc:
        log.info("not opened: %s", exc.sentence)
        return False
    return system_open(address.wire)
