"""Nothing a server sends reaches the terminal as a control: every headless command and format, run as the
user runs it, against `tests/hostile/server.py controls` (C0 and C1 controls, U+2028 / U+2029 in the server's
name, tools, descriptions, results, errors, log messages and stderr lines). No raw control character but
newline and tab reaches stdout or stderr, and the server's words still do, escaped."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from xml.etree import ElementTree as ET

import pytest
from support import HOSTILE, PY, ROOT, SLOWDOWN

from inspector import terminal

sys.path.insert(0, str(HOSTILE.parent))
from server import CONTROLS

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
SERVER = ["--", PY, str(HOSTILE), "controls"]
PLAIN = ["--", PY, str(HOSTILE)]


def spyglass(*args: str, ok: tuple[int, ...] = (0,)) -> tuple[str, str]:
    proc = subprocess.run([PY, "-m", "inspector", *args], capture_output=True, timeout=60 * SLOWDOWN, cwd=str(ROOT))
    out, err = proc.stdout.decode("utf-8", "surrogateescape"), proc.stderr.decode("utf-8", "surrogateescape")
    assert proc.returncode in ok, (proc.returncode, out[-1500:], err[-1500:])
    assert "Traceback" not in err
    return out, err


def assert_clean(*texts: str) -> None:
    for text in texts:
        bad = sorted({f"U+{ord(c):04X}" for c in RAW.findall(text)})
        assert not bad, f"raw controls {bad} in: {text[:1500]!r}"


def said(text: str) -> None:
    """The server's words arrived (escaped), not dropped."""
    assert "pwned" in text and ("\\u009b" in text or "\\x1b" in text or "\\u001b" in text), text[:1500]


@pytest.mark.parametrize("fmt", ["text", "json", "human"])
def test_cli_listing_and_call_in_every_format(fmt):
    out, err = spyglass("--cli", "--method", "tools/list", "--format", fmt, *SERVER)
    assert_clean(out, err)
    said(out)
    if fmt == "json":
        tools = json.loads(out)["result"]["tools"]
        assert tools[-1]["name"] == f"ctl{CONTROLS}"  # the same document, escaped the JSON way
    out, err = spyglass("--cli", "--tool-name", "echo", "--tool-arg", "message=x", "--format", fmt, *SERVER)
    assert_clean(out, err)
    said(out)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_cli_errors_and_tool_errors(fmt):
    out, err = spyglass("--cli", "--tool-name", "add", "--tool-arg", "a=1", "--tool-arg", "b=2", "--format", fmt,
                        *SERVER, ok=(5,))
    assert_clean(out, err)
    said(out + err)
    out, err = spyglass("--cli", "--tool-name", "fail", "--format", fmt, *SERVER, ok=(1,))
    assert_clean(out, err)
    said(out + err)


def test_cli_server_info_and_the_log_stream():
    out, err = spyglass("--cli", "--method", "server/info", *SERVER, ok=(0, 1))
    assert_clean(out, err)
    proc = subprocess.Popen([PY, "-m", "inspector", "--cli", "--method", "logging/tail", "--log-level", "debug",
                             *SERVER], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT))
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # one NDJSON line per log message
        proc.send_signal(signal.SIGINT)
        rest, err_bytes = proc.communicate(timeout=30 * SLOWDOWN)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = (first + rest).decode("utf-8", "surrogateescape")
    assert_clean(out, err_bytes.decode("utf-8", "surrogateescape"))
    said(out)
    assert json.loads(out.splitlines()[0])


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_check_text_json_and_junit(fmt, tmp_path):
    junit = tmp_path / "check.xml"
    out, err = spyglass("check", "--format", fmt, "--junit", str(junit), *SERVER, ok=(0, 9))
    assert_clean(out, err)
    said(out)
    xml = junit.read_text(encoding="utf-8")
    assert_clean(xml)
    said(xml)
    ET.fromstring(junit.read_bytes())  # still well-formed


def test_replay_diff_test_and_export(tmp_path):
    hostile, plain = tmp_path / "hostile.mcpsession", tmp_path / "plain.mcpsession"
    spyglass("--cli", "--session", str(hostile), "--tool-name", "echo", "--tool-arg", "message=x", *SERVER)
    spyglass("--cli", "--session", str(plain), "--tool-name", "echo", "--tool-arg", "message=x", *PLAIN)
    for fmt in ("text", "json"):
        out, err = spyglass("replay", str(hostile), "--format", fmt, *PLAIN, ok=(0, 9))
        assert_clean(out, err)
        said(out)
        out, err = spyglass("replay", str(plain), "--format", fmt, *SERVER, ok=(0, 9))
        assert_clean(out, err)
        said(out)
        out, err = spyglass("diff", str(plain), str(hostile), "--format", fmt, ok=(0, 9))
        assert_clean(out, err)
        said(out)
    collection = tmp_path / "steps.yaml"
    collection.write_text(f"name: controls\nserver: {{command: [{json.dumps(PY)}, {json.dumps(str(HOSTILE))}, "
                          "controls]}\nsteps:\n  - name: echo\n    call: echo\n    arguments: {message: x}\n"
                          "    expect: {text: {contains: goodbye}}\n  - name: fail\n    call: fail\n",
                          encoding="utf-8")
    for fmt in ("text", "json"):
        out, err = spyglass("test", str(collection), "--format", fmt, "--junit", str(tmp_path / "t.xml"), ok=(9,))
        assert_clean(out, err)
        said(out)
        xml = (tmp_path / "t.xml").read_text(encoding="utf-8")
        assert_clean(xml)
        ET.fromstring(xml.encode())
    for name in ("out.mcpsession", "out.jsonl"):
        out, err = spyglass("export", str(hostile), str(tmp_path / name))
        assert_clean(out, err)


def test_the_escapes():
    assert terminal.visible("a\x1b[2J\tb\nc\x9b\u2028\u202e") == "a\\x1b[2J\tb\nc\\u009b\\u2028<U+202E>"
    assert terminal.one_line("a\tb\nc\rd") == "a\\tb\\nc\\rd"
    doc = json.dumps({"k": CONTROLS}, ensure_ascii=False)
    assert RAW.search(doc)
    assert not RAW.search(terminal.json_safe(doc)) and json.loads(terminal.json_safe(doc)) == {"k": CONTROLS}
    assert terminal.dumps({"k": "\u0085"}) == '{"k": "\\u0085"}'
    xml = terminal.xml_text(CONTROLS)
    assert not RAW.search(xml)
