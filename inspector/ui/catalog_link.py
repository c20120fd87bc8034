"""The window's servers and the catalog (inspector.catalog): what is added is saved, what is removed is
forgotten, and the next start puts them back (not connected). Secrets go to the OS keyring.

The built-in demo server is never saved. A window whose `persist` is off (a `--screenshot` run)
leaves the catalog alone.
"""

from __future__ import annotations

import copy
import logging
import os
import tempfile
from typing import Any

from ..catalog import Catalog, CatalogError, same_definition
from ..config import ServerSpec

log = logging.getLogger("spyglass.ui.catalog")


class MemoryCatalog(Catalog):
    """A catalog that is never written (windows built without one: tests, embedding)."""

    def __init__(self) -> None:
        from ..keystore import MemorySecrets

        super().__init__(os.path.join(tempfile.gettempdir(), "spyglass-unsaved-catalog.json"),
                         secrets=MemorySecrets())

    def load(self) -> "MemoryCatalog":
        return self

    def save(self) -> None:
        pass


class CatalogLink:
    """Keeps `window.catalog` in step with the sidebar. Each Connection gets `catalog_id`."""

    def __init__(self, window: Any, catalog: Catalog | None) -> None:
        self.window = window
        self.catalog = catalog if catalog is not None else MemoryCatalog()
        self._warned_secrets = False

    # -- reading ---------------------------------------------------------------------------------
    def startup_warnings(self) -> list[str]:
        return list(self.catalog.warnings)

    def entries(self) -> list[Any]:
        return self.catalog.servers

    def entry_of(self, conn: Any) -> Any:
        cid = getattr(conn, "catalog_id", None)
        if cid is None:
            return None
        try:
            return self.catalog.get(cid)
        except KeyError:
            return None

    # -- changes ---------------------------------------------------------------------------------
    def should_keep(self, spec: ServerSpec) -> bool:
        from .main_window import DEMO_NAME

        return bool(self.window.persist) and spec.name != DEMO_NAME

    def remember(self, spec: ServerSpec, mode: str, timeout: float | None, catalog_id: str | None) -> str | None:
        """Before a connection is made: the catalog id for it (a new entry when needed).
        May rename `spec` to the unique name the catalog gave it."""
        if catalog_id is not None:
            return catalog_id
        if not self.should_keep(spec) or self.catalog.read_only:
            return None
        linked = {getattr(c, "catalog_id", None) for c in self.window.servers.connections}
        twin = next((e for e in self.catalog.servers if e.id not in linked and same_definition(e.spec, spec)), None)
        if twin is not None:  # e.g. `spyglass -- CMD` run again: the saved server, not a second copy
            spec.name = twin.name
            return twin.id
        entry = self.catalog.add(spec, mode=mode or "auto", timeout=timeout)
        spec.name = entry.name
        self.save()
        return entry.id

    def forget(self, conn: Any) -> None:
        entry = self.entry_of(conn)
        if entry is None:
            return
        self.catalog.remove(entry.id)
        self.save()

    def sync(self) -> None:
        """Every linked connection's current definition, in sidebar order, then save."""
        if not self.window.persist or self.catalog.read_only:
            return
        order = []
        for conn in self.window.servers.connections:
            entry = self.entry_of(conn)
            if entry is None:
                if self.should_keep(conn.spec):
                    conn.catalog_id = self.remember(copy.deepcopy(conn.spec), conn.mode, None, None)
                    entry = self.entry_of(conn)
                if entry is None:
                    continue
            try:
                self.catalog.update(entry.id, conn.spec, mode=conn.mode)
            except CatalogError:
                pass
            order.append(entry.id)
        for i, cid in enumerate(order):
            self.catalog.move(cid, i)
        self.save()

    def save(self) -> bool:
        if not self.window.persist:
            return False
        try:
            self.catalog.save()
        except CatalogError as exc:
            self.window.show_banner(exc.message)
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
        message = self.catalog.secrets_warning or "Secrets cannot be saved: no OS keyring is available."
        self._warned_secrets = True
        self.window.show_banner(message, level="info")

    # -- restoring -------------------------------------------------------------------------------
    def restore(self, skip: set[str] = frozenset(), default_timeout: float | None = None) -> list[Any]:
        out = []
        for entry in self.catalog.servers:
            if entry.name in skip:
                continue
            conn = self.window.add_server(copy.deepcopy(entry.spec), mode=entry.mode,
                                          timeout=entry.timeout or default_timeout, connect=False,
                                          select=False, catalog_id=entry.id)
            out.append(conn)
        if any(e.missing_secrets for e in self.catalog.servers):
            names = ", ".join(e.name for e in self.catalog.servers if e.missing_secrets)
            self.window.show_banner(f"Some saved secrets are missing (enter them again): {names}", level="info")
        return out
