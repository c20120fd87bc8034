"""The PyInstaller bundle (packaging/spyglass.spec), built and run the way a user runs it.

Slow (about half a minute to build): `make test` runs it, so a broken bundle fails CI. The bundle's
size is printed. Run alone with `pytest -m slow -s tests/packaging`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
# Qt Core/Gui/Widgets + Python + deps were 201 MB; Qt WebEngine (MCP Apps) adds 268 MB (Chromium's library is
# 195 MB of it): 469 MB. Fail when it balloons.
LEAN_LIMIT_MB = 520

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.fixture(scope="module")
def bundle(tmp_path_factory, request) -> Path:
    if shutil.which("pyinstaller", path=str(Path(sys.executable).parent)) is None:
        pytest.fail("PyInstaller is not installed: `pip install -e '.[package]'` (make test does it)")
    work = tmp_path_factory.mktemp("bundle")
    started = time.monotonic()
    r = subprocess.run([str(Path(sys.executable).parent / "pyinstaller"), "--noconfirm", "--log-level", "WARN",
                        "--distpath", str(work / "dist"), "--workpath", str(work / "build"),
                        str(ROOT / "packaging" / "spyglass.spec")],
                       cwd=ROOT, capture_output=True, text=True, timeout=840, env=untraced())
    took = time.monotonic() - started
    assert r.returncode == 0, r.stderr[-4000:]
    folder = work / "dist" / "spyglass"
    exe = folder / ("spyglass.exe" if os.name == "nt" else "spyglass")
    assert exe.is_file()
    size = _size(folder)
    line = f"bundle: {folder} is {size / 1e6:.0f} MB, built in {took:.0f} s"
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        with capture.global_and_fixture_disabled():  # shown in the CI log even without -s
            print(f"\n{line}")
    else:
        print(line)
    return exe


def untraced() -> dict[str, str]:
    """The environment without the suite's coverage of subprocesses: PyInstaller's analysis (and every helper
    process it starts) is not Spyglass, and tracing it doubled the build's time."""
    return {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}


def env_for(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    for key in ("PYTHONPATH", "PYTHONHOME", "SPYGLASS_LOG", "SPYGLASS_CONFIG_DIR", "VIRTUAL_ENV"):
        env.pop(key, None)
    return env


def test_bundle_cli_lists_the_demo_servers_tools(bundle, tmp_path):
    r = subprocess.run([str(bundle), "--cli", "--method", "tools/list", "--", str(bundle), "--demo-server"],
                       cwd=tmp_path, env=env_for(tmp_path), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    names = [t["name"] for t in json.loads(r.stdout)["tools"]]
    assert "echo" in names and "divide" in names


def test_bundle_window_screenshot_on_the_demo_server(bundle, tmp_path):
    out = tmp_path / "bundle.png"
    r = subprocess.run([str(bundle), "--screenshot", str(out), "--theme", "light"], cwd=tmp_path,
                       env=env_for(tmp_path), capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert "saved" in r.stderr and out.stat().st_size > 20_000
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(out, ARTIFACTS / "bundle-screenshot.png")
    # The traffic store wrote its session (from a thread: a frozen app has no Python to run _sink.py).
    sessions = list((tmp_path / "data" / "spyglass" / "sessions").glob("*.sqlite"))
    assert sessions, "the bundle recorded no traffic session"
    import sqlite3

    with sqlite3.connect(sessions[0]) as db:
        tables = {row[0] for row in db.execute("select name from sqlite_master where type='table'")}
    assert tables, "the session file is empty"


def test_bundle_opens_an_app(bundle, tmp_path):
    """The window of the bundle calls a tool with an MCP App and the app starts (Qt WebEngine is there)."""
    vanilla = ROOT / "tests" / "peers" / "node_modules" / "@modelcontextprotocol" / "server-basic-vanillajs"
    node = shutil.which("node")
    assert node and vanilla.exists(), "node and the npm test servers are needed (make peers)"
    out = tmp_path / "app.png"
    r = subprocess.run([str(bundle), "--screenshot", str(out), "--theme", "light", "--call", "get-time", "--",
                        node, str(vanilla / "dist" / "index.js"), "--stdio"], cwd=tmp_path, env=env_for(tmp_path),
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert "called get-time: ok" in r.stderr, r.stderr
    assert "its app ui://get-time/mcp-app.html: ready" in r.stderr, r.stderr
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(out, ARTIFACTS / "bundle-app.png")


def test_bundle_is_lean(bundle):
    folder = bundle.parent
    names = {p.name for p in folder.rglob("*")}
    for unused in ("libQt6Pdf.so.6", "libQt6Quick3D.so.6", "libQt6WebEngineQuick.so.6", "QtQml.abi3.so",
                   "QtQuick.abi3.so", "QtMultimedia.abi3.so"):
        assert unused not in names, f"{unused} is in the bundle but Spyglass does not use it"
    for needed in ("QtWebEngineProcess", "qtwebengine_resources.pak", "en-US.pak", "QtWebEngineWidgets.abi3.so"):
        assert needed in names, f"{needed} is missing: MCP Apps need it"
    locales = [p for p in folder.rglob("*.pak") if p.parent.name == "qtwebengine_locales"]
    assert [p.name for p in locales] == ["en-US.pak"]  # one locale, not 44 MB of them
    assert not any("pytest" in n or n.startswith("hypothesis") for n in names)
    assert _size(folder) < LEAN_LIMIT_MB * 1e6
