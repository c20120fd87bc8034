"""The one policy for every address Spyglass opens or fetches because a server named it. No Qt, no IO.

A server is a stranger: an authorization endpoint, a page an elicitation asks to open, a link an MCP App
asks to open, the metadata a `WWW-Authenticate` challenge points at. Handing such an address to the system
opener reaches every URI handler the machine has registered (`vscode:`, `file://host/share`, which leaks
NTLM hashes on Windows, custom schemes): the class of CVE-2025-6514. So:

- https, to any host; http only to this machine (127.0.0.0/8, ::1, `localhost`), any port;
- no other scheme, ever; no user name before the host (`https://bank.example@evil.example`), no
  backslash, space, control or invisible character anywhere, no escaped or malformed host;
- `check` returns the address with its host as the browser will show it (`Address.host`): an
  internationalised label in Unicode only when it is written in one script the way browsers allow (or
  Latin with Han, Kana, Bopomofo or Hangul), otherwise in punycode (`xn--…`), so that `gооgle.com` with
  Cyrillic o's is shown as `xn--ggle-55da.com`, exactly what the browser's address bar will say.

A refusal is `Refused`, whose text is one sentence naming what was asked and why it is not done:
"the server asked Spyglass to open a vscode: address; only https (or http to this machine) is ever opened".
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
import urllib.parse
from dataclasses import dataclass

import idna

OPEN, FETCH = "open", "fetch"
_ASCII_PRINTABLE = "".join(chr(c) for c in range(0x21, 0x7F))
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# WHATWG's forbidden host code points, plus the percent sign (a browser decodes %xx in a host first)
_FORBIDDEN_IN_HOST = set("\x00\t\n\r #/:<>?@[\\]^|%")
# Script combinations browsers show in Unicode (Chromium and Firefox: "highly restrictive" plus Latin)
_ALLOWED_MIXES = ({"Latin", "Han", "Hiragana", "Katakana"}, {"Latin", "Han", "Bopomofo"}, {"Latin", "Han", "Hangul"})
# Letters of a whole-script look-alike: a label made only of these, under a Latin top-level domain, reads as
# Latin (`аррӏе.com`), so browsers show it in punycode
_LOOKS_LATIN = {
    "Cyrillic": set("аЬсԁеһіјӏорԛѕԝхуѵьъӀҺѡԍɡ"),
    "Greek": set("αβεικνορτυχ"),
}


class Refused(ValueError):
    """An address the policy does not open or fetch; `str()` is the sentence to show."""

    def __init__(self, sentence: str, url: object = None) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.url = url


@dataclass(frozen=True)
class Address:
    """An address the policy allows. `host` is as the browser shows it, `ascii_host` as it is sent."""

    url: str
    scheme: str
    host: str
    ascii_host: str
    port: int | None
    rest: str  # path, query and fragment as given

    @property
    def origin(self) -> str:
        """`host[:port]` as the browser shows it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"

    @property
    def shown(self) -> str:
        """The full address with its host as the browser shows it."""
        return f"{self.scheme}://{self.origin}{self.rest}"

    @property
    def wire(self) -> str:
        """The full address as it is sent, all ASCII: the host in punycode, anything else beyond ASCII
        percent-encoded (UTF-8), what the browser is handed."""
        host = f"[{self.ascii_host}]" if ":" in self.ascii_host else self.ascii_host
        rest = urllib.parse.quote(self.rest, safe=_ASCII_PRINTABLE)
        return f"{self.scheme}://{host}{'' if self.port is None else f':{self.port}'}{rest}"

    @property
    def punycode(self) -> bool:
        """Whether the host has a label the browser shows as punycode."""
        return any(label.startswith("xn--") for label in self.host.split("."))


def check(url: object, *, who: str = "the server", purpose: str = OPEN, own_host: str | None = None) -> Address:
    """The address if the policy allows `purpose` (OPEN or FETCH) on it, else `Refused` with the sentence.

    `who` names the one that asked ("the server", "the app", "the authorization server"). `own_host`, for
    FETCH only, is the host of the server the user typed: plain http to that host is the user's own choice,
    so metadata on it is fetched too.
    """
    verb, done = ("open", "opened") if purpose == OPEN else ("fetch", "fetched")
    allowed = "https (or http to this machine)" if own_host is None else \
        "https (or http to this machine or to the server's own host)"

    def refuse(what: str) -> Refused:
        return Refused(f"{who} asked Spyglass to {verb} {what}; only {allowed} is ever {done}", url)

    if not isinstance(url, str) or not url.strip():
        raise refuse("an empty address")
    if any(ch == " " for ch in url):
        raise refuse("an address with a space in it")
    if any(not ch.isprintable() for ch in url):
        raise refuse("an address with a control or invisible character in it")
    if "\\" in url:
        raise refuse("an address with a backslash in it")
    m = _SCHEME.match(url)
    if m is None:
        raise refuse("an address with no scheme")
    scheme = m.group(1).lower()
    if scheme not in ("https", "http"):
        raise refuse(f"a {_short(scheme)}: address")
    if not url[m.end():].startswith("//"):
        raise refuse(f"an {scheme}: address with no host")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise refuse(f"a malformed {scheme}: address ({exc})") from None
    netloc = parts.netloc
    if "@" in netloc:
        raise refuse(f"an {scheme}: address with a user name before its host (“…@”), which can hide the real host")
    raw_host = netloc[1:netloc.index("]")] if netloc.startswith("[") and "]" in netloc else \
        netloc.rsplit(":", 1)[0] if ":" in netloc else netloc
    if not raw_host:
        raise refuse(f"an {scheme}: address with no host")
    if netloc.startswith("["):
        try:
            ip = ipaddress.IPv6Address(raw_host)
        except ValueError:
            raise refuse(f"an {scheme}: address whose host is not a valid IPv6 address") from None
        ascii_host = shown_host = str(ip)
    else:
        if any(ch in _FORBIDDEN_IN_HOST for ch in raw_host):
            raise refuse(f"an {scheme}: address whose host has characters no host name has")
        try:
            ascii_host, shown_host = _host_forms(raw_host)
        except ValueError as exc:
            raise refuse(f"an {scheme}: address whose host is not a valid name ({exc})") from None
    if scheme == "http" and not is_loopback(ascii_host) and not (
            own_host is not None and purpose == FETCH and ascii_host == _host_forms_or_self(own_host)):
        raise refuse(f"an http: address on another machine ({shown_host}), unencrypted")
    rest = url[m.end() + 2 + len(netloc):]
    return Address(url, scheme, shown_host, ascii_host, port, rest)


@dataclass(frozen=True)
class Shown:
    """What a dialog shows of an address before anything opens: `host` (with its port) as the browser will show
    it, `full` the whole address (the policy's form when allowed, else the text as given with every control
    and invisible character escaped), and the refusal's sentence when the policy refuses it."""

    host: str
    full: str
    refusal: str | None
    address: Address | None


def for_display(url: object, *, who: str = "the server", limit: int = 2000) -> Shown:
    """An address to show in a question: allowed (with its host as the browser shows it) or refused."""
    try:
        address = check(url, who=who)
    except Refused as exc:
        raw = url if isinstance(url, str) else ""
        text = "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in raw[:limit])
        return Shown("", text + ("…" if len(raw) > limit else ""), exc.sentence, None)
    full = address.shown
    return Shown(address.origin, full[:limit] + ("…" if len(full) > limit else ""), None, address)


def refusal(url: object, *, who: str = "the server", purpose: str = OPEN, own_host: str | None = None) -> str | None:
    """The refusal's sentence, or None when the address is allowed."""
    try:
        check(url, who=who, purpose=purpose, own_host=own_host)
    except Refused as exc:
        return exc.sentence
    return None


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and `localhost` (a literal, as the resolver must not be asked)."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_as_shown(host: str) -> str:
    """A host as the browser's address bar shows it (punycode for mixed scripts); itself when not a name."""
    try:
        return _host_forms(host)[1]
    except ValueError:
        return host


def _host_forms_or_self(host: str) -> str:
    try:
        return _host_forms(host)[0]
    except ValueError:
        return host.lower()


def _host_forms(host: str) -> tuple[str, str]:
    """(the ASCII host sent on the wire, the host as the browser shows it); ValueError when invalid."""
    host = host.rstrip(".") if host != "." else host
    try:
        ipaddress.IPv4Address(host)
        return host, host
    except ValueError:
        pass
    labels = host.split(".")
    if not all(labels):
        raise ValueError("an empty label")
    last = labels[-1]
    if re.fullmatch(r"[0-9]+|0[xX][0-9a-fA-F]*", last):
        raise ValueError("a number that is not a dotted IPv4 address")  # a browser would read it as one
    tld_latin = last.isascii() and not last.lower().startswith("xn--")
    wire, shown = [], []
    for label in labels:
        if label.isascii() and not label.lower().startswith("xn--"):
            wire.append(label.lower())
            shown.append(label.lower())
            continue
        try:
            mapped = idna.uts46_remap(label, std3_rules=False)
            if mapped.lower().startswith("xn--"):
                unicode_label = idna.ulabel(mapped)
                ace = mapped.lower()
                if idna.alabel(unicode_label).decode() != ace:
                    raise ValueError(f"{_short(label)} is not in its normal form")
            else:
                unicode_label = mapped
                ace = idna.alabel(mapped).decode()
        except idna.IDNAError as exc:
            raise ValueError(str(exc)) from None
        wire.append(ace)
        shown.append(unicode_label if _browser_shows_unicode(unicode_label, tld_latin) else ace)
    return ".".join(wire), ".".join(shown)


def _browser_shows_unicode(label: str, tld_latin: bool) -> bool:
    scripts = {s for s in (_script(ch) for ch in label) if s not in ("Common", "Inherited")}
    if "Unknown" in scripts:
        return False
    if len(scripts) > 1 and not any(scripts <= mix for mix in _ALLOWED_MIXES):
        return False
    if len(scripts) == 1 and tld_latin:
        (script,) = scripts
        lookalikes = _LOOKS_LATIN.get(script)
        letters = [ch for ch in label if _script(ch) == script]
        if lookalikes is not None and all(ch in lookalikes for ch in letters):
            return False
    return True


def _script(ch: str) -> str:
    """The Unicode script of a character, closely enough for a host name (from its character name)."""
    if ch.isascii():
        return "Latin" if ch.isalpha() else "Common"
    if unicodedata.category(ch) in ("Mn", "Mc", "Me"):
        return "Inherited"
    name = unicodedata.name(ch, "")
    if not name:
        return "Unknown"
    if name.startswith("KATAKANA-HIRAGANA"):  # the prolonged sound mark, shared by both
        return "Common"
    first = name.split(" ", 1)[0]  # (UTS 46 has already mapped full- and half-width forms)
    return {"CJK": "Han", "IDEOGRAPHIC": "Han", "HIRAGANA": "Hiragana", "KATAKANA": "Katakana", "HANGUL": "Hangul",
            "BOPOMOFO": "Bopomofo", "LATIN": "Latin", "CYRILLIC": "Cyrillic", "GREEK": "Greek"}.get(
        first, first.title())


def _short(text: str, limit: int = 40) -> str:
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
