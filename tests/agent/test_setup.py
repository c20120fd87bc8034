"""`spyglass mcp --print-config / --install / --uninstall / --skill`: the entry each host wants, written into
its configuration without touching another byte, and taken out again byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from inspector.agent import setup
from inspector.config import strip_jsonc
from inspector.errors import UsageError

CURSOR = ('\ufeff{\r\n  // my servers\r\n  "mcpServers": {\r\n    "github": {"command": "gh-mcp", "args": []},'
          '\r\n  },\r\n}')


def test_install_then_uninstall_is_byte_for_byte(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_bytes(CURSOR.encode())
    setup.install("cursor", str(path))
    text = path.read_bytes().decode("utf-8")
    data = json.loads(strip_jsonc(text.lstrip("\ufeff")))
    assert data["mcpServers"]["spyglass"]["args"][-1] == "mcp" and "github" in data["mcpServers"]
    assert "// my servers" in text and "\r\n" in text
    assert oct(os.stat(path.with_name("mcp.json.spyglass-mcp.json")).st_mode & 0o777) == "0o600"
    with pytest.raises(UsageError, match="already has Spyglass installed"):
        setup.install("cursor", str(path))
    setup.uninstall("cursor", str(path))
    assert path.read_bytes() == CURSOR.encode()
    assert not path.with_name("mcp.json.spyglass-mcp.json").exists()


def test_vscode_settings_codex_and_a_new_file(tmp_path):
    settings = tmp_path / "settings.json"
    settings.write_text('{"editor.fontSize": 14}\n')
    setup.install("vscode", str(settings))
    assert json.loads(settings.read_text())["mcp"]["servers"]["spyglass"]["type"] == "stdio"
    setup.uninstall("vscode", str(settings))
    assert settings.read_text() == '{"editor.fontSize": 14}\n'
    toml = tmp_path / "config.toml"
    toml.write_text('model = "o3"\n')
    setup.install("codex", str(toml), allow_writes=True)
    assert '[mcp_servers.spyglass]' in toml.read_text() and "--allow-writes" in toml.read_text()
    setup.uninstall("codex", str(toml))
    assert toml.read_text() == 'model = "o3"\n'
    fresh = tmp_path / ".mcp.json"
    setup.install("claude-code", str(fresh))
    assert "spyglass" in json.loads(fresh.read_text())["mcpServers"]
    fresh.write_text(fresh.read_text() + " ")
    with pytest.raises(UsageError, match="changed since"):
        setup.uninstall("claude-code", str(fresh))


def test_a_linked_config_stays_a_link_and_what_cannot_be_edited_safely_is_refused(tmp_path, monkeypatch):
    dotfiles = tmp_path / "dotfiles" / "mcp.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"mcpServers": {}}\n')
    link = tmp_path / "mcp.json"
    link.symlink_to(dotfiles)
    setup.install("cursor", str(link))
    assert link.is_symlink() and "spyglass" in json.loads(dotfiles.read_text())["mcpServers"]
    setup.uninstall("cursor", str(link))
    assert link.is_symlink() and dotfiles.read_text() == '{"mcpServers": {}}\n'
    codex = tmp_path / "config.toml"
    for text, words in (('[mcp_servers."spyglass"]\ncommand = "old"\n', "already has a server named"),
                        ('mcp_servers = { other = { command = "x" } }\n', "would not be valid TOML"),
                        ("model = \n", "is not valid TOML"), (b"model = '\xff'\n", "is not UTF-8")):
        codex.write_bytes(text if isinstance(text, bytes) else text.encode())
        with pytest.raises(UsageError, match=words):
            setup.install("codex", str(codex))
        assert codex.read_bytes() == (text if isinstance(text, bytes) else text.encode())
        assert not (tmp_path / "config.toml.spyglass-mcp.json").exists()
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert setup.default_path("codex") == tmp_path / "codex-home" / "config.toml"
    plain = tmp_path / "plain.json"
    plain.write_text("{}")
    setup.install("cursor", str(plain))
    (tmp_path / "plain.json.spyglass-mcp.json").write_text("{not json")
    with pytest.raises(UsageError, match="is damaged"):
        setup.uninstall("cursor", str(plain))


def test_print_config_and_skill_from_the_command_line():
    def run(*args):
        return subprocess.run([sys.executable, "-m", "inspector", "mcp", *args], capture_output=True, text=True,
                              timeout=30)

    desktop = run("--print-config", "claude-desktop")
    assert json.loads(desktop.stdout)["mcpServers"]["spyglass"]["args"][-1] == "mcp"
    assert "claude mcp add spyglass --" in run("--print-config", "claude-code").stdout
    skill = run("--skill").stdout
    assert skill.startswith("---\nname: spyglass-mcp-debugging\ndescription: ") and "spyglass_restart" in skill
    bad = run("--print-config", "emacs")
    assert bad.returncode == 1 and "invalid choice" in bad.stderr and "Traceback" not in bad.stderr


def test_the_skill_is_valid_agent_skills_and_names_what_exists():
    """SKILL.md as the Agent Skills format wants it (a valid name and description; the folder it is put in,
    as docs/agents.md says, named as the skill is), naming only tools and arguments that exist, with
    filters that parse."""
    import re
    from pathlib import Path

    from ruamel.yaml import YAML

    from inspector.agent.tools import TOOLS
    from inspector.protocol import skills
    from inspector.traffic.expr import is_expression, parse

    text = setup.skill_text()
    front, body = skills.split_skill_file(text)
    meta = YAML(typ="safe").load(front)
    docs = (Path(__file__).parents[2] / "docs" / "agents.md").read_text(encoding="utf-8")
    folders = re.findall(r"mkdir -p ~/\.claude/skills/([^ /]+) && spyglass mcp --skill > ~/\.claude/skills/([^ /]+)/",
                         docs)
    assert folders and all(a == b for a, b in folders)
    for folder, _ in folders:
        entry = skills.SkillEntry(uri=f"file:///home/u/.claude/skills/{folder}/SKILL.md", frontmatter=meta,
                                  resources=None, raw={})
        assert [i.code for i in skills.conformance(entry)] == ["dynamic-resources"], skills.conformance(entry)
    named = set(re.findall(r"\bspyglass_[a-z]+\b", body))
    assert named and named <= set(TOOLS), named - set(TOOLS)
    said = {"spyglass_connect": ("name", "command", "cwd", "env", "url", "catalog", "era"),
            "spyglass_list": ("kind",), "spyglass_call": ("server", "tool", "arguments", "validate"),
            "spyglass_traffic": ("filter", "cursor", "limit", "bodies")}
    for tool, arguments in said.items():
        assert set(arguments) <= set(TOOLS[tool][1]["properties"]), tool
    for example in re.findall(r"^   - `([^`]+)` - ", body, re.M):
        if is_expression(example):
            parse(example)
    assert "`cancelled`" in body  # every outcome of a call is explained


def test_how_spyglass_runs_itself_in_a_bundle_and_without_the_sdk(monkeypatch):
    from inspector.agent import remote

    monkeypatch.setattr(sys, "frozen", True, raising=False)  # PyInstaller's mark: the program takes our words
    assert remote.spyglass_program() == [sys.executable]
    assert setup.command() == [sys.executable, "mcp"]
    assert json.loads(setup.print_config("cursor"))["mcpServers"]["spyglass"]["args"] == ["mcp"]
    monkeypatch.delattr(sys, "frozen")
    no_sdk = ("import sys; sys.modules['mcp'] = sys.modules['mcp_types'] = None; "
              "from inspector.__main__ import main; raise SystemExit(main(['mcp', '--private']))")
    run = subprocess.run([sys.executable, "-c", no_sdk], capture_output=True, text=True, timeout=30,
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 1 and "needs the official MCP Python SDK" in run.stderr, run.stderr
