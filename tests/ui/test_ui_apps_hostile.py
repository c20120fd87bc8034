"""MCP Apps that misbehave (tests/hostile/app_server.py), in the real window: every attempt is stopped and
shown, a bad app resource is said in its block while the rest of the result stays readable, and neither a
flood of bridge messages nor a JavaScript loop freezes the window."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from calling import call, connected, result_widgets
from PySide6.QtWidgets import QCheckBox, QLineEdit, QPushButton, QToolButton, QWidget
from support import SLOWDOWN, hostile_apps_cmd
from test_ui_apps import app_shot, block_of, bridge_frames, frame_js, ready_block, top_dialog
from uikit import find, until

from inspector.config import ServerSpec


async def frame_js_host(block, script):
    """Run `script` in the page that holds the app (ours)."""
    fut = asyncio.get_running_loop().create_future()
    block.page.runJavaScript(script, 0, lambda v: fut.done() or fut.set_result(v))
    return await asyncio.wait_for(fut, 10)


async def app_log(block, wanted, timeout=15.0):
    """The app's own account (its <pre id="log">), once it holds `wanted`."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    text = ""
    while loop.time() < end:
        text = await frame_js(block, "document.getElementById('log').textContent") or ""
        if wanted in text:
            return text
        await asyncio.sleep(0.1)
    raise AssertionError(f"the app never logged {wanted!r}: {text!r}")


def refused(block):
    lst = block.sandbox.refused
    return "\n".join(lst.item(i).text() for i in range(lst.count()))


async def hostile(window):
    window.apps.init_timeout = 2.0 * SLOWDOWN
    window.apps.hung_after = 2.0 * SLOWDOWN
    conn = window.add_server(ServerSpec(name="hostile-apps", command=hostile_apps_cmd()))
    await connected(conn)
    return conn


class Stalls:
    """The longest the window's event loop went without turning, while it runs."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            self.worst = max(self.worst, now - last)
            last = now

    def stop(self) -> float:
        self.task.cancel()
        return self.worst


async def test_attempts_to_leave_the_sandbox_are_stopped_and_shown(open_window, expect_log, tmp_path):
    expect_log("spyglass.session", "app ui://hostile/")  # each refusal is also a warning in the server's log
    async with open_window() as window:
        conn = await hostile(window)
        sid = conn.server_id
        # navigating: a pop-up, the window that holds it, its own frame
        rec = await call(window, "navigate")
        block = await ready_block(window, rec)
        await until(lambda: "navigate to http://127.0.0.1:9/away" in refused(block), 15, "the navigation refused")
        said = refused(block)
        assert "open a pop-up window (http://127.0.0.1:9/popup): blocked by its sandbox" in said
        assert "navigate the window that holds it" in said
        assert await frame_js(block, "location.href") == block.page.app_url  # it stayed
        # reaching an undeclared origin: the CSP built from what it declared stops it
        rec = await call(window, "fetch")
        block = await ready_block(window, rec)
        await until(lambda: "reach http://127.0.0.1:9/undeclared: blocked by the Content-Security-Policy"
                    in refused(block), 15, "the fetch refused")
        assert "connect-src http://127.0.0.1:1" in block.sandbox.csp.toPlainText()
        assert "fetch failed" in await app_log(block, "fetch failed")
        # calling another server's tool, or a tool a model alone may call: refused with the reason
        rec = await call(window, "other-tool")
        block = await ready_block(window, rec)
        text = await app_log(block, "app_only:")
        assert "echo: refused" in text and "lists no tool named 'echo'" in text
        assert "model_only: refused" in text and "not visible to apps" in text
        assert "app_only: ok app_only ran" in text
        assert "tools/call model_only refused" in refused(block)
        block.side_button.setChecked(True)
        block.side.setCurrentWidget(block.sandbox)
        await app_shot(window, "apps-hostile-refusals")
        # a download by itself is refused; ui/download-file asks first and saves into the folder chosen
        rec = await call(window, "download")
        block = await ready_block(window, rec)
        dlg = await top_dialog("appDownloadDialog")
        assert "report.txt" in " ".join(w.text() for w in dlg.findChildren(QWidget, "appDownloadFile"))
        dlg.findChild(QPushButton, "appDownloadCancel").click()
        assert "download: refused Download denied by user" in await app_log(block, "download:")
        assert "tried a download (apps save files through ui/download-file, with your consent): " \
               "data:text/plain,by-itself: refused" in refused(block)
        old = block.app
        find(block, QToolButton, "appReload").click()
        await until(lambda: block.app is not old, 15, "the app to reload")
        dlg = await top_dialog("appDownloadDialog")
        dlg.findChild(QLineEdit, "appDownloadFolder").setText(str(tmp_path))
        dlg.findChild(QPushButton, "appDownloadSave").click()
        await until(lambda: (tmp_path / "report.txt").exists(), 10, "the file to be saved")
        assert (tmp_path / "report.txt").read_text() == "the report"
        # permissions: denied unless allowed for the server; allowing one reloads the app
        rec = await call(window, "permissions")
        block = await ready_block(window, rec)
        text = await app_log(block, "geolocation:")
        assert "geolocation: error 1" in text and "clipboard: NotAllowedError" in text  # denied
        assert not await frame_js_host(block, "document.getElementById('app').getAttribute('allow')")
        box = find(block, QCheckBox, "appPermission:geolocation")
        assert not box.isChecked() and find(block, QCheckBox, "appPermission:clipboard-write")
        assert window.apps.granted(sid, ("geolocation",)) == ()
        old = block.app
        box.setChecked(True)  # allowed for this server: the app reloads with it in its frame's `allow`
        assert window.apps.granted(sid, ("geolocation", "camera")) == ("geolocation",)
        await until(lambda: block.app is not old and block.app is not None and block.app.bridge.ready, 30,
                    "the app to reload")
        assert await frame_js_host(block, "document.getElementById('app').getAttribute('allow')") == "geolocation"
        initialize = bridge_frames(window, sid, direction="to-view", method="ui/initialize")[-1]
        sandbox = json.loads(window.traffic.store.raw(initialize))["result"]["hostCapabilities"]["sandbox"]
        assert sandbox == {"permissions": {"geolocation": {}}}


async def test_a_bad_app_resource_is_said_and_the_result_stays_readable(open_window, expect_log):
    expect_log("spyglass.session", "app ui://hostile/")
    async with open_window() as window:
        await hostile(window)
        for tool, words in (("missing", "The app resource could not be read: resources/read ui://hostile/missing.html "
                                        "was refused: -32002 Resource not found"),
                            ("not-html", "Not an MCP App: the resource is text/plain, not HTML"),
                            ("no-profile", "Not an MCP App: the resource is text/html, HTML without the mcp-app "
                                           "profile"),
                            ("too-big", "The app is too big"),
                            ("silent", "The app is not working: The app never started its bridge: no ui/initialize")):
            rec = await call(window, tool)
            block = await until(lambda: block_of(window, rec), 10, "the block")
            await until(lambda: words in block.problem_text, 20 * SLOWDOWN,
                        f"{tool}: {words!r} (got {block.problem_text!r})")
            [text] = result_widgets(window, "text")
            assert f"{tool} ran" in text.findChild(QWidget, "textView").toPlainText() \
                if text.findChild(QWidget, "textView") is not None else True
            if tool == "no-profile":
                await app_shot(window, "apps-bad-resource")


async def test_a_flood_and_a_loop_do_not_freeze_the_window(open_window, expect_log):
    expect_log("spyglass.session", "app ui://hostile/")
    async with open_window() as window:
        conn = await hostile(window)
        sid = conn.server_id
        rec = await call(window, "flood")
        block = await ready_block(window, rec)
        stalls = Stalls()
        text = await app_log(block, "message accepted", timeout=30)
        worst = stalls.stop()
        sent, took = (int(x) for x in text.split("flooded ")[1].split(" ms")[0].split(" in "))
        handled = len(bridge_frames(window, sid, direction="from-view", method="notifications/message"))
        assert sent == 20_000 and took < 2000 and handled < sent / 10, (sent, took, handled)
        assert "dropped" in refused(block)
        assert worst < 1.0 * SLOWDOWN, f"the window stalled {worst:.2f} s during the flood"
        # a loop: said to be not responding; Stop ends its renderer; the window kept turning
        rec = await call(window, "loop")
        block = await ready_block(window, rec)
        stalls = Stalls()
        await until(lambda: "not responding" in block.problem_text, 30 * SLOWDOWN, "the loop to be noticed")
        assert stalls.stop() < 1.0 * SLOWDOWN, "the window stalled while the app looped"
        pid = block.page.renderProcessPid()
        stop = find(block, QToolButton, "appStop")
        assert stop.isVisible()
        await app_shot(window, "apps-not-responding")
        stalls = Stalls()
        stop.click()
        await until(lambda: not Path(f"/proc/{pid}").exists(), 15, "the looping renderer to end")
        assert stalls.stop() < 1.0 * SLOWDOWN, "the window stalled while the app was stopped"
        assert "The app was stopped" in block.problem_text



class Listeners:
    """A STUN/TURN listener on loopback, UDP and TCP (sockets of the test's own): what reached each."""

    def __init__(self) -> None:
        self.udp: list[bytes] = []
        self.tcp: list[bytes] = []

    async def __aenter__(self) -> Listeners:
        loop = asyncio.get_running_loop()
        got = self.udp

        class Datagrams(asyncio.DatagramProtocol):
            def datagram_received(self, data, addr):
                got.append(data)

        self.transport, _ = await loop.create_datagram_endpoint(Datagrams, local_addr=("127.0.0.1", 0))

        async def accepted(reader, writer):
            self.tcp.append(await reader.read(4096) or b"(connected)")
            writer.close()

        self.server = await asyncio.start_server(accepted, "127.0.0.1", 0)
        self.ports = (self.transport.get_extra_info("sockname")[1], self.server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc) -> None:
        self.transport.close()
        self.server.close()
        await self.server.wait_closed()


async def test_an_app_cannot_reach_out_over_webrtc(open_window, expect_log):
    expect_log("spyglass.session", "app ui://hostile/")
    async with Listeners() as ears, open_window() as window:
        window.apps.init_timeout = 2.0 * SLOWDOWN
        conn = window.add_server(ServerSpec(name="hostile-apps", command=hostile_apps_cmd(),
                                            env={"HOSTILE_WEBRTC": f"{ears.ports[0]},{ears.ports[1]}"}))
        await connected(conn)
        rec = await call(window, "webrtc")
        block = await ready_block(window, rec)
        text = await app_log(block, "webrtc: done", timeout=60 * SLOWDOWN)
        await asyncio.sleep(0.5)  # what a gathering already begun would still send
        assert ears.udp == [] and ears.tcp == [], (ears.udp[:3], ears.tcp[:3], text)
        for how in ("window", "webkit", "contentWindow", "frames", "nested", "own script"):
            line = next((x for x in text.splitlines() if x.startswith(how + ":")), "")
            assert line and "gathered" not in line, text
        await until(lambda: "tried to use WebRTC (RTCPeerConnection): blocked" in refused(block), 10,
                    "the attempt in the Sandbox tab")
        assert "WebRTC is not available to apps" in block.sandbox.summary.text()
