"""Tapping a host's server by rewriting its config, and untapping it byte for byte (inspector.tap.install).

Real files under tmp_path, one realistic config per host format, each laid out differently (tabs, four
spaces, CRLF, a BOM, no final newline, comments and trailing commas, unicode): the texts expected are
written out whole, so a byte changed anywhere else fails the test.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from inspector.config import strip_jsonc
from inspector.errors import UsageError
from inspector.tap.install import (
    MAX_BYTES,
    Change,
    TapConfigError,
    apply,
    backup_path,
    hosts,
    pick_port,
    plan_tap,
    plan_untap,
    read,
    record_path,
)

TAP = ["/opt/spyglass/bin/spyglass"]


def write(tmp_path: Path, rel: str, data: bytes) -> Path:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def tap(path: Path, name: str, **kw) -> Change:
    change = plan_tap(read(path), name, tap_command=kw.pop("tap_command", TAP), **kw)
    apply(change)
    return change


def untap(path: Path, name: str) -> Change:
    change = plan_untap(read(path), name)
    apply(change)
    return change


def swap(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def loads(text: str):
    return json.loads(strip_jsonc(text.removeprefix("\ufeff")))


# -- Claude Desktop: two spaces, LF, a final newline, unicode in paths ----------------------------------

CLAUDE = """{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/zoë/Documents", "/Users/zoë/Desktop"]
    },
    "github": {
      "command": "docker",
      "args": [
        "run", "-i", "--rm", "ghcr.io/github/github-mcp-server"
      ],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret"}
    },
    "notes": {
      "command": "npx",
      "args": ["mcp-remote", "https://notes.example.com/mcp"]
    }
  }
}
"""


def test_claude_desktop_tap_and_untap(tmp_path):
    path = write(tmp_path, "Claude/claude_desktop_config.json", CLAUDE.encode())
    config = read(path)
    assert config.kind == "claude-desktop" and config.container == ("mcpServers",) and config.writable
    assert [(e.name, e.transport, e.tapped, e.line) for e in config.entries] == [
        ("filesystem", "stdio", False, 4), ("github", "stdio", False, 8), ("notes", "stdio", False, 15)]
    assert config.entry("github").command == ("docker", "run", "-i", "--rm", "ghcr.io/github/github-mcp-server")

    change = tap(path, "filesystem", session="/tmp/fs.mcpsession")
    tapped = swap(CLAUDE, '''"command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/zoë/Documents", "/Users/zoë/Desktop"]''',
                  '''"command": "/opt/spyglass/bin/spyglass",
      "args": ["tap", "--name", "filesystem", "--session", "/tmp/fs.mcpsession", "--", "npx", "-y", \
"@modelcontextprotocol/server-filesystem", "/Users/zoë/Documents", "/Users/zoë/Desktop"]''')
    assert path.read_bytes() == tapped.encode()
    assert change.before == CLAUDE and change.after == tapped
    assert loads(tapped)["mcpServers"]["filesystem"] == {"command": "/opt/spyglass/bin/spyglass", "args": [
        "tap", "--name", "filesystem", "--session", "/tmp/fs.mcpsession", "--", "npx", "-y",
        "@modelcontextprotocol/server-filesystem", "/Users/zoë/Documents", "/Users/zoë/Desktop"]}
    assert loads(tapped)["mcpServers"]["github"] == loads(CLAUDE)["mcpServers"]["github"]
    assert backup_path(path).read_bytes() == CLAUDE.encode()
    entry = read(path).entry("filesystem")
    assert entry.tapped and entry.restorable

    # a second entry whose args hold several items on one indented line keeps that layout
    tap(path, "github")
    both = swap(tapped, '''"command": "docker",
      "args": [
        "run", "-i", "--rm", "ghcr.io/github/github-mcp-server"
      ],''', '''"command": "/opt/spyglass/bin/spyglass",
      "args": [
        "tap", "--name", "github", "--", "docker", "run", "-i", "--rm", "ghcr.io/github/github-mcp-server"
      ],''')
    assert path.read_text(encoding="utf-8") == both

    untap(path, "filesystem")
    assert path.read_text(encoding="utf-8") == swap(CLAUDE, '''"command": "docker",
      "args": [
        "run", "-i", "--rm", "ghcr.io/github/github-mcp-server"''', '''"command": "/opt/spyglass/bin/spyglass",
      "args": [
        "tap", "--name", "github", "--", "docker", "run", "-i", "--rm", "ghcr.io/github/github-mcp-server"''')
    untap(path, "github")
    assert path.read_bytes() == CLAUDE.encode()
    assert not record_path(path).exists()
    assert backup_path(path).read_bytes() == CLAUDE.encode()


# -- Cursor: a BOM, tabs, CRLF, a stdio entry without args and a URL one -----------------------------

CURSOR = ("\ufeff{\r\n"
          "\t\"mcpServers\": {\r\n"
          "\t\t\"linear\": {\r\n"
          "\t\t\t\"url\": \"https://mcp.linear.app/sse?team=eng\",\r\n"
          "\t\t\t\"headers\": {\"Authorization\": \"Bearer ${env:LINEAR_TOKEN}\"}\r\n"
          "\t\t},\r\n"
          "\t\t\"local-db\": {\r\n"
          "\t\t\t\"command\": \"/usr/local/bin/pg-mcp\",\r\n"
          "\t\t\t\"env\": {\"PGDATABASE\": \"crème\"}\r\n"
          "\t\t},\r\n"
          "\t\t\"puppeteer\": {\"command\": \"npx\", \"args\": [\"-y\", \"@mcp/puppeteer\"]}\r\n"
          "\t}\r\n"
          "}\r\n")


def test_cursor_stdio_without_args_and_a_url_entry(tmp_path):
    path = write(tmp_path, ".cursor/mcp.json", CURSOR.encode())
    config = read(path)
    assert config.kind == "cursor"
    assert [(e.name, e.transport, e.url) for e in config.entries] == [
        ("linear", "url", "https://mcp.linear.app/sse?team=eng"), ("local-db", "stdio", None),
        ("puppeteer", "stdio", None)]

    tap(path, "local-db", tap_command=["C:\\Tools\\spyglass.exe", "--quiet"])
    stdio = swap(CURSOR, "\t\t\t\"command\": \"/usr/local/bin/pg-mcp\",\r\n",
                 "\t\t\t\"command\": \"C:\\\\Tools\\\\spyglass.exe\",\r\n"
                 "\t\t\t\"args\": [\"--quiet\", \"tap\", \"--name\", \"local-db\", \"--\", \"/usr/local/bin/pg-mcp\"],"
                 "\r\n")
    assert path.read_bytes() == stdio.encode()
    assert loads(stdio)["mcpServers"]["local-db"] == {
        "command": "C:\\Tools\\spyglass.exe", "args": ["--quiet", "tap", "--name", "local-db", "--",
                                                       "/usr/local/bin/pg-mcp"], "env": {"PGDATABASE": "crème"}}

    change = tap(path, "linear", port=8765)
    both = swap(stdio, "https://mcp.linear.app/sse?team=eng", "http://127.0.0.1:8765/sse?team=eng")
    assert path.read_bytes() == both.encode()
    assert change.url == "https://mcp.linear.app/sse?team=eng"
    assert change.proxy_url == "http://127.0.0.1:8765/sse?team=eng"
    assert change.proxy_command == ("/opt/spyglass/bin/spyglass", "tap", "--listen", "127.0.0.1:8765", "--name",
                                    "linear", "https://mcp.linear.app/sse?team=eng")
    assert any("start /opt/spyglass/bin/spyglass tap --listen 127.0.0.1:8765" in n for n in change.notes)
    assert loads(both)["mcpServers"]["linear"]["headers"] == {"Authorization": "Bearer ${env:LINEAR_TOKEN}"}
    record = json.loads(record_path(path).read_text(encoding="utf-8"))
    assert record["taps"]["linear"]["url"] == "https://mcp.linear.app/sse?team=eng"
    assert record["taps"]["linear"]["original"] == CURSOR.split('"linear": ')[1].split(",\r\n\t\t\"local-db\"")[0]
    assert read(path).entry("linear").tapped

    untap(path, "linear")
    assert path.read_bytes() == stdio.encode()
    untap(path, "local-db")
    assert path.read_bytes() == CURSOR.encode()


def test_a_url_entry_needs_a_port(tmp_path):
    path = write(tmp_path, ".cursor/mcp.json", CURSOR.encode())
    with pytest.raises(UsageError) as err:
        plan_tap(read(path), "linear", tap_command=TAP)
    assert "spyglass tap --listen 127.0.0.1:PORT https://mcp.linear.app/sse?team=eng" in err.value.message
    assert "--port PORT" in err.value.message
    with pytest.raises(UsageError, match="not a TCP port"):
        plan_tap(read(path), "linear", tap_command=TAP, port=70000)
    picked = plan_tap(read(path), "linear", tap_command=TAP, port=0)
    assert picked.proxy_url is not None and picked.proxy_url.endswith("/sse?team=eng")
    port = int(picked.proxy_url.split(":")[2].split("/")[0])
    assert 20000 <= port < 40000
    assert plan_tap(read(path), "linear", tap_command=TAP, port=0).proxy_url == picked.proxy_url
    assert pick_port("a seed") == pick_port("a seed")
    assert path.read_bytes() == CURSOR.encode() and not record_path(path).exists()


# -- VS Code mcp.json: four spaces, no final newline, inputs, one arg per line --------------------------

VSCODE = """{
    "inputs": [
        {"type": "promptString", "id": "gh-token", "description": "GitHub token", "password": true}
    ],
    "servers": {
        "github": {
            "type": "http",
            "url": "https://api.githubcopilot.com/mcp/",
            "headers": {"Authorization": "Bearer ${input:gh-token}"}
        },
        "playwright": {
            "type": "stdio",
            "command": "npx",
            "args": [
                "@playwright/mcp@latest",
                "--browser=firefox"
            ],
            "envFile": "${workspaceFolder}/.env"
        },
        "memory": {
            "command": "npx",
            "args": []
        },
        "everything": {
            "command": "npx",
            "args": [
                "@modelcontextprotocol/server-everything"
            ]
        }
    }
}"""


def test_vscode_mcp_json(tmp_path):
    path = write(tmp_path, "project/.vscode/mcp.json", VSCODE.encode())
    config = read(path)
    assert config.kind == "vscode" and config.container == ("servers",)
    assert [(e.name, e.transport) for e in config.entries] == [
        ("github", "url"), ("playwright", "stdio"), ("memory", "stdio"), ("everything", "stdio")]

    change = tap(path, "playwright")
    tapped = swap(VSCODE, '''"command": "npx",
            "args": [
                "@playwright/mcp@latest",''', '''"command": "/opt/spyglass/bin/spyglass",
            "args": [
                "tap",
                "--name",
                "playwright",
                "--",
                "npx",
                "@playwright/mcp@latest",''')
    assert path.read_bytes() == tapped.encode()
    assert change.preview() == f"""--- {path}
+++ {path} (playwright tapped)
@@ -12,4 +12,9 @@
             "type": "stdio",
-            "command": "npx",
+            "command": "/opt/spyglass/bin/spyglass",
             "args": [
+                "tap",
+                "--name",
+                "playwright",
+                "--",
+                "npx",
                 "@playwright/mcp@latest","""
    assert loads(tapped)["servers"]["playwright"] == {
        "type": "stdio", "command": "/opt/spyglass/bin/spyglass", "envFile": "${workspaceFolder}/.env",
        "args": ["tap", "--name", "playwright", "--", "npx", "@playwright/mcp@latest", "--browser=firefox"]}

    tap(path, "memory")  # empty args: written on one line
    both = swap(tapped, '''"command": "npx",
            "args": []''', '''"command": "/opt/spyglass/bin/spyglass",
            "args": ["tap", "--name", "memory", "--", "npx"]''')
    assert path.read_bytes() == both.encode()
    tap(path, "everything")  # one arg on a line of its own: so are the new ones
    three = swap(both, '''"command": "npx",
            "args": [
                "@modelcontextprotocol/server-everything"''', '''"command": "/opt/spyglass/bin/spyglass",
            "args": [
                "tap",
                "--name",
                "everything",
                "--",
                "npx",
                "@modelcontextprotocol/server-everything"''')
    assert path.read_bytes() == three.encode()
    untap(path, "playwright")
    untap(path, "everything")
    untap(path, "memory")
    assert path.read_bytes() == VSCODE.encode()


# -- VS Code settings.json: JSONC with comments and trailing commas --------------------------------------

SETTINGS = """// Place your settings in this file to overwrite the default settings
{
    "editor.fontSize": 14,
    /* MCP servers, shared with the team */
    "mcp": {
        "servers": {
            "fetch": {
                "type": "stdio",
                "command": "uvx",
                "args": [
                    "mcp-server-fetch", // the official one
                    "--ignore-robots-txt",
                ],
            },
            "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=Europe/Zürich"],},
        },
    },
    "files.trimTrailingWhitespace": true, // "mcp": {"servers": {}} in a comment is not a server
}
"""


def test_vscode_settings_jsonc(tmp_path):
    path = write(tmp_path, "Code/User/settings.json", SETTINGS.encode())
    config = read(path)
    assert config.kind == "vscode" and config.container == ("mcp", "servers")
    assert config.names == ["fetch", "time"]
    assert config.entry("time").command == ("uvx", "mcp-server-time", "--local-timezone=Europe/Zürich")

    tap(path, "fetch")
    tapped = swap(SETTINGS, '''"command": "uvx",
                "args": [
                    "mcp-server-fetch", // the official one
                    "--ignore-robots-txt",
                ],''', '''"command": "/opt/spyglass/bin/spyglass",
                "args": [
                    "tap",
                    "--name",
                    "fetch",
                    "--",
                    "uvx",
                    "mcp-server-fetch",
                    "--ignore-robots-txt"
                ],''')
    assert path.read_bytes() == tapped.encode()
    data = loads(tapped)
    assert data["mcp"]["servers"]["fetch"]["args"] == ["tap", "--name", "fetch", "--", "uvx", "mcp-server-fetch",
                                                       "--ignore-robots-txt"]
    assert data["editor.fontSize"] == 14 and data["files.trimTrailingWhitespace"] is True

    tap(path, "time")
    both = swap(tapped, '''"time": {"command": "uvx", "args": ["mcp-server-time", \
"--local-timezone=Europe/Zürich"],}''',
                '''"time": {"command": "/opt/spyglass/bin/spyglass", "args": ["tap", "--name", "time", "--", "uvx", \
"mcp-server-time", "--local-timezone=Europe/Zürich"],}''')
    assert path.read_bytes() == both.encode()
    untap(path, "fetch")
    untap(path, "time")
    assert path.read_bytes() == SETTINGS.encode()


# -- Claude Code .mcp.json: entries on one line, a command with its arguments in it ---------------------

CLAUDE_CODE = """{
  "mcpServers": {
    "sqlite": {"type": "stdio", "command": "uvx", "args": ["mcp-server-sqlite", "--db-path", "./dev.db"]},
    "sentry": {"type": "sse", "url": "https://mcp.sentry.dev/sse"},
    "café": {"command":"node server.js --verbose"}
  }
}"""


def test_claude_code_mcp_json(tmp_path):
    path = write(tmp_path, "repo/.mcp.json", CLAUDE_CODE.encode())
    config = read(path)
    assert config.kind == "claude-code"
    assert [(e.name, e.transport) for e in config.entries] == [("sqlite", "stdio"), ("sentry", "url"),
                                                               ("café", "stdio")]

    tap(path, "sqlite")
    tapped = swap(CLAUDE_CODE, '''"command": "uvx", "args": ["mcp-server-sqlite",''',
                  '''"command": "/opt/spyglass/bin/spyglass", "args": ["tap", "--name", "sqlite", "--", "uvx", \
"mcp-server-sqlite",''')
    assert path.read_bytes() == tapped.encode()

    # a command line in one string is split for the tap, which starts a program and not a shell
    change = tap(path, "café")
    both = swap(tapped, '''"café": {"command":"node server.js --verbose"}''',
                '''"café": {"command":"/opt/spyglass/bin/spyglass", "args":["tap", "--name", "café", "--", "node", \
"server.js", "--verbose"]}''')
    assert path.read_bytes() == both.encode()
    assert any("holds its arguments" in n for n in change.notes)
    assert loads(both)["mcpServers"]["café"] == {"command": "/opt/spyglass/bin/spyglass", "args": [
        "tap", "--name", "café", "--", "node", "server.js", "--verbose"]}

    tap(path, "sentry", port=9100)
    assert loads(path.read_text(encoding="utf-8"))["mcpServers"]["sentry"] == {
        "type": "sse", "url": "http://127.0.0.1:9100/sse"}
    for name in ("sentry", "café", "sqlite"):
        untap(path, name)
    assert path.read_bytes() == CLAUDE_CODE.encode()


# -- undoing ---------------------------------------------------------------------------------------------


def test_two_taps_undone_in_the_other_order(tmp_path):
    path = write(tmp_path, "Claude/claude_desktop_config.json", CLAUDE.encode())
    tap(path, "filesystem")
    after_first = path.read_bytes()
    tap(path, "notes")
    untap(path, "filesystem")
    assert read(path).entry("notes").tapped and not read(path).entry("filesystem").tapped
    untap(path, "notes")
    assert path.read_bytes() == CLAUDE.encode()
    # the backup is the file before the first tap, never one taken later
    assert backup_path(path).read_bytes() == CLAUDE.encode() != after_first
    assert not record_path(path).exists()


def test_the_backup_is_never_overwritten(tmp_path):
    path = write(tmp_path, ".cursor/mcp.json", CURSOR.encode())
    tap(path, "puppeteer")
    untap(path, "puppeteer")
    edited = CURSOR.replace("crème", "brûlée")
    path.write_bytes(edited.encode())
    tap(path, "puppeteer")
    assert backup_path(path).read_bytes() == CURSOR.encode()
    untap(path, "puppeteer")
    assert path.read_bytes() == edited.encode()


def test_untap_after_another_entry_was_edited_restores_just_this_one(tmp_path):
    path = write(tmp_path, "Code/User/settings.json", SETTINGS.encode())
    tap(path, "fetch")
    text = path.read_text(encoding="utf-8")
    theme = '"editor.fontSize": 16,\n    "workbench.colorTheme": "Solarized",'
    edited = swap(text, '"editor.fontSize": 14,', theme)
    edited = swap(edited, '"--local-timezone=Europe/Zürich"', '"--local-timezone=Asia/Tokyo"')
    path.write_text(edited, encoding="utf-8")
    untap(path, "fetch")
    expected = swap(SETTINGS, '"editor.fontSize": 14,', theme)
    assert path.read_bytes() == swap(expected, "Europe/Zürich", "Asia/Tokyo").encode()


def test_untap_after_this_entry_was_edited_refuses(tmp_path):
    path = write(tmp_path, "project/.vscode/mcp.json", VSCODE.encode())
    tap(path, "playwright")
    edited = swap(path.read_text(encoding="utf-8"), '"--browser=firefox"', '"--browser=chromium"')
    path.write_text(edited, encoding="utf-8")
    entry = read(path).entry("playwright")
    assert entry.tapped and not entry.restorable
    with pytest.raises(UsageError) as err:
        plan_untap(read(path), "playwright")
    assert "edited by hand" in err.value.message
    assert str(backup_path(path)) in err.value.message and str(record_path(path)) in err.value.message
    assert path.read_bytes() == edited.encode()
    with pytest.raises(UsageError, match="tapped already, and Spyglass cannot undo that tap exactly"):
        plan_tap(read(path), "playwright", tap_command=TAP)


def test_an_entry_put_back_by_hand_can_be_tapped_again(tmp_path):
    path = write(tmp_path, "repo/.mcp.json", CLAUDE_CODE.encode())
    tap(path, "sqlite")
    path.write_bytes(CLAUDE_CODE.replace('"./dev.db"]}', '"./dev.db"] }').encode())
    assert not read(path).entry("sqlite").tapped
    tap(path, "sqlite")
    untap(path, "sqlite")
    assert path.read_bytes() == CLAUDE_CODE.replace('"./dev.db"]}', '"./dev.db"] }').encode()
    # one put back exactly is no longer in the record, which goes with the last tap undone
    tap(path, "sqlite")
    tap(path, "sentry", port=9100)
    path.write_text(swap(path.read_text(encoding="utf-8"), "http://127.0.0.1:9100/sse", "https://mcp.sentry.dev/sse"),
                    encoding="utf-8")
    assert not read(path).entry("sentry").tapped
    untap(path, "sqlite")
    assert not record_path(path).exists()


def test_tapping_twice_or_untapping_what_is_not_tapped_is_refused(tmp_path):
    path = write(tmp_path, "repo/.mcp.json", CLAUDE_CODE.encode())
    with pytest.raises(UsageError, match="'sqlite' in .* is not tapped"):
        plan_untap(read(path), "sqlite")
    tap(path, "sqlite")
    with pytest.raises(UsageError, match="tapped already; untap it first"):
        plan_tap(read(path), "sqlite", tap_command=TAP)


def test_a_tap_made_elsewhere_is_seen_but_not_undone_without_a_record(tmp_path):
    text = '{"mcpServers": {"x": {"command": "spyglass", "args": ["tap", "--name", "x", "--", "uvx", "srv"]}}}'
    path = write(tmp_path, "claude_desktop_config.json", text.encode())
    assert read(path).entry("x").tapped
    with pytest.raises(UsageError, match="has no record of its original entry"):
        plan_untap(read(path), "x")


# -- refusals ----------------------------------------------------------------------------------------


def test_a_config_that_does_not_parse_is_refused_and_left_untouched(tmp_path):
    broken = "\ufeff{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"uvx\" \"args\": []}\n  }\n}\n"
    path = write(tmp_path, "Claude/claude_desktop_config.json", broken.encode())
    os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    with pytest.raises(TapConfigError) as err:
        read(path)
    assert err.value.details == {"file": str(path), "line": 3, "column": 28}
    assert f"{path}: invalid JSON at line 3, column 28" in err.value.message
    assert "left untouched" in err.value.message
    assert isinstance(err.value, UsageError)
    assert path.read_bytes() == broken.encode() and path.stat().st_mtime_ns == 1_600_000_000_000_000_000
    assert not backup_path(path).exists() and not record_path(path).exists()


def test_apply_after_the_file_changed_since_the_plan_is_refused(tmp_path):
    path = write(tmp_path, "Claude/claude_desktop_config.json", CLAUDE.encode())
    change = plan_tap(read(path), "github", tap_command=TAP)
    changed = CLAUDE.replace("Ctrl+Space", "Alt+Space")
    path.write_bytes(changed.encode())
    with pytest.raises(UsageError, match="changed since the preview"):
        apply(change)
    assert path.read_bytes() == changed.encode()
    assert not backup_path(path).exists() and not record_path(path).exists()
    # the untap planned before another tap was applied is stale too: the record changed
    tap(path, "github")
    stale = plan_untap(read(path), "github")
    tap(path, "notes")
    with pytest.raises(UsageError, match="changed since the preview"):
        apply(stale)


def test_missing_file_unknown_name_and_unusable_files(tmp_path):
    with pytest.raises(TapConfigError, match="config file not found: .*nowhere.json"):
        read(tmp_path / "nowhere.json")
    with pytest.raises(TapConfigError, match="is a folder"):
        read(tmp_path)
    path = write(tmp_path, "Claude/claude_desktop_config.json", CLAUDE.encode())
    with pytest.raises(UsageError) as err:
        plan_tap(read(path), "gitlab", tap_command=TAP)
    assert err.value.message == f"{path} has no server named 'gitlab' (it has: 'filesystem', 'github', 'notes')"
    latin = write(tmp_path, "latin.json", '{"mcpServers": {"é": {"command": "x"}}}'.encode("latin-1"))
    with pytest.raises(TapConfigError, match=r"is not UTF-8 text \(byte 17\)"):
        read(latin)
    huge = write(tmp_path, "huge.json", b'{"mcpServers": {}, "pad": "' + b"x" * MAX_BYTES + b'"}')
    with pytest.raises(TapConfigError, match="too big for a config file"):
        read(huge)
    for bad in ('{"mcpServers": []}', "[1, 2]"):
        with pytest.raises(TapConfigError):
            read(write(tmp_path, "bad.json", bad.encode()))
    with pytest.raises(UsageError, match="unknown host kind"):
        read(path, kind="zed")
    with pytest.raises(UsageError, match="must be a program"):
        plan_tap(read(path), "github", tap_command=[])


def test_entries_that_cannot_be_tapped(tmp_path):
    text = '{"mcpServers": {"a": {"env": {}}, "b": {"command": "x", "args": "y"}, "c": 3, "d": {"url": "ftp://h/"}}}'
    path = write(tmp_path, "claude_desktop_config.json", text.encode())
    config = read(path)
    assert [(e.transport, e.problem) for e in config.entries] == [
        ("unknown", 'it has neither a "command" nor a "url"'), ("unknown", '"args" is not a list of strings'),
        ("unknown", "the entry is not an object"), ("url", None)]
    for name in "abc":
        with pytest.raises(UsageError, match="cannot be tapped"):
            plan_tap(config, name, tap_command=TAP)
    with pytest.raises(UsageError, match="not an http"):
        plan_tap(config, "d", tap_command=TAP, port=9000)
    twice = '{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}'
    with pytest.raises(UsageError, match="appears 2 times"):
        plan_tap(read(write(tmp_path, "claude_desktop_config.json", twice.encode())), "a", tap_command=TAP)


def test_a_read_only_file_is_refused_and_the_mode_is_kept(tmp_path):
    path = write(tmp_path, "Claude/claude_desktop_config.json", CLAUDE.encode())
    path.chmod(0o444)
    config = read(path)
    assert not config.writable
    with pytest.raises(UsageError, match="is read-only"):
        plan_tap(config, "github", tap_command=TAP)
    path.chmod(0o600)
    change = plan_tap(read(path), "github", tap_command=TAP)
    path.chmod(0o444)
    with pytest.raises(UsageError, match="is read-only"):
        apply(change)
    path.chmod(0o640)
    apply(change)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # the host's file: its mode is the host's
    # what Spyglass makes beside it holds the same secrets, and is for this user only
    assert stat.S_IMODE(record_path(path).stat().st_mode) == 0o600
    assert stat.S_IMODE(backup_path(path).stat().st_mode) == 0o600


def test_a_symlinked_config_stays_a_symlink(tmp_path):
    real = write(tmp_path, "dotfiles/cursor-mcp.json", CURSOR.encode())
    link = tmp_path / "home/.cursor/mcp.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    tap(link, "puppeteer")
    assert link.is_symlink() and b'"--name", "puppeteer"' in real.read_bytes()
    untap(link, "puppeteer")
    assert link.is_symlink() and real.read_bytes() == CURSOR.encode()


def test_a_damaged_record_is_refused(tmp_path):
    path = write(tmp_path, "Claude/claude_desktop_config.json", CLAUDE.encode())
    record_path(path).write_text('{"format": "spyglass-taps", "taps": {"x": 1}}', encoding="utf-8")
    with pytest.raises(TapConfigError, match="is damaged"):
        read(path)


def test_hosts_per_system(tmp_path):
    home = tmp_path / "home"
    write(tmp_path, "home/.cursor/mcp.json", b"{}")
    linux = {(h.label, h.path, h.exists) for h in hosts(tmp_path / "proj", system="Linux", environ={}, home=home)}
    assert linux == {
        ("Claude Desktop", home / ".config/Claude/claude_desktop_config.json", False),
        ("Cursor", home / ".cursor/mcp.json", True),
        ("VS Code (user mcp.json)", home / ".config/Code/User/mcp.json", False),
        ("VS Code (user settings.json)", home / ".config/Code/User/settings.json", False),
        ("VS Code (this folder's .vscode/mcp.json)", tmp_path / "proj/.vscode/mcp.json", False),
        ("Claude Code (this folder's .mcp.json)", tmp_path / "proj/.mcp.json", False)}
    mac = hosts(system="Darwin", environ={}, home=home)
    assert mac[0].kind == "claude-desktop"
    assert mac[0].path == home / "Library/Application Support/Claude/claude_desktop_config.json"
    roaming = tmp_path / "Roaming"
    windows = hosts(system="Windows", environ={"APPDATA": str(roaming)}, home=home)
    assert windows[0].path == roaming / "Claude/claude_desktop_config.json"
    assert windows[3].path == roaming / "Code/User/settings.json"
    assert hosts(system="Windows", environ={}, home=home)[0].path == \
        home / "AppData/Roaming/Claude/claude_desktop_config.json"
    assert [h.kind for h in hosts()] == ["claude-desktop", "cursor", "vscode", "vscode", "vscode", "claude-code"]
