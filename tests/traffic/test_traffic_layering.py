"""The traffic layer's own import rules (DESIGN §1), on top of tests/test_layering.py."""

from __future__ import annotations

import subprocess
import sys

import ast
from pathlib import Path

from traffic_helpers import ROOT

TRAFFIC = ROOT / "inspector" / "traffic"


def imports(path: Path) -> set[str]:
    """Absolute names of the modules a file imports (relative ones resolved)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = path.relative_to(ROOT).with_suffix("").parts[:-node.level]
                names.add(".".join([*base, node.module] if node.module else base))
            elif node.module:
                names.add(node.module)
    return names


def tops(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


def test_the_session_writer_is_a_standalone_stdlib_script():
    """`_sink.py` runs as `python -I -S _sink.py` in a child process: stdlib only."""
    names = imports(TRAFFIC / "_sink.py")
    assert not {n for n in names if n.startswith("inspector")}
    assert all(t in sys.stdlib_module_names for t in tops(names)), tops(names)


def test_the_store_does_not_pull_in_qt():
    code = ("import sys; import inspector.traffic; "
            "assert not [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'qasync'))]")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(ROOT))


def test_the_traffic_ui_imports_only_downwards():
    for name in ("traffic_model.py", "traffic_pane.py", "highlight.py"):
        names = imports(ROOT / "inspector" / "ui" / name)
        upward = {n for n in names if n.startswith(("inspector.app", "inspector.cli"))}
        assert not upward, (name, upward)
