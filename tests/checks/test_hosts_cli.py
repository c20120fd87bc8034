"""`spyglass check --host` as a user runs it: a server that plants one defect per profile rule gets exactly
the verdicts (and reasons) each host's profile makes of it, real peers get verdicts pinned here, and the
report formats, the as-seen tools, project profiles and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
from functools import cache
from pathlib import Path
from xml.etree import ElementTree as ET

from support import PY, ROOT, SDK_SERVER, SLOWDOWN, demo_cmd, everything_cmd

PLANTED = [PY, str(Path(__file__).with_name("hosts_planted_server.py"))]
SEED_SERVER = ROOT / "tests" / "peers" / "seed_server.py"
B, D = "blocked", "degraded"

# Every reason each host gives the planted server: target -> level (tests/checks/hosts_planted_server.py
# says which profile fact each defect meets).
PLANTED_REASONS = {
    "chatgpt": {"transport": B, "tool:records.lookup": B, "tool:batch_job": B, "tool:ask_name": B,
                "tool:summarise": B, "tool:where_am_i": D, "capability:resources": D,
                "capability:resource_templates": D, "capability:prompts": D},
    "claude-code": {"tool:summarise_the_quarterly_figures_for_every_region_now": B, "tool:either_or": B,
                    "tool:batch_job": B, "tool:summarise": B, "tool:records.lookup": B, "tool:long_manual": D,
                    "tool:show_board": D, "tool:beep": D, "tool:dump": D},
    "claude-desktop": {"tool:records.lookup": B, "tool:either_or": B, "tool:batch_job": B, "tool:ask_name": B,
                       "tool:summarise": B, "tool:beep": D, "capability:instructions": D},
    "codex": {"tool:batch_job": B, "tool:summarise": B, "tool:records.lookup": D, "tool:strict_args": D,
              "tool:summarise_the_quarterly_figures_for_every_region_now": D,
              "tool:show_board": D, "tool:beep": D, "tool:where_am_i": D, "capability:prompts": D},
    "cursor": {"tool:batch_job": B, "tool:summarise": B, "list:tools": D, "tool:show_board": D, "tool:beep": D,
               "capability:resources": D, "capability:resource_templates": D, "capability:instructions": D},
    "gemini-cli": {"tool:batch_job": B, "tool:ask_name": B, "tool:summarise": B,
                   "tool:summarise_the_quarterly_figures_for_every_region_now": D,
                   "tool:show_board": D, "tool:where_am_i": D, "capability:resources": D,
                   "capability:resource_templates": D},
    "inspector": {},
    "vscode": {"tool:records.lookup": D, "tool:long_manual": D},
    "windsurf": {"tool:batch_job": B, "tool:ask_name": B, "tool:summarise": B, "tool:show_board": D,
                 "tool:where_am_i": D, "capability:resources": D, "capability:resource_templates": D,
                 "capability:prompts": D, "capability:instructions": D},
    "zed": {"tool:batch_job": B, "tool:ask_name": B, "tool:summarise": B, "tool:show_board": D,
            "tool:snapshot": D, "tool:beep": D, "tool:where_am_i": D, "capability:resources": D,
            "capability:resource_templates": D, "capability:instructions": D},
}

# Real peers: each host's verdict, and what blocks it.
EVERY_HOST = sorted(PLANTED_REASONS)


def verdicts(blocked: dict[str, list[str]], works: tuple[str, ...] = ("inspector", "vscode")) -> dict[str, str]:
    return {h: B if blocked.get(h) else "works" if h in works else D for h in EVERY_HOST}


def check(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "inspector", "check", *args], capture_output=True, text=True,
                          timeout=120 * SLOWDOWN, cwd=str(cwd), env={**os.environ, "PYTHONPATH": str(ROOT)})


@cache
def report(*args: str) -> tuple[int, dict]:
    proc = check("--format", "json", "--host", "all", *args)
    assert proc.returncode in (0, 9), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def planted() -> tuple[int, dict]:
    return report("--show-tools", "--call", "read-only", "--", *PLANTED)


def reasons(data: dict) -> dict[str, dict[str, str]]:
    return {h: {r["target"]: r["level"] for r in v["reasons"]} for h, v in data["hosts"].items()}


def blocked(data: dict) -> dict[str, list[str]]:
    return {h: sorted(r["target"] for r in v["reasons"] if r["level"] == B) for h, v in data["hosts"].items()}


def test_the_planted_server_gets_exactly_the_known_verdicts():
    code, data = planted()
    assert code == 9  # a host is blocked
    assert reasons(data) == PLANTED_REASONS
    expected = {h: B if B in r.values() else D if r else "works" for h, r in PLANTED_REASONS.items()}
    assert {h: v["verdict"] for h, v in data["hosts"].items()} == expected
    for host in data["hosts"].values():
        for reason in host["reasons"]:
            assert reason["message"] and reason["fix"], reason


def test_the_observed_session_counts():
    _code, data = planted()
    assert data["observed"]["asked"] == {"ask_name": ["elicitation_form"], "summarise": ["sampling"],
                                         "where_am_i": ["roots"]}
    assert data["observed"]["kinds"]["snapshot"] == ["image"]
    zed = {r["target"]: r["message"] for r in data["hosts"]["zed"]["reasons"]}
    assert "answered with an image block; Zed shows its model no image content" in zed["tool:snapshot"]
    code_limit = {r["target"]: r["message"] for r in data["hosts"]["claude-code"]["reasons"]}
    assert "over Claude Code's 25,000-token limit" in code_limit["tool:dump"]
    # without calls nothing is observed, and nothing observed is judged
    _code, quiet = report("--", *PLANTED)
    assert "tool:snapshot" not in reasons(quiet)["zed"] and "tool:ask_name" not in reasons(quiet)["zed"]


def test_what_each_model_sees_beside_what_the_server_sent():
    _code, data = planted()
    claude = data["hosts"]["claude-code"]["seen"]
    assert claude["records.lookup"]["seen"] is None  # the Messages API refuses the dot: every request fails
    assert claude["records.lookup"]["sent"]["name"] == "records.lookup"
    assert len(claude["long_manual"]["seen"]["description"]) == 2048
    assert claude["summarise_the_quarterly_figures_for_every_region_now"]["seen"] is None
    codex = data["hosts"]["codex"]["seen"]["strict_args"]
    assert codex["sent"]["inputSchema"]["properties"]["title"]["not"] == {"const": ""}
    assert "not" not in codex["seen"]["inputSchema"]["properties"]["title"]
    assert "inputSchema.properties.title.not: dropped (not a keyword Codex's model API takes)" in codex["changes"]
    gemini = data["hosts"]["gemini-cli"]["seen"]
    assert gemini["strict_args"]["seen"]["inputSchema"] == gemini["strict_args"]["sent"]["inputSchema"]
    assert gemini["summarise_the_quarterly_figures_for_every_region_now"]["seen"]["name"] == \
        "mcp_planted_summarise_the_quar...y_figures_for_every_region_now"
    assert data["hosts"]["cursor"]["tools"]["batch_job"] == B
    assert data["hosts"]["vscode"]["tools"]["records.lookup"] == D


def test_text_junit_and_a_single_host(tmp_path):
    junit = tmp_path / "check.xml"
    proc = check("--host", "vscode,inspector", "--show-tools", "--junit", str(junit), "--", *PLANTED)
    assert proc.returncode == 0, proc.stderr  # degraded and works: nothing fails
    assert "Hosts\n  vscode     degraded\n      degraded  tool:long_manual" in proc.stdout
    assert "As VS Code (GitHub Copilot)'s model sees the tools (profile 2026-12-07)" in proc.stdout
    assert "  records.lookup  ->  mcp_planted_records_lookup" in proc.stdout
    assert "1 works, 1 degraded, 0 blocked" in proc.stdout
    suite = ET.parse(junit).getroot()
    cases = {c.get("name"): c for c in suite.iter("testcase") if c.get("classname", "").endswith(".hosts")}
    assert set(cases) == {"host vscode", "host inspector"} and cases["host vscode"].find("failure") is None
    proc = check("--host", "zed", "--junit", str(junit), "--", *PLANTED)
    assert proc.returncode == 9
    case = next(c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name") == "host zed")
    assert case.find("failure").get("type") == B


def test_usage_errors_and_a_project_profile(tmp_path):
    proc = check("--host", "nosuch", "--", *PLANTED)
    assert proc.returncode == 1 and "unknown host nosuch; hosts: chatgpt" in proc.stderr
    assert check("--show-tools", "--", *PLANTED).returncode == 1
    proc = check("--host", "", "--", *PLANTED)  # an empty list was taken as no --host at all
    assert proc.returncode == 1 and "--host: unknown host (none)" in proc.stderr
    folder = tmp_path / ".spyglass" / "hosts"
    folder.mkdir(parents=True)
    (folder / "vscode.toml").write_text('[limits]\ndescription = { value = 4096, confidence = "medium", '
                                        'why = "our insiders build" }\n')
    proc = check("--host", "vscode", "--configured-as", "p", "--", *PLANTED, cwd=tmp_path)
    assert proc.returncode == 0 and "tool:long_manual" not in proc.stdout and "mcp_p_records_lookup" in proc.stdout
    listed = check("--list-hosts", cwd=tmp_path).stdout
    line = next(x for x in listed.splitlines() if x.startswith("vscode "))
    assert line.split()[:2] == ["vscode", "2026-12-07"]
    assert "VS Code (GitHub Copilot)  (inspector/checks/hosts/data/vscode.toml, " in line
    (folder / "vscode.toml").write_text('[limits]\ndescription = { value = 0 }\n')
    proc = check("--host", "vscode", "--", *PLANTED, cwd=tmp_path)
    assert proc.returncode == 1 and "vscode.toml:2: limits.description = 0: must be a positive whole number" in \
        proc.stderr and "Traceback" not in proc.stderr


def test_the_demo_server_verdicts_are_pinned():
    _code, data = report("--call", "read-only", "--", *demo_cmd())
    assert blocked(data) == {**dict.fromkeys(EVERY_HOST, []), "chatgpt": ["tool:ask_user", "transport"],
                             **{h: ["tool:ask_user"] for h in ("claude-desktop", "gemini-cli", "windsurf", "zed")}}
    assert {h: v["verdict"] for h, v in data["hosts"].items()} == verdicts(blocked(data))


def test_server_everything_verdicts_are_pinned():
    _code, data = report("--", *everything_cmd())
    task_only = ["tool:simulate-research-query"]  # it runs only as a task
    assert blocked(data) == {**{h: task_only for h in EVERY_HOST}, "chatgpt": [*task_only, "transport"],
                             "inspector": [], "vscode": []}
    assert {h: v["verdict"] for h, v in data["hosts"].items()} == verdicts(blocked(data))


def test_the_sdk_server_verdicts_are_pinned():
    _code, data = report("--call", "read-only", "--", PY, str(SDK_SERVER))
    assert blocked(data) == {**dict.fromkeys(EVERY_HOST, []), "chatgpt": ["transport"]}
    assert {h: v["verdict"] for h, v in data["hosts"].items()} == \
        verdicts(blocked(data), works=("inspector", "vscode", "claude-code"))


def test_the_mcpserver_seed_server_verdicts_are_pinned():
    # mcp 2.x's MCPServer is the SDK's FastMCP, renamed; write_poem samples the host's model
    _code, data = report("--call", "read-only", "--", PY, str(SEED_SERVER))
    assert blocked(data) == {**{h: ["tool:write_poem"] for h in EVERY_HOST}, "chatgpt": ["tool:write_poem",
                             "transport"], "inspector": [], "vscode": []}
    assert {h: v["verdict"] for h, v in data["hosts"].items()} == verdicts(blocked(data))
