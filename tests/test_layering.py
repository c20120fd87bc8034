"""DESIGN §1: imports only point down. Checked by reading the import statements."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from support import ROOT

PKG = ROOT / "inspector"
QT = {"PySide6", "qasync", "shiboken6"}
IO = {"asyncio", "socket", "subprocess", "selectors", "ssl", "httpx", "httpx_sse", "threading"}


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = path.relative_to(ROOT).with_suffix("").parts[:-node.level]
                names.add(".".join([*base, node.module] if node.module else base))
            elif node.module:
                names.add(node.module)
    return names


def files(*parts: str) -> list[Path]:
    target = PKG.joinpath(*parts)
    return sorted(target.rglob("*.py")) if target.is_dir() else [target]


def tops(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


@pytest.mark.parametrize("path", files("protocol"), ids=str)
def test_protocol_is_stdlib_only_and_sans_io(path):
    names = imports(path)
    outside = {n for n in names if n.startswith("inspector") and not n.startswith("inspector.protocol")}
    assert not outside, f"{path.name} reaches out of the protocol core: {outside}"
    assert not tops(names) & (QT | IO), f"{path.name} does IO or Qt: {tops(names) & (QT | IO)}"
    import sys
    third_party = {t for t in tops(names) if t not in sys.stdlib_module_names and t != "inspector"}
    assert not third_party, f"{path.name} imports non-stdlib modules: {third_party}"


QT_FREE = [*files("transport"), *files("traffic"), *files("importers"), PKG / "client.py", PKG / "client_tasks.py", PKG / "config.py",
           PKG / "cli.py", PKG / "errors.py", PKG / "forms" / "validation.py", *files("demo"), PKG / "catalog.py",
           PKG / "exporters.py", PKG / "keystore.py", PKG / "media.py", PKG / "replay.py", PKG / "templates.py",
           PKG / "secrets.py", *files("auth")]


@pytest.mark.parametrize("path", [p for p in QT_FREE if p.exists()], ids=str)
def test_core_never_imports_qt(path):
    assert not tops(imports(path)) & QT, f"{path} imports Qt"


@pytest.mark.parametrize("path", files("demo"), ids=str)
def test_demo_server_is_stdlib_plus_protocol(path):
    import sys
    names = imports(path)
    bad = {n for n in names if n.startswith("inspector") and not n.startswith(("inspector.demo", "inspector.protocol"))}
    bad |= {t for t in tops(names) if t not in sys.stdlib_module_names and t != "inspector"}
    assert not bad, f"{path.name}: {bad}"


UPPER = ("inspector.ui", "inspector.app", "inspector.forms", "inspector.cli")


@pytest.mark.parametrize("path", [*files("transport"), PKG / "client.py", PKG / "client_tasks.py"], ids=str)
def test_lower_layers_do_not_import_upper_ones(path):
    upper = {n for n in imports(path) if any(n == m or n.startswith(m + ".") for m in UPPER)}
    assert not upper, f"{path} imports {upper}"
