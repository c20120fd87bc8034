"""Each kind of file Spyglass writes is made readable by its user only (mode & 0o077 == 0), under the
usual umask 022 that made them 0644 before: traffic databases and their WAL and SHM files, session
files (the tap's, an export's, `--session`), `--trace`, HAR and OpenTelemetry exports, JUnit reports,
collections, snapshots, saved skills, the arguments file, catalogs written by the CLI, `--output`, the
start report."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest
from support import demo_cmd

from inspector.config import ServerSpec
from inspector.traffic import Frame, TrafficStore

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


@pytest.fixture(autouse=True)
def usual_umask():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def private(path: Path) -> bool:
    return (stat.S_IMODE(path.stat().st_mode) & 0o077) == 0


def assert_private(*paths: Path) -> None:
    loose = {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in paths if not private(p)}
    assert not loose, f"readable by others: {loose}"


def frame(direction: str, message: dict) -> Frame:
    return Frame(direction, json.dumps(message).encode(), time.monotonic(), time.time())


def small_store(path: str | Path = ":memory:", transport: str = "stdio") -> TrafficStore:
    store = TrafficStore(path)
    store.set_meta("server:s", json.dumps({"name": "s", "transport": transport, "url": "http://127.0.0.1:9/mcp"
                                           if transport == "http" else None, "command": ["x"]}))
    store.add("s", frame("out", {"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    store.add("s", frame("in", {"jsonrpc": "2.0", "id": 1, "result": {}}))
    return store


def test_a_traffic_database_and_its_wal_and_shm_files(tmp_path):
    folder = tmp_path / "sessions"
    store = small_store(folder / "s.sqlite")
    try:
        store.flush()
        deadline = time.monotonic() + 10
        while not (folder / "s.sqlite-wal").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        made = sorted(folder.iterdir())
        assert {p.name for p in made} >= {"s.sqlite", "s.sqlite-wal", "s.sqlite-shm"}, made
        assert_private(folder, *made)
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    finally:
        store.close()


def test_the_tap_s_session_file(tmp_path):
    from inspector.tap.record import TapRecorder

    recorder = TapRecorder(tmp_path / "tap" / "t.mcpsession", "s", {"name": "s", "command": ["x"]}, live=False)
    recorder.chunk("out", b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    recorder.close()
    assert_private(tmp_path / "tap", tmp_path / "tap" / "t.mcpsession")


def test_an_exported_session_trace_and_jsonl(tmp_path):
    from inspector.cli.common import SessionWriter, TraceWriter
    from inspector.recording.files import export_session

    store = small_store()
    export_session(store, tmp_path / "e.mcpsession")
    store.export_jsonl(tmp_path / "e.jsonl")
    trace = TraceWriter(str(tmp_path / "t.jsonl"))
    trace(frame("out", {"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    trace.close()
    session = SessionWriter(str(tmp_path / "s.mcpsession"), ServerSpec(name="s", command=["x"]))
    session(frame("out", {"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    session.close()
    assert_private(*(tmp_path / n for n in ("e.mcpsession", "e.jsonl", "t.jsonl", "s.mcpsession")))


def test_har_and_otlp_exports(tmp_path):
    from inspector.recording.har import export_har
    from inspector.recording.otlp import export_otlp_json

    export_har(small_store(transport="http"), tmp_path / "x.har")
    export_otlp_json(small_store(), tmp_path / "x.otlp.json")
    assert_private(tmp_path / "x.har", tmp_path / "x.otlp.json")


def test_junit_reports_of_check_and_test(tmp_path):
    from io import StringIO

    from inspector.cli import check, test

    collection = tmp_path / "c.yaml"
    collection.write_text(json.dumps({"name": "c", "server": {"command": demo_cmd()},
                                      "steps": [{"name": "tools", "list": "tools"}]}))
    assert test.main([str(collection), "--junit", str(tmp_path / "test.xml")], StringIO()) == 0
    check.main(["--junit", str(tmp_path / "check.xml"), "--", *demo_cmd()], StringIO())
    assert_private(tmp_path / "test.xml", tmp_path / "check.xml")


def test_collections_snapshots_and_starters(tmp_path):
    from inspector.collection.edit import add_step, new_editable, save
    from inspector.collection.run import write_snapshots
    from inspector.collection.starter import write_new

    editable = new_editable(tmp_path / "new.yaml", "new")
    add_step(editable, "tools", "list", "tools", None, {})
    save(editable)
    write_snapshots(tmp_path / "snap.json", {"a": 1})
    write_new(tmp_path / "starter.yaml", "name: s\n")
    assert_private(*(tmp_path / n for n in ("new.yaml", "snap.json", "starter.yaml")))


def test_a_collection_of_the_user_s_keeps_its_mode_when_a_step_is_added(tmp_path):
    """The user's own file (often in a repository they share): who may read it stays their choice."""
    from inspector.collection.edit import add_step, open_editable, save

    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\nsteps:\n  - {name: tools, list: tools}\n")
    os.chmod(path, 0o644)
    editable = open_editable(path)
    add_step(editable, "prompts", "list", "prompts", None, {})
    save(editable)
    assert "prompts" in path.read_text() and stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_saved_skill(tmp_path):
    from inspector.protocol.skills import ManifestFile, SkillEntry
    from inspector.session.skills import save_skill

    async def read_bytes(uri: str) -> bytes:
        return b"---\nname: notes\ndescription: d\n---\nbody\n"

    entry = SkillEntry("skill://notes/SKILL.md", {"name": "notes"}, (ManifestFile("skill://notes/SKILL.md"),), {})
    saved = asyncio.run(save_skill(read_bytes, entry, tmp_path / "skills"))
    assert saved.written
    assert_private(saved.folder, *saved.written)


def test_the_arguments_file(tmp_path):
    from inspector.forms.memory import ArgumentMemory

    memory = ArgumentMemory(tmp_path / "spyglass-arguments.json")
    memory.remember("s", "echo", {"message": "hi"})
    assert_private(tmp_path / "spyglass-arguments.json")


def test_catalogs_and_outputs_written_by_the_command_line(tmp_path):
    import subprocess

    catalog = tmp_path / "servers.json"
    import inspector

    env = {**os.environ, "PYTHONPATH": str(Path(inspector.__file__).parent.parent)}  # the code under test
    run = subprocess.run([sys.executable, "-m", "inspector", "--cli", "--catalog", str(catalog), "--method",
                          "servers/add", "--server", "demo", "--", *demo_cmd()],
                         capture_output=True, text=True, timeout=60, cwd=str(tmp_path), env=env)
    assert catalog.exists(), run.stderr
    out = tmp_path / "out.json"
    run = subprocess.run([sys.executable, "-m", "inspector", "--cli", "--method", "tools/list", "--output",
                          str(out), "--", *demo_cmd()], capture_output=True, text=True, timeout=60, cwd=str(tmp_path),
                         env=env)
    assert out.exists(), run.stderr
    assert_private(catalog, out)


def test_the_start_report(tmp_path, monkeypatch):
    from inspector import app

    monkeypatch.setenv(app.START_REPORT, str(tmp_path / "start.txt"))
    app._milestone("imports")
    assert_private(tmp_path / "start.txt")
