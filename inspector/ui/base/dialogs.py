"""Waiting for a dialog without a nested event loop: the dialog opens window-modally and is awaited."""

from __future__ import annotations

import asyncio
from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

D = TypeVar("D", bound=QDialog)


def show_sheet(dialog: D) -> D:
    """Open `dialog` window-modally (no nested event loop); it deletes itself when closed."""
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.open()
    return dialog


async def run_dialog(dialog: QDialog) -> int:
    """Open `dialog` window-modally and wait (asyncio) for it to finish; returns its result code. If the
    waiting is cancelled (the call ended, the connection closed), the dialog is rejected."""
    fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def done(code: int) -> None:
        if not fut.done():
            fut.set_result(code)
    dialog.finished.connect(done)
    dialog.open()
    try:
        return await fut
    except asyncio.CancelledError:
        dialog.reject()
        raise
    finally:
        dialog.deleteLater()
