"""Answering what an app asks of its host that needs the window: a link to open (after the user agrees), files
to save (after the user agrees, into the folder they choose, nothing overwritten), a display mode."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QUrl

from ... import errors as E
from ... import urlpolicy
from ...private import make_folder, write_private
from ...protocol.app_bridge import REFUSED, Ask
from ..base.dialogs import run_dialog
from .consent import DownloadDialog, LinkDialog, free_path, offered

if TYPE_CHECKING:
    from .block import AppBlock

log = logging.getLogger("spyglass.ui.apps")


async def answer(block: AppBlock, ask: Ask) -> None:
    app = block.app
    if app is None:
        return
    if ask.method == "ui/open-link":
        await _open_link(block, ask)
    elif ask.method == "ui/download-file":
        await _download(block, ask)
    elif ask.method == "ui/request-display-mode":
        mode = block.set_mode(str(ask.params.get("mode")))
        app.answer(ask.id, {"mode": mode})
    else:  # pragma: no cover - the bridge asks only the above
        app.answer(ask.id, error=(-32601, f"Method not found: {ask.method}"))


async def _open_link(block: AppBlock, ask: Ask) -> None:
    app = block.app
    assert app is not None
    url = str(ask.params.get("url"))
    try:
        address = urlpolicy.check(url, who="the app")
    except urlpolicy.Refused as exc:  # never asked: nothing the user could agree to would be opened
        app.note_refused(f"asked to open {urlpolicy.for_display(url).full}: {exc.sentence}")
        app.answer(ask.id, error=(REFUSED, f"Link not opened: {exc.sentence}"))
        return
    dialog = LinkDialog(url, app.name, block.window or block.host.dialog_parent())
    code = await run_dialog(dialog)
    if block.app is not app:
        return
    if code != LinkDialog.Accepted:
        app.note_refused(f"asked to open {url}: you declined")
        app.answer(ask.id, error=(REFUSED, "Link opening denied by user"))
        return
    if not block.host.opener(QUrl.fromEncoded(address.wire.encode())):
        app.answer(ask.id, error=(REFUSED, "The system could not open the link"))
        return
    block.conn.session.log.note(f"app {block.uri}: opened {url} in the browser")
    app.answer(ask.id, {})


async def _download(block: AppBlock, ask: Ask) -> None:
    app = block.app
    assert app is not None
    contents = ask.params.get("contents")
    files = offered([c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else [])
    dialog = DownloadDialog(files, app.name, block.host.dialog_parent())
    code = await run_dialog(dialog)
    folder = Path(dialog.folder.text()).expanduser()
    if block.app is not app:
        return
    if code != DownloadDialog.Accepted:
        app.note_refused(f"offered {len(files)} file{'s' if len(files) != 1 else ''} to save: you declined")
        app.answer(ask.id, error=(REFUSED, "Download denied by user"))
        return
    saved: list[str] = []
    try:
        make_folder(folder)
        for f in files:
            if f.problem:
                continue
            data = f.data
            if data is None:  # a link: read from the app's own server
                data = await _read(block, f.uri)
                if data is None:
                    continue
            target = free_path(folder, f.name)
            write_private(target, data)
            saved.append(str(target))
    except OSError as exc:
        block.say_problem("The app's files were not saved", str(exc))
        app.answer(ask.id, error=(REFUSED, f"Could not save: {exc.strerror or exc}"))
        return
    block.conn.session.log.note(f"app {block.uri}: saved " + (", ".join(saved) if saved else "nothing"))
    app.answer(ask.id, {} if saved else {"isError": True})


async def _read(block: AppBlock, uri: str) -> bytes | None:
    import base64

    try:
        result: Any = await block.conn.session.need_client().read_resource(uri)
    except E.SpyglassError as exc:
        block.sandbox.add_refused(f"could not read {uri} to save it: {exc.message}")
        return None
    for item in result.get("contents") or [] if isinstance(result, dict) else []:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            return item["text"].encode("utf-8")
        if isinstance(item, dict) and isinstance(item.get("blob"), str):
            try:
                return base64.b64decode(item["blob"])
            except ValueError:
                return None
    return None
