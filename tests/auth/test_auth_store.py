"""Token storage: the keyring when there is one, memory (and a clear message) when not."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from inspector.auth.store import KeyringStore, MemoryStore, credential_key

AUTH = Path(__file__).resolve().parents[2] / "inspector" / "auth"


def test_memory_store_round_trip():
    store = MemoryStore()
    key = credential_key("https://as.example", "https://mcp.example/mcp")
    assert store.load(key) is None
    store.save(key, {"tokens": {"access_token": "t"}})
    assert store.load(key) == {"tokens": {"access_token": "t"}}
    store.delete(key)
    assert store.load(key) is None


def test_keyring_without_a_backend_falls_back_with_a_message(monkeypatch):
    keyring = pytest.importorskip("keyring")
    from keyring.backends import fail

    monkeypatch.setattr(keyring, "get_keyring", lambda: fail.Keyring())
    warnings: list[str] = []
    store = KeyringStore(on_warning=warnings.append)
    assert store.load("k") is None
    store.save("k", {"a": 1})
    assert store.load("k") == {"a": 1}
    assert not store.persistent
    assert len(warnings) == 1 and "in memory for this session only" in warnings[0]


def test_keyring_backend_is_used_when_present(monkeypatch):
    keyring = pytest.importorskip("keyring")
    from keyring.backend import KeyringBackend

    class Fake(KeyringBackend):
        priority = 1
        items: dict = {}

        def get_password(self, service, username):
            return self.items.get((service, username))

        def set_password(self, service, username, password):
            self.items[(service, username)] = password

        def delete_password(self, service, username):
            self.items.pop((service, username), None)

    fake = Fake()
    monkeypatch.setattr(keyring, "get_keyring", lambda: fake)
    monkeypatch.setattr(keyring, "get_password", fake.get_password)
    monkeypatch.setattr(keyring, "set_password", fake.set_password)
    monkeypatch.setattr(keyring, "delete_password", fake.delete_password)
    store = KeyringStore()
    store.save("issuer server", {"tokens": {"access_token": "x"}})
    assert ("spyglass-oauth", "issuer server") in fake.items and store.persistent
    assert store.load("issuer server") == {"tokens": {"access_token": "x"}}


@pytest.mark.parametrize("path", sorted(AUTH.rglob("*.py")), ids=lambda p: p.name)
def test_auth_package_never_imports_qt(path):
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not {n.split(".")[0] for n in names} & {"PySide6", "qasync", "shiboken6"}
