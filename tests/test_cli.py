"""`spyglass --cli` as scripts use it: real processes, every exit code, bad input."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support import HOSTILE, PY, ROOT, demo_cmd, everything_cmd, hostile_cmd


def spyglass(*args: str, timeout: float = 60, cwd: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "inspector", "--cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or str(ROOT))


def out_json(proc) -> dict:
    return json.loads(proc.stdout)


def one_line_error(proc) -> str:
    """The human line on stderr (the one before the JSON envelope that ends a failure's stderr)."""
    lines = proc.stderr.strip().splitlines()
    assert lines, "no message on stderr"
    assert "Traceback" not in proc.stderr
    if proc.returncode:
        assert json.loads(lines[-1])["error"]["code"], lines[-1]
        return lines[-2]
    return lines[-1]


def test_tools_list_on_the_demo_server():
    proc = spyglass("--", *demo_cmd())
    assert proc.returncode == 0, proc.stderr
    names = {t["name"] for t in out_json(proc)["tools"]}
    assert {"echo", "weather", "long_task"} <= names


def test_official_argument_order_works_too():
    proc = spyglass(*hostile_cmd(), "--method", "tools/list")
    assert proc.returncode == 0, proc.stderr
    assert [t["name"] for t in out_json(proc)["tools"]][:1] == ["echo"]


def test_call_with_coerced_arguments_and_trace(tmp_path):
    trace = tmp_path / "trace.jsonl"
    proc = spyglass("--method", "tools/call", "--tool-name", "get-sum", "--tool-arg", "a=2", "--tool-arg", "b=40",
                    "--trace", str(trace), "--", *everything_cmd())
    assert proc.returncode == 0, proc.stderr
    assert "42" in out_json(proc)["content"][0]["text"]
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert {r["dir"] for r in records} >= {"in", "out", "err"}
    call = next(r for r in records if r["dir"] == "out" and '"tools/call"' in r["text"])
    assert json.loads(call["text"])["params"]["arguments"] == {"a": 2, "b": 40}  # numbers, not "2"
    assert all(isinstance(r["ts"], float) and r["ts"] > 1.7e9 for r in records)


def test_string_property_keeps_digits_as_text():
    proc = spyglass("--tool-name", "echo", "--tool-arg", "message=2", "--", *demo_cmd())
    assert proc.returncode == 0, proc.stderr
    assert "2" in out_json(proc)["content"][0]["text"]


def test_text_format_prints_plain_text():
    proc = spyglass("--format", "human", "--tool-name", "echo", "--tool-arg", "message=plain words", "--",
                    *everything_cmd())
    assert proc.returncode == 0
    assert proc.stdout.strip().endswith("plain words") and not proc.stdout.startswith("{")


def test_env_reaches_the_server():
    proc = spyglass("-e", "SPYGLASS_PROBE=hello-env", "--tool-name", "get-env", "--", *everything_cmd())
    assert proc.returncode == 0
    assert "hello-env" in proc.stdout


def test_cwd_is_where_the_server_runs():
    proc = spyglass("--cwd", str(HOSTILE.parent), "--", PY, "server.py")
    assert proc.returncode == 0, proc.stderr


def test_config_file_and_server_name(tmp_path):
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": {
        "demo": {"command": PY, "args": ["-m", "inspector.demo"], "cwd": str(ROOT)},
        "other": {"command": "nothing-here"}}}))
    proc = spyglass("--config", str(config), "--server", "demo")
    assert proc.returncode == 0, proc.stderr
    missing = spyglass("--config", str(config), "--server", "nope")
    assert missing.returncode == 1 and "no server named 'nope'" in one_line_error(missing)
    config.write_text('{"mcpServers": {\n  "demo": {,}\n}}')
    broken = spyglass("--config", str(config), "--server", "demo")
    assert broken.returncode == 1 and "line 2" in one_line_error(broken)


# --- exit codes ------------------------------------------------------------------------------

def test_exit_1_invalid_tool_argument_names_the_field():
    proc = spyglass("--tool-name", "get-sum", "--tool-arg", "a=two", "--tool-arg", "b=1", "--", *everything_cmd())
    assert proc.returncode == 1
    assert "/a" in one_line_error(proc) and "not of type 'number'" in proc.stderr
    assert out_json(proc)["error"]["errors"][0]["path"] == "/a"


def test_no_validate_sends_invalid_arguments_anyway():
    proc = spyglass("--no-validate", "--tool-name", "add", "--tool-arg", "a=two", "--tool-arg", "b=1",
                    "--", *hostile_cmd())
    assert proc.returncode in (0, 5, 6)  # whatever the server makes of it, it was sent
    assert "invalid arguments" not in proc.stderr


def test_exit_1_usage_errors():
    assert spyglass("--method", "nope", "--", *demo_cmd()).returncode == 1
    no_server = spyglass("--method", "tools/list")
    assert no_server.returncode == 1 and "no server given" in one_line_error(no_server)
    assert spyglass("--protocol", "1999-01-01", "--", *demo_cmd()).returncode == 1


def test_exit_1_missing_binary_names_the_command():
    proc = spyglass("--", "spyglass-no-such-server", "--flag")
    assert proc.returncode == 1  # the official CLI's code for a command that cannot start
    assert "spyglass-no-such-server" in one_line_error(proc)
    assert out_json(proc)["error"]["kind"] == "connect"


def test_exit_1_server_dies_at_start_with_its_stderr():
    proc = spyglass("--", *hostile_cmd("die-at-start"))
    assert proc.returncode == 1 and out_json(proc)["error"]["kind"] == "server_exited"
    line = one_line_error(proc)
    assert "exited with code 3" in line and "could not open database" in line


def test_exit_1_unsupported_protocol_version():
    proc = spyglass("--", *hostile_cmd("bad-version"))
    assert proc.returncode == 1 and out_json(proc)["error"]["kind"] == "protocol_version"
    assert "1999-01-01" in one_line_error(proc)


def test_exit_1_initialize_refused():
    proc = spyglass("--", *hostile_cmd("init-error"))
    assert proc.returncode == 1 and "database locked" in one_line_error(proc)


def test_exit_1_server_exits_during_call():
    proc = spyglass("--tool-name", "echo", "--tool-arg", "message=x", "--", *hostile_cmd("exit-during-call"))
    assert proc.returncode == 1
    line = one_line_error(proc)
    assert "exited with code 70" in line and "panic: boom" in line


def test_exit_5_tool_error():
    proc = spyglass("--tool-name", "echo", "--tool-arg", "message=x", "--", *hostile_cmd("is-error"))
    assert proc.returncode == 5
    assert out_json(proc)["isError"] is True and "it broke" in one_line_error(proc)


def test_exit_5_unknown_tool_is_not_called():
    proc = spyglass("--tool-name", "no_such_tool", "--", *demo_cmd())
    assert proc.returncode == 5
    error = out_json(proc)["error"]
    assert error["code"] == "tool_not_found" and "no_such_tool" in one_line_error(proc)
    assert '"tools/call"' not in proc.stdout


def test_exit_1_json_rpc_error_keeps_its_code_as_rpc_code():
    proc = spyglass("--method", "prompts/get", "--prompt-name", "no_such_prompt", "--", *demo_cmd())
    assert proc.returncode == 1
    error = out_json(proc)["error"]
    assert (error["code"], error["kind"], error["rpc_code"]) == ("error", "rpc_error", -32602)


def test_exit_1_no_reply_after_timeout():
    proc = spyglass("--timeout", "1", "--tool-name", "echo", "--tool-arg", "message=x", "--",
                    *hostile_cmd("no-reply"), timeout=30)
    assert proc.returncode == 1 and out_json(proc)["error"]["kind"] == "timeout"
    assert "within 1 s" in one_line_error(proc)


def test_exit_1_server_that_never_answers_the_handshake():
    proc = spyglass("--timeout", "1", "--", *hostile_cmd("no-reply-all"), timeout=30)
    assert proc.returncode == 1 and out_json(proc)["error"]["kind"] == "timeout"


@pytest.mark.parametrize("case, words", [("tools-nope", '"tools" is a string'), ("tools-null", "null"),
                                          ("string-id", "is a string, but we sent the number")])
def test_exit_1_invalid_answers(case, words):
    proc = spyglass("--", *hostile_cmd(case))
    assert proc.returncode == 1 and out_json(proc)["error"]["kind"] == "invalid_response", proc.stderr
    assert words in one_line_error(proc)


def test_noise_on_stdout_is_traced_as_malformed_and_the_call_succeeds(tmp_path):
    trace = tmp_path / "t.jsonl"
    proc = spyglass("--trace", str(trace), "--tool-name", "echo", "--tool-arg", "message=hi", "--",
                    *hostile_cmd("noise"))
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    malformed = [r for r in records if "malformed" in r]
    reasons = " ".join(r["malformed"] for r in malformed)
    assert "bad JSON" in reasons and "not UTF-8" in reasons and "batch" in reasons and "blank" in reasons
    assert any(r["text"] == "INFO starting up" for r in malformed)


def test_cli_never_imports_qt():
    code = ("import sys; from inspector.__main__ import main; "
            f"rc = main(['--cli', '--', {PY!r}, {str(HOSTILE)!r}]); "
            "assert 'PySide6' not in sys.modules and 'qasync' not in sys.modules, 'Qt imported'; sys.exit(rc)")
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr


def test_closing_ends_the_servers_whole_process_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    script = f"sleep 300 & echo $! > {pidfile}; exec {PY} {HOSTILE}"
    proc = spyglass("--", "sh", "-c", script)
    assert proc.returncode == 0, proc.stderr
    child = int(pidfile.read_text())
    import time
    deadline = time.monotonic() + 5
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] if Path(
            f"/proc/{child}/stat").exists() else "Z"
        if state == "Z":
            break
        time.sleep(0.05)
    stat = Path(f"/proc/{child}/stat")
    alive = stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    assert not alive, "the server's child process outlived the CLI"


def test_elicitation_is_declined_unless_answered():
    declined = spyglass("--tool-name", "ask_user", "--", *demo_cmd())
    assert declined.returncode == 0 and "declined" in declined.stderr and "--elicit-accept" in declined.stderr
    accepted = spyglass(
        "--protocol",
        "legacy",
        "--elicit-accept",
        '{"name": "Ada", "colour": "blue"}',
        "--format",
        "human",
        "--tool-name",
        "ask_user",
        "--",
        *demo_cmd(),
    )
    assert accepted.returncode == 0 and "Ada" in accepted.stdout
    bad = spyglass("--elicit-accept", "[1]", "--tool-name", "ask_user", "--", *demo_cmd())
    assert bad.returncode == 1 and "JSON object" in bad.stderr


def test_sampling_reply_and_roots(tmp_path):
    sampled = spyglass(
        "--sampling-reply",
        "hi from the cli",
        "--tool-name",
        "trigger-sampling-request",
        "--tool-arg",
        "prompt=x",
        "--",
        *everything_cmd(),
    )
    assert sampled.returncode == 0 and "hi from the cli" in sampled.stdout
    refused = spyglass("--tool-name", "trigger-sampling-request", "--tool-arg", "prompt=x", "--", *everything_cmd())
    assert "sampling request declined" in refused.stderr
    rooted = spyglass("--root", str(tmp_path), "--tool-name", "get-roots-list", "--", *everything_cmd())
    assert rooted.returncode == 0 and tmp_path.as_uri() in rooted.stdout
    missing = spyglass("--root", str(tmp_path / "nope"), "--", *everything_cmd())
    assert missing.returncode == 1 and "not a folder" in missing.stderr


def test_capabilities_declared_by_the_cli(tmp_path):
    trace = tmp_path / "t.jsonl"
    proc = spyglass("--protocol", "legacy", "--trace", str(trace), "--", *demo_cmd())
    assert proc.returncode == 0
    init = next(
        json.loads(json.loads(line)["text"]) for line in trace.read_text().splitlines() if '\\"initialize\\"' in line
    )
    caps = init["params"]["capabilities"]
    # it can answer (by declining) elicitation and sampling; roots only when --root gives some
    assert "elicitation" in caps and "sampling" in caps and "roots" not in caps
