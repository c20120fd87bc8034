"""Session files: what a session records survives export and import frame by frame, servers are rebuilt
from their frames, secrets are masked, and a damaged or foreign file opens with what can be read or is
refused with a clear message. Real peers: the SDK server in both eras, server-everything."""

from __future__ import annotations

import gzip
import json
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from recordings import record_everything, record_sdk, spyglass

from inspector.portable import mask_body
from inspector.recording.files import (
    SessionFileError,
    export_session,
    open_session,
    reading,
)
from inspector.recording.surface import SurfacesBuilder, surfaces
from inspector.secrets import MASK
from inspector.traffic import Frame, TrafficStore

CACHE: dict[str, Path] = {}


@cache
def recorded(kind: str, tmp: str) -> Path:
    folder = Path(tmp)
    if kind == "everything":
        return record_everything(folder / "everything.sqlite")
    return record_sdk(folder / f"sdk-{kind}.sqlite", kind)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sessions")
    return {kind: recorded(kind, str(folder)) for kind in ("legacy", "modern", "everything")}


def same_frames(a: TrafficStore, b: TrafficStore) -> None:
    assert len(a) == len(b)
    for n in range(len(a)):
        ra, rb = a.record(n), b.record(n)
        assert (ra.server_id, ra.direction, ra.kind, ra.method, ra.id, ra.malformed, ra.pair, ra.meta) == (
            rb.server_id, rb.direction, rb.kind, rb.method, rb.id, rb.malformed, rb.pair, rb.meta), n
        assert ra.wall == pytest.approx(rb.wall) and ra.mono == pytest.approx(rb.mono)
        assert a.raw(n) == b.raw(n), n


@pytest.mark.parametrize("kind", ["legacy", "modern", "everything"])
def test_export_then_import_is_the_same_session_frame_by_frame(sessions, kind, tmp_path):
    opened = open_session(sessions[kind])
    assert opened.kind == "sqlite" and opened.problems == []
    out = tmp_path / "shared.mcpsession"
    written = export_session(opened.store, out, mask=False)
    assert written == len(opened.store) > 10
    again = open_session(out)
    assert again.kind == "mcpsession" and again.problems == []
    same_frames(opened.store, again.store)
    assert again.header["format"] == "mcpsession" and again.header["version"] == 1
    [server] = again.header["servers"]
    assert server["revision"] == opened.surface().revision
    assert [s.as_json() for s in again.surfaces.values()] == [s.as_json() for s in opened.surfaces.values()]


@pytest.mark.parametrize("kind,revision,era", [("legacy", "2025-11-25", "legacy"), ("modern", "2026-07-28", "modern")])
def test_the_servers_are_rebuilt_from_their_frames(sessions, kind, revision, era):
    s = open_session(sessions[kind]).surface()
    assert (s.name, s.revision, s.era) == ("sdk", revision, era)
    assert s.server_info["name"] == "spyglass-sdk-peer"
    assert "tools" in s.capabilities
    assert {t["name"] for t in s.tools} >= {"add", "echo", "fail", "ask_name"}
    assert [r["uri"] for r in s.resources] == ["sdk://hello"]
    assert [p["name"] for p in s.prompts] == ["review"]
    assert "resourceTemplates" not in s.listings  # never listed: unknown, not empty
    calls = {(c.method, c.target): c for c in s.calls()}
    assert calls[("tools/call", "add")].result["content"][0]["text"] == "5"
    assert calls[("tools/call", "fail")].outcome == "tool error"
    assert calls[("tools/call", "no-such-tool")].outcome in ("error", "tool error")
    ask = calls[("tools/call", "ask_name")]
    assert ask.final.result["content"][0]["text"] == "Hello, Ada!"  # 2026-07-28: the answer of the last round
    assert len(ask.rounds) == (1 if era == "modern" else 0) and ask.outcome == "ok"
    assert calls[("resources/read", "sdk://hello")].latency is not None
    assert s.definition["command"][-1].endswith("sdk_server.py")
    assert s.definition["env"] == {"SDK_API_TOKEN": MASK}  # the window and the CLI record definitions masked


def test_secrets_are_masked_in_an_export_and_the_rest_is_kept(tmp_path):
    store = TrafficStore(":memory:")
    store.set_meta("server:s", json.dumps({"name": "s", "command": ["x"], "env": {"API_KEY": "k", "HOME": "/h"},
                                           "headers": {"Authorization": "Bearer t"}}))
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "login", "arguments": {"password": "hunter2", "author": "Ann", "keywords": "x",
                                                      "nested": [{"access_token": "abc"}]}}}
    store.add("s", Frame("out", json.dumps(body).encode(), 1.0, 1.0))
    http = {"method": "POST", "url": "http://127.0.0.1/mcp", "status": 200,
            "request_headers": {"Authorization": "Bearer secret", "Accept": "application/json"}}
    store.add("s", Frame("http", json.dumps(http).encode(), 1.1, 1.1))
    store.add("s", Frame("err", b"password=hunter2 on stderr", 1.2, 1.2))
    out = tmp_path / "masked.mcpsession"
    export_session(store, out)
    text = gzip.open(out, "rt").read()
    assert "hunter2" not in text.replace("password=hunter2 on stderr", "")
    assert "Bearer secret" not in text and '"k"' not in text and "Bearer t" not in text
    again = open_session(out)
    sent = json.loads(again.store.raw(0))["params"]["arguments"]
    assert sent == {"password": MASK, "author": "Ann", "keywords": "x", "nested": [{"access_token": MASK}]}
    assert json.loads(again.store.raw(1))["request_headers"] == {"Authorization": f"Bearer {MASK}",
                                                                 "Accept": "application/json"}
    definition = again.surface().definition
    assert definition["env"] == {"API_KEY": MASK, "HOME": "/h"}
    assert definition["headers"] == {"Authorization": f"Bearer {MASK}"}


def test_mask_body_leaves_names_that_only_look_secret():
    masked, changed = mask_body({"author": "a", "monkey": "b", "token_count": 3, "apiKey": "z", "client_secret": "s"})
    assert changed and masked == {"author": "a", "monkey": "b", "token_count": 3, "apiKey": MASK,
                                  "client_secret": MASK}


def test_stderr_and_whole_servers_can_be_left_out(sessions, tmp_path):
    source = open_session(sessions["legacy"])
    store = TrafficStore(":memory:")
    for n in range(len(source.store)):
        r = source.store.record(n)
        store.add(r.server_id, Frame(r.direction, source.store.raw(n), r.mono, r.wall))
        store.add("other", Frame("err", b"other server's stderr", r.mono, r.wall))
    out = tmp_path / "trimmed.mcpsession"
    export_session(store, out, drop_stderr=True, drop_servers=["other"])
    again = open_session(out)
    assert again.store.servers() == ["sdk"]
    assert all(again.store.direction(n) != "err" for n in range(len(again.store)))
    assert again.header["dropped"] == {"stderr": True, "servers": ["other"]}


def test_a_session_still_being_written_opens_with_what_is_committed(tmp_path):
    path = tmp_path / "live.sqlite"
    store = TrafficStore(path)
    try:
        for i in range(50):
            store.add("s", Frame("out", json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}).encode(), i, i))
        store.flush(wait=True)
        opened = open_session(path)
        assert len(opened.store) == 50 and opened.problems == []
        store.add("s", Frame("out", b'{"jsonrpc":"2.0","id":99,"method":"ping"}', 60, 60))
    finally:
        store.close()
    assert len(open_session(path).store) == 51


def test_a_truncated_database_opens_what_can_be_read(sessions, tmp_path):
    data = sessions["everything"].read_bytes()
    whole = len(open_session(sessions["everything"]).store)
    copy = tmp_path / "cut.sqlite"
    copy.write_bytes(data[: len(data) * 9 // 10])
    opened = open_session(copy)
    assert 0 < len(opened.store) < whole
    assert "cut short" in opened.problems[0]
    copy.write_bytes(data[: len(data) // 4])  # the frames' pages are gone: nothing, and it says so
    opened = open_session(copy)
    assert opened.problems and all(opened.store.raw(n) is not None for n in range(len(opened.store)))


def test_files_that_are_no_session(tmp_path):
    (tmp_path / "empty.sqlite").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("not a session at all")
    (tmp_path / "other.gz").write_bytes(gzip.compress(b'{"hello": "world"}\n'))
    for name, words in (("empty.sqlite", "is empty"), ("notes.txt", "is not a Spyglass session"),
                        ("other.gz", "is not a .mcpsession"), ("missing.mcpsession", "cannot open")):
        with pytest.raises(SessionFileError) as caught:
            open_session(tmp_path / name)
        assert words in caught.value.message


def _lines(path: Path) -> list[str]:
    return gzip.open(path, "rt", encoding="utf-8").read().splitlines(keepends=True)


def test_a_damaged_portable_session_opens_what_can_be_read(sessions, tmp_path):
    good = tmp_path / "good.mcpsession"
    count = export_session(open_session(sessions["legacy"]).store, good)
    lines = _lines(good)
    # cut short: the gzip stream ends in the middle
    raw = good.read_bytes()
    (tmp_path / "cut.mcpsession").write_bytes(raw[: len(raw) // 2])
    cut = open_session(tmp_path / "cut.mcpsession")
    assert 0 < len(cut.store) < count and any("ends early" in p or "no end line" in p for p in cut.problems)
    # a broken line in the middle, and a newer format
    header = json.loads(lines[0])
    header["version"] = 99
    broken = [json.dumps(header) + "\n", *lines[1:5], "{not json\n", *lines[5:]]
    with gzip.open(tmp_path / "broken.mcpsession", "wt", encoding="utf-8") as fh:
        fh.writelines(broken)
    opened = open_session(tmp_path / "broken.mcpsession")
    assert len(opened.store) == count
    assert any("version 99" in p for p in opened.problems) and any("line 6 is not JSON" in p for p in opened.problems)
    # no end line
    with gzip.open(tmp_path / "noend.mcpsession", "wt", encoding="utf-8") as fh:
        fh.writelines(lines[:-1])
    assert any("no end line" in p for p in open_session(tmp_path / "noend.mcpsession").problems)


def test_cli_session_flag_writes_a_session_that_opens(tmp_path):
    out = tmp_path / "ci.mcpsession"
    from support import demo_cmd

    run = spyglass("--cli", "--session", str(out), "--tool-name", "echo", "--tool-args-json",
                   '{"message": "from CI"}', "-e", "DEMO_TOKEN=t0ps3cret", "--", *demo_cmd())
    assert run.returncode == 0, run.stderr
    opened = open_session(out)
    s = opened.surface()
    assert s.calls()[0].result["content"][0]["text"] == "from CI"
    assert s.definition["env"] == {"DEMO_TOKEN": MASK}
    assert "t0ps3cret" not in gzip.open(out, "rt").read()


def test_export_command_writes_each_format(sessions, tmp_path):
    jsonl = tmp_path / "frames.jsonl"
    run = spyglass("export", str(sessions["legacy"]), str(jsonl))
    assert run.returncode == 0, run.stderr
    assert len(jsonl.read_text().splitlines()) == len(open_session(sessions["legacy"]).store)
    portable = tmp_path / "s.mcpsession"
    run = spyglass("export", str(sessions["legacy"]), str(portable), "--drop-stderr")
    assert run.returncode == 0 and "wrote" in run.stdout
    assert open_session(portable).header["dropped"]["stderr"] is True
    bad = spyglass("export", str(sessions["legacy"]), str(tmp_path / "what.xyz"))
    assert bad.returncode == 1 and "cannot tell the format" in bad.stderr
    shutil.copy(sessions["legacy"], tmp_path / "copy.sqlite")
    none = spyglass("export", str(tmp_path / "nothing.sqlite"), str(portable))
    assert none.returncode == 1 and "cannot open" in none.stderr and "Traceback" not in none.stderr


def test_an_opened_session_is_judged_as_the_live_window_judges_it(sessions, tmp_path):
    from inspector.recording.findings import judge_recording

    source = open_session(sessions["legacy"])
    store = TrafficStore(":memory:")
    for n in range(len(source.store)):
        r = source.store.record(n)
        store.add(r.server_id, Frame(r.direction, source.store.raw(n), r.mono, r.wall))
    noise = store.add("sdk", Frame("in", b"Starting up... not JSON", 99.0, 99.0))
    undeclared = store.add("sdk", Frame("in", json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                                          "params": {"level": "info", "data": "x"}}).encode(), 99.1,
                                        99.1))
    path = tmp_path / "judged.mcpsession"
    export_session(store, path)
    opened = open_session(path)
    found = judge_recording(opened.store, opened.surfaces)
    assert [f.rule for f in found[noise]] == ["schema-violation"]
    assert opened.store.flags[noise] == 0  # an error: the Expert column and the `expert` filter see it
    assert [f.rule for f in found.get(undeclared, [])] == ["capability-undeclared"]  # the SDK peer has no logging
    assert all(n in (noise, undeclared) for n in found)  # the real peer's own frames are clean


@pytest.mark.parametrize("kind", ["modern", "everything"])
def test_servers_rebuilt_as_the_window_reads_are_the_ones_rebuilt_from_the_whole_store(sessions, kind, tmp_path):
    """The window rebuilds the servers a slice at a time from the messages the store parsed as it read them
    (`store.last_read`); the same servers come from the store's frames parsed anew, from both kinds of file."""
    recorded = open_session(sessions[kind]).store
    store = TrafficStore(tmp_path / "logged.sqlite", meta=recorded.meta_items)
    for n in range(len(recorded)):  # the session with log lines after each answer (one of them not an object)
        r = recorded.record(n)
        store.add(r.server_id, Frame(r.direction, recorded.raw(n), r.mono, r.wall, r.malformed, None, r.meta))
        if r.direction == "in":
            params = '"odd"' if n % 5 == 0 else f'{{"level":"info","logger":"l{n % 3}","data":{{"n":{n}}}}}'
            store.add(r.server_id, Frame("in", b'{"jsonrpc":"2.0","method":"notifications/message","params":%s}'
                                         % params.encode(), r.mono, r.wall))
    store.flush(wait=True)
    store.close()
    out = tmp_path / "shared.mcpsession"
    export_session(open_session(tmp_path / "logged.sqlite").store, out, mask=False)
    for path in (tmp_path / "logged.sqlite", out):
        opened, steps = reading(path, 3)
        builder = SurfacesBuilder(opened.store)
        handed: dict[int, int] = {}  # the slices of parsed frames the builder found in `last_read` (a .mcpsession's
        for _ in steps:  # were emptied before it looked: none before)
            first, read = opened.store.last_read
            if first + len(read) == len(opened.store):
                handed[first] = len(read)
            builder.take(len(opened.store))
        builder.take(len(opened.store))
        parsed = sum(handed.values())
        assert parsed == len(opened.store), f"{path.name}: {parsed} of {len(opened.store)} frames handed parsed"
        stepwise = builder.finish()
        opened.store.last_read = (0, [])
        whole = surfaces(opened.store)
        assert [s.as_json() for s in stepwise.values()] == [s.as_json() for s in whole.values()]
        assert [(s.log, s.stderr, s.frames, s.problems) for s in stepwise.values()] == [
            (s.log, s.stderr, s.frames, s.problems) for s in whole.values()]
        assert sum(len(s.log) for s in whole.values()) > 0


def judged_as_read(path: Path, batch: int = 3):
    """Judge a session file's frames as the window does: each slice as it is read, with the messages the
    store parsed, the servers rebuilt alongside; then settled against the servers rebuilt whole."""
    from inspector.recording.findings import Judging

    opened, steps = reading(path, batch)
    store = opened.store
    builder, judging = SurfacesBuilder(store), Judging(store)
    for _ in steps:
        builder.take(len(store))
        judging.take_read(*store.last_read, builder.out)
    builder.take(len(store))
    opened.rebuilt(builder.finish())
    judging.settle(opened.surfaces)
    judging.take(len(store))
    return judging, store


def judged_whole(path: Path):
    from inspector.recording.findings import judge_recording

    opened = open_session(path)
    return judge_recording(opened.store, opened.surfaces), opened.store


@pytest.mark.parametrize("kind", ["legacy", "modern", "everything"])
def test_frames_judged_as_they_are_read_are_judged_as_the_whole_session_is(sessions, kind, tmp_path):
    """The window judges each slice of frames as it is read, with the messages the store parsed (not parsed
    again once every frame is read): the same findings and flags as the frames judged from the whole store,
    from both kinds of file, with a noisy line and a log line the server had not declared."""
    source = open_session(sessions[kind]).store
    store = TrafficStore(tmp_path / "noisy.sqlite", meta=source.meta_items)
    for n in range(len(source)):
        r = source.record(n)
        store.add(r.server_id, Frame(r.direction, source.raw(n), r.mono, r.wall, r.malformed, None, r.meta))
        if n == len(source) // 2:
            store.add(r.server_id, Frame("in", b"Starting up... not JSON", r.mono, r.wall))
            store.add(r.server_id, Frame("in", b'{"jsonrpc":"2.0","method":"notifications/message","params":'
                                               b'{"level":"info","data":"x"}}', r.mono, r.wall))
    store.flush(wait=True)
    store.close()
    portable = tmp_path / "noisy.mcpsession"
    export_session(open_session(tmp_path / "noisy.sqlite").store, portable, mask=False)
    for path in (tmp_path / "noisy.sqlite", portable):
        judging, read = judged_as_read(path)
        found, whole = judged_whole(path)
        assert judging.found == found and found and read.flags == whole.flags
        assert judging.used, "the judges learned their revision as the frames were read: nothing judged again"


def test_a_second_handshake_that_changes_the_revision_has_the_frames_judged_again(tmp_path):
    """A server that reconnected with another revision and capabilities: its rebuilt surface says the last
    ones, which the whole store's judging uses from the first handshake's answer on; the frames judged while
    they were read used the first ones, so they are judged again, and the findings are the same."""
    store = TrafficStore(tmp_path / "twice.sqlite")

    def hello(i: int, revision: str, capabilities: dict) -> None:
        out = {"jsonrpc": "2.0", "id": i, "method": "initialize", "params": {
            "protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        back = {"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": revision, "capabilities": capabilities,
                                                      "serverInfo": {"name": "s", "version": "1"}}}
        store.add("s", Frame("out", json.dumps(out).encode(), i, i))
        store.add("s", Frame("in", json.dumps(back).encode(), i + 0.1, i + 0.1))

    hello(1, "2025-06-18", {})
    for k in range(5):
        store.add("s", Frame("in", b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info",'
                                   b'"data":"x%d"}}' % k, 2 + k, 2 + k))
    hello(10, "2025-11-25", {"logging": {}})
    store.flush(wait=True)
    store.close()
    for path in (tmp_path / "twice.sqlite",):
        judging, read = judged_as_read(path)
        found, whole = judged_whole(path)
        assert judging.found == found and read.flags == whole.flags
        assert not judging.used  # judged again after the servers were rebuilt


def _handshake(store: TrafficStore, i: int, revision: str, capabilities: dict, server: str = "s") -> None:
    out = {"jsonrpc": "2.0", "id": i, "method": "initialize", "params": {
        "protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    back = {"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": revision, "capabilities": capabilities,
                                                  "serverInfo": {"name": server, "version": "1"}}}
    store.add(server, Frame("out", json.dumps(out).encode(), i, i))
    store.add(server, Frame("in", json.dumps(back).encode(), i + 0.1, i + 0.1))


def test_a_notification_that_also_carries_a_result_is_judged_alike_as_read_and_whole(tmp_path):
    """A line with a method, no id, and a "result" or "error" as well is no JSON-RPC message (the frames' parser
    says so, and the live window's judge with it): the frames judged as read (parsed by the store) and the whole
    store's judging (from the raw bytes) both say so, on the same frames."""
    store = TrafficStore(tmp_path / "mixed.sqlite")
    _handshake(store, 1, "2025-06-18", {"logging": {}})
    line = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}'
    for k in range(4):
        store.add("s", Frame("in", line + b"}", 2 + k, 2 + k))
    store.add("s", Frame("in", line + b',"result":{}}', 7, 7))
    store.add("s", Frame("in", line + b',"error":{"code":1,"message":"m"}}', 8, 8))
    store.flush(wait=True)
    store.close()
    path = tmp_path / "mixed.sqlite"
    judging, read = judged_as_read(path)
    found, whole = judged_whole(path)
    assert judging.found == found and read.flags == whole.flags
    assert sorted(found) == [6, 7] and all("not a JSON-RPC message" in f.message for n in found for f in found[n])


LOG_OK = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
LOG_BAD = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud","data":"x"}}'
TOOLS_CHANGED = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'


class _Script:
    """A session written frame by frame: handshakes (asked, answered, refused) and a server's noise (a valid
    and a broken log line, a tools/list_changed the capabilities may not declare)."""

    def __init__(self, store: TrafficStore) -> None:
        self.store, self.t = store, 0.0

    def add(self, server: str, direction: str, message: Any) -> None:
        self.t += 1
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.store.add(server, Frame(direction, data, self.t, self.t))

    def ask(self, server: str, i: int, revision: str, method: str = "initialize", meta: bool = False) -> None:
        params: dict[str, Any] = {"protocolVersion": revision, "capabilities": {},
                                  "clientInfo": {"name": "t", "version": "1"}}
        if meta:
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": revision}
        self.add(server, "out", {"jsonrpc": "2.0", "id": i, "method": method, "params": params})

    def answer(self, server: str, i: int, revision: str, capabilities: Any) -> None:
        self.add(server, "in", {"jsonrpc": "2.0", "id": i, "result": {
            "protocolVersion": revision, "capabilities": capabilities, "serverInfo": {"name": server, "version": "1"}}})

    def refuse(self, server: str, i: int) -> None:
        self.add(server, "in", {"jsonrpc": "2.0", "id": i, "error": {"code": -32602, "message": "Unsupported"}})

    def noise(self, server: str, times: int = 2) -> None:
        for _ in range(times):
            for line in (LOG_OK, LOG_BAD, TOOLS_CHANGED):
                self.add(server, "in", line)


def _caps_change_on_reconnect(s: _Script) -> None:
    s.ask("s", 1, "2025-06-18"), s.answer("s", 1, "2025-06-18", {}), s.noise("s")
    s.ask("s", 2, "2025-06-18"), s.answer("s", 2, "2025-06-18", {"logging": {}, "tools": {"listChanged": True}})
    s.noise("s")


def _two_servers(s: _Script) -> None:
    s.ask("a", 1, "2025-06-18"), s.ask("b", 1, "2024-11-05"), s.noise("a"), s.noise("b")
    s.answer("b", 1, "2024-11-05", {"logging": {}}), s.noise("a"), s.noise("b")
    s.answer("a", 1, "2025-06-18", {}), s.noise("a"), s.noise("b")


def _late_answer(s: _Script) -> None:
    s.ask("s", 1, "2025-11-25"), s.noise("s", 10), s.answer("s", 1, "2025-11-25", {"logging": {}}), s.noise("s", 3)


def _version_probe(s: _Script) -> None:
    s.ask("s", 1, "2099-01-01"), s.refuse("s", 1), s.noise("s", 3)
    s.ask("s", 2, "2025-06-18"), s.answer("s", 2, "2025-06-18", {"logging": {}}), s.noise("s", 3)


def _modern_probe(s: _Script) -> None:
    s.ask("s", 1, "2026-07-28", "server/discover", meta=True), s.refuse("s", 1), s.noise("s", 3)
    s.ask("s", 2, "2026-07-28", "server/discover", meta=True), s.answer("s", 2, "2026-07-28", {"logging": {}})
    s.noise("s", 3)


def _answers_out_of_order(s: _Script) -> None:
    s.ask("s", 1, "2025-06-18"), s.ask("s", 2, "2025-11-25"), s.answer("s", 2, "2025-11-25", {"logging": {}})
    s.noise("s", 4), s.answer("s", 1, "2025-06-18", {}), s.noise("s", 3)


def _two_servers_both_probed(s: _Script) -> None:
    s.ask("a", 1, "2099-01-01"), s.ask("b", 1, "2099-01-01"), s.refuse("a", 1), s.refuse("b", 1)
    s.noise("a"), s.noise("b")
    s.ask("b", 2, "2024-11-05"), s.answer("b", 2, "2024-11-05", {"logging": {}}), s.noise("a")
    s.ask("a", 2, "2025-06-18"), s.answer("a", 2, "2025-06-18", {}), s.noise("b")


def _reconnect_to_an_unknown_revision(s: _Script) -> None:
    s.ask("s", 1, "2025-06-18"), s.answer("s", 1, "2025-06-18", {"logging": {}}), s.noise("s")
    s.ask("s", 2, "1999-01-01"), s.answer("s", 2, "1999-01-01", [1]), s.noise("s")


@pytest.mark.parametrize("script", [_caps_change_on_reconnect, _two_servers, _late_answer, _version_probe,
                                    _modern_probe, _answers_out_of_order, _two_servers_both_probed,
                                    _reconnect_to_an_unknown_revision], ids=lambda f: f.__name__.strip("_"))
def test_judged_as_read_equals_judged_whole_where_revisions_are_learned_late_or_change(script, tmp_path):
    """`Judging.settle` finds every case where the frames judged as read were judged with another revision or
    other capabilities than the whole store's judging gives them (capabilities changed on a reconnect, two
    servers in one file, a handshake answered after many frames, a version probe refused first, answers out of
    order, a reconnect to a revision Spyglass does not know): read in slices of 1, 3 and all frames, from the
    database and from its portable export, the same findings and flags."""
    script(_Script(store := TrafficStore(tmp_path / "s.sqlite")))
    store.flush(wait=True)
    store.close()
    portable = tmp_path / "s.mcpsession"
    export_session(open_session(tmp_path / "s.sqlite").store, portable, mask=False)
    for path in (tmp_path / "s.sqlite", portable):
        found, whole = judged_whole(path)
        assert found
        for batch in (1, 3, 1000):
            judging, read = judged_as_read(path, batch)
            assert judging.found == found and read.flags == whole.flags, (path.name, batch)
