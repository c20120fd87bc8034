"""Fixing servers in the window: Add (a server left without a name is named as it reports itself), Edit (the
Add dialog filled in; saved to the catalog, secrets to the keyring, and connected again with the new
definition) and Remove with undo (no question: the banner offers **Undo**, `undoRemoveButton`, and
*Server → Undo remove* does the same, which puts the server back with its settings at its place in the
sidebar and in the catalog).

Edit is reached four ways: the sidebar's **Edit…** button (`buttonEditServer`), its context menu,
a double-click on the server, and *Server → Edit server…* (`actionEditServer`, also in the command palette).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...catalog import CatalogEntry, CatalogError
from ...config import ServerSpec
from ...session import Status
from ..base.dialogs import show_sheet
from ..base.text import visible
from ..servers.add_dialog import AddServerDialog
from ..servers.connection import Connection

if TYPE_CHECKING:
    from .main_window import MainWindow

UNDO_NAME = "undoRemoveButton"


@dataclass
class Removed:
    """What it takes to put a removed server back as it was."""

    spec: ServerSpec
    mode: str
    timeout: float | None
    row: int
    connected: bool
    entry: CatalogEntry | None = None
    catalog_index: int = -1
    roots: list[dict[str, str]] = field(default_factory=list)


class ServerEdits:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.removed: Removed | None = None

    # ------------------------------------------------------------------ add
    def add_dialog(self) -> AddServerDialog:
        dialog = AddServerDialog(self.window, check=lambda spec: self._name_taken(spec, None))
        dialog.accepted.connect(lambda: self._added(dialog))
        show_sheet(dialog)
        return dialog

    def _added(self, dialog: AddServerDialog) -> None:
        spec = dialog.spec()
        conn = self.window.add_server(spec, mode=dialog.mode())
        if not dialog.named():
            self.name_by_server(conn)

    def duplicate(self) -> Connection | None:
        """A copy of the selected server (connected if it is)."""
        w = self.window
        conn = w.selected_connection()
        if conn is None:
            return None
        return w.add_server(copy.deepcopy(conn.spec), mode=conn.session.options.mode,
                            timeout=conn.session.options.timeout,
                            connect=conn.session.status in (Status.CONNECTED, Status.CONNECTING))

    def save(self) -> bool:
        """*Save to catalog*: keep the selected server (named on the command line) for the next start."""
        w = self.window
        conn = w.selected_connection()
        if conn is None or not w.catalog_link.save_server(conn, conn.session.options.mode, w.servers.connections):
            return False
        w.servers.refresh(conn)
        w._update_actions()
        w.statusBar().showMessage(f"Saved {conn.name} in the catalog.", 8000)
        return True

    # ------------------------------------------------------------------ edit
    def edit(self, conn: Connection | None = None) -> AddServerDialog | None:
        """The Add dialog filled in with `conn` (the selected server); Save and reconnect applies it."""
        w = self.window
        conn = conn if conn is not None else w.selected_connection()
        if conn is None or getattr(conn.session, "read_only", False) or conn not in w.servers.connections:
            return None
        dialog = AddServerDialog(w, copy.deepcopy(conn.spec), conn.session.options.mode, editing=True,
                                 check=lambda spec: self._name_taken(spec, conn))
        dialog.accepted.connect(lambda: self._edited(conn, dialog))
        show_sheet(dialog)
        return dialog

    def _name_taken(self, spec: ServerSpec, conn: Connection | None) -> str | None:
        if not spec.name.strip():
            return None
        entry = self.window.catalog_link.entry_of(conn) if conn is not None else None
        catalog = self.window.catalog_link.catalog
        if entry is not None and catalog.unique_name(spec.name, ignore=entry.id) != spec.name:
            return f"another saved server is already called {spec.name!r}: choose another name"
        return None

    def _edited(self, conn: Connection, dialog: AddServerDialog) -> None:
        w = self.window
        if conn not in w.servers.connections:
            return
        spec, mode = dialog.spec(), dialog.mode()
        if not dialog.named():
            spec.name = conn.spec.name  # until the server says its own name, on this connection
        link = w.catalog_link
        entry = link.entry_of(conn)
        if entry is not None:
            try:
                link.catalog.update(entry.id, spec, mode=mode)
            except CatalogError as exc:
                w.show_banner(exc.message)
                return
            link.save()
        conn.session.spec = spec
        conn.session.options.mode = mode
        conn.named_by_server = not dialog.named()
        w.servers.refresh(conn)
        if conn is w.selected_connection():
            w.setWindowTitle(visible(conn.name, 80))
            w.info_view.show_connection(conn)
        w.statusBar().showMessage(f"Saved {conn.name}; connecting again with the new definition.", 8000)
        self.reconnect(conn)

    def reconnect(self, conn: Connection) -> None:
        w = self.window
        w._apply_transport_options(conn)  # the window's own steps: this is a part of it
        live = conn.session.status in (Status.CONNECTED, Status.CONNECTING)
        w._spawn(conn.session.restart() if live else conn.session.start(), f"connecting {conn.name}")

    # ------------------------------------------------------------------ naming
    def name_by_server(self, conn: Connection) -> None:
        """The user gave no name: once connected, the server is named as it names itself (serverInfo's
        title, else its name), not after the last word of its command."""
        conn.named_by_server = True

    def status_changed(self, conn: Connection) -> None:
        session = conn.session
        if not conn.named_by_server or session.status is not Status.CONNECTED or session.hello is None:
            return
        conn.named_by_server = False
        info = session.hello.server_info if isinstance(session.hello.server_info, dict) else {}
        said = next((v for v in (info.get("title"), info.get("name")) if isinstance(v, str) and v.strip()), "")
        name = visible(" ".join(said.split()), 80)
        if name and name != conn.spec.name:
            self.rename(conn, name)

    def rename(self, conn: Connection, name: str) -> None:
        w = self.window
        link = w.catalog_link
        entry = link.entry_of(conn)
        spec = copy.deepcopy(conn.spec)
        taken = [c.spec.name for c in w.servers.connections if c is not conn]
        spec.name = link.catalog.unique_name(name, taken=taken, ignore=entry.id if entry else None)
        if entry is not None:
            try:
                link.catalog.update(entry.id, spec)
            except CatalogError as exc:
                w.show_banner(exc.message)
                return
            link.save()
        conn.session.spec = spec
        w.servers.refresh(conn)
        if conn is w.selected_connection():
            w.setWindowTitle(visible(conn.name, 80))

    # ------------------------------------------------------------------ remove, undo
    def remove(self, conn: Connection) -> Any:
        """Remove at once (no question); the banner offers Undo until its next message."""
        w = self.window
        if conn not in w.servers.connections:
            return None
        entry = w.catalog_link.entry_of(conn)
        servers = w.catalog_link.catalog.servers
        self.removed = Removed(
            spec=copy.deepcopy(conn.spec), mode=conn.session.options.mode, timeout=conn.session.options.timeout,
            row=w.servers.connections.index(conn),
            connected=conn.session.status in (Status.CONNECTED, Status.CONNECTING),
            entry=copy.deepcopy(entry), catalog_index=servers.index(entry) if entry in servers else -1,
            roots=[dict(r) for r in conn.session.roots or []])
        task = w.remove_connection(conn)
        w.banner.show_message(f"Removed {visible(conn.name, 80)}.", level="info",
                              action=("Undo", UNDO_NAME, self.undo))
        w.act_undo_remove.setEnabled(True)
        return task

    def undo(self) -> Connection | None:
        """Put the last removed server back: same definition, settings, catalog entry and place."""
        w = self.window
        r, self.removed = self.removed, None
        w.act_undo_remove.setEnabled(False)
        if w.banner.offers(UNDO_NAME):
            w.banner.dismiss()
        if r is None:
            return None
        catalog_id = None
        spec = r.spec
        link = w.catalog_link
        if r.entry is not None and link.keepable(r.spec) and not link.catalog.read_only:
            entry = link.catalog.put_back(r.entry, r.catalog_index)
            link.save()
            catalog_id, spec = entry.id, copy.deepcopy(entry.spec)
        conn = w.add_server(spec, mode=r.mode, timeout=r.timeout, catalog_id=catalog_id, connect=r.connected,
                            select=False, save=False)
        conn.session.roots = r.roots
        if catalog_id is not None:
            w.devloop.restore(conn)
        w.servers.move(conn, r.row)
        w.select_connection(conn)
        w.statusBar().showMessage(f"{conn.name} is back.", 8000)
        return conn
