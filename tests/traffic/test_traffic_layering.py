"""The traffic layer's own import rules, on top of tests/test_layering.py (cycles and private names are
checked there for the whole house)."""

from __future__ import annotations

import ast
import subprocess
import sys
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


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_nodes(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import a file runs, in functions too; not those under `if TYPE_CHECKING:`,
    which only the type checker follows. `import a.b` gives ("a.b", []); relative modules are resolved."""
    tree = ast.parse(path.read_text(), str(path))
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and _type_checking(node.test)
                   for stmt in node.body for n in ast.walk(stmt)}
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = path.relative_to(ROOT).with_suffix("").parts[:-node.level]
                module = ".".join([*base, node.module] if node.module else base)
            found.append((module, [a.name for a in node.names]))
    return found


MODULES = {f"inspector.traffic.{p.stem}": p for p in TRAFFIC.glob("*.py") if p.stem != "__init__"}


def traffic_graph() -> dict[str, set[str]]:
    """Which traffic modules each traffic module imports when it runs."""
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        targets: set[str] = set()
        for module, names in import_nodes(path):
            targets |= {m for m in (module, *(f"{module}.{n}" for n in names)) if m in MODULES and m != name}
        graph[name] = targets
    return graph


def test_the_codes_and_columns_have_one_home_that_depends_on_no_other_part():
    graph = traffic_graph()
    assert {"inspector.traffic.columns"} <= graph["inspector.traffic.store"] & graph["inspector.traffic.filter"] \
        & graph["inspector.traffic._writer"]
    assert not graph["inspector.traffic.columns"]


def test_no_module_reaches_into_another_modules_objects():
    """`obj._name` only for a `_name` its own module defines (an attribute or method of its classes)."""
    for path in MODULES.values():
        tree = ast.parse(path.read_text(), str(path))
        own = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        own |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                assert node.attr in own, f"{path.name}:{node.lineno} uses {node.attr}, private to another module"


def test_the_session_writer_names_the_codes_as_the_store_does():
    from inspector.traffic import _sink, columns

    assert _sink.KINDS == columns.KINDS and _sink.DIRECTIONS == columns.DIRECTIONS
