"""Helpers for the tool-calling UI tests: select a tool, fill its form, press Call, wait, answer dialogs."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtWidgets import QApplication, QDialog, QListView, QPushButton, QWidget
from uikit import find, row_of, until

from inspector.session import Status
from inspector.session.tools import UNDECLARED, badges


async def connected(conn, timeout=30):
    await until(lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, timeout,
                f"{conn.name} to connect and list its tools (status: {conn.session.status_text()})")


def select_tool(window, name: str) -> None:
    view = find(window, QListView, "toolList")
    window.tool_panel.search.clear()
    view.setCurrentIndex(row_of(view, name))
    assert window.tool_detail.tool is not None and window.tool_detail.tool.get("name") == name


async def call(window, name: str, args: Any = None, *, timeout: float = 30, wait: bool = True):
    """Select `name`, put `args` in the form, click Call; returns the finished CallRecord."""
    select_tool(window, name)
    panel = window.tool_detail
    if args is not None:
        panel.form.set_value(args)
    before = len(window.calls.records(window.selected_connection().server_id))
    find(window, QPushButton, "callButton").click()
    sid = window.selected_connection().server_id

    def started_or_asked():
        return len(window.calls.records(sid)) > before or _visible_dialog("confirmDialog")

    asked = await until(started_or_asked, 10, f"the call of {name} to start")
    if isinstance(asked, QDialog) and UNDECLARED in badges(panel.tool):
        # a tool that declares no annotations asks first, as the spec's default makes it one that may destroy:
        # answered here for tests about calling; any other confirmation is the test's own to answer
        click(asked, "confirmCall")
    await until(lambda: len(window.calls.records(sid)) > before, 10, f"the call of {name} to start")
    rec = window.calls.records(sid)[-1]
    if wait:
        await until(lambda: not rec.running, timeout, f"the call of {name} to finish")
        await until(lambda: result_shown(window, rec), 10, f"the answer of {name} on screen")
    return rec


def result_shown(window, rec) -> bool:
    """The result view shows `rec`, its page's widgets shown: a widget added to a shown layout is shown a loop
    turn later, and a loaded machine can take longer than a fixed pause (CI once: no result:structured yet)."""
    from PySide6.QtCore import Qt

    view = window.tool_detail.result_view
    if view.record is not rec:
        return False
    page = getattr(view, "page", None)
    if page is None or page.findChild(QWidget, "resultWaiting") is not None:
        return False  # still the page drawn while the call ran: the finished one is drawn a turn later
    if not page.isVisibleTo(view):
        return False  # the page itself is shown with its layout's next turn
    content = getattr(view, "content", None)
    if content is not None and content.parent() is page and not content.done:
        return False  # its blocks are still being made, a loop turn's worth at a time
    return not any(w.isHidden() and not w.testAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide)
                   for w in (page.findChildren(QWidget) if page is not None else []))


def result_widgets(window, kind: str) -> list[QWidget]:
    return shown_in_result(window, QWidget, f"result:{kind}")


def shown_in_result(window, cls: Any, name: str) -> list[Any]:
    """The widgets named `name` on the result page now shown (not those of a page being deleted)."""
    view = window.findChild(QWidget, "resultView")
    return [w for w in view.findChildren(cls, name) if w.isVisibleTo(view)]


def _visible_dialog(name: str) -> QDialog | None:
    for w in QApplication.topLevelWidgets():
        if isinstance(w, QDialog) and w.objectName() == name and w.isVisible():
            return w
    return None


async def dialog(window, name: str, timeout: float = 20) -> QDialog:
    return await until(lambda: _visible_dialog(name), timeout, f"the {name}")


def click(dlg: QWidget, name: str) -> None:
    b = dlg.findChild(QPushButton, name)
    assert b is not None, f"no button {name}"
    b.click()


async def result_shot(window, name: str):
    """A screenshot for looking at results: traffic and log docks out of the way, a roomy window."""
    from uikit import shot

    docks = [d for d in (window.traffic_dock, window.log_dock) if d.isVisible()]
    for d in docks:
        d.hide()
    window.resize(1400, 1000)
    try:
        return await shot(window, name)
    finally:
        for d in docks:
            d.show()


async def dialog_shot(dlg, name: str):
    """test-artifacts/NAME.png of a dialog (window grabs do not include other top-level windows)."""
    from uikit import ARTIFACTS

    await asyncio.sleep(0.15)
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    assert dlg.grab().save(str(path), "PNG")
    return path
