"""Secrets masked by name and by shape (inspector.secrets): each shape, what must stay as it is, the count
by kind, and masking twice changing nothing."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector import secrets as S
from inspector.portable import mask_body, mask_definition, mask_frame
from inspector.secrets import MASK, Tally

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SESSION = "Zq8Lr2Vx9Kp4Tn7Wb3Hs6Jd1Fm5Gc0Ya8Ue2Qi"  # 40 random characters, no known format
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\n-----END RSA PRIVATE KEY-----"


def masked(text: str) -> tuple[str, dict[str, int]]:
    tally = Tally()
    return S.mask_text(text, tally), tally.counts()


@pytest.mark.parametrize(("text", "expected", "kinds"), [
    ("postgres://admin:PASSWORD@db/prod", f"postgres://admin:{MASK}@db/prod", {"url-userinfo": 1}),
    ("mongodb+srv://app:s3cr3t@c1.example.net,c2.example.net/db?authSource=admin",
     f"mongodb+srv://app:{MASK}@c1.example.net,c2.example.net/db?authSource=admin", {"url-userinfo": 1}),
    ("redis://:hunter22@cache:6379/0", f"redis://:{MASK}@cache:6379/0", {"url-userinfo": 1}),
    ("amqp://guest:guestpw@rabbit:5672/", f"amqp://guest:{MASK}@rabbit:5672/", {"url-userinfo": 1}),
    ("https://api.example.com/v1?api_key=K3yK3y&limit=5&TOKEN=abc123",
     f"https://api.example.com/v1?api_key={MASK}&limit=5&TOKEN={MASK}", {"query-key": 2}),
    ("https://x.example/cb#access_token=at1&state=s", f"https://x.example/cb#access_token={MASK}&state=s",
     {"query-key": 1}),
    ("https://s3.example/b/o?X-Amz-Signature=abcd&X-Amz-Date=2024", f"https://s3.example/b/o?X-Amz-Signature={MASK}"
     "&X-Amz-Date=2024", {"query-key": 1}),
    ("https://api.telegram.org/bot123456:ABC-DEF1234ghIkl/sendMessage",
     f"https://api.telegram.org/bot{MASK}/sendMessage", {"path-key": 1}),
    ("https://hooks.slack.com/services/T0001/B0002/XXXXXXXXXXXXXXXX",
     f"https://hooks.slack.com/services/T0001/B0002/{MASK}", {"path-key": 1}),
    ("https://discord.com/api/webhooks/1234567/abcDEF-ghi_jkl", f"https://discord.com/api/webhooks/1234567/{MASK}",
     {"path-key": 1}),
    ("Server=tcp:db;Database=app;User Id=sa;Password=Pa55word!;Encrypt=yes",
     f"Server=tcp:db;Database=app;User Id=sa;Password={MASK};Encrypt=yes", {"connection-string": 1}),
    ("Driver={ODBC};Uid=me;Pwd={p;w};", f"Driver={{ODBC}};Uid=me;Pwd={MASK};", {"connection-string": 1}),
    ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=bXlrZXk=;EndpointSuffix=core.windows.net",
     f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={MASK};EndpointSuffix=core.windows.net",
     {"connection-string": 1}),
    ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=abc=",
     f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={MASK}",
     {"connection-string": 1}),
    (f"token {GITHUB} here", f"token ghp_{MASK} here", {"token": 1}),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", f"github_pat_{MASK}", {"token": 1}),
    ("sk-ant-api03-" + "x" * 40, f"sk-ant-{MASK}", {"token": 1}),
    ("OPENAI sk-proj-" + "Ab1" * 12, f"OPENAI sk-{MASK}", {"token": 1}),
    ("AKIAIOSFODNN7EXAMPLE", f"AKIA{MASK}", {"token": 1}),
    ("ASIAIOSFODNN7EXAMPLE", f"ASIA{MASK}", {"token": 1}),
    ("xoxb-123456789012-abcdefABCDEF", f"xoxb-{MASK}", {"token": 1}),
    ("AIza" + "Sy" + "B" * 33, f"AIza{MASK}", {"token": 1}),
    ("sk_live_" + "a1" * 12 + " rk_live_" + "b2" * 12, f"sk_live_{MASK} rk_live_{MASK}", {"token": 2}),
    ("npm_" + "a" * 36, f"npm_{MASK}", {"token": 1}),
    (f"Bearer {JWT}", f"Bearer eyJ{MASK}", {"token": 1}),
    (PEM, f"-----BEGIN RSA PRIVATE KEY-----{MASK}-----END RSA PRIVATE KEY-----", {"private-key": 1}),
])
def test_each_shape_is_masked_and_its_shape_kept(text: str, expected: str, kinds: dict[str, int]) -> None:
    out, counts = masked(text)
    assert out == expected
    assert counts == kinds
    assert masked(out) == (out, {})  # masking a masked value changes and counts nothing


@pytest.mark.parametrize("text", [
    "hello world", "/usr/local/bin/node", "C:\\Program Files\\node\\node.exe", "1.2.3", "v20.11.1", "42",
    "https://example.com/items/550e8400-e29b-41d4-a716-446655440000",  # an id in a path names, it does not open
    "https://example.com/search?q=tokens&page=2", "https://user@example.com/repo.git",  # a user is no secret
    "key", "password", "the password is in the vault", "sk-short", "ghp_tooShort", "--port=8080",
    "data:image/png;base64," + "QUtJQUlPU0ZPRE5ON0VYQU1QTEU" * 100,  # base64 that spells AKIA… must stay whole
])
def test_what_must_stay_as_it_is(text: str) -> None:
    assert masked(text) == (text, {})


def test_a_token_inside_a_longer_word_or_base64_is_left_alone() -> None:
    inside = "xx" + "AKIAIOSFODNN7EXAMPLE" + "yy"
    assert masked(inside) == (inside, {})


@pytest.mark.parametrize(("value", "secret"), [
    (SESSION, True), ("3f786850e387550fdab836ed7e6dc881de23001b", True),
    ("hello-world-from-the-server", False), ("/home/me/.config/app/settings.json", False),
    ("/usr/bin:/bin:/usr/local/bin", False), ("en_US.UTF-8", False), ("12345678901234567890123", False),
    ("MyApplicationName2024Production", False), ("xterm-256color-something-long", False),
    ("v1.2.3-beta.4+build.567890", False), ("ORGANIZATION_CONFIGURATION_ENABLED", False), ("short1A", False),
])
def test_the_entropy_rule_for_env_values(value: str, secret: bool) -> None:
    tally = Tally()
    out = S.mask_env_value("SESSION", value, tally)
    assert (out == MASK) is secret
    assert tally.counts() == ({"entropy": 1} if secret else {})
    assert S.mask_value("X-Session", value) == value  # headers and text: no entropy rule


def test_by_name_counts_once_and_keeps_the_scheme() -> None:
    tally = Tally()
    assert S.mask_mapping({"Authorization": "Bearer abc", "X-Api-Key": "k", "Accept": "text/plain"}, tally) == {
        "Authorization": f"Bearer {MASK}", "X-Api-Key": MASK, "Accept": "text/plain"}
    assert tally.counts() == {"name": 2}


def test_the_same_secret_twice_is_one_secret() -> None:
    tally = Tally()
    S.mask_text("postgres://a:PW@h/x and postgres://b:PW@h/y", tally)
    assert tally.counts() == {"url-userinfo": 1}


def test_command_lines() -> None:
    tally = Tally()
    args = ["server", "--api-key", "abc", "--token=def", "--port", "80", "--dsn", "postgres://u:pw@h/db",
            "-e", "GITHUB_TOKEN=xyz", "-e", "REGION=eu"]
    assert S.mask_args(args, tally) == ["server", "--api-key", MASK, f"--token={MASK}", "--port", "80", "--dsn",
                                        f"postgres://u:{MASK}@h/db", "-e", f"GITHUB_TOKEN={MASK}", "-e", "REGION=eu"]
    assert tally.counts() == {"name": 3, "url-userinfo": 1}


def test_a_definition_is_masked_by_name_shape_and_entropy() -> None:
    tally = Tally()
    out = mask_definition({"name": "db", "command": ["node", "srv.js", f"--gh={GITHUB}"],
                           "env": {"DATABASE_URL": "postgres://admin:PASSWORD@db/prod", "SESSION": SESSION,
                                   "API_TOKEN": "t", "HOME": "/home/me"},
                           "url": "https://u:pw@h.example/mcp?api_key=K&x=1", "headers": {"Authorization": "Bearer z"}},
                          tally)
    assert out["env"] == {"DATABASE_URL": f"postgres://admin:{MASK}@db/prod", "SESSION": MASK, "API_TOKEN": MASK,
                          "HOME": "/home/me"}
    assert out["command"] == ["node", "srv.js", f"--gh=ghp_{MASK}"]
    assert out["url"] == f"https://u:{MASK}@h.example/mcp?api_key={MASK}&x=1"
    assert tally.counts() == {"entropy": 1, "name": 2, "query-key": 1, "token": 1, "url-userinfo": 2}


def test_frame_bodies_lose_token_formats_not_their_words() -> None:
    tally = Tally()
    frame = ('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"GITHUB_TOKEN=' + GITHUB +
             ' and a plain sentence"}]}}').encode()
    out = mask_frame("in", frame, tally)
    assert GITHUB.encode() not in out and b"a plain sentence" in out
    assert tally.counts() == {"token": 1}
    plain = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"' + SESSION.encode() + b'"}]}}'
    assert mask_frame("in", plain) == plain  # no entropy rule in a conversation: ids and hashes are its words
    assert mask_body({"password": "x"}, tally)[0] == {"password": MASK}


def test_tally_reads_counts_from_a_file_leniently() -> None:
    tally = Tally()
    tally.merge({"token": 2, "bad": "x", "neg": -1, "flag": True})
    tally.merge("not a mapping")  # type: ignore[arg-type]
    tally.add("token", "t")
    assert tally.counts() == {"token": 3}


secret_text = st.text(alphabet=string.ascii_letters + string.digits + "_-", min_size=40, max_size=60)


@given(prefix=st.sampled_from(["ghp_", "gho_", "ghs_", "ghu_", "npm_"]), body=st.text(
    alphabet=string.ascii_letters + string.digits, min_size=36, max_size=40), before=st.text(max_size=20),
    after=st.sampled_from(["", " ", "\n", "\"", "'", ",", ";", ")"]))
def test_a_token_never_survives_in_any_text(prefix: str, body: str, before: str, after: str) -> None:
    text = f"{before} {prefix}{body}{after}"
    out = S.mask_text(text)
    assert body not in out
    assert S.mask_text(out) == out


@given(user=st.text(alphabet=string.ascii_letters, min_size=1, max_size=10),
       password=st.text(alphabet=string.ascii_letters + string.digits + "!$%^*()", min_size=6, max_size=20),
       host=st.from_regex(r"[a-z]{1,10}\.(com|net|local)", fullmatch=True),
       scheme=st.sampled_from(["postgres", "mysql", "https", "mongodb+srv", "redis", "amqp"]))
def test_userinfo_never_survives(user: str, password: str, host: str, scheme: str) -> None:
    url = f"{scheme}://{user}:{password}@{host}/db"
    out = S.mask_url(url)
    assert out == f"{scheme}://{user}:{MASK}@{host}/db"


@given(st.text(max_size=200))
def test_masking_is_total_and_idempotent(text: str) -> None:
    once = S.mask_text(text)
    assert S.mask_text(once) == once
    S.mask_url(text)
    S.mask_env_value("X", text)


def test_a_stderr_line_loses_its_shapes() -> None:
    tally = Tally()
    line = b"connecting to postgres://admin:Pg-Pa55word@db/prod as ghp_" + b"a" * 36
    out = mask_frame("err", line, tally)
    assert out == f"connecting to postgres://admin:{MASK}@db/prod as ghp_{MASK}".encode()
    assert tally.counts() == {"token": 1, "url-userinfo": 1}
    assert mask_frame("err", b"\xff not utf-8 password=x") == b"\xff not utf-8 password=x"
    assert mask_frame("err", b"plain line") == b"plain line"
