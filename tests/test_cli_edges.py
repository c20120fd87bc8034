"""`spyglass --cli` at its edges, as real processes against real servers: every method, what each needs,
text output of every kind of content, tasks the server does not offer, progress on a terminal, and
authorization flags (a browser that signs in, secrets in files, a missing keyring).

Independent runs go in parallel (`runs`): each is a Python process with a server of its own."""

from __future__ import annotations

import importlib.util
import json
import os
import pty
import select
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from support import PY, ROOT, SLOWDOWN, demo_cmd, hostile_cmd

DEMO = ["--", *demo_cmd()]
HOSTILE = ["--", *hostile_cmd()]  # a lenient server that starts fast


def spyglass(*args: str, env: dict[str, str] | None = None, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "inspector", "--cli", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=str(ROOT), env={**os.environ, **(env or {})})


def runs(*argvs: list[str]) -> list[subprocess.CompletedProcess]:
    """Each argv as its own `spyglass --cli` run, a few at a time, in the order given."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda argv: spyglass(*argv), argvs))


def last_line(proc: subprocess.CompletedProcess) -> str:
    """stderr's last human line (a failure's stderr ends with the JSON envelope, after it)."""
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines, "nothing on stderr"
    if proc.returncode:
        assert json.loads(lines[-1])["error"] == json.loads(proc.stdout)["error"]
        return lines[-2]
    return lines[-1]


def failed(proc: subprocess.CompletedProcess, code: int, kind: str, message: str) -> None:
    """Exit `code`, `{"error": {"kind", "message"}}` on stdout and the message on stderr's last line."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    error = json.loads(proc.stdout)["error"]
    assert error["kind"] == kind and error["message"] == message, error
    assert last_line(proc) == f"spyglass: {message}"


# --- what each method needs ------------------------------------------------------------------------

USAGE = [
    # (argv, the message); every one exits 1 with kind "usage". Those found after the server started:
    (["--method", "resources/read", *HOSTILE], "resources/read needs --uri"),
    (["--method", "prompts/get", *HOSTILE], "prompts/get needs --prompt-name"),
    (["--method", "tools/call", *HOSTILE], "tools/call needs --tool-name"),
    (["--method", "logging/setLevel", *HOSTILE], "logging/setLevel needs --log-level"),
    (["--method", "completion/complete", "--ref", "prompt:greeting", *HOSTILE],
     "completion/complete needs --ref prompt:NAME|resource:URI and --argument NAME=VALUE"),
    (["--method", "completion/complete", "--ref", "resource:", "--argument", "x=1", *HOSTILE],
     "--ref must be prompt:NAME or resource:URI, got 'resource:'"),
    # and those found before anything starts
    (["--timeout", "0", *DEMO], "--timeout must be positive"),
    (["-e", "NO_VALUE", *DEMO], "-e expects KEY=VALUE, got 'NO_VALUE'"),
    (["--header", "X-Token", "http://127.0.0.1:9/mcp"], "--header expects \"NAME: VALUE\", got 'X-Token'"),
    (["http://127.0.0.1:9/mcp", "extra"], "a URL takes no further arguments: extra"),
    (["--transport", "stdio", "http://127.0.0.1:9/mcp"], "--transport stdio needs a command, not a URL"),
    (["--transport", "sse", *DEMO], "--transport sse needs a URL"),
    (["--config", "servers.json", *DEMO], "give either --config or a server command, not both"),
    (["--trace", "/nonexistent-folder/trace.jsonl", *DEMO],
     "cannot write trace file /nonexistent-folder/trace.jsonl: No such file or directory"),
    (["--elicit-accept", "{name: Ada}", *DEMO],
     "--elicit-accept is not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
]


def test_what_a_method_or_flag_lacks_is_a_usage_error_that_names_it():
    for (argv, message), proc in zip(USAGE, runs(*[argv for argv, _ in USAGE])):
        failed(proc, 1, "usage", message)


def test_tool_arguments_that_are_not_a_json_object_are_refused_before_the_call(tmp_path):
    trace = tmp_path / "t.jsonl"
    bad_json, not_object = runs(["--trace", str(trace), "--tool-name", "echo", "--tool-args-json", "{message: hi}",
                                 *DEMO],
                                ["--tool-name", "echo", "--tool-args-json", '["hi"]', *DEMO])
    failed(bad_json, 1, "invalid_arguments", "--tool-args-json is not valid JSON: Expecting property name "
                                             "enclosed in double quotes: line 1 column 2 (char 1)")
    failed(not_object, 1, "invalid_arguments", "--tool-args-json must be a JSON object")
    sent = [json.loads(r["text"]).get("method") for r in map(json.loads, trace.read_text().splitlines())
            if r["dir"] == "out"]
    assert "tools/list" not in sent and "tools/call" not in sent  # refused before anything was asked of the server


# --- every method --------------------------------------------------------------------------------

def test_every_listing_and_read_method_against_the_demo():
    (resources, templates, prompts, completion, resource_completion, level, ping, discover, long_task) = runs(
        ["--method", "resources/list", *DEMO],
        ["--method", "resources/templates/list", *DEMO],
        ["--method", "prompts/list", *DEMO],
        # text output of a result that has no text form is the JSON
        ["--format", "human", "--method", "completion/complete", "--ref", "prompt:code_review", "--argument",
         "language=c", "--context", "code=int main;", *DEMO],
        ["--method", "completion/complete", "--ref", "resource:demo://notes/{note_id}", "--argument", "note_id=re",
         *DEMO],
        ["--method", "logging/setLevel", "--log-level", "error", *DEMO],
        ["--method", "ping", *DEMO],
        ["--method", "server/discover", *DEMO],
        ["--tool-name", "long_task", "--tool-arg", "steps=2", "--tool-arg", "step_ms=20", *DEMO])
    for proc in (resources, templates, prompts, completion, resource_completion, level, ping, discover, long_task):
        assert proc.returncode == 0, proc.stderr
    assert "demo://docs/welcome.txt" in [r["uri"] for r in json.loads(resources.stdout)["resources"]]
    assert [t["uriTemplate"] for t in json.loads(templates.stdout)["resourceTemplates"]] == ["demo://notes/{note_id}"]
    assert [p["name"] for p in json.loads(prompts.stdout)["prompts"]] == ["greeting", "code_review"]
    assert json.loads(completion.stdout)["completion"]["values"] == ["c", "c#", "c++", "clojure"]
    assert json.loads(resource_completion.stdout)["completion"] == {
        "values": ["reading-list", "recipes", "release-plan"], "total": 3, "hasMore": False}
    assert json.loads(level.stdout) == {}
    (key,) = json.loads(ping.stdout)
    assert key == "roundTripMs" and json.loads(ping.stdout)[key] > 0
    assert json.loads(discover.stdout)["supportedVersions"][0] == "2026-07-28"
    assert "progress" not in long_task.stderr  # stderr is no terminal here: no progress line


def test_logging_set_level_reaches_a_legacy_server(tmp_path):
    trace = tmp_path / "t.jsonl"
    proc = spyglass("--trace", str(trace), "--protocol", "2025-06-18", "--method", "logging/setLevel",
                    "--log-level", "critical", *DEMO)
    assert proc.returncode == 0, proc.stderr
    sent = [json.loads(r["text"]) for r in map(json.loads, trace.read_text().splitlines()) if r["dir"] == "out"]
    assert {"jsonrpc": "2.0", "id": sent[-1]["id"], "method": "logging/setLevel",
            "params": {"level": "critical"}} in sent


# --- --format human ---------------------------------------------------------------------------------

def test_text_output_of_every_kind_of_result():
    config, links, odd, blob, prompt, templates = runs(
        ["--format", "human", "--tool-name", "get_config_file", *DEMO],
        ["--format", "human", "--tool-name", "search_web", "--tool-arg", "query=otters", "--tool-arg",
         "max_results=2", *DEMO],
        ["--format", "human", "--tool-name", "echo", "--tool-arg", "message=x", "--", *hostile_cmd("odd-content")],
        ["--format", "human", "--uri", "demo://images/logo.png", *DEMO],
        ["--format", "human", "--prompt-name", "code_review", "--prompt-args", "code=x = 1", "--prompt-args",
         "language=go", *DEMO],
        ["--format", "human", "--method", "resources/templates/list", *DEMO])
    for proc in (config, links, odd, blob, prompt, templates):
        assert proc.returncode == 0, proc.stderr
    lines = config.stdout.splitlines()
    assert lines[0] == "Here is the current configuration and the logo it refers to."
    assert json.loads("\n".join(lines[1:-1]))["app"] == "spyglass-demo"  # an embedded resource's text
    assert lines[-1] == "[resource demo://images/logo.png]"  # an embedded blob
    assert links.stdout.splitlines()[-2:] == ["[link https://example.com/otters/1]",
                                              "[link https://example.com/otters/2]"]
    # an unknown kind of block, then images: "not base64 at all!!" (19 characters) and a small PNG
    assert odd.stdout.splitlines()[:2] == ["[hologram content]", "[image image/png, 14 bytes]"]
    assert odd.stdout.splitlines()[2].startswith("[image image/png, ")
    assert blob.stdout == "[blob demo://images/logo.png]\n"
    said = prompt.stdout.splitlines()
    assert said[0] == "user: Please review this go code:" and "x = 1" in said
    embedded = next(line for line in said if line.startswith("user: {"))
    assert json.loads(embedded[len("user: "):])["resource"]["uri"] == "demo://docs/style-guide.md"
    assert said[-1].startswith("assistant: Happy to.")
    # a list: name (title), a tab, the first line of the description; a template is named by its name
    assert templates.stdout == "note (Note by id)\tOne of the demo's Markdown notes. Completion suggests note ids.\n"


# --- schemas, tasks, progress ----------------------------------------------------------------------

def test_a_schema_that_cannot_be_checked_is_a_warning_and_the_call_goes_out(tmp_path):
    trace = tmp_path / "t.jsonl"
    proc = spyglass("--trace", str(trace), "--tool-name", "cyclic", "--tool-arg", "node=1", "--",
                    *hostile_cmd("big-schema"))
    assert proc.returncode == 1  # the server knows no tool "cyclic": a JSON-RPC error, after the call was sent
    assert ("spyglass: warning: not validating arguments: tool 'cyclic': the schema's references form a cycle "
            "that never ends") in proc.stderr.splitlines()
    calls = [json.loads(r["text"]) for r in map(json.loads, trace.read_text().splitlines())
             if r["dir"] == "out" and '"tools/call"' in r["text"]]
    assert [c["params"]["arguments"] for c in calls] == [{"node": 1}]


def test_asking_for_a_task_the_server_or_tool_does_not_offer_warns_and_asks_anyway():
    unadvertised, forbidden = runs(
        ["--task", "--tool-name", "echo", "--tool-arg", "message=x", "--", *hostile_cmd("task-unadvertised")],
        # --no-validate lists no tools for a schema: they are listed to learn the tool's task support
        ["--task", "--no-validate", "--tool-name", "add", "--tool-args-json", '{"a": 1, "b": 2}', "--",
         *hostile_cmd("task-eager-result")])
    assert ("spyglass: warning: the server does not declare tasks.requests.tools.call; asking for a task anyway"
            in unadvertised.stderr.splitlines())
    assert unadvertised.returncode == 1  # that server then refuses tasks/get (a JSON-RPC error)
    assert forbidden.returncode == 0, forbidden.stderr
    assert forbidden.stderr.splitlines() == [
        "spyglass: warning: tool 'add' does not declare task support (execution.taskSupport); asking for a task "
        "anyway",
        "spyglass: task task-1: working: working (hostile)",
        "spyglass: task task-1: completed: completed (hostile)"]
    assert json.loads(forbidden.stdout)["content"] == [{"type": "text", "text": "done after 3 polls"}]


def test_progress_is_shown_on_a_terminal_and_its_line_ended():
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([PY, "-m", "inspector", "--cli", "--tool-name", "long_task", "--tool-arg", "steps=3",
                                 "--tool-arg", "step_ms=20", *DEMO], stdout=subprocess.PIPE, stderr=slave,
                                cwd=str(ROOT))
        os.close(slave)
        seen = b""
        while select.select([master], [], [], 60)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal's other end closed: the CLI has exited
                break
            if not chunk:
                break
            seen += chunk
        out, _ = proc.communicate(timeout=60)
    finally:
        os.close(master)
    assert proc.returncode == 0
    assert json.loads(out)["content"][0]["text"] == "Done: 3 steps of 20 ms each."
    # each step overwrites the line; the last one is ended, so the next output starts a line of its own
    assert seen.decode() == ("\rspyglass: progress 1/3 Step 1 of 3\rspyglass: progress 2/3 Step 2 of 3"
                             "\rspyglass: progress 3/3 Step 3 of 3\r\n")


# --- authorization flags ---------------------------------------------------------------------------

def _fake_as():
    """tests/auth/fake_as.py: a local authorization server with a protected MCP endpoint."""
    if "fake_as" in sys.modules:
        return sys.modules["fake_as"]
    spec = importlib.util.spec_from_file_location("fake_as", ROOT / "tests" / "auth" / "fake_as.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["fake_as"] = module
    return module


BROWSER = """#!{python}
# The user's browser: opens the authorization URL and follows its redirect back to Spyglass.
import pathlib, sys, urllib.request
pathlib.Path({seen!r}).write_text(sys.argv[1])
opener = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))
opener.open(sys.argv[1], timeout=30).read()
"""


def test_signing_in_through_the_browser_with_no_keyring_to_keep_the_tokens(tmp_path):
    seen = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    browser.write_text(BROWSER.format(python=PY, seen=str(seen)))
    browser.chmod(0o755)
    env = {**os.environ, "BROWSER": str(browser), "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    main, side = pty.openpty()  # a terminal: the address is opened once the user says yes
    with _fake_as().running(scopes_supported=["mcp:read"]) as server:
        run = subprocess.Popen([PY, "-m", "inspector", "--cli", "--auth-timeout", "60", "--transport", "http",
                                server.mcp_url], stdin=side, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               cwd=str(ROOT), env=env)
        os.close(side)
        said = b""
        try:
            while b"[y/N]" not in said and select.select([run.stderr], [], [], 60)[0]:
                chunk = os.read(run.stderr.fileno(), 4096)
                if not chunk:
                    break
                said += chunk
            os.write(main, b"y\n")
            out, err = run.communicate(timeout=60)
        finally:
            os.close(main)
        proc = subprocess.CompletedProcess(run.args, run.returncode, out.decode(), (said + err).decode())
        tokens = set(server.tokens)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["tools"][0]["name"] == "whoami"
    assert seen.read_text().startswith(f"{server.base}/authorize?")
    lines = proc.stderr.splitlines()
    assert f"spyglass: the authorization server asks you to sign in on {server.base.split('//')[1]}:" in lines
    assert f"  {seen.read_text()}" in lines
    assert any(line.startswith("spyglass: warning: Tokens cannot be saved: no OS keyring is available (no keyring "
                               "service was found") for line in lines)
    assert tokens and not any(token in proc.stdout + proc.stderr for token in tokens)


def test_a_client_secret_read_from_a_file(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret-from-file\n")
    with _fake_as().running("no-dcr") as server:
        server.clients["my-client"] = "s3cret-from-file"
        ok, missing = runs(
            ["--auth-headless", "--token-store", "memory", "--client-id", "my-client", "--client-secret",
             f"@{secret}", "--transport", "http", server.mcp_url],
            ["--auth-headless", "--token-store", "memory", "--client-id", "my-client", "--client-secret",
             f"@{tmp_path / 'nope.txt'}", "--transport", "http", server.mcp_url])
        asked = list(server.authorization_requests)
    assert ok.returncode == 0, ok.stderr
    assert [a["client_id"] for a in asked] == ["my-client"]  # the entered client, with the secret from the file
    assert "s3cret-from-file" not in ok.stdout + ok.stderr
    failed(missing, 1, "usage", f"--client-secret: cannot read {tmp_path / 'nope.txt'}: No such file or directory")


def test_every_secret_flag_takes_a_file_and_names_the_one_it_cannot_read(tmp_path):
    """No server listens on port 9: secrets are read before connecting, so the file is what is reported."""
    flags = ["--private-key", "--idp-client-secret"]
    missing = tmp_path / "missing"
    procs = runs(*[["--auth-headless", "--client-id", "me", flag, f"@{missing}", "http://127.0.0.1:9/mcp"]
                   for flag in flags])
    for flag, proc in zip(flags, procs):
        failed(proc, 1, "usage", f"{flag}: cannot read {missing}: No such file or directory")


def test_a_stdio_server_is_started_before_asyncio_is_imported(tmp_path):
    """The server boots while the rest of Spyglass imports (bench/cli_oneshot.py measures what it saves)."""
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent(f"""
        import sys
        from inspector.transport import process
        real = process.start
        def start(*a, **k):
            print("asyncio loaded at start:", "asyncio" in sys.modules, file=sys.stderr)
            return real(*a, **k)
        process.start = start
        from inspector.cli import main
        sys.exit(main(["--cli", "--method", "ping", "--", {PY!r}, "-m", "inspector", "--demo-server"]))
    """))
    proc = subprocess.run([PY, str(probe)], capture_output=True, text=True, timeout=60 * SLOWDOWN,
                          cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    assert "asyncio loaded at start: False" in proc.stderr


def test_an_interrupt_before_the_transport_takes_the_server_over_leaves_no_server(monkeypatch, capsys):
    import asyncio

    from inspector.cli import oneshot

    started: list[Any] = []
    real = oneshot.start_process

    def start(spec: Any) -> Any:
        started.append(real(spec))
        return started[-1]

    def interrupted(coro: Any) -> Any:
        coro.close()
        raise KeyboardInterrupt

    monkeypatch.setattr(oneshot, "start_process", start)
    monkeypatch.setattr(asyncio, "run", interrupted)
    code = oneshot.main(["--cli", "--", PY, "-m", "inspector", "--demo-server"])
    assert code == 130 and "interrupted" in capsys.readouterr().err
    assert started and started[0].returncode is not None  # ended and reaped


def test_a_value_off_its_format_is_sent_with_a_warning():
    """A format is an annotation: the server, not Spyglass, decides (here the demo refuses it as a tool error)."""
    proc = spyglass("--tool-name", "create_event", "--tool-arg", "title=x", "--tool-arg", "when=tomorrow", *DEMO)
    assert proc.returncode == 5, proc.stderr
    warning = "spyglass: warning: /when: 'tomorrow' is not a 'date-time' (a format is a hint: sent as it is)"
    assert warning in proc.stderr
    assert "RFC 3339" in json.loads(proc.stdout)["content"][0]["text"]
