"""The importers' edges: the odd and broken entries real config files hold (Cline and Claude Code habits in
`mcpServers`, VS Code `inputs` and `envFile`s, registry `server.json` packages and remotes of every kind),
each ending in the entry, warning or error the user is shown; then what `apply` makes of unusual choices."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from catalog_support import catalog_path_fixture, memory_keyring_fixture  # noqa: F401 - fixtures

from inspector.catalog import Catalog
from inspector.config import ServerSpec
from inspector.importers import (
    Conflict,
    ImportEntry,
    ImportFileError,
    ImportPreview,
    Placeholder,
    apply,
    detect_format,
    preview_file,
    preview_text,
)

PROGRAMS = ("npx", "uvx", "node", "docker")


@pytest.fixture
def catalog(catalog_path) -> Catalog:
    return Catalog(catalog_path).load()


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """The environment the importer sees: a PATH with the usual launchers on it (real executables in a
    folder of the test), and a HOME that is not this machine's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in PROGRAMS:
        program = bin_dir / name
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return {"PATH": str(bin_dir), "HOME": "/home/ada"}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """This process's home folder (what `${userHome}` and `~` mean), inside the test."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def by_key(preview):
    return {e.key: e for e in preview.entries}


# --- mcpServers files: Cursor, Cline, Claude Code ---------------------------------------------------

def test_cursor_entries_whose_type_command_and_url_disagree(tmp_path, env):
    path = write(tmp_path / ".cursor" / "mcp.json", {"mcpServers": {
        "web": {"type": "sse", "command": "npx", "args": ["web-mcp"], "url": "https://web.example.com/sse"},
        "local": {"command": "node", "args": ["server.js"], "url": "http://localhost:3000/mcp"},
        "socket": {"type": "websocket", "url": "https://ws.example.com/mcp"},
        "stdio-url": {"type": "stdio", "url": "https://api.example.com/mcp"},
        "http-command": {"type": "http", "command": "uvx", "args": ["thing-mcp"]},
        "numeric": {"transport": 3, "command": "uvx", "args": ["n-mcp"]},
    }})
    preview = preview_file(path, env=env)
    assert preview.format == "cursor"
    e = by_key(preview)
    assert e["web"].warnings == ["server 'web' has both \"command\" and \"url\"; using url"]
    assert (e["web"].spec.url, e["web"].spec.command, e["web"].spec.transport) == (
        "https://web.example.com/sse", [], "sse")
    assert e["local"].warnings == ["server 'local' has both \"command\" and \"url\"; using command"]
    assert (e["local"].spec.command, e["local"].spec.url, e["local"].spec.transport) == (
        ["node", "server.js"], None, "stdio")
    assert e["socket"].warnings == ["server 'socket': unknown type 'websocket'; guessed from the other fields"]
    assert (e["socket"].spec.url, e["socket"].spec.transport) == ("https://ws.example.com/mcp", None)
    assert e["stdio-url"].warnings == ["server 'stdio-url': type 'stdio' does not fit a URL; connecting over HTTP"]
    assert e["stdio-url"].spec.transport is None and e["stdio-url"].importable
    assert e["http-command"].warnings == [
        "server 'http-command': type 'http' does not fit a command; started over stdio"]
    assert (e["http-command"].spec.command, e["http-command"].spec.transport) == (["uvx", "thing-mcp"], "stdio")
    assert e["numeric"].warnings == ["server 'numeric': unknown type 3; guessed from the other fields"]
    assert all(entry.importable for entry in preview.entries)


def test_fields_of_the_wrong_type_fail_their_entry_only(tmp_path, env, catalog):
    path = write(tmp_path / ".cursor" / "mcp.json", {"mcpServers": {
        "list-command": {"command": ["npx", "-y", "notes-mcp"]},
        "url-object": {"url": {"href": "https://notes.example.com/mcp"}},
        "env-list": {"command": "uvx", "args": ["a-mcp"], "env": ["API_KEY=k"]},
        "headers-string": {"url": "https://h.example.com/mcp", "headers": "Authorization: Bearer x"},
        "cwd-number": {"command": "uvx", "cwd": 5},
        "numbers": {"command": "node", "args": ["srv.js", "--port", 8080.0, "--workers", 3, "--verbose", True,
                                                "--ratio", 0.5, "--quiet", False],
                    "env": {"DEBUG": None, "OPTIONS": {"cache": True}, "HOSTS": ["a", "b"], "LEVEL": 2}},
        "null-args": {"command": "uvx", "args": None},
        "headers-for-a-command": {"command": "uvx", "args": ["c-mcp"], "headers": {"X-Team": "docs"}},
        "env-for-a-url": {"url": "https://r.example.com/mcp", "env": {"REGION": "eu"}},
    }})
    preview = preview_file(path, catalog, env=env)
    e = by_key(preview)
    errors = {key: entry.error for key, entry in e.items() if entry.error}
    assert errors == {"list-command": '"command" must be a string', "url-object": '"url" must be a string',
                      "env-list": '"env" must be an object', "headers-string": '"headers" must be an object',
                      "cwd-number": '"cwd" must be a string'}
    assert all(e[key].spec is None and e[key].default_action == "skip" for key in errors)
    assert e["numbers"].spec.command == ["node", "srv.js", "--port", "8080", "--workers", "3", "--verbose", "true",
                                         "--ratio", "0.5", "--quiet", "false"]
    assert e["numbers"].spec.env == {"LEVEL": "2"}
    assert e["numbers"].warnings == ["server 'numbers': env DEBUG is null; left out",
                                     "server 'numbers': env OPTIONS is not text; left out",
                                     "server 'numbers': env HOSTS is not text; left out"]
    assert e["null-args"].spec.command == ["uvx"] and e["null-args"].warnings == []
    assert e["headers-for-a-command"].spec.headers == {}
    assert e["headers-for-a-command"].warnings == [
        "server 'headers-for-a-command': \"headers\" only apply to remote servers; ignored"]
    assert e["env-for-a-url"].spec.env == {}
    assert e["env-for-a-url"].warnings == [
        "server 'env-for-a-url': \"env\" only applies to servers Spyglass starts; ignored"]
    assert f"{path}: server 'list-command': \"command\" must be a string" in preview.all_warnings()
    assert e["list-command"].masked_spec() is None
    result = apply(preview, catalog, choices={"list-command": "add"})
    assert result.warnings == ["server 'list-command' cannot be imported: \"command\" must be a string"]
    assert sorted(result.skipped) == sorted(errors)
    assert [s.name for s in result.added] == ["numbers", "null-args", "headers-for-a-command", "env-for-a-url"]


def test_cline_habits_disabled_servers_and_commands_with_their_arguments(tmp_path, env):
    path = write(tmp_path / "cline_mcp_settings.json", {"mcpServers": {
        "memory": {"command": "npx -y @modelcontextprotocol/server-memory", "disabled": True, "autoApprove": []},
        "paused": {"command": "uvx", "args": ["paused-mcp"], "enabled": False},
        "quoted": {"command": "node '/srv/my tools/server.js' --stdio"},
        "installed": {"command": str(tmp_path / "bin" / "npx"), "args": []},
    }})
    preview = preview_file(path, env=env)
    assert preview.format == "claude-desktop"
    e = by_key(preview)
    assert e["memory"].warnings == [
        "server 'memory' is disabled in cline_mcp_settings.json",
        "server 'memory': the command 'npx -y @modelcontextprotocol/server-memory' holds its arguments; "
        "split at spaces"]
    assert e["memory"].spec.command == ["npx", "-y", "@modelcontextprotocol/server-memory"]
    assert e["memory"].importable  # disabled there, still worth importing
    assert e["paused"].warnings == ["server 'paused' is disabled in cline_mcp_settings.json"]
    assert e["quoted"].spec.command == ["node", "/srv/my tools/server.js", "--stdio"]
    assert e["installed"].spec.command == [str(tmp_path / "bin" / "npx")] and e["installed"].warnings == []


def test_commands_and_folders_that_are_not_on_this_machine(tmp_path, env):
    missing = tmp_path / "opt" / "acme" / "bin" / "notes-server"
    text = json.dumps({"mcpServers": {
        "by-path": {"command": str(missing), "args": ["--stdio"]},
        "in-home": {"command": "~/bin/notes-server"},
        "by-name": {"command": "notes-server"},
        "here": {"command": "uvx", "cwd": str(tmp_path)},
    }})
    e = by_key(preview_text(text, "claude_desktop_config.json", env=env))
    assert e["by-path"].warnings == [f"server 'by-path': the command {missing} does not exist on this machine"]
    assert e["in-home"].warnings == ["server 'in-home': the command ~/bin/notes-server does not exist on this machine"]
    assert e["by-name"].warnings == [
        "server 'by-name': the command 'notes-server' was not found on this machine (not on PATH)"]
    assert e["here"].warnings == [] and e["here"].spec.cwd == str(tmp_path)
    assert all(entry.importable for entry in e.values())  # a warning, not a reason to refuse


# --- placeholders ------------------------------------------------------------------------------------

def test_claude_code_variables_defaults_and_unknown_ones(tmp_path, env, home, catalog, memory_keyring):
    path = write(tmp_path / ".mcp.json", {"mcpServers": {"api": {
        "command": "node",
        "args": ["${userHome}/mcp/server.js", "--sep=${pathSeparator}", "--root=${/}srv", "--py",
                 "${config:python.defaultInterpreterPath}"],
        "env": {"API_BASE": "${API_BASE:-https://api.example.com}", "HOME_DIR": "${HOME}",
                "API_TOKEN": "${API_TOKEN}", "PYTHON": "${config:python.defaultInterpreterPath}",
                "WORKSPACE": "${workspaceFolder}"}}}})
    preview = preview_file(path, catalog, env=env)
    entry = preview.entries[0]
    assert entry.spec.command == ["node", f"{home}/mcp/server.js", f"--sep={os.sep}", f"--root={os.sep}srv",
                                  "--py", "${config:python.defaultInterpreterPath}"]
    assert entry.spec.env == {"API_BASE": "https://api.example.com", "HOME_DIR": "/home/ada",
                              "API_TOKEN": "${env:API_TOKEN}", "PYTHON": "${config:python.defaultInterpreterPath}",
                              "WORKSPACE": "${workspaceFolder}"}
    assert entry.warnings == ["server 'api': ${config:python.defaultInterpreterPath} is not a variable Spyglass "
                              "knows; it will be asked for"]  # once, though it is used twice
    questions = {q.token: q for q in preview.questions}
    assert list(questions) == ["config:python.defaultInterpreterPath", "env:API_TOKEN", "workspaceFolder"]
    token = questions["env:API_TOKEN"]
    assert (token.kind, token.label, token.password) == ("env", "API_TOKEN", True)
    assert token.description == "The environment variable API_TOKEN (not set for Spyglass)"
    python = questions["config:python.defaultInterpreterPath"]
    assert (python.kind, python.description) == ("variable", "A variable of the tool this file came from")
    assert python.used_in == ["api: argument 5", "api: env PYTHON"]
    result = apply(preview, catalog, answers={"env:API_TOKEN": "tok-9", "config:python.defaultInterpreterPath":
                                              "/usr/bin/python3", "workspaceFolder": "${env:HOME}/repo"})
    added = result.added[0]
    assert added.spec.env["API_TOKEN"] == "tok-9" and added.spec.command[-1] == "/usr/bin/python3"
    # an answer is taken as written, placeholders and all, and the user is told
    assert added.spec.env["WORKSPACE"] == "${env:HOME}/repo"
    assert result.warnings == ["server 'api': kept as written: ${env:HOME}/repo"]
    assert "tok-9" not in catalog.path.read_text()


def test_vscode_inputs_of_every_shape(tmp_path, env):
    path = write(tmp_path / ".vscode" / "mcp.json", """{
  // inputs as people really write them
  "inputs": [
    {"type": "promptString", "description": "forgot the id"},
    "api-key",
    {"type": "promptString", "id": ""},
    {"type": "command", "id": "gh-token", "command": "shellCommand.execute",
     "args": {"command": "gh auth token"}, "description": "GitHub token", "password": true},
    {"type": "command", "id": "branch", "command": "git.branch"},
    {"type": "pickString", "id": "region", "description": "Region",
     "options": [{"label": "Europe", "value": "eu"}, {"label": "US"}, "ap", {"value": null}, 7], "default": "eu"},
    {"type": "secretStorage", "id": "vault", "default": 42}
  ],
  "servers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@github/mcp", "--region", "${input:region}", "--branch", "${input:branch}"],
      "env": {"GITHUB_TOKEN": "${input:gh-token}", "VAULT_ADDR": "${input:vault}", "X": "${input:nowhere}",
              "Y": "${input:nowhere}"}
    }
  }
}""")
    preview = preview_file(path, env=env)
    assert preview.warnings == [f'{path}: input 1 has no "id"; ignored', f'{path}: input 2 has no "id"; ignored',
                                f'{path}: input 3 has no "id"; ignored',
                                f"{path}: input 'vault' has an unknown type 'secretStorage'; it will be asked for"]
    entry = preview.entries[0]
    assert entry.warnings == ['server \'github\': ${input:nowhere} has no matching entry in "inputs"']
    questions = {q.token: q for q in preview.questions}
    assert list(questions) == ["input:region", "input:branch", "input:gh-token", "input:vault", "input:nowhere"]
    assert questions["input:region"].choices == ["eu", "US", "ap", "7"] and questions["input:region"].default == "eu"
    gh = questions["input:gh-token"]
    assert gh.password and gh.description == ("GitHub token (VS Code runs the command 'shellCommand.execute' to "
                                              "get this value; enter it here)")
    assert questions["input:branch"].description == ("(VS Code runs the command 'git.branch' to get this value; "
                                                     "enter it here)")
    assert questions["input:vault"].default == "42"
    nowhere = questions["input:nowhere"]
    assert (nowhere.kind, nowhere.label, nowhere.used_in) == ("input", "nowhere", ["github: env X", "github: env Y"])
    assert entry.secret_marks == {"env:GITHUB_TOKEN"}


def test_vscode_inputs_that_are_not_an_array(tmp_path, env):
    text = json.dumps({"inputs": {"id": "db-url", "type": "promptString"},
                       "servers": {"db": {"command": "uvx", "args": ["db-mcp"], "env": {"DB_URL": "${input:db-url}"}}}})
    preview = preview_text(text, "mcp.json", env=env)
    assert preview.warnings == ['mcp.json: "inputs" is not an array; ignored']
    assert preview.entries[0].warnings == ['server \'db\': ${input:db-url} has no matching entry in "inputs"']
    assert [(q.token, q.kind, q.label) for q in preview.questions] == [("input:db-url", "input", "db-url")]


def test_env_files_next_to_the_config_in_the_home_folder_and_missing(tmp_path, env, home, catalog):
    project = tmp_path / "project"
    write(project / ".env", "\n".join([
        "# API settings",
        'export API_KEY="sk-live-123"',
        "API_URL=https://from-file.example.com",
        "NAME='Ada Lovelace'",
        "EMPTY=",
        "  SPACED = value with spaces  ",
        "not a pair",
        "=no-name",
        "QUOTE=\"",
        "",
    ]))
    write(home / ".config" / "notes.env", "NOTES_DIR=/srv/notes\n")
    write(home / "tilde.env", "\ufeffTILDE=yes\n")  # a byte order mark, as Windows editors write
    path = write(project / ".vscode" / "mcp.json", {"servers": {
        "api": {"command": "uvx", "args": ["api-mcp"], "envFile": "${workspaceFolder}/.env"},
        "relative": {"command": "uvx", "args": ["api-mcp"], "envFile": "../.env",
                     "env": {"API_URL": "https://own.example.com"}},
        "notes": {"command": "uvx", "envFile": "${userHome}/.config/notes.env"},
        "tilde": {"command": "uvx", "envFile": "~/tilde.env"},
        "gone": {"command": "uvx", "envFile": "missing.env"},
        "folder": {"command": "uvx", "envFile": str(project)},
        "remote": {"url": "https://r.example.com/mcp", "envFile": "../.env"},
    }})
    preview = preview_file(path, catalog, env=env)
    e = by_key(preview)
    assert e["api"].warnings == ["server 'api': envFile '${workspaceFolder}/.env' depends on a variable; its "
                                 "variables were not imported: add them by hand"]
    assert e["relative"].spec.env == {"API_URL": "https://own.example.com", "API_KEY": "sk-live-123",
                                      "NAME": "Ada Lovelace", "EMPTY": "", "SPACED": "value with spaces",
                                      "QUOTE": '"'}  # the entry's own env wins
    assert e["relative"].warnings == []
    assert e["notes"].spec.env == {"NOTES_DIR": "/srv/notes"}
    assert e["tilde"].spec.env == {"TILDE": "yes"}
    gone = project / ".vscode" / "missing.env"
    assert e["gone"].warnings == [f"server 'gone': cannot read envFile {gone} (No such file or directory); its "
                                  "variables were not imported"]
    assert e["folder"].warnings == [f"server 'folder': cannot read envFile {project} (Is a directory); its "
                                    "variables were not imported"]
    assert e["remote"].spec.env == {} and e["remote"].warnings == []
    apply(preview, catalog)
    saved = catalog.path.read_text()
    assert "sk-live-123" not in saved and "Ada Lovelace" in saved  # API_KEY went to the keyring


# --- registry server.json ------------------------------------------------------------------------------

def test_registry_packages_of_one_server(tmp_path, env):
    path = write(tmp_path / "server.json", {
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-16/server.schema.json",
        "name": "io.github.acme/notes", "title": "Notes", "version": "2.0.0",
        "packages": [
            {"registryType": "npm", "identifier": "@acme/notes-mcp", "version": "2.0.0", "runtimeHint": "bunx",
             "transport": {"type": "stdio"},
             "runtimeArguments": ["--yes", {"type": "named", "description": "no name"},
                                  {"type": "named", "name": "--max-old-space-size", "description": "optional"}],
             "packageArguments": [{"type": "named", "name": "--dir", "valueHint": "notes_dir", "isRequired": True,
                                   "description": "Where the notes live"},
                                  {"type": "positional", "value": "serve"},
                                  {"type": "positional", "valueHint": "extra", "description": "optional"}],
             "environmentVariables": [{"name": "NOTES_TOKEN", "isRequired": True, "isSecret": True},
                                      {"description": "a variable without a name"}, "LOG_LEVEL",
                                      {"name": "NOTES_COLOR", "description": "optional, no default"}]},
            {"registryType": "npm", "identifier": "@acme/notes-mcp", "version": "latest", "runtimeHint": "npx",
             "transport": {"type": "streamable-http", "url": "http://localhost:{NOTES_PORT}/mcp",
                           "headers": [{"name": "X-Notes-Key", "isRequired": True, "isSecret": True},
                                       {"name": "X-Trace", "description": "optional"}, "X-Bad"]},
             "environmentVariables": [{"name": "NOTES_PORT", "value": "8765"}]},
            {"registryType": "pypi", "identifier": "acme-notes", "transport": {"type": "websocket"}},
            None,
        ]})
    preview = preview_file(path, env=env)
    e = by_key(preview)
    assert list(e) == ["io.github.acme/notes (npm 1)", "io.github.acme/notes (npm 2)", "io.github.acme/notes (pypi)"]
    npm1, npm2, pypi = preview.entries
    assert npm1.name == "Notes (npm 1)" and npm1.entry == "io.github.acme/notes npm 1"
    assert npm1.spec.command == ["npx", "-y", "@acme/notes-mcp@2.0.0", "--dir", "${arg:dir}", "serve"]
    assert npm1.spec.env == {"NOTES_TOKEN": "${env-var:NOTES_TOKEN}"} and npm1.secret_marks == {"env:NOTES_TOKEN"}
    assert npm1.warnings == ["Notes (npm 1): runtimeHint 'bunx' noted; started with npx"]
    assert [(p.token, p.label, p.description) for p in npm1.placeholders] == [  # in the order they are used
        ("arg:dir", "notes_dir", "Where the notes live"), ("env-var:NOTES_TOKEN", "NOTES_TOKEN", "")]
    assert npm2.spec.url == "http://localhost:8765/mcp" and npm2.spec.transport == "http"
    assert npm2.spec.command == [] and npm2.spec.headers == {"X-Notes-Key": "${header:X-Notes-Key}"}
    assert npm2.secret_marks == {"header:X-Notes-Key"}
    assert npm2.warnings == ["Notes (npm 2): version 'latest' is not pinned",
                             "Notes (npm 2): this package serves streamable-http at http://localhost:8765/mcp; start "
                             "it yourself with: npx -y @acme/notes-mcp@latest"]
    assert pypi.spec.command == ["uvx", "acme-notes"] and pypi.spec.transport == "stdio"
    assert pypi.warnings == ["Notes (pypi): unknown transport 'websocket'; started over stdio"]


def test_registry_packages_and_remotes_that_cannot_be_used(tmp_path, env, catalog):
    path = write(tmp_path / "server.json", {
        "name": "io.github.acme/broken",
        "packages": ["@acme/broken", {"registryType": "npm", "version": "1.0.0"},
                     {"registryType": "cargo", "identifier": "acme-broken", "version": "1.0.0"}],
        "remotes": [{"type": "websocket", "url": "wss://acme.example/mcp"}, {"type": "sse"},
                    {"type": "streamable-http", "url": "https://{region}.acme.example/{workspace}/mcp",
                     "variables": {"region": {"value": "eu"}},
                     "headers": ["X-Bad", {"name": "X-Optional"},
                                 {"name": "Authorization", "isRequired": True, "isSecret": True,
                                  "description": "Bearer token"}]}]})
    preview = preview_file(path, catalog, env=env)
    errors = [(entry.name, entry.error) for entry in preview.entries]
    assert errors == [
        ("broken (package)", "the package is not an object"),
        ("broken (npm)", 'the package has no "identifier"'),
        ("broken (cargo)", "unknown registryType 'cargo' (Spyglass knows npm, pypi, oci, nuget)"),
        ("broken (remote websocket)", "unknown remote type 'websocket' (expected streamable-http or sse)"),
        ("broken (remote sse)", 'the remote has no "url"'),
        ("broken (remote http)", None)]
    remote = preview.entries[-1]
    assert remote.spec.url == "https://eu.acme.example/{workspace}/mcp"  # an undeclared variable stays as written
    assert remote.spec.headers == {"Authorization": "${header:Authorization}"}
    assert [(q.token, q.password, q.description) for q in preview.questions] == [
        ("header:Authorization", True, "Bearer token")]
    assert f"{path}: server 'io.github.acme/broken cargo': unknown registryType 'cargo' (Spyglass knows npm, " \
           "pypi, oci, nuget)" in preview.all_warnings()
    result = apply(preview, catalog, answers={"header:Authorization": "Bearer abc"})
    assert [s.name for s in result.added] == ["broken (remote http)"] and result.warnings == []
    assert len(result.skipped) == 5
    assert "Bearer abc" not in catalog.path.read_text()


def test_registry_api_lists_and_wrappers(env):
    text = json.dumps({"servers": [
        {"server": {"name": "io.github.acme/wrapped", "title": "Wrapped",
                    "packages": [{"registryType": "pypi", "identifier": "wrapped-mcp", "version": "1.2"}]},
         "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active"}}},
        {"name": "io.github.acme/plain", "remotes": [{"type": "sse", "url": "https://plain.example.com/sse"}]},
        "io.github.acme/just-a-name",
    ], "metadata": {"count": 3}})
    preview = preview_text(text, "registry-page.json", env=env)
    assert preview.format == "registry"
    assert [(e.name, e.error) for e in preview.entries] == [("Wrapped", None), ("plain", None),
                                                            ("server", "is not an object")]
    assert preview.entries[0].spec.command == ["uvx", "wrapped-mcp==1.2"]
    assert preview.entries[1].spec.transport == "sse"


# --- files that are no server list ---------------------------------------------------------------------

def test_files_that_are_no_server_list_name_themselves(tmp_path):
    with pytest.raises(ImportFileError, match=r"^expected a JSON object at the top level$"):
        detect_format(["mcpServers"])
    path = write(tmp_path / "package.json", {"name": "my-app", "scripts": {"mcp": "node server.js"}})
    with pytest.raises(ImportFileError) as info:
        preview_file(path)
    assert info.value.message == (f'{path}: not a server list Spyglass knows: expected "mcpServers" (Claude '
                                  'Desktop, Cursor, the MCP Inspector), "servers" (VS Code) or "packages"/"remotes" '
                                  '(a registry server.json)')
    assert info.value.details == {"file": str(path)}


def test_a_spyglass_catalog_with_broken_servers(tmp_path, env):
    path = write(tmp_path / "servers.json", {"format": "spyglass-catalog", "version": 1, "servers": [
        {"id": "a1", "name": "fine", "command": ["uvx", "fine-mcp"], "mode": "legacy"},
        {"name": "no-id", "command": ["uvx", "x"]},
        "junk",
        {"id": "c3", "name": "string-command", "command": "uvx x"},
        {"id": "d4", "name": "nothing"},
    ]})
    preview = preview_file(path, env=env)
    assert preview.format == "spyglass"
    assert [(e.name, e.error) for e in preview.entries] == [
        ("fine", None), ("no-id", '"id" and "name" must be strings'), ("server 3", "not an object"),
        ("string-command", '"command" must be a list of strings'), ("nothing", 'neither "command" nor "url"')]
    assert preview.entries[0].mode == "legacy" and preview.entries[0].spec.command == ["uvx", "fine-mcp"]


# --- the preview's own helpers and unusual choices ---------------------------------------------------------

def test_questions_leave_out_entries_that_cannot_be_imported(env):
    text = json.dumps({"mcpServers": {
        "socket": {"url": "ws://${env:WS_HOST}/mcp"},
        "ok": {"url": "https://${env:API_HOST}/mcp"},
    }})
    preview = preview_text(text, env=env)
    socket = preview.entry("socket")
    assert socket.error == "the URL 'ws://${env:WS_HOST}/mcp' is not an http:// or https:// address"
    assert [p.token for p in socket.placeholders] == ["env:WS_HOST"]
    assert [q.token for q in preview.questions] == ["env:API_HOST"]
    with pytest.raises(KeyError, match="nope"):
        preview.entry("nope")


def test_replace_without_a_conflict_adds_and_add_with_one_renames(tmp_path, env, catalog):
    catalog.add(ServerSpec(name="github", command=["npx", "-y", "@github/old-mcp"]))
    catalog.add(ServerSpec(name="fetch", command=["uvx", "mcp-server-fetch"]))
    catalog.save()
    text = json.dumps({"mcpServers": {"github": {"command": "npx", "args": ["-y", "@github/mcp"]},
                                      "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
                                      "memory": {"command": "npx", "args": ["-y", "memory-mcp"]}}})
    preview = preview_text(text, "claude_desktop_config.json", catalog, env=env)
    github, fetch, memory = preview.entries
    assert github.conflict == Conflict("same-name", catalog.find("github").id, "github")
    assert github.conflict.describe() == "a different server called 'github' is already in the catalog"
    assert fetch.conflict.kind == "duplicate" and fetch.conflict.describe() == "already in the catalog as 'fetch'"
    assert memory.conflict is None
    result = apply(preview, catalog, choices={"github": "add", "fetch": "skip", "memory": "replace"})
    assert [s.name for s in result.added] == ["github (2)", "memory"] and result.replaced == []
    assert result.warnings == ["server 'github' was added as 'github (2)': the name was taken"]
    assert [s.name for s in Catalog(catalog.path).load().servers] == ["github", "fetch", "github (2)", "memory"]


def test_an_optional_argument_nobody_answered_is_left_empty(catalog):
    """`apply` takes previews from any importer: an optional argument without a default needs no answer."""
    optional = Placeholder(token="arg:profile", kind="argument", label="profile", required=False)
    needed = Placeholder(token="arg:region", kind="argument", label="region")
    spec = ServerSpec(name="cloud", command=["uvx", "cloud-mcp", "--profile=${arg:profile}", "${arg:region}"])
    preview = ImportPreview(path="<built>", format="registry", entries=[
        ImportEntry(key="cloud", name="cloud", spec=spec, source="<built>", entry="cloud",
                    placeholders=[optional, needed])])
    assert [q.token for q in preview.questions] == ["arg:profile", "arg:region"]
    result = apply(preview, catalog, answers={"arg:region": "eu-west"})
    assert result.added[0].spec.command == ["uvx", "cloud-mcp", "--profile=", "eu-west"] and result.warnings == []
