"""app.py: launch forms, --screenshot, the error banner, settings, themes, docks, many qasync loops."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QImage, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QListView
from uikit import ARTIFACTS, ROOT, demo_cmd, find, hostile_cmd, shot, until

from inspector import app as spyglass_app
from inspector import errors as E
from inspector.config import ServerSpec
from inspector.session import Status
from inspector.ui import demo_spec


def isolated_env(tmp_path) -> dict[str, str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"), HOME=str(tmp_path))
    env.pop("SPYGLASS_LOG", None)
    return env


def run_spyglass(tmp_path, *args, timeout=90):
    return subprocess.run([sys.executable, "-m", "inspector", *args], cwd=ROOT, env=isolated_env(tmp_path),
                          capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------------- launch forms
def test_parse_launch_forms(tmp_path):
    a = spyglass_app.parse_args([])
    assert spyglass_app.initial_spec(a) is None  # the demo server
    a = spyglass_app.parse_args(["-e", "A=1", "--cwd", str(tmp_path), "--protocol", "legacy", "--", "srv", "--x"])
    spec = spyglass_app.initial_spec(a)
    assert spec.command == ["srv", "--x"] and spec.env == {"A": "1"} and spec.cwd == str(tmp_path)
    assert a.protocol == "legacy"
    spec = spyglass_app.initial_spec(spyglass_app.parse_args(["http://127.0.0.1:1/mcp"]))
    assert spec.url == "http://127.0.0.1:1/mcp"
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"one": {"command": "x", "args": ["y"]}, "two": {"command": "z"}}}))
    spec = spyglass_app.initial_spec(spyglass_app.parse_args(["--config", str(cfg), "--server", "two"]))
    assert spec.name == "two" and spec.command == ["z"]
    assert spyglass_app.parse_args(["--theme", "dark"]).theme == "dark"
    for bad in (["--protocol", "1999"], ["-e", "novalue"], ["--server", "x"], ["--theme", "pink"],
                ["--config", str(cfg), "--", "cmd"]):
        with pytest.raises(E.UsageError):
            spyglass_app.parse_args(bad)


def test_copy_as_spyglass_command_opens_the_same_server(tmp_path):
    """What *Copy as spyglass command* writes, the window's own command line accepts and reads back."""
    import shlex

    from inspector.config import ServerSpec
    from inspector.exporters import spyglass_command

    servers = [
        ServerSpec(name="events", url="http://127.0.0.1:9/sse", transport="sse",
                   headers={"X-Team": "blue", "Authorization": "Bearer tok"}),
        ServerSpec(name="notes", url="https://notes.example/mcp", headers={"X-Trace": "on"}),
        ServerSpec(name="db", command=["uvx", "db-server", "--path", "a b"], env={"DB_URL": "sqlite:///x"},
                   cwd=str(tmp_path)),
    ]
    for server in servers:
        words = shlex.split(spyglass_command(server, reveal_secrets=True))
        assert words[0] == "spyglass"
        spec = spyglass_app.initial_spec(spyglass_app.parse_args(words[1:]))
        assert (spec.url, spec.command, spec.transport, spec.headers, spec.env, spec.cwd) == \
            (server.url, server.command, server.transport, server.headers, server.env, server.cwd), words
    for bad, says in ((["--header", "no colon", "http://127.0.0.1:1/mcp"], "NAME: VALUE"),
                      (["--transport", "sse", "--", "srv"], "needs a URL"),
                      (["--header", "A: b"], "need a server")):
        with pytest.raises(E.UsageError, match=says):
            spyglass_app.parse_args(bad)


def test_usage_error_exits_1_without_a_window(tmp_path):
    r = run_spyglass(tmp_path, "--protocol", "nope", timeout=30)
    assert r.returncode == 1 and "unknown protocol mode" in r.stderr


def test_screenshot_of_the_default_launch(tmp_path):
    out = ARTIFACTS / "spyglass-default.png"
    ARTIFACTS.mkdir(exist_ok=True)
    r = run_spyglass(tmp_path, "--screenshot", str(out), "--theme", "light")
    assert r.returncode == 0, r.stderr
    img = QImage(str(out))
    assert not img.isNull() and img.width() > 600 and img.height() > 400
    assert not (tmp_path / "config" / "Spyglass").exists() or "servers" not in \
        (tmp_path / "config" / "Spyglass" / "Spyglass.conf").read_text()  # screenshots leave settings alone


def test_screenshot_after_a_failed_start_still_exits_0(tmp_path):
    out = ARTIFACTS / "spyglass-failed-start-dark.png"
    r = run_spyglass(tmp_path, "--screenshot", str(out), "--theme", "dark", "--", *hostile_cmd("die-at-start"))
    assert r.returncode == 0, r.stderr
    assert not QImage(str(out)).isNull()


def test_screenshot_that_cannot_be_saved_exits_non_zero(tmp_path):
    r = run_spyglass(tmp_path, "--screenshot", str(tmp_path / "no" / "such" / "dir" / "x.png"),
                     "--", *hostile_cmd("die-at-start"))
    assert r.returncode != 0 and "screenshot failed" in r.stderr


def test_main_reuses_the_existing_qapplication(qapp, tmp_path, monkeypatch):
    """inspector.__main__.main(argv) in-process: same QApplication, exit code returned."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    QSettings.setPath(QSettings.NativeFormat, QSettings.UserScope, str(tmp_path / "config"))
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / "config"))
    from inspector.__main__ import main

    out = tmp_path / "inproc.png"
    assert main(["--screenshot", str(out), "--", *demo_cmd()]) == 0
    assert QApplication.instance() is qapp and out.exists()


# ---------------------------------------------------------- the PySide6 6.12 regression (pyproject.toml pins <6.12)
def test_fifty_qasync_loops_open_and_close_cleanly():
    code = textwrap.dedent("""
        import asyncio, qasync
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        async def tick():
            await asyncio.sleep(0)
        for _ in range(50):
            loop = qasync.QEventLoop(app)
            asyncio.set_event_loop(loop)
            loop.run_until_complete(tick())
            loop.close()
        asyncio.set_event_loop(None)
        print("ok")
    """)
    r = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.strip() == "ok"


# ---------------------------------------------------------------------- in the window
async def test_excepthook_shows_a_non_blocking_banner(open_window, expect_log):
    expect_log("spyglass.app", "Internal error")
    async with open_window() as window:
        reporter = spyglass_app.ErrorReporter()
        reporter.window = window
        try:
            raise ValueError("synthetic failure")
        except ValueError:
            reporter.excepthook(*sys.exc_info())
        banner = find(window, QLabel, "errorBannerText")
        assert window.banner.isVisible() and "ValueError: synthetic failure" in banner.text()
        assert QApplication.activeModalWidget() is None
        reporter.loop_handler(asyncio.get_running_loop(), {"message": "boom", "exception": RuntimeError("x")})
        assert "(+1 earlier)" in banner.text()
        await shot(window, "banner-light")
        window.banner.dismiss()
        assert not window.banner.isVisible()


async def test_settings_keep_geometry_docks_and_servers_without_secrets(open_window, settings, tmp_path):
    from inspector.catalog import Catalog
    from inspector.keystore import MemorySecrets

    keyring = MemorySecrets()  # the OS keyring, as far as both windows know
    path = tmp_path / "config" / "servers.json"
    async with open_window(catalog=Catalog(path, secrets=keyring).load()) as window:
        window.add_server(ServerSpec(name="svc", command=["x"], env={"MY_TOKEN": "s3cret", "A": "b"}), connect=False)
        window.log_dock.hide()
        window.resize(1000, 700)
        window.save_settings()
    raw = path.read_text()  # servers live in the catalog file, their secrets in the keyring
    assert "s3cret" not in raw and "MY_TOKEN" in raw and settings.value("servers") is None
    async with open_window(catalog=Catalog(path, secrets=keyring).load()) as again:
        assert again.log_dock.isHidden()  # dock layout restored
        restored = again.restore_servers()
        assert [c.name for c in restored] == ["svc"] and restored[0].session.status is Status.IDLE
        assert restored[0].spec.env == {"MY_TOKEN": "s3cret", "A": "b"}


async def test_view_menu_hides_and_restores_docks(open_window):
    async with open_window() as window:
        toggle = window.log_dock.toggleViewAction()
        assert window.log_dock.objectName() == "logDock" and window.traffic_dock.objectName() == "trafficDock"
        toggle.trigger()
        assert window.log_dock.isHidden()
        window.reset_layout()
        assert not window.log_dock.isHidden() and not window.traffic_dock.isHidden()


async def test_traffic_pane_receives_every_frame(open_window):
    from PySide6.QtWidgets import QAbstractItemView

    async with open_window() as window:
        view = window.findChild(QAbstractItemView, "trafficView")
        if view is None:
            pytest.skip("this build has no traffic pane")
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await until(
            lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30, "the demo to connect"
        )
        await until(lambda: view.model().rowCount() >= 3, 5, "frames in trafficView")
        assert window.store is not None and len(window.store) >= view.model().rowCount()
        assert conn.server_id in window.store.servers()


@pytest.mark.parametrize("mode", ["light", "dark", "high-contrast"])
async def test_screenshots_in_both_themes(open_window, mode):
    async with open_window(mode) as window:
        dark = window.palette().color(QPalette.Window).lightness() < 128
        assert dark == (mode != "light")
        if mode == "high-contrast":  # white on black, yellow selection: a theme of the window, not only of present
            assert window.palette().color(QPalette.Window).name() == "#000000"
            assert window.palette().color(QPalette.WindowText).name() == "#ffffff"
            assert window.palette().color(QPalette.Highlight).name() == "#ffff00"
            action = window.findChild(QAction, "actionTheme_high-contrast")
            assert action is not None and action.text() == "High contrast" and action.isChecked() is False
            action.trigger()
            assert action.isChecked() and window.settings.value("theme") == "high-contrast"
        if mode == "dark":
            await shot(window, "empty-dark")
        conn = window.add_server(demo_spec())
        await until(
            lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30, "the demo to connect"
        )
        tool_list = find(window, QListView, "toolList")
        tool_list.setCurrentIndex(tool_list.model().index(0, 0))
        await shot(window, f"demo-connected-{mode}")
        window.tabs.setCurrentIndex(1)
        await shot(window, f"server-info-{mode}")
        window.tabs.setCurrentIndex(0)
        broken = window.add_server(ServerSpec(name="broken server", command=hostile_cmd("die-at-start")))
        await until(lambda: broken.session.status is Status.ERROR, 20, "the error state")
        await shot(window, f"error-{mode}")


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT", "SIGTERM to the process group"])
def test_a_signal_closes_the_window_and_ends_every_server(tmp_path, sig):
    """Also when the whole process group gets it (a logout, `timeout`, a service manager): the session
    writer is in that group, and must leave the ending to the app, losing nothing and saying nothing."""
    import signal
    import time

    def children(pid):
        out = []
        for stat in os.listdir("/proc"):
            if stat.isdigit():
                try:
                    text = open(f"/proc/{stat}/stat").read()
                except OSError:
                    continue
                fields = text.rpartition(")")[2].split()
                if fields[1] == str(pid) and fields[0] != "Z":
                    out.append(int(stat))
        return out

    group = sig.endswith("process group")
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector"],
        cwd=ROOT,
        env=isolated_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=group,
    )
    try:
        deadline = time.monotonic() + 30
        kids = []
        while time.monotonic() < deadline and len(kids) < 1:
            time.sleep(0.2)
            kids = [
                k
                for k in children(proc.pid)
                if "inspector.demo" in open(f"/proc/{k}/cmdline").read().replace("\0", " ")
            ]
        assert kids, "the demo server did not start"
        time.sleep(0.5)
        if group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            proc.send_signal(getattr(signal, sig))
        assert proc.wait(timeout=20) == 0
        err = proc.stderr.read()
        assert "session writer" not in err and "Traceback" not in err, err
        for k in kids:
            with pytest.raises(ProcessLookupError):
                os.kill(k, 0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_a_traffic_store_that_cannot_open_is_said_and_the_window_still_works(open_window, tmp_path, expect_log):
    expect_log("spyglass.ui.traffic", "could not open the traffic store")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    async with open_window(store_path=str(blocker / "traffic.sqlite")) as window:
        note = find(window, QLabel, "trafficUnavailable")
        assert note.text().startswith("Traffic is not recorded: ") and "a-file" in note.text()
        await until(lambda: window.banner.isVisible(), 5, "the banner")
        assert window.banner.label.text().startswith("Traffic is not recorded: ")
        conn = window.add_server(ServerSpec(name="demo", command=demo_cmd()))
        await until(
            lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30, "the demo server"
        )
        assert "echo" in [t["name"] for t in conn.session.tools.items]
