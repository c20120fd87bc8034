"""What `spyglass --cli` gained beside the official CLI's flags: the NDJSON streams ended by Ctrl+C (SIGINT)
with exit 130 after a clean close, the task methods, resources/unsubscribe, completion scripts generated from
the parsers, --output, --metadata, --catalog, the official inspector's stored OAuth tokens, and the parsing of
--connect-timeout and of the official argument order. Real processes on loopback; the streams run at once."""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import http_peers
import pytest
from support import HOSTILE, PY, ROOT, SDK_SERVER, SLOWDOWN, demo_cmd, everything_cmd

from inspector.cli import official
from inspector.cli.completion import commands
from inspector.cli.oneshot import build_parser

DEMO = ["--", *demo_cmd()]


def spyglass(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "inspector", "--cli", *args], capture_output=True, text=True, cwd=str(ROOT),
                          timeout=timeout * SLOWDOWN, env={**os.environ, **(env or {})})


def envelope(proc: subprocess.CompletedProcess) -> dict:
    return json.loads(proc.stderr.strip().splitlines()[-1])["error"]


def stream(args: list[str], lines_wanted: int, trace: Path) -> tuple[int, list[dict], str]:
    """Run a stream method, wait for `lines_wanted` lines on stdout, then SIGINT it as Ctrl+C does."""
    proc = subprocess.Popen([PY, "-m", "inspector", "--cli", "--trace", str(trace), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=str(ROOT), start_new_session=True)
    data = b""
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + 20 * SLOWDOWN  # the demo's clock ticks every 5 s
            while data.count(b"\n") < lines_wanted and time.monotonic() < deadline:
                if sel.select(timeout=0.2):
                    chunk = os.read(proc.stdout.fileno(), 65536)
                    if not chunk:
                        break
                    data += chunk
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20 * SLOWDOWN)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    lines = [json.loads(line) for line in (data + out).decode().splitlines() if line]
    return proc.returncode, lines, err.decode()


def sent_methods(trace: Path) -> list[str]:
    return [json.loads(r["text"]).get("method") for r in map(json.loads, trace.read_text().splitlines())
            if r["dir"] == "out"]


def test_streams_print_ndjson_until_ctrl_c_and_close_cleanly(tmp_path):
    jobs = {
        "tail": (["--method", "logging/tail", "--", PY, str(HOSTILE), "flood-at-start", "3"], 3),
        "subscribe": (["--method", "resources/subscribe", "--uri", "demo://live/clock", "--protocol", "legacy", *DEMO],
                      2),
        "listen": (["--method", "subscriptions/listen", "--uri", "demo://live/clock", "--protocol", "modern", *DEMO],
                   2),
    }
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(stream, args, n, tmp_path / f"{name}.jsonl") for name, (args, n) in jobs.items()}
        done = {name: f.result() for name, f in futures.items()}

    code, lines, err = done["tail"]
    assert code == 130 and "logging/tail: stopped" in err and "Traceback" not in err, err
    assert [(r["type"], r["data"]) for r in lines] == [("notifications/message", f"flood {i}/3") for i in (1, 2, 3)]

    code, lines, err = done["subscribe"]
    assert code == 130 and "Traceback" not in err, err
    assert lines[:2] == [{"type": "subscribed", "uri": "demo://live/clock"},
                         {"type": "resources/updated", "uri": "demo://live/clock"}]
    methods = sent_methods(tmp_path / "subscribe.jsonl")
    assert methods.index("resources/subscribe") < methods.index("resources/unsubscribe")  # closed cleanly

    code, lines, err = done["listen"]
    assert code == 130 and "Traceback" not in err, err
    assert lines[0]["type"] == "acknowledged" and lines[0]["notifications"]["resourceSubscriptions"] == [
        "demo://live/clock"]
    assert lines[1] == {"type": "notifications/resources/updated", "uri": "demo://live/clock"}
    assert "notifications/cancelled" in sent_methods(tmp_path / "listen.jsonl")  # the stream was ended, not cut


def test_task_methods_and_unsubscribe():
    ev = ["--", *everything_cmd()]
    listed, unknown, no_id, modern, unsub = ThreadPoolExecutor(max_workers=5).map(lambda a: spyglass(*a), [
        ["--method", "tasks/list", *ev],
        ["--method", "tasks/get", "--task-id", "nope", *ev],
        ["--method", "tasks/result", *ev],
        ["--method", "tasks/list", "--protocol-era", "modern", "--", PY, str(SDK_SERVER)],
        ["--method", "resources/unsubscribe", "--uri", "demo://live/clock", "--protocol", "legacy", *DEMO],
    ])
    assert listed.returncode == 0 and json.loads(listed.stdout) == {"tasks": []}, listed.stderr
    assert unknown.returncode == 1 and envelope(unknown)["kind"] == "rpc_error" and "Task not found" in unknown.stderr
    assert no_id.returncode == 1 and envelope(no_id) == {"code": "error", "kind": "usage",
                                                         "message": "tasks/result needs --task-id"}
    assert modern.returncode == 1 and "tasks exist only in protocol 2025-11-25" in envelope(modern)["message"]
    assert unsub.returncode == 0 and json.loads(unsub.stdout) == {"unsubscribed": True, "uri": "demo://live/clock"}


def test_completion_scripts_come_from_the_parsers(tmp_path):
    cli = {flag for opt in commands(build_parser())["cli"] for flag in opt.flags}
    assert {"--method", "--protocol-era", "--connect-timeout", "--strict", "--completion", "-q", "--relogin",
            "--no-revoke", "--callback-url", "--wait-for-auth", "--client-config", "--print-handoff"} <= cli
    assert next(o for o in commands(build_parser())["cli"] if o.flags == ("--client-config",)).files
    scripts = {shell: spyglass("--completion", shell) for shell in ("bash", "zsh", "fish")}
    for shell, proc in scripts.items():
        assert proc.returncode == 0 and proc.stderr == "", (shell, proc.stderr)
        (tmp_path / shell).write_text(proc.stdout)
    assert subprocess.run(["bash", "-n", str(tmp_path / "bash")]).returncode == 0
    # completing `spyglass --cli --method t` and `spyglass check --fo`, as bash would
    probe = (f"source {tmp_path / 'bash'}; COMP_WORDS=(spyglass --cli --method t); COMP_CWORD=3; _spyglass; "
             'echo "${COMPREPLY[*]}"; COMP_WORDS=(spyglass check --fo); COMP_CWORD=2; _spyglass; '
             'echo "${COMPREPLY[*]}"')
    methods, check_flags = subprocess.run(["bash", "-c", probe], capture_output=True, text=True).stdout.splitlines()
    assert set(methods.split()) == {"tools/list", "tools/call", "tasks/list", "tasks/get", "tasks/result",
                                    "tasks/cancel"}
    assert check_flags.split() == ["--format"]
    relogin = subprocess.run(["bash", "-c", f"source {tmp_path / 'bash'}; COMP_WORDS=(spyglass --cli --relo); "
                                            'COMP_CWORD=2; _spyglass; echo "${COMPREPLY[*]}"'],
                             capture_output=True, text=True).stdout.split()
    assert relogin == ["--relogin"]
    assert "'--method[" in scripts["zsh"].stdout and ":method:(initialize tools/list " in scripts["zsh"].stdout
    assert "-l method -x -a 'initialize tools/list" in scripts["fish"].stdout
    for shell in ("zsh", "fish"):
        if shutil.which(shell):  # not installed everywhere: the syntax check needs the shell itself
            assert subprocess.run([shell, "-n", str(tmp_path / shell)]).returncode == 0


def test_output_metadata_catalog_and_headers(tmp_path):
    trace = tmp_path / "t.jsonl"
    catalog = tmp_path / "mcp.json"
    result_file = tmp_path / "result.json"
    with http_peers.everything("streamableHttp") as everything_url:
        runs = list(ThreadPoolExecutor(max_workers=4).map(lambda a: spyglass(*a), [
            ["--trace", str(trace), "--tool-name", "echo", "--tool-arg", "message=meta", "--metadata", "trace=7",
             "app=x", "--tool-metadata", "app=tool", "--output", str(result_file), "--format", "json", *DEMO],
            ["--tool-name", "echo", "--tool-arg", "message=x", "--output", str(tmp_path / "no" / "dir" / "f"), *DEMO],
            ["--catalog", str(catalog), "--server", "demo"],
            ["--method", "tools/list", "--format", "human", "--", PY, str(ROOT / "tests/checks/planted_server.py")],
            # several headers after one flag, then the URL (Spyglass's order): the URL is the target
            ["--trace", str(tmp_path / "h.jsonl"), "--header", "X-A: 1", "X-B: 2", everything_url],
        ]))
    meta, unwritable, new_catalog, human, headers = runs
    sent_headers = [json.loads(r["text"]) for r in map(json.loads, (tmp_path / "h.jsonl").read_text().splitlines())
                    if r["dir"] == "http"]
    assert headers.returncode == 0 and sent_headers, headers.stderr
    assert all(h["request_headers"].get("X-B") == "2" for h in sent_headers)
    assert meta.returncode == 0, meta.stderr
    assert json.loads(meta.stdout) == {"output": {"path": str(result_file), "format": "json",
                                                  "bytes": result_file.stat().st_size}}
    assert "meta" in json.loads(result_file.read_text())["content"][0]["text"]
    sent = [json.loads(r["text"]) for r in map(json.loads, trace.read_text().splitlines()) if r["dir"] == "out"]
    call = next(m for m in sent if m.get("method") == "tools/call")
    listing = next(m for m in sent if m.get("method") == "tools/list")
    assert call["params"]["_meta"]["trace"] == 7 and call["params"]["_meta"]["app"] == "tool"
    assert listing["params"]["_meta"]["app"] == "x"
    assert unwritable.returncode == 1 and envelope(unwritable)["code"] == "output_write_failed"
    assert json.loads(catalog.read_text()) == {"mcpServers": {}}  # created, as the official CLI's catalog is
    assert new_catalog.returncode == 1 and "demo" in envelope(new_catalog)["message"]
    # without --strict, one line counts the portability problems
    assert human.returncode == 0 and "schema portability: 1 error, 0 warnings across 1 tool; --strict" in human.stderr


def test_stored_auth_from_the_official_inspectors_state_file(tmp_path):
    state = tmp_path / "oauth.json"
    url = "http://127.0.0.1:9/mcp"
    state.write_text(json.dumps({"servers": {
        url: {"activeIssuer": "https://as", "byIssuer": {"https://as": {"tokens": {"access_token": "tok-1"}}}},
        "http://other/mcp": {"tokens": {"refresh_token": "only"}}}}))
    env = {"MCP_INSPECTOR_OAUTH_STATE_PATH": str(state)}
    listed = spyglass("--list-stored-auth", env=env)
    assert json.loads(listed.stdout) == {"oauthStatePath": str(state), "storedServerUrls": [url]}
    missing = spyglass("--use-stored-auth", "--server-url", "http://127.0.0.1:9/other", env=env)
    assert missing.returncode == 3 and envelope(missing)["code"] == "no_stored_token"
    os.environ["MCP_INSPECTOR_OAUTH_STATE_PATH"] = str(state)
    try:
        assert official.stored_token(url + "/") == "tok-1"
    finally:
        del os.environ["MCP_INSPECTOR_OAUTH_STATE_PATH"]


@pytest.mark.parametrize(("text", "seconds"), [("15000", 15.0), ("500ms", 0.5), ("10s", 10.0), ("1.5 s", 1.5),
                                               ("2m", 120.0), ("0", None)])
def test_connect_timeout_is_milliseconds_or_a_duration(text, seconds):
    assert official.duration_ms(text) == seconds


def test_a_bad_connect_timeout_and_the_official_order():
    with pytest.raises(ValueError):
        official.duration_ms("soon")
    assert official.official_order(["--cli", "node", "s.js", "--flag", "--", "--method", "tools/list"]) == [
        "--cli", "--method", "tools/list", "--", "node", "s.js", "--flag"]
    assert official.official_order(["--method", "tools/list", "--", "node", "s.js"]) == [
        "--method", "tools/list", "--", "node", "s.js"]
    bad = spyglass("--connect-timeout", "soon", *DEMO)
    assert bad.returncode == 1 and "--connect-timeout" in envelope(bad)["message"]


def test_raw_output_of_each_kind_of_result():
    from inspector.cli.official import OutputError
    from inspector.cli.output import _raw

    png = {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}
    texts = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert _raw({"content": [*texts, png]}, "tools/call") == b"a\nb"
    assert _raw({"content": [png]}, "tools/call") == b"\x89PNG\r\n\x1a\n"
    assert _raw({"contents": [{"uri": "x", "blob": "aGk="}]}, "resources/read") == b"hi"
    embedded = {"type": "resource", "resource": {"uri": "x", "text": "inner"}}
    assert _raw({"content": [embedded]}, "tools/call") == b"inner"
    for result, words in (({"content": [png, png]}, "2 binary blocks"), ({"content": []}, "no text or binary"),
                          ({"content": [{"type": "image", "data": "%%%"}]}, "not valid base64")):
        with pytest.raises(OutputError, match=words) as caught:
            _raw(result, "tools/call")
        assert official.failure(caught.value)[0:1] == (1,) and official.failure(caught.value)[1]["code"] == \
            "output_not_raw"


def test_servers_of_a_file_are_listed_and_shown_with_secrets_redacted(tmp_path):
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {
        "local": {"command": "python", "args": ["s.py", "-v"], "env": {"API_KEY": "k", "LEVEL": "1"}},
        "remote": {"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer t", "X-Team": "a"}},
        "sse": {"url": "https://x/sse", "transport": "sse"}}}))
    listed, shown, missing, nameless = ThreadPoolExecutor(max_workers=4).map(lambda a: spyglass(*a), [
        ["--config", str(config), "--method", "servers/list", "--format", "json"],
        ["--config", str(config), "--method", "servers/show", "--server", "remote", "--format", "json"],
        ["--config", str(config), "--method", "servers/show", "--server", "nope"],
        ["--config", str(config), "--method", "servers/show"]])
    assert json.loads(listed.stdout)["result"]["servers"] == [
        {"name": "local", "type": "stdio", "detail": "python s.py -v"},
        {"name": "remote", "type": "streamable-http", "detail": "https://x/mcp"},
        {"name": "sse", "type": "sse", "detail": "https://x/sse"}]
    assert json.loads(shown.stdout)["result"]["config"] == {
        "type": "streamable-http", "url": "https://x/mcp", "headers": {"Authorization": "[redacted]", "X-Team": "a"}}
    assert missing.returncode == 1 and "local, remote, sse" in envelope(missing)["message"]
    assert nameless.returncode == 1 and envelope(nameless)["message"] == "servers/show needs --server NAME"


def test_catalog_writes_add_edit_rename_remove_and_keep_secrets_out(tmp_path):
    catalog = str(tmp_path / "catalog.json")

    def run(*args: str) -> subprocess.CompletedProcess:
        return spyglass("--catalog", catalog, "--format", "json", *args)

    added = run("--method", "servers/add", "--server", "local", "--cwd", str(tmp_path), "-e", "LEVEL=2", "--",
                "node", "server.js", "--verbose")
    assert json.loads(added.stdout)["result"] == {"ok": True, "action": "added", "server": "local",
                                                  "catalog": catalog}
    edited = run("--method", "servers/edit", "--server", "local", "--rename", "renamed", "--", "node", "other.js")
    assert json.loads(edited.stdout)["result"]["action"] == "updated"
    assert json.loads(Path(catalog).read_text())["mcpServers"] == {"renamed": {
        "type": "stdio", "command": "node", "args": ["other.js"], "env": {"LEVEL": "2"}, "cwd": str(tmp_path)}}
    secret = run("--method", "servers/add", "--server", "s", "-e", "API_TOKEN=x", "--", "node", "s.js")
    assert secret.returncode == 1 and "API_TOKEN" in envelope(secret)["message"]
    twice = run("--method", "servers/add", "--server", "renamed", "--server-url", "http://127.0.0.1:9/mcp")
    assert twice.returncode == 1 and "already exists" in envelope(twice)["message"]
    stray = run("--method", "servers/list", "--rename", "x")
    assert stray.returncode == 1 and "--rename is only valid" in envelope(stray)["message"]
    removed = run("--method", "servers/remove", "--server", "renamed")
    assert json.loads(removed.stdout)["result"]["action"] == "removed"
    assert json.loads(Path(catalog).read_text()) == {"mcpServers": {}}


def test_the_envelope_of_each_kind_of_failure():
    from inspector import errors as E

    class Nonconformant(E.SpyglassError):  # how an extension of --cli names its own official code and exit
        exit_code, kind, official_code = 7, "skill_check", "skills_nonconformant"

    cases = [(E.RemoteError("prompts/get", -32602, "no such prompt"), 1, "error"),
             (E.RequestTimeout("no answer"), 1, "error"), (E.AuthRequired("401"), 3, "auth_required"),
             (E.ConnectError("refused", url="http://x/mcp"), 4, "unreachable"),
             (E.ConnectError("command not found: x", command="x"), 1, "error"),
             (official.ToolNotFound("t"), 5, "tool_not_found"),
             (official.SchemaUnportable("s"), 6, "schema_unportable"),
             (Nonconformant("bad digest"), 7, "skills_nonconformant")]
    for exc, code, name in cases:
        exit_code, body = official.failure(exc)
        assert (exit_code, body["code"], body["kind"]) == (code, name, exc.kind), exc
    assert official.failure(cases[0][0])[1]["rpc_code"] == -32602
