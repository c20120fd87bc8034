"""`spyglass check` as a user runs it: against a server that plants every rule's defect once and its clean
twin, real peers (the demo server in both eras, server-everything, server-filesystem, the SDK server),
servers that crash or hang, and the report formats, ignores and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from support import PY, ROOT, SDK_SERVER, SLOWDOWN, demo_cmd, everything_cmd, hostile_cmd

from inspector.checks.rules import RULES, TRUST_RULES

PLANTED = [PY, str(Path(__file__).with_name("planted_server.py"))]
FILESYSTEM = ROOT / "tests/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"

# Every rule, the target its planted defect is reported on ("frame:" for any frame).
PLANTED_DEFECTS = {
    "schema-violation": "frame:",
    "tool-name-invalid": "tool:get weather!",
    "tool-name-duplicate": "tool:twice",
    "description-missing": "tool:undescribed",
    "description-vague": "tool:fetch_data",
    "param-description-missing": "tool:convert",
    "input-schema-invalid": "tool:broken_schema",
    "annotations-contradict": "tool:wipe_cache",
    "list-order-unstable": "list:prompts",
    "pagination-cursor-loop": "list:templates",
    "capability-undeclared": "frame:",
    "structured-content-missing": "tool:stats",
    "structured-content-mismatch": "tool:forecast",
    "structured-text-missing": "tool:forecast",
    "unknown-tool-not-protocol-error": "server",
    "tool-error-as-protocol-error": "tool:lookup",
    "tool-list-cost": "tool:manual",
    "schema-unportable": "tool:pick_color",
}


def check(*args: str, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "inspector", "check", *args], capture_output=True, text=True,
                          timeout=timeout * SLOWDOWN, cwd=str(cwd), env={**os.environ, "PYTHONPATH": str(ROOT)})


@cache
def report(*args: str) -> tuple[int, dict]:
    """A JSON report (and the exit code), run once per set of arguments."""
    proc = check("--format", "json", *args)
    assert proc.returncode in (0, 9), proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def planted(clean: bool = False) -> tuple[int, dict]:
    return report("--call", "read-only", "--", *PLANTED, *(["--clean"] if clean else []))


def found(data: dict, rule: str) -> list[dict]:
    return [f for f in data["findings"] if f["rule"] == rule]


def test_every_rule_has_a_planted_defect():
    # (the trust rules' defects are planted in tests/hostile/trust_server.py: tests/checks/test_trust.py)
    assert set(PLANTED_DEFECTS) == set(RULES) - TRUST_RULES


@pytest.mark.parametrize("rule", sorted(PLANTED_DEFECTS))
def test_each_rule_fires_on_its_defect_and_stays_silent_on_the_clean_server(rule):
    _code, bad = planted()
    target = PLANTED_DEFECTS[rule]
    hits = found(bad, rule)
    assert any(f["target"] == target or (target.endswith(":") and f["target"].startswith(target)) for f in hits), \
        (rule, hits)
    for f in hits:
        assert f["severity"] in ("error", "warning", "info") and f["spec"].startswith("https://")
        assert f["message"] and "\n" not in f["message"]
    _code, clean = planted(clean=True)
    assert found(clean, rule) == []


def test_the_json_report_is_the_contract_for_scripts():
    code, data = planted()
    assert code == 9  # error findings
    assert data["server"] == {"name": "planted", "version": "1.0.0", "protocolVersion": "2025-11-25"}
    assert set(data["summary"]) == {"error", "warning", "info"}
    assert sum(data["summary"].values()) == len(data["findings"])
    assert all(set(f) == {"rule", "severity", "target", "message", "spec"} for f in data["findings"])
    severities = [f["severity"] for f in data["findings"]]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)  # worst first
    assert data["cost"]["count"] == 16 and data["cost"]["tokens"] > 10_000
    # read-only, never wipe_cache
    assert data["called"] == ["weather", "stats", "forecast", "lookup", "pick_color", "manual"]
    assert data["notes"] == ["long_job: not called (it runs only as a task)",
                             "impossible: not called (no valid arguments could be made from its inputSchema)"]
    code, clean = planted(clean=True)
    assert code == 0 and clean["findings"] == [] and clean["summary"] == {"error": 0, "warning": 0, "info": 0}


def test_one_mistake_in_many_frames_is_one_finding():
    _code, data = planted()
    schema = found(data, "schema-violation")
    assert len(schema) == 1 and "(in 2 frames)" in schema[0]["message"]  # resources/list read twice
    assert "/resources/0/size" in schema[0]["message"] and "2025-11-25" in schema[0]["message"]


def test_text_report_groups_by_severity_and_ends_with_a_summary():
    proc = check("--call", "read-only", "--", *PLANTED)
    assert proc.returncode == 9, proc.stderr
    out = proc.stdout
    assert out.index("Errors (") < out.index("Warnings (") < out.index("Info (")
    assert "  tool-name-invalid  tool:get weather!\n" in out
    assert "Tool list: 16 tools" in out
    assert "Called with made-up arguments: weather, stats, forecast, lookup, pick_color, manual" in out
    assert "Note: long_job: not called (it runs only as a task)" in out
    last = out.strip().splitlines()[-1]
    assert last.endswith(" info") and "errors" in last and "warnings" in last


def test_fail_on_ignore_and_project_files(tmp_path):
    errors = sorted({r for r, rule in RULES.items() if rule.severity == "error"})
    ignore = [a for r in errors for a in ("--ignore", r)]
    assert check(*ignore, "--", *PLANTED, cwd=tmp_path).returncode == 0  # only warnings and info left
    assert check(*ignore, "--fail-on", "warning", "--", *PLANTED, cwd=tmp_path).returncode == 9
    # a rule's finding about one target, with a wildcard
    proc = check("--format", "json", "--ignore", "tool-name-invalid:tool:get*", "--", *PLANTED, cwd=tmp_path)
    assert not found(json.loads(proc.stdout), "tool-name-invalid")
    proc = check("--format", "json", "--ignore", "tool-name-invalid:tool:other", "--", *PLANTED, cwd=tmp_path)
    assert found(json.loads(proc.stdout), "tool-name-invalid")
    # the project's own files
    (tmp_path / "pyproject.toml").write_text(f"[tool.spyglass.check]\nignore = {json.dumps(errors[:3])}\n")
    (tmp_path / ".spyglass-check.toml").write_text(f'ignore = {json.dumps(errors[3:])}\nfail-on = "error"\n')
    assert check("--", *PLANTED, cwd=tmp_path).returncode == 0
    (tmp_path / ".spyglass-check.toml").write_text('fail-on = "warning"\n')
    assert check("--", *PLANTED, cwd=tmp_path).returncode == 9


@pytest.mark.parametrize(("content", "message"), [
    ("ignore = [", "cannot be read as TOML"),
    ('ignore = "schema-violation"', "ignore must be a list"),
    ('ignore = ["no-such-rule"]', "unknown rule 'no-such-rule'"),
    ('fail-on = "fatal"', "fail-on must be"),
])
def test_a_broken_project_file_is_a_usage_error_that_names_it(tmp_path, content, message):
    (tmp_path / ".spyglass-check.toml").write_text(content + "\n")
    proc = check("--", *demo_cmd(), cwd=tmp_path)
    assert proc.returncode == 1 and message in proc.stderr and ".spyglass-check.toml" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_usage_errors_and_the_rule_list(tmp_path):
    proc = check("--ignore", "nope", "--", *demo_cmd())
    assert proc.returncode == 1 and "--ignore: unknown rule 'nope'" in proc.stderr
    assert check().returncode == 1  # no server
    listing = check("--list-rules")
    assert listing.returncode == 0
    assert [line.split()[0] for line in listing.stdout.splitlines()] == list(RULES)
    proc = check("--junit", str(tmp_path / "missing" / "out.xml"), "--", *demo_cmd())
    assert proc.returncode == 1 and "--junit" in proc.stderr


def test_junit_has_a_case_per_rule_and_target_and_fails_the_errors(tmp_path):
    out = tmp_path / "check.xml"
    proc = check("--junit", str(out), "--", *PLANTED)
    assert proc.returncode == 9
    suite = ET.parse(out).getroot()
    assert suite.tag == "testsuite" and suite.get("name") == "spyglass check planted"
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases)
    failed = [c for c in cases if c.find("failure") is not None]
    assert int(suite.get("failures")) == len(failed) > 0
    assert all(c.find("failure").get("type") == "error" for c in failed)
    names = {c.get("name") for c in cases}
    assert "tool-name-invalid tool:get weather!" in names and "description-vague tool:fetch_data" in names
    passing = [c for c in cases if c.find("failure") is None]
    assert any(c.find("system-out") is not None for c in passing)  # warnings are told, not failed
    clean = tmp_path / "clean.xml"
    assert check("--junit", str(clean), "--", *PLANTED, "--clean").returncode == 0
    clean_suite = ET.parse(clean).getroot()
    assert clean_suite.get("failures") == "0" and len(clean_suite.findall("testcase")) == len(RULES)
    assert clean_suite.find("properties/property").get("name") == "spyglass.masked"  # what was masked: nothing


@pytest.mark.parametrize(("protocol", "calls"), [("legacy", "read-only"), ("modern", "read-only"), ("auto", "none")])
def test_the_demo_server_is_clean_in_both_eras(protocol, calls):
    code, data = report("--protocol", protocol, "--call", calls, "--", *demo_cmd())
    # one warning by design: create_event's priority is a nullable enum (`type: ["string", "null"]`), which the
    # demo keeps to show how a form offers "no value"; single-type dialects would want anyOf instead
    portability = [f for f in data["findings"] if f["rule"] == "schema-unportable"]
    assert [(f["target"], f["severity"]) for f in portability] == [("tool:create_event", "warning")]
    assert "inputSchema.properties.priority" in portability[0]["message"]
    assert code == 0 and [f for f in data["findings"] if f not in portability] == [], data["findings"]
    assert len(data.get("called", [])) >= (10 if calls == "read-only" else 0)


def test_server_everything_is_told_what_a_real_author_would_be():
    code, data = report("--", *everything_cmd())  # (its read-only tools include a 10 s long-running one)
    rules = {f["rule"] for f in data["findings"]}
    assert "schema-violation" not in rules and code == 0
    assert not rules & TRUST_RULES, data["findings"]  # nothing hidden, no instructions, no look-alikes
    assert found(data, "unknown-tool-not-protocol-error")  # it answers an unknown tool with isError
    assert data["cost"]["count"] >= 10


@pytest.mark.skipif(not FILESYSTEM.exists(), reason="server-filesystem is installed by make test")
def test_server_filesystem(tmp_path):
    code, data = report("--", "node", str(FILESYSTEM), str(tmp_path))
    assert code == 0 and "schema-violation" not in {f["rule"] for f in data["findings"]}
    assert found(data, "param-description-missing")


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_the_sdk_server_in_both_eras(protocol):
    code, data = report("--protocol", protocol, "--", PY, str(SDK_SERVER))
    assert code == 0 and "schema-violation" not in {f["rule"] for f in data["findings"]}
    assert not {f["rule"] for f in data["findings"]} & TRUST_RULES, data["findings"]
    assert data["server"]["name"] == "spyglass-sdk-peer"


@pytest.mark.parametrize(("case", "code", "words"), [
    ("die-at-start", 4, "exited with code 3"),
    ("exit-during-call", 4, "panic: boom"),
    ("no-reply", 7, "no answer within 2 s"),
])
def test_a_server_that_crashes_or_hangs_ends_the_check_with_its_exit_code(case, code, words):
    proc = check("--timeout", "2", "--", *hostile_cmd(case), timeout=60)
    assert proc.returncode == code, proc.stderr
    assert words in proc.stderr and "Traceback" not in proc.stderr


def test_a_flooding_server_is_checked_all_the_same():
    proc = check("--format", "json", "--timeout", "20", "--", *hostile_cmd("flood"), timeout=120)
    assert proc.returncode in (0, 9), proc.stderr
    assert "Traceback" not in proc.stderr and json.loads(proc.stdout)["server"]


def test_a_server_with_5000_tools_is_checked():
    """bench/check_many_tools.py times it; here: it finishes and every tool is counted."""
    code, data = report("--", *PLANTED, "--clean", "--tools", "5000")
    assert code == 0 and data["cost"]["count"] == 5015


def test_the_check_never_loads_qt():
    code = ("import sys, inspector.cli.check, inspector.checks.run, inspector.checks.report; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(ROOT))
