"""The window's servers and the catalog (inspector.catalog): what the user adds is saved, what is removed
is forgotten, and the next start puts them back (not connected). Secrets go to the OS keyring.

Two kinds of server are not saved: the built-in demo server, and a server named on the command line
(`spyglass -- CMD`), which is used for that run only until the user saves it (*Save to catalog*). A
window whose `persist` is off (a `--screenshot` run) leaves the catalog alone.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterable
from typing import Protocol

from PySide6.QtCore import QSettings

from ...catalog import Catalog, CatalogEntry, CatalogError, same_definition
from ...config import ServerSpec
from ...demo import launch_command

log = logging.getLogger("spyglass.ui.catalog")

DEMO_NAME = "demo (built-in)"


def demo_spec() -> ServerSpec:
    """The built-in demo server (`spyglass --demo-server` in a frozen bundle)."""
    return ServerSpec(name=DEMO_NAME, command=launch_command(), transport="stdio")


class Linked(Protocol):
    """What the catalog link needs of a server in the sidebar."""

    catalog_id: str | None

    @property
    def spec(self) -> ServerSpec: ...


class MemoryCatalog(Catalog):
    """A catalog that is never written (windows built without one: tests, embedding)."""

    def __init__(self) -> None:
        from ...keystore import MemorySecrets

        super().__init__(os.path.join(tempfile.gettempdir(), "spyglass-unsaved-catalog.json"),
                         secrets=MemorySecrets())

    def load(self) -> MemoryCatalog:
        return self

    def save(self) -> None:
        pass


class CatalogLink:
    """Keeps the catalog in step with the sidebar. `persist` says whether anything may be written;
    `message(text, level)` tells the user (a banner)."""

    def __init__(self, catalog: Catalog | None, *, persist: Callable[[], bool],
                 message: Callable[[str, str], None]) -> None:
        self.catalog = catalog if catalog is not None else MemoryCatalog()
        self.persist = persist
        self.message = message
        self._warned_secrets = False

    # -- reading ---------------------------------------------------------------------------------
    def entry_of(self, conn: Linked) -> CatalogEntry | None:
        cid = conn.catalog_id
        if cid is None:
            return None
        try:
            return self.catalog.get(cid)
        except KeyError:
            return None

    def can_save(self, conn: Linked) -> bool:
        """A server the user could still save: not saved, not the demo, and a catalog that may be written."""
        return self.entry_of(conn) is None and self.keepable(conn.spec) and not self.catalog.read_only

    def keepable(self, spec: ServerSpec) -> bool:
        return bool(self.persist()) and spec.name != DEMO_NAME

    # -- changes ---------------------------------------------------------------------------------
    def remember(self, spec: ServerSpec, mode: str, timeout: float | None, linked: Iterable[Linked], *,
                 save: bool = True) -> str | None:
        """Before a server joins the sidebar: the catalog id for it. A saved server with the same definition
        (not in the sidebar yet) is that server; otherwise, with `save`, a new entry. May rename `spec` to
        the unique name the catalog gave it."""
        if not self.keepable(spec) or self.catalog.read_only:
            return None
        ids = {c.catalog_id for c in linked}
        twin = next((e for e in self.catalog.servers if e.id not in ids and same_definition(e.spec, spec)), None)
        if twin is not None:  # e.g. `spyglass -- CMD` run again after it was saved
            spec.name = twin.name
            spec.tls_pin = spec.tls_pin or twin.spec.tls_pin  # a certificate trusted for it stays trusted
            return twin.id
        if not save:
            return None
        entry = self.catalog.add(spec, mode=mode or "auto", timeout=timeout)
        spec.name = entry.name
        self.save()
        return entry.id

    def save_server(self, conn: Linked, mode: str, linked: Iterable[Linked]) -> bool:
        """*Save to catalog*: an unsaved server becomes a saved one."""
        if not self.can_save(conn):
            return False
        conn.catalog_id = self.remember(conn.spec, mode, None, linked)
        return conn.catalog_id is not None

    def forget(self, conn: Linked) -> None:
        entry = self.entry_of(conn)
        if entry is None:
            return
        self.catalog.remove(entry.id)
        self.save()

    def sync(self, servers: Iterable[tuple[Linked, str]]) -> None:
        """Every saved server's current definition (with its protocol mode), in sidebar order, then save."""
        if not self.persist() or self.catalog.read_only:
            return
        order = []
        for conn, mode in servers:
            entry = self.entry_of(conn)
            if entry is None:
                continue
            try:
                self.catalog.update(entry.id, conn.spec, mode=mode)
            except CatalogError:
                log.warning("could not update %s in the catalog", entry.name, exc_info=True)
            order.append(entry.id)
        for i, cid in enumerate(order):
            self.catalog.move(cid, i)
        self.save()

    def save(self) -> bool:
        if not self.persist():
            return False
        try:
            self.catalog.save()
        except CatalogError as exc:
            self.message(exc.message, "error")
            return False
        self.warn_secrets()
        return True

    def warn_secrets(self) -> None:
        """Once per session: secrets could not reach a keyring (they are kept in memory)."""
        if self._warned_secrets:
            return
        if not any(e.secret_fields() for e in self.catalog.servers):
            return
        if self.catalog.secrets_persistent:
            return
        text = self.catalog.secrets_warning or "Secrets cannot be saved: no OS keyring is available."
        self._warned_secrets = True
        self.message(text, "info")

    # -- roots -----------------------------------------------------------------------------------
    def roots_of(self, conn: Linked, settings: QSettings) -> list[dict[str, str]]:
        """A server's roots: from its catalog entry, else (a server the catalog does not keep) the settings."""
        entry = self.entry_of(conn)
        if entry is not None and entry.roots is not None:
            saved: object = entry.roots
        else:
            try:
                saved = json.loads(settings.value(f"roots/{conn.spec.name}") or "[]")
            except (TypeError, ValueError):
                saved = []
        return [dict(r) for r in saved if isinstance(r, dict) and isinstance(r.get("uri"), str)] \
            if isinstance(saved, list) else []

    def save_roots(self, conn: Linked, roots: list[dict[str, str]], settings: QSettings) -> None:
        entry = self.entry_of(conn)
        if entry is None:
            settings.setValue(f"roots/{conn.spec.name}", json.dumps(roots))
            return
        entry.roots = [dict(r) for r in roots]
        settings.remove(f"roots/{conn.spec.name}")
        self.save()

    # -- restoring -------------------------------------------------------------------------------
    def saved(self, skip: set[str] = frozenset()) -> list[CatalogEntry]:
        """The saved servers to put back in the sidebar (copies: the sidebar may change them)."""
        if any(e.missing_secrets for e in self.catalog.servers):
            names = ", ".join(e.name for e in self.catalog.servers if e.missing_secrets)
            self.message(f"Some saved secrets are missing (enter them again): {names}", "info")
        return [copy.deepcopy(e) for e in self.catalog.servers if e.name not in skip]
