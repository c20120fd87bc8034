"""What is pasted into the Add server dialog, read as a server (inspector.importers.read_pasted): no Qt."""

from __future__ import annotations

import pytest

from inspector.importers import PasteError, command_line, looks_pasted, read_pasted


def test_a_command_line_is_split_as_a_shell_splits_it():
    words, env = command_line("""env A=1 B='two words' uvx "mcp server" --dir '/tmp/a b' --x=1""")
    assert words == ["uvx", "mcp server", "--dir", "/tmp/a b", "--x=1"]
    assert env == {"A": "1", "B": "two words"}
    got = read_pasted("TOKEN=abc node index.js")
    assert got.kind == "command" and got.spec.command == ["node", "index.js"] and got.spec.env == {"TOKEN": "abc"}
    assert not got.named and got.spec.name == ""


@pytest.mark.parametrize(("text", "why"), [
    ("npx 'unclosed", "not quoted correctly"),
    ("A=1 B=2", "names no command"),
    ("   ", "nothing was pasted"),
    ("{not json", "not JSON"),
    ("[1, 2]", "not an object"),
    ('{"theme": "dark"}', "holds no server"),
    ('{"mcpServers": {}}', "defines no servers"),
    ('{"command": 42}', "command"),
])
def test_text_that_is_no_server_says_why(text, why):
    with pytest.raises(PasteError, match=why):
        read_pasted(text)


def test_a_url_is_an_http_server():
    got = read_pasted(" https://example.com/mcp?x=1 ")
    assert got.kind == "url" and got.spec.url == "https://example.com/mcp?x=1" and not got.spec.command


def test_json_entries_are_read_by_the_importers():
    got = read_pasted('"gh": {"type": "stdio", "command": "docker", "args": ["run", "-i", "gh"], '
                      '"env": {"GITHUB_TOKEN": "${input:token}"}},')
    assert got.named and got.spec.name == "gh" and got.spec.command == ["docker", "run", "-i", "gh"]
    assert got.kind == "json"
    two = read_pasted('{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}')
    assert two.spec.name == "a" and any("2 servers" in n for n in two.notes)


def test_what_looks_pasted(tmp_path):
    spaced = tmp_path / "my server"
    spaced.write_text("")
    assert not looks_pasted(str(spaced))  # a path that exists, spaces and all, is a command
    assert not looks_pasted("npx") and not looks_pasted("")
    assert looks_pasted("npx -y x") and looks_pasted("https://h/mcp") and looks_pasted('{"command": "x"}')
    assert looks_pasted("A=1")
