"""Host profiles as data (inspector.checks.hosts.profile) and each tool as a host's model sees it
(inspector.checks.hosts.seen): every shipped fact sourced or given a confidence, project overrides checked
with the line of every problem, and the renaming, cutting and schema rewriting of each profile rule."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inspector import errors as E
from inspector.checks.hosts import profile as P
from inspector.checks.hosts.seen import BLOCKED, DEGRADED, WORKS, see
from inspector.checks.hosts.verdict import Server, judge

HOSTS = ["chatgpt", "claude-code", "claude-desktop", "codex", "cursor", "gemini-cli", "inspector", "vscode",
         "windsurf", "zed"]


def test_the_ten_hosts_ship_and_are_versioned():
    profiles = P.shipped()
    assert list(profiles) == HOSTS
    for profile in profiles.values():
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", profile.version)
        assert profile.name and profile.facts


@pytest.mark.parametrize("host", HOSTS)
def test_every_fact_has_a_source_and_date_or_a_stated_confidence(host):
    for key, fact in P.shipped()[host].facts.items():
        if fact.source:
            assert fact.source.startswith("https://") and re.fullmatch(r"\d{4}-\d{2}-\d{2}", fact.read or ""), key
        else:
            assert fact.confidence in ("low", "medium") and fact.why, (host, key)


def test_a_fact_without_source_or_confidence_fails_with_its_line():
    text = ('id = "myhost"\nname = "My host"\nversion = "2026-12-07"\n\n[naming]\n'
            'max_length = { value = 64 }\n'
            'prefix = { value = "x_", source = "https://example.com/doc" }\n')
    with pytest.raises(E.UsageError) as caught:
        P.read_profile("myhost.toml", text)
    message = str(caught.value)
    assert "myhost.toml:6: naming.max_length has neither a source nor a confidence" in message
    assert "myhost.toml:7: naming.prefix: a source needs the date it was read" in message


def test_a_project_overrides_a_shipped_host_fact_by_fact(tmp_path):
    folder = tmp_path / ".spyglass" / "hosts"
    folder.mkdir(parents=True)
    (folder / "cursor.toml").write_text('[limits]\ntools = { value = 80, confidence = "medium", why = "our build" }\n')
    (folder / "acme.toml").write_text('name = "Acme chat"\nversion = "2026-12-01"\n[features]\n'
                                      'prompts = { value = false, source = "https://acme.example/mcp", '
                                      'read = "2026-12-01" }\n')
    profiles = P.load(tmp_path)
    assert profiles["cursor"].get("limits.tools") == 80
    assert profiles["cursor"].get("naming.budget") == 60  # the rest is the shipped profile's
    assert profiles["acme"].supports("features.prompts") is False
    assert [p.id for p in P.choose("acme,cursor", profiles)] == ["acme", "cursor"]


def test_every_problem_of_a_project_file_is_named_with_its_line(tmp_path):
    folder = tmp_path / ".spyglass" / "hosts"
    folder.mkdir(parents=True)
    (folder / "zed.toml").write_text('# ours\n[limits]\ntools = { value = "many", confidence = "low", why = "x" }\n'
                                     '[feature]\nresources = true\n[content]\nimage = { value = true, '
                                     'confidence = "sure", why = "seen" }\nvideo = { value = true }\n')
    with pytest.raises(E.UsageError) as caught:
        P.load(tmp_path)
    message = str(caught.value)
    assert "4 problem(s)" in message
    assert "zed.toml:3: limits.tools = 'many': must be a positive whole number" in message
    assert "zed.toml:4: unknown key or table 'feature'" in message
    assert "zed.toml:7: content.image has neither a source nor a confidence" in message
    assert "zed.toml:8: unknown fact 'content.video'" in message


def test_broken_toml_and_unknown_hosts_are_usage_errors(tmp_path):
    with pytest.raises(E.UsageError, match=r"x\.toml: not valid TOML .*line 1"):
        P.read_profile("x.toml", "id = \n")
    with pytest.raises(E.UsageError, match="unknown host nosuch; hosts: chatgpt, claude-code"):
        P.choose("cursor,nosuch", P.shipped())


def test_a_project_files_problems_are_told_once_each_in_the_order_of_their_lines():
    text = ('id = "vscode"\n\n[naming]\nprefix = { value = "p_", source = "http://example.com", read = "2026-12-07" }\n'
            'max_length = { value = -3, confidence = "low", why = "x" }\n\n[limits]\ntools = { value = 5 }\n'
            'bogus = { value = 1, confidence = "low", why = "x" }\n\n\n\n[content]\nimage = true\n')
    with pytest.raises(E.UsageError) as caught:
        P.read_profile("vscode.toml", text, P.shipped()["vscode"])
    lines = [int(m) for m in re.findall(r"^  vscode\.toml:(\d+):", str(caught.value), re.M)]
    assert lines == [4, 5, 8, 9, 14]  # 8 (no source, no confidence) said once, and 14 after 5
    assert "5 problem(s)" in str(caught.value)


def test_an_empty_host_list_is_a_usage_error_and_all_names_every_host():
    with pytest.raises(E.UsageError, match=r"unknown host \(none\)"):
        P.choose(" , ", P.shipped())
    assert [p.id for p in P.choose("vscode,all", P.shipped())] == HOSTS


def tool(name="t", description="Do the thing well.", schema=None, **extra):
    return {"name": name, "description": description,
            "inputSchema": schema or {"type": "object", "properties": {}}, **extra}


def test_claude_code_prefixes_the_name_and_a_long_one_fails_every_request():
    profile = P.shipped()["claude-code"]
    assert see(tool("get_weather"), profile, "weather").name == "mcp__weather__get_weather"
    long = see(tool("x" * 51), profile, "weather")  # 14 + 51 = 65 > 64
    assert long.name is None and long.verdict == BLOCKED and long.reasons[0].host_wide
    assert "shorten the tool name to 50 characters or fewer" in long.reasons[0].fix
    assert see(tool("x" * 50), profile, "weather").verdict == WORKS


def test_hosts_rename_refuse_or_keep_a_dotted_name():
    profiles = P.shipped()
    assert see(tool("a.b"), profiles["codex"], "s").name == "mcp__s__a_b"
    assert see(tool("a.b"), profiles["gemini-cli"], "s").name == "mcp_s_a.b"  # Gemini names may hold dots
    refused = see(tool("a.b"), profiles["chatgpt"], "s")
    assert refused.name is None and "does not offer the tool" in refused.reasons[0].message


def test_cursor_counts_server_and_tool_names_together():
    profile = P.shipped()["cursor"]
    assert see(tool("y" * 50), profile, "server-ten").verdict == WORKS
    omitted = see(tool("y" * 51), profile, "server-ten")
    assert omitted.verdict == BLOCKED and omitted.name is None and not omitted.reasons[0].host_wide


def test_descriptions_are_cut_where_the_host_cuts_them():
    seen = see(tool(description="word " * 300), P.shipped()["vscode"], "s")
    assert len(seen.description) == 1024 and seen.verdict == DEGRADED
    assert seen.changes == ["name: 't' becomes 'mcp_s_t'", "description: cut at 1,024 of 1,500 characters"]


def test_a_host_strips_and_drops_what_its_api_does_not_take():
    strict = P.read_profile("strict.toml", 'name = "Strict"\nversion = "2026-12-07"\n[schema]\n'
                            'strip = { value = ["$schema", "additionalProperties"], confidence = "low", why = "t" }\n'
                            'keywords = { value = ["type", "properties", "minimum", "description"], '
                            'confidence = "low", why = "t" }\n'
                            'other = { value = "drop", confidence = "low", why = "t" }\n')
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "additionalProperties": False,
              "properties": {"n": {"type": "integer", "minimum": 1, "multipleOf": 5, "description": "a count"}}}
    seen = see(tool(schema=schema), strict, "s")
    assert seen.schema == {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1,
                                                                  "description": "a count"}}}
    assert seen.verdict == DEGRADED
    assert "inputSchema.additionalProperties, inputSchema.properties.n.multipleOf" in seen.reasons[0].message
    assert tool(schema=schema)["inputSchema"]["additionalProperties"] is False  # the server's is untouched
    # Gemini CLI declares the schema as sent (parametersJsonSchema), long names elided in the middle
    gemini = see(tool("x" * 70, schema=schema), P.shipped()["gemini-cli"], "s")
    assert gemini.schema == schema and gemini.name == "mcp_s_" + "x" * 24 + "..." + "x" * 30


def test_a_top_level_anyof_fails_claude_and_not_vscode():
    schema = {"anyOf": [{"type": "object", "properties": {}}]}
    assert see(tool(schema=schema), P.shipped()["claude-desktop"], "s").verdict == BLOCKED
    assert see(tool(schema=schema), P.shipped()["vscode"], "s").verdict == WORKS


def test_unknown_facts_judge_nothing():
    bare = P.read_profile("bare.toml", 'name = "Bare"\nversion = "2026-12-07"\n')
    server = Server(name="s", transport="stdio", tools=[tool("a.b" * 40, "x" * 5000)], resources=3, prompts=2)
    assert judge(server, bare).verdict == WORKS


def test_docs_hosts_md_shows_the_shipped_profiles():
    from inspector.checks.hosts.table import rewrite

    page = (Path(__file__).parents[2] / "docs" / "hosts.md").read_text(encoding="utf-8")
    assert rewrite(page) == page, "run: python -m inspector.checks.hosts.table docs/hosts.md"
    for profile in P.shipped().values():
        assert f"### {profile.name} (`{profile.id}`)" in page


def test_the_table_script_rewrites_only_its_block(tmp_path):
    from inspector.checks.hosts.table import BEGIN, END, main

    page = tmp_path / "hosts.md"
    page.write_text(f"# Hosts\n\n{BEGIN}\nold\n{END}\n\nAfter.\n")
    assert main([str(page)]) == 0
    text = page.read_text()
    assert text.startswith("# Hosts\n\n") and text.endswith(f"{END}\n\nAfter.\n") and "old" not in text
    assert "| `naming.prefix` | `mcp__{server}__` |" in text
    row = next(x for x in text.splitlines() if x.startswith("| `naming.max_length` | 64 | [source](https://github.com/anth"))
    assert row.endswith("(read 2026-12-07, medium): the Messages API now takes tool definitions named up to 128 "
                        "characters (anthropics/claude-code#96152, 2026-09), but an MCP tool Claude Code finds "
                        "through tool search is sent back as a tool_reference, whose tool_name must be at most 64 "
                        "('tool_reference.tool_name: String should have at most 64 characters', #20830, #23149); "
                        "64 is the length that works everywhere |")  # a sourced fact's why is shown too
    assert main([]) == 1
    page.write_text("no marks\n")
    with pytest.raises(ValueError, match="no <!-- hosts:begin"):
        main([str(page)])


@pytest.mark.parametrize("text, said", [
    ('[naming]\nprefix = { value = "", source = "http://x.example", read = "2026-12-07" }\n',
     "x.toml:2: naming.prefix: source must be an https:// URL"),
    ('[naming]\nprefix = { value = "", confidence = "certain", why = "x" }\n',
     "x.toml:2: naming.prefix has neither a source nor a confidence"),
    ('[naming]\nprefix = { value = "", source = "https://x.example", read = "2026-12-07", confidence = "sure" }\n',
     "x.toml:2: naming.prefix: confidence must be high, medium or low"),
    ('[naming]\nprefix = { value = "", confidence = "low" }\n',
     "x.toml:2: naming.prefix: a fact without a source says why"),
    ('[naming]\nprefix = { value = "", confidence = "low", why = "x", note = "y" }\n',
     "x.toml:2: naming.prefix has unknown field(s) note"),
    ('[naming]\nprefix = "mcp_"\n', "x.toml:2: naming.prefix must be a table such as"),
    ('[naming]\nprefix = { confidence = "low", why = "x" }\n', "x.toml:2: naming.prefix has no value"),
    ('[naming]\npattern = { value = "([", confidence = "low", why = "x" }\n',
     "x.toml:2: naming.pattern = '([': must be a regular expression"),
    ('naming = 3\n', "x.toml:1: naming must be a table ([naming])"),
    ('version = "December"\n', "x.toml:1: version 'December': the date the profile was last checked"),
    ('id = "Big Host"\n', "x.toml:1: id 'Big Host': use lower-case letters"),
    ('name = 7\n', "x.toml:1: name must be a non-empty string"),
])
def test_each_kind_of_profile_problem(text, said):
    with pytest.raises(E.UsageError) as caught:
        P.read_profile("x.toml", text, P.shipped()["zed"])  # over a shipped host: name and version may go
    assert said in str(caught.value)


def test_the_model_is_offered_the_tools_as_the_host_offers_them():
    from inspector.model.hosted import host_tool_specs

    tools = [tool(f"t{i}") for i in range(42)] + [tool("a.b"), tool("ui_only", _meta={"ui": {"visibility": ["app"]}})]
    specs, notes = host_tool_specs({"id1": ("srv", tools)}, P.shipped()["cursor"])
    assert len(specs) == 40 and specs[0].name == "mcp_srv_t0" and specs[0].tool == "t0"
    assert "t40: past Cursor's 40 tools" in notes and all(s.tool != "ui_only" for s in specs)
    specs, notes = host_tool_specs({"id1": ("srv", tools[-2:])}, P.shipped()["chatgpt"])
    assert specs == [] and notes == ["a.b: not offered by ChatGPT (connectors and Apps)"]
    specs, notes = host_tool_specs({"id1": ("srv", tools[:1])}, None, {"t0": "mine"})
    assert [(s.name, s.description) for s in specs] == [("t0", "mine")] and notes == []


def test_the_observer_puts_a_question_down_to_the_one_call_in_flight():
    import json as _json

    from inspector.checks.hosts.observe import Observer
    from inspector.traffic.frame import Frame

    def frame(direction, msg):
        return Frame(direction, _json.dumps(msg).encode(), 0.0, 0.0)

    seen = Observer()
    seen.frame(frame("out", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope"}}))
    seen.frame(frame("in", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no such tool"}}))
    seen.frame(frame("out", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask"}}))
    seen.frame(frame("in", {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}))
    seen.frame(frame("in", {"jsonrpc": "2.0", "id": "q", "method": "elicitation/create",
                            "params": {"mode": "url", "url": "https://example.com"}}))
    seen.frame(frame("in", {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "ok"}],
                                                                   "structuredContent": {}}}))
    assert seen.seen.asked == {"ask": {"elicitation_url"}}
    assert seen.seen.kinds == {"ask": {"text", "structured"}} and seen.seen.called == {"ask"}
