"""*Serve as mock…* from an opened session: over stdio the command line a host launches (copied, and added
to the main window as a server that connects and answers as recorded); over HTTP a mock served from the
window's loop on loopback (its URL copied, added as a server, what it could not answer listed), stopped
with its session window."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from test_ui_sessions import grab, record_session
from uikit import until

from inspector import errors as E
from inspector.session import Status


async def connected(conn, what: str) -> None:
    await until(lambda: conn.session.status is Status.CONNECTED and conn.session.tools.loaded, 30, what)


async def test_serve_a_recorded_server_as_a_mock_over_stdio_and_http(open_window, tmp_path):
    path = await record_session(tmp_path / "sdk.sqlite", demo=False)
    async with open_window() as window:
        win = window.sessions.open_path(path)
        assert win.act_mock.isEnabled() and win.act_mock.objectName() == "actionServeMock"
        dialog = win.mock_dialog()
        assert dialog.objectName() == "mockDialog" and dialog.stdio.isChecked()
        command = dialog.address.text()
        assert " -m inspector mock " in command and command.endswith("sdk.sqlite")
        assert QGuiApplication.clipboard().text() == command  # copied as the dialog opens
        assert dialog.status.text() == "The command line is copied."
        # over stdio the mock runs in the host's process: no list of what it could not answer, not an empty box
        assert not dialog.log.isVisible() and not dialog.log_caption.isVisible()
        QGuiApplication.clipboard().setText("")
        dialog.copy.click()
        assert QGuiApplication.clipboard().text() == command
        stdio = dialog.add_as_server()
        assert stdio.spec.name == "sdk (mock)" and stdio.spec.command[-2:] == ["mock", str(path.resolve())]
        await connected(stdio, "the stdio mock to connect")
        tools = [t["name"] for t in stdio.session.tools.items]
        assert "echo" in tools and "add" in tools
        echoed = await stdio.session.need_client().call_tool("echo", {"message": "hello"})
        assert echoed["content"][0]["text"] == "hello"
        # over HTTP: started on the window's loop, the URL copied
        dialog.http.setChecked(True)
        assert dialog.start.isVisible() and not dialog.add.isEnabled()
        assert dialog.log.isVisible() and dialog.log_caption.isVisible()
        assert dialog.log_caption.objectName() == "mockLogCaption"
        assert dialog.log_caption.text().startswith("Requests the mock could not answer exactly")
        await dialog.toggle()
        url = dialog.address.text()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        assert QGuiApplication.clipboard().text() == url and dialog.start.text() == "Stop"
        http = dialog.add_as_server()
        assert http.spec.url == url
        await connected(http, "the HTTP mock to connect")
        added = await http.session.need_client().call_tool("add", {"a": 2, "b": 3})
        assert added["content"][0]["text"] == "5"
        try:
            await http.session.need_client().call_tool("nope", {})
        except E.RemoteError as exc:
            assert "closest recorded request" in exc.rpc_message
        else:
            raise AssertionError("an unrecorded tool was answered")
        await until(lambda: dialog.log.count() >= 1, 10, "the mock to say what it could not answer")
        assert "no recorded answer for tools/call nope" in dialog.log.item(0).text()
        await grab(dialog, "mock-dialog-http")
        dialog.close()
        again = win.mock_dialog()  # still serving: shown as such, its log kept
        assert again.http.isChecked() and again.address.text() == url and again.log.count() >= 1
        again.close()
        win.close()
        await until(lambda: not win.mocks.fronts and not win.mocks.tasks, 10, "the mock to stop with its window")
