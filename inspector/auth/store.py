"""Where tokens and client secrets live: the OS keyring, keyed by issuer and server.

Never the config file, never a log. This is `inspector.keystore` (shared with the
server catalog) under the OAuth service name; where no keyring backend exists it
keeps tokens in memory for this run and says so once (`KeyringStore.warning`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..keystore import MemorySecrets, SecretStore

SERVICE = "spyglass-oauth"


def credential_key(issuer: str, resource: str) -> str:
    return f"{issuer} {resource}"


class TokenStore(Protocol):
    def load(self, key: str) -> dict[str, Any] | None: ...

    def save(self, key: str, value: dict[str, Any]) -> None: ...

    def delete(self, key: str) -> None: ...


class MemoryStore(MemorySecrets):
    """Kept in this process only (tests, CI, automation)."""


class KeyringStore(SecretStore):
    """The OS keyring (Secret Service, macOS Keychain, Windows Credential Locker)."""

    def __init__(self, service: str = SERVICE, on_warning: Callable[[str], None] | None = None) -> None:
        super().__init__(service, what="Tokens", on_warning=on_warning)
