"""Tapped conversations in the window: a tap reaching the window's socket becomes a read-only server in the
sidebar with the host's name, its tools, its traffic, the host's calls with their results and its log; a
tap that began before the window is caught up from its session file; a second window finds the socket
taken; a tap that goes away ends its conversation."""

from __future__ import annotations

import asyncio
import json
import subprocess

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListView, QPushButton
from uikit import demo_cmd, find, shot, until

from inspector.session import Status
from inspector.tap.record import SOCKET_ENV, TapRecorder
from inspector.tap.session import TappedSession
from inspector.ui.window.tap_link import TapLink, read_frames

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "claude-ai", "title": "Claude Desktop", "version": "1.0"}}}


def line(obj) -> bytes:
    return json.dumps(obj).encode() + b"\n"


class DemoConversation:
    """A host's conversation with the real demo server, the bytes of each side handed to a recorder."""

    def __init__(self, recorder: TapRecorder) -> None:
        self.recorder = recorder
        self.proc = subprocess.Popen(demo_cmd(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)

    def ask(self, message: dict) -> dict:
        data = line(message)
        self.recorder.chunk("out", data)
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        if "id" not in message:
            return {}
        while True:
            answer = self.proc.stdout.readline()
            self.recorder.chunk("in", answer)
            parsed = json.loads(answer)
            if parsed.get("id") == message["id"] and "method" not in parsed:
                return parsed

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(10)


def talk(recorder: TapRecorder) -> None:
    demo = DemoConversation(recorder)
    try:
        demo.ask(INIT)
        demo.ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        demo.ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        demo.ask({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                  "params": {"name": "divide", "arguments": {"a": 10, "b": 4}}})
        demo.ask({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "no_such_tool"}})
        recorder.chunk("err", b"server says hello on stderr\n")
    finally:
        demo.close()


async def test_a_tap_becomes_a_read_only_server_with_the_host_s_calls(open_window, tmp_path, monkeypatch):
    sock = tmp_path / "rt" / "tap.sock"
    monkeypatch.setenv(SOCKET_ENV, str(sock))
    async with open_window() as window:
        link = TapLink(window, sock)
        assert await link.listen()
        assert sock.exists() and (sock.stat().st_mode & 0o777) == 0o600
        assert (sock.parent.stat().st_mode & 0o777) == 0o700
        recorder = TapRecorder(tmp_path / "s.mcpsession", "demo", {"name": "demo", "command": demo_cmd()})
        await asyncio.to_thread(talk, recorder)
        await until(lambda: link.sessions and link.sessions[0].calls.history
                    and not link.sessions[0].calls.history[-1].running, 10, "the host's calls to arrive")
        session = link.sessions[0]
        assert isinstance(session, TappedSession) and session.status is Status.CONNECTED
        conn = next(c for c in window.servers.connections if c.session is session)
        assert conn.name == "Claude Desktop → demo (tapped)"
        assert session.status_text() == "tapped by Claude Desktop · 2025-11-25 (legacy)"
        assert {t["name"] for t in session.tools.items} >= {"echo", "divide"}
        outcomes = [(r.tool, r.outcome) for r in session.calls.history]
        assert outcomes == [("divide", "ok"), ("no_such_tool", "rejected")]
        assert session.calls.history[0].result["content"][0]["text"] == "10 / 4 = 2.5"
        window.select_connection(conn)
        await until(lambda: window.tool_panel.view.model().rowCount() > 3, 5, "the host's tools listed")
        assert not window.act_connect.isEnabled() and not window.act_restart.isEnabled()
        view = find(window, QListView, "toolList")
        view.setCurrentIndex(next(view.model().index(r, 0) for r in range(view.model().rowCount())
                                  if view.model().index(r, 0).data(Qt.UserRole) == "divide"))
        call_button = find(window, QPushButton, "callButton")
        assert not call_button.isEnabled() and "tapped" in call_button.toolTip()
        assert window.tool_detail.shown_record is session.calls.history[0]  # the host's last call of it
        await until(lambda: any(e.text == "server says hello on stderr" for e in session.log), 5, "stderr")
        store = window.store
        await until(lambda: sum(1 for n in range(len(store)) if store.server_id(n) == session.server_id) >= 9, 5,
                    "the frames in the traffic store")
        await shot(window, "tap-window-tapped-server")
        recorder.close()
        await until(lambda: session.status is Status.EXITED, 5, "the end of the conversation")
        assert session.status_text() == "tapped by Claude Desktop · ended"
        await link.close()
        assert not sock.exists()


async def test_a_tap_begun_before_the_window_is_caught_up_from_its_file(open_window, tmp_path, monkeypatch):
    sock = tmp_path / "tap.sock"
    monkeypatch.setenv(SOCKET_ENV, str(sock))
    recorder = TapRecorder(tmp_path / "early.mcpsession", "demo", {"name": "demo", "command": demo_cmd()})
    try:
        await asyncio.to_thread(talk, recorder)  # nobody listens yet: recorded only
        await asyncio.sleep(0.3)
        frames, problem = read_frames(tmp_path / "early.mcpsession", 3)
        assert problem is None and [f.direction for f in frames] == ["out", "in", "out"]
        async with open_window() as window:
            link = TapLink(window, sock)
            assert await link.listen()
            # the tap tries the socket again within a second and says how many frames its file has
            await until(lambda: link.sessions and len(link.sessions[0].calls.history) == 2, 10,
                        "the conversation so far, read from the session file")
            session = link.sessions[0]
            assert session.host == "Claude Desktop" and session.session_file == str(tmp_path / "early.mcpsession")
            # a second window finds the socket taken
            other = TapLink(window, sock)
            assert not await other.listen() and other.problem == "another Spyglass window receives the taps"
            await link.close()
    finally:
        recorder.close()


async def test_a_socket_left_by_a_crashed_window_is_taken_over(open_window, tmp_path):
    import socket

    sock = tmp_path / "left.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(sock))
    s.close()  # the file stays, nobody listens
    async with open_window() as window:
        link = TapLink(window, sock)
        assert await link.listen()
        await link.close()


def test_read_frames_stops_at_a_cut(tmp_path):
    path = tmp_path / "cut.mcpsession"
    import gzip

    with gzip.open(path, "wt") as fh:
        fh.write(json.dumps({"format": "mcpsession", "version": 1}) + "\n")
        fh.write(json.dumps({"server": "s", "dir": "out", "wall": 1.0, "mono": 1.0, "data": "{}"}) + "\n")
    data = path.read_bytes()
    path.write_bytes(data[:-6])  # the gzip trailer cut: as while a tap writes
    frames, problem = read_frames(path, 2)
    assert len(frames) == 1 and problem is not None and "1 of the 2 frames" in problem


CLAUDE = """{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada"]
    },
    "remote": {"url": "https://mcp.example.com/mcp"}
  }
}
"""


async def test_tap_a_host_s_server_from_the_window_and_untap_it(open_window, tmp_path):
    from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTreeWidget

    from inspector.cli.tap import tap_command
    from inspector.tap.install import HostConfig
    from inspector.ui.window.tap_dialog import TapHostDialog

    config = tmp_path / "claude_desktop_config.json"
    config.write_text(CLAUDE)
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {"a": {"command": "x",}}')
    async with open_window() as window:
        assert window.findChild(type(window.taps.act_tap), "actionTapHost") is window.taps.act_tap
        dialog = TapHostDialog(window, hosts=[HostConfig("claude-desktop", "Claude Desktop", config, True)])
        dialog.show()
        servers = find(dialog, QTreeWidget, "tapServers")
        assert [servers.topLevelItem(i).text(0) for i in range(servers.topLevelItemCount())] == ["filesystem",
                                                                                                 "remote"]
        assert dialog.select("filesystem")
        preview = find(dialog, QPlainTextEdit, "tapPreview").toPlainText()
        assert '"command": "npx"' in preview and "tap" in preview and preview.startswith("---"), preview
        apply = find(dialog, QPushButton, "tapApply")
        assert apply.text() == "Tap"
        await shot(dialog, "tap-host-dialog")
        assert dialog.apply()
        tapped = json.loads(config.read_text())["mcpServers"]["filesystem"]
        assert [tapped["command"], *tapped["args"]] == [*tap_command(), "tap", "--name", "filesystem", "--", "npx",
                                                       "-y", "@modelcontextprotocol/server-filesystem", "/home/ada"]
        assert "Restart the host" in find(dialog, QLabel, "tapNotes").text()
        assert servers.currentItem().text(3) == "tapped" and apply.text() == "Untap"
        assert dialog.apply()
        assert config.read_text() == CLAUDE  # byte for byte
        # a URL server goes through a local proxy: the command to run is said
        assert dialog.select("remote")
        assert "--listen" in find(dialog, QLabel, "tapNotes").text()
        # a config that cannot be read is left untouched, with where
        assert not dialog.load(broken)
        error = find(dialog, QLabel, "tapError").text()
        assert "broken.json" in error and "untouched" in error, error
        assert broken.read_text() == '{"mcpServers": {"a": {"command": "x",}}'
        dialog.reject()


async def test_a_real_spyglass_tap_process_shows_in_the_window(open_window, tmp_path, monkeypatch):
    import sys

    sock = tmp_path / "tap.sock"
    monkeypatch.setenv(SOCKET_ENV, str(sock))
    async with open_window() as window:
        link = TapLink(window, sock)
        assert await link.listen()
        tap = subprocess.Popen([sys.executable, "-m", "inspector", "tap", "--session", str(tmp_path / "t.mcpsession"),
                                "--name", "demo", "--", *demo_cmd()],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

        def host() -> list[bytes]:
            answers = []
            for message in (INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                            {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                             "params": {"name": "echo", "arguments": {"message": "through the tap"}}}):
                tap.stdin.write(line(message))
                tap.stdin.flush()
                if "id" in message:
                    answers.append(tap.stdout.readline())
            return answers

        try:
            answers = await asyncio.to_thread(host)
            assert b"through the tap" in answers[-1]
            await until(lambda: link.sessions and link.sessions[0].calls.history
                        and not link.sessions[0].calls.history[0].running, 15, "the host's call in the window")
            session = link.sessions[0]
            assert session.title == "Claude Desktop → demo (tapped)"
            assert session.calls.history[0].result["content"][0]["text"] == "through the tap"
        finally:
            tap.stdin.close()
            assert await asyncio.to_thread(tap.wait, 15) == 0
            tap.stdout.close()
        await until(lambda: session.status is Status.EXITED, 10, "the tap's goodbye")
        await link.close()


async def test_intercept_a_tapped_servers_call_edit_it_forward_it_and_drop_another(open_window, tmp_path, monkeypatch):
    """The Intercept tab driven by object name against a real `spyglass tap` of the demo server: a filter of
    the traffic pane's language held the host's call; the edit in the window is what the server answered;
    a second call dropped is never answered; intercept off lets the rest through."""
    import sys

    from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPlainTextEdit, QTreeWidget

    from inspector.ui.window.intercept_pane import InterceptPane

    sock = tmp_path / "tap.sock"
    monkeypatch.setenv(SOCKET_ENV, str(sock))
    async with open_window() as window:
        link = window.taps
        link.path = sock
        assert await link.listen()
        tap = subprocess.Popen([sys.executable, "-m", "inspector", "tap", "--session", str(tmp_path / "i.mcpsession"),
                                "--name", "demo", "--", *demo_cmd()],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

        def send(message: dict) -> None:
            tap.stdin.write(line(message))
            tap.stdin.flush()

        def call(rid: int, text: str) -> dict:
            return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": text}}}

        try:
            send(INIT)
            assert json.loads(await asyncio.to_thread(tap.stdout.readline))["id"] == 1
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await until(lambda: link.sessions and link.sessions[0].status is Status.CONNECTED, 15, "the handshake")
            session = link.sessions[0]
            conn = next(c for c in window.servers.connections if c.session is session)
            window.select_connection(conn)
            pane = find(window, InterceptPane, "interceptPane")
            tabs = window.tabs
            assert tabs.isTabVisible(tabs.indexOf(pane.page))
            link.show_intercept()
            state = find(pane, QLabel, "interceptState")
            assert state.text().startswith("Intercept is off")
            toggle = find(pane, QPushButton, "interceptToggle")
            assert not toggle.isChecked() and toggle.isEnabled()
            # a filter that does not parse is underlined and nothing is asked
            flt = find(pane, QLineEdit, "interceptFilter")
            flt.setText("tool == ")
            toggle.click()
            assert not toggle.isChecked() and flt.error is not None
            assert find(pane, QLabel, "interceptError").isVisibleTo(pane)
            flt.setText("tool == echo")
            assert find(pane, QComboBox, "interceptDirection").currentText() == "host → server"
            toggle.click()
            await until(lambda: session.intercept.on, 10, "the tap to say intercept is on")
            assert toggle.isChecked() and state.text().startswith("Intercepting host → server messages matching "
                                                                  "tool == echo")
            send(call(3, "as the host wrote it"))
            held = find(pane, QTreeWidget, "interceptHeld")
            await until(lambda: held.topLevelItemCount() == 1, 10, "the held call in the list")
            item = held.topLevelItem(0)
            assert [item.text(i) for i in (0, 1, 2, 4)] == ["1", "host → server", "tools/call, id 3", "waiting"]
            editor = find(pane, QPlainTextEdit, "interceptEditor")
            assert '"message": "as the host wrote it"' in editor.toPlainText()
            send({"jsonrpc": "2.0", "id": 4, "method": "ping"})  # waits behind the held call
            queue = find(pane, QLabel, "interceptQueue")
            await until(lambda: "1 message queued behind" in queue.text(), 10, "the ping counted behind it")
            assert queue.text().startswith("host → server: 1 held for ")
            editor.setPlainText(editor.toPlainText().replace("as the host wrote it", "edited in the window"))
            note = find(pane, QLabel, "interceptEditNote")
            assert note.text().startswith("Edited: sent as compact JSON")
            await shot(window, "tap-intercept-light")
            window.set_theme("dark")
            pane._refresh_state()
            await shot(window, "tap-intercept-dark")
            window.set_theme("light")
            find(pane, QPushButton, "interceptForward").click()
            answers = [json.loads(await asyncio.to_thread(tap.stdout.readline)) for _ in range(2)]
            by_id = {a["id"]: a for a in answers}
            assert by_id[3]["result"]["content"][0]["text"] == "edited in the window" and "result" in by_id[4]
            await until(lambda: held.topLevelItemCount() == 0, 10, "the list emptied")
            # a second call dropped: never answered
            send(call(5, "to be dropped"))
            await until(lambda: held.topLevelItemCount() == 1, 10, "the second call held")
            find(pane, QPushButton, "interceptDrop").click()
            await until(lambda: held.topLevelItemCount() == 0, 10, "the dropped call gone")
            find(pane, QComboBox, "interceptDirection").setCurrentIndex(2)  # while on: applies at once
            await until(lambda: session.intercept.directions == ("out", "in"), 10, "both ways")
            assert "host → server and server → host messages" in state.text()
            toggle.click()
            await until(lambda: not session.intercept.on, 10, "intercept off")
            assert state.text().startswith("Intercept is off")
            send({"jsonrpc": "2.0", "id": 6, "method": "ping"})
            assert json.loads(await asyncio.to_thread(tap.stdout.readline))["id"] == 6  # not 5: it was dropped
            # the window's own view of the calls says what happened to each
            await until(lambda: len(session.calls.history) == 3, 10, "the calls")
            history = [(r.outcome, r.error_text or (r.result or {}).get("content", [{}])[0].get("text"))
                       for r in session.calls.history]
            assert history[0][0] == "failed" and "edited in the window" in history[0][1]
            assert history[1] == ("ok", "edited in the window")
            assert history[2][0] == "failed" and "dropped" in history[2][1]
        finally:
            tap.stdin.close()
            assert await asyncio.to_thread(tap.wait, 15) == 0
            tap.stdout.close()
        await until(lambda: session.status is Status.EXITED, 10, "the tap's goodbye")
        assert not toggle.isEnabled() and "the tap ended" in state.text()
        from inspector.recording.files import open_session

        kept = open_session(tmp_path / "i.mcpsession")  # the edited call only: the dropped one never reached it
        assert [c.params["arguments"]["message"] for c in kept.surface().calls()] == ["edited in the window"]
        await link.close()


async def test_intercept_is_unavailable_with_a_tap_that_cannot(open_window, tmp_path, monkeypatch):
    """An older tap (its hello says nothing of intercept) and an HTTP tap (it says it cannot): the tab says
    why, and its controls are off."""
    from PySide6.QtWidgets import QLabel

    from inspector.ui.window.intercept_pane import InterceptPane

    sock = tmp_path / "tap.sock"
    monkeypatch.setenv(SOCKET_ENV, str(sock))
    async with open_window() as window:
        link = window.taps
        link.path = sock
        assert await link.listen()
        old = TapRecorder(tmp_path / "old.mcpsession", "old", {"name": "old", "command": demo_cmd()})
        http = TapRecorder(None, "remote", {"name": "remote", "url": "http://127.0.0.1:9/mcp"},
                           hello={"intercept": 0, "intercept_unavailable": "intercept works with stdio taps only"})
        try:
            await until(lambda: len(link.sessions) == 2, 10, "both taps")
            pane = find(window, InterceptPane, "interceptPane")
            named = {s.server_name: s for s in link.sessions}
            for name, says in (("old", "older Spyglass"), ("remote", "stdio taps only")):
                conn = next(c for c in window.servers.connections if c.session is named[name])
                window.select_connection(conn)
                text = find(pane, QLabel, "interceptState").text()
                assert text.startswith("Intercept is unavailable") and says in text, text
                assert not find(pane, QPushButton, "interceptToggle").isEnabled()
            window.select_connection(None)
            assert not window.tabs.isTabVisible(window.tabs.indexOf(pane.page))
        finally:
            old.close()
            http.close()
        await link.close()
