"""The Skills extension's rules (protocol/skills.py) and the verify walk (session/skills.py), fed data: every
conformance code, URIs compared as a WHATWG parser spells them, sizes and digests, the served frontmatter
against the listing, and the read bounds (512 entries, 16 MiB a skill, the catalog budget)."""

from __future__ import annotations

import asyncio
import base64
import hashlib

import pytest

from inspector import errors as E
from inspector.protocol import skills as S
from inspector.session.skills import Budget, frontmatter_issues, parse_frontmatter, verify_entries


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def entry(name="notes", description="Take notes.", resources=None, uri=None, **front):
    uri = uri or f"skill://{name}/SKILL.md"
    if resources is None:
        resources = [{"uri": uri, "digest": digest(b"x"), "size": 1}]
    return S.parse_entry({"uri": uri, "frontmatter": {"name": name, "description": description, **front},
                          "resources": resources})


def codes(issues):
    return [i.code for i in issues]


def test_a_good_entry_breaks_nothing_and_names_itself():
    e = entry()
    assert S.conformance(e) == [] and e.name == "notes" and e.description == "Take notes." and not e.dynamic
    assert S.parse_entry({"uri": "skill://a/SKILL.md", "frontmatter": {}, "resources": "dynamic"}).name == "a"


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"name": "", "uri": "skill://notes/SKILL.md"}, ["missing-name"]),
    ({"name": "Bad--Name", "uri": "skill://Bad--Name/SKILL.md"}, ["malformed-name"]),
    ({"description": " "}, ["missing-description"]),
    ({"description": "d" * 1025}, ["malformed-description"]),
    ({"uri": "urn:notes"}, ["malformed-uri"]),
    ({"uri": "skill://other/SKILL.md"}, ["name-path-mismatch"]),
    ({"resources": "dynamic"}, ["dynamic-resources"]),
    ({"resources": [{"uri": "skill://notes/SKILL.md"}]}, ["missing-digest", "missing-size"]),
    ({"resources": [{"uri": "skill://notes/SKILL.md", "digest": "sha256:ABC", "size": -1}]},
     ["malformed-digest", "malformed-size"]),
    ({"resources": [{"uri": "skill://notes/SKILL.md", "digest": digest(b"x"), "size": 1},
                    {"uri": "skill://notes/./SKILL.md", "digest": digest(b"x"), "size": 1},
                    {"uri": "skill://elsewhere/x", "digest": digest(b"x"), "size": 1}]},
     ["duplicate-resource", "resource-outside-skill-root"]),
    ({"resources": [{"uri": "skill://notes/SKILL.md", "digest": digest(b"x"), "size": 1}]
      + [{"uri": f"skill://notes/f{i}", "digest": digest(b"x"), "size": 40000} for i in range(513)]},
     ["resource-limit-exceeded", "size-limit-exceeded"]),
])
def test_each_conformance_rule(kwargs, expected):
    assert codes(S.conformance(entry(**kwargs))) == expected


def test_shapes_the_wire_requires():
    for bad, says in [(1, "not an object"), ({}, "uri"), ({"uri": "u"}, "frontmatter"),
                      ({"uri": "u", "frontmatter": {"name": 3}}, "frontmatter.name"),
                      ({"uri": "u", "frontmatter": {}, "resources": 5}, "neither a list"),
                      ({"uri": "u", "frontmatter": {}, "resources": [{}]}, r"resources\[0\]"),
                      ({"uri": "u", "frontmatter": {}, "resources": [{"uri": "a", "digest": 1}]}, "digest"),
                      ({"uri": "u", "frontmatter": {}, "resources": [{"uri": "a", "size": True}]}, "size")]:
        with pytest.raises(S.SkillShapeError, match=says):
            S.parse_entry(bad)
    with pytest.raises(S.SkillShapeError):
        S.parse_list({"skills": {}})
    with pytest.raises(S.SkillShapeError):
        S.parse_list({"skills": [], "nextCursor": 1})
    with pytest.raises(S.SkillShapeError, match="skill object"):
        S.parse_get({"uri": "skill://a/SKILL.md"})
    assert S.parse_list({"skills": [], "nextCursor": "2"}) == ([], "2")
    assert S.offered({"extensions": {S.EXTENSION: {}}}) and not S.offered({"extensions": {S.EXTENSION: True}})
    assert not S.offered(None)


def test_uris_compare_as_a_whatwg_parser_spells_them():
    assert S.normalize_uri("SKILL://a/b/../c/%7e%2f/SKILL.md") == "skill://a/c/~%2F/SKILL.md"
    assert S.normalize_uri("HTTPS://Host.Example/x/./y?q=1#f") == "https://host.example/x/y?q=1#f"
    assert S.normalize_uri("skill://root") == "skill://root"
    for bad in ("no-scheme", "urn:x", "1a://b/c", "skill://a/\nb"):
        assert S.normalize_uri(bad) is None
    assert S.name_from_uri("skill://a/deep/pdf/SKILL.md") == "pdf" and S.name_from_uri("skill:///SKILL.md") is None
    assert S.uri_identity("urn:x") == "urn:x" and S.skill_root("urn:x") is None


def test_sizes_then_digests_decide_a_file():
    f = S.ManifestFile("skill://a/x", digest(b"abc"), 3)
    assert S.verify_bytes(f, b"abc").status == "verified"
    assert S.verify_bytes(f, b"abd").status == "mismatch"
    short = S.verify_bytes(f, b"ab")
    assert short.status == "mismatch" and short.reason == "Manifest declares 3 bytes but the fetched file is 2."
    assert S.verify_bytes(S.ManifestFile("u"), b"").status == "unverifiable"
    assert S.verify_bytes(S.ManifestFile("u", "md5:x"), b"").as_json()["expectedDigest"] == "md5:x"


def test_content_blocks_and_what_they_cost():
    result = {"contents": [{"uri": "skill://a/./x", "blob": base64.b64encode(b"\x00\x01").decode()},
                           {"uri": "skill://a/t", "text": "é"}, "junk"]}
    assert S.block_bytes(S.content_for(result, "skill://a/x")) == b"\x00\x01"
    assert S.block_bytes(S.content_for(result, "skill://a/t")) == "é".encode()
    assert S.response_bytes(result) == 4 + 2 and S.content_for({"contents": 1}, "x") is None
    for bad in ({"blob": "!!"}, {"uri": "x"}):
        with pytest.raises(ValueError):
            S.block_bytes(bad)


def test_the_skill_file_and_its_frontmatter():
    assert S.split_skill_file("---\nname: a\n---\n\nBody") == ("name: a", "Body")
    assert S.split_skill_file("---\r\nname: a\r\n---") == ("name: a", "")
    assert S.split_skill_file("no front") == (None, "no front")
    assert S.split_skill_file("---\nnever closed") == (None, "---\nnever closed")
    e = entry(extra={"k": [1, 2]})
    assert frontmatter_issues(e, "---\nname: notes\ndescription: Take notes.\nextra: {k: [1, 2.0]}\n---\n") == []
    mism = frontmatter_issues(e, "---\nname: notes\ndescription: Other\nmore: 1\n---\n")
    assert [i.message for i in mism] == [
        'Field "description" differs: the listing says "Take notes." but the served SKILL.md says "Other".',
        'The listing declares "extra" but the served SKILL.md omits it.',
        'The served SKILL.md declares "more" but the listing\'s frontmatter omits it.']
    assert codes(frontmatter_issues(e, "# no frontmatter")) == ["frontmatter-absent"]
    assert codes(frontmatter_issues(e, "---\nname: a: b\n---\n")) == ["frontmatter-unparsable"]
    assert codes(frontmatter_issues(e, "---\n- a\n---\n")) == ["frontmatter-unparsable"]
    assert parse_frontmatter("# only a comment") == {} and isinstance(parse_frontmatter("just text"), str)
    assert parse_frontmatter("when: 2024-01-02") == {"when": "2024-01-02"}
    assert "cyclic" in str(parse_frontmatter("a: &x [*x]"))
    deep: list = []
    for _ in range(70):
        deep = [deep]
    assert "deeper" in str(S.graph_error(deep))
    assert not S.json_equal(True, 1) and S.json_equal(1, 1.0) and not S.json_equal("1", 1)
    assert S.json_equal(float("nan"), float("nan")) and not S.json_equal([1], [1, 2]) and not S.json_equal({}, [])
    assert S.display_value(float("inf")) == "inf"


def test_name_collisions_are_warnings_naming_the_others():
    a = entry(uri="skill://x/notes/SKILL.md")
    b = entry(uri="skill://y/notes/SKILL.md")
    c = entry(uri="skill://z/notes/SKILL.md")
    two = S.name_collisions([a, b])
    assert two[S.uri_identity(a.uri)].message.startswith('Another skill in this listing also declares the name "notes"')
    three = S.name_collisions([a, b, c, a])
    assert "2 other skills" in three[S.uri_identity(c.uri)].message


def run_walk(files: dict[str, bytes | Exception], entries, budget=None):
    async def read(uri):
        got = files.get(uri)
        if isinstance(got, Exception):
            raise got
        if got is None:
            return {"contents": []}
        return {"contents": [{"uri": uri, "text": got.decode()}]}
    return asyncio.run(verify_entries(read, entries, budget))


SKILL = b"---\nname: notes\ndescription: Take notes.\n---\nBody\n"


def manifest(*files):
    return [{"uri": u, "digest": digest(d), "size": len(d)} for u, d in files]


def test_the_walk_reads_each_file_and_judges_the_skill():
    good = entry(resources=manifest(("skill://notes/SKILL.md", SKILL), ("skill://notes/a", b"A")))
    [r] = run_walk({"skill://notes/SKILL.md": SKILL, "skill://notes/a": b"A"}, [good])
    assert r.outcome == "verified" and r.ok and S.exit_outcome([r], True) is None
    [r] = run_walk({"skill://notes/SKILL.md": SKILL, "skill://notes/a": E.RemoteError("resources/read", -1, "gone")},
                   [good])
    assert r.outcome == "failed" and r.files[1].status == "read-error" and "gone" in str(r.files[1].reason)
    [r] = run_walk({"skill://notes/SKILL.md": SKILL}, [good])
    assert r.files[1].status == "read-error" and "no content block" in str(r.files[1].reason)
    with pytest.raises(E.ServerExited):
        run_walk({"skill://notes/SKILL.md": E.ServerExited("bye")}, [good])


def test_an_entry_file_missing_from_the_manifest_is_still_read_for_its_frontmatter():
    dyn = entry(resources="dynamic")
    [r] = run_walk({"skill://notes/SKILL.md": b"---\nname: other\n---\n"}, [dyn])
    assert r.outcome == "failed" and codes(r.frontmatter) == ["frontmatter-mismatch", "frontmatter-mismatch"]
    [r] = run_walk({"skill://notes/SKILL.md": SKILL}, [dyn])
    assert r.outcome == "unverifiable" and r.files == () and S.exit_outcome([r], True) == "unverifiable"
    [r] = run_walk({}, [dyn])
    assert r.files[0].status == "read-error"
    missing = entry(resources=manifest(("skill://notes/a", b"A")))
    [r] = run_walk({"skill://notes/SKILL.md": SKILL, "skill://notes/a": b"A"}, [missing])
    assert codes(r.conformance) == ["manifest-missing-self"] and r.outcome == "failed"


def test_the_read_bounds_leave_a_skill_incomplete_never_passed():
    many = entry(resources=manifest(("skill://notes/SKILL.md", SKILL),
                                    *((f"skill://notes/f{i}", b"") for i in range(520))))
    files = {"skill://notes/SKILL.md": SKILL, **{f"skill://notes/f{i}": b"" for i in range(520)}}
    [r] = run_walk(files, [many])
    assert r.outcome == "incomplete" and len(r.files) == 512 and "Only 512 of 521" in str(r.incomplete)
    big = b"x" * (S.MAX_TOTAL_BYTES // 2 + 1)
    liar = entry(resources=[*manifest(("skill://notes/SKILL.md", SKILL)),
                            {"uri": "skill://notes/a", "digest": digest(b"A"), "size": 1},
                            {"uri": "skill://notes/b", "digest": digest(b"B"), "size": 1},
                            {"uri": "skill://notes/c", "digest": digest(b"C"), "size": 1}])
    [r] = run_walk({"skill://notes/SKILL.md": SKILL, "skill://notes/a": big, "skill://notes/b": big}, [liar])
    assert "Stopped after 3 of 4" in str(r.incomplete) and r.outcome == "failed"  # the sizes lied: mismatches
    two = [entry(), entry(name="other", uri="skill://other/SKILL.md")]
    reports = run_walk({}, two, Budget(max_skills=1))
    assert reports[1].outcome == "incomplete" and reports[1].files == () and S.exit_outcome(reports, False) == "failed"
    assert "Not read" in str(reports[1].incomplete)
    assert S.summary(reports).startswith("1 of 2 skills failed verification")
    first = entry(resources=manifest(("skill://notes/SKILL.md", SKILL)))
    by_bytes = run_walk({"skill://notes/SKILL.md": SKILL}, [first, two[1]], Budget(max_bytes=len(SKILL)))
    assert [r.outcome for r in by_bytes] == ["verified", "incomplete"]
    assert S.exit_outcome(by_bytes, True) == "incomplete"
    assert "budget of 256 skills / 50 bytes" in str(by_bytes[1].incomplete)


def test_saving_writes_the_files_inside_a_new_folder_and_nothing_outside(tmp_path):
    from inspector.session.skills import relative_path, save_skill

    files = {"skill://notes/SKILL.md": SKILL, "skill://notes/ref/a.md": b"A"}

    async def read_bytes(uri):
        if uri not in files:
            raise E.RemoteError("resources/read", -32002, "not found")
        return files[uri]

    e = entry(resources=[*manifest(("skill://notes/SKILL.md", SKILL), ("skill://notes/ref/a.md", b"A")),
                         {"uri": "skill://notes/gone", "digest": digest(b""), "size": 0},
                         {"uri": "skill://elsewhere/x", "digest": digest(b""), "size": 0},
                         {"uri": "skill://notes/big", "digest": digest(b""), "size": S.MAX_TOTAL_BYTES}])
    saved = asyncio.run(save_skill(read_bytes, e, tmp_path))
    assert saved.folder == tmp_path / "notes"
    assert sorted(p.relative_to(saved.folder).as_posix() for p in saved.written) == ["SKILL.md", "ref/a.md"]
    assert (saved.folder / "ref" / "a.md").read_bytes() == b"A"
    assert [(u, why.split(" ")[0]) for u, why in saved.skipped] == [
        ("skill://notes/big", "beyond"), ("skill://notes/gone", "resources/read:"), ("skill://elsewhere/x", "outside")]
    with pytest.raises(E.UsageError, match="already exists"):
        asyncio.run(save_skill(read_bytes, e, tmp_path))
    dyn = asyncio.run(save_skill(read_bytes, entry(resources="dynamic"), tmp_path / "d"))
    assert [p.name for p in dyn.written] == ["SKILL.md"]
    for uri in ("skill://notes/%2E%2E/x", "skill://notes/a%5Cb", "skill://notes/", "urn:x"):
        assert relative_path(e, uri) is None, uri
    assert relative_path(e, "skill://notes/a%20b/c?x#y") == "a b/c"


def test_the_traffic_pane_and_the_client_know_the_skills_methods():
    from inspector.protocol.shapes import check_result
    from inspector.traffic.summary import _call, _result

    assert _result("skills/list", {"skills": [{"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a"}},
                                              {"uri": "skill://b/SKILL.md", "frontmatter": 1}]}) \
        == "skills/list → 2 skills: a, skill://b/SKILL.md"
    assert _call("skills/get", {"uri": "skill://a/SKILL.md"}) == "skills/get skill://a/SKILL.md"
    assert check_result("skills/list", {"skills": 3}) == "the result has no skills list"
    assert check_result("skills/get", {"skill": {"uri": "u", "frontmatter": {}, "resources": "dynamic"}}) is None
