"""Every Qt item model class of the package is run through pytest-qt's `qtmodeltester` by some test.

The model classes are found by reading the package's source (any class whose base is one of Qt's item
models, or a model class of the package, however many steps down); each must be named in TESTED with the
test that checks it, and that test must call `qtmodeltester.check`. A new model class added without such a
test fails here, and so does an entry left behind when a class or its test goes away.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "inspector"
QT_MODELS = {"QAbstractItemModel", "QAbstractTableModel", "QAbstractListModel", "QSortFilterProxyModel",
             "QAbstractProxyModel", "QIdentityProxyModel", "QStandardItemModel", "QStringListModel",
             "QConcatenateTablesProxyModel", "QTransposeProxyModel", "QFileSystemModel"}

# "module:Class" -> "tests/file.py::test" whose body runs qtmodeltester.check on a filled instance
UI = "tests/ui/test_ui_models.py"
TESTED = {
    "inspector.ui.library.items:CatalogModel": f"{UI}::test_the_resource_template_and_prompt_models",
    "inspector.ui.window.command_palette:_Filter": f"{UI}::test_the_command_palettes_filter",
    "inspector.ui.calls.tool_list:ToolModel": f"{UI}::test_the_tool_model_and_its_search_filter",
    "inspector.ui.calls.tool_list:ToolFilter": f"{UI}::test_the_tool_model_and_its_search_filter",
    "inspector.ui.recording.calls_view:CallsModel": f"{UI}::test_the_recorded_calls_model",
    "inspector.ui.render.json_tree:JsonTreeModel": f"{UI}::test_the_json_tree_model",
    "inspector.ui.recording.surface_view:RecordedLogModel": f"{UI}::test_the_recorded_log_model",
    "inspector.ui.traffic.model:TrafficModel":
        "tests/traffic/test_traffic_model.py::test_model_passes_the_model_tester",
    "inspector.ui.servers.sidebar:ServerModel": f"{UI}::test_the_server_model",
    "inspector.ui.servers.log_pane:LogModel":
        f"{UI}::test_the_log_model_follows_a_flood_and_keeps_what_was_chosen",
}


def base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def model_classes(package: Path = PACKAGE) -> set[str]:
    """Every class of the package that is a Qt item model, as "module:Class"."""
    classes: list[tuple[str, str, list[str]]] = []
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ClassDef):
                classes.append((module, node.name, [base_name(b) for b in node.bases]))
    models = set(QT_MODELS)
    found: set[str] = set()
    grew = True
    while grew:  # a subclass of a model class of the package is a model too
        grew = False
        for module, name, bases in classes:
            if f"{module}:{name}" not in found and models.intersection(bases):
                found.add(f"{module}:{name}")
                models.add(name)
                grew = True
    return found


def test_the_discovery_finds_models_however_they_are_based(tmp_path):
    pkg = tmp_path / "inspector"
    (pkg / "ui").mkdir(parents=True)
    (pkg / "ui" / "m.py").write_text(
        "from PySide6 import QtCore\nfrom PySide6.QtGui import QStandardItemModel\n"
        "class A(QtCore.QAbstractTableModel): pass\nclass B(A): pass\nclass C(QStandardItemModel): pass\n"
        "class D(object): pass\nclass E(B, D): pass\n")
    assert model_classes(pkg) == {"inspector.ui.m:A", "inspector.ui.m:B", "inspector.ui.m:C", "inspector.ui.m:E"}


def test_every_model_class_has_a_model_tester_test():
    found = model_classes()
    assert "inspector.ui.traffic.model:TrafficModel" in found  # the discovery sees the package
    missing = sorted(found - TESTED.keys())
    assert not missing, (f"Qt item models with no qtmodeltester test: {missing}. Write a test that fills one as the "
                         "window does and runs qtmodeltester.check on it, and name it in TESTED.")
    stale = sorted(TESTED.keys() - found)
    assert not stale, f"TESTED names classes that are not models of the package (any more): {stale}"


def test_each_named_test_runs_the_model_tester():
    for cls, where in TESTED.items():
        file, test = where.split("::")
        tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
        func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == test), None)
        assert func is not None, f"{cls}: {where} does not exist"
        calls = [n for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "check" and base_name(n.func.value) == "qtmodeltester"]
        assert calls, f"{cls}: {where} never calls qtmodeltester.check"
        name = cls.split(":")[1]
        source = ast.unparse(func)
        assert name in source, f"{cls}: {where} does not name the class it checks"
