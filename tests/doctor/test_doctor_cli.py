"""`spyglass doctor`: text, JSON, exit codes, the catalog's --server NAME, and trusting a certificate for
one server from the command line."""

from __future__ import annotations

import io
import json

import pytest
from doctor_peers import make_certificate, serving
from support import hostile_cmd

from inspector import errors as E
from inspector.__main__ import main as spyglass
from inspector.catalog import Catalog
from inspector.config import ServerSpec


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    from inspector.cli.doctor import main

    return main(["doctor", *argv], out), out.getvalue()


def test_json_names_the_failing_step_and_exits_with_its_code():
    with serving("not-found") as peer:
        code, text = run(peer.url, "--format", "json", "--timeout", "2")
    report = json.loads(text)
    assert code == E.EXIT_CONNECT == report["exit_code"]
    assert report["failed_step"] == "post" and report["connected"] is False
    post = next(s for s in report["steps"] if s["id"] == "post")
    assert post["outcome"] == "failed" and post["fix"].startswith("check the path") and post["ms"] >= 0
    assert [s["outcome"] for s in report["steps"]][-1] == "not reached"


def test_text_for_a_stdio_server_that_logs_to_stdout():
    code, text = run("--timeout", "2", "--", *hostile_cmd("noise"))
    assert code == E.EXIT_INVALID
    assert "✗ only JSON-RPC on stdout: failed" in text and "'INFO starting up'" in text
    assert text.rstrip().endswith('result: failed at "only JSON-RPC on stdout" (exit 8)')


def test_a_connected_server_exits_0(capsys):
    with serving("healthy") as peer:
        assert spyglass(["doctor", peer.url, "--timeout", "2"]) == E.EXIT_OK
    assert capsys.readouterr().out.rstrip().endswith("result: connected")


def test_usage_errors_exit_1(capsys):
    assert run()[0] == E.EXIT_USAGE
    assert "no server given: use a URL, -- COMMAND" in capsys.readouterr().err  # (a URL was not named)
    assert run("--timeout", "0", "http://127.0.0.1:1/mcp")[0] == E.EXIT_USAGE
    assert "0 seconds: give more than 0, at most 600" in capsys.readouterr().err  # (was "between 0 and 600")
    assert run("--trust-certificate", "https://127.0.0.1:1/mcp")[0] == E.EXIT_USAGE
    assert "--trust-certificate needs --server NAME" in capsys.readouterr().err


def test_a_catalog_server_trusts_its_certificate_for_itself_only(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPYGLASS_CONFIG_DIR", str(tmp_path))
    cert = make_certificate(tmp_path, "dev")
    with serving("healthy", cert.server_context()) as peer:
        catalog = Catalog().load()
        catalog.add(ServerSpec(name="dev", url=peer.url))
        catalog.add(ServerSpec(name="other", url=peer.url))
        catalog.save()
        code, text = run("--server", "dev", "--timeout", "2")
        assert code == E.EXIT_CONNECT and "a self-signed certificate" in text
        code, text = run("--server", "dev", "--timeout", "2", "--trust-certificate")
        assert code == E.EXIT_OK, text
        assert "trusted for this server by its pinned fingerprint" in text
        assert "trusting the certificate" in capsys.readouterr().err
        again = Catalog().load()
        assert again.find("dev").spec.tls_pin == cert.sha256
        assert again.find("other").spec.tls_pin == ""  # never a global switch
        assert run("--server", "dev", "--timeout", "2")[0] == E.EXIT_OK
        assert run("--server", "other", "--timeout", "2")[0] == E.EXIT_CONNECT
    saved = json.loads((tmp_path / "servers.json").read_text())
    assert [s.get("tls_pin") for s in saved["servers"]] == [cert.sha256, None]


def test_an_unknown_catalog_server(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPYGLASS_CONFIG_DIR", str(tmp_path))
    assert run("--server", "nope")[0] == E.EXIT_USAGE
    assert "no server named 'nope' in the catalog" in capsys.readouterr().err


def test_the_catalog_keeps_only_a_well_formed_pin(tmp_path):
    path = tmp_path / "servers.json"
    good = "AB" * 32
    path.write_text(json.dumps({"format": "spyglass-catalog", "version": 1, "servers": [
        {"id": "a", "name": "a", "url": "https://127.0.0.1:1/mcp", "tls_pin": good.lower()},
        {"id": "b", "name": "b", "url": "https://127.0.0.1:1/mcp", "tls_pin": "z" * 64}]}))
    catalog = Catalog(path).load()
    assert catalog.get("a").spec.tls_pin == good and catalog.get("b").spec.tls_pin == ""
    catalog.save()
    assert [s.get("tls_pin") for s in json.loads(path.read_text())["servers"]] == [good, None]


@pytest.mark.parametrize(("url", "words"), [
    ("http://[::1", "not a valid URL"), ("http://127.0.0.1:99999/mcp", "not a valid URL: Port out of range"),
    ("ftp://127.0.0.1/mcp", "must start with http:// or https://")])
@pytest.mark.parametrize("command", [["doctor"], ["check"], ["pin", "--output", "unused.pin"], ["--cli"]])
def test_a_url_that_cannot_be_used_is_one_line_and_exit_1(command, url, words, tmp_path, monkeypatch, capsys):
    # (a bracket not closed escaped as an internal error, exit 70; a port out of range printed a traceback of
    # the HTTP client and exit 4; ftp://… was looked up on PATH as a command)
    monkeypatch.chdir(tmp_path)
    code = spyglass([*command, url])
    err = capsys.readouterr().err
    assert code == E.EXIT_USAGE, err
    assert words in err and "Traceback" not in err and "internal error" not in err
    assert not (tmp_path / "unused.pin").exists()
