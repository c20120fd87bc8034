"""Importers against real-looking files from Claude Desktop, Cursor, VS Code, the official
inspector and the MCP registry, including broken ones; previews before writes."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from catalog_support import catalog_path_fixture, memory_keyring_fixture  # noqa: F401 - fixtures

from inspector.catalog import Catalog, CatalogError
from inspector.config import ServerSpec
from inspector.importers import (
    Choice,
    ImportFileError,
    MissingAnswers,
    apply,
    detect_format,
    preview_file,
    preview_text,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "configs"
ENV = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/home/ada", "NOTES_TOKEN": "notes-tok-1"}


@pytest.fixture
def catalog(catalog_path) -> Catalog:
    return Catalog(catalog_path).load()


def by_key(preview):
    return {e.key: e for e in preview.entries}


# --- each format ---------------------------------------------------------------------------------

def test_claude_desktop(catalog, memory_keyring):
    preview = preview_file(DATA / "claude_desktop_config.json", catalog, env=ENV)
    assert preview.format == "claude-desktop" and "Claude Desktop" in preview.format_label
    entries = by_key(preview)
    assert list(entries) == ["filesystem", "github", "sqlite"]
    assert entries["filesystem"].spec.command == ["npx", "-y", "@modelcontextprotocol/server-filesystem",
                                                 "/Users/ada/Desktop", "/Users/ada/Downloads"]
    assert entries["github"].spec.env == {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_exampleexampleexampleexample0000"}
    assert entries["github"].line == 12 and preview.questions == []
    assert all(e.default_action == "add" for e in preview.entries)
    assert not catalog.path.exists()  # a preview writes nothing
    result = apply(preview, catalog)
    assert [e.name for e in result.added] == ["filesystem", "github", "sqlite"]
    assert "ghp_example" not in catalog.path.read_text()
    again = Catalog(catalog.path).load()
    assert again.find("github").spec.env["GITHUB_PERSONAL_ACCESS_TOKEN"] == "ghp_exampleexampleexampleexample0000"
    assert again.find("github").source == {"file": str(DATA / "claude_desktop_config.json"), "entry": "github",
                                           "format": "claude-desktop"}


def test_cursor_remotes_headers_and_env_interpolation(catalog):
    preview = preview_file(DATA / "cursor_mcp.json", catalog, env=ENV)
    assert preview.format == "cursor"
    e = by_key(preview)
    assert e["linear"].spec.url == "https://mcp.linear.app/sse" and e["linear"].spec.command == []
    assert e["context7"].spec.headers == {"CONTEXT7_API_KEY": "ctx7sk-example-0000"}
    assert e["notes"].spec.headers["Authorization"] == "Bearer notes-tok-1"  # ${env:NOTES_TOKEN} resolved
    shown = e["notes"].masked_spec()
    assert shown.headers == {"Authorization": "Bearer ••••••", "X-Team": "docs"}
    assert e["context7"].masked_spec().headers == {"CONTEXT7_API_KEY": "••••••"}
    questions = {q.token: q for q in preview.questions}
    assert set(questions) == {"env:PGDATABASE", "env:PGPASSWORD"}  # not set: asked for
    assert questions["env:PGPASSWORD"].password and not questions["env:PGDATABASE"].password
    with pytest.raises(MissingAnswers) as info:
        apply(preview, catalog)
    assert {q.token for q in info.value.questions} == {"env:PGDATABASE", "env:PGPASSWORD"}
    assert not catalog.path.exists() and catalog.servers == []
    result = apply(preview, catalog, answers={"env:PGDATABASE": "shop", "env:PGPASSWORD": "pg-pw"})
    pg = next(s for s in result.added if s.name == "postgres")
    assert pg.spec.command[-1] == "postgresql://localhost/shop" and pg.spec.env == {"PGPASSWORD": "pg-pw"}
    text = catalog.path.read_text()
    assert "pg-pw" not in text and "notes-tok-1" not in text and "ctx7sk" not in text


def test_vscode_inputs_env_and_workspace_folder(catalog, memory_keyring, tmp_path):
    preview = preview_file(DATA / "vscode_mcp.json", catalog, env=ENV)  # JSON with comments and a trailing comma
    assert preview.format == "vscode"
    e = by_key(preview)
    assert e["github"].spec.url == "https://api.githubcopilot.com/mcp/" and e["github"].spec.transport == "http"
    assert e["legacy-events"].spec.transport == "sse"
    assert e["project-tools"].spec.env == {"HOME_DIR": "/home/ada"}  # ${env:HOME} resolved now
    questions = {q.token: q for q in preview.questions}
    assert list(questions) == ["input:perplexity-key", "input:log-level", "workspaceFolder"]
    key = questions["input:perplexity-key"]
    assert key.password and key.description == "Perplexity API Key" and key.kind == "input"
    assert key.used_in == ["perplexity: env PERPLEXITY_API_KEY"]
    level = questions["input:log-level"]
    assert level.choices == ["debug", "info", "warning"] and level.default == "info"
    assert questions["workspaceFolder"].kind == "variable"
    assert any("envFile" in w for w in e["fetch"].warnings)
    with pytest.raises(MissingAnswers):
        apply(preview, catalog, answers={"input:perplexity-key": "pplx-1"})
    result = apply(preview, catalog, answers={"input:perplexity-key": "pplx-1", "workspaceFolder": "/work/repo"})
    added = {s.name: s for s in result.added}
    assert added["fetch"].spec.command == ["uvx", "mcp-server-fetch", "--log-level", "info"]  # the default
    assert added["project-tools"].spec.command == ["python", "/work/repo/tools/server.py"]
    assert added["perplexity"].spec.env == {"PERPLEXITY_API_KEY": "pplx-1"}
    assert "pplx-1" not in catalog.path.read_text()
    assert ("spyglass", f"{added['perplexity'].id}/env:PERPLEXITY_API_KEY") in memory_keyring.items


def test_vscode_password_inputs_make_any_field_secret(catalog, memory_keyring):
    text = json.dumps({"inputs": [{"type": "promptString", "id": "dsn", "description": "Database URL",
                                   "password": True}],
                       "servers": {"db": {"type": "stdio", "command": sys.executable, "args": ["-V"],
                                          "env": {"DATABASE_URL": "${input:dsn}"}}}})
    preview = preview_text(text, "<dropped>", catalog, env=ENV)
    entry = preview.entries[0]
    assert entry.secret_marks == {"env:DATABASE_URL"}
    apply(preview, catalog, answers={"input:dsn": "postgres://u:pw@db/x"})
    assert "pw@db" not in catalog.path.read_text()


def test_vscode_settings_json_mcp_block():
    text = '{"editor.fontSize": 14, "mcp": {"servers": {"echo": {"command": "echo", "args": ["hi"]}}}}'
    preview = preview_text(text, "settings.json", env=ENV)
    assert preview.format == "vscode" and preview.entries[0].spec.command == ["echo", "hi"]


def test_official_inspector_config(catalog):
    preview = preview_file(DATA / "inspector_config.json", catalog, env=ENV)
    assert preview.format == "mcp-inspector"
    e = by_key(preview)
    assert e["everything"].spec.env == {"HELLO": "Hello MCP!"}
    http = e["everything-http"]
    assert http.spec.transport == "http" and http.spec.url == "http://localhost:3001/mcp"
    assert http.mode == "modern" and http.timeout == 30.0
    assert e["everything-sse"].spec.transport == "sse"
    weather = e["weather"]
    assert "server 'weather': unknown key 'colour' ignored" in weather.warnings
    assert any("WEATHER_API_KEY" in w and "keychain" in w for w in weather.warnings)
    result = apply(preview, catalog)
    assert catalog.find("everything-http").mode == "modern" and catalog.find("everything-http").timeout == 30.0
    assert len(result.added) == 4


def test_official_inspector_catalog(catalog):
    preview = preview_file(DATA / "mcp_inspector_catalog.json", catalog, env=ENV)
    assert preview.format == "mcp-inspector"
    issues = by_key(preview)["issues"]
    assert issues.spec.headers == {"X-Tenant": "acme"} and issues.mode == "legacy"
    assert any("OAuth" in w for w in issues.warnings)
    assert not any("unknown key" in w for w in issues.warnings)  # metadata, roots... are known


def test_registry_server_json(catalog, memory_keyring):
    preview = preview_file(DATA / "server.json", catalog, env=ENV)
    assert preview.format == "registry"
    names = [e.name for e in preview.entries]
    assert names == ["Weather (npm)", "Weather (pypi)", "Weather (oci)", "Weather (remote http)"]
    npm, pypi, oci, remote = preview.entries
    assert npm.spec.command == ["npx", "-y", "@example/weather-mcp@1.4.2", "--units", "${arg:units}",
                                "${arg:region}"]
    assert pypi.spec.command == ["uvx", "weather-mcp-server==1.4.2"]
    assert oci.spec.command == ["docker", "run", "-i", "--rm", "-e", "WEATHER_API_KEY",
                                "ghcr.io/example/weather-mcp:1.4.2"]
    assert remote.spec.url == "https://${var:url:tenant}.weather.example.com/mcp"
    assert npm.secret_marks == {"env:WEATHER_API_KEY"} and remote.secret_marks == {"header:X-API-Key"}
    questions = {q.token: q for q in preview.questions}
    assert questions["env-var:WEATHER_API_KEY"].password and questions["env-var:WEATHER_API_KEY"].required
    assert questions["env-var:WEATHER_API_KEY"].used_in == [
        "Weather (npm): env WEATHER_API_KEY", "Weather (pypi): env WEATHER_API_KEY",
        "Weather (oci): env WEATHER_API_KEY"]
    assert questions["arg:units"].default == "metric" and questions["arg:units"].choices == ["metric", "imperial"]
    assert questions["var:url:tenant"].description == "Your tenant name"
    assert questions["header:X-API-Key"].password
    answers = {"env-var:WEATHER_API_KEY": "wk-1", "arg:region": "north", "var:url:tenant": "acme",
               "header:X-API-Key": "hk-2"}
    result = apply(preview, catalog, choices={"io.github.example/weather (oci)": "skip"}, answers=answers)
    added = {s.name: s for s in result.added}
    assert list(added) == ["Weather (npm)", "Weather (pypi)", "Weather (remote http)"]
    assert result.skipped == ["io.github.example/weather (oci)"]
    assert added["Weather (npm)"].spec.command[-3:] == ["--units", "metric", "north"]
    assert added["Weather (npm)"].spec.env == {"WEATHER_API_KEY": "wk-1", "WEATHER_CACHE_DIR": "/tmp/weather"}
    assert added["Weather (remote http)"].spec.url == "https://acme.weather.example.com/mcp"
    assert added["Weather (remote http)"].spec.headers == {"X-API-Key": "hk-2"}
    text = catalog.path.read_text()
    assert "wk-1" not in text and "hk-2" not in text


def test_registry_snake_case_schema_and_api_wrapper():
    preview = preview_file(DATA / "server_snake_case.json", env=ENV)
    pypi, sse = preview.entries
    assert pypi.spec.command == ["uvx", "notes-mcp==0.3.0", "--notes-dir", "${arg:notes-dir}"]
    assert preview.questions[0].default == "~/notes" and preview.questions[0].label == "notes_dir"
    assert sse.spec.transport == "sse" and sse.spec.url == "https://notes.example.com/sse"
    wrapped = json.dumps({"server": json.loads((DATA / "server.json").read_text()),
                          "_meta": {"io.modelcontextprotocol.registry/official": {"isLatest": True}}})
    assert [e.name for e in preview_text(wrapped, env=ENV).entries][0] == "Weather (npm)"


def test_registry_nuget_and_mcpb():
    server = {"name": "io.github.example/tools", "description": "x", "version": "0.5.0", "packages": [
        {"registryType": "nuget", "identifier": "Example.Tools", "version": "0.5.0", "transport": {"type": "stdio"},
         "packageArguments": [{"type": "positional", "value": "mcp"}, {"type": "positional", "value": "start"}]},
        {"registryType": "mcpb", "identifier": "https://example.com/tools.mcpb", "transport": {"type": "stdio"},
         "fileSha256": "0" * 64}]}
    nuget, mcpb = preview_text(json.dumps(server), env=ENV).entries
    assert nuget.spec.command == ["dnx", "Example.Tools@0.5.0", "--yes", "--", "mcp", "start"]
    assert mcpb.spec is None and "bundles" in mcpb.error and mcpb.default_action == "skip"


# --- detection by content ------------------------------------------------------------------------

def test_format_is_detected_by_content_not_name(tmp_path):
    misleading = tmp_path / "server.json"
    shutil.copy(DATA / "claude_desktop_config.json", misleading)
    assert preview_file(misleading, env=ENV).format == "claude-desktop"
    misleading2 = tmp_path / "claude_desktop_config.json"
    shutil.copy(DATA / "server.json", misleading2)
    assert preview_file(misleading2, env=ENV).format == "registry"
    assert detect_format({"servers": {}}) == "vscode"
    assert detect_format({"mcpServers": {"a": {"type": "streamable-http", "url": "http://x"}}}) == "mcp-inspector"
    with pytest.raises(ImportFileError, match="not a server list"):
        detect_format({"hello": "world"})


def test_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + (DATA / "claude_desktop_config.json").read_bytes())
    assert len(preview_file(path, env=ENV).entries) == 3


# --- broken files --------------------------------------------------------------------------------

def test_invalid_json_names_file_line_and_column():
    path = DATA / "broken_json.json"
    with pytest.raises(ImportFileError) as info:
        preview_file(path, env=ENV)
    assert str(path) in info.value.message and "line 5, column 64" in info.value.message
    assert info.value.details["line"] == 5 and info.value.details["column"] == 64
    with pytest.raises(ImportFileError, match=r"truncated_vscode.json: invalid JSON at line 5"):
        preview_file(DATA / "truncated_vscode.json", env=ENV)


@pytest.mark.parametrize("name, message", [
    ("not_a_config.json", "expected a JSON object"),
    ("empty.json", "defines no servers"),
    ("no-such-file.json", "file not found"),
])
def test_files_that_cannot_be_imported(name, message):
    with pytest.raises(ImportFileError, match=message) as info:
        preview_file(DATA / name, env=ENV)
    assert name in info.value.message


def test_broken_entries_are_reported_one_by_one(catalog):
    preview = preview_file(DATA / "broken_entries.json", catalog, env=ENV)
    e = by_key(preview)
    assert e["good"].importable and not e["good"].warnings
    assert e["typo"].error == 'has neither "command" nor "url"'
    assert "server 'typo': unknown key 'comand' ignored" in e["typo"].warnings
    assert "server 'extra-keys': unknown key 'restartPolicy' ignored" in e["extra-keys"].warnings
    assert e["extra-keys"].spec.env == {"DEBUG": "true"}
    assert e["not-installed"].importable
    assert any("spyglass-no-such-program-3f9a" in w and "not found on this machine" in w
               for w in e["not-installed"].warnings)
    assert e["bad-args"].error == '"args" must be a list of strings'
    assert e["not-an-object"].error == "is not an object" and e["not-an-object"].line == 25
    everything = preview.all_warnings()
    assert any("'typo'" in w and "neither" in w for w in everything)
    result = apply(preview, catalog)
    assert sorted(s.name for s in result.added) == ["extra-keys", "good", "not-installed"]
    assert sorted(result.skipped) == ["bad-args", "not-an-object", "typo"]


def test_missing_cwd_and_bad_urls(tmp_path):
    text = json.dumps({"mcpServers": {
        "here": {"command": sys.executable, "cwd": str(tmp_path / "gone")},
        "ftp": {"url": "ftp://example.com/mcp"}}})
    here, ftp = preview_text(text, env=ENV).entries
    assert any("working folder" in w for w in here.warnings)
    assert ftp.error and "http" in ftp.error


# --- conflicts -----------------------------------------------------------------------------------

def test_conflicts_rename_replace_skip_and_duplicates(catalog):
    first = apply(preview_file(DATA / "claude_desktop_config.json", catalog, env=ENV), catalog)
    original_github = catalog.find("github")
    changed = json.loads((DATA / "claude_desktop_config.json").read_text())
    changed["mcpServers"]["github"]["args"].append("--read-only")
    changed["mcpServers"]["new"] = {"command": "new-mcp"}
    preview = preview_text(json.dumps(changed), "changed.json", catalog, env=ENV)
    e = by_key(preview)
    assert e["filesystem"].conflict.kind == "duplicate" and e["filesystem"].default_action == "skip"
    assert e["github"].conflict.kind == "same-name" and e["github"].default_action == "rename"
    assert e["github"].conflict.existing_id == original_github.id
    assert e["github"].suggested_name == "github (2)"
    assert e["new"].conflict is None and e["new"].default_action == "add"
    # defaults: skip identical ones, add changed ones under a new name
    result = apply(preview, catalog)
    assert sorted(s.name for s in result.added) == ["github (2)", "new"]
    assert sorted(result.skipped) == ["filesystem", "sqlite"]
    # replace keeps the id and the place of the server it replaces
    changed["mcpServers"]["github"]["args"].append("--toolsets=repos")
    preview = preview_text(json.dumps(changed), "changed.json", catalog, env=ENV)
    position = [s.id for s in catalog.servers].index(original_github.id)
    result = apply(preview, catalog, choices={"github": "replace", "new": Choice("rename", "newer")})
    assert result.replaced[0].id == original_github.id
    assert catalog.servers[position].spec.command[-1] == "--toolsets=repos"
    assert catalog.find("newer") is not None
    assert len(first.added) == 3


def test_nothing_is_lost_when_saving_fails(catalog, monkeypatch):
    apply(preview_file(DATA / "claude_desktop_config.json", catalog, env=ENV), catalog)
    before_file = catalog.path.read_bytes()
    before = [(s.id, s.spec) for s in catalog.servers]
    preview = preview_file(DATA / "inspector_config.json", catalog, env=ENV)

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("inspector.catalog.write_atomic", disk_full)
    with pytest.raises(CatalogError, match="No space left"):
        apply(preview, catalog)
    assert [(s.id, s.spec) for s in catalog.servers] == before
    assert catalog.path.read_bytes() == before_file


def test_bad_choices_are_refused_before_anything_changes(catalog):
    preview = preview_file(DATA / "claude_desktop_config.json", catalog, env=ENV)
    with pytest.raises(ValueError, match="unknown import action"):
        apply(preview, catalog, choices={"github": "merge"})
    with pytest.raises(KeyError):
        apply(preview, catalog, choices={"nope": "add"})
    assert catalog.servers == [] and not catalog.path.exists()


def test_spyglass_catalog_from_another_machine(catalog, memory_keyring, tmp_path):
    other = Catalog(tmp_path / "other.json").load()
    other.add(ServerSpec(name="gh", command=["gh-mcp"], env={"GH_TOKEN": "t1", "MODE": "x"}), mode="legacy")
    other.save()
    memory_keyring.items.clear()  # the other machine's keyring is not here
    preview = preview_file(tmp_path / "other.json", catalog, env=ENV)
    assert preview.format == "spyglass"
    entry = preview.entries[0]
    assert entry.mode == "legacy" and entry.spec.env == {"GH_TOKEN": "", "MODE": "x"}
    assert any("GH_TOKEN" in w and "keyring" in w for w in entry.warnings)


# --- `--config FILE` reads the same files ---------------------------------------------------------

def test_load_servers_reads_vscode_files_with_comments_and_settings_json(tmp_path):
    from inspector.config import ConfigError, load_servers

    servers = load_servers(str(DATA / "vscode_mcp.json"))
    assert servers["github"].transport == "http" and servers["legacy-events"].transport == "sse"
    settings = tmp_path / "settings.json"
    settings.write_text('{\n  // user settings\n  "mcp": {"servers": {"echo": {"command": "echo"}}},\n}')
    assert load_servers(str(settings))["echo"].command == ["echo"]
    with pytest.raises(ConfigError) as info:
        load_servers(str(DATA / "broken_json.json"))
    assert info.value.details == {"file": str(DATA / "broken_json.json"), "line": 5, "column": 64}
