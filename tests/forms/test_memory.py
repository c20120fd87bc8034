"""Last arguments per tool, per server; secrets never stored. No Qt."""

from __future__ import annotations

import json

from inspector.forms.memory import ArgumentMemory, strip_secrets

SCHEMA = {"type": "object", "properties": {
    "query": {"type": "string"}, "pin": {"type": "string", "format": "password"},
    "auth": {"type": "object", "properties": {"user": {"type": "string"}, "pass": {"type": "string",
                                                                                  "writeOnly": True}}}}}


def test_secrets_are_not_remembered():
    args = {"query": "q", "pin": "1234", "api_key": "abc", "auth": {"user": "ada", "pass": "x"}}
    assert strip_secrets(SCHEMA, args) == {"query": "q", "auth": {"user": "ada"}}


def test_per_server_and_tool_and_persisted(tmp_path):
    path = tmp_path / "args.json"
    mem = ArgumentMemory(path)
    mem.remember("srv-a", "search", {"query": "one"}, SCHEMA)
    mem.remember("srv-b", "search", {"query": "two"}, SCHEMA)
    again = ArgumentMemory(path)
    assert again.recall("srv-a", "search") == {"query": "one"}
    assert again.recall("srv-b", "search") == {"query": "two"}
    assert again.recall("srv-a", "other") is None
    again.forget("srv-a")
    assert again.recall("srv-a", "search") is None and again.recall("srv-b", "search") == {"query": "two"}
    assert "1234" not in path.read_text()


def test_corrupt_file_is_ignored(tmp_path):
    path = tmp_path / "args.json"
    path.write_text("{not json")
    mem = ArgumentMemory(path)
    assert mem.recall("s", "t") is None
    mem.remember("s", "t", {"a": 1})
    assert json.loads(path.read_text())
