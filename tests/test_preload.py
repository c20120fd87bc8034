"""Preloading a module ahead of its first use: in a thread (--cli), or a dependency per loop turn (the window)."""

from __future__ import annotations

import sys
import threading

from inspector import preload as P


def plant(tmp_path, monkeypatch, names: list[str], broken: str | None = None) -> list[str]:
    order: list[str] = []
    monkeypatch.setattr(P, "_ORDER", order, raising=False)
    for name in names:
        body = "raise ImportError('broken on purpose')\n" if name == broken else ""
        (tmp_path / f"{name}.py").write_text(f"from inspector import preload\npreload._ORDER.append({name!r})\n{body}")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)
    return order


def test_the_window_imports_a_dependency_per_turn(tmp_path, monkeypatch):
    order = plant(tmp_path, monkeypatch, ["sg_dep_a", "sg_dep_b", "sg_dep_c", "sg_main"], broken="sg_dep_b")
    monkeypatch.setitem(P.STEPS, "sg_main", ("sg_dep_a", "sg_dep_b", "sg_dep_c", "sg_main"))
    import sg_dep_c  # noqa: F401  (already there: no turn of its own)

    turns: list = []
    P.preload_steps("sg_main", turns.append)
    assert order == ["sg_dep_c"] and len(turns) == 1  # nothing is imported in the caller's own turn
    imported = []
    while turns:
        turns.pop(0)()
        imported.append(list(order))
    # one module a turn; the broken one is tried and the steps go on; the one already there is skipped
    assert imported == [["sg_dep_c", "sg_dep_a"], ["sg_dep_c", "sg_dep_a", "sg_dep_b"],
                        ["sg_dep_c", "sg_dep_a", "sg_dep_b", "sg_main"]]
    assert "sg_main" in sys.modules and "sg_dep_b" not in sys.modules


def test_nothing_is_scheduled_for_a_module_already_there(monkeypatch):
    turns: list = []
    P.preload_steps("json", turns.append)
    assert turns == []


def test_the_command_line_imports_it_in_a_thread(tmp_path, monkeypatch):
    order = plant(tmp_path, monkeypatch, ["sg_alone"])
    before = set(threading.enumerate())
    P.preload("sg_alone")
    for thread in set(threading.enumerate()) - before:
        thread.join(10)
    assert order == ["sg_alone"]
