"""Export in the Claude Desktop format and as a `spyglass` command line; the shared keystore."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from catalog_support import catalog_path_fixture, memory_keyring_fixture, no_keyring_fixture  # noqa: F401 - fixtures

from inspector.catalog import Catalog, same_definition
from inspector.config import ConfigError, ServerSpec
from inspector.exporters import claude_desktop_config, claude_desktop_json, export_claude_desktop, spyglass_command
from inspector.importers import apply, preview_file
from inspector.keystore import MemorySecrets, SecretStore
from inspector.secrets import MASK

DATA = Path(__file__).resolve().parent.parent / "data" / "configs"


@pytest.fixture
def catalog(catalog_path) -> Catalog:
    catalog = Catalog(catalog_path).load()
    catalog.add(ServerSpec(name="github", command=["npx", "-y", "@modelcontextprotocol/server-github"],
                           env={"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_1", "LOG_LEVEL": "debug"}))
    catalog.add(ServerSpec(name="notes", url="https://notes.example.com/mcp", transport="http",
                           headers={"Authorization": "Bearer tok-2", "X-Team": "docs"}))
    catalog.add(ServerSpec(name="events", url="http://localhost:8931/sse", transport="sse"))
    catalog.add(ServerSpec(name="db", command=["db-mcp", "--dsn env"], env={"DSN": "postgres://u:pw@h/d"},
                           cwd="/srv/my tools"), secret_marks={"env:DSN"}, mode="legacy")
    return catalog


def test_claude_desktop_export_masks_secrets_by_default(catalog):
    data = claude_desktop_config(catalog.servers)
    servers = data["mcpServers"]
    assert list(servers) == ["github", "notes", "events", "db"]
    assert servers["github"] == {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                                 "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": MASK, "LOG_LEVEL": "debug"}}
    assert servers["notes"] == {"type": "http", "url": "https://notes.example.com/mcp",
                                "headers": {"Authorization": f"Bearer {MASK}", "X-Team": "docs"}}
    assert servers["events"] == {"type": "sse", "url": "http://localhost:8931/sse"}
    assert servers["db"]["env"] == {"DSN": MASK} and servers["db"]["cwd"] == "/srv/my tools"
    text = claude_desktop_json(catalog.servers)
    for secret in ("ghp_1", "tok-2", "pw@h"):
        assert secret not in text


def test_claude_desktop_export_with_secrets_round_trips(catalog, tmp_path):
    revealed = claude_desktop_config(catalog.servers, reveal_secrets=True)["mcpServers"]
    assert revealed["github"]["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"] == "ghp_1"
    assert revealed["notes"]["headers"]["Authorization"] == "Bearer tok-2"
    path = tmp_path / "claude_desktop_config.json"
    export_claude_desktop(path, catalog.servers, reveal_secrets=True)
    other = Catalog(tmp_path / "other.json", secrets=MemorySecrets()).load()
    preview = preview_file(path, other, env={"PATH": ""})
    apply(preview, other)
    for mine in catalog.servers:
        theirs = other.find(mine.name)
        assert theirs is not None and same_definition(theirs.spec, mine.spec), mine.name


def test_one_server_export_merges_into_an_existing_file(catalog, tmp_path):
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"globalShortcut": "Ctrl+Space",
                                "mcpServers": {"kept": {"command": "kept-mcp"}, "github": {"command": "old"}}}))
    export_claude_desktop(path, [catalog.find("github")])
    data = json.loads(path.read_text())
    assert data["globalShortcut"] == "Ctrl+Space"
    assert data["mcpServers"]["kept"] == {"command": "kept-mcp"}
    assert data["mcpServers"]["github"]["command"] == "npx"
    assert data["mcpServers"]["github"]["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"] == MASK


def test_export_never_overwrites_a_broken_file(catalog, tmp_path):
    path = tmp_path / "claude_desktop_config.json"
    path.write_text('{"mcpServers": {\n  "x": }')
    with pytest.raises(ConfigError, match="line 2"):
        export_claude_desktop(path, catalog.servers)
    assert path.read_text() == '{"mcpServers": {\n  "x": }'


def test_spyglass_command_line_for_a_stdio_server(catalog):
    db = catalog.find("db")
    line = spyglass_command(db)
    assert line == ("spyglass --protocol legacy -e DSN=\"$DSN\" --cwd '/srv/my tools' -- db-mcp '--dsn env'")
    words = shlex.split(line)
    assert words[-3:] == ["--", "db-mcp", "--dsn env"]
    revealed = shlex.split(spyglass_command(db, reveal_secrets=True))
    assert "DSN=postgres://u:pw@h/d" in revealed
    github = spyglass_command(catalog.find("github"))
    assert '-e GITHUB_PERSONAL_ACCESS_TOKEN="$GITHUB_PERSONAL_ACCESS_TOKEN"' in github and "ghp_1" not in github
    assert "-e LOG_LEVEL=debug" in github


def test_spyglass_command_line_for_remote_servers(catalog):
    notes = spyglass_command(catalog.find("notes"))
    assert shlex.split(notes) == ["spyglass", "https://notes.example.com/mcp", "--header",
                                  f"Authorization: Bearer {MASK}", "--header", "X-Team: docs"]
    assert "tok-2" in spyglass_command(catalog.find("notes"), reveal_secrets=True)
    assert shlex.split(spyglass_command(catalog.find("events"))) == [
        "spyglass", "http://localhost:8931/sse", "--transport", "sse"]
    # a bare ServerSpec works too (secrets recognised by name)
    spec = ServerSpec(name="x", command=[sys.executable, "-m", "inspector.demo"], env={"API_KEY": "k"})
    assert shlex.split(spyglass_command(spec))[:3] == ["spyglass", "-e", "API_KEY=$API_KEY"]


def test_keystore_strings_and_records(memory_keyring):
    store = SecretStore(service="spyglass-test")
    assert store.persistent and store.get("a") is None
    store.set("a", "1")
    store.save("rec", {"access_token": "x"})
    assert memory_keyring.items[("spyglass-test", "a")] == "1"
    assert store.load("rec") == {"access_token": "x"}
    store.delete("a")
    store.delete("never-there")  # no error
    assert store.get("a") is None and store.warning is None


def test_keystore_falls_back_to_memory_and_says_so(no_keyring):
    seen: list[str] = []
    store = SecretStore(what="Tokens", on_warning=seen.append)
    store.set("k", "v")
    assert store.get("k") == "v" and not store.persistent
    assert seen == [store.warning] and store.warning.startswith("Tokens cannot be saved")


def test_keystore_falls_back_when_the_backend_refuses_to_write(memory_keyring, monkeypatch):
    from keyring.errors import PasswordSetError

    def locked(*args):
        raise PasswordSetError("the keyring is locked")

    monkeypatch.setattr(memory_keyring, "set_password", locked)
    store = SecretStore()
    store.set("k", "v")
    assert store.get("k") == "v" and "writing failed" in store.warning


def test_keystore_falls_back_when_reading_says_there_is_no_keyring(memory_keyring, monkeypatch):
    from keyring.errors import NoKeyringError

    def none(*args):
        raise NoKeyringError("No recommended backend was available")

    monkeypatch.setattr(memory_keyring, "get_password", none)
    store = SecretStore()
    assert store.get("k") is None and "cannot be saved" in store.warning and not store.persistent
