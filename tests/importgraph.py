"""The house as its import statements describe it: every module of `inspector`, what it imports (inside
functions too; not under `if TYPE_CHECKING:`, which only the type checker follows), and what it takes.

Shared by the tests that guard the layering, the cycles and the private names."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from support import ROOT

PKG = ROOT / "inspector"


@dataclass
class Import:
    module: str  # the absolute module named (for `from a import b`: "a", or "a.b" when b is a module)
    names: tuple[str, ...]  # what `from ... import` takes ((): a plain `import`, or a module)
    line: int
    in_function: bool


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    lines: int
    imports: list[Import] = field(default_factory=list)

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


@lru_cache(maxsize=1)
def modules() -> dict[str, Module]:
    out: dict[str, Module] = {}
    for path in sorted(PKG.rglob("*.py")):
        name, is_package = _module_name(path)
        text = path.read_text()
        out[name] = Module(name, path, is_package, text.count("\n") + 1)
    for mod in out.values():
        tree = ast.parse(mod.path.read_text(), str(mod.path))
        typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and _type_checking(node.test)
                       for stmt in node.body for n in ast.walk(stmt)}
        in_function = {id(n) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                       for n in ast.walk(node)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            inside = id(node) in in_function
            if isinstance(node, ast.Import):
                mod.imports += [Import(a.name, (), node.lineno, inside) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = mod.package.split(".")
                    pkg = pkg[: len(pkg) - (node.level - 1)]
                    base = ".".join(pkg + ([node.module] if node.module else []))
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if sub in out:  # `from package import module`
                        mod.imports.append(Import(sub, (), node.lineno, inside))
                    else:
                        mod.imports.append(Import(base, (alias.name,), node.lineno, inside))
    return out


def owner(name: str) -> str | None:
    """The inspector module that defines `name` (a module, or the module of an attribute)."""
    mods = modules()
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def edges(*, faces: bool = False) -> dict[str, set[str]]:
    """module -> the inspector modules it imports. Without `faces`, a package's `__init__` is not a node:
    a package face re-exports its parts, and importing it is not depending on every part."""
    mods = modules()
    out: dict[str, set[str]] = {}
    for mod in mods.values():
        if mod.is_package and not faces:
            continue
        targets = out.setdefault(mod.name, set())
        for imp in mod.imports:
            if not imp.module.startswith("inspector"):
                continue
            target = owner(imp.module)
            if target is None or target == mod.name or (mods[target].is_package and not faces):
                continue
            targets.add(target)
    return out


def cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    graph = edges()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def private_crossings() -> list[str]:
    """Private names taken from another module, and private modules imported from outside their package."""
    mods = modules()
    out = []
    for mod in mods.values():
        for imp in mod.imports:
            if not imp.module.startswith("inspector"):
                continue
            target = owner(imp.module)
            if target is None or target == mod.name:
                continue
            for name in imp.names:
                if name.startswith("_") and not name.startswith("__"):
                    out.append(f"{mod.name}:{imp.line} takes {name} from {target}")
            leaf = target.rpartition(".")[2]
            home = mods[target].package if mods[target].is_package else target.rpartition(".")[0]
            inside = mod.package == home or mod.package.startswith(home + ".")
            if leaf.startswith("_") and not leaf.startswith("__") and not inside:
                out.append(f"{mod.name}:{imp.line} imports the private module {target}")
    return sorted(out)
