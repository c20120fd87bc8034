"""Where tokens and client secrets live: the OS keyring, keyed by issuer and server.

Never the config file, never a log. Where no keyring backend exists the store
falls back to memory for this run and says so once (`KeyringStore.warning`).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Callable, Protocol

log = logging.getLogger("spyglass.auth")

SERVICE = "spyglass-oauth"


def credential_key(issuer: str, resource: str) -> str:
    return f"{issuer} {resource}"


class TokenStore(Protocol):
    def load(self, key: str) -> dict[str, Any] | None: ...

    def save(self, key: str, value: dict[str, Any]) -> None: ...

    def delete(self, key: str) -> None: ...


class MemoryStore:
    """Kept in this process only (tests, CI, and the fallback without a keyring)."""

    def __init__(self) -> None:
        self._items: dict[str, str] = {}

    def load(self, key: str) -> dict[str, Any] | None:
        raw = self._items.get(key)
        return json.loads(raw) if raw else None

    def save(self, key: str, value: dict[str, Any]) -> None:
        self._items[key] = json.dumps(value)

    def delete(self, key: str) -> None:
        self._items.pop(key, None)


class KeyringStore:
    """The OS keyring (Secret Service, macOS Keychain, Windows Credential Locker)."""

    def __init__(self, service: str = SERVICE, on_warning: Callable[[str], None] | None = None) -> None:
        self.service = service
        self.warning: str | None = None
        self.on_warning = on_warning
        self._fallback: MemoryStore | None = None
        self._keyring: Any = None

    def _ready(self) -> bool:
        """Find the keyring backend on first use (importing it costs a few hundred ms)."""
        if self._keyring is not None:
            return True
        if self._fallback is not None:
            return False
        try:
            import keyring
            from keyring.backends import fail

            backend = keyring.get_keyring()
            if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 1) <= 0:
                raise RuntimeError("no keyring backend is installed or unlocked (GNOME Keyring, KWallet, "
                                   "macOS Keychain, Windows Credential Locker)")
            self._keyring = keyring
            return True
        except Exception as exc:
            self._use_fallback(f"{exc}")
            return False

    def _use_fallback(self, why: str) -> None:
        if self._fallback is None:
            self.warning = (f"no OS keyring available ({why}): tokens are kept in memory for this run only "
                            "and you will be asked to authorize again next time")
            log.info("%s", self.warning)
            self._fallback = MemoryStore()
            if self.on_warning is not None:
                self.on_warning(self.warning)

    @property
    def persistent(self) -> bool:
        return self._ready()

    def load(self, key: str) -> dict[str, Any] | None:
        if self._ready():
            try:
                raw = self._keyring.get_password(self.service, key)
                return json.loads(raw) if raw else None
            except Exception as exc:
                self._use_fallback(f"reading failed: {type(exc).__name__}")
        assert self._fallback is not None
        return self._fallback.load(key)

    def save(self, key: str, value: dict[str, Any]) -> None:
        if self._ready():
            try:
                self._keyring.set_password(self.service, key, json.dumps(value))
                return
            except Exception as exc:
                self._use_fallback(f"writing failed: {type(exc).__name__}")
        assert self._fallback is not None
        self._fallback.save(key, value)

    def delete(self, key: str) -> None:
        if self._ready():
            try:
                self._keyring.delete_password(self.service, key)
            except Exception:
                pass
        elif self._fallback is not None:
            self._fallback.delete(key)
