"""`--cli --method skills/list | skills/get` (SEP-2640) against tests/skills_server.py (the official SDK): the
results as sent, `--verify`'s one report per skill and its exit codes 0 / 7 / 8 / 9, the catalog budget, the
usage errors, and (when the pinned official Inspector is installed) the same verdicts from both CLIs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support import PY, demo_cmd
from test_cli import one_line_error, out_json, spyglass

HERE = Path(__file__).parent
SERVER = [PY, str(HERE / "skills_server.py")]
LEGACY = [PY, str(HERE / "hostile" / "skills_server.py")]  # declares the extension in its initialize result
NODE22 = HERE / "peers" / "node_modules" / ".bin" / "node"
PINNED = HERE / "peers" / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "cli" / "build"
PINNED = PINNED / "index.js"
OFFICIAL = Path(os.environ.get("SPYGLASS_OFFICIAL_INSPECTOR_CLI") or PINNED)


def uri(name: str) -> str:
    return f"skill://{name}/SKILL.md"


def reports(proc) -> dict[str, dict]:
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    return {r["uri"]: r for r in lines}


def envelope(proc) -> dict:
    return json.loads(proc.stderr.strip().splitlines()[-1])["error"]


def test_list_follows_every_page_and_prints_the_entries_as_sent():
    proc = spyglass("--method", "skills/list", "--", *SERVER)
    assert proc.returncode == 0, proc.stderr
    skills = out_json(proc)["skills"]
    assert [s["uri"] for s in skills] == [uri(n) for n in ("good-notes", "tampered-report", "live-status",
                                                           "huge-atlas")]
    assert skills[2]["resources"] == "dynamic"
    text = spyglass("--method", "skills/list", "--format", "text", "--", *SERVER, "--only", "good-notes,live-status")
    assert text.stdout.splitlines()[0].startswith("good-notes\tTake tidy meeting notes")
    assert text.stdout.splitlines()[1].startswith("  skill://good-notes/SKILL.md\t334 bytes\tsha256:")
    assert text.stdout.splitlines()[3:] == ["live-status\tReport the live status of the build farm (the file set is "
                                            "generated on request).\tskill://live-status/SKILL.md",
                                            '  resources: "dynamic" (no digests)']
    got = spyglass("--method", "skills/get", "--uri", uri("good-notes"), "--", *SERVER)
    assert got.returncode == 0, got.stderr
    assert out_json(got)["skill"]["frontmatter"]["name"] == "good-notes"


def test_verify_the_whole_catalog_reports_each_skill_and_exits_7():
    proc = spyglass("--method", "skills/list", "--verify", "--", *SERVER)
    assert proc.returncode == 7, proc.stderr
    by_uri = reports(proc)
    assert {u: r["outcome"] for u, r in by_uri.items()} == {
        uri("good-notes"): "verified", uri("tampered-report"): "failed", uri("live-status"): "unverifiable",
        uri("huge-atlas"): "incomplete"}
    good = by_uri[uri("good-notes")]
    assert good["ok"] and good["conformance"] == [] and good["frontmatter"] == []
    assert [f["status"] for f in good["files"]] == ["verified", "verified"]
    assert good["files"][0]["actualDigest"] == good["files"][0]["expectedDigest"]
    [signed, data] = by_uri[uri("tampered-report")]["files"]
    assert signed["status"] == "verified" and data["status"] == "mismatch"
    assert data["uri"] == "skill://tampered-report/data.csv" and data["actualDigest"] != data["expectedDigest"]
    assert data["actualSize"] == data["expectedSize"] == 30
    live = by_uri[uri("live-status")]
    assert [i["code"] for i in live["conformance"]] == ["dynamic-resources"] and live["files"] == []
    huge = by_uri[uri("huge-atlas")]
    assert huge["incomplete"].startswith("Only 1 of 2 manifest entries were read")
    assert [i["code"] for i in huge["conformance"]] == ["size-limit-exceeded"]
    summary = proc.stderr.splitlines()[0]
    assert summary.startswith("spyglass: 1 of 4 skills failed verification (1 digest/size mismatch across 5 files).")
    assert envelope(proc)["code"] == "skills_nonconformant"


@pytest.mark.parametrize(("skill", "flags", "code", "word"), [
    ("good-notes", ("--require-digests",), 0, None),
    ("live-status", (), 0, None),
    ("live-status", ("--require-digests",), 9, "skills_unverifiable"),
    ("huge-atlas", (), 8, "skills_incomplete"),
    ("tampered-report", (), 7, "skills_nonconformant"),
])
def test_verify_one_skill_exits_with_its_verdict(skill, flags, code, word):
    proc = spyglass("--method", "skills/get", "--uri", uri(skill), "--verify", *flags, "--", *SERVER)
    assert proc.returncode == code, proc.stderr
    assert list(reports(proc)) == [uri(skill)]
    if word:
        assert envelope(proc)["code"] == word
    else:
        assert "{\"error\"" not in proc.stderr


def test_the_catalog_budget_leaves_the_rest_unread_and_exits_8():
    server = [*SERVER, "--only", "good-notes,live-status"]
    proc = spyglass("--method", "skills/list", "--verify", "--skill-catalog-max-skills", "1", "--", *server)
    assert proc.returncode == 8, proc.stderr
    second = reports(proc)[uri("live-status")]
    assert second["outcome"] == "incomplete" and second["files"] == []
    assert "Not read: this run already reached its catalog budget of 1 skills" in second["incomplete"]
    assert "--skill-catalog-max-skills" in second["incomplete"]
    assert spyglass("--method", "skills/list", "--verify", "--", *server).returncode == 0


@pytest.mark.parametrize(("args", "says"), [
    (("--method", "tools/list", "--verify"), "--verify requires --method skills/list or --method skills/get"),
    (("--method", "skills/list", "--require-digests"), "--require-digests requires --verify"),
    (("--method", "skills/list", "--skill-catalog-max-bytes", "10"), "--skill-catalog-max-bytes requires --verify"),
    (("--method", "skills/get",), "skills/get needs --uri"),
])
def test_flag_combinations_the_official_cli_refuses_are_usage_errors(args, says):
    proc = spyglass(*args, "--", PY, "-c", "raise SystemExit(3)")  # never started: refused before connecting
    assert proc.returncode == 1, proc.stderr
    assert says in one_line_error(proc)


def test_a_budget_must_be_a_positive_integer():
    proc = spyglass("--method", "skills/list", "--verify", "--skill-catalog-max-skills", "0", "--", *SERVER)
    assert proc.returncode == 1 and "must be a positive integer" in proc.stderr


def test_a_server_without_the_extension_is_told_so():
    proc = spyglass("--method", "skills/list", "--", *demo_cmd())
    assert proc.returncode == 1
    assert "does not declare the io.modelcontextprotocol/skills extension" in one_line_error(proc)
    assert out_json(proc)["error"]["code"] == "skills_unsupported"


def test_skills_of_a_handshake_era_server_and_what_they_break():
    proc = spyglass("--method", "skills/list", "--verify", "--", *LEGACY)
    assert proc.returncode == 7, proc.stderr
    by_uri = reports(proc)
    assert [r["outcome"] for r in by_uri.values()] == ["verified", "failed", "failed"]
    [lie] = by_uri[uri("liar")]["frontmatter"]
    assert lie["code"] == "frontmatter-mismatch" and 'the listing says "What the listing says."' in lie["message"]
    holey = by_uri[uri("holey")]["files"]
    assert holey[0]["status"] == "verified"  # its SKILL.md, served as a base64 blob
    assert holey[1]["status"] == "read-error" and "Resource not found" in holey[1]["reason"]


@pytest.mark.parametrize(("case", "says"), [
    ("garbage", "skills/list: the server's skills/list result is invalid: the result has no skills list"),
    ("loop", "the server repeated a pagination cursor in skills/list"),
])
def test_a_listing_that_cannot_be_read_is_said_not_verified(case, says):
    proc = spyglass("--method", "skills/list", "--verify", "--", *LEGACY, "--case", case)
    assert proc.returncode == 8 and proc.stdout.count("\n") == 1  # the error envelope, no report
    assert says in one_line_error(proc) and out_json(proc)["error"]["kind"] == "invalid_response"


@pytest.mark.skipif(not (NODE22.exists() and OFFICIAL.exists()),
                    reason="the pinned official Inspector (@modelcontextprotocol/inspector 2.12) is not installed")
@pytest.mark.parametrize("server", ["sdk", "legacy"])
def test_the_official_cli_reaches_the_same_verdicts(server):
    # the SDK declares extensions in the 2026-07-28 era only, which Spyglass finds by itself
    era, cmd = ("modern", SERVER) if server == "sdk" else ("legacy", LEGACY)
    official = subprocess.run([str(NODE22), str(OFFICIAL), "--protocol-era", era, "--method", "skills/list",
                               "--verify", *cmd], capture_output=True, text=True, timeout=60, cwd=str(HERE))
    ours = spyglass("--method", "skills/list", "--verify", "--", *cmd)
    assert official.returncode == ours.returncode == 7, official.stderr

    def verdicts(proc):
        return {u: (r["outcome"], r["ok"], sorted(i["code"] for i in r["conformance"] + r["frontmatter"]),
                    [(f["uri"], f["status"], f.get("actualDigest")) for f in r["files"]], "incomplete" in r)
                for u, r in reports(proc).items()}
    assert verdicts(official) == verdicts(ours)
