"""`spyglass audit` as a user runs it: host configurations written by the test (Claude Desktop and VS Code in a
temporary home, and files given with --config), each server checked, the tool name two servers share reported,
and servers that fail or hang reported without ending the audit."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from support import PY, ROOT, SDK_SERVER, SLOWDOWN, hostile_cmd

PLANTED = ROOT / "tests" / "checks" / "planted_server.py"


def audit(*args: str, home: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(home)}
    return subprocess.run([PY, "-m", "inspector", "audit", *args], capture_output=True, text=True,
                          timeout=timeout * SLOWDOWN, cwd=str(home), env=env)


def write(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def hosts_in(home: Path) -> None:
    """Claude Desktop runs the demo server (and one that cannot start), VS Code the SDK server: both offer `echo`."""
    write(home / ".config" / "Claude" / "claude_desktop_config.json", {"mcpServers": {
        "demo": {"command": PY, "args": ["-m", "inspector.demo"], "env": {"PYTHONPATH": str(ROOT)}},
        "gone": {"command": str(home / "no-such-server")},
    }})
    write(home / ".config" / "Code" / "User" / "mcp.json", {"servers": {
        "sdk": {"type": "stdio", "command": PY, "args": [str(SDK_SERVER)]},
    }})


def test_the_audit_reads_the_hosts_of_the_home_folder_and_reports_shadowing(tmp_path):
    hosts_in(tmp_path)
    proc = audit("--format", "json", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    servers = {s["name"]: s for s in data["servers"]}
    assert set(servers) == {"demo", "gone", "sdk"}
    assert servers["demo"]["status"] == "checked" and servers["sdk"]["status"] == "checked"
    assert servers["demo"]["sources"][0]["host"] == "Claude Desktop"
    assert servers["sdk"]["sources"][0]["host"] == "VS Code (user mcp.json)"
    assert servers["demo"]["report"]["server"]["name"] == "spyglass-demo"
    assert servers["gone"]["status"] == "failed" and "command not found" in servers["gone"]["problem"]
    shadow = [(f["rule"], f["target"], f["severity"]) for f in data["findings"]]
    assert shadow == [("tool-name-shadowing", "demo/tool:echo", "warning"),
                      ("tool-name-shadowing", "sdk/tool:echo", "warning")]
    human = audit(home=tmp_path)
    assert human.returncode == 0 and "tool-name-shadowing  demo/tool:echo" in human.stdout
    assert "== gone" in human.stdout and "failed: command not found" in human.stdout


def test_files_given_are_read_instead_and_an_error_finding_fails_the_audit(tmp_path):
    cursor = write(tmp_path / "cursor.json", {"mcpServers": {
        "planted": {"command": PY, "args": [str(PLANTED)]},
        "hangs": {"command": hostile_cmd("no-reply-all")[0], "args": hostile_cmd("no-reply-all")[1:]},
    }})
    vscode = write(tmp_path / "mcp.json", {"servers": {
        "needs-key": {"command": PY, "args": [str(SDK_SERVER)], "env": {"KEY": "${input:key}"}},
    }, "inputs": [{"id": "key", "type": "promptString", "description": "API key", "password": True}]})
    proc = audit("--format", "json", "--config", str(cursor), "--config", str(vscode), "--server-timeout", "3",
                 "--jobs", "2", home=tmp_path)
    assert proc.returncode == 9, proc.stderr
    data = json.loads(proc.stdout)
    servers = {s["name"]: s for s in data["servers"]}
    planted = servers["planted"]["report"]["findings"]
    assert any(f["severity"] == "error" and f["rule"] == "tool-name-invalid" for f in planted)
    assert servers["hangs"] == {**servers["hangs"], "status": "failed", "problem": "no result within 3 s"}
    assert servers["needs-key"]["status"] == "skipped" and "API key" in servers["needs-key"]["problem"]
    assert data["summary"]["error"] >= 1


def test_no_configuration_and_bad_options_are_said_plainly(tmp_path):
    proc = audit(home=tmp_path)
    assert proc.returncode == 0 and "no host configuration found" in proc.stdout
    bad = audit("--config", str(tmp_path / "missing.json"), home=tmp_path)
    assert bad.returncode == 1 and "no such file" in bad.stderr and "Traceback" not in bad.stderr
    nowhere = audit("--home", str(tmp_path / "nowhere"), home=tmp_path)  # (was read as a home with no host)
    assert nowhere.returncode == 1 and "not a folder" in nowhere.stderr
    folder = audit("--config", str(tmp_path), home=tmp_path)
    assert folder.returncode == 1 and "is a folder" in folder.stderr
    # a file you name that cannot be read is a usage error, as for check --config (it was exit 0, "0 servers":
    # a CI job auditing a config with a typo passed); one found in a default location is a note, as before
    broken = write(tmp_path / "broken.json", {"nothing": 1})
    proc = audit("--config", str(broken), home=tmp_path)
    assert proc.returncode == 1 and "not a server list" in proc.stderr and "Traceback" not in proc.stderr
    (tmp_path / "bad.json").write_text("{bad", encoding="utf-8")
    proc = audit("--config", str(tmp_path / "bad.json"), home=tmp_path)
    assert proc.returncode == 1 and "invalid JSON at line 1" in proc.stderr
    write(tmp_path / ".cursor" / "mcp.json", {"nothing": 1})
    proc = audit(home=tmp_path)
    assert proc.returncode == 0 and "not read" in proc.stdout
