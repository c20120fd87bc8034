"""`spyglass tap --install HOST:NAME` and `--uninstall`: a host's config rewritten from the command line (the
host found in its usual place, or `--config FILE`), the change printed, `--dry-run` writing nothing, and
the file put back byte for byte; each mistake one line on stderr and exit 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CONFIG = """{
\t"mcpServers": {
\t\t"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
\t\t"remote": {"url": "https://mcp.example.com/mcp"}
\t}
}
"""


def spyglass(*args: str, home: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if home is not None:
        env["HOME"] = home
        env.pop("XDG_CONFIG_HOME", None)
    return subprocess.run([sys.executable, "-m", "inspector", "tap", *args], capture_output=True, text=True,
                          env=env, timeout=60)


@pytest.mark.skipif(sys.platform != "linux", reason="the host's usual place is the Linux one here")
def test_install_finds_claude_desktop_s_config_and_uninstall_puts_it_back(tmp_path):
    config = tmp_path / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    config.write_text(CONFIG)
    dry = spyglass("--install", "claude-desktop:filesystem", "--dry-run", home=str(tmp_path))
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0] == f"--- {config}" and "(dry run: nothing written)" in dry.stdout
    assert config.read_text() == CONFIG
    done = spyglass("--install", "claude-desktop:filesystem", home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert f"filesystem now runs through the tap in {config}; restart Claude Desktop" in done.stdout
    entry = json.loads(config.read_text())["mcpServers"]["filesystem"]
    assert [entry["command"], *entry["args"]] == [sys.executable, "-m", "inspector", "tap", "--name", "filesystem",
                                                 "--", "npx", "-y", "@modelcontextprotocol/server-filesystem",
                                                 "/tmp"]
    assert (config.parent / "claude_desktop_config.json.spyglass-backup").read_text() == CONFIG
    again = spyglass("--install", "claude-desktop:filesystem", home=str(tmp_path))
    assert again.returncode == 1 and again.stderr.startswith("spyglass tap: ") and "already" in again.stderr
    back = spyglass("--uninstall", "claude-desktop:filesystem", home=str(tmp_path))
    assert back.returncode == 0, back.stderr
    assert config.read_text() == CONFIG  # byte for byte


def test_install_with_a_config_file_and_a_url_server(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(CONFIG)
    refused = spyglass("--install", ":remote", "--config", str(config))
    assert refused.returncode == 1 and "--listen" in refused.stderr and config.read_text() == CONFIG
    done = spyglass("--install", ":remote", "--config", str(config), "--port", "0")
    assert done.returncode == 0, done.stderr
    assert "while" in done.stdout and "tap --listen 127.0.0.1:" in done.stdout and "https://mcp.example.com/mcp" \
        in done.stdout
    url = json.loads(config.read_text())["mcpServers"]["remote"]["url"]
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    assert spyglass("--uninstall", ":remote", "--config", str(config)).returncode == 0
    assert config.read_text() == CONFIG


@pytest.mark.parametrize("args, said", [
    (["--install", "nohost:x"], "no host 'nohost'"),
    (["--install", "filesystem"], "HOST:NAME"),
    (["--install", ":nosuch", "--config", "{config}"], "has no server named 'nosuch'"),
    (["--install", ":filesystem", "--config", "{config}", "--", "x"], "take no server"),
    (["--dry-run", "--", "x"], "go with --install"),
    (["--install", ":a", "--uninstall", ":a", "--config", "{config}"], "not both"),
])
def test_mistakes_are_one_line_and_exit_1(tmp_path, args, said):
    config = tmp_path / "mcp.json"
    config.write_text(CONFIG)
    result = spyglass(*[a.replace("{config}", str(config)) for a in args], home=str(tmp_path))
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and said in result.stderr, result.stderr
    assert config.read_text() == CONFIG


def test_a_config_that_does_not_parse_is_left_untouched(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"a": {"command": "x",}}')
    before = config.stat().st_mtime_ns
    result = spyglass("--install", ":a", "--config", str(config))
    assert result.returncode == 1 and "untouched" in result.stderr and str(config) in result.stderr
    assert config.read_text() == '{"mcpServers": {"a": {"command": "x",}}' and config.stat().st_mtime_ns == before
