"""The official CLI's OAuth hand-over flags in `spyglass --cli`, against the local authorization server:
--relogin (forget the keyring's tokens, revoke them per RFC 7009) and --no-revoke, --callback-url (and
MCP_OAUTH_CALLBACK_URL) binding the redirect listener, --wait-for-auth picking up the official state file's
token, --client-config filling the Client ID Metadata Document URL."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import fake_as
import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(90)


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "file_keyring.FileKeyring",
           "SPYGLASS_TEST_KEYRING": str(tmp / "keyring.json"),
           "MCP_INSPECTOR_OAUTH_STATE_PATH": str(tmp / "oauth.json"),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]), **extra}
    for name in ("MCP_OAUTH_CALLBACK_URL", "MCP_CLIENT_CONFIG_PATH"):
        if name not in extra:
            env.pop(name, None)
    return env


def spyglass(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", "--cli", *args], capture_output=True, text=True,
                          timeout=60, cwd=str(ROOT), env=env)


def _keyring(tmp: Path) -> dict[str, str]:
    return json.loads((tmp / "keyring.json").read_text())


def test_relogin_forgets_the_stored_tokens_revokes_them_and_signs_in_again(tmp_path):
    env = _env(tmp_path)
    with fake_as.running() as server:
        first = spyglass(env, "--auth-headless", "--transport", "http", server.mcp_url)
        assert first.returncode == 0, first.stderr
        stored = [json.loads(v) for k, v in _keyring(tmp_path).items() if "tokens" in v]
        refresh = stored[0]["tokens"]["refresh_token"]
        again = spyglass(env, "--auth-headless", "--transport", "http", server.mcp_url)  # the kept tokens
        assert again.returncode == 0 and len(server.authorization_requests) == 1, again.stderr
        relogin = spyglass(env, "--relogin", "--auth-headless", "--transport", "http", server.mcp_url)
        assert relogin.returncode == 0, relogin.stderr
        assert [r["token"] for r in server.revocations] == [refresh]
        assert server.revocations[0]["token_type_hint"] == "refresh_token"
        assert server.revocations[0]["client_id"] == "client-1"  # the registered (public) client
        assert len(server.authorization_requests) == 2  # a new sign-in, the old grant ended
        assert f"--relogin: forgot the stored OAuth state for {server.mcp_url} (refresh_token revoked" in \
            relogin.stderr
        no_revoke = spyglass(env, "--relogin", "--no-revoke", "--auth-headless", "--transport", "http",
                             server.mcp_url)
        assert no_revoke.returncode == 0, no_revoke.stderr
        assert len(server.revocations) == 1 and len(server.authorization_requests) == 3
        assert "(--no-revoke)" in no_revoke.stderr
        tokens = set(server.tokens) | set(server.refresh_tokens)
    for proc in (relogin, no_revoke):
        assert not any(t in proc.stdout + proc.stderr for t in tokens)


def test_relogin_of_a_server_that_needs_no_sign_in_and_a_failed_revocation(tmp_path):
    from inspector.auth import MemoryStore
    from inspector.auth.revoke import forget_server
    from inspector.auth.store import credential_key

    store = MemoryStore()
    assert forget_server("http://127.0.0.1:9/mcp", store).status == "skipped"  # nothing kept: nothing sent
    resource = "http://127.0.0.1:9/mcp"
    store.save(f"server {resource}", {"issuer": "http://127.0.0.1:9"})
    store.save(credential_key("http://127.0.0.1:9", resource),
               {"tokens": {"access_token": "a"}, "metadata": {"revocation_endpoint": "http://127.0.0.1:9/revoke"}})
    outcome = forget_server(resource, store, client_id="entered")
    assert outcome.status == "failed" and "127.0.0.1:9/revoke" in outcome.detail  # refused: reported, not fatal
    assert store.load(f"server {resource}") is None and store.load(credential_key("http://127.0.0.1:9", resource)) \
        is None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_callback_url_is_where_the_redirect_listener_binds(tmp_path):
    callback = f"http://127.0.0.1:{_free_port()}/my/callback"
    headless = f"http://localhost:{_free_port()}/env/cb"
    with fake_as.running() as server:
        # No terminal: the address is printed, not opened; the user opens it (here: follows it as a browser would)
        run = subprocess.Popen([sys.executable, "-m", "inspector", "--cli", "--token-store", "memory",
                                "--callback-url", callback, "--transport", "http", server.mcp_url],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=str(ROOT), env=_env(tmp_path))
        said = []
        while not said or not said[-1].startswith("  http"):
            said.append(run.stderr.readline())
            assert said[-1], "".join(said)
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(said[-1].strip(), timeout=30).read()
        out, err = run.communicate(timeout=30)
        proc = subprocess.CompletedProcess(run.args, run.returncode, out, "".join(said) + err)
        by_env = spyglass(_env(tmp_path, MCP_OAUTH_CALLBACK_URL=headless), "--token-store", "memory",
                          "--auth-headless", "--transport", "http", server.mcp_url)
    assert proc.returncode == 0, proc.stderr
    assert by_env.returncode == 0, by_env.stderr
    assert [r["redirect_uri"] for r in server.authorization_requests] == [callback, headless]


def test_wait_for_auth_uses_the_token_once_the_state_file_has_it(tmp_path):
    env = _env(tmp_path)
    with fake_as.running() as server:
        server.tokens.add("handed-over")
        proc = subprocess.Popen([sys.executable, "-m", "inspector", "--cli", "--wait-for-auth", "30", "--server-url",
                                 server.mcp_url, "--transport", "http", "--stored-auth-only"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(ROOT), env=env)
        state = {"servers": {server.mcp_url: {"tokens": {"access_token": "handed-over", "token_type": "Bearer"}}}}
        (tmp_path / "oauth.json.part").write_text(json.dumps(state))
        (tmp_path / "oauth.json.part").replace(tmp_path / "oauth.json")  # as a person signing in would leave it
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out)["tools"][0]["name"] == "whoami"
    assert server.authorization_requests == []  # no sign-in of Spyglass's own


def test_client_config_fills_the_client_metadata_url(tmp_path):
    config = tmp_path / "client.json"
    config.write_text(json.dumps({"cimd": {"enabled": True, "clientMetadataUrl": "https://spyglass.example/c.json"},
                                  "enterpriseManagedAuth": {"enabled": False,
                                                            "idp": {"issuer": "https://idp.example",
                                                                    "clientId": "x"}}}))
    with fake_as.running("cimd") as server:
        proc = spyglass(_env(tmp_path, MCP_CLIENT_CONFIG_PATH=str(config)), "--token-store", "memory",
                        "--auth-headless", "--transport", "http", server.mcp_url)
        missing = spyglass(_env(tmp_path), "--client-config", str(tmp_path / "none.json"), "--token-store", "memory",
                           "--auth-headless", "--transport", "http", server.mcp_url)
    assert proc.returncode == 0, proc.stderr
    assert server.authorization_requests[0]["client_id"] == "https://spyglass.example/c.json"
    assert server.registrations and len(server.registrations) == 1  # only the run without a config registered
    assert missing.returncode == 0 and "client config" in missing.stderr and "does not exist" in missing.stderr


@pytest.mark.parametrize("config, problem", [
    ([], "config: Expected object"),
    ({"cimd": {"enabled": True, "clientMetadataUrl": ""}}, "cimd.clientMetadataUrl: CIMD client metadata URL is "
                                                            "required when CIMD is enabled"),
    ({"cimd": {"enabled": True, "clientMetadataUrl": "https://c.example/"}}, "must have a path"),
    ({"cimd": {"enabled": True, "clientMetadataUrl": "ftp://c.example/x"}}, "absolute http(s) URL"),
    ({"cimd": {"clientMetadataUrl": "https://c.example/x"}}, "cimd.enabled: Required"),
    ({"cimd": "yes"}, "cimd: Expected object"),
    ({"enterpriseManagedAuth": {"idp": {"issuer": "https://i.example"}}}, "idp.clientId: Required"),
    ({"enterpriseManagedAuth": {"idp": {"issuer": "not a url", "clientId": "c"}}}, "idp.issuer: Must be"),
    ({"enterpriseManagedAuth": {"enabled": "no", "idp": {}}}, "enterpriseManagedAuth.enabled: Expected boolean"),
    ({"enterpriseManagedAuth": {}}, "enterpriseManagedAuth.idp: Required"),
])
def test_a_client_config_of_the_wrong_shape_names_the_field(config, problem):
    from inspector import errors as E
    from inspector.cli.authflags import parse_client_config

    with pytest.raises(E.UsageError) as caught:
        parse_client_config(config)
    assert problem in caught.value.message


def test_client_config_fills_only_the_flags_left_unset(tmp_path, monkeypatch):
    import argparse

    from inspector.cli.authflags import apply_client_config

    config = tmp_path / "client.json"
    config.write_text(json.dumps({"cimd": {"enabled": False, "clientMetadataUrl": "http://127.0.0.1:1/c.json"},
                                  "enterpriseManagedAuth": {"idp": {"issuer": "https://idp.example", "clientId": "c",
                                                                    "clientSecret": "s"}}}))
    monkeypatch.delenv("MCP_CLIENT_CONFIG_PATH", raising=False)
    args = argparse.Namespace(client_config=str(config), client_metadata_url=None, idp_issuer=None,
                              idp_token_endpoint=None, idp_client_id=None, idp_client_secret=None)
    apply_client_config(args)
    assert (args.client_metadata_url, args.idp_issuer, args.idp_client_id, args.idp_client_secret) == (
        None, "https://idp.example", "c", "s")  # cimd disabled: not applied
    given = argparse.Namespace(client_config=str(config), client_metadata_url=None, idp_issuer=None,
                               idp_token_endpoint="https://idp.example/token", idp_client_id="mine",
                               idp_client_secret=None)
    apply_client_config(given)
    assert (given.idp_issuer, given.idp_client_id, given.idp_client_secret) == (None, "mine", None)


@pytest.mark.parametrize("url, answer", [
    ("http://localhost:6276/oauth/callback", ("localhost", 6276, "/oauth/callback")),
    ("http://[::1]:0", ("::1", 0, "/")),
    ("http://127.1.2.3/cb", ("127.1.2.3", 80, "/cb")),
    ("https://127.0.0.1:1/cb", "must use http scheme"),
    ("http://192.168.1.2:1/cb", "must bind a loopback host"),
    ("http://127.0.0.1:99999/cb", "Invalid OAuth callback URL"),
    ("http:///cb", "must include a hostname"),
])
def test_callback_urls(url, answer, monkeypatch):
    import argparse

    from inspector import errors as E
    from inspector.cli.authflags import callback

    monkeypatch.delenv("MCP_OAUTH_CALLBACK_URL", raising=False)
    if isinstance(answer, tuple):
        got = callback(argparse.Namespace(callback_url=url))
        assert got is not None and (got.host, got.port, got.path) == answer
        assert got.url == f"http://{'[::1]' if got.host == '::1' else got.host}:{got.port}{got.path}"
    else:
        with pytest.raises(E.UsageError, match=answer):
            callback(argparse.Namespace(callback_url=url))
    assert callback(argparse.Namespace(callback_url=None)) is None


def test_the_handoff_block_follows_the_official_environment(monkeypatch, tmp_path):
    from inspector.cli.authflags import handoff

    monkeypatch.setenv("MCP_INSPECTOR_OAUTH_STATE_PATH", str(tmp_path / "o.json"))
    for name, value in {"HOST": "0.0.0.0", "CLIENT_PORT": "7000", "MCP_INSPECTOR_API_TOKEN": "t~k n",
                        "INSPECTOR_TLS_KEY_PATH": "k", "INSPECTOR_TLS_CERT_PATH": "c"}.items():
        monkeypatch.setenv(name, value)
    block = handoff("https://Srv.example:443", None)
    assert block == {"serverUrl": "https://srv.example/",
                     "deepLink": "https://localhost:7000/?serverUrl=https%3A%2F%2Fsrv.example%2F&transport=http"
                                 "&autoConnect=t%7Ek+n",
                     "portForwardCmd": "coder port-forward <workspace> --tcp 7000:7000 --tcp 6275:6275 "
                                       "--tcp 6278:6278",
                     "oauthStatePath": str(tmp_path / "o.json"), "apiToken": "t~k n"}


@pytest.mark.parametrize("argv, message", [
    (["--relogin", "--stored-auth-only"], "--relogin cannot be combined with --stored-auth-only"),
    (["--relogin", "--use-stored-auth"], "--relogin cannot be combined with --use-stored-auth or --wait-for-auth"),
    (["--relogin", "--wait-for-auth", "5"], "--relogin cannot be combined with --use-stored-auth or --wait-for-auth"),
    (["--relogin", "--list-stored-auth"], "--relogin cannot be combined with --list-stored-auth or --print-handoff"),
    (["--relogin", "--method", "servers/list"], "with a --method servers/* catalog command"),
    (["--print-handoff", "--output", "x.json"], "--output requires a method that calls a server"),
    (["--print-handoff", "--load", "--tool-name", "echo"], "--load cannot be combined with --list-stored-auth or "
                                                          "--print-handoff"),
    (["--wait-for-auth", "soon"], "--wait-for-auth must be a positive number of seconds"),
    (["--wait-for-auth", "inf"], "--wait-for-auth must be a positive number of seconds"),
])
def test_the_official_rules_of_the_hand_over_flags(argv, message):
    from inspector import errors as E
    from inspector.cli.oneshot import parse_args

    with pytest.raises(E.UsageError) as caught:
        parse_args([*argv, "--server-url", "http://127.0.0.1:9/mcp"])
    assert message in caught.value.message


def test_a_client_config_that_cannot_be_read(tmp_path, monkeypatch):
    import argparse

    from inspector import errors as E
    from inspector.cli.authflags import apply_client_config

    (tmp_path / "bad.json").write_text("{nope")
    for path, message in ((tmp_path / "bad.json", "is not valid JSON"), (tmp_path, "cannot read the client config"),
                          (tmp_path / "shape.json", "shape.json: config: Expected object")):
        if path.name == "shape.json":
            path.write_text("[1]")
        monkeypatch.setenv("MCP_CLIENT_CONFIG_PATH", str(path))
        with pytest.raises(E.UsageError, match=message):
            apply_client_config(argparse.Namespace(client_config=None))
