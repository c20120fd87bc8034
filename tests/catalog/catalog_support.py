"""Fixtures of the catalog and import tests, imported by each test module (a conftest.py here
would shadow tests/conftest.py for `from conftest import ...`). Every test gets an in-memory keyring
and a private config folder, so nothing here reads or writes the real OS keyring or the user's catalog.

The fixture functions are named `*_fixture` and registered under the short name, so a test's
`memory_keyring` argument does not shadow an imported name."""

from __future__ import annotations

from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

DATA = Path(__file__).resolve().parent.parent / "data" / "configs"


class MemoryKeyring(KeyringBackend):
    """A keyring backend that keeps passwords in a dict (what the tests inspect)."""

    priority = 1  # type: ignore[assignment] - keyring declares it as a classproperty

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.items:
            raise PasswordDeleteError(username)
        del self.items[(service, username)]


@pytest.fixture(name="memory_keyring", autouse=True)
def memory_keyring_fixture(monkeypatch, tmp_path):
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    monkeypatch.setenv("SPYGLASS_CONFIG_DIR", str(tmp_path / "config"))
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture(name="no_keyring")
def no_keyring_fixture():
    """The situation on a headless machine: keyring's fail backend."""
    from keyring.backends import fail

    keyring.set_keyring(fail.Keyring())


@pytest.fixture(name="catalog_path")
def catalog_path_fixture(tmp_path) -> Path:
    return tmp_path / "config" / "servers.json"
