"""Secrets shaped like secrets never reach a file meant to leave the machine: a stdio server given
`DATABASE_URL=postgres://admin:…@db/prod` and a random `SESSION` token (and a tool that echoes its env back),
an HTTP server reached through a URL with userinfo, `?api_key=` and `?token=` and a header holding a GitHub
token. Real peers over loopback (server-everything, the demo server); the files are those the command line
writes (`--session`, `--trace`, `spyglass export` to HAR and OTLP JSON, `spyglass test --junit`), and each
header says how many secrets of each kind it masked."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from pathlib import Path
from xml.etree import ElementTree as ET

import http_peers
from support import PY, ROOT, SLOWDOWN, everything_cmd

from inspector.collection.edit import server_of
from inspector.config import ServerSpec
from inspector.exporters import claude_desktop_json, spyglass_command
from inspector.recording.files import masked_values, open_session
from inspector.replay import cli_command, curl_command

PASSWORD = "Pg-Pa55word-7731"
SESSION = "Zq8Lr2Vx9Kp4Tn7Wb3Hs6Jd1Fm5Gc0Ya8Ue2Qi"  # 40 random characters of no known format
URL_PASSWORD = "Url-Pa55word-4410"
API_KEY = "k3y-9f8e7d6c5b4a"
TOKEN = "t0k-1a2b3c4d5e6f"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
MASK_ = "••••••"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    # a small environment: a tool that dumps the server's env then holds nothing but what the test gave
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "PYTHONPATH": str(ROOT),
           "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([PY, "-m", "inspector", *args], capture_output=True, text=True, cwd=str(cwd), env=env,
                          timeout=120 * SLOWDOWN)


def assert_clean(path: Path, *secrets: str) -> str:
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    for secret in secrets:
        assert secret not in text, f"{secret!r} is in {path.name}"
    return text


def test_a_stdio_servers_env_secrets_stay_out_of_every_file(tmp_path):
    session, trace = tmp_path / "ci.mcpsession", tmp_path / "trace.jsonl"
    proc = run("--cli", "--session", str(session), "--trace", str(trace), "--tool-name", "get-env",
               "-e", f"DATABASE_URL=postgres://admin:{PASSWORD}@db/prod", "-e", f"SESSION={SESSION}",
               "--", *everything_cmd())
    assert proc.returncode == 0, proc.stderr
    assert SESSION in proc.stdout and PASSWORD in proc.stdout  # the tool did echo them: the files must not
    for path in (session, trace):
        assert_clean(path, PASSWORD, SESSION)
    opened = open_session(session)
    assert opened.header["masked"] is True
    assert masked_values(opened.header) == {"entropy": 1, "url-userinfo": 1}
    definition = opened.surface().definition
    assert definition["env"] == {"DATABASE_URL": "postgres://admin:••••••@db/prod", "SESSION": "••••••"}
    otlp = tmp_path / "traces.otlp.json"
    assert run("export", str(session), str(otlp)).returncode == 0
    text = assert_clean(otlp, PASSWORD, SESSION)
    resource = {a["key"]: a["value"] for a in json.loads(text)["resourceSpans"][0]["resource"]["attributes"]}
    assert resource["spyglass.masked"] == {"boolValue": True}


def test_an_http_servers_url_and_header_secrets_stay_out_of_every_file(tmp_path):
    session, trace, har, otlp = (tmp_path / n for n in ("h.mcpsession", "t.jsonl", "h.har", "h.otlp.json"))
    with http_peers.everything("streamableHttp") as url:
        secret_url = url.replace("http://", f"http://admin:{URL_PASSWORD}@") + f"?api_key={API_KEY}&token={TOKEN}"
        proc = run("--cli", secret_url, "--header", f"X-Trace-Tag: {GITHUB}", "--session", str(session),
                   "--trace", str(trace), "--tool-name", "echo", "--tool-arg", "message=hello")
        assert proc.returncode == 0, proc.stderr
    secrets = (URL_PASSWORD, API_KEY, TOKEN, GITHUB)
    for path in (session, trace):
        assert_clean(path, *secrets)
    opened = open_session(session)
    counts = {"query-key": 2, "token": 1, "url-userinfo": 1}
    assert masked_values(opened.header) == counts  # (the Basic header httpx made was masked as recorded)
    assert opened.surface().definition["url"].startswith("http://admin:••••••@127.0.0.1:")
    assert run("export", str(session), str(har)).returncode == 0
    log = json.loads(assert_clean(har, *secrets))["log"]
    assert log["_masked_values"] == counts
    assert {"name": "api_key", "value": "••••••"} in log["entries"][0]["request"]["queryString"]
    assert run("export", str(session), str(otlp)).returncode == 0
    text = assert_clean(otlp, *secrets)
    resource = {a["key"]: a["value"] for a in json.loads(text)["resourceSpans"][0]["resource"]["attributes"]}
    assert resource["spyglass.masked_values.url-userinfo"] == {"intValue": "1"}


def test_a_junit_report_masks_what_a_failing_step_shows(tmp_path):
    collection = tmp_path / "c.yaml"
    message = f"postgres://admin:{PASSWORD}@db/prod {GITHUB}"
    collection.write_text(f"name: leaks\nserver: {{command: [{json.dumps(PY)}, -m, inspector.demo]}}\nsteps:\n"
                          "  - name: echoes a secret\n    call: echo\n"
                          f"    arguments: {{message: {json.dumps(message)}}}\n"
                          "    expect: {text: {contains: goodbye}}\n")
    junit = tmp_path / "junit.xml"
    proc = run("test", str(collection), "--junit", str(junit), cwd=tmp_path)
    assert proc.returncode == 9, proc.stdout + proc.stderr
    assert_clean(junit, PASSWORD, GITHUB)
    suite = ET.parse(junit).getroot()
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props == {"spyglass.masked": "true", "spyglass.masked_values.token": "1",
                     "spyglass.masked_values.url-userinfo": "1"}
    assert "postgres://admin:••••••@db/prod" in suite.find("testcase/failure").text


def test_exported_servers_and_collections_keep_no_secret(tmp_path):
    spec = ServerSpec(name="db", command=["node", "server.js", "--dsn", f"postgres://admin:{PASSWORD}@db/prod"],
                      env={"DATABASE_URL": f"postgres://admin:{PASSWORD}@db/prod", "SESSION": SESSION,
                           "LOG_LEVEL": "debug"})
    remote = ServerSpec(name="api", url=f"https://admin:{URL_PASSWORD}@api.example.com/mcp?api_key={API_KEY}",
                        headers={"X-Trace-Tag": GITHUB})
    secrets = (PASSWORD, SESSION, URL_PASSWORD, API_KEY, GITHUB)
    for text in (claude_desktop_json([spec, remote]), spyglass_command(spec), spyglass_command(remote),
                 json.dumps(server_of(spec)), json.dumps(server_of(remote)), cli_command(spec, "echo", {}),
                 cli_command(remote, "echo", {}), curl_command(remote, "echo", {})):
        for secret in secrets:
            assert secret not in text
    assert server_of(spec)["env"] == {"DATABASE_URL": "${DATABASE_URL}", "SESSION": "${SESSION}",
                                      "LOG_LEVEL": "debug"}
    assert server_of(remote)["url"] == "${MCP_SERVER_URL}"
    assert '"LOG_LEVEL": "debug"' in claude_desktop_json([spec])
    assert "-e 'SESSION=${SESSION}'" in cli_command(spec, "echo", {})  # History's "copy as CLI"


def test_a_check_report_in_junit_masks_the_server_and_its_messages():
    from inspector.checks.report import Settings, junit
    from inspector.checks.rules import finding
    from inspector.checks.run import Report

    leaked = finding("tool-name-invalid", f"tool:fetch {GITHUB}",
                     f"says nothing; its default is postgres://admin:{PASSWORD}@db/prod")
    xml = junit(Report(server={"name": f"https://mcp.example.com/?token={TOKEN}"}, findings=[leaked]), Settings())
    text = xml.decode()
    for secret in (GITHUB, PASSWORD, TOKEN):
        assert secret not in text
    suite = ET.fromstring(xml)
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["spyglass.masked_values.token"] == "1" and props["spyglass.masked_values.url-userinfo"] == "1"
    assert f"postgres://admin:{MASK_}@db/prod" in text


def test_files_with_and_without_the_count_open(tmp_path):
    old = tmp_path / "old.mcpsession"
    header = {"format": "mcpsession", "version": 1, "masked": True, "servers": []}
    with gzip.open(old, "wt") as fh:
        fh.write(json.dumps(header) + "\n" + json.dumps({"end": True, "frames": 0}) + "\n")
    opened = open_session(old)
    assert opened.problems == [] and masked_values(opened.header) is None
    odd = tmp_path / "odd.mcpsession"
    with gzip.open(odd, "wt") as fh:
        fh.write(json.dumps({**header, "masked_values": {"token": 2, "x": "many", "y": -1}}) + "\n"
                 + json.dumps({"end": True, "frames": 0}) + "\n")
    assert masked_values(open_session(odd).header) == {"token": 2}
