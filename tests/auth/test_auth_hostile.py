"""`spyglass --cli` against tests/hostile/auth_server.py: an authorization server that names an address no
browser should be handed. Nothing reaches the system opener (replaced by a recorder through `$BROWSER`, the
variable Python's webbrowser reads), the refusal is exit 3 with its sentence, and an address that may open is
printed with its host as the browser will show it and opened only after the user says yes at a terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import http_peers
import pytest
from http_peers import REFUSED

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(60)
RECORDER = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text(sys.argv[2])"


def _env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    opened = tmp_path / "opened.txt"
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    env = {**os.environ, "BROWSER": f"{sys.executable} {script} {opened} %s",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(name, None)
    return env, opened


def spyglass(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", "--cli", "--token-store", "memory", *args],
                          capture_output=True, text=True, timeout=50, cwd=str(ROOT), env=env,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_planted_authorization_address_is_refused_with_exit_3_and_never_opened(tmp_path, case):
    env, opened = _env(tmp_path)
    with http_peers.hostile_auth(case) as url:
        proc = spyglass(env, "--auth-timeout", "5", "--transport", "http", url)
    assert not opened.exists(), f"handed to the opener: {opened.read_text()}"
    assert proc.returncode == 3, proc.stderr
    sentence = (f"the authorization server asked Spyglass to open {REFUSED[case]}; only https (or http to this "
                "machine) is ever opened")
    assert sentence in proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["kind"] == "auth_failed" and error["cause"] == sentence
    assert error["step"] == "discovery: authorization server metadata"


def test_an_authorization_server_elsewhere_over_plain_http_is_not_fetched(tmp_path):
    env, opened = _env(tmp_path)
    with http_peers.hostile_auth("as-elsewhere") as url:
        proc = spyglass(env, "--auth-timeout", "5", "--transport", "http", url)
    assert proc.returncode == 3 and not opened.exists(), proc.stderr
    assert ("the server asked Spyglass to fetch an http: address on another machine (evil.example), "
            "unencrypted") in proc.stderr
    assert "evil.example" not in "".join(line for line in proc.stderr.splitlines() if "GET" in line)


def test_without_a_terminal_the_address_is_printed_as_the_browser_shows_it_and_not_opened(tmp_path):
    env, opened = _env(tmp_path)
    with http_peers.hostile_auth("lookalike") as url:
        proc = spyglass(env, "--auth-timeout", "1", "--transport", "http", url)
    assert not opened.exists(), f"opened without asking: {opened.read_text()}"
    assert proc.returncode == 3, proc.stderr
    assert "https://xn--ggle-55da.com/authorize?" in proc.stderr
    assert "g\u043e\u043egle" not in proc.stderr  # never the look-alike letters
    assert "not opened" in proc.stderr and "no redirect reached" in proc.stderr


def _at_a_terminal(env: dict[str, str], url: str, answer: bytes) -> tuple[int, str]:
    """Run with stdin on a terminal; type `answer` when asked. (exit code, what stderr said)."""
    main, side = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "--cli", "--token-store", "memory",
                             "--auth-timeout", "1", "--transport", "http", url], stdin=side,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT), env=env)
    os.close(side)
    said = b""
    try:
        deadline = time.monotonic() + 30
        while b"[y/N]" not in said and time.monotonic() < deadline and proc.poll() is None:
            ready, _, _ = select.select([proc.stderr], [], [], 0.5)
            if ready:
                said += os.read(proc.stderr.fileno(), 4096)
        assert b"[y/N]" in said, said
        os.write(main, answer)
        out, err = proc.communicate(timeout=30)
        return proc.returncode, (said + err).decode()
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_at_a_terminal_no_answer_opens_nothing(tmp_path):
    env, opened = _env(tmp_path)
    with http_peers.hostile_auth("lookalike") as url:
        code, said = _at_a_terminal(env, url, b"\n")
    assert not opened.exists()
    assert code == 3 and "https://xn--ggle-55da.com/authorize?" in said and "not opened" in said


def test_at_a_terminal_yes_opens_the_address(tmp_path):
    env, opened = _env(tmp_path)
    with http_peers.hostile_auth("lookalike") as url:
        code, said = _at_a_terminal(env, url, b"y\n")
    assert code == 3, said  # nobody signs in: the wait for the redirect ends
    assert opened.read_text().startswith("https://xn--ggle-55da.com/authorize?")
