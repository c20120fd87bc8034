"""The URL policy (inspector/urlpolicy.py): pure, no IO."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector import urlpolicy
from inspector.urlpolicy import FETCH, Refused, check, host_as_shown, is_loopback, refusal

ENDING = "only https (or http to this machine) is ever opened"


@pytest.mark.parametrize("url, what", [
    ("vscode://vscode.git/clone?url=x", "a vscode: address"),
    ("file:///etc/passwd", "a file: address"),
    ("file://host/share", "a file: address"),
    ("javascript:alert(1)", "a javascript: address"),
    ("data:text/html,<script>alert(1)</script>", "a data: address"),
    ("spyglass-evil://run?x", "a spyglass-evil: address"),
    ("ms-settings:", "a ms-settings: address"),
    ("http://example.com/authorize", "an http: address on another machine (example.com), unencrypted"),
    ("http://10.0.0.5:8000/x", "an http: address on another machine (10.0.0.5), unencrypted"),
    ("https://bank.example@evil.example/", "an https: address with a user name before its host"),
    ("https://user:pw@evil.example/", "an https: address with a user name before its host"),
    ("https:\\\\evil.example\\share", "an address with a backslash in it"),
    ("https://evil.example\\@good.example/", "an address with a backslash in it"),
    ("https://evil .example/", "an address with a space in it"),
    ("https://evil.example/\x07", "an address with a control or invisible character in it"),
    ("https://evil.example/\u202egnp.exe", "an address with a control or invisible character in it"),
    ("https://evil.example/\x85", "an address with a control or invisible character in it"),
    ("\nhttps://evil.example/", "an address with a control or invisible character in it"),
    ("https:evil.example", "an https: address with no host"),
    ("https:///path", "an https: address with no host"),
    ("//evil.example/x", "an address with no scheme"),
    ("evil.example", "an address with no scheme"),
    ("", "an empty address"),
    ("https://%65vil.example/", "an https: address whose host has characters no host name has"),
    ("https://evil.example:99999/", "a malformed https: address"),
    ("http://2130706433/", "an http: address whose host is not a valid name"),
    ("http://0x7f.0.0.1/", "an http: address whose host is not a valid name"),
    ("https://[not-ipv6]/", "a malformed https: address"),
    ("https://a..b/", "an https: address whose host is not a valid name"),
    ("https://xn--zz.example/", "an https: address whose host is not a valid name"),
])
def test_refused_with_a_sentence_that_says_what_was_asked(url, what):
    with pytest.raises(Refused) as caught:
        check(url)
    assert str(caught.value).startswith(f"the server asked Spyglass to open {what}")
    assert str(caught.value).endswith(ENDING)
    assert refusal(url) == str(caught.value)


def test_the_sentence_names_who_asked_and_what_for():
    assert refusal("vscode://x", who="the app") == \
        "the app asked Spyglass to open a vscode: address; only https (or http to this machine) is ever opened"
    assert refusal("ftp://x/y", who="the authorization server", purpose=FETCH) == (
        "the authorization server asked Spyglass to fetch a ftp: address; only https (or http to this machine) "
        "is ever fetched")
    assert refusal(None) is not None and refusal(42) is not None


@pytest.mark.parametrize("url, shown, host", [
    ("https://example.com/authorize?a=1&b=2#f", "https://example.com/authorize?a=1&b=2#f", "example.com"),
    ("HTTPS://Example.COM:8443/P", "https://example.com:8443/P", "example.com"),
    ("http://127.0.0.1:9/callback", "http://127.0.0.1:9/callback", "127.0.0.1"),
    ("http://127.8.9.10/x", "http://127.8.9.10/x", "127.8.9.10"),
    ("http://[::1]:8080/x", "http://[::1]:8080/x", "::1"),
    ("http://localhost:3000", "http://localhost:3000", "localhost"),
    ("http://LOCALHOST./x", "http://localhost/x", "localhost"),
    ("https://[2001:db8::1]/x", "https://[2001:db8::1]/x", "2001:db8::1"),
    ("https://internal_host.corp/x", "https://internal_host.corp/x", "internal_host.corp"),
])
def test_allowed(url, shown, host):
    a = check(url)
    assert (a.shown, a.host, a.url) == (shown, host, url)
    assert not a.punycode


@pytest.mark.parametrize("host, shown, wire", [
    ("gооgle.com", "xn--ggle-55da.com", "xn--ggle-55da.com"),            # Latin with Cyrillic o's
    ("xn--ggle-55da.com", "xn--ggle-55da.com", "xn--ggle-55da.com"),     # the same, sent as punycode
    ("аррӏе.com", "xn--80ak6aa92e.com", "xn--80ak6aa92e.com"),           # all Cyrillic, reads as Latin
    ("pаypal.com", "xn--pypal-4ve.com", "xn--pypal-4ve.com"),
    ("bücher.de", "bücher.de", "xn--bcher-kva.de"),                      # one script: Unicode
    ("xn--bcher-kva.de", "bücher.de", "xn--bcher-kva.de"),
    ("пример.рф", "пример.рф", "xn--e1afmkfd.xn--p1ai"),                  # Cyrillic under a Cyrillic TLD
    ("москва.com", "москва.com", "xn--80adxhks.com"),                    # Cyrillic that does not read as Latin
    ("例え.テスト", "例え.テスト", "xn--r8jz45g.xn--zckzah"),                # Han with Hiragana: allowed mix
    ("παράδειγμα.δοκιμή", "παράδειγμα.δοκιμή", "xn--hxajbheg2az3al.xn--jxalpdlp"),
    ("BÜCHER.de", "bücher.de", "xn--bcher-kva.de"),                      # mapped as the browser maps it
])
def test_internationalised_hosts_as_the_browser_shows_them(host, shown, wire):
    a = check(f"https://{host}/a")
    assert (a.host, a.ascii_host, a.shown) == (shown, wire, f"https://{shown}/a")
    assert a.punycode == shown.startswith("xn--")
    assert host_as_shown(host) == shown


def test_fetch_may_use_plain_http_to_the_servers_own_host_only():
    assert check("http://devbox:9000/.well-known/x", purpose=FETCH, own_host="devbox").ascii_host == "devbox"
    with pytest.raises(Refused, match="or to the server's own host"):
        check("http://elsewhere:9000/x", purpose=FETCH, own_host="devbox")
    with pytest.raises(Refused):  # never for opening
        check("http://devbox:9000/authorize", own_host="devbox")


@pytest.mark.parametrize("host, loop", [("127.0.0.1", True), ("127.255.0.9", True), ("::1", True),
                                        ("[::1]", True), ("localhost", True), ("LocalHost.", True),
                                        ("128.0.0.1", False), ("localhost.evil.example", False),
                                        ("0.0.0.0", False), ("::ffff:127.0.0.1", False), ("evil", False)])
def test_loopback(host, loop):
    assert is_loopback(host) is loop


schemes = st.from_regex(r"[a-z][a-z0-9+.\-]{0,12}", fullmatch=True).filter(lambda s: s not in ("http", "https"))


@given(schemes, st.text(alphabet=string.printable, max_size=40))
def test_no_other_scheme_is_ever_allowed(scheme, rest):
    with pytest.raises(Refused) as caught:
        check(f"{scheme}:{rest}")
    assert caught.value.sentence.startswith("the server asked Spyglass to open ")


@given(st.text(max_size=80))
def test_total_and_only_https_or_loopback_http(text):
    try:
        a = check(text)
    except Refused as exc:
        assert exc.sentence.endswith(ENDING)
        return
    assert a.scheme == "https" or is_loopback(a.ascii_host)
    assert a.ascii_host.isascii() and all(ch.isprintable() and ch not in " \\" for ch in a.shown)
    assert "@" not in a.shown.split("/")[2]


@given(st.text(alphabet=st.characters(categories=("Ll",)), min_size=1, max_size=12))
def test_a_shown_host_is_always_what_the_wire_carries(label):
    try:
        a = check(f"https://{label}.com/")
    except Refused:
        return
    assert urlpolicy.check(f"https://{a.ascii_host}/").host == a.host
