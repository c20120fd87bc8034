"""The catalog file: order, versions, secrets in the keyring, atomic writes and crashes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from catalog_support import catalog_path_fixture, memory_keyring_fixture, no_keyring_fixture  # noqa: F401 - fixtures

from inspector import messages
from inspector.catalog import VERSION, Catalog, CatalogError, default_catalog_path
from inspector.config import ServerSpec
from inspector.keystore import MemorySecrets, SecretStore

ROOT = Path(__file__).resolve().parents[2]


def github() -> ServerSpec:
    return ServerSpec(name="github", command=["npx", "-y", "@modelcontextprotocol/server-github"],
                      env={"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret_1", "LOG_LEVEL": "info"})


def remote() -> ServerSpec:
    return ServerSpec(name="notes", url="https://notes.example.com/mcp", transport="http",
                      headers={"Authorization": "Bearer tok-2", "X-Team": "docs", "X-Session": "Bearer tok-3"})


def test_default_path_is_under_the_user_config_dir(monkeypatch):
    import platformdirs

    monkeypatch.delenv("SPYGLASS_CONFIG_DIR")
    path = default_catalog_path()
    assert path == platformdirs.user_config_path("spyglass", appauthor=False) / "servers.json"
    assert path.parts[-2:] == ("spyglass", "servers.json")


def test_missing_file_is_an_empty_catalog(catalog_path):
    catalog = Catalog(catalog_path).load()
    assert catalog.servers == [] and catalog.warnings == [] and not catalog_path.exists()


def test_round_trip_keeps_order_and_fields(catalog_path):
    catalog = Catalog(catalog_path).load()
    a = catalog.add(github(), mode="legacy", timeout=30)
    b = catalog.add(remote())
    c = catalog.add(ServerSpec(name="demo", command=[sys.executable, "-m", "inspector.demo"], cwd=str(ROOT)))
    catalog.move(c.id, 0)
    catalog.save()
    data = json.loads(catalog_path.read_text())
    assert data["version"] == VERSION and data["format"] == "spyglass-catalog"
    again = Catalog(catalog_path).load()
    assert [e.name for e in again.servers] == ["demo", "github", "notes"]
    assert [e.id for e in again.servers] == [c.id, a.id, b.id]
    assert again.get(a.id).spec == github() and again.get(a.id).mode == "legacy" and again.get(a.id).timeout == 30
    assert again.get(b.id).spec == remote() and again.get(c.id).spec.cwd == str(ROOT)
    assert again.warnings == []


def test_secrets_go_to_the_keyring_never_the_file(catalog_path, memory_keyring):
    catalog = Catalog(catalog_path).load()
    entry = catalog.add(github())
    entry2 = catalog.add(remote())
    catalog.save()
    text = catalog_path.read_text()
    for secret in ("ghp_secret_1", "tok-2", "tok-3"):
        assert secret not in text
    assert "info" in text and "docs" in text  # ordinary values stay in the file
    data = json.loads(text)
    marker = data["servers"][0]["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"]
    assert marker == {"keyring": "spyglass", "key": f"{entry.id}/env:GITHUB_PERSONAL_ACCESS_TOKEN"}
    assert memory_keyring.items[("spyglass", marker["key"])] == "ghp_secret_1"
    assert memory_keyring.items[("spyglass", f"{entry2.id}/header:Authorization")] == "Bearer tok-2"
    assert memory_keyring.items[("spyglass", f"{entry2.id}/header:X-Session")] == "Bearer tok-3"
    again = Catalog(catalog_path).load()
    assert again.get(entry.id).spec.env["GITHUB_PERSONAL_ACCESS_TOKEN"] == "ghp_secret_1"
    assert again.get(entry2.id).spec.headers["Authorization"] == "Bearer tok-2"
    masked = again.get(entry2.id).masked_spec()
    assert "tok-2" not in repr(masked) and masked.headers["X-Team"] == "docs"


def test_oauth_client_and_scope_are_kept_but_never_the_client_secret(catalog_path, memory_keyring):
    catalog = Catalog(catalog_path).load()
    spec = ServerSpec(name="crm", url="https://crm.example.com/mcp",
                      oauth={"client_id": "my-client", "client_secret": "cs-very-secret", "scope": "crm:read"})
    entry = catalog.add(spec)
    catalog.save()
    text = catalog_path.read_text()
    assert "cs-very-secret" not in text
    assert json.loads(text)["servers"][0]["oauth"] == {"client_id": "my-client", "scope": "crm:read"}
    again = Catalog(catalog_path).load()
    assert again.get(entry.id).spec.oauth == {"client_id": "my-client", "scope": "crm:read"}
    # a hand-edited file with odd oauth values keeps only what it can use
    data = json.loads(text)
    data["servers"][0]["oauth"] = {"client_id": 7, "scope": "a b", "client_secret": "x", "other": "y"}
    catalog_path.write_text(json.dumps(data))
    assert Catalog(catalog_path).load().get(entry.id).spec.oauth == {"scope": "a b"}


def test_roots_are_kept_with_their_server(catalog_path, memory_keyring):
    catalog = Catalog(catalog_path).load()
    entry = catalog.add(github())
    assert entry.roots is None and "roots" not in json.dumps(catalog.to_json())  # never set: not written
    entry.roots = [{"uri": "file:///home/ada/project", "name": "project"}]
    catalog.save()
    assert Catalog(catalog_path).load().get(entry.id).roots == entry.roots
    data = json.loads(catalog_path.read_text())
    data["servers"][0]["roots"] = [{"uri": "file:///a"}, "junk", {"name": "no uri"}, {"uri": "file:///b", "name": 3}]
    catalog_path.write_text(json.dumps(data))
    assert Catalog(catalog_path).load().get(entry.id).roots == [{"uri": "file:///a"}, {"uri": "file:///b"}]


def test_marked_fields_are_secret_whatever_their_name(catalog_path, memory_keyring):
    catalog = Catalog(catalog_path).load()
    entry = catalog.add(ServerSpec(name="db", command=["db-mcp"], env={"DSN": "postgres://u:pw@h/db"}),
                        secret_marks={"env:DSN"})
    catalog.save()
    assert "pw@h" not in catalog_path.read_text()
    assert Catalog(catalog_path).load().get(entry.id).spec.env["DSN"] == "postgres://u:pw@h/db"


def test_removed_servers_and_fields_leave_the_keyring(catalog_path, memory_keyring):
    catalog = Catalog(catalog_path).load()
    a, b = catalog.add(github()), catalog.add(remote())
    catalog.save()
    catalog.remove(a.id)
    spec = remote()
    del spec.headers["X-Session"]
    catalog.update(b.id, spec)
    catalog.save()
    keys = {k for (_, k) in memory_keyring.items}
    assert keys == {f"{b.id}/header:Authorization"}


def test_add_update_remove_duplicate(catalog_path):
    catalog = Catalog(catalog_path).load()
    a = catalog.add(github())
    twin = catalog.add(github())
    assert twin.name == "github (2)"  # names stay unique
    copy = catalog.duplicate(a.id)
    assert copy.name == "github (copy)" and copy.id != a.id and copy.spec == ServerSpec(**{**github().__dict__,
                                                                                        "name": "github (copy)"})
    assert [e.id for e in catalog.servers] == [a.id, copy.id, twin.id]
    with pytest.raises(CatalogError, match="already called"):
        catalog.update(copy.id, ServerSpec(name="GitHub", command=["x"]))
    catalog.update(copy.id, ServerSpec(name="gh work", command=["x"]), mode="modern")
    assert catalog.get(copy.id).name == "gh work" and catalog.get(copy.id).mode == "modern"
    catalog.remove(twin.id)
    with pytest.raises(KeyError):
        catalog.get(twin.id)
    catalog.save()
    again = Catalog(catalog_path).load()
    assert [e.name for e in again.servers] == ["github", "gh work"]
    # the duplicate's secret is its own keyring entry
    assert again.get(a.id).spec.env["GITHUB_PERSONAL_ACCESS_TOKEN"] == "ghp_secret_1"


def test_without_a_keyring_secrets_live_for_this_session_only(catalog_path, no_keyring):
    warnings: list[str] = []
    store = SecretStore(on_warning=warnings.append)
    catalog = Catalog(catalog_path, secrets=store).load()
    entry = catalog.add(github())
    catalog.save()
    assert not catalog.secrets_persistent
    assert warnings and "cannot be saved" in warnings[0] and "this session only" in warnings[0]
    assert catalog.secrets_warning == warnings[0]
    assert "ghp_secret_1" not in catalog_path.read_text()
    # the same session still has it
    assert Catalog(catalog_path, secrets=store).load().get(entry.id).spec.env["GITHUB_PERSONAL_ACCESS_TOKEN"] \
        == "ghp_secret_1"
    # the next run does not, and says so
    later = Catalog(catalog_path, secrets=SecretStore()).load()
    assert later.get(entry.id).spec.env["GITHUB_PERSONAL_ACCESS_TOKEN"] == ""
    assert later.get(entry.id).missing_secrets == {"env:GITHUB_PERSONAL_ACCESS_TOKEN"}
    assert any("not in the keyring" in w and "GITHUB_PERSONAL_ACCESS_TOKEN" in w for w in later.warnings)
    # saving again keeps the marker (the field is still a secret to ask for), not an empty value
    later.save()
    data = json.loads(catalog_path.read_text())
    assert isinstance(data["servers"][0]["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"], dict)


CRASH = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from inspector.catalog import Catalog
    from inspector.config import ServerSpec
    from inspector.keystore import MemorySecrets

    catalog = Catalog({path!r}, secrets=MemorySecrets()).load()
    catalog.add(ServerSpec(name="new", command=["new-server"]))

    def die(src, dst):  # the temp file is written and fsynced; the rename never happens
        sys.stdout.write(src); sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)

    os.replace = die
    catalog.save()
""")


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_a_crash_between_writing_and_renaming_leaves_the_old_catalog(catalog_path):
    catalog = Catalog(catalog_path, secrets=MemorySecrets()).load()
    catalog.add(ServerSpec(name="old", command=["old-server"]))
    catalog.save()
    before = catalog_path.read_bytes()
    proc = subprocess.run([sys.executable, "-c", CRASH.format(root=str(ROOT), path=str(catalog_path))],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    temp = proc.stdout.strip()
    assert os.path.exists(temp) and os.path.dirname(temp) == str(catalog_path.parent)
    assert "new-server" in open(temp).read()  # it got as far as a complete temp file
    assert catalog_path.read_bytes() == before
    after = Catalog(catalog_path, secrets=MemorySecrets()).load()
    assert [e.name for e in after.servers] == ["old"] and after.warnings == []
    # a later save clears the leftover once it is clearly stale
    old = time.time() - 3600
    os.utime(temp, (old, old))
    after.add(ServerSpec(name="newer", command=["x"]))
    after.save()
    assert not os.path.exists(temp)
    assert [e.name for e in Catalog(catalog_path, secrets=MemorySecrets()).load().servers] == ["old", "newer"]


def test_a_failed_rename_keeps_the_old_file_and_leaves_no_temp(catalog_path, monkeypatch):
    catalog = Catalog(catalog_path).load()
    catalog.add(ServerSpec(name="old", command=["old-server"]))
    catalog.save()
    before = catalog_path.read_bytes()
    catalog.add(ServerSpec(name="new", command=["new-server"]))

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(CatalogError, match="cannot save"):
        catalog.save()
    monkeypatch.undo()
    assert catalog_path.read_bytes() == before
    assert sorted(p.name for p in catalog_path.parent.iterdir()) == ["servers.json"]


def test_a_broken_catalog_is_moved_aside_not_lost(catalog_path, expect_log):
    expect_log("spyglass.catalog", "was moved to")
    catalog_path.parent.mkdir(parents=True)
    catalog_path.write_text('{"format": "spyglass-catalog", "version": 1, "servers": [\n  {"id": "a",\n')
    catalog = Catalog(catalog_path).load()
    assert catalog.servers == []
    backups = list(catalog_path.parent.glob("servers.json.broken-*"))
    assert len(backups) == 1 and backups[0].read_text().startswith('{"format"')
    assert "line 3" in catalog.warnings[0] and str(backups[0]) in catalog.warnings[0]
    told = messages.pending()  # no window listens here: the warning waits for one
    assert [(m.level, m.text) for m in told] == [("warning", catalog.warnings[0])]
    catalog.add(ServerSpec(name="fresh", command=["x"]))
    catalog.save()
    assert backups[0].exists()


def test_a_newer_catalog_is_never_overwritten(catalog_path):
    catalog_path.parent.mkdir(parents=True)
    text = json.dumps({"format": "spyglass-catalog", "version": VERSION + 1, "servers": [
        {"id": "x1", "name": "future", "command": ["f"], "env": {}, "headers": {}, "wormhole": True}]})
    catalog_path.write_text(text)
    catalog = Catalog(catalog_path).load()
    assert catalog.read_only and "newer Spyglass" in catalog.warnings[0]
    assert [m.text for m in messages.pending()] == catalog.warnings
    assert [e.name for e in catalog.servers] == ["future"]
    with pytest.raises(CatalogError, match="read-only"):
        catalog.save()
    assert catalog_path.read_text() == text


def test_unusable_entries_are_kept_in_the_file(catalog_path):
    catalog_path.parent.mkdir(parents=True)
    catalog_path.write_text(json.dumps({"format": "spyglass-catalog", "version": 1, "servers": [
        {"id": "a1", "name": "ok", "command": ["ok"]},
        {"id": "b2", "name": "half", "command": "not a list"}]}))
    catalog = Catalog(catalog_path).load()
    assert [e.name for e in catalog.servers] == ["ok"]
    assert any("'half'" in w for w in catalog.warnings)
    catalog.add(ServerSpec(name="more", command=["m"]))
    catalog.save()
    raw = json.loads(catalog_path.read_text())["servers"]
    assert {"id": "b2", "name": "half", "command": "not a list"} in raw


def test_a_catalog_that_is_not_text_is_moved_aside_too(catalog_path, expect_log):
    expect_log("spyglass.catalog", "was moved to")
    catalog_path.parent.mkdir(parents=True)
    catalog_path.write_bytes(b'{"servers": [\xff\xfe]}')
    catalog = Catalog(catalog_path).load()
    assert not catalog.read_only and "not UTF-8" in catalog.warnings[0]
    assert len(list(catalog_path.parent.glob("servers.json.broken-*"))) == 1


def test_an_unreadable_catalog_is_left_alone(catalog_path, monkeypatch):
    catalog_path.parent.mkdir(parents=True)
    text = '{"format": "spyglass-catalog", "version": 1, "servers": []}'
    catalog_path.write_text(text)

    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    catalog = Catalog(catalog_path).load()
    monkeypatch.undo()
    assert catalog.read_only and "cannot read" in catalog.warnings[0] and "Permission denied" in catalog.warnings[0]
    with pytest.raises(CatalogError, match="read-only"):
        catalog.save()
    assert catalog_path.read_text() == text
