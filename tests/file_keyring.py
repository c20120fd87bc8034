"""A keyring backend for tests: entries in the JSON file named by SPYGLASS_TEST_KEYRING (no OS keyring on a
test machine). Use it in a subprocess with PYTHON_KEYRING_BACKEND=file_keyring.FileKeyring and tests/ on
PYTHONPATH."""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend


class FileKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    @staticmethod
    def _path() -> Path:
        return Path(os.environ["SPYGLASS_TEST_KEYRING"])

    def _all(self) -> dict[str, str]:
        try:
            return json.loads(self._path().read_text())
        except FileNotFoundError:
            return {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._all().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self._all()
        entries[f"{service}/{username}"] = password
        self._path().write_text(json.dumps(entries))

    def delete_password(self, service: str, username: str) -> None:
        entries = self._all()
        entries.pop(f"{service}/{username}", None)
        self._path().write_text(json.dumps(entries))
