"""Layering: the catalog, importers, exporters and keystore are core modules, so no Qt and no asyncio."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "inspector"
CORE = [PKG / "catalog.py", PKG / "keystore.py", PKG / "exporters.py", PKG / "config.py",
        *sorted((PKG / "importers").glob("*.py"))]
FORBIDDEN = {"PySide6", "qasync", "shiboken6", "asyncio", "httpx", "httpx_sse", "socket", "subprocess"}


def top_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
def test_no_qt_no_io_frameworks(path):
    assert not top_imports(path) & FORBIDDEN


def test_importing_them_loads_no_qt():
    code = ("import sys, inspector.catalog, inspector.importers, inspector.exporters, inspector.keystore; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'qasync', 'keyring')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PKG.parent).stdout.strip()
    assert out == "[]"  # and keyring loads only when a secret is first touched
