"""Secrets in the OS keyring (never in a plain config file), with an in-memory fallback. No Qt.

One module for every part of Spyglass that keeps a secret: the server catalog
(env values and headers such as tokens) and the OAuth token store. Values are
strings keyed by (service, key); `load`/`save` store JSON objects for callers
that keep structured records.

Where no usable keyring backend exists (keyring's `fail` backend, a backend with
priority <= 0, `NoKeyringError`, or a backend that refuses to write), the store
keeps values in memory for this run only and says so once: `warning` holds the
sentence for the UI, and `on_warning` is called with it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, Protocol

log = logging.getLogger("spyglass.keystore")

SERVICE = "spyglass"


class Secrets(Protocol):
    """Strings kept by key: what the catalog needs of a secret store."""

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, value: str) -> None: ...

    def delete(self, key: str) -> None: ...


class MemorySecrets:
    """Kept in this process only (tests, CI, and the fallback without a keyring)."""

    persistent = False
    warning: str | None = None

    def __init__(self) -> None:
        self._items: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        return self._items.get(key)

    def set(self, key: str, value: str) -> None:
        self._items[key] = value

    def delete(self, key: str) -> None:
        self._items.pop(key, None)

    def load(self, key: str) -> dict[str, Any] | None:
        raw = self.get(key)
        return json.loads(raw) if raw else None

    def save(self, key: str, value: dict[str, Any]) -> None:
        self.set(key, json.dumps(value))


class SecretStore:
    """The OS keyring (Secret Service, macOS Keychain, Windows Credential Locker).

    `what` names the secrets in the fallback message ("secrets", "tokens").
    The keyring module is imported on first use: it costs a few hundred ms.
    """

    def __init__(self, service: str = SERVICE, *, what: str = "Secrets",
                 on_warning: Callable[[str], None] | None = None) -> None:
        self.service = service
        self.what = what
        self.on_warning = on_warning
        self.warning: str | None = None
        self._keyring: Any = None  # the keyring module, once a usable backend was found
        self._fallback: MemorySecrets | None = None

    # -- backend ---------------------------------------------------------------------------------

    def _ready(self) -> bool:
        if self._keyring is not None:
            return True
        if self._fallback is not None:
            return False
        try:
            import keyring
            from keyring.backends import fail

            backend = keyring.get_keyring()
            if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 1) <= 0:
                raise RuntimeError("no keyring service was found, such as GNOME Keyring or KWallet "
                                   "through the Secret Service" if isinstance(backend, fail.Keyring)
                                   else f"the keyring backend {type(backend).__name__} is not usable")
            self._keyring = keyring
            return True
        except Exception as exc:  # NoKeyringError, InitError, import errors, the fail backend
            self._use_fallback(str(exc) or type(exc).__name__)
            return False

    def _use_fallback(self, why: str) -> None:
        if self._fallback is not None:
            return
        self.warning = (f"{self.what} cannot be saved: no OS keyring is available ({why}). "
                        f"They are kept in memory for this session only and will be asked for again "
                        f"next time.")
        log.info("%s", self.warning)  # told the user through on_warning: not a fault of the program
        self._fallback = MemorySecrets()
        self._keyring = None
        if self.on_warning is not None:
            try:
                self.on_warning(self.warning)
            except Exception:  # a broken callback must not lose the secret
                log.exception("keystore warning callback failed")

    @property
    def persistent(self) -> bool:
        """True while values reach the OS keyring (they survive a restart)."""
        return self._ready()

    # -- strings ---------------------------------------------------------------------------------

    def get(self, key: str) -> str | None:
        if self._ready():
            try:
                value: str | None = self._keyring.get_password(self.service, key)
                return value
            except Exception as exc:
                self._use_fallback(f"reading failed: {type(exc).__name__}")
        assert self._fallback is not None
        return self._fallback.get(key)

    def set(self, key: str, value: str) -> None:
        if self._ready():
            try:
                self._keyring.set_password(self.service, key, value)
                return
            except Exception as exc:
                self._use_fallback(f"writing failed: {type(exc).__name__}")
        assert self._fallback is not None
        self._fallback.set(key, value)

    def delete(self, key: str) -> None:
        if self._fallback is not None:
            self._fallback.delete(key)
        if self._ready():
            try:
                self._keyring.delete_password(self.service, key)
            except Exception:  # PasswordDeleteError when absent: nothing to do
                pass

    # -- JSON records (the shape inspector.auth's token store uses) ------------------------------

    def load(self, key: str) -> dict[str, Any] | None:
        raw = self.get(key)
        if not raw:
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def save(self, key: str, value: dict[str, Any]) -> None:
        self.set(key, json.dumps(value))
