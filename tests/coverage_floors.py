"""The coverage floors of `make test`: after `coverage run -m pytest`, combine the data (subprocesses
included), print each package's share of lines run, and fail when one is below its floor.

The Qt-free code — what `[tool.mypy] files` in pyproject.toml checks strictly — must reach the
`qt-free` floor, the rest (the window, app.py, the Qt half of forms) the `qt` floor; both floors are in
`[tool.spyglass.coverage-floors]`. Usage: python tests/coverage_floors.py  (exit 1 below a floor)
"""

from __future__ import annotations

import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import coverage

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "inspector"


def qt_free_paths(config: dict) -> list[Path]:
    return [ROOT / f for f in config["tool"]["mypy"]["files"]]


def is_qt_free(path: Path, qt_free: list[Path]) -> bool:
    return any(path == p or p in path.parents for p in qt_free)


def group_of(path: Path, qt_free: bool) -> str:
    rel = path.relative_to(PKG)
    if len(rel.parts) == 1:  # a module of inspector/ itself
        return "inspector/*.py" + ("" if qt_free else " (Qt)")
    name = f"inspector/{rel.parts[0]}"
    if rel.parts[0] == "forms":
        name += " (pure)" if qt_free else " (Qt)"
    return name


def main() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    floors = config["tool"]["spyglass"]["coverage-floors"]
    qt_free = qt_free_paths(config)
    cov = coverage.Coverage(config_file=str(ROOT / "pyproject.toml"))
    try:
        cov.combine(strict=True)  # the pieces the run left (one per process)
        cov.save()
    except coverage.exceptions.NoDataError:
        pass  # already combined (`coverage combine` ran first): read what is there
    cov.load()
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # group -> [statements, missing]
    kinds: dict[str, str] = {}
    measured = {Path(f).resolve() for f in cov.get_data().measured_files()}
    for path in sorted(PKG.rglob("*.py")):
        free = is_qt_free(path, qt_free)
        group = group_of(path, free)
        kinds[group] = "qt-free" if free else "qt"
        if path.resolve() not in measured:
            statements = len(cov.analysis2(str(path))[1]) if path.stat().st_size else 0
            totals[group][0] += statements
            totals[group][1] += statements
            continue
        _name, statements, _excluded, missing, _text = cov.analysis2(str(path))
        totals[group][0] += len(statements)
        totals[group][1] += len(missing)
    failed = []
    print(f"\n{'package':<30} {'lines':>7} {'missed':>7} {'covered':>8}  floor")
    for group in sorted(totals):
        statements, missing = totals[group]
        share = 100.0 * (statements - missing) / statements if statements else 100.0
        floor = floors[kinds[group]]
        mark = "" if share >= floor else "   BELOW THE FLOOR"
        if mark:
            failed.append(group)
        print(f"{group:<30} {statements:>7} {missing:>7} {share:>7.1f}%  {floor}%{mark}")
    if failed:
        print(f"\ncoverage below the floor in: {', '.join(failed)}", file=sys.stderr)
        return 1
    print("\nevery package is at or above its coverage floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
