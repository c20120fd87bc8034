"""The development loop without Qt: a real SDK server whose source the test rewrites, watched by
`DevLoop` — one restart per burst, the listings' changes marked, the last call re-run and compared, a
server that breaks shows its stderr and the next change brings it back, a loop backs off, a vanished
folder is said and watched again when it is back."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest
import watched_server as watched

from inspector.config import ServerSpec
from inspector.devloop import Burst, DevLoop, Plan, Watcher, WatchSettings, default_patterns, language, plan
from inspector.devloop import loop as loop_module
from inspector.session import ServerSession, SessionOptions, Status


async def until(predicate, timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def session_for(folder: Path, **options) -> ServerSession:
    spec = ServerSpec(name="watched", command=watched.command(folder), cwd=str(folder))
    return ServerSession(spec, options=SessionOptions(mode="legacy", heartbeat_s=None, **options))


@pytest.fixture
def source(tmp_path):
    folder = tmp_path / "srv"
    folder.mkdir()
    watched.write(folder, "v1")
    return folder


async def test_a_save_restarts_once_marks_what_changed_and_reruns_the_last_call(source):
    session = session_for(source)
    frames = []
    session.traffic = frames.append
    loop = DevLoop(session, WatchSettings(rerun="last"))
    try:
        await session.open()
        first = session.calls.call("greet", {"name": "Ada"})
        await first.job
        assert first.result["content"][0]["text"] == "Hello, Ada!"
        loop.start()
        await asyncio.sleep(0.3)  # the watch is set up
        watched.write(source, "v2")
        (source / "notes.txt").write_text("not source: ignored")
        await until(lambda: loop.rerun_at is not None, 30, "the re-run")
        assert loop.restarts == 1
        tools = session.tools
        assert tools.appeared == {"wave"}
        assert [t["name"] for t in tools.vanished] == ["farewell"]
        assert tools.changed == {"greet": "schema and description"}
        [rerun] = loop.reruns
        assert rerun.before is first and rerun.after.again_of == first.id
        assert rerun.after.result["content"][0]["text"] == "Hi, Ada!"
        assert "/content/0/text" in [c.path for c in rerun.changes]
        assert all(c.kind == "changed" for c in rerun.changes)
        assert rerun.describe().startswith("greet: ") and "difference" in rerun.describe()
        markers = [f for f in frames if f.meta and f.meta.get("marker") == "restart"]
        assert len(markers) == 1 and markers[0].meta["files"] == [str(source / "server.py")]
        assert b"server.py changed" in markers[0].data
        assert session.activity is None and loop.state == "watching"
    finally:
        await loop.stop()
        await session.disconnect()


async def test_a_burst_of_many_files_is_one_restart(source):
    session = session_for(source)
    loop = DevLoop(session, WatchSettings(rerun="off"))
    try:
        pkg = source / "pkg"
        pkg.mkdir()  # before the watch: files in a folder made during a burst may come before its watch
        await session.open()
        loop.start()
        await asyncio.sleep(0.3)
        for i in range(10_000):  # a branch switch
            (pkg / f"m{i}.py").write_text(f"X = {i}\n")
        await until(lambda: loop.restarts >= 1 and loop.state == "watching" and session.status is Status.CONNECTED,
                    60, "a restart")
        await asyncio.sleep(1.0)  # nothing more comes
        assert loop.restarts == 1, loop.restarts
        # inotify's queue (16,384 events by default) may overflow on the way: some files go unnamed, the
        # restart does not
        assert 1000 <= len(loop.last_files) <= 10_000, len(loop.last_files)
        assert session.status_text().startswith("connected"), session.status_text()
    finally:
        await loop.stop()
        await session.disconnect()


async def test_a_server_that_breaks_shows_its_stderr_and_the_next_change_brings_it_back(source):
    session = session_for(source)
    loop = DevLoop(session, WatchSettings(rerun="last"))
    try:
        await session.open()
        loop.start()
        await asyncio.sleep(0.3)
        watched.write(source, "broken")
        await until(lambda: loop.state == "failed", 30, "the failed start")
        assert session.status is Status.ERROR
        assert any("config is broken" in line for line in session.stderr_tail)
        assert session.exit_code == 3
        assert session.status_text() == "failed after 1 file changed (exit code 3); the next save tries again"
        watched.write(source, "v1")
        await until(lambda: loop.state == "watching" and session.status is Status.CONNECTED, 30, "the comeback")
        assert "greet" in session.tools.names("name")
    finally:
        await loop.stop()
        await session.disconnect()


class FakeWatcher(Watcher):
    """Bursts handed in by the test (for timing rules: what the loop does with them)."""

    def __init__(self, p: Plan) -> None:
        super().__init__(p)
        self.queue: asyncio.Queue[Burst] = asyncio.Queue()

    async def bursts(self):
        while True:
            yield await self.queue.get()


async def test_restarts_in_a_loop_back_off_and_stop_ends_them(source, monkeypatch):
    monkeypatch.setattr(loop_module, "LOOP_AFTER", 2)
    made: list[FakeWatcher] = []
    session = session_for(source)
    loop = DevLoop(session, WatchSettings(rerun="off"), watcher=lambda p: made.append(FakeWatcher(p)) or made[-1])
    try:
        await session.open()
        loop.start()
        for i in range(4):
            made[0].queue.put_nowait(Burst(files=(str(source / "server.py"),)))
            await until(lambda n=i: loop.restarts > n or loop.state == "backing off", 30, "a restart")
            if loop.state == "backing off":
                break
            await until(lambda: session.status is Status.CONNECTED, 30, "connected")
        assert loop.state == "backing off"
        assert session.activity.startswith("restarting in a loop: next restart in ")
        await loop.stop()
        assert loop.state == "off" and session.activity is None
    finally:
        await loop.stop()
        await session.disconnect()


async def test_a_vanished_folder_is_said_and_watched_again_when_it_is_back(tmp_path):
    folder = tmp_path / "gone"
    folder.mkdir()
    p = Plan((str(folder),), ("*.py",))
    watcher = Watcher(p, poll_s=0.1, settle_s=0.1)
    seen: list[Burst] = []

    async def collect():
        async for burst in watcher.bursts():
            seen.append(burst)

    task = asyncio.ensure_future(collect())
    try:
        await asyncio.sleep(0.3)
        shutil.rmtree(folder)
        await until(lambda: any(b.missing for b in seen), 10, "the folder said gone")
        folder.mkdir()
        await until(lambda: any(b.back for b in seen), 10, "the folder said back")
        await asyncio.sleep(0.3)
        (folder / "a.py").write_text("1")
        await until(lambda: any(b.files for b in seen), 10, "a change after it came back")
        assert [b.files for b in seen if b.files] == [(str(folder / "a.py"),)]
    finally:
        watcher.stop()
        await asyncio.wait_for(task, 5)


def test_the_defaults_follow_the_command():
    assert language(["python3.11", "server.py"]) == "python"
    assert language(["node", "dist/index.js"]) == "node"
    assert language(["uv", "run", "mcp-server"]) == "python"
    assert language(["npx", "-y", "@modelcontextprotocol/server-everything"]) == "node"
    assert language(["./target/debug/srv"]) is None
    assert default_patterns(["./srv"]) == ["*"]
    assert "*.go" in default_patterns(["go", "run", "."])
    spec = ServerSpec(name="x", command=["python", __file__])
    assert plan(spec, WatchSettings()).folders == (str(Path(__file__).resolve().parent),)
    p = plan(ServerSpec(name="x", command=["python", "s.py"], cwd="/srv/app"), WatchSettings(patterns=["*.py"]))
    assert p.folders == ("/srv/app",)
    assert p.wanted("/srv/app/tools/a.py")
    assert not p.wanted("/srv/app/.venv/lib/x.py") and not p.wanted("/srv/app/node_modules/a.py")
    assert not p.wanted("/srv/app/build/a.py") and not p.wanted("/srv/app/a.txt")
    assert WatchSettings.from_json({"paths": ["a", 3], "rerun": "bogus"}) == WatchSettings(paths=["a"])
    assert WatchSettings.from_json("x") is None
    assert WatchSettings.from_json(WatchSettings(["a"], ["*.py"], "pinned").to_json()) == \
        WatchSettings(["a"], ["*.py"], "pinned")


async def test_a_url_server_that_goes_away_is_reached_again_when_it_comes_back():
    import http_peers

    port = http_peers.free_port()
    url = f"http://127.0.0.1:{port}/mcp"

    def serve():
        cm = http_peers._running(["node", str(http_peers.EVERYTHING), "streamableHttp"], {"PORT": str(port)})
        proc = cm.__enter__()
        http_peers._wait_port(port, proc)
        return cm

    server = serve()
    session = ServerSession(ServerSpec(name="remote", url=url), options=SessionOptions(mode="legacy",
                                                                                       heartbeat_s=None))
    loop = DevLoop(session, WatchSettings(rerun="last"), probe_s=0.3, reconnect_s=(0.2, 0.4))
    try:
        await session.open()
        rec = session.calls.call("echo", {"message": "hi"})
        await rec.job
        loop.start()
        assert loop.describe() == f"reconnects to {url} when it comes back"
        server.__exit__(None, None, None)
        server = None
        await until(lambda: (session.activity or "").startswith("waiting for it to come back: try "), 20,
                    "the loss noticed")
        assert loop.state == "reconnecting"
        await until(lambda: "try 3" in (session.activity or ""), 20, "a few tries")
        server = serve()
        await until(lambda: loop.rerun_at is not None, 30, "reconnected and re-run")
        assert session.status is Status.CONNECTED and session.activity is None
        [rerun] = loop.reruns
        assert rerun.same and rerun.describe() == "echo: same answer as before"
    finally:
        await loop.stop()
        await session.disconnect()
        if server is not None:
            server.__exit__(None, None, None)


async def test_a_tool_gone_after_the_restart_is_said_not_run(source):
    session = session_for(source)
    loop = DevLoop(session, WatchSettings(rerun="last"))
    try:
        await session.open()
        bye = session.calls.call("farewell", {"name": "B"})
        await bye.job
        watched.write(source, "v2")
        await loop.restart_now(Burst(files=(str(source / "server.py"),)))
        [rerun] = loop.reruns
        assert rerun.after is None and not rerun.same
        assert rerun.describe() == "farewell: not run again: the server no longer lists this tool"
    finally:
        await loop.stop()
        await session.disconnect()


async def test_a_save_while_disconnected_does_not_connect(source, expect_log):
    session = session_for(source)
    loop = DevLoop(session, WatchSettings())
    try:
        loop.start()
        await asyncio.sleep(0.3)
        watched.write(source, "v2")
        await until(lambda: any("not restarted: the server is not connected" in e.text for e in session.log), 10,
                    "the note")
        assert session.status is Status.IDLE and loop.restarts == 0
    finally:
        await loop.stop()
