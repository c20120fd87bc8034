"""The house: imports only point down, never in a circle, and no module reaches into another's privates.

Read from every import statement, those inside functions included (an import inside a function that
only dodges a cycle is a cycle); only imports under `if TYPE_CHECKING:` are left out. docs/ARCHITECTURE.md
describes the layers these tests enforce.
"""

from __future__ import annotations

import re
import sys

import pytest
from importgraph import PKG, cycles, modules, owner, private_crossings

QT = {"PySide6", "qasync", "shiboken6"}
IO = {"asyncio", "socket", "subprocess", "selectors", "ssl", "httpx", "httpx_sse", "threading"}
MAX_LINES = 700

# Layers, lowest first: a module imports only from its own layer or lower ones.
LAYERS = [
    ("foundation", ("inspector", "inspector.errors", "inspector.private", "inspector.secrets", "inspector.portable",
                    "inspector.messages", "inspector.media", "inspector.terminal", "inspector.templates",
                    "inspector.keystore", "inspector.config", "inspector.schemarefs", "inspector.urlpolicy",
                    "inspector.invisible", "inspector.protocol", "inspector.demo")),
    ("io", ("inspector.traffic", "inspector.transport", "inspector.auth")),
    ("client", ("inspector.client",)),
    ("session", ("inspector.session", "inspector.agent", "inspector.checks", "inspector.catalog", "inspector.importers",
                 "inspector.exporters", "inspector.replay", "inspector.recording", "inspector.collection",
                 "inspector.tap", "inspector.devloop", "inspector.model", "inspector.doctor",
                 "inspector.loadtest", "inspector.mock",
                 "inspector.forms.schema", "inspector.forms.widget_choice",
                 "inspector.forms.validation", "inspector.forms.memory")),
    ("commands", ("inspector.cli", "inspector.forms")),
    ("ui", ("inspector.ui",)),
    ("app", ("inspector.app", "inspector.__main__")),
]
# The window's sub-packages, lowest first: siblings of one rank do not import each other.
UI_RANKS = [("base",), ("render",), ("servers", "traffic"), ("auth", "library", "calls", "recording", "apps"),
            ("collections", "devloop", "present", "playground"),
            ("window",)]


def layer_of(name: str) -> int:
    best, rank = -1, -1
    for i, (_title, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank >= 0, f"{name} belongs to no layer: add it to LAYERS (and docs/ARCHITECTURE.md)"
    return rank


def imported(mod_name: str) -> list[tuple[str, int]]:
    return [(imp.module, imp.line) for imp in modules()[mod_name].imports]


def qt_free(name: str) -> bool:
    """Everything below the window, except the Qt half of forms (which shares a layer with the CLI)."""
    if name.startswith("inspector.forms") and layer_of(name) == layer_of("inspector.forms"):
        return False
    return layer_of(name) < layer_of("inspector.ui")


ALL = sorted(modules())


@pytest.mark.parametrize("name", ALL)
def test_imports_point_down(name):
    mine = layer_of(name)
    up = []
    for module, line in imported(name):
        target = owner(module) if module.startswith("inspector") else None
        if target is not None and target != name and layer_of(target) > mine:
            up.append(f"line {line}: {target} ({LAYERS[layer_of(target)][0]})")
    assert not up, f"{name} ({LAYERS[mine][0]}) imports upwards: {up}"


@pytest.mark.parametrize("name", [n for n in ALL if qt_free(n)])
def test_the_qt_free_layers_never_import_qt(name):
    qt = [f"line {line}: {m}" for m, line in imported(name) if m.split(".")[0] in QT]
    assert not qt, f"{name} imports Qt: {qt}"


@pytest.mark.parametrize("name", [n for n in ALL if n.startswith("inspector.protocol")])
def test_the_protocol_core_is_stdlib_only_and_sans_io(name):
    for module, line in imported(name):
        top = module.split(".")[0]
        if top == "inspector":
            assert module.startswith("inspector.protocol"), f"{name}:{line} reaches out of the core: {module}"
        else:
            assert top in sys.stdlib_module_names, f"{name}:{line} imports a non-stdlib module: {module}"
            assert top not in IO, f"{name}:{line} does IO: {module}"


@pytest.mark.parametrize("name", [n for n in ALL if n.startswith("inspector.demo")])
def test_the_demo_server_is_stdlib_plus_protocol(name):
    for module, line in imported(name):
        top = module.split(".")[0]
        assert (module.startswith(("inspector.demo", "inspector.protocol")) if top == "inspector"
                else top in sys.stdlib_module_names), f"{name}:{line}: {module}"


@pytest.mark.parametrize("name", [n for n in ALL if n.startswith("inspector.ui")])
def test_the_window_talks_to_servers_through_the_session_layer(name):
    below = [f"line {line}: {m}" for m, line in imported(name)
             if m.startswith(("inspector.transport", "inspector.client", "inspector.protocol.session"))]
    assert not below, f"{name} reaches past the session layer: {below}"


def ui_rank(name: str) -> tuple[int, str] | None:
    parts = name.split(".")
    if len(parts) < 3 or parts[1] != "ui":
        return None
    for rank, group in enumerate(UI_RANKS):
        if parts[2] in group:
            return rank, parts[2]
    raise AssertionError(f"{name}: a ui sub-package that UI_RANKS does not place")


@pytest.mark.parametrize("name", [n for n in ALL if n.startswith("inspector.ui.")])
def test_the_window_parts_import_only_lower_parts(name):
    mine = ui_rank(name)
    assert mine is not None
    bad = []
    for module, line in imported(name):
        target = owner(module) if module.startswith("inspector.ui.") else None
        theirs = ui_rank(target) if target else None
        if theirs is None or theirs[1] == mine[1]:
            continue
        if theirs[0] >= mine[0]:
            bad.append(f"line {line}: {target}")
    assert not bad, f"{name} ({mine[1]}) imports a part at its rank or above: {bad}"


def test_no_import_cycles():
    assert cycles() == []


def test_no_private_names_cross_modules():
    assert private_crossings() == []


@pytest.mark.parametrize("name", ALL)
def test_modules_stay_small(name):
    mod = modules()[name]
    assert mod.lines <= MAX_LINES, f"{mod.path.relative_to(PKG.parent)} has {mod.lines} lines (at most {MAX_LINES})"


TRANSPORTS = re.compile(r"\b(StdioTransport|HttpTransport|SseTransport)\(")


@pytest.mark.parametrize("name", ALL)
def test_a_server_is_opened_in_one_place(name):
    """Transports are built by the transport factory only (inspector.transport.factory)."""
    if name.startswith("inspector.transport"):
        return
    found = TRANSPORTS.findall(modules()[name].path.read_text())
    assert not found, f"{name} builds a transport itself ({found}): use inspector.transport.factory"


def test_comments_say_why_not_which_ticket():
    stale = []
    for mod in modules().values():
        for n, line in enumerate(mod.path.read_text().splitlines(), 1):
            if re.search(r"\b(issue|ticket) \d+\b|DESIGN §|\.\./shared", line):
                stale.append(f"{mod.path.relative_to(PKG.parent)}:{n}: {line.strip()[:80]}")
    assert not stale, stale


def test_the_headless_command_line_never_loads_qt():
    import subprocess

    code = ("import sys, inspector.cli, inspector.session; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(PKG.parent))
